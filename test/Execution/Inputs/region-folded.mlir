// region-edge-cases.test: a mask region that canonicalization folds.
func.func @f(%q: tensor<1x1x?x16xf32>, %k: tensor<1x1x?x16xf32>,
             %v: tensor<1x1x?x16xf32>) -> tensor<1x1x?x16xf32> {
  %out = attn.attention q(%q : tensor<1x1x?x16xf32>)
      k(%k : tensor<1x1x?x16xf32>) v(%v : tensor<1x1x?x16xf32>)
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %c = arith.cmpi sge, %b, %b : index
        %m = arith.select %c, %i, %i : index
        %t = arith.cmpi sle, %j, %m : index
        attn.yield %t : i1
      } -> tensor<1x1x?x16xf32>
  return %out : tensor<1x1x?x16xf32>
}
