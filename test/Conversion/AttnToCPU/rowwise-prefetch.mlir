// RUN: attn-opt %s --convert-attn-to-split-kv="splits=2 target-cpu=skylake-avx512" --canonicalize --cse | FileCheck %s
// RUN: attn-opt %s --convert-attn-to-split-kv="splits=2 target-cpu=haswell" --canonicalize --cse | FileCheck %s --check-prefix=AVX2
// RUN: attn-opt %s --convert-attn-to-split-kv="splits=2 target-cpu=skylake-avx512" --canonicalize --cse | FileCheck %s --check-prefix=PAGED

// Decode over a contiguous f32 cache (rows of 512 bytes): the row-wise
// kernels hint the rows 8 KiB ahead (16 keys, capped at the last key, 255)
// into L2 (locality 1): Q K^T all eight lines of the K row, each P V pass its
// own columns of the V row (docs/Forms.md).

// CHECK-LABEL: func.func @decode
// Q K^T, key j.
// CHECK: scf.for %[[J:.+]] = %c0 to %{{.+}} step %c1
// CHECK-NEXT: %[[KEY:.+]] = arith.addi %{{.+}}, %[[J]] : index
// CHECK-NEXT: %[[AHEAD:.+]] = arith.addi %[[KEY]], %c16 : index
// CHECK-NEXT: %[[ROW:.+]] = arith.minsi %[[AHEAD]], %c255 : index
// CHECK-NEXT: %[[KB:.+]] = bufferization.to_buffer %arg1 read_only
// CHECK-NEXT: memref.prefetch %[[KB]][%c0, %{{.+}}, %[[ROW]], %c0], read, locality<1>, data
// CHECK-COUNT-6: memref.prefetch %[[KB]]
// CHECK-NEXT: memref.prefetch %[[KB]][%c0, %{{.+}}, %[[ROW]], %c112], read, locality<1>, data
// CHECK-NOT: memref.prefetch
// P V with AVX-512: two passes of 64 columns, each over the whole tile (no key
// chunks), four lines of the V row per key.
// CHECK: scf.for %[[E:.+]] = %c0 to %c128 step %c64
// CHECK: scf.for %[[JV:.+]] = %c0 to %{{.+}} step %c1
// CHECK: %[[VROW:.+]] = arith.minsi %{{.+}}, %c255 : index
// CHECK-NEXT: %[[VB:.+]] = bufferization.to_buffer %arg2 read_only
// CHECK-NEXT: memref.prefetch %[[VB]][%c0, %{{.+}}, %[[VROW]], %[[E]]], read, locality<1>, data
// CHECK-COUNT-3: memref.prefetch %[[VB]]
// CHECK-NOT: memref.prefetch
// CHECK: vector.fma

// With AVX2's passes of 16 columns (one 64-byte line), P V goes over the keys
// in chunks of 8 rows (4 KiB), each chunk's eight passes one after the other.
// AVX2-LABEL: func.func @decode
// AVX2: scf.for %[[C0:arg[0-9]+]] = %c0 to %[[KS:[0-9]+]] step %c8 iter_args(%{{.+}}) -> (tensor<?x?x?xf32>)
// AVX2-NEXT: %[[NEXT:.+]] = arith.addi %[[C0]], %c8 : index
// AVX2-NEXT: %[[HI:.+]] = arith.minsi %[[NEXT]], %[[KS]] : index
// AVX2-NEXT: scf.for %[[E:.+]] = %c0 to %c128 step %c16
// AVX2: scf.for %{{.+}} = %[[C0]] to %[[HI]] step %c1
// AVX2: %[[VROW:.+]] = arith.minsi %{{.+}}, %c255 : index
// AVX2-NEXT: %[[VB:.+]] = bufferization.to_buffer %arg2 read_only
// AVX2-NEXT: memref.prefetch %[[VB]][%c0, %{{.+}}, %[[VROW]], %[[E]]], read, locality<1>, data
// AVX2-NOT: memref.prefetch
// AVX2: vector.fma
func.func @decode(%q: tensor<1x8x1x128xf32>, %k: tensor<1x2x256x128xf32>, %v: tensor<1x2x256x128xf32>) -> tensor<1x8x1x128xf32> {
  %o = attn.attention q(%q : tensor<1x8x1x128xf32>) k(%k : tensor<1x2x256x128xf32>) v(%v : tensor<1x2x256x128xf32>) causal(bottom_right) -> tensor<1x8x1x128xf32>
  return %o : tensor<1x8x1x128xf32>
}

// Paged caches, AVX-512 (prefix PAGED). Pages of 16 keys, shorter than 128
// keys: the hardware prefetchers cannot follow the page table, so
// Q K^T hints the K and V rows of the same row of the next page (key + 16,
// the page looked up in the table) and P V hints nothing.
// PAGED-LABEL: func.func @paged16
// PAGED: scf.for %[[J:.+]] = %c0 to %{{.+}} step %c1
// PAGED: %[[AHEAD:.+]] = arith.addi %{{.+}}, %c16 : index
// PAGED-NEXT: %[[KEY:.+]] = arith.minsi %[[AHEAD]], %{{.+}} : index
// PAGED-NEXT: %[[P:.+]] = arith.divui %[[KEY]], %c16 : index
// PAGED-NEXT: %[[E:.+]] = tensor.extract %arg3[%{{.+}}, %[[P]]] : tensor<2x20xi32>
// PAGED-NEXT: %[[PAGE:.+]] = arith.index_cast %[[E]] : i32 to index
// PAGED-NEXT: %[[ROW:.+]] = arith.remui %[[KEY]], %c16 : index
// PAGED-NEXT: %[[KB:.+]] = bufferization.to_buffer %arg1 read_only
// PAGED-NEXT: memref.prefetch %[[KB]][%[[PAGE]], %{{.+}}, %[[ROW]], %c0], read, locality<1>, data
// PAGED-COUNT-7: memref.prefetch %[[KB]]
// PAGED-NEXT: %[[VB:.+]] = bufferization.to_buffer %arg2 read_only
// PAGED-NEXT: memref.prefetch %[[VB]][%[[PAGE]], %{{.+}}, %[[ROW]], %c0], read, locality<1>, data
// PAGED-COUNT-7: memref.prefetch %[[VB]]
// PAGED-NOT: memref.prefetch
// PAGED: vector.fma
// PAGED-NOT: memref.prefetch
// Pages of 256 keys (at least 128): the hints of a contiguous cache (K 16
// keys ahead in Q K^T, V by each P V pass), the hardware prefetchers
// following the rows within a page.
// PAGED-LABEL: func.func @paged256
// PAGED: scf.for %[[J:.+]] = %c0 to %{{.+}} step %c1
// PAGED: %[[AHEAD:.+]] = arith.addi %{{.+}}, %c16 : index
// PAGED-NEXT: %[[KEY:.+]] = arith.minsi %[[AHEAD]], %{{.+}} : index
// PAGED-NEXT: %[[P:.+]] = arith.divui %[[KEY]], %c256 : index
// PAGED: %[[KB:.+]] = bufferization.to_buffer %arg1 read_only
// PAGED-COUNT-8: memref.prefetch %[[KB]]
// PAGED-NOT: memref.prefetch
// PAGED: scf.for %[[EV:.+]] = %c0 to %c128 step %c64
// PAGED: scf.for %[[JV:.+]] = %c0 to %{{.+}} step %c1
// PAGED: arith.addi %{{.+}}, %c16 : index
// PAGED: %[[VB:.+]] = bufferization.to_buffer %arg2 read_only
// PAGED-NEXT: memref.prefetch %[[VB]][%{{.+}}, %{{.+}}, %{{.+}}, %[[EV]]], read, locality<1>, data
// PAGED-COUNT-3: memref.prefetch %[[VB]]
// PAGED-NOT: memref.prefetch
// PAGED: vector.fma
func.func @paged16(%q: tensor<2x8x1x128xf32>, %k: tensor<40x2x16x128xf32>, %v: tensor<40x2x16x128xf32>, %pt: tensor<2x20xi32>, %len: tensor<2xi32>) -> tensor<2x8x1x128xf32> {
  %o = attn.attention q(%q : tensor<2x8x1x128xf32>) k(%k : tensor<40x2x16x128xf32>) v(%v : tensor<40x2x16x128xf32>) page_table(%pt : tensor<2x20xi32>) kv_len(%len : tensor<2xi32>) causal(bottom_right) -> tensor<2x8x1x128xf32>
  return %o : tensor<2x8x1x128xf32>
}
func.func @paged256(%q: tensor<2x8x1x128xf32>, %k: tensor<4x2x256x128xf32>, %v: tensor<4x2x256x128xf32>, %pt: tensor<2x2xi32>, %len: tensor<2xi32>) -> tensor<2x8x1x128xf32> {
  %o = attn.attention q(%q : tensor<2x8x1x128xf32>) k(%k : tensor<4x2x256x128xf32>) v(%v : tensor<4x2x256x128xf32>) page_table(%pt : tensor<2x2xi32>) kv_len(%len : tensor<2xi32>) causal(bottom_right) -> tensor<2x8x1x128xf32>
  return %o : tensor<2x8x1x128xf32>
}
