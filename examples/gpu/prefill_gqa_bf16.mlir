// Causal prefill, GQA 64/8 query/K-V heads, head dim 128, bf16: the GPU
// benchmark's main shape (any batch and sequence length).
//   attn-compile examples/gpu/prefill_gqa_bf16.mlir --gpu-chip=sm_90a \
//     --emit=shared -o libprefill.so
func.func @prefill_gqa_bf16(%q: tensor<?x64x?x128xbf16>,
                            %k: tensor<?x8x?x128xbf16>,
                            %v: tensor<?x8x?x128xbf16>)
    -> (tensor<?x64x?x128xbf16>, tensor<?x64x?xf32>) {
  %out, %lse = attn.attention q(%q : tensor<?x64x?x128xbf16>)
      k(%k : tensor<?x8x?x128xbf16>) v(%v : tensor<?x8x?x128xbf16>)
      causal(bottom_right)
      -> tensor<?x64x?x128xbf16>, tensor<?x64x?xf32>
  return %out, %lse : tensor<?x64x?x128xbf16>, tensor<?x64x?xf32>
}
