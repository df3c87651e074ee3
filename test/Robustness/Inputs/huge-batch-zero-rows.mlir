// B = INT64_MAX with Nq = Nk = 0: every tensor is empty, so the op is valid,
// but B x Hkv x (query tiles) overflows: the tile-size choice of the fused
// form saturates instead (attn-fuzz-builder,
// fuzz/regressions/builder/huge-batch-zero-rows-tile-choice).
func.func @huge_batch(%q: tensor<9223372036854775807x4x0x8xf32>,
                      %k: tensor<9223372036854775807x4x0x8xf32>)
    -> tensor<9223372036854775807x4x0x8xf32> {
  %0 = attn.attention q(%q : tensor<9223372036854775807x4x0x8xf32>)
      k(%k : tensor<9223372036854775807x4x0x8xf32>)
      v(%k : tensor<9223372036854775807x4x0x8xf32>)
      -> tensor<9223372036854775807x4x0x8xf32>
  return %0 : tensor<9223372036854775807x4x0x8xf32>
}
