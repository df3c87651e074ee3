// Prefix-LM: the first P tokens (the prompt) attend to each other in both
// directions, the rest causally: key j is readable from query i when
// j < P or j <= i. The mask compares affine expressions of i and j, so
// every tile is classified (skipped, full or partial) from its bounds alone.
//   attn-run examples/variants/prefix_lm.mlir --verify --tile-map
// The same region in the GPU kernel (tiles skipped and full ones alike),
// run on the warp-level emulator:
//   attn-run examples/variants/prefix_lm.mlir --device=gpu-emulate --verify
func.func @prefix_lm(%q: tensor<2x4x512x64xf32>, %k: tensor<2x4x512x64xf32>,
                     %v: tensor<2x4x512x64xf32>) -> tensor<2x4x512x64xf32> {
  %out = attn.attention q(%q : tensor<2x4x512x64xf32>)
      k(%k : tensor<2x4x512x64xf32>) v(%v : tensor<2x4x512x64xf32>)
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %prefix = arith.constant 160 : index
        %in_prefix = arith.cmpi slt, %j, %prefix : index
        %past = arith.cmpi sle, %j, %i : index
        %ok = arith.ori %in_prefix, %past : i1
        attn.yield %ok : i1
      } -> tensor<2x4x512x64xf32>
  return %out : tensor<2x4x512x64xf32>
}
