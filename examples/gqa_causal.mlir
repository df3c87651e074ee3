// The seed's grouped-query example: H = 8 query heads share G = 2 K/V heads
// (R = 4, so query heads 0-3 read K/V head 0 and heads 4-7 read K/V head 1),
// B = 2, T = 5 tokens, head dimension 64, causal with the diagonal at the top
// left (query i reads keys j <= i), scale 1/sqrt(64). Also returns the row
// log-sum-exp. Run: attn-opt examples/gqa_causal.mlir
func.func @gqa_causal(%q: tensor<2x8x5x64xf32>, %k: tensor<2x2x5x64xf32>,
                      %v: tensor<2x2x5x64xf32>)
    -> (tensor<2x8x5x64xf32>, tensor<2x8x5xf32>) {
  %out, %lse = attn.attention q(%q : tensor<2x8x5x64xf32>)
      k(%k : tensor<2x2x5x64xf32>) v(%v : tensor<2x2x5x64xf32>)
      causal(top_left) -> tensor<2x8x5x64xf32>, tensor<2x8x5xf32>
  return %out, %lse : tensor<2x8x5x64xf32>, tensor<2x8x5xf32>
}
