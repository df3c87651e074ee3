// RUN: attn-opt %s --convert-attn-to-fused-loops="target-cpu=skylake-avx512" --canonicalize --cse --split-input-file | FileCheck %s

// The grid's work for the thread choice (attn.grid_work, read by
// attn-forall-to-parallel-or-sequential): Hq (Dqk + Dv) multiply-adds per
// (query, key) pair of one head. A ragged batch counts each sequence's rows
// against its own keys (its span of cu_seqlens_k, cut to its kv_len), summed
// by a loop over the sequences before the grid.

// CHECK-LABEL: func.func @ragged_kv_len(
// CHECK-SAME: %[[CQ:[^:]+]]: tensor<5xi32>, %[[CK:[^:]+]]: tensor<5xi32>, %[[L:[^:]+]]: tensor<4xi32>)
// After the longest sequence's query tiles:
// CHECK: arith.ceildivsi
// CHECK: %[[PAIRS:.+]] = scf.for %[[S:[^ ]+]] = %c0 to %c4 step %c1 iter_args(%[[SUM:[^ ]+]] = %c0) -> (index) {
// CHECK:   %[[NEXT:.+]] = arith.addi %[[S]], %c1 : index
// CHECK:   tensor.extract %[[CQ]][%[[S]]]
// CHECK:   tensor.extract %[[CQ]][%[[NEXT]]]
// CHECK:   %[[ROWS:.+]] = arith.subi
// CHECK:   tensor.extract %[[CK]][%[[S]]]
// CHECK:   tensor.extract %[[CK]][%[[NEXT]]]
// CHECK:   %[[KEYS:.+]] = arith.subi
// CHECK:   %[[LEN:.+]] = tensor.extract %[[L]][%[[S]]]
// CHECK:   %[[LENI:.+]] = arith.index_cast %[[LEN]]
// CHECK:   %[[VALID:.+]] = arith.maxsi %[[LENI]], %c0
// CHECK:   %[[CUT:.+]] = arith.minsi %[[KEYS]], %[[VALID]]
// CHECK:   %[[P:.+]] = arith.muli %[[ROWS]], %[[CUT]]
// CHECK:   %[[ADD:.+]] = arith.addi %[[SUM]], %[[P]]
// CHECK:   scf.yield %[[ADD]]
// CHECK: %[[WORK:.+]] = arith.muli %[[PAIRS]], %c1024 : index
// CHECK: scf.forall
// CHECK-NEXT: attn.grid_work %[[WORK]]
func.func @ragged_kv_len(%q: tensor<1x8x?x64xf32>, %k: tensor<1x2x?x64xf32>,
                         %v: tensor<1x2x?x64xf32>, %cq: tensor<5xi32>,
                         %ck: tensor<5xi32>, %l: tensor<4xi32>) -> tensor<1x8x?x64xf32> {
  %o = attn.attention q(%q : tensor<1x8x?x64xf32>)
      k(%k : tensor<1x2x?x64xf32>) v(%v : tensor<1x2x?x64xf32>)
      ragged(%cq, %ck : tensor<5xi32>, tensor<5xi32>) kv_len(%l : tensor<4xi32>)
      causal(bottom_right) -> tensor<1x8x?x64xf32>
  return %o : tensor<1x8x?x64xf32>
}

// -----

// A dense batch with kv_len: Nq times the sum of the entries' clamped
// kv_len (a loop before the grid).

// CHECK-LABEL: func.func @dense_kv_len(
// CHECK: %[[KEYS:.+]] = scf.for %{{.+}} = %c0 to %c2 step %c1 iter_args(%{{.+}} = %c0) -> (index) {
// CHECK:   tensor.extract
// CHECK:   arith.minsi
// (Nq = 16, Hq = 4, Dqk + Dv = 128: 8192 per valid key.)
// CHECK: %[[WORK:.+]] = arith.muli %[[KEYS]], %c8192 : index
// CHECK: scf.forall
// CHECK-NEXT: attn.grid_work %[[WORK]]
func.func @dense_kv_len(%q: tensor<2x4x16x64xf32>, %k: tensor<2x4x?x64xf32>,
                        %v: tensor<2x4x?x64xf32>, %l: tensor<2xi32>) -> tensor<2x4x16x64xf32> {
  %o = attn.attention q(%q : tensor<2x4x16x64xf32>) k(%k : tensor<2x4x?x64xf32>)
      v(%v : tensor<2x4x?x64xf32>) kv_len(%l : tensor<2xi32>)
      -> tensor<2x4x16x64xf32>
  return %o : tensor<2x4x16x64xf32>
}
