// Causal self-attention from token representations, the seed's whole
// pipeline: X [B, N, D] -> Q/K/V projections -> split into heads -> attention
// -> merge heads -> W_O. D = 64, 4 query heads share 2 K/V heads, head
// dimension 16, so Wq is [64, 4*16], Wk and Wv are [64, 2*16], Wo is
// [4*16, 64]. Run `attn-opt --attn-expand-projections` on it to see the
// matmuls, the reshapes and the core attn.attention in layout(bnhd).
func.func @projected_self_attention(%x: tensor<2x16x64xf32>,
                                    %wq: tensor<64x64xf32>,
                                    %wk: tensor<64x32xf32>,
                                    %wv: tensor<64x32xf32>,
                                    %wo: tensor<64x64xf32>)
    -> tensor<2x16x64xf32> {
  %y = attn.projected_attention x(%x : tensor<2x16x64xf32>)
      wq(%wq : tensor<64x64xf32>) wk(%wk : tensor<64x32xf32>)
      wv(%wv : tensor<64x32xf32>) wo(%wo : tensor<64x64xf32>)
      heads(4, 2) causal(top_left) -> tensor<2x16x64xf32>
  return %y : tensor<2x16x64xf32>
}
