func.func @gqa_causal(%q: tensor<2x8x37x64xf16>, %k: tensor<2x2x37x64xf16>,
                      %v: tensor<2x2x37x64xf16>)
    -> (tensor<2x8x37x64xf16>, tensor<2x8x37xf32>) {
  %out, %lse = attn.attention q(%q : tensor<2x8x37x64xf16>)
      k(%k : tensor<2x2x37x64xf16>) v(%v : tensor<2x2x37x64xf16>)
      causal(top_left) -> tensor<2x8x37x64xf16>, tensor<2x8x37xf32>
  return %out, %lse : tensor<2x8x37x64xf16>, tensor<2x8x37xf32>
}
