// ALiBi, executed and checked against numbers computed by hand:
// s_ij -= slope[h] * |j - p(i)|. q = 0, so the ALiBi term is the whole logit.
//
// RUN: attn-run %s --entry=symmetric --print --reps=1 | FileCheck %s --check-prefix=SYM
// RUN: attn-run %s --entry=decode_bottom_right --print --reps=1 | FileCheck %s --check-prefix=BR
// RUN: attn-run %s --entry=no_causal_top_left --print --reps=1 | FileCheck %s --check-prefix=TL
// RUN: attn-run %s --entry=per_head_gqa --print --reps=1 | FileCheck %s --check-prefix=HEADS

// Nq = Nk = 2, no causal mask (p(i) = i), slope ln 3:
//   row 0: logits [0, -ln 3] -> weights [3/4, 1/4]; v = [1], [5] -> 2
//   row 1: logits [-ln 3, 0] -> weights [1/4, 3/4]                 -> 4
//   lse: log(1 + 1/3) = 0.287682 for both rows
// SYM:      out: f32 [1, 1, 2, 1]
// SYM-NEXT: {{^}}2 4{{$}}
// SYM-NEXT: lse: f32 [1, 1, 2]
// SYM-NEXT: {{^}}0.287682 0.287682{{$}}
func.func @symmetric() -> (tensor<1x1x2x1xf32>, tensor<1x1x2xf32>) {
  %q = arith.constant dense<0.0> : tensor<1x1x2x1xf32>
  %k = arith.constant dense<1.0> : tensor<1x1x2x1xf32>
  %v = arith.constant dense<[[[[1.0], [5.0]]]]> : tensor<1x1x2x1xf32>
  %s = arith.constant dense<1.0986122886681098> : tensor<1xf32>
  %out, %lse = attn.attention q(%q : tensor<1x1x2x1xf32>) k(%k : tensor<1x1x2x1xf32>)
      v(%v : tensor<1x1x2x1xf32>) alibi(%s : tensor<1xf32>)
      -> tensor<1x1x2x1xf32>, tensor<1x1x2xf32>
  return %out, %lse : tensor<1x1x2x1xf32>, tensor<1x1x2xf32>
}

// Decoding: Nq = 1, Nk = 3, causal bottom-right, so p(0) = 2; slope ln 2:
//   logits [-2 ln 2, -ln 2, 0] -> exp [1/4, 1/2, 1], sum 7/4
//   weights [1/7, 2/7, 4/7]; v = [7], [14], [28] -> 1 + 4 + 16 = 21
//   lse log(7/4) = 0.559616
// BR:      out: f32 [1, 1, 1, 1]
// BR-NEXT: {{^}}21{{$}}
// BR-NEXT: lse: f32 [1, 1, 1]
// BR-NEXT: {{^}}0.559616{{$}}
func.func @decode_bottom_right() -> (tensor<1x1x1x1xf32>, tensor<1x1x1xf32>) {
  %q = arith.constant dense<0.0> : tensor<1x1x1x1xf32>
  %k = arith.constant dense<1.0> : tensor<1x1x3x1xf32>
  %v = arith.constant dense<[[[[7.0], [14.0], [28.0]]]]> : tensor<1x1x3x1xf32>
  %s = arith.constant dense<0.69314718055994529> : tensor<1xf32>
  %out, %lse = attn.attention q(%q : tensor<1x1x1x1xf32>) k(%k : tensor<1x1x3x1xf32>)
      v(%v : tensor<1x1x3x1xf32>) alibi(%s : tensor<1xf32>) causal(bottom_right)
      -> tensor<1x1x1x1xf32>, tensor<1x1x1xf32>
  return %out, %lse : tensor<1x1x1x1xf32>, tensor<1x1x1xf32>
}

// The same without a causal mask: p(0) = 0 (top-left), distances reversed:
//   weights [4/7, 2/7, 1/7] -> 4 + 4 + 4 = 12     lse log(7/4)
// TL:      out: f32 [1, 1, 1, 1]
// TL-NEXT: {{^}}12{{$}}
// TL-NEXT: lse: f32 [1, 1, 1]
// TL-NEXT: {{^}}0.559616{{$}}
func.func @no_causal_top_left() -> (tensor<1x1x1x1xf32>, tensor<1x1x1xf32>) {
  %q = arith.constant dense<0.0> : tensor<1x1x1x1xf32>
  %k = arith.constant dense<1.0> : tensor<1x1x3x1xf32>
  %v = arith.constant dense<[[[[7.0], [14.0], [28.0]]]]> : tensor<1x1x3x1xf32>
  %s = arith.constant dense<0.69314718055994529> : tensor<1xf32>
  %out, %lse = attn.attention q(%q : tensor<1x1x1x1xf32>) k(%k : tensor<1x1x3x1xf32>)
      v(%v : tensor<1x1x3x1xf32>) alibi(%s : tensor<1xf32>)
      -> tensor<1x1x1x1xf32>, tensor<1x1x1xf32>
  return %out, %lse : tensor<1x1x1x1xf32>, tensor<1x1x1xf32>
}

// One slope per query head: two query heads share one K/V head (v = [1], [5]);
// head 0 has slope ln 3 (weights [3/4, 1/4] -> 2), head 1 slope 0 (plain
// mean -> 3). Nq = 1, Nk = 2, no causal.
// HEADS:      out: f32 [1, 2, 1, 1]
// HEADS-NEXT: {{^}}2 3{{$}}
func.func @per_head_gqa() -> tensor<1x2x1x1xf32> {
  %q = arith.constant dense<0.0> : tensor<1x2x1x1xf32>
  %k = arith.constant dense<1.0> : tensor<1x1x2x1xf32>
  %v = arith.constant dense<[[[[1.0], [5.0]]]]> : tensor<1x1x2x1xf32>
  %s = arith.constant dense<[1.0986122886681098, 0.0]> : tensor<2xf32>
  %out = attn.attention q(%q : tensor<1x2x1x1xf32>) k(%k : tensor<1x1x2x1xf32>)
      v(%v : tensor<1x1x2x1xf32>) alibi(%s : tensor<2xf32>)
      -> tensor<1x2x1x1xf32>
  return %out : tensor<1x2x1x1xf32>
}
