// attn-compile flags: --gpu-wgmma
// S = Q K^T on wgmma (sm_90a): the swizzled Q/K tiles, the descriptors and
// the accumulator layout as the emulator reads them, against silicon. GQA
// 8/2, head dim 128, tails of the row and key tiles, causal bottom-right.
func.func @prefill_wgmma(%q: tensor<2x8x100x128xbf16>,
                         %k: tensor<2x2x130x128xbf16>,
                         %v: tensor<2x2x130x128xbf16>)
    -> (tensor<2x8x100x128xbf16>, tensor<2x8x100xf32>) {
  %out, %lse = attn.attention q(%q : tensor<2x8x100x128xbf16>)
      k(%k : tensor<2x2x130x128xbf16>) v(%v : tensor<2x2x130x128xbf16>)
      causal(bottom_right)
      -> tensor<2x8x100x128xbf16>, tensor<2x8x100xf32>
  return %out, %lse : tensor<2x8x100x128xbf16>, tensor<2x8x100xf32>
}
