// RUN: attn-opt %s --convert-attn-to-split-kv="splits=4" --canonicalize --cse | FileCheck %s
// RUN: attn-opt %s --convert-attn-to-split-kv --canonicalize --cse | FileCheck %s --check-prefix=AUTO

// Decode: one new token (Nq = 1) against a KV cache of capacity 4096 with
// per-batch valid length kv_len, bottom-right aligned. The readable key tiles
// [0, ceil(kv_len / 128)) are split into 4 chunks that run in parallel, each
// leaving a partial (m, l, acc); three reductions over the split dimension
// merge them exactly.

// CHECK-LABEL: func.func @decode
// The grid's work counts the valid keys: Hq Nq (Dqk + Dv) per kv_len entry.
// CHECK: %[[KEYS:.+]] = scf.for %[[BI:.+]] = %c0 to %c8 step %c1 iter_args(%[[SUM:.+]] = %c0) -> (index)
// CHECK:   tensor.extract %{{.+}}[%[[BI]]] : tensor<8xi32>
// CHECK: %[[WORK:.+]] = arith.muli %[[KEYS]], %c8192 : index
// CHECK: %[[P:.+]]:3 = scf.forall (%[[B:.+]], %[[G:.+]], %[[S:.+]]) in (8, 8, 4)
// CHECK-SAME: -> (tensor<8x8x4x4x1xf32>, tensor<8x8x4x4x1xf32>, tensor<8x8x4x4x1x128xf32>)
// CHECK-NEXT:   attn.grid_work %[[WORK]]
// CHECK:   tensor.extract %{{.+}}[%[[B]]] : tensor<8xi32>
// CHECK:   arith.ceildivsi %{{.+}}, %c128
// CHECK:   scf.for
// CHECK:   scf.forall.in_parallel
// CHECK-COUNT-3: tensor.parallel_insert_slice
// Merge: M = max_s m_s, L = sum_s exp(m_s - M) l_s, acc = sum_s exp(m_s - M) acc_s.
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[P]]#0
// CHECK: arith.maximumf
// CHECK: linalg.generic {{.*}} ins(%[[P]]#0, %[[P]]#1
// CHECK: math.exp
// CHECK: linalg.generic {{.*}} ins(%[[P]]#0, %[[P]]#2
// CHECK: math.exp
// CHECK: arith.divf
// splits=-1 (the default): the count is chosen at run time from the
// threads the grid gets (attn.grid_threads of the grid's work): 1 on one
// thread, else ceil(2 threads / 64 items), at most the cache's 32 key tiles,
// as many as chunks of ceil(32 / that) tiles fill.
// AUTO-LABEL: func.func @decode
// AUTO: %[[WORK:.+]] = arith.muli %{{.+}}, %c8192 : index
// AUTO: %[[T:.+]] = attn.grid_threads %[[WORK]]
// AUTO: %[[T2:.+]] = arith.muli %[[T]], %c2 : index
// AUTO: %[[WANT:.+]] = arith.ceildivsi %[[T2]], %c64 : index
// AUTO: %[[CAP:.+]] = arith.minsi %[[WANT]], %c32 : index
// The chunks of ceil(32 / n) tiles that 32 tiles fill:
// AUTO: %[[PER:.+]] = arith.ceildivsi %c32, %[[CAP]] : index
// AUTO: %[[FILLED:.+]] = arith.ceildivsi %c32, %[[PER]] : index
// AUTO: %[[MANY:.+]] = arith.cmpi sgt, %[[T]], %c1 : index
// AUTO: %[[N:.+]] = arith.select %[[MANY]], %[[FILLED]], %c1 : index
// AUTO: %[[P:.+]]:3 = scf.forall (%{{.+}}, %{{.+}}, %{{.+}}) in (8, 8, %[[N]])
// AUTO-SAME: -> (tensor<8x8x?x4x1xf32>, tensor<8x8x?x4x1xf32>, tensor<8x8x?x4x1x128xf32>)
// AUTO-NEXT: attn.grid_work %[[WORK]]
// The chunk of split s: ceil(tiles / N) tiles each.
// AUTO: arith.ceildivsi %{{.+}}, %[[N]]
// AUTO: scf.forall.in_parallel
func.func @decode(%q: tensor<8x32x1x128xf32>, %k: tensor<8x8x4096x128xf32>,
                  %v: tensor<8x8x4096x128xf32>, %len: tensor<8xi32>)
    -> tensor<8x32x1x128xf32> {
  %o = attn.attention q(%q : tensor<8x32x1x128xf32>)
      k(%k : tensor<8x8x4096x128xf32>) v(%v : tensor<8x8x4096x128xf32>)
      kv_len(%len : tensor<8xi32>) causal(bottom_right) -> tensor<8x32x1x128xf32>
  return %o : tensor<8x32x1x128xf32>
}
