// RUN: attn-run %s --print --reps=0 | FileCheck %s
// RUN: attn-run %s --print --reps=0 --form=naive | FileCheck %s

// attn.combine merges attention over two disjoint key segments exactly.
// q = 1, scale 1, D = 1; segment A: keys [0, 1], values [10, 20]; segment
// B: key [2], value [30]; and the empty segment (kv_len 0).
//   A: out = (10 + 20 e) / (1 + e) = 17.3106, lse = log(1 + e) = 1.31326
//   B: out = 30, lse = 2
//   A + B = attention over all three keys: out 25.7521, lse 2.40761
//   A + empty = A (the empty side has lse = -inf and weighs nothing)
//   empty + empty = out 0, lse -inf

// CHECK: result0: f32 [1, 1, 1, 1]
// CHECK-NEXT: {{^}}25.7521
// CHECK: result1: f32 [1, 1, 1]
// CHECK-NEXT: {{^}}2.40761
// CHECK: result2: f32 [1, 1, 1, 1]
// CHECK-NEXT: {{^}}25.7521
// CHECK: result3: f32 [1, 1, 1]
// CHECK-NEXT: {{^}}2.40761
// CHECK: result4: f32 [1, 1, 1, 1]
// CHECK-NEXT: {{^}}17.3106
// CHECK: result5: f32 [1, 1, 1]
// CHECK-NEXT: {{^}}1.31326
// CHECK: result6: f32 [1, 1, 1, 1]
// CHECK-NEXT: {{^}}0
// CHECK: result7: f32 [1, 1, 1]
// CHECK-NEXT: {{^}}-inf
func.func @segments() -> (tensor<1x1x1x1xf32>, tensor<1x1x1xf32>,
                          tensor<1x1x1x1xf32>, tensor<1x1x1xf32>,
                          tensor<1x1x1x1xf32>, tensor<1x1x1xf32>,
                          tensor<1x1x1x1xf32>, tensor<1x1x1xf32>) {
  %q = arith.constant dense<1.0> : tensor<1x1x1x1xf32>
  %ka = arith.constant dense<[[[[0.0], [1.0]]]]> : tensor<1x1x2x1xf32>
  %va = arith.constant dense<[[[[10.0], [20.0]]]]> : tensor<1x1x2x1xf32>
  %kb = arith.constant dense<[[[[2.0]]]]> : tensor<1x1x1x1xf32>
  %vb = arith.constant dense<[[[[30.0]]]]> : tensor<1x1x1x1xf32>
  %k = arith.constant dense<[[[[0.0], [1.0], [2.0]]]]> : tensor<1x1x3x1xf32>
  %v = arith.constant dense<[[[[10.0], [20.0], [30.0]]]]> : tensor<1x1x3x1xf32>
  %zero = arith.constant dense<0> : tensor<1xi32>
  %oa, %la = attn.attention q(%q : tensor<1x1x1x1xf32>) k(%ka : tensor<1x1x2x1xf32>)
      v(%va : tensor<1x1x2x1xf32>) scale(1.0) -> tensor<1x1x1x1xf32>, tensor<1x1x1xf32>
  %ob, %lb = attn.attention q(%q : tensor<1x1x1x1xf32>) k(%kb : tensor<1x1x1x1xf32>)
      v(%vb : tensor<1x1x1x1xf32>) scale(1.0) -> tensor<1x1x1x1xf32>, tensor<1x1x1xf32>
  %oe, %le = attn.attention q(%q : tensor<1x1x1x1xf32>) k(%kb : tensor<1x1x1x1xf32>)
      v(%vb : tensor<1x1x1x1xf32>) kv_len(%zero : tensor<1xi32>) scale(1.0)
      -> tensor<1x1x1x1xf32>, tensor<1x1x1xf32>
  %o, %l = attn.combine a(%oa, %la : tensor<1x1x1x1xf32>, tensor<1x1x1xf32>)
      b(%ob, %lb : tensor<1x1x1x1xf32>, tensor<1x1x1xf32>)
      -> tensor<1x1x1x1xf32>, tensor<1x1x1xf32>
  %of, %lf = attn.attention q(%q : tensor<1x1x1x1xf32>) k(%k : tensor<1x1x3x1xf32>)
      v(%v : tensor<1x1x3x1xf32>) scale(1.0) -> tensor<1x1x1x1xf32>, tensor<1x1x1xf32>
  %o2, %l2 = attn.combine a(%oa, %la : tensor<1x1x1x1xf32>, tensor<1x1x1xf32>)
      b(%oe, %le : tensor<1x1x1x1xf32>, tensor<1x1x1xf32>)
      -> tensor<1x1x1x1xf32>, tensor<1x1x1xf32>
  %o3, %l3 = attn.combine a(%oe, %le : tensor<1x1x1x1xf32>, tensor<1x1x1xf32>)
      b(%oe, %le : tensor<1x1x1x1xf32>, tensor<1x1x1xf32>)
      -> tensor<1x1x1x1xf32>, tensor<1x1x1xf32>
  return %o, %l, %of, %lf, %o2, %l2, %o3, %l3
      : tensor<1x1x1x1xf32>, tensor<1x1x1xf32>, tensor<1x1x1x1xf32>, tensor<1x1x1xf32>,
        tensor<1x1x1x1xf32>, tensor<1x1x1xf32>, tensor<1x1x1x1xf32>, tensor<1x1x1xf32>
}
