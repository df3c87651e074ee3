// RUN: attn-opt %s --attn-expand-latent --split-input-file | FileCheck %s

// Latent attention's V becomes an explicit slice of k (its first Dv
// columns, the last physical dimension in both layouts); the attribute
// goes. Ops without v_from_k are left alone.

// CHECK-LABEL: func.func @bhnd
// CHECK-SAME: (%[[Q:.+]]: tensor<2x16x1x64xf32>, %[[C:.+]]: tensor<2x1x?x64xf32>)
// CHECK: %[[N:.+]] = tensor.dim %[[C]], %c2
// CHECK: %[[V:.+]] = tensor.extract_slice %[[C]][0, 0, 0, 0] [2, 1, %[[N]], 48] [1, 1, 1, 1] : tensor<2x1x?x64xf32> to tensor<2x1x?x48xf32>
// CHECK: attn.attention q(%[[Q]] : tensor<2x16x1x64xf32>) k(%[[C]] : tensor<2x1x?x64xf32>) v(%[[V]] : tensor<2x1x?x48xf32>)
// CHECK-NOT: v_from_k
// CHECK-SAME: -> tensor<2x16x1x48xf32>
func.func @bhnd(%q: tensor<2x16x1x64xf32>, %c: tensor<2x1x?x64xf32>)
    -> tensor<2x16x1x48xf32> {
  %o = attn.attention q(%q : tensor<2x16x1x64xf32>)
      k(%c : tensor<2x1x?x64xf32>) v(%c : tensor<2x1x?x64xf32>)
      v_from_k(48) -> tensor<2x16x1x48xf32>
  return %o : tensor<2x16x1x48xf32>
}

// -----

// CHECK-LABEL: func.func @bnhd_paged
// CHECK: %[[V:.+]] = tensor.extract_slice %arg1[0, 0, 0, 0] [8, 16, 1, 32] [1, 1, 1, 1] : tensor<8x16x1x64xbf16> to tensor<8x16x1x32xbf16>
// CHECK: v(%[[V]] : tensor<8x16x1x32xbf16>) page_table(
func.func @bnhd_paged(%q: tensor<2x1x8x64xbf16>, %c: tensor<8x16x1x64xbf16>,
                      %pt: tensor<2x4xi32>, %len: tensor<2xi32>)
    -> tensor<2x1x8x32xbf16> {
  %o = attn.attention q(%q : tensor<2x1x8x64xbf16>)
      k(%c : tensor<8x16x1x64xbf16>) v(%c : tensor<8x16x1x64xbf16>)
      layout(bnhd) v_from_k(32) page_table(%pt : tensor<2x4xi32>)
      kv_len(%len : tensor<2xi32>) -> tensor<2x1x8x32xbf16>
  return %o : tensor<2x1x8x32xbf16>
}

// -----

// CHECK-LABEL: func.func @plain
// CHECK-NOT: tensor.extract_slice
// CHECK: attn.attention q(%arg0 : tensor<1x2x4x8xf32>) k(%arg1 : tensor<1x2x4x8xf32>) v(%arg1 : tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
func.func @plain(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>)
    -> tensor<1x2x4x8xf32> {
  %o = attn.attention q(%q : tensor<1x2x4x8xf32>)
      k(%k : tensor<1x2x4x8xf32>) v(%k : tensor<1x2x4x8xf32>)
      -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}
