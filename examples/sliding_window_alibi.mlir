// Local causal attention with ALiBi: each of 128 queries reads itself and at
// most the 32 keys before it (causal, window_left(32)), and every logit gets
// -slope[h] * (i - j), one slope per query head (for 8 heads the usual slopes
// are 2^-1, 2^-2, ..., 2^-8). Run: attn-opt examples/sliding_window_alibi.mlir
func.func @sliding_window_alibi(%q: tensor<1x8x128x32xf32>,
                                %k: tensor<1x8x128x32xf32>,
                                %v: tensor<1x8x128x32xf32>,
                                %slopes: tensor<8xf32>)
    -> tensor<1x8x128x32xf32> {
  %out = attn.attention q(%q : tensor<1x8x128x32xf32>)
      k(%k : tensor<1x8x128x32xf32>) v(%v : tensor<1x8x128x32xf32>)
      alibi(%slopes : tensor<8xf32>) causal(top_left) window_left(32)
      -> tensor<1x8x128x32xf32>
  return %out : tensor<1x8x128x32xf32>
}
