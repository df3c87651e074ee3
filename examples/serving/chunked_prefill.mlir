// Chunked prefill over a paged KV cache (vLLM's and FlashAttention's
// varlen + block table): the new tokens of 4 sequences, packed along N
// (`cu_q` has 5 offsets), attend to their cached pages, the new tokens'
// K and V already appended. Sequence b reads the first kv_len[b] tokens
// of its pages through row b of the page table, causal on its own
// bottom-right diagonal: its query i sits at position i + kv_len[b] - Nq_b.
// 8 query heads over 2 K/V heads (GQA), D = 64, bf16, pages of 16 tokens,
// a pool of 64 pages, up to 16 pages (256 tokens) per sequence; returns the
// log-sum-exp too (to merge with other chunks through attn.combine).
func.func @chunked_prefill(%q: tensor<1x8x?x64xbf16>,
                           %kp: tensor<64x2x16x64xbf16>,
                           %vp: tensor<64x2x16x64xbf16>,
                           %cu_q: tensor<5xi32>, %pt: tensor<4x16xi32>,
                           %len: tensor<4xi32>)
    -> (tensor<1x8x?x64xbf16>, tensor<1x8x?xf32>) {
  %out, %lse = attn.attention q(%q : tensor<1x8x?x64xbf16>)
      k(%kp : tensor<64x2x16x64xbf16>) v(%vp : tensor<64x2x16x64xbf16>)
      ragged(%cu_q : tensor<5xi32>) page_table(%pt : tensor<4x16xi32>)
      kv_len(%len : tensor<4xi32>) causal(bottom_right)
      -> tensor<1x8x?x64xbf16>, tensor<1x8x?xf32>
  return %out, %lse : tensor<1x8x?x64xbf16>, tensor<1x8x?xf32>
}
