// Cross-attention: 12 decoder queries read an encoder memory padded to 40
// positions. kv_len gives each batch entry's real memory length; keys at
// j >= kv_len[b] are padding and never read. No causal mask: every query may
// read every real key. Dv (16) differs from Dqk (32).
// Run: attn-opt examples/cross_attention.mlir
func.func @cross_attention(%q: tensor<2x4x12x32xf32>, %k: tensor<2x4x40x32xf32>,
                           %v: tensor<2x4x40x16xf32>, %kv_len: tensor<2xi32>)
    -> tensor<2x4x12x16xf32> {
  %out = attn.attention q(%q : tensor<2x4x12x32xf32>)
      k(%k : tensor<2x4x40x32xf32>) v(%v : tensor<2x4x40x16xf32>)
      kv_len(%kv_len : tensor<2xi32>) -> tensor<2x4x12x16xf32>
  return %out : tensor<2x4x12x16xf32>
}
