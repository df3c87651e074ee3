// Ragged batches against numbers computed by hand, in every form. D = 1,
// q = k = 0 (a row's output is the mean of the v rows it reads), 5 packed
// query rows, 6 packed keys v = [1, 2, 3, 4, 5, 6], causal(bottom_right):
//   sequence 0: query rows 0..1, keys 0..2 (v 1 2 3): row 0 sits at key
//               position 1 -> mean(1, 2) = 1.5; row 1 -> mean(1, 2, 3) = 2
//   sequence 1: no query row, keys 3..3: nothing to compute
//   sequence 2: query rows 2..3, keys 4..5 (v 5 6): row 2 -> 5; row 3 -> 5.5
//   row 4 lies outside every sequence -> 0 (lse -inf)
//
// RUN: attn-run %s --print --reps=0 --form=naive | FileCheck %s
// RUN: attn-run %s --print --reps=0 --form=fused | FileCheck %s
// RUN: attn-run %s --print --reps=0 --form=decode --splits=2 | FileCheck %s
// CHECK: out: f32 [1, 1, 5, 1]
// CHECK-NEXT: {{^}}1.5 2 5 5.5 0{{$}}
// CHECK-NEXT: lse: f32 [1, 1, 5]
// CHECK-NEXT: {{^}}0.693147 1.09861 0 0.693147 -inf{{$}}
func.func @by_hand() -> (tensor<1x1x5x1xf32>, tensor<1x1x5xf32>) {
  %q = arith.constant dense<0.0> : tensor<1x1x5x1xf32>
  %k = arith.constant dense<0.0> : tensor<1x1x6x1xf32>
  %v = arith.constant dense<[[[[1.0], [2.0], [3.0], [4.0], [5.0], [6.0]]]]> : tensor<1x1x6x1xf32>
  %cq = arith.constant dense<[0, 2, 2, 4]> : tensor<4xi32>
  %ck = arith.constant dense<[0, 3, 4, 6]> : tensor<4xi32>
  %o, %l = attn.attention q(%q : tensor<1x1x5x1xf32>)
      k(%k : tensor<1x1x6x1xf32>) v(%v : tensor<1x1x6x1xf32>)
      ragged(%cq, %ck : tensor<4xi32>, tensor<4xi32>) causal(bottom_right)
      -> tensor<1x1x5x1xf32>, tensor<1x1x5xf32>
  return %o, %l : tensor<1x1x5x1xf32>, tensor<1x1x5xf32>
}
