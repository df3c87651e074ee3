// An entry function with an argument attn-run cannot pass
// (test/Robustness/unsupported-types.mlir).
func.func @f(%q: tensor<1x1x2x2xf32>, %k: tensor<1x1x2x2xf32>,
             %v: tensor<1x1x2x2xf32>, %c: tensor<2xcomplex<f32>>)
    -> tensor<1x1x2x2xf32> {
  %0 = attn.attention q(%q : tensor<1x1x2x2xf32>) k(%k : tensor<1x1x2x2xf32>)
      v(%v : tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}
