// GQA 4/2, head dim 128, causal, f16: the GPU kernel's staged K/V tiles need
// more than the default 48 KiB of shared memory.
func.func @gqa_d128(%q: tensor<2x4x64x128xf16>, %k: tensor<2x2x64x128xf16>,
                    %v: tensor<2x2x64x128xf16>) -> tensor<2x4x64x128xf16> {
  %out = attn.attention q(%q : tensor<2x4x64x128xf16>)
      k(%k : tensor<2x2x64x128xf16>) v(%v : tensor<2x2x64x128xf16>)
      causal(top_left) -> tensor<2x4x64x128xf16>
  return %out : tensor<2x4x64x128xf16>
}
