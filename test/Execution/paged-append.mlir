// A decode step over a paged cache, by hand, in every form: append the new
// token's K and V through the page table, then attend with kv_len + 1.
// Pool of 3 pages of 2 tokens, D = 1, q = 1, scale 1. Sequence 0 holds 3
// tokens (k = 0, 1, 2 at page 2 rows 0, 1 and page 0 row 0; v = 10, 20, 30)
// and appends k = 3, v = 40 at position 3 = page 0 row 1:
//   logits [0, 1, 2, 3] -> out = (10 + 20 e + 30 e^2 + 40 e^3) / (1 + e + e^2 + e^3)
//   = 34.9265, lse = log(1 + e + e^2 + e^3) = 3.44019
// Sequence 1 is empty and appends k = 5, v = 7 at position 0 = page 1 row 0:
//   out 7, lse 5.
//
// RUN: attn-run %s --print --reps=0 --form=naive | FileCheck %s
// RUN: attn-run %s --print --reps=0 --form=fused | FileCheck %s
// RUN: attn-run %s --print --reps=0 --form=decode --splits=2 | FileCheck %s
// CHECK: result0: f32 [2, 1, 1, 1]
// CHECK-NEXT: {{^}}34.9265 7{{$}}
// CHECK: result1: f32 [2, 1, 1]
// CHECK-NEXT: {{^}}3.44019 5{{$}}
// The pools after the appends: page 0 = [2, 3], page 1 = [5, 0], page 2 = [0, 1].
// CHECK: result2: f32 [3, 1, 2, 1]
// CHECK-NEXT: {{^}}2 3 5 0 0 1{{$}}
// CHECK: result3: f32 [3, 1, 2, 1]
// CHECK-NEXT: {{^}}30 40 7 0 10 20{{$}}
func.func @step() -> (tensor<2x1x1x1xf32>, tensor<2x1x1xf32>,
                      tensor<3x1x2x1xf32>, tensor<3x1x2x1xf32>) {
  %kp = arith.constant dense<[[[[2.0], [0.0]]], [[[0.0], [0.0]]], [[[0.0], [1.0]]]]> : tensor<3x1x2x1xf32>
  %vp = arith.constant dense<[[[[30.0], [0.0]]], [[[0.0], [0.0]]], [[[10.0], [20.0]]]]> : tensor<3x1x2x1xf32>
  %pt = arith.constant dense<[[2, 0], [1, -1]]> : tensor<2x2xi32>
  %len = arith.constant dense<[3, 0]> : tensor<2xi32>
  %q = arith.constant dense<1.0> : tensor<2x1x1x1xf32>
  %kn = arith.constant dense<[[[[3.0]]], [[[5.0]]]]> : tensor<2x1x1x1xf32>
  %vn = arith.constant dense<[[[[40.0]]], [[[7.0]]]]> : tensor<2x1x1x1xf32>
  %kp2 = attn.kv_cache_append cache(%kp : tensor<3x1x2x1xf32>)
      update(%kn : tensor<2x1x1x1xf32>) at(%len : tensor<2xi32>)
      page_table(%pt : tensor<2x2xi32>) -> tensor<3x1x2x1xf32>
  %vp2 = attn.kv_cache_append cache(%vp : tensor<3x1x2x1xf32>)
      update(%vn : tensor<2x1x1x1xf32>) at(%len : tensor<2xi32>)
      page_table(%pt : tensor<2x2xi32>) -> tensor<3x1x2x1xf32>
  %one = arith.constant dense<1> : tensor<2xi32>
  %len2 = arith.addi %len, %one : tensor<2xi32>
  %o, %l = attn.attention q(%q : tensor<2x1x1x1xf32>)
      k(%kp2 : tensor<3x1x2x1xf32>) v(%vp2 : tensor<3x1x2x1xf32>)
      page_table(%pt : tensor<2x2xi32>) kv_len(%len2 : tensor<2xi32>)
      causal(bottom_right) scale(1.0) -> tensor<2x1x1x1xf32>, tensor<2x1x1xf32>
  return %o, %l, %kp2, %vp2 : tensor<2x1x1x1xf32>, tensor<2x1x1xf32>,
                               tensor<3x1x2x1xf32>, tensor<3x1x2x1xf32>
}
