func.func @window_alibi_bf16(%q: tensor<1x8x128x32xbf16>,
                             %k: tensor<1x8x128x32xbf16>,
                             %v: tensor<1x8x128x32xbf16>,
                             %slopes: tensor<8xf32>) -> (tensor<1x8x128x32xbf16>, tensor<1x8x128xf32>) {
  %out, %lse = attn.attention q(%q : tensor<1x8x128x32xbf16>)
      k(%k : tensor<1x8x128x32xbf16>) v(%v : tensor<1x8x128x32xbf16>)
      alibi(%slopes : tensor<8xf32>) causal(top_left) window_left(32)
      -> tensor<1x8x128x32xbf16>, tensor<1x8x128xf32>
  return %out, %lse : tensor<1x8x128x32xbf16>, tensor<1x8x128xf32>
}
