// Every logit modifier the GPU form takes at once: scale, soft cap, bias,
// ALiBi, a boolean mask, a sliding window and kv_len, in the BNHD layout.
func.func @modifiers_f16(%q: tensor<2x100x4x64xf16>, %k: tensor<2x300x2x64xf16>,
                         %v: tensor<2x300x2x64xf16>, %kv_len: tensor<2xi64>,
                         %mask: tensor<1x1x100x300xi1>,
                         %bias: tensor<2x4x100x300xf32>,
                         %slopes: tensor<4xf32>)
    -> (tensor<2x100x4x64xf16>, tensor<2x4x100xf32>) {
  %out, %lse = attn.attention q(%q : tensor<2x100x4x64xf16>)
      k(%k : tensor<2x300x2x64xf16>) v(%v : tensor<2x300x2x64xf16>)
      layout(bnhd) kv_len(%kv_len : tensor<2xi64>)
      mask(%mask : tensor<1x1x100x300xi1>) bias(%bias : tensor<2x4x100x300xf32>)
      alibi(%slopes : tensor<4xf32>) causal(bottom_right) window_left(96)
      scale(0.1) softcap(20.0)
      -> tensor<2x100x4x64xf16>, tensor<2x4x100xf32>
  return %out, %lse : tensor<2x100x4x64xf16>, tensor<2x4x100xf32>
}
