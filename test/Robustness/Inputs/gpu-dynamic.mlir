// A GPU spec whose head counts are dynamic: the host code checks that the
// query heads are a multiple of the K/V heads (no-abort.test).
func.func @gpu_dynamic(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>,
                       %v: tensor<?x?x?x64xf16>) -> tensor<?x?x?x64xf16> {
  %o = attn.attention q(%q : tensor<?x?x?x64xf16>)
      k(%k : tensor<?x?x?x64xf16>) v(%v : tensor<?x?x?x64xf16>)
      causal(bottom_right) -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}
