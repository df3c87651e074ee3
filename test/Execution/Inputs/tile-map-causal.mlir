// Causal GQA with dynamic lengths and a per-batch kv_len, bottom-right
// aligned, with a sliding window: used by tile-map.test.
func.func @f(%q: tensor<2x4x?x32xf32>, %k: tensor<2x2x?x32xf32>,
             %v: tensor<2x2x?x32xf32>, %l: tensor<2xi32>)
    -> tensor<2x4x?x32xf32> {
  %o = attn.attention q(%q : tensor<2x4x?x32xf32>) k(%k : tensor<2x2x?x32xf32>)
      v(%v : tensor<2x2x?x32xf32>) kv_len(%l : tensor<2xi32>)
      causal(bottom_right) window_left(100) -> tensor<2x4x?x32xf32>
  return %o : tensor<2x4x?x32xf32>
}
