// f16 cross-attention with a key-length per batch (kv_len) and an additive
// bias for the AArch64 test: 2 batches, 4 heads, 33 queries against up to
// 100 keys, D 48.
func.func @f16_kv_len(%q: tensor<2x4x33x48xf16>, %k: tensor<2x4x100x48xf16>,
                      %v: tensor<2x4x100x48xf16>, %len: tensor<2xi32>,
                      %bias: tensor<2x4x33x100xf16>)
    -> tensor<2x4x33x48xf16> {
  %o = attn.attention q(%q : tensor<2x4x33x48xf16>)
      k(%k : tensor<2x4x100x48xf16>) v(%v : tensor<2x4x100x48xf16>)
      kv_len(%len : tensor<2xi32>) bias(%bias : tensor<2x4x33x100xf16>)
      -> tensor<2x4x33x48xf16>
  return %o : tensor<2x4x33x48xf16>
}
