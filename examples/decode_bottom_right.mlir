// One decoding step against a KV cache: a single new query per sequence
// (Nq = 1) reads a cache of capacity 256 of which kv_len[b] entries are
// filled (the new token's own K/V included). causal(bottom_right) places the
// query at position p = kv_len[b] - 1, the newest token, so it reads keys
// 0 .. kv_len[b] - 1; top-left alignment would let it read key 0 only.
// GQA with 8 query heads over 2 K/V heads, as in the seed. The lse result is
// what a split-KV decode kernel combines partial results with.
// Run: attn-opt examples/decode_bottom_right.mlir
func.func @decode_bottom_right(%q: tensor<2x8x1x64xf32>,
                               %k_cache: tensor<2x2x256x64xf32>,
                               %v_cache: tensor<2x2x256x64xf32>,
                               %kv_len: tensor<2xi32>)
    -> (tensor<2x8x1x64xf32>, tensor<2x8x1xf32>) {
  %out, %lse = attn.attention q(%q : tensor<2x8x1x64xf32>)
      k(%k_cache : tensor<2x2x256x64xf32>) v(%v_cache : tensor<2x2x256x64xf32>)
      kv_len(%kv_len : tensor<2xi32>) causal(bottom_right)
      -> tensor<2x8x1x64xf32>, tensor<2x8x1xf32>
  return %out, %lse : tensor<2x8x1x64xf32>, tensor<2x8x1xf32>
}
