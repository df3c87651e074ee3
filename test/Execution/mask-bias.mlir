// Boolean masks and additive biases, with broadcasting, executed and checked
// against numbers computed by hand. q = 0 unless said otherwise, so every
// logit is the bias alone.
//
// RUN: attn-run %s --entry=mask_rank2 --print --reps=1 | FileCheck %s --check-prefix=MASK2
// RUN: attn-run %s --entry=mask_rank4_broadcast --print --reps=1 | FileCheck %s --check-prefix=MASK4
// RUN: attn-run %s --entry=bias_f32 --print --reps=1 | FileCheck %s --check-prefix=BIAS
// RUN: attn-run %s --entry=bias_f16_broadcast --print --reps=1 | FileCheck %s --check-prefix=BIAS16
// RUN: attn-run %s --entry=bias_neg_inf --print --reps=1 | FileCheck %s --check-prefix=NEGINF

// A [Nq, Nk] mask shared by batch and heads; row 1 is all false.
//   v = [1], [2], [4]
//   row 0: keys {0, 2} -> (1 + 4) / 2 = 2.5     lse log 2
//   row 1: no key      -> 0                     lse -inf
// MASK2:      out: f32 [1, 1, 2, 1]
// MASK2-NEXT: {{^}}2.5 0{{$}}
// MASK2-NEXT: lse: f32 [1, 1, 2]
// MASK2-NEXT: {{^}}0.693147 -inf{{$}}
func.func @mask_rank2() -> (tensor<1x1x2x1xf32>, tensor<1x1x2xf32>) {
  %q = arith.constant dense<0.0> : tensor<1x1x2x1xf32>
  %k = arith.constant dense<1.0> : tensor<1x1x3x1xf32>
  %v = arith.constant dense<[[[[1.0], [2.0], [4.0]]]]> : tensor<1x1x3x1xf32>
  %m = arith.constant dense<[[true, false, true], [false, false, false]]> : tensor<2x3xi1>
  %out, %lse = attn.attention q(%q : tensor<1x1x2x1xf32>) k(%k : tensor<1x1x3x1xf32>)
      v(%v : tensor<1x1x3x1xf32>) mask(%m : tensor<2x3xi1>)
      -> tensor<1x1x2x1xf32>, tensor<1x1x2xf32>
  return %out, %lse : tensor<1x1x2x1xf32>, tensor<1x1x2xf32>
}

// A [1, 1, 1, Nk] mask broadcast over batch, heads and queries: key 0 is
// hidden everywhere. Two heads with their own v (MHA).
//   head 0: v = [1], [2], [4]    -> (2 + 4) / 2 = 3
//   head 1: v = [10], [20], [40] -> 30
// MASK4:      out: f32 [1, 2, 1, 1]
// MASK4-NEXT: {{^}}3 30{{$}}
func.func @mask_rank4_broadcast() -> tensor<1x2x1x1xf32> {
  %q = arith.constant dense<0.0> : tensor<1x2x1x1xf32>
  %k = arith.constant dense<1.0> : tensor<1x2x3x1xf32>
  %v = arith.constant dense<[[[[1.0], [2.0], [4.0]], [[10.0], [20.0], [40.0]]]]> : tensor<1x2x3x1xf32>
  %m = arith.constant dense<[[[[false, true, true]]]]> : tensor<1x1x1x3xi1>
  %out = attn.attention q(%q : tensor<1x2x1x1xf32>) k(%k : tensor<1x2x3x1xf32>)
      v(%v : tensor<1x2x3x1xf32>) mask(%m : tensor<1x1x1x3xi1>)
      -> tensor<1x2x1x1xf32>
  return %out : tensor<1x2x1x1xf32>
}

// An f32 bias [ln 3, 0] gives weights [3/4, 1/4].
//   v = [4], [8]: 3 + 2 = 5      lse log(3 + 1) = 1.38629
// BIAS:      out: f32 [1, 1, 1, 1]
// BIAS-NEXT: {{^}}5{{$}}
// BIAS-NEXT: lse: f32 [1, 1, 1]
// BIAS-NEXT: {{^}}1.38629{{$}}
func.func @bias_f32() -> (tensor<1x1x1x1xf32>, tensor<1x1x1xf32>) {
  %q = arith.constant dense<0.0> : tensor<1x1x1x1xf32>
  %k = arith.constant dense<1.0> : tensor<1x1x2x1xf32>
  %v = arith.constant dense<[[[[4.0], [8.0]]]]> : tensor<1x1x2x1xf32>
  %b = arith.constant dense<[[1.0986122886681098, 0.0]]> : tensor<1x2xf32>
  %out, %lse = attn.attention q(%q : tensor<1x1x1x1xf32>) k(%k : tensor<1x1x2x1xf32>)
      v(%v : tensor<1x1x2x1xf32>) bias(%b : tensor<1x2xf32>)
      -> tensor<1x1x1x1xf32>, tensor<1x1x1xf32>
  return %out, %lse : tensor<1x1x1x1xf32>, tensor<1x1x1xf32>
}

// An f16 bias (exact values) on f32 attention, [1, Nk] broadcast over both
// queries: logits [1, 0] give weights e/(e+1) = 0.731059, 1/(e+1).
//   v = [1], [0]: both rows 0.731059      lse log(e + 1) = 1.31326
// BIAS16:      out: f32 [1, 1, 2, 1]
// BIAS16-NEXT: {{^}}0.731059 0.731059{{$}}
// BIAS16-NEXT: lse: f32 [1, 1, 2]
// BIAS16-NEXT: {{^}}1.31326 1.31326{{$}}
func.func @bias_f16_broadcast() -> (tensor<1x1x2x1xf32>, tensor<1x1x2xf32>) {
  %q = arith.constant dense<0.0> : tensor<1x1x2x1xf32>
  %k = arith.constant dense<1.0> : tensor<1x1x2x1xf32>
  %v = arith.constant dense<[[[[1.0], [0.0]]]]> : tensor<1x1x2x1xf32>
  %b = arith.constant dense<[[1.0, 0.0]]> : tensor<1x2xf16>
  %out, %lse = attn.attention q(%q : tensor<1x1x2x1xf32>) k(%k : tensor<1x1x2x1xf32>)
      v(%v : tensor<1x1x2x1xf32>) bias(%b : tensor<1x2xf16>)
      -> tensor<1x1x2x1xf32>, tensor<1x1x2xf32>
  return %out, %lse : tensor<1x1x2x1xf32>, tensor<1x1x2xf32>
}

// A -inf bias entry hides its key like a mask (0xFF800000 is f32 -inf);
// rank-1 bias [Nk] broadcast over everything else.
//   v = [1], [2], [4]: keys {0, 2} -> 2.5     lse log 2
// NEGINF:      out: f32 [1, 1, 1, 1]
// NEGINF-NEXT: {{^}}2.5{{$}}
// NEGINF-NEXT: lse: f32 [1, 1, 1]
// NEGINF-NEXT: {{^}}0.693147{{$}}
func.func @bias_neg_inf() -> (tensor<1x1x1x1xf32>, tensor<1x1x1xf32>) {
  %q = arith.constant dense<0.0> : tensor<1x1x1x1xf32>
  %k = arith.constant dense<1.0> : tensor<1x1x3x1xf32>
  %v = arith.constant dense<[[[[1.0], [2.0], [4.0]]]]> : tensor<1x1x3x1xf32>
  %b = arith.constant dense<[0.0, 0xFF800000, 0.0]> : tensor<3xf32>
  %out, %lse = attn.attention q(%q : tensor<1x1x1x1xf32>) k(%k : tensor<1x1x3x1xf32>)
      v(%v : tensor<1x1x3x1xf32>) bias(%b : tensor<3xf32>)
      -> tensor<1x1x1x1xf32>, tensor<1x1x1xf32>
  return %out, %lse : tensor<1x1x1x1xf32>, tensor<1x1x1xf32>
}
