// FlashAttention's local attention with Nq != Nk: a window on the
// bottom-right diagonal without a causal mask, p(i) = i + kv_len - Nq.
func.func @aligned_window(%q: tensor<2x4x?x32xf32>, %k: tensor<2x2x?x32xf32>,
                          %v: tensor<2x2x?x32xf32>, %len: tensor<2xi32>)
    -> tensor<2x4x?x32xf32> {
  %out = attn.attention q(%q : tensor<2x4x?x32xf32>)
      k(%k : tensor<2x2x?x32xf32>) v(%v : tensor<2x2x?x32xf32>)
      kv_len(%len : tensor<2xi32>) align(bottom_right) window_left(40)
      window_right(24) -> tensor<2x4x?x32xf32>
  return %out : tensor<2x4x?x32xf32>
}
