// Per-batch KV lengths, executed and checked against numbers computed by
// hand. q = 0, so a row's output is the mean of the v rows it may read and its
// lse is log(number of allowed keys). Every batch entry has v = [1], [2], [4].
//
// RUN: attn-run %s --entry=kv_len_only --print --reps=1 | FileCheck %s --check-prefix=LEN
// RUN: attn-run %s --entry=kv_len_bottom_right --print --reps=1 | FileCheck %s --check-prefix=BR
// RUN: attn-run %s --entry=kv_len_top_left --print --reps=1 | FileCheck %s --check-prefix=TL

// kv_len = [0, 1, 3], no causal mask, Nq = 2, Nk = 3:
//   batch 0: no key at all  -> out 0, 0      lse -inf, -inf
//   batch 1: key 0          -> out 1, 1      lse 0, 0
//   batch 2: keys 0..2      -> out 7/3 twice lse log 3 = 1.09861 twice
// LEN:      out: f32 [3, 1, 2, 1]
// LEN-NEXT: {{^}}0 0 1 1 2.33333 2.33333{{$}}
// LEN-NEXT: lse: f32 [3, 1, 2]
// LEN-NEXT: {{^}}-inf -inf 0 0 1.09861 1.09861{{$}}
func.func @kv_len_only() -> (tensor<3x1x2x1xf32>, tensor<3x1x2xf32>) {
  %q = arith.constant dense<0.0> : tensor<3x1x2x1xf32>
  %k = arith.constant dense<1.0> : tensor<3x1x3x1xf32>
  %v = arith.constant dense<[[[[1.0], [2.0], [4.0]]], [[[1.0], [2.0], [4.0]]], [[[1.0], [2.0], [4.0]]]]> : tensor<3x1x3x1xf32>
  %len = arith.constant dense<[0, 1, 3]> : tensor<3xi32>
  %out, %lse = attn.attention q(%q : tensor<3x1x2x1xf32>) k(%k : tensor<3x1x3x1xf32>)
      v(%v : tensor<3x1x3x1xf32>) kv_len(%len : tensor<3xi32>)
      -> tensor<3x1x2x1xf32>, tensor<3x1x2xf32>
  return %out, %lse : tensor<3x1x2x1xf32>, tensor<3x1x2xf32>
}

// A KV cache: kv_len = [1, 3] (i64), causal bottom-right, Nq = 2, Nk = 3.
// p(i) = i + kv_len[b] - Nq:
//   batch 0: p = -1, 0 -> row 0 reads nothing (0, -inf), row 1 key 0 (1, 0)
//   batch 1: p = 1, 2  -> row 0 keys 0, 1 (1.5, log 2), row 1 keys 0..2
//                         (2.33333, log 3)
// BR:      out: f32 [2, 1, 2, 1]
// BR-NEXT: {{^}}0 1 1.5 2.33333{{$}}
// BR-NEXT: lse: f32 [2, 1, 2]
// BR-NEXT: {{^}}-inf 0 0.693147 1.09861{{$}}
func.func @kv_len_bottom_right() -> (tensor<2x1x2x1xf32>, tensor<2x1x2xf32>) {
  %q = arith.constant dense<0.0> : tensor<2x1x2x1xf32>
  %k = arith.constant dense<1.0> : tensor<2x1x3x1xf32>
  %v = arith.constant dense<[[[[1.0], [2.0], [4.0]]], [[[1.0], [2.0], [4.0]]]]> : tensor<2x1x3x1xf32>
  %len = arith.constant dense<[1, 3]> : tensor<2xi64>
  %out, %lse = attn.attention q(%q : tensor<2x1x2x1xf32>) k(%k : tensor<2x1x3x1xf32>)
      v(%v : tensor<2x1x3x1xf32>) kv_len(%len : tensor<2xi64>) causal(bottom_right)
      -> tensor<2x1x2x1xf32>, tensor<2x1x2xf32>
  return %out, %lse : tensor<2x1x2x1xf32>, tensor<2x1x2xf32>
}

// The same with causal top-left: p(i) = i whatever kv_len.
//   batch 0 (kv_len 1): row 0 key 0 -> 1; row 1 key 0 (key 1 is padding) -> 1
//   batch 1 (kv_len 3): row 0 key 0 -> 1; row 1 keys 0, 1 -> 1.5
// TL:      out: f32 [2, 1, 2, 1]
// TL-NEXT: {{^}}1 1 1 1.5{{$}}
// TL-NEXT: lse: f32 [2, 1, 2]
// TL-NEXT: {{^}}0 0 0 0.693147{{$}}
func.func @kv_len_top_left() -> (tensor<2x1x2x1xf32>, tensor<2x1x2xf32>) {
  %q = arith.constant dense<0.0> : tensor<2x1x2x1xf32>
  %k = arith.constant dense<1.0> : tensor<2x1x3x1xf32>
  %v = arith.constant dense<[[[[1.0], [2.0], [4.0]]], [[[1.0], [2.0], [4.0]]]]> : tensor<2x1x3x1xf32>
  %len = arith.constant dense<[1, 3]> : tensor<2xi64>
  %out, %lse = attn.attention q(%q : tensor<2x1x2x1xf32>) k(%k : tensor<2x1x3x1xf32>)
      v(%v : tensor<2x1x3x1xf32>) kv_len(%len : tensor<2xi64>) causal(top_left)
      -> tensor<2x1x2x1xf32>, tensor<2x1x2xf32>
  return %out, %lse : tensor<2x1x2x1xf32>, tensor<2x1x2xf32>
}
