// Shared-prefix (cascade) decode, a documented pattern of ops (FlashInfer's
// cascade attention): 64 sequences decode one token each; all of them
// share an 8192-token prefix (a system prompt; one copy of its K and V),
// and each has its own suffix of up to 272 tokens in a paged cache.
// Attention over the union of the prefix and a suffix is two attentions
// merged through their log-sum-exp (attn.combine, exact):
//   1. the 64 sequences' queries against the prefix at once: the batch
//      folded into the query rows (q [64, 1, Hq, D] reshaped to
//      [1, 64, Hq, D] in the bnhd layout, no copy), so every prefix K/V
//      tile is read once for 64 x 4 query rows instead of once per
//      sequence: a GEMM-shaped problem instead of 64 bandwidth-bound
//      decodes;
//   2. each sequence's own suffix through its page table (decode);
//   3. attn.combine of the two (out, lse) pairs.
// The prefix needs no mask: it precedes every query. 32 query heads over 8
// K/V heads (GQA), D = 128, bf16, pages of 16 tokens. CPU forms only: the
// GPU lowering takes one attention per function (docs/Status.md).
func.func @shared_prefix_decode(
    %q: tensor<64x1x32x128xbf16>, %kp: tensor<1x8192x8x128xbf16>,
    %vp: tensor<1x8192x8x128xbf16>, %ks: tensor<1088x16x8x128xbf16>,
    %vs: tensor<1088x16x8x128xbf16>, %pt: tensor<64x17xi32>,
    %len: tensor<64xi32>)
    -> (tensor<64x1x32x128xbf16>, tensor<64x32x1xf32>) {
  // 1. The prefix, for every sequence's query at once.
  %q2 = tensor.collapse_shape %q [[0, 1], [2], [3]]
      : tensor<64x1x32x128xbf16> into tensor<64x32x128xbf16>
  %qp = tensor.expand_shape %q2 [[0, 1], [2], [3]]
      output_shape [1, 64, 32, 128]
      : tensor<64x32x128xbf16> into tensor<1x64x32x128xbf16>
  %op, %lp = attn.attention q(%qp : tensor<1x64x32x128xbf16>)
      k(%kp : tensor<1x8192x8x128xbf16>) v(%vp : tensor<1x8192x8x128xbf16>)
      layout(bnhd) -> tensor<1x64x32x128xbf16>, tensor<1x32x64xf32>
  // Back to one row per sequence: out is a reshape, lse [1, Hq, 64] a
  // transpose to [64, Hq, 1].
  %op2 = tensor.collapse_shape %op [[0, 1], [2], [3]]
      : tensor<1x64x32x128xbf16> into tensor<64x32x128xbf16>
  %op3 = tensor.expand_shape %op2 [[0, 1], [2], [3]]
      output_shape [64, 1, 32, 128]
      : tensor<64x32x128xbf16> into tensor<64x1x32x128xbf16>
  %lp2 = tensor.collapse_shape %lp [[0, 1], [2]]
      : tensor<1x32x64xf32> into tensor<32x64xf32>
  %init = tensor.empty() : tensor<64x32xf32>
  %lpt = linalg.transpose ins(%lp2 : tensor<32x64xf32>)
      outs(%init : tensor<64x32xf32>) permutation = [1, 0]
  %lp3 = tensor.expand_shape %lpt [[0], [1, 2]] output_shape [64, 32, 1]
      : tensor<64x32xf32> into tensor<64x32x1xf32>
  // 2. Each sequence's suffix (kv_len[b] tokens, the new one included).
  %os, %ls = attn.attention q(%q : tensor<64x1x32x128xbf16>)
      k(%ks : tensor<1088x16x8x128xbf16>) v(%vs : tensor<1088x16x8x128xbf16>)
      layout(bnhd) page_table(%pt : tensor<64x17xi32>)
      kv_len(%len : tensor<64xi32>)
      -> tensor<64x1x32x128xbf16>, tensor<64x32x1xf32>
  // 3. The exact merge.
  %o, %l = attn.combine
      a(%op3, %lp3 : tensor<64x1x32x128xbf16>, tensor<64x32x1xf32>)
      b(%os, %ls : tensor<64x1x32x128xbf16>, tensor<64x32x1xf32>)
      layout(bnhd) -> tensor<64x1x32x128xbf16>, tensor<64x32x1xf32>
  return %o, %l : tensor<64x1x32x128xbf16>, tensor<64x32x1xf32>
}
