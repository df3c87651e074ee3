// Plain causal self-attention with a dynamic length: used by tile-map.test.
func.func @f(%q: tensor<1x2x?x16xf32>, %k: tensor<1x2x?x16xf32>,
             %v: tensor<1x2x?x16xf32>) -> tensor<1x2x?x16xf32> {
  %o = attn.attention q(%q : tensor<1x2x?x16xf32>) k(%k : tensor<1x2x?x16xf32>)
      v(%v : tensor<1x2x?x16xf32>) causal(top_left) -> tensor<1x2x?x16xf32>
  return %o : tensor<1x2x?x16xf32>
}
