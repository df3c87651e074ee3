// Dilated sliding window: query i reads the keys i, i - 2, i - 4, ... back to
// i - 64 (every second key of a causal window of 64). Tiles outside the band
// are skipped from their bounds; tiles inside it are partial (the dilation
// masks every other key), evaluated per element.
//   attn-run examples/variants/dilated_window.mlir --verify --tile-map
//   attn-run examples/variants/dilated_window.mlir --device=gpu-emulate --verify
func.func @dilated_window(%q: tensor<1x4x512x64xf32>, %k: tensor<1x4x512x64xf32>,
                          %v: tensor<1x4x512x64xf32>) -> tensor<1x4x512x64xf32> {
  %out = attn.attention q(%q : tensor<1x4x512x64xf32>)
      k(%k : tensor<1x4x512x64xf32>) v(%v : tensor<1x4x512x64xf32>)
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %c0 = arith.constant 0 : index
        %c2 = arith.constant 2 : index
        %c64 = arith.constant 64 : index
        %d = arith.subi %i, %j : index
        %after = arith.cmpi sge, %d, %c0 : index
        %near = arith.cmpi sle, %d, %c64 : index
        %r = arith.remsi %d, %c2 : index
        %even = arith.cmpi eq, %r, %c0 : index
        %band = arith.andi %after, %near : i1
        %ok = arith.andi %band, %even : i1
        attn.yield %ok : i1
      } -> tensor<1x4x512x64xf32>
  return %out : tensor<1x4x512x64xf32>
}
