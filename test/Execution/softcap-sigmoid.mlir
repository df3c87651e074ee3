// Soft cap and sigmoid normalization, executed and checked against numbers
// computed by hand.
//
// RUN: attn-run %s --entry=softcap --print --reps=1 | FileCheck %s --check-prefix=CAP
// RUN: attn-run %s --entry=softcap_then_bias --print --reps=1 | FileCheck %s --check-prefix=CAPBIAS
// RUN: attn-run %s --entry=sigmoid_causal --print --reps=1 | FileCheck %s --check-prefix=SIG
// RUN: attn-run %s --entry=sigmoid_bias --print --reps=1 | FileCheck %s --check-prefix=SIGBIAS

// softcap(1): logits [100, 0] become [tanh(100), 0] = [1, 0] (uncapped, the
// first key would take all the weight).
//   weights e/(e+1) = 0.731059, 1/(e+1); v = [1], [0] -> 0.731059
//   lse log(e + 1) = 1.31326
// CAP:      out: f32 [1, 1, 1, 1]
// CAP-NEXT: {{^}}0.731059{{$}}
// CAP-NEXT: lse: f32 [1, 1, 1]
// CAP-NEXT: {{^}}1.31326{{$}}
func.func @softcap() -> (tensor<1x1x1x1xf32>, tensor<1x1x1xf32>) {
  %q = arith.constant dense<10.0> : tensor<1x1x1x1xf32>
  %k = arith.constant dense<[[[[10.0], [0.0]]]]> : tensor<1x1x2x1xf32>
  %v = arith.constant dense<[[[[1.0], [0.0]]]]> : tensor<1x1x2x1xf32>
  %out, %lse = attn.attention q(%q : tensor<1x1x1x1xf32>) k(%k : tensor<1x1x2x1xf32>)
      v(%v : tensor<1x1x2x1xf32>) scale(1.0) softcap(1.0)
      -> tensor<1x1x1x1xf32>, tensor<1x1x1xf32>
  return %out, %lse : tensor<1x1x1x1xf32>, tensor<1x1x1xf32>
}

// The cap comes before the bias: [100, 0] -> [1, 0], plus bias [0, 1] ->
// [1, 1], equal weights -> 0.5, lse 1 + log 2 = 1.69315. (Bias first would
// give tanh([100, 1]) = [1, 0.76] and weights != 1/2.)
// CAPBIAS:      out: f32 [1, 1, 1, 1]
// CAPBIAS-NEXT: {{^}}0.5{{$}}
// CAPBIAS-NEXT: lse: f32 [1, 1, 1]
// CAPBIAS-NEXT: {{^}}1.69315{{$}}
func.func @softcap_then_bias() -> (tensor<1x1x1x1xf32>, tensor<1x1x1xf32>) {
  %q = arith.constant dense<10.0> : tensor<1x1x1x1xf32>
  %k = arith.constant dense<[[[[10.0], [0.0]]]]> : tensor<1x1x2x1xf32>
  %v = arith.constant dense<[[[[1.0], [0.0]]]]> : tensor<1x1x2x1xf32>
  %b = arith.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %out, %lse = attn.attention q(%q : tensor<1x1x1x1xf32>) k(%k : tensor<1x1x2x1xf32>)
      v(%v : tensor<1x1x2x1xf32>) bias(%b : tensor<2xf32>) scale(1.0) softcap(1.0)
      -> tensor<1x1x1x1xf32>, tensor<1x1x1xf32>
  return %out, %lse : tensor<1x1x1x1xf32>, tensor<1x1x1xf32>
}

// Sigmoid weights sigmoid(0) = 1/2 per allowed key, no row sum. Nq = 3,
// Nk = 2, causal bottom-right: p(i) = i - 1.
//   row 0: no key -> 0;  row 1: key 0 -> 1/2 * 1 = 0.5;
//   row 2: keys 0, 1 -> 1/2 * (1 + 2) = 1.5
// SIG:      out: f32 [1, 1, 3, 1]
// SIG-NEXT: {{^}}0 0.5 1.5{{$}}
func.func @sigmoid_causal() -> tensor<1x1x3x1xf32> {
  %q = arith.constant dense<0.0> : tensor<1x1x3x1xf32>
  %k = arith.constant dense<1.0> : tensor<1x1x2x1xf32>
  %v = arith.constant dense<[[[[1.0], [2.0]]]]> : tensor<1x1x2x1xf32>
  %out = attn.attention q(%q : tensor<1x1x3x1xf32>) k(%k : tensor<1x1x2x1xf32>)
      v(%v : tensor<1x1x2x1xf32>) causal(bottom_right) norm(sigmoid)
      -> tensor<1x1x3x1xf32>
  return %out : tensor<1x1x3x1xf32>
}

// Sigmoid of the bias: sigmoid(ln 3) = 3/4, sigmoid(0) = 1/2.
//   v = [4], [8] -> 3 + 4 = 7
// SIGBIAS:      out: f32 [1, 1, 1, 1]
// SIGBIAS-NEXT: {{^}}7{{$}}
func.func @sigmoid_bias() -> tensor<1x1x1x1xf32> {
  %q = arith.constant dense<0.0> : tensor<1x1x1x1xf32>
  %k = arith.constant dense<1.0> : tensor<1x1x2x1xf32>
  %v = arith.constant dense<[[[[4.0], [8.0]]]]> : tensor<1x1x2x1xf32>
  %b = arith.constant dense<[[[[1.0986122886681098, 0.0]]]]> : tensor<1x1x1x2xf32>
  %out = attn.attention q(%q : tensor<1x1x1x1xf32>) k(%k : tensor<1x1x2x1xf32>)
      v(%v : tensor<1x1x2x1xf32>) bias(%b : tensor<1x1x1x2xf32>) norm(sigmoid)
      -> tensor<1x1x1x1xf32>
  return %out : tensor<1x1x1x1xf32>
}
