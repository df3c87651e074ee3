// One decode step against a paged KV cache (vLLM's pool order [P, S, Hkv, D],
// pages of 16 tokens): GQA 32/8, head dim 128, f16. The key-tile loader reads
// each key's row through the page table; an entry a sequence reads that lies
// outside the pool is reported through the kernel's error word. Batch, pool
// size and pages per sequence are dynamic.
//   attn-run examples/gpu/paged_decode_f16.mlir --device=gpu-emulate \
//     --size B=2,Pages=24,MaxPages=8 --verify
func.func @paged_decode_f16(%q: tensor<?x1x32x128xf16>,
                            %k: tensor<?x16x8x128xf16>,
                            %v: tensor<?x16x8x128xf16>,
                            %page_table: tensor<?x?xi32>,
                            %kv_len: tensor<?xi32>)
    -> tensor<?x1x32x128xf16> {
  %out = attn.attention q(%q : tensor<?x1x32x128xf16>)
      k(%k : tensor<?x16x8x128xf16>) v(%v : tensor<?x16x8x128xf16>)
      layout(bnhd) page_table(%page_table : tensor<?x?xi32>)
      kv_len(%kv_len : tensor<?xi32>) causal(bottom_right)
      -> tensor<?x1x32x128xf16>
  return %out : tensor<?x1x32x128xf16>
}
