// GQA 4/2, head dim 64, causal, f16: the GPU kernel needs little shared
// memory.
func.func @gqa_small(%q: tensor<2x4x64x64xf16>, %k: tensor<2x2x64x64xf16>,
                     %v: tensor<2x2x64x64xf16>) -> tensor<2x4x64x64xf16> {
  %out = attn.attention q(%q : tensor<2x4x64x64xf16>)
      k(%k : tensor<2x2x64x64xf16>) v(%v : tensor<2x2x64x64xf16>)
      causal(top_left) -> tensor<2x4x64x64xf16>
  return %out : tensor<2x4x64x64xf16>
}
