// A function whose name would clash with the library's own symbols
// (test/Compile/errors.mlir).
func.func @kernels(%q: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  return %q : tensor<1x2x4x8xf32>
}
