// bf16 GQA prefill for the AArch64 test: 8 query heads over 2 K/V heads,
// 70 queries against 90 keys (neither a multiple of a tile), Dqk 64, Dv 32,
// bottom-right causal with a window of 24 keys, and the row log-sum-exp.
func.func @bf16_window(%q: tensor<1x8x70x64xbf16>, %k: tensor<1x2x90x64xbf16>,
                       %v: tensor<1x2x90x32xbf16>)
    -> (tensor<1x8x70x32xbf16>, tensor<1x8x70xf32>) {
  %o, %lse = attn.attention q(%q : tensor<1x8x70x64xbf16>)
      k(%k : tensor<1x2x90x64xbf16>) v(%v : tensor<1x2x90x32xbf16>)
      causal(bottom_right) window_left(24)
      -> tensor<1x8x70x32xbf16>, tensor<1x8x70xf32>
  return %o, %lse : tensor<1x8x70x32xbf16>, tensor<1x8x70xf32>
}
