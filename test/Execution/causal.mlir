// Causal masks, executed and checked against numbers computed by hand.
//
// RUN: attn-run %s --entry=self_top_left --print --reps=1 | FileCheck %s --check-prefix=TL
// RUN: attn-run %s --entry=row0_copies_v0 --print --reps=1 | FileCheck %s --check-prefix=ROW0
// RUN: attn-run %s --entry=cross_top_left --print --reps=1 | FileCheck %s --check-prefix=XTL
// RUN: attn-run %s --entry=cross_bottom_right --print --reps=1 | FileCheck %s --check-prefix=XBR
// RUN: attn-run %s --entry=fully_masked_row --print --reps=1 | FileCheck %s --check-prefix=EMPTY
//
// Unless said otherwise q = 0, so every allowed key gets the same logit 0 and
// a row's output is the plain mean of the v rows it may read, and its lse is
// log(number of allowed keys). v has rows [1, 10], [2, 20], [4, 40].

// Nq = Nk = 3, top-left: query i reads keys 0..i.
//   row 0: v0                   = [1, 10]           lse log 1 = 0
//   row 1: (v0 + v1) / 2        = [1.5, 15]         lse log 2 = 0.693147
//   row 2: (v0 + v1 + v2) / 3   = [2.33333, 23.3333] lse log 3 = 1.09861
// TL:      out: f32 [1, 1, 3, 2]
// TL-NEXT: {{^}}1 10 1.5 15 2.33333 23.3333{{$}}
// TL-NEXT: lse: f32 [1, 1, 3]
// TL-NEXT: {{^}}0 0.693147 1.09861{{$}}
func.func @self_top_left() -> (tensor<1x1x3x2xf32>, tensor<1x1x3xf32>) {
  %q = arith.constant dense<0.0> : tensor<1x1x3x1xf32>
  %k = arith.constant dense<[[[[0.5], [-1.0], [2.0]]]]> : tensor<1x1x3x1xf32>
  %v = arith.constant dense<[[[[1.0, 10.0], [2.0, 20.0], [4.0, 40.0]]]]> : tensor<1x1x3x2xf32>
  %out, %lse = attn.attention q(%q : tensor<1x1x3x1xf32>) k(%k : tensor<1x1x3x1xf32>)
      v(%v : tensor<1x1x3x2xf32>) causal(top_left)
      -> tensor<1x1x3x2xf32>, tensor<1x1x3xf32>
  return %out, %lse : tensor<1x1x3x2xf32>, tensor<1x1x3xf32>
}

// Nonzero q and k: row 0 may read key 0 only, so it copies v0 whatever the
// logit, and its lse is that logit: scale * q0 * k0 = 1 * 0.5 * 3 = 1.5.
// Row 1 reads both keys with logits (-2) * 3 = -6 and (-2) * (-1) = 2:
//   w0 = 1 / (1 + e^8) = 3.3535e-4, w1 = 1 - w0
//   out = [2 - w0, 20 - 10 w0] = [1.99966, 19.9966]
//   lse = 2 + log(1 + e^-8) = 2.00034
// ROW0:      out: f32 [1, 1, 2, 2]
// ROW0-NEXT: {{^}}1 10 1.99966 19.9966{{$}}
// ROW0-NEXT: lse: f32 [1, 1, 2]
// ROW0-NEXT: {{^}}1.5 2.00034{{$}}
func.func @row0_copies_v0() -> (tensor<1x1x2x2xf32>, tensor<1x1x2xf32>) {
  %q = arith.constant dense<[[[[0.5], [-2.0]]]]> : tensor<1x1x2x1xf32>
  %k = arith.constant dense<[[[[3.0], [-1.0]]]]> : tensor<1x1x2x1xf32>
  %v = arith.constant dense<[[[[1.0, 10.0], [2.0, 20.0]]]]> : tensor<1x1x2x2xf32>
  %out, %lse = attn.attention q(%q : tensor<1x1x2x1xf32>) k(%k : tensor<1x1x2x1xf32>)
      v(%v : tensor<1x1x2x2xf32>) causal(top_left)
      -> tensor<1x1x2x2xf32>, tensor<1x1x2xf32>
  return %out, %lse : tensor<1x1x2x2xf32>, tensor<1x1x2xf32>
}

// Cross-attention, Nq = 2 < Nk = 3, top-left: p(i) = i.
//   row 0: keys {0}    -> [1, 10]
//   row 1: keys {0, 1} -> [1.5, 15]
// XTL:      out: f32 [1, 1, 2, 2]
// XTL-NEXT: {{^}}1 10 1.5 15{{$}}
// XTL-NEXT: lse: f32 [1, 1, 2]
// XTL-NEXT: {{^}}0 0.693147{{$}}
func.func @cross_top_left() -> (tensor<1x1x2x2xf32>, tensor<1x1x2xf32>) {
  %q = arith.constant dense<0.0> : tensor<1x1x2x1xf32>
  %k = arith.constant dense<1.0> : tensor<1x1x3x1xf32>
  %v = arith.constant dense<[[[[1.0, 10.0], [2.0, 20.0], [4.0, 40.0]]]]> : tensor<1x1x3x2xf32>
  %out, %lse = attn.attention q(%q : tensor<1x1x2x1xf32>) k(%k : tensor<1x1x3x1xf32>)
      v(%v : tensor<1x1x3x2xf32>) causal(top_left)
      -> tensor<1x1x2x2xf32>, tensor<1x1x2xf32>
  return %out, %lse : tensor<1x1x2x2xf32>, tensor<1x1x2xf32>
}

// The same problem bottom-right: p(i) = i + Nk - Nq = i + 1.
//   row 0: keys {0, 1}    -> [1.5, 15]
//   row 1: keys {0, 1, 2} -> [2.33333, 23.3333]
// XBR:      out: f32 [1, 1, 2, 2]
// XBR-NEXT: {{^}}1.5 15 2.33333 23.3333{{$}}
// XBR-NEXT: lse: f32 [1, 1, 2]
// XBR-NEXT: {{^}}0.693147 1.09861{{$}}
func.func @cross_bottom_right() -> (tensor<1x1x2x2xf32>, tensor<1x1x2xf32>) {
  %q = arith.constant dense<0.0> : tensor<1x1x2x1xf32>
  %k = arith.constant dense<1.0> : tensor<1x1x3x1xf32>
  %v = arith.constant dense<[[[[1.0, 10.0], [2.0, 20.0], [4.0, 40.0]]]]> : tensor<1x1x3x2xf32>
  %out, %lse = attn.attention q(%q : tensor<1x1x2x1xf32>) k(%k : tensor<1x1x3x1xf32>)
      v(%v : tensor<1x1x3x2xf32>) causal(bottom_right)
      -> tensor<1x1x2x2xf32>, tensor<1x1x2xf32>
  return %out, %lse : tensor<1x1x2x2xf32>, tensor<1x1x2xf32>
}

// Nq = 3 > Nk = 2, bottom-right: p(i) = i - 1, so query 0 sits before the
// first key and may read nothing: out exactly 0 (not NaN), lse -inf.
//   row 0: no key   -> [0, 0]     lse -inf
//   row 1: keys {0} -> [1, 10]    lse 0
//   row 2: {0, 1}   -> [1.5, 15]  lse log 2
// EMPTY:      out: f32 [1, 1, 3, 2]
// EMPTY-NEXT: {{^}}0 0 1 10 1.5 15{{$}}
// EMPTY-NEXT: lse: f32 [1, 1, 3]
// EMPTY-NEXT: {{^}}-inf 0 0.693147{{$}}
func.func @fully_masked_row() -> (tensor<1x1x3x2xf32>, tensor<1x1x3xf32>) {
  %q = arith.constant dense<0.0> : tensor<1x1x3x1xf32>
  %k = arith.constant dense<1.0> : tensor<1x1x2x1xf32>
  %v = arith.constant dense<[[[[1.0, 10.0], [2.0, 20.0]]]]> : tensor<1x1x2x2xf32>
  %out, %lse = attn.attention q(%q : tensor<1x1x3x1xf32>) k(%k : tensor<1x1x2x1xf32>)
      v(%v : tensor<1x1x2x2xf32>) causal(bottom_right)
      -> tensor<1x1x3x2xf32>, tensor<1x1x3xf32>
  return %out, %lse : tensor<1x1x3x2xf32>, tensor<1x1x3xf32>
}
