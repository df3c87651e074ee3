func.func @softcap_bias(%q: tensor<1x4x64x128xf16>, %k: tensor<1x4x64x128xf16>,
                        %v: tensor<1x4x64x128xf16>,
                        %bias: tensor<1x4x64x64xf32>) -> (tensor<1x4x64x128xf16>, tensor<1x4x64xf32>) {
  %out, %lse = attn.attention q(%q : tensor<1x4x64x128xf16>)
      k(%k : tensor<1x4x64x128xf16>) v(%v : tensor<1x4x64x128xf16>)
      bias(%bias : tensor<1x4x64x64xf32>) softcap(30.0)
      -> tensor<1x4x64x128xf16>, tensor<1x4x64xf32>
  return %out, %lse : tensor<1x4x64x128xf16>, tensor<1x4x64xf32>
}
