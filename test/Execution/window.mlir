// Sliding windows, executed and checked against numbers computed by hand.
// q = 0, so a row's output is the mean of the v rows it may read; v = [1],
// [2], [4], [8] (Nk = 4). Key j is allowed for query i when
// p(i) - j <= window_left and j - p(i) <= window_right.
//
// RUN: attn-run %s --entry=left1_right0 --print --reps=1 | FileCheck %s --check-prefix=L1R0
// RUN: attn-run %s --entry=left1_right1 --print --reps=1 | FileCheck %s --check-prefix=L1R1
// RUN: attn-run %s --entry=right1 --print --reps=1 | FileCheck %s --check-prefix=R1
// RUN: attn-run %s --entry=left0_causal --print --reps=1 | FileCheck %s --check-prefix=L0C
// RUN: attn-run %s --entry=left1_causal_bottom_right --print --reps=1 | FileCheck %s --check-prefix=L1BR
// RUN: attn-run %s --entry=diagonal_past_the_keys --print --reps=1 | FileCheck %s --check-prefix=DIAG

// window_left(1) window_right(0): keys {i-1, i}.
//   row 0: 1; row 1: (1+2)/2 = 1.5; row 2: (2+4)/2 = 3; row 3: (4+8)/2 = 6
// L1R0:      out: f32 [1, 1, 4, 1]
// L1R0-NEXT: {{^}}1 1.5 3 6{{$}}
func.func @left1_right0() -> tensor<1x1x4x1xf32> {
  %q = arith.constant dense<0.0> : tensor<1x1x4x1xf32>
  %k = arith.constant dense<1.0> : tensor<1x1x4x1xf32>
  %v = arith.constant dense<[[[[1.0], [2.0], [4.0], [8.0]]]]> : tensor<1x1x4x1xf32>
  %out = attn.attention q(%q : tensor<1x1x4x1xf32>) k(%k : tensor<1x1x4x1xf32>)
      v(%v : tensor<1x1x4x1xf32>) window_left(1) window_right(0)
      -> tensor<1x1x4x1xf32>
  return %out : tensor<1x1x4x1xf32>
}

// window_left(1) window_right(1): keys {i-1, i, i+1}.
//   row 0: (1+2)/2 = 1.5; row 1: 7/3 = 2.33333; row 2: 14/3 = 4.66667;
//   row 3: (4+8)/2 = 6
// L1R1:      out: f32 [1, 1, 4, 1]
// L1R1-NEXT: {{^}}1.5 2.33333 4.66667 6{{$}}
func.func @left1_right1() -> tensor<1x1x4x1xf32> {
  %q = arith.constant dense<0.0> : tensor<1x1x4x1xf32>
  %k = arith.constant dense<1.0> : tensor<1x1x4x1xf32>
  %v = arith.constant dense<[[[[1.0], [2.0], [4.0], [8.0]]]]> : tensor<1x1x4x1xf32>
  %out = attn.attention q(%q : tensor<1x1x4x1xf32>) k(%k : tensor<1x1x4x1xf32>)
      v(%v : tensor<1x1x4x1xf32>) window_left(1) window_right(1)
      -> tensor<1x1x4x1xf32>
  return %out : tensor<1x1x4x1xf32>
}

// window_right(1) alone (left unbounded): keys 0 .. i+1.
//   row 0: 1.5; row 1: 7/3 = 2.33333; rows 2, 3: 15/4 = 3.75
// R1:      out: f32 [1, 1, 4, 1]
// R1-NEXT: {{^}}1.5 2.33333 3.75 3.75{{$}}
func.func @right1() -> tensor<1x1x4x1xf32> {
  %q = arith.constant dense<0.0> : tensor<1x1x4x1xf32>
  %k = arith.constant dense<1.0> : tensor<1x1x4x1xf32>
  %v = arith.constant dense<[[[[1.0], [2.0], [4.0], [8.0]]]]> : tensor<1x1x4x1xf32>
  %out = attn.attention q(%q : tensor<1x1x4x1xf32>) k(%k : tensor<1x1x4x1xf32>)
      v(%v : tensor<1x1x4x1xf32>) window_right(1) -> tensor<1x1x4x1xf32>
  return %out : tensor<1x1x4x1xf32>
}

// window_left(0) with causal(top_left): only the diagonal key i.
// L0C:      out: f32 [1, 1, 4, 1]
// L0C-NEXT: {{^}}1 2 4 8{{$}}
func.func @left0_causal() -> tensor<1x1x4x1xf32> {
  %q = arith.constant dense<0.0> : tensor<1x1x4x1xf32>
  %k = arith.constant dense<1.0> : tensor<1x1x4x1xf32>
  %v = arith.constant dense<[[[[1.0], [2.0], [4.0], [8.0]]]]> : tensor<1x1x4x1xf32>
  %out = attn.attention q(%q : tensor<1x1x4x1xf32>) k(%k : tensor<1x1x4x1xf32>)
      v(%v : tensor<1x1x4x1xf32>) causal(top_left) window_left(0)
      -> tensor<1x1x4x1xf32>
  return %out : tensor<1x1x4x1xf32>
}

// window_left(1) with causal(bottom_right), Nq = 2, Nk = 4: the alignment
// places the window too, p(i) = i + 2.
//   row 0: p = 2, keys {1, 2} -> 3;  row 1: p = 3, keys {2, 3} -> 6
// L1BR:      out: f32 [1, 1, 2, 1]
// L1BR-NEXT: {{^}}3 6{{$}}
func.func @left1_causal_bottom_right() -> tensor<1x1x2x1xf32> {
  %q = arith.constant dense<0.0> : tensor<1x1x2x1xf32>
  %k = arith.constant dense<1.0> : tensor<1x1x4x1xf32>
  %v = arith.constant dense<[[[[1.0], [2.0], [4.0], [8.0]]]]> : tensor<1x1x4x1xf32>
  %out = attn.attention q(%q : tensor<1x1x2x1xf32>) k(%k : tensor<1x1x4x1xf32>)
      v(%v : tensor<1x1x4x1xf32>) causal(bottom_right) window_left(1)
      -> tensor<1x1x2x1xf32>
  return %out : tensor<1x1x2x1xf32>
}

// window_left(0) window_right(0) without a causal mask, Nq = 3 > Nk = 2
// (top-left): query 2's only candidate, key 2, does not exist, so the row is
// fully masked: out 0, lse -inf.
//   v = [1], [2]: row 0 -> 1, row 1 -> 2, row 2 -> 0
// DIAG:      out: f32 [1, 1, 3, 1]
// DIAG-NEXT: {{^}}1 2 0{{$}}
// DIAG-NEXT: lse: f32 [1, 1, 3]
// DIAG-NEXT: {{^}}0 0 -inf{{$}}
func.func @diagonal_past_the_keys() -> (tensor<1x1x3x1xf32>, tensor<1x1x3xf32>) {
  %q = arith.constant dense<0.0> : tensor<1x1x3x1xf32>
  %k = arith.constant dense<1.0> : tensor<1x1x2x1xf32>
  %v = arith.constant dense<[[[[1.0], [2.0]]]]> : tensor<1x1x2x1xf32>
  %out, %lse = attn.attention q(%q : tensor<1x1x3x1xf32>) k(%k : tensor<1x1x2x1xf32>)
      v(%v : tensor<1x1x2x1xf32>) window_left(0) window_right(0)
      -> tensor<1x1x3x1xf32>, tensor<1x1x3xf32>
  return %out, %lse : tensor<1x1x3x1xf32>, tensor<1x1x3xf32>
}
