// One new token per sequence against a 300-key cache, every size static
// (Nq = 1 and B = 1 are sizes of 1, which the binding does not name): used
// by tile-map.test.
func.func @f(%q: tensor<1x4x1x16xf32>, %k: tensor<1x2x300x16xf32>,
             %v: tensor<1x2x300x16xf32>) -> tensor<1x4x1x16xf32> {
  %o = attn.attention q(%q : tensor<1x4x1x16xf32>) k(%k : tensor<1x2x300x16xf32>)
      v(%v : tensor<1x2x300x16xf32>) causal(bottom_right) -> tensor<1x4x1x16xf32>
  return %o : tensor<1x4x1x16xf32>
}
