// The largest sizes the verifier accepts on these shapes: q has
// 4 * 2^60 = 2^62 bytes and 4 * B * Hq * Nq * Nk = 2^62 (docs/Robustness.md).
func.func @largest(%q: tensor<1x1x1073741824x1073741824xf32>,
                   %k: tensor<1x1x1073741824x1073741824xf32>,
                   %kv_len: tensor<1xi64>)
    -> (tensor<1x1x1073741824x1073741824xf32>, tensor<1x1x1073741824xf32>) {
  %o, %l = attn.attention q(%q : tensor<1x1x1073741824x1073741824xf32>)
      k(%k : tensor<1x1x1073741824x1073741824xf32>)
      v(%k : tensor<1x1x1073741824x1073741824xf32>)
      kv_len(%kv_len : tensor<1xi64>) causal(bottom_right)
      window_left(9223372036854775807)
      -> tensor<1x1x1073741824x1073741824xf32>, tensor<1x1x1073741824xf32>
  return %o, %l : tensor<1x1x1073741824x1073741824xf32>, tensor<1x1x1073741824xf32>
}
