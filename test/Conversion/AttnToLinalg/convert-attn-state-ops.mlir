// RUN: attn-opt %s --convert-attn-state-ops --canonicalize --split-input-file | FileCheck %s

// kv_cache_append: every batch entry's position is checked first (a run-time
// check: 0 <= p and p + Nnew <= the cache's N); then one parallel iteration
// per batch entry writes its new rows at its own run-time position, over no
// batch entry after a failed check (the cache is returned as it was and
// still updated in place otherwise).
// CHECK-LABEL: func.func @append
// CHECK-SAME: %[[C:[^:]+]]: tensor<2x4x64x16xf32>, %[[U:[^:]+]]: tensor<2x4x1x16xf32>, %[[P:[^:]+]]: tensor<2xi32>
// CHECK: %[[CTX:.+]] = call @attn_rt_error_context()
// CHECK: scf.for %[[CB:.+]] = %c0 to %c2
// CHECK:   %[[CP:.+]] = tensor.extract %[[P]][%[[CB]]]
// CHECK:   scf.if
// CHECK:     func.call @attn_rt_check_failed(%[[CTX]], %c{{[0-9]+}}_i32, %{{.+}}, %{{.+}}, %c1_i64, %c64_i64)
// CHECK: %[[FAILED:.+]] = call @attn_rt_has_failed(%[[CTX]])
// CHECK: %[[NZ:.+]] = arith.cmpi ne, %[[FAILED]], %c0_i32
// CHECK: %[[N:.+]] = arith.select %[[NZ]], %c0, %c2
// CHECK: scf.forall (%[[B:.+]]) in (%[[N]]) shared_outs(%[[OUT:.+]] = %[[C]])
// CHECK:   %[[POS:.+]] = tensor.extract %[[P]][%[[B]]]
// CHECK:   %[[I:.+]] = arith.index_cast %[[POS]]
// CHECK:   %[[ROW:.+]] = tensor.extract_slice %[[U]][%[[B]], 0, 0, 0] [1, 4, 1, 16]
// CHECK:   tensor.parallel_insert_slice %[[ROW]] into %[[OUT]][%[[B]], 0, %[[I]], 0] [1, 4, 1, 16]
func.func @append(%c: tensor<2x4x64x16xf32>, %u: tensor<2x4x1x16xf32>,
                  %p: tensor<2xi32>) -> tensor<2x4x64x16xf32> {
  %0 = attn.kv_cache_append cache(%c : tensor<2x4x64x16xf32>)
      update(%u : tensor<2x4x1x16xf32>) at(%p : tensor<2xi32>)
      -> tensor<2x4x64x16xf32>
  return %0 : tensor<2x4x64x16xf32>
}

// -----

// combine: elementwise, weights exp(lse - max) with empty segments weighing 0.
// CHECK-LABEL: func.func @combine
// CHECK: linalg.generic
// CHECK:   arith.maximumf
// CHECK:   math.exp
// CHECK:   arith.divf
// CHECK:   arith.select
// CHECK: linalg.generic
// CHECK:   math.log
// CHECK:   arith.select
func.func @combine(%oa: tensor<1x2x8x4xf32>, %la: tensor<1x2x8xf32>,
                   %ob: tensor<1x2x8x4xf32>, %lb: tensor<1x2x8xf32>)
    -> (tensor<1x2x8x4xf32>, tensor<1x2x8xf32>) {
  %o, %l = attn.combine a(%oa, %la : tensor<1x2x8x4xf32>, tensor<1x2x8xf32>)
      b(%ob, %lb : tensor<1x2x8x4xf32>, tensor<1x2x8xf32>)
      -> tensor<1x2x8x4xf32>, tensor<1x2x8xf32>
  return %o, %l : tensor<1x2x8x4xf32>, tensor<1x2x8xf32>
}
