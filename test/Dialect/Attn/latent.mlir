// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s

// Round trip of latent attention: v_from_k(Dv) reads V as the first Dv
// columns of k (v is k), anywhere among the modifiers.

// CHECK-LABEL: func.func @mla
// CHECK: attn.attention q(%{{.+}} : tensor<1x128x?x576xbf16>) k(%[[C:.+]] : tensor<1x1x?x576xbf16>) v(%[[C]] : tensor<1x1x?x576xbf16>) v_from_k(512) causal(bottom_right) scale(6.250000e-02) -> tensor<1x128x?x512xbf16>
func.func @mla(%q: tensor<1x128x?x576xbf16>, %c: tensor<1x1x?x576xbf16>)
    -> tensor<1x128x?x512xbf16> {
  %o = attn.attention q(%q : tensor<1x128x?x576xbf16>)
      k(%c : tensor<1x1x?x576xbf16>) v(%c : tensor<1x1x?x576xbf16>)
      causal(bottom_right) scale(0.0625) v_from_k(512)
      -> tensor<1x128x?x512xbf16>
  return %o : tensor<1x128x?x512xbf16>
}

// Over a paged latent cache, bnhd.
// CHECK-LABEL: func.func @paged
// CHECK: page_table(%{{.+}} : tensor<4x8xi32>) layout(bnhd) v_from_k(48) kv_len(%{{.+}} : tensor<4xi32>)
func.func @paged(%q: tensor<4x1x16x64xf16>, %c: tensor<32x16x1x64xf16>,
                 %pt: tensor<4x8xi32>, %len: tensor<4xi32>)
    -> tensor<4x1x16x48xf16> {
  %o = attn.attention q(%q : tensor<4x1x16x64xf16>)
      k(%c : tensor<32x16x1x64xf16>) v(%c : tensor<32x16x1x64xf16>)
      layout(bnhd) v_from_k(48) page_table(%pt : tensor<4x8xi32>)
      kv_len(%len : tensor<4xi32>) -> tensor<4x1x16x48xf16>
  return %o : tensor<4x1x16x48xf16>
}
