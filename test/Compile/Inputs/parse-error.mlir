// A spec that does not parse (test/Compile/errors.mlir).
func.func @broken(%q: tensor<1x2x4x8xf32>) {
  %x = attn.attention q(
}
