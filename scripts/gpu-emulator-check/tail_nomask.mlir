func.func @tail_nomask(%q: tensor<1x2x64x64xf16>, %k: tensor<1x2x100x64xf16>,
                   %v: tensor<1x2x100x64xf16>) -> (tensor<1x2x64x64xf16>, tensor<1x2x64xf32>) {
  %out, %lse = attn.attention q(%q : tensor<1x2x64x64xf16>)
      k(%k : tensor<1x2x100x64xf16>) v(%v : tensor<1x2x100x64xf16>)
      -> tensor<1x2x64x64xf16>, tensor<1x2x64xf32>
  return %out, %lse : tensor<1x2x64x64xf16>, tensor<1x2x64xf32>
}
