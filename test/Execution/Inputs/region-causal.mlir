// Causal attention written as a mask region (variants.test compares its tile
// map with the built-in causal(top_left) of tile-map-top-left.mlir).
func.func @region_causal(%q: tensor<1x2x?x32xf32>, %k: tensor<1x2x?x32xf32>,
                         %v: tensor<1x2x?x32xf32>) -> tensor<1x2x?x32xf32> {
  %out = attn.attention q(%q : tensor<1x2x?x32xf32>)
      k(%k : tensor<1x2x?x32xf32>) v(%v : tensor<1x2x?x32xf32>)
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %t = arith.cmpi sle, %j, %i : index
        attn.yield %t : i1
      } -> tensor<1x2x?x32xf32>
  return %out : tensor<1x2x?x32xf32>
}
