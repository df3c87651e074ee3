// attn-compile flags: --gpu-wgmma
// The split-KV decode kernels with S = Q K^T on wgmma (sm_90a), kv_len per
// sequence, head dim 64.
func.func @decode_wgmma(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x300x64xf16>,
                        %v: tensor<2x2x300x64xf16>, %kv_len: tensor<2xi32>)
    -> (tensor<2x8x1x64xf16>, tensor<2x8x1xf32>) {
  %out, %lse = attn.attention q(%q : tensor<2x8x1x64xf16>)
      k(%k : tensor<2x2x300x64xf16>) v(%v : tensor<2x2x300x64xf16>)
      kv_len(%kv_len : tensor<2xi32>) causal(bottom_right)
      -> tensor<2x8x1x64xf16>, tensor<2x8x1xf32>
  return %out, %lse : tensor<2x8x1x64xf16>, tensor<2x8x1xf32>
}
