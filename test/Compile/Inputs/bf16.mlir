// bf16 causal self-attention for test/Compile/bf16-conversions.c, compiled
// for a CPU without a bf16 conversion instruction (Haswell), where LLVM
// rounds f32 to bf16 by calling __truncsfbf2.
func.func @bf16_small(%q: tensor<1x2x8x32xbf16>, %k: tensor<1x2x8x32xbf16>,
                      %v: tensor<1x2x8x32xbf16>) -> tensor<1x2x8x32xbf16> {
  %out = attn.attention q(%q : tensor<1x2x8x32xbf16>)
      k(%k : tensor<1x2x8x32xbf16>) v(%v : tensor<1x2x8x32xbf16>)
      causal(top_left) -> tensor<1x2x8x32xbf16>
  return %out : tensor<1x2x8x32xbf16>
}
