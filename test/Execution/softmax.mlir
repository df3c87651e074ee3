// Plain softmax attention with logits chosen so that the weights are simple
// fractions, executed and checked against numbers computed by hand.
//
// RUN: attn-run %s --entry=identity_ln3 --print --reps=1 | FileCheck %s --check-prefix=ID
// RUN: attn-run %s --entry=default_scale --print --reps=1 | FileCheck %s --check-prefix=SCALE
// RUN: attn-run %s --entry=large_logits --print --reps=1 | FileCheck %s --check-prefix=LARGE

// q = k = identity (Dqk = 2), scale ln 3: row 0 has logits [ln 3, 0], so
// weights [3/4, 1/4]; row 1 the mirror image. Dv = 3 != Dqk.
//   v = [4, 0, 1], [0, 8, 1]
//   row 0: 3/4 v0 + 1/4 v1 = [3, 2, 1]     lse log(3 + 1) = 1.38629
//   row 1: 1/4 v0 + 3/4 v1 = [1, 6, 1]     lse 1.38629
// ID:      out: f32 [1, 1, 2, 3]
// ID-NEXT: {{^}}3 2 1 1 6 1{{$}}
// ID-NEXT: lse: f32 [1, 1, 2]
// ID-NEXT: {{^}}1.38629 1.38629{{$}}
func.func @identity_ln3() -> (tensor<1x1x2x3xf32>, tensor<1x1x2xf32>) {
  %q = arith.constant dense<[[[[1.0, 0.0], [0.0, 1.0]]]]> : tensor<1x1x2x2xf32>
  %k = arith.constant dense<[[[[1.0, 0.0], [0.0, 1.0]]]]> : tensor<1x1x2x2xf32>
  %v = arith.constant dense<[[[[4.0, 0.0, 1.0], [0.0, 8.0, 1.0]]]]> : tensor<1x1x2x3xf32>
  %out, %lse = attn.attention q(%q : tensor<1x1x2x2xf32>) k(%k : tensor<1x1x2x2xf32>)
      v(%v : tensor<1x1x2x3xf32>) scale(1.0986122886681098)
      -> tensor<1x1x2x3xf32>, tensor<1x1x2xf32>
  return %out, %lse : tensor<1x1x2x3xf32>, tensor<1x1x2xf32>
}

// The default scale is 1/sqrt(Dqk) = 1/2 for Dqk = 4: q = [ln 3, ln 3, 0, 0]
// and k0 = [1, 1, 0, 0] give the logit (2 ln 3) / 2 = ln 3; k1 = 0 gives 0.
//   v = [4], [8]: 3/4 * 4 + 1/4 * 8 = 5       lse log 4 = 1.38629
// (scale 1 would give weights 9/10, 1/10 and 4.4.)
// SCALE:      out: f32 [1, 1, 1, 1]
// SCALE-NEXT: {{^}}5{{$}}
// SCALE-NEXT: lse: f32 [1, 1, 1]
// SCALE-NEXT: {{^}}1.38629{{$}}
func.func @default_scale() -> (tensor<1x1x1x1xf32>, tensor<1x1x1xf32>) {
  %q = arith.constant dense<[[[[1.0986122886681098, 1.0986122886681098, 0.0, 0.0]]]]> : tensor<1x1x1x4xf32>
  %k = arith.constant dense<[[[[1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]]]> : tensor<1x1x2x4xf32>
  %v = arith.constant dense<[[[[4.0], [8.0]]]]> : tensor<1x1x2x1xf32>
  %out, %lse = attn.attention q(%q : tensor<1x1x1x4xf32>) k(%k : tensor<1x1x2x4xf32>)
      v(%v : tensor<1x1x2x1xf32>) -> tensor<1x1x1x1xf32>, tensor<1x1x1xf32>
  return %out, %lse : tensor<1x1x1x1xf32>, tensor<1x1x1xf32>
}

// Logits 1000 and 999 overflow exp() in f32 unless the row maximum is
// subtracted first (which the contract requires):
//   weights e/(e+1) = 0.731059, 1/(e+1) = 0.268941; v = [1], [0]
//   out 0.731059     lse 1000 + log(1 + 1/e) = 1000.31
// LARGE:      out: f32 [1, 1, 1, 1]
// LARGE-NEXT: {{^}}0.731059{{$}}
// LARGE-NEXT: lse: f32 [1, 1, 1]
// LARGE-NEXT: {{^}}1000.31{{$}}
func.func @large_logits() -> (tensor<1x1x1x1xf32>, tensor<1x1x1xf32>) {
  %q = arith.constant dense<1.0> : tensor<1x1x1x1xf32>
  %k = arith.constant dense<[[[[1000.0], [999.0]]]]> : tensor<1x1x2x1xf32>
  %v = arith.constant dense<[[[[1.0], [0.0]]]]> : tensor<1x1x2x1xf32>
  %out, %lse = attn.attention q(%q : tensor<1x1x1x1xf32>) k(%k : tensor<1x1x2x1xf32>)
      v(%v : tensor<1x1x2x1xf32>) -> tensor<1x1x1x1xf32>, tensor<1x1x1xf32>
  return %out, %lse : tensor<1x1x1x1xf32>, tensor<1x1x1xf32>
}
