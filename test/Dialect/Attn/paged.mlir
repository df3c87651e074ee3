// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s

// Round trip of paged K/V: page pools in both layouts, i32 and i64 tables,
// dynamic pools and tables, GQA, lse and other modifiers, and the paged
// kv_cache_append.

// CHECK-LABEL: func.func @decode
// CHECK: attn.attention q(%{{.+}} : tensor<4x8x1x64xf32>) k(%{{.+}} : tensor<256x2x16x64xf32>) v(%{{.+}} : tensor<256x2x16x64xf32>) page_table(%{{.+}} : tensor<4x64xi32>) kv_len(%{{.+}} : tensor<4xi32>) causal(bottom_right) -> tensor<4x8x1x64xf32>, tensor<4x8x1xf32>
func.func @decode(%q: tensor<4x8x1x64xf32>, %kp: tensor<256x2x16x64xf32>,
                  %vp: tensor<256x2x16x64xf32>, %pt: tensor<4x64xi32>,
                  %len: tensor<4xi32>) -> (tensor<4x8x1x64xf32>, tensor<4x8x1xf32>) {
  %o, %l = attn.attention q(%q : tensor<4x8x1x64xf32>)
      k(%kp : tensor<256x2x16x64xf32>) v(%vp : tensor<256x2x16x64xf32>)
      page_table(%pt : tensor<4x64xi32>) kv_len(%len : tensor<4xi32>)
      causal(bottom_right) -> tensor<4x8x1x64xf32>, tensor<4x8x1xf32>
  return %o, %l : tensor<4x8x1x64xf32>, tensor<4x8x1xf32>
}

// vLLM's [pages, page size, heads, D] order, a mask over Nk = 8 * 16 keys.
// CHECK-LABEL: func.func @vllm_order
// CHECK: page_table(%{{.+}} : tensor<2x8xi64>) layout(bnhd) kv_len(%{{.+}} : tensor<2xi64>) mask(%{{.+}} : tensor<2x1x1x128xi1>) window_left(32)
func.func @vllm_order(%q: tensor<2x5x4x32xbf16>, %kp: tensor<40x16x2x32xbf16>,
                      %vp: tensor<40x16x2x32xbf16>, %pt: tensor<2x8xi64>,
                      %len: tensor<2xi64>, %m: tensor<2x1x1x128xi1>) -> tensor<2x5x4x32xbf16> {
  %o = attn.attention q(%q : tensor<2x5x4x32xbf16>)
      k(%kp : tensor<40x16x2x32xbf16>) v(%vp : tensor<40x16x2x32xbf16>)
      page_table(%pt : tensor<2x8xi64>) layout(bnhd) kv_len(%len : tensor<2xi64>)
      mask(%m : tensor<2x1x1x128xi1>) window_left(32) -> tensor<2x5x4x32xbf16>
  return %o : tensor<2x5x4x32xbf16>
}

// CHECK-LABEL: func.func @dynamic
// CHECK: k(%{{.+}} : tensor<?x2x16x64xf16>) v(%{{.+}} : tensor<?x2x16x64xf16>) page_table(%{{.+}} : tensor<?x?xi32>)
func.func @dynamic(%q: tensor<?x8x?x64xf16>, %kp: tensor<?x2x16x64xf16>,
                   %vp: tensor<?x2x16x64xf16>, %pt: tensor<?x?xi32>,
                   %len: tensor<?xi32>) -> tensor<?x8x?x64xf16> {
  %o = attn.attention q(%q : tensor<?x8x?x64xf16>)
      k(%kp : tensor<?x2x16x64xf16>) v(%vp : tensor<?x2x16x64xf16>)
      page_table(%pt : tensor<?x?xi32>) kv_len(%len : tensor<?xi32>)
      causal(top_left) -> tensor<?x8x?x64xf16>
  return %o : tensor<?x8x?x64xf16>
}

// CHECK-LABEL: func.func @append
// CHECK: attn.kv_cache_append cache(%{{.+}} : tensor<256x2x16x64xf32>) update(%{{.+}} : tensor<4x2x1x64xf32>) at(%{{.+}} : tensor<4xi32>) page_table(%{{.+}} : tensor<4x64xi32>) -> tensor<256x2x16x64xf32>
// CHECK: attn.kv_cache_append cache(%{{.+}} : tensor<?x16x2x64xf32>) update(%{{.+}} : tensor<?x3x2x64xf32>) at(%{{.+}} : tensor<?xi64>) page_table(%{{.+}} : tensor<?x?xi64>) layout(bnhd) -> tensor<?x16x2x64xf32>
func.func @append(%kp: tensor<256x2x16x64xf32>, %kn: tensor<4x2x1x64xf32>,
                  %len: tensor<4xi32>, %pt: tensor<4x64xi32>,
                  %kp2: tensor<?x16x2x64xf32>, %kn2: tensor<?x3x2x64xf32>,
                  %len2: tensor<?xi64>, %pt2: tensor<?x?xi64>)
    -> (tensor<256x2x16x64xf32>, tensor<?x16x2x64xf32>) {
  %a = attn.kv_cache_append cache(%kp : tensor<256x2x16x64xf32>)
      update(%kn : tensor<4x2x1x64xf32>) at(%len : tensor<4xi32>)
      page_table(%pt : tensor<4x64xi32>) -> tensor<256x2x16x64xf32>
  %b = attn.kv_cache_append cache(%kp2 : tensor<?x16x2x64xf32>)
      update(%kn2 : tensor<?x3x2x64xf32>) at(%len2 : tensor<?xi64>)
      page_table(%pt2 : tensor<?x?xi64>) layout(bnhd) -> tensor<?x16x2x64xf32>
  return %a, %b : tensor<256x2x16x64xf32>, tensor<?x16x2x64xf32>
}

// page_table(...) may stand anywhere among the modifiers (it prints first).
// CHECK-LABEL: func.func @any_order
// CHECK: v(%{{.+}} : tensor<8x2x4x8xf32>) page_table(%{{.+}} : tensor<2x4xi32>) kv_len(%{{.+}} : tensor<2xi32>) causal(bottom_right) scale(5.000000e-01) -> tensor<2x4x1x8xf32>
func.func @any_order(%q: tensor<2x4x1x8xf32>, %kp: tensor<8x2x4x8xf32>,
                     %pt: tensor<2x4xi32>, %len: tensor<2xi32>) -> tensor<2x4x1x8xf32> {
  %o = attn.attention q(%q : tensor<2x4x1x8xf32>)
      k(%kp : tensor<8x2x4x8xf32>) v(%kp : tensor<8x2x4x8xf32>)
      kv_len(%len : tensor<2xi32>) causal(bottom_right)
      page_table(%pt : tensor<2x4xi32>) scale(0.5) -> tensor<2x4x1x8xf32>
  return %o : tensor<2x4x1x8xf32>
}
