// RUN: attn-opt %s --convert-attn-to-split-kv="splits=2 target-cpu=skylake-avx512" --canonicalize --cse --split-input-file | FileCheck %s
// RUN: attn-opt %s --convert-attn-to-split-kv="splits=2 target-cpu=haswell" --canonicalize --cse --split-input-file | FileCheck %s --check-prefix=AVX2

// Decode's row-wise Q K^T over bf16 rows (widened in registers, bound by
// instructions) takes several keys a step: each chunk of a query row is read
// and widened once for all of them, and one shuffle tree sums the step's
// logits of the four query heads: 4 keys with AVX-512 (16 logits in one
// vector of 16 lanes), 2 with AVX2 (8 logits, 8 lanes); then the keys left
// one by one.

// CHECK-LABEL: func.func @decode_bf16
// CHECK: %[[REM:.+]] = arith.remui %[[KS:.+]], %c4 : index
// CHECK-NEXT: %[[BLOCKED:.+]] = arith.subi %[[KS]], %[[REM]] : index
// CHECK: scf.for %[[J:.+]] = %c0 to %[[BLOCKED]] step %c4
// Each key's row 8 KiB ahead: four lines of each of the four rows.
// CHECK-COUNT-16: memref.prefetch
// CHECK-NOT: memref.prefetch
// The first chunk of the four key rows, then each query head's chunk against
// all four.
// CHECK: %[[K0:.+]] = vector.transfer_read %{{.+}}[%c0, %c0, %[[J]], %c0]{{.+}} vector<16xbf16>
// CHECK-NEXT: %[[K0F:.+]] = arith.extf %[[K0]]
// CHECK-NEXT: vector.transfer_read %{{.+}} vector<16xbf16>
// CHECK-NEXT: %[[K1F:.+]] = arith.extf
// CHECK-NEXT: vector.transfer_read %{{.+}} vector<16xbf16>
// CHECK-NEXT: %[[K2F:.+]] = arith.extf
// CHECK-NEXT: vector.transfer_read %{{.+}} vector<16xbf16>
// CHECK-NEXT: %[[K3F:.+]] = arith.extf
// CHECK-NEXT: vector.transfer_read %{{.+}} : tensor<1x4x1x128xbf16>, vector<16xbf16>
// CHECK-NEXT: %[[Q0:.+]] = arith.extf
// CHECK-NEXT: vector.fma %[[Q0]], %[[K0F]]
// CHECK-NEXT: vector.fma %[[Q0]], %[[K1F]]
// CHECK-NEXT: vector.fma %[[Q0]], %[[K2F]]
// CHECK-NEXT: vector.fma %[[Q0]], %[[K3F]]
// CHECK: vector.shuffle
// Each head's four logits, written as one vector.
// CHECK: %[[ROW:.+]] = vector.from_elements %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : vector<4xf32>
// CHECK-NEXT: vector.transfer_write %[[ROW]], %{{.+}}[%c0, %c0, %[[J]]] {in_bounds = [true]} : vector<4xf32>
// CHECK-COUNT-3: vector.transfer_write %{{.+}} : vector<4xf32>
// CHECK: scf.for %{{.+}} = %[[BLOCKED]] to %{{.+}} step %c1

// AVX2-LABEL: func.func @decode_bf16
// AVX2: %[[REM:.+]] = arith.remui %[[KS:.+]], %c2 : index
// AVX2-NEXT: %[[BLOCKED:.+]] = arith.subi %[[KS]], %[[REM]] : index
// AVX2: scf.for %[[J:.+]] = %c0 to %[[BLOCKED]] step %c2
// AVX2: vector.transfer_read %{{.+}}[%c0, %c0, %[[J]], %c0]{{.+}} vector<8xbf16>
// AVX2: vector.shuffle
// AVX2: %[[ROW:.+]] = vector.from_elements %{{.+}}, %{{.+}} : vector<2xf32>
// AVX2-NEXT: vector.transfer_write %[[ROW]], %{{.+}}[%c0, %c0, %[[J]]] {in_bounds = [true]} : vector<2xf32>
// AVX2: scf.for %{{.+}} = %[[BLOCKED]] to %{{.+}} step %c1
func.func @decode_bf16(%q: tensor<1x8x1x128xbf16>, %k: tensor<1x2x256x128xbf16>, %v: tensor<1x2x256x128xbf16>) -> tensor<1x8x1x128xbf16> {
  %o = attn.attention q(%q : tensor<1x8x1x128xbf16>) k(%k : tensor<1x2x256x128xbf16>) v(%v : tensor<1x2x256x128xbf16>) -> tensor<1x8x1x128xbf16>
  return %o : tensor<1x8x1x128xbf16>
}

// -----

// f32 rows stream from memory and take one key a step: interleaving the lines
// of several rows defeats the hardware prefetchers (docs/Forms.md).

// CHECK-LABEL: func.func @decode_f32
// CHECK: scf.for %{{.+}} = %c0 to %{{.+}} step %c1
// CHECK-NOT: step %c4
// CHECK-NOT: vector<4xf32>
// CHECK: return
// AVX2-LABEL: func.func @decode_f32
// AVX2-NOT: vector<2xf32>
// AVX2: return
func.func @decode_f32(%q: tensor<1x8x1x128xf32>, %k: tensor<1x2x256x128xf32>, %v: tensor<1x2x256x128xf32>) -> tensor<1x8x1x128xf32> {
  %o = attn.attention q(%q : tensor<1x8x1x128xf32>) k(%k : tensor<1x2x256x128xf32>) v(%v : tensor<1x2x256x128xf32>) -> tensor<1x8x1x128xf32>
  return %o : tensor<1x8x1x128xf32>
}
