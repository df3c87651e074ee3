// region-edge-cases.test: a mask reading a 2-D table over a box too large to scan.
func.func @f(%q: tensor<1x1x?x16xf32>, %k: tensor<1x1x?x16xf32>,
             %v: tensor<1x1x?x16xf32>, %t: tensor<?x?xi32>) -> tensor<1x1x?x16xf32> {
  %out = attn.attention q(%q : tensor<1x1x?x16xf32>)
      k(%k : tensor<1x1x?x16xf32>) v(%v : tensor<1x1x?x16xf32>)
      mod_inputs(%t : tensor<?x?xi32>)
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %d: tensor<?x?xi32>):
        %x = tensor.extract %d[%i, %j] : tensor<?x?xi32>
        %xe = arith.extsi %x : i32 to i64
        %c = arith.constant 1099511627776 : i64
        %ok = arith.cmpi slt, %xe, %c : i64
        attn.yield %ok : i1
      } -> tensor<1x1x?x16xf32>
  return %out : tensor<1x1x?x16xf32>
}
