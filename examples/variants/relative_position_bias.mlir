// Relative position bias (T5 style, clipped): every logit gets a learned
// per-head bias indexed by the clipped distance j - i, read from a table of
// 2 * 32 + 1 entries per head. No [B, H, N, N] bias tensor is materialized.
//   attn-run examples/variants/relative_position_bias.mlir --verify
// The same region in the GPU kernel, run on the warp-level emulator:
//   attn-run examples/variants/relative_position_bias.mlir \
//     --device=gpu-emulate --verify
func.func @relative_position_bias(%q: tensor<1x4x256x64xf32>,
                                  %k: tensor<1x4x256x64xf32>,
                                  %v: tensor<1x4x256x64xf32>,
                                  %table: tensor<4x65xf32>)
    -> tensor<1x4x256x64xf32> {
  %out = attn.attention q(%q : tensor<1x4x256x64xf32>)
      k(%k : tensor<1x4x256x64xf32>) v(%v : tensor<1x4x256x64xf32>)
      causal(top_left) mod_inputs(%table : tensor<4x65xf32>)
      score_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32,
           %t: tensor<4x65xf32>):
        %c32 = arith.constant 32 : index
        %c0 = arith.constant 0 : index
        %c64 = arith.constant 64 : index
        %rel = arith.subi %j, %i : index
        %shifted = arith.addi %rel, %c32 : index
        %lo = arith.maxsi %shifted, %c0 : index
        %idx = arith.minsi %lo, %c64 : index
        %bias = tensor.extract %t[%h, %idx] : tensor<4x65xf32>
        %r = arith.addf %s, %bias : f32
        attn.yield %r : f32
      } -> tensor<1x4x256x64xf32>
  return %out : tensor<1x4x256x64xf32>
}
