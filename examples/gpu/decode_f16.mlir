// One decode step against a KV cache: GQA 32/8, head dim 128, f16, the
// valid length of each batch entry's cache in kv_len (the rest of the cache
// is never read: zero-filled as it is staged).
func.func @decode_f16(%q: tensor<?x32x1x128xf16>, %k: tensor<?x8x?x128xf16>,
                      %v: tensor<?x8x?x128xf16>, %kv_len: tensor<?xi32>)
    -> tensor<?x32x1x128xf16> {
  %out = attn.attention q(%q : tensor<?x32x1x128xf16>)
      k(%k : tensor<?x8x?x128xf16>) v(%v : tensor<?x8x?x128xf16>)
      kv_len(%kv_len : tensor<?xi32>) causal(bottom_right)
      -> tensor<?x32x1x128xf16>
  return %out : tensor<?x32x1x128xf16>
}
