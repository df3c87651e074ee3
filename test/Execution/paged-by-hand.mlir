// Paged K/V against numbers computed by hand, in every form. Pool of 3
// pages of 2 tokens, D = 1, q = k = 0 (so a row's output is the mean of the
// v rows it reads): v page p holds rows [10 (p + 1), 10 (p + 1) + 1].
//   batch 0: table [2, 0], kv_len 3 -> keys page 2 rows 0, 1; page 0 row 0
//            -> v = 30, 31, 10 -> out 71 / 3 = 23.6667, lse log 3 = 1.09861
//   batch 1: table [1, -1], kv_len 1 -> page 1 row 0 -> out 20, lse 0
//            (the -1 entry lies past the sequence's last page: never read)
//   batch 2: table [-1, -1], kv_len 0 -> no key: out 0, lse -inf
//
// RUN: attn-run %s --print --reps=0 --form=naive | FileCheck %s
// RUN: attn-run %s --print --reps=0 --form=fused | FileCheck %s
// RUN: attn-run %s --print --reps=0 --form=decode --splits=2 | FileCheck %s
// CHECK: out: f32 [3, 1, 1, 1]
// CHECK-NEXT: {{^}}23.6667 20 0{{$}}
// CHECK-NEXT: lse: f32 [3, 1, 1]
// CHECK-NEXT: {{^}}1.09861 0 -inf{{$}}
func.func @by_hand() -> (tensor<3x1x1x1xf32>, tensor<3x1x1xf32>) {
  %q = arith.constant dense<0.0> : tensor<3x1x1x1xf32>
  %kp = arith.constant dense<0.0> : tensor<3x1x2x1xf32>
  %vp = arith.constant dense<[[[[10.0], [11.0]]], [[[20.0], [21.0]]], [[[30.0], [31.0]]]]> : tensor<3x1x2x1xf32>
  %pt = arith.constant dense<[[2, 0], [1, -1], [-1, -1]]> : tensor<3x2xi32>
  %len = arith.constant dense<[3, 1, 0]> : tensor<3xi32>
  %o, %l = attn.attention q(%q : tensor<3x1x1x1xf32>)
      k(%kp : tensor<3x1x2x1xf32>) v(%vp : tensor<3x1x2x1xf32>)
      page_table(%pt : tensor<3x2xi32>) kv_len(%len : tensor<3xi32>)
      causal(bottom_right) -> tensor<3x1x1x1xf32>, tensor<3x1x1xf32>
  return %o, %l : tensor<3x1x1x1xf32>, tensor<3x1x1xf32>
}
