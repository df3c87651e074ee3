// A ragged prefill batch (FlashAttention's varlen API): the sequences' tokens
// packed along N, their starts in cu_seqlens_q / cu_seqlens_k, GQA 32/8,
// head dim 128, bf16, causal on each sequence's bottom-right diagonal
// (chunked prefill: new queries after cached keys). One launch covers every
// (sequence, row tile) pair; offsets that decrease or leave the packed tokens
// are reported through the kernel's error word.
//   attn-run examples/gpu/ragged_prefill_bf16.mlir --device=gpu-emulate \
//     --size Seqs=3,Nq=200,Nk=300 --verify
func.func @ragged_prefill_bf16(%q: tensor<1x32x?x128xbf16>,
                               %k: tensor<1x8x?x128xbf16>,
                               %v: tensor<1x8x?x128xbf16>,
                               %cu_seqlens_q: tensor<?xi32>,
                               %cu_seqlens_k: tensor<?xi32>)
    -> tensor<1x32x?x128xbf16> {
  %out = attn.attention q(%q : tensor<1x32x?x128xbf16>)
      k(%k : tensor<1x8x?x128xbf16>) v(%v : tensor<1x8x?x128xbf16>)
      ragged(%cu_seqlens_q, %cu_seqlens_k : tensor<?xi32>, tensor<?xi32>)
      causal(bottom_right) -> tensor<1x32x?x128xbf16>
  return %out : tensor<1x32x?x128xbf16>
}
