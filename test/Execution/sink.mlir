// RUN: attn-run %s --print --reps=0 --form=naive | FileCheck %s
// RUN: attn-run %s --print --reps=0 --form=fused | FileCheck %s
// RUN: attn-run %s --print --reps=0 --form=decode --splits=2 | FileCheck %s

// Attention sinks (gpt-oss): a logit per query head in the softmax's
// denominator, with no value. D = 1, scale 1, q = 1.
// The head's sink logit is 0.5.
//   Batch 0: keys k = [0, 1], v = [10, 20]:
//     out = (10 e^0 + 20 e^1) / (e^0.5 + e^0 + e^1) = 11.9928
//     lse = log(e^0.5 + 1 + e) = 1.68027
//   Batch 1: kv_len 0 (no key): out = 0, lse = the sink's logit, 0.5.
// CHECK: out: f32 [2, 1, 1, 1]
// CHECK-NEXT: {{^}}11.9928 0{{$}}
// CHECK: lse: f32 [2, 1, 1]
// CHECK-NEXT: {{^}}1.68027 0.5{{$}}
func.func @sinks() -> (tensor<2x1x1x1xf32>, tensor<2x1x1xf32>) {
  %q = arith.constant dense<1.0> : tensor<2x1x1x1xf32>
  %k = arith.constant dense<[[[[0.0], [1.0]]], [[[0.0], [1.0]]]]> : tensor<2x1x2x1xf32>
  %v = arith.constant dense<[[[[10.0], [20.0]]], [[[10.0], [20.0]]]]> : tensor<2x1x2x1xf32>
  %len = arith.constant dense<[2, 0]> : tensor<2xi32>
  %s = arith.constant dense<0.5> : tensor<1xf32>
  %out, %lse = attn.attention q(%q : tensor<2x1x1x1xf32>) k(%k : tensor<2x1x2x1xf32>)
      v(%v : tensor<2x1x2x1xf32>) kv_len(%len : tensor<2xi32>)
      sink(%s : tensor<1xf32>) scale(1.0)
      -> tensor<2x1x1x1xf32>, tensor<2x1x1xf32>
  return %out, %lse : tensor<2x1x1x1xf32>, tensor<2x1x1xf32>
}
