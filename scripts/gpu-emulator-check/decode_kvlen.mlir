func.func @decode_kvlen(%q: tensor<2x8x1x128xf16>, %k: tensor<2x2x256x128xf16>,
                  %v: tensor<2x2x256x128xf16>, %kv_len: tensor<2xi32>)
    -> (tensor<2x8x1x128xf16>, tensor<2x8x1xf32>) {
  %out, %lse = attn.attention q(%q : tensor<2x8x1x128xf16>)
      k(%k : tensor<2x2x256x128xf16>) v(%v : tensor<2x2x256x128xf16>)
      kv_len(%kv_len : tensor<2xi32>) causal(bottom_right)
      -> tensor<2x8x1x128xf16>, tensor<2x8x1xf32>
  return %out, %lse : tensor<2x8x1x128xf16>, tensor<2x8x1xf32>
}
