// A small causal self-attention for test/Compile/two-prefixes.c and the
// attn-compile lit tests.
func.func @small(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>,
                 %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %out = attn.attention q(%q : tensor<1x2x4x8xf32>)
      k(%k : tensor<1x2x4x8xf32>) v(%v : tensor<1x2x4x8xf32>)
      causal(top_left) -> tensor<1x2x4x8xf32>
  return %out : tensor<1x2x4x8xf32>
}
