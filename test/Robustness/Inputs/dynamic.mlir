// Every size dynamic (test/Robustness/absurd-sizes.mlir,
// inconsistent-sizes.mlir).
func.func @f(%q: tensor<?x?x?x?xf32>, %k: tensor<?x?x?x?xf32>,
             %v: tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32> {
  %out = attn.attention q(%q : tensor<?x?x?x?xf32>) k(%k : tensor<?x?x?x?xf32>)
      v(%v : tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  return %out : tensor<?x?x?x?xf32>
}
