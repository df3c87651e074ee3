// Head grouping, element types and the bnhd layout, executed and checked
// against numbers computed by hand.
//
// RUN: attn-run %s --entry=gqa_4_2 --print --reps=1 | FileCheck %s --check-prefix=GQA
// RUN: attn-run %s --entry=mqa_f16 --print --reps=1 | FileCheck %s --check-prefix=MQA16
// RUN: attn-run %s --entry=bnhd --print --reps=1 | FileCheck %s --check-prefix=BNHD

// Hq = 4 query heads, Hkv = 2: heads 0, 1 read K/V head 0 and heads 2, 3 read
// K/V head 1 (g(h) = floor(h / 2); an interleaved h % 2 would swap heads 1
// and 2). Nq = 1, Nk = 2, Dqk = 1, scale 1. Both K heads are k = [1], [0];
// q = [ln 3], [-ln 3], [ln 3], [-ln 3] per head.
//   logits [ln 3, 0]  -> weights [3/4, 1/4]   lse log 4 = 1.38629
//   logits [-ln 3, 0] -> weights [1/4, 3/4]   lse log(4/3) = 0.287682
//   K/V head 0: v = [0], [8]     -> head 0: 2,   head 1: 6
//   K/V head 1: v = [100], [200] -> head 2: 125, head 3: 175
// GQA:      out: f32 [1, 4, 1, 1]
// GQA-NEXT: {{^}}2 6 125 175{{$}}
// GQA-NEXT: lse: f32 [1, 4, 1]
// GQA-NEXT: {{^}}1.38629 0.287682 1.38629 0.287682{{$}}
func.func @gqa_4_2() -> (tensor<1x4x1x1xf32>, tensor<1x4x1xf32>) {
  %q = arith.constant dense<[[[[1.0986122886681098]], [[-1.0986122886681098]], [[1.0986122886681098]], [[-1.0986122886681098]]]]> : tensor<1x4x1x1xf32>
  %k = arith.constant dense<[[[[1.0], [0.0]], [[1.0], [0.0]]]]> : tensor<1x2x2x1xf32>
  %v = arith.constant dense<[[[[0.0], [8.0]], [[100.0], [200.0]]]]> : tensor<1x2x2x1xf32>
  %out, %lse = attn.attention q(%q : tensor<1x4x1x1xf32>) k(%k : tensor<1x2x2x1xf32>)
      v(%v : tensor<1x2x2x1xf32>) -> tensor<1x4x1x1xf32>, tensor<1x4x1xf32>
  return %out, %lse : tensor<1x4x1x1xf32>, tensor<1x4x1xf32>
}

// MQA in f16: two query heads, one K/V head, q = [1], [-1], k = [1], [0],
// v = [0], [8] (all exact in f16).
//   head 0: logits [1, 0]  -> 8 / (e + 1)     = 2.15153 -> f16 2.15234
//   head 1: logits [-1, 0] -> 8 e / (e + 1)   = 5.84847 -> f16 5.84766
//   (f16 spacing is 2^-9 in [2, 4) and 2^-8 in [4, 8))
//   lse (f32): log(e + 1) = 1.31326 and log(1/e + 1) = 0.313262
// MQA16:      out: f16 [1, 2, 1, 1]
// MQA16-NEXT: {{^}}2.15234 5.84766{{$}}
// MQA16-NEXT: lse: f32 [1, 2, 1]
// MQA16-NEXT: {{^}}1.31326 0.313262{{$}}
func.func @mqa_f16() -> (tensor<1x2x1x1xf16>, tensor<1x2x1xf32>) {
  %q = arith.constant dense<[[[[1.0]], [[-1.0]]]]> : tensor<1x2x1x1xf16>
  %k = arith.constant dense<[[[[1.0], [0.0]]]]> : tensor<1x1x2x1xf16>
  %v = arith.constant dense<[[[[0.0], [8.0]]]]> : tensor<1x1x2x1xf16>
  %out, %lse = attn.attention q(%q : tensor<1x2x1x1xf16>) k(%k : tensor<1x1x2x1xf16>)
      v(%v : tensor<1x1x2x1xf16>) -> tensor<1x2x1x1xf16>, tensor<1x2x1xf32>
  return %out, %lse : tensor<1x2x1x1xf16>, tensor<1x2x1xf32>
}

// layout(bnhd): tensors are [B, N, H, D]. Two heads, Nq = Nk = 2, q = 0,
// causal top-left. v[0, n, h, 0]: (n0, h0) = 1, (n0, h1) = 10, (n1, h0) = 3,
// (n1, h1) = 30.
//   head 0: row 0 -> 1,  row 1 -> (1 + 3) / 2   = 2
//   head 1: row 0 -> 10, row 1 -> (10 + 30) / 2 = 20
// out is stored [B, Nq, H, Dv]: (n0, h0), (n0, h1), (n1, h0), (n1, h1);
// lse is always [B, Hq, Nq].
// BNHD:      out: f32 [1, 2, 2, 1]
// BNHD-NEXT: {{^}}1 10 2 20{{$}}
// BNHD-NEXT: lse: f32 [1, 2, 2]
// BNHD-NEXT: {{^}}0 0.693147 0 0.693147{{$}}
func.func @bnhd() -> (tensor<1x2x2x1xf32>, tensor<1x2x2xf32>) {
  %q = arith.constant dense<0.0> : tensor<1x2x2x1xf32>
  %k = arith.constant dense<1.0> : tensor<1x2x2x1xf32>
  %v = arith.constant dense<[[[[1.0], [10.0]], [[3.0], [30.0]]]]> : tensor<1x2x2x1xf32>
  %out, %lse = attn.attention q(%q : tensor<1x2x2x1xf32>) k(%k : tensor<1x2x2x1xf32>)
      v(%v : tensor<1x2x2x1xf32>) layout(bnhd) causal(top_left)
      -> tensor<1x2x2x1xf32>, tensor<1x2x2xf32>
  return %out, %lse : tensor<1x2x2x1xf32>, tensor<1x2x2xf32>
}
