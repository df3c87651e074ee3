// region-edge-cases.test: a mask whose index arithmetic overflows (i * 2^60).
func.func @f(%q: tensor<1x1x?x16xf32>, %k: tensor<1x1x?x16xf32>,
             %v: tensor<1x1x?x16xf32>) -> tensor<1x1x?x16xf32> {
  %out = attn.attention q(%q : tensor<1x1x?x16xf32>)
      k(%k : tensor<1x1x?x16xf32>) v(%v : tensor<1x1x?x16xf32>)
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %c = arith.constant 1152921504606846976 : index
        %z = arith.constant 0 : index
        %m = arith.muli %i, %c : index
        %t = arith.cmpi sgt, %m, %z : index
        attn.yield %t : i1
      } -> tensor<1x1x?x16xf32>
  return %out : tensor<1x1x?x16xf32>
}
