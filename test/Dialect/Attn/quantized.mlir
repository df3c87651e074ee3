// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s

// Round trip of quantized K/V caches: i8, f8E4M3FN or f8E5M2 k and v with
// f32 scales per token and head or per page (batch entry) and head,
// k_scale / v_scale anywhere among the modifiers (printed after ragged).

// CHECK-LABEL: func.func @int8_dense
// CHECK: k(%{{.+}} : tensor<2x2x?x64xi8>) v(%{{.+}} : tensor<2x2x?x64xi8>) k_scale(%{{.+}} : tensor<2x2x?xf32>) v_scale(%{{.+}} : tensor<2x2xf32>) kv_len(%{{.+}} : tensor<2xi32>) causal(bottom_right) -> tensor<2x8x1x64xf32>
func.func @int8_dense(%q: tensor<2x8x1x64xf32>, %k: tensor<2x2x?x64xi8>,
                      %v: tensor<2x2x?x64xi8>, %ks: tensor<2x2x?xf32>,
                      %vs: tensor<2x2xf32>, %len: tensor<2xi32>)
    -> tensor<2x8x1x64xf32> {
  %o = attn.attention q(%q : tensor<2x8x1x64xf32>) k(%k : tensor<2x2x?x64xi8>)
      v(%v : tensor<2x2x?x64xi8>) v_scale(%vs : tensor<2x2xf32>)
      kv_len(%len : tensor<2xi32>) causal(bottom_right)
      k_scale(%ks : tensor<2x2x?xf32>) -> tensor<2x8x1x64xf32>
  return %o : tensor<2x8x1x64xf32>
}

// CHECK-LABEL: func.func @fp8_paged
// CHECK: page_table(%{{.+}} : tensor<4x8xi32>) k_scale(%{{.+}} : tensor<64x16x2xf32>) v_scale(%{{.+}} : tensor<64x16x2xf32>) layout(bnhd) kv_len
func.func @fp8_paged(%q: tensor<4x1x8x128xbf16>, %k: tensor<64x16x2x128xf8E4M3FN>,
                     %v: tensor<64x16x2x128xf8E4M3FN>, %ks: tensor<64x16x2xf32>,
                     %vs: tensor<64x16x2xf32>, %pt: tensor<4x8xi32>,
                     %len: tensor<4xi32>) -> tensor<4x1x8x128xbf16> {
  %o = attn.attention q(%q : tensor<4x1x8x128xbf16>)
      k(%k : tensor<64x16x2x128xf8E4M3FN>) v(%v : tensor<64x16x2x128xf8E4M3FN>)
      layout(bnhd) k_scale(%ks : tensor<64x16x2xf32>)
      v_scale(%vs : tensor<64x16x2xf32>) page_table(%pt : tensor<4x8xi32>)
      kv_len(%len : tensor<4xi32>) -> tensor<4x1x8x128xbf16>
  return %o : tensor<4x1x8x128xbf16>
}

// A quantized latent cache: one scale tensor (V is K's first columns).
// CHECK-LABEL: func.func @latent
// CHECK: k(%[[C:.+]] : tensor<1x1x?x576xf8E5M2>) v(%[[C]] : tensor<1x1x?x576xf8E5M2>) k_scale(%{{.+}} : tensor<1x1xf32>) v_from_k(512)
func.func @latent(%q: tensor<1x16x?x576xf16>, %c: tensor<1x1x?x576xf8E5M2>,
                  %s: tensor<1x1xf32>) -> tensor<1x16x?x512xf16> {
  %o = attn.attention q(%q : tensor<1x16x?x576xf16>)
      k(%c : tensor<1x1x?x576xf8E5M2>) v(%c : tensor<1x1x?x576xf8E5M2>)
      v_from_k(512) k_scale(%s : tensor<1x1xf32>) -> tensor<1x16x?x512xf16>
  return %o : tensor<1x16x?x512xf16>
}

// Appends into quantized caches return the cache and its scales.
// CHECK-LABEL: func.func @append
// CHECK: attn.kv_cache_append cache(%{{.+}} : tensor<64x2x16x128xi8>) update(%{{.+}} : tensor<4x2x1x128xbf16>) at(%{{.+}} : tensor<4xi32>) page_table(%{{.+}} : tensor<4x16xi32>) scales(%{{.+}} : tensor<64x2x16xf32>) -> tensor<64x2x16x128xi8>, tensor<64x2x16xf32>
func.func @append(%c: tensor<64x2x16x128xi8>, %u: tensor<4x2x1x128xbf16>,
                  %p: tensor<4xi32>, %pt: tensor<4x16xi32>,
                  %s: tensor<64x2x16xf32>)
    -> (tensor<64x2x16x128xi8>, tensor<64x2x16xf32>) {
  %c2, %s2 = attn.kv_cache_append cache(%c : tensor<64x2x16x128xi8>)
      update(%u : tensor<4x2x1x128xbf16>) at(%p : tensor<4xi32>)
      page_table(%pt : tensor<4x16xi32>) scales(%s : tensor<64x2x16xf32>)
      -> tensor<64x2x16x128xi8>, tensor<64x2x16xf32>
  return %c2, %s2 : tensor<64x2x16x128xi8>, tensor<64x2x16xf32>
}
