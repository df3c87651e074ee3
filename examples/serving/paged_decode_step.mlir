// One decode step over a paged KV cache (vLLM-style page pools and page
// table), as one kernel: append the new token's K and V through the page
// table at position kv_len[b], then attend with kv_len + 1, bottom-right
// causal. 4 sequences, 8 query heads over 2 K/V heads (GQA), D = 64, pages
// of 16 tokens, a pool of 64 pages, up to 16 pages (256 tokens) per
// sequence. The caller owns the page table: it hands a sequence a free page
// whenever its length reaches a page boundary (decode_loop.cpp does, and
// checks every step against the f64 reference).
func.func @step(%q: tensor<4x8x1x64xf32>, %kn: tensor<4x2x1x64xf32>,
                %vn: tensor<4x2x1x64xf32>, %kp: tensor<64x2x16x64xf32>,
                %vp: tensor<64x2x16x64xf32>, %pt: tensor<4x16xi32>,
                %len: tensor<4xi32>)
    -> (tensor<4x8x1x64xf32>, tensor<64x2x16x64xf32>, tensor<64x2x16x64xf32>) {
  %kp2 = attn.kv_cache_append cache(%kp : tensor<64x2x16x64xf32>)
      update(%kn : tensor<4x2x1x64xf32>) at(%len : tensor<4xi32>)
      page_table(%pt : tensor<4x16xi32>) -> tensor<64x2x16x64xf32>
  %vp2 = attn.kv_cache_append cache(%vp : tensor<64x2x16x64xf32>)
      update(%vn : tensor<4x2x1x64xf32>) at(%len : tensor<4xi32>)
      page_table(%pt : tensor<4x16xi32>) -> tensor<64x2x16x64xf32>
  %one = arith.constant dense<1> : tensor<4xi32>
  %len2 = arith.addi %len, %one : tensor<4xi32>
  %out = attn.attention q(%q : tensor<4x8x1x64xf32>)
      k(%kp2 : tensor<64x2x16x64xf32>) v(%vp2 : tensor<64x2x16x64xf32>)
      page_table(%pt : tensor<4x16xi32>) kv_len(%len2 : tensor<4xi32>)
      causal(bottom_right) -> tensor<4x8x1x64xf32>
  return %out, %kp2, %vp2
      : tensor<4x8x1x64xf32>, tensor<64x2x16x64xf32>, tensor<64x2x16x64xf32>
}
