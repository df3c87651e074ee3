// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s

// CHECK-LABEL: func.func @append
// CHECK: attn.kv_cache_append cache(%{{.+}} : tensor<8x8x4096x128xf32>) update(%{{.+}} : tensor<8x8x1x128xf32>) at(%{{.+}} : tensor<8xi32>) -> tensor<8x8x4096x128xf32>
// CHECK: attn.kv_cache_append cache(%{{.+}} : tensor<?x?x8x64xf16>) update(%{{.+}} : tensor<?x4x8x64xf16>) at(%{{.+}} : tensor<?xi64>) layout(bnhd) -> tensor<?x?x8x64xf16>
func.func @append(%c: tensor<8x8x4096x128xf32>, %u: tensor<8x8x1x128xf32>,
                  %p: tensor<8xi32>, %c2: tensor<?x?x8x64xf16>,
                  %u2: tensor<?x4x8x64xf16>, %p2: tensor<?xi64>)
    -> (tensor<8x8x4096x128xf32>, tensor<?x?x8x64xf16>) {
  %0 = attn.kv_cache_append cache(%c : tensor<8x8x4096x128xf32>)
      update(%u : tensor<8x8x1x128xf32>) at(%p : tensor<8xi32>)
      -> tensor<8x8x4096x128xf32>
  %1 = attn.kv_cache_append cache(%c2 : tensor<?x?x8x64xf16>)
      update(%u2 : tensor<?x4x8x64xf16>) at(%p2 : tensor<?xi64>) layout(bnhd)
      -> tensor<?x?x8x64xf16>
  return %0, %1 : tensor<8x8x4096x128xf32>, tensor<?x?x8x64xf16>
}

// CHECK-LABEL: func.func @combine
// CHECK: attn.combine a(%{{.+}}, %{{.+}} : tensor<1x16x8x64xbf16>, tensor<1x8x16xf32>) b(%{{.+}}, %{{.+}} : tensor<1x16x8x64xbf16>, tensor<1x8x16xf32>) layout(bnhd) -> tensor<1x16x8x64xbf16>, tensor<1x8x16xf32>
func.func @combine(%oa: tensor<1x16x8x64xbf16>, %la: tensor<1x8x16xf32>,
                   %ob: tensor<1x16x8x64xbf16>, %lb: tensor<1x8x16xf32>)
    -> (tensor<1x16x8x64xbf16>, tensor<1x8x16xf32>) {
  %o, %l = attn.combine a(%oa, %la : tensor<1x16x8x64xbf16>, tensor<1x8x16xf32>)
      b(%ob, %lb : tensor<1x16x8x64xbf16>, tensor<1x8x16xf32>) layout(bnhd)
      -> tensor<1x16x8x64xbf16>, tensor<1x8x16xf32>
  return %o, %l : tensor<1x16x8x64xbf16>, tensor<1x8x16xf32>
}
