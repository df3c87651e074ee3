// The logit soft cap of Gemma 2 / Grok, s = 30 * tanh(s / 30), written as a
// score region instead of the built-in softcap(30.0): the two compute the
// same thing (test/Execution/variants.test compares them).
//   attn-run examples/variants/tanh_softcap.mlir --verify
//   attn-run examples/variants/tanh_softcap.mlir --device=gpu-emulate --verify
func.func @tanh_softcap(%q: tensor<1x8x256x64xf32>, %k: tensor<1x2x256x64xf32>,
                        %v: tensor<1x2x256x64xf32>) -> tensor<1x8x256x64xf32> {
  %out = attn.attention q(%q : tensor<1x8x256x64xf32>)
      k(%k : tensor<1x2x256x64xf32>) v(%v : tensor<1x2x256x64xf32>)
      causal(top_left) score_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32):
        %cap = arith.constant 30.0 : f32
        %x = arith.divf %s, %cap : f32
        %t = math.tanh %x : f32
        %r = arith.mulf %t, %cap : f32
        attn.yield %r : f32
      } -> tensor<1x8x256x64xf32>
  return %out : tensor<1x8x256x64xf32>
}
