// One decode step over an fp8 (e4m3) paged KV cache with one f32 scale per
// token and head: append the new token's K and V (each new row gets its
// scale, max |x| / 448, and its values rounded to e4m3), then attend with
// kv_len + 1, bottom-right causal, reading the cache at a quarter of f32's
// bytes (dequantized tile by tile as it is loaded). 4 sequences, 8 query
// heads over 2 K/V heads, D = 64, pages of 16 tokens, a pool of 64 pages.
// The same step as paged_decode_step.mlir, on the CPU and the GPU.
func.func @step(%q: tensor<4x8x1x64xf32>, %kn: tensor<4x2x1x64xf32>,
                %vn: tensor<4x2x1x64xf32>,
                %kp: tensor<64x2x16x64xf8E4M3FN>, %ks: tensor<64x2x16xf32>,
                %vp: tensor<64x2x16x64xf8E4M3FN>, %vs: tensor<64x2x16xf32>,
                %pt: tensor<4x16xi32>, %len: tensor<4xi32>)
    -> (tensor<4x8x1x64xf32>, tensor<64x2x16x64xf8E4M3FN>, tensor<64x2x16xf32>,
        tensor<64x2x16x64xf8E4M3FN>, tensor<64x2x16xf32>) {
  %kp2, %ks2 = attn.kv_cache_append cache(%kp : tensor<64x2x16x64xf8E4M3FN>)
      update(%kn : tensor<4x2x1x64xf32>) at(%len : tensor<4xi32>)
      page_table(%pt : tensor<4x16xi32>) scales(%ks : tensor<64x2x16xf32>)
      -> tensor<64x2x16x64xf8E4M3FN>, tensor<64x2x16xf32>
  %vp2, %vs2 = attn.kv_cache_append cache(%vp : tensor<64x2x16x64xf8E4M3FN>)
      update(%vn : tensor<4x2x1x64xf32>) at(%len : tensor<4xi32>)
      page_table(%pt : tensor<4x16xi32>) scales(%vs : tensor<64x2x16xf32>)
      -> tensor<64x2x16x64xf8E4M3FN>, tensor<64x2x16xf32>
  %one = arith.constant dense<1> : tensor<4xi32>
  %len2 = arith.addi %len, %one : tensor<4xi32>
  %out = attn.attention q(%q : tensor<4x8x1x64xf32>)
      k(%kp2 : tensor<64x2x16x64xf8E4M3FN>) v(%vp2 : tensor<64x2x16x64xf8E4M3FN>)
      page_table(%pt : tensor<4x16xi32>) kv_len(%len2 : tensor<4xi32>)
      k_scale(%ks2 : tensor<64x2x16xf32>) v_scale(%vs2 : tensor<64x2x16xf32>)
      causal(bottom_right) -> tensor<4x8x1x64xf32>
  return %out, %kp2, %ks2, %vp2, %vs2
      : tensor<4x8x1x64xf32>, tensor<64x2x16x64xf8E4M3FN>, tensor<64x2x16xf32>,
        tensor<64x2x16x64xf8E4M3FN>, tensor<64x2x16xf32>
}
