// RUN: attn-opt %s --attn-write-destinations | FileCheck %s
// RUN: attn-opt %s --attn-write-destinations --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --canonicalize --attn-results-to-out-params | FileCheck %s --check-prefix=BUF

// What a lowered attention op with a run-time guard looks like: after a
// failed check it yields zeros of size 0 (marked attn.zeros_after_failure),
// otherwise a fill of a tensor.empty. Its result is materialized in the
// destination %out. The zeros fill the destination instead, and the fill
// writes the destination rather than the empty tensor (left unused), so
// both branches yield %out's buffer.
// CHECK-LABEL: func.func @guarded
// CHECK-SAME: %[[OUT:[^:]+]]: tensor<?x4xf32> {attn.destination}
// CHECK: scf.if
// CHECK-NEXT: %[[Z:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[OUT]] : tensor<?x4xf32>)
// CHECK-NEXT: scf.yield %[[Z]]
// CHECK: } else {
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%[[OUT]] : tensor<?x4xf32>)

// Bufferized: the caller's buffer written in place, no allocation, no copy,
// no result.
// BUF-LABEL: func.func @guarded
// BUF-SAME: (%{{[^:]+}}: memref<?x4xf32>, %{{[^:]+}}: i1, %[[B:[^:]+]]: memref<?x4xf32>) {
// BUF-NOT: memref.alloc
// BUF-NOT: memref.copy
// BUF: return{{$}}
func.func @guarded(%x: tensor<?x4xf32>, %failed: i1,
                   %out: tensor<?x4xf32> {attn.destination}) -> tensor<?x4xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %r = scf.if %failed -> tensor<?x4xf32> {
    %e = tensor.empty() : tensor<0x4xf32>
    %z = linalg.fill {attn.zeros_after_failure} ins(%zero : f32) outs(%e : tensor<0x4xf32>) -> tensor<0x4xf32>
    %c = tensor.cast %z : tensor<0x4xf32> to tensor<?x4xf32>
    scf.yield %c : tensor<?x4xf32>
  } else {
    %n = tensor.dim %x, %c0 : tensor<?x4xf32>
    %e = tensor.empty(%n) : tensor<?x4xf32>
    %f = linalg.fill ins(%one : f32) outs(%e : tensor<?x4xf32>) -> tensor<?x4xf32>
    scf.yield %f : tensor<?x4xf32>
  }
  %m = bufferization.materialize_in_destination %r in %out : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  return %m : tensor<?x4xf32>
}
