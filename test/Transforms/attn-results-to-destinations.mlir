// RUN: attn-opt %s --split-input-file --attn-results-to-destinations --cse | FileCheck %s

// Dynamically shaped attention results become destinations: trailing tensor
// arguments marked attn.destination, their dynamic sizes checked against
// q's (B, Nq) before the op (OutputBufferDim, check 29), the results
// materialized in them.
// CHECK-LABEL: func.func @dynamic
// CHECK-SAME: (%[[Q:.+]]: tensor<?x8x?x32xf32>, %{{.+}}: tensor<?x2x?x32xf32>, %{{.+}}: tensor<?x2x?x32xf32>, %[[OUT:.+]]: tensor<?x8x?x32xf32> {attn.destination}, %[[LSE:.+]]: tensor<?x8x?xf32> {attn.destination})
// CHECK-SAME: -> (tensor<?x8x?x32xf32>, tensor<?x8x?xf32>)
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK: %[[GOT:.+]] = tensor.dim %[[OUT]], %[[C0]]
// CHECK: %[[WANT:.+]] = tensor.dim %[[Q]], %[[C0]]
// CHECK: arith.cmpi eq, %[[GOT]], %[[WANT]]
// CHECK: func.call @attn_rt_check_failed
// CHECK: tensor.dim %[[OUT]], %c2
// CHECK: tensor.dim %[[LSE]], %c0
// CHECK: tensor.dim %[[LSE]], %c2
// CHECK: %[[O:.+]], %[[L:.+]] = attn.attention
// CHECK: %[[M0:.+]] = bufferization.materialize_in_destination %[[O]] in %[[OUT]]
// CHECK: %[[M1:.+]] = bufferization.materialize_in_destination %[[L]] in %[[LSE]]
// CHECK: return %[[M0]], %[[M1]]
func.func @dynamic(%q: tensor<?x8x?x32xf32>, %k: tensor<?x2x?x32xf32>,
                   %v: tensor<?x2x?x32xf32>)
    -> (tensor<?x8x?x32xf32>, tensor<?x8x?xf32>) {
  %out, %lse = attn.attention q(%q : tensor<?x8x?x32xf32>)
      k(%k : tensor<?x2x?x32xf32>) v(%v : tensor<?x2x?x32xf32>)
      causal(bottom_right) -> tensor<?x8x?x32xf32>, tensor<?x8x?xf32>
  return %out, %lse : tensor<?x8x?x32xf32>, tensor<?x8x?xf32>
}

// -----

// Layout bnhd: out [B, Nq, Hq, Dv] takes Nq from q's dimension 1 and Dv
// from v; lse [B, Hq, Nq] takes Nq from q's dimension 1 too.
// CHECK-LABEL: func.func @bnhd
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x?x4x16xf32>, %{{[^:]+}}: tensor<1x?x2x16xf32>, %[[V:[^:]+]]: tensor<1x?x2x?xf32>, %[[OUT:[^:]+]]: tensor<1x?x4x?xf32> {attn.destination}, %[[LSE:[^:]+]]: tensor<1x4x?xf32> {attn.destination})
// CHECK: %[[G1:.+]] = tensor.dim %[[OUT]], %c1
// CHECK: %[[NQ:.+]] = tensor.dim %[[Q]], %c1
// CHECK: arith.cmpi eq, %[[G1]], %[[NQ]]
// CHECK: %[[G3:.+]] = tensor.dim %[[OUT]], %c3
// CHECK: %[[DV:.+]] = tensor.dim %[[V]], %c3
// CHECK: arith.cmpi eq, %[[G3]], %[[DV]]
// CHECK: %[[G2:.+]] = tensor.dim %[[LSE]], %c2
// CHECK: arith.cmpi eq, %[[G2]], %[[NQ]]
// CHECK: attn.attention
func.func @bnhd(%q: tensor<1x?x4x16xf32>, %k: tensor<1x?x2x16xf32>,
                %v: tensor<1x?x2x?xf32>)
    -> (tensor<1x?x4x?xf32>, tensor<1x4x?xf32>) {
  %out, %lse = attn.attention q(%q : tensor<1x?x4x16xf32>)
      k(%k : tensor<1x?x2x16xf32>) v(%v : tensor<1x?x2x?xf32>)
      layout(bnhd) -> tensor<1x?x4x?xf32>, tensor<1x4x?xf32>
  return %out, %lse : tensor<1x?x4x?xf32>, tensor<1x4x?xf32>
}

// -----

// Static results stay results (attn-results-to-out-params makes them
// out-params after bufferization).
// CHECK-LABEL: func.func @static
// CHECK-SAME: (%{{[^:]+}}: tensor<1x4x8x16xf32>, %{{[^:]+}}: tensor<1x2x8x16xf32>, %{{[^:]+}}: tensor<1x2x8x16xf32>) -> tensor<1x4x8x16xf32>
// CHECK-NOT: materialize_in_destination
func.func @static(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>,
                  %v: tensor<1x2x8x16xf32>) -> tensor<1x4x8x16xf32> {
  %o = attn.attention q(%q : tensor<1x4x8x16xf32>) k(%k : tensor<1x2x8x16xf32>)
      v(%v : tensor<1x2x8x16xf32>) -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}

// -----

// A result that is not an attention op's (here an elementwise op after it)
// cannot be sized from the arguments by rule: the function keeps returning
// its results.
// CHECK-LABEL: func.func @after
// CHECK-SAME: (%{{[^:]+}}: tensor<1x4x?x16xf32>, %{{[^:]+}}: tensor<1x2x?x16xf32>, %{{[^:]+}}: tensor<1x2x?x16xf32>) -> tensor<1x4x?x16xf32>
// CHECK-NOT: materialize_in_destination
func.func @after(%q: tensor<1x4x?x16xf32>, %k: tensor<1x2x?x16xf32>,
                 %v: tensor<1x2x?x16xf32>) -> tensor<1x4x?x16xf32> {
  %o = attn.attention q(%q : tensor<1x4x?x16xf32>) k(%k : tensor<1x2x?x16xf32>)
      v(%v : tensor<1x2x?x16xf32>) -> tensor<1x4x?x16xf32>
  %t = math.tanh %o : tensor<1x4x?x16xf32>
  return %t : tensor<1x4x?x16xf32>
}

// -----

// A function its module calls keeps its signature (and its callers work).
// CHECK-LABEL: func.func @callee
// CHECK-SAME: -> tensor<1x4x?x16xf32>
// CHECK-NOT: materialize_in_destination
// CHECK-LABEL: func.func @caller
func.func @callee(%q: tensor<1x4x?x16xf32>, %k: tensor<1x2x?x16xf32>,
                  %v: tensor<1x2x?x16xf32>) -> tensor<1x4x?x16xf32> {
  %o = attn.attention q(%q : tensor<1x4x?x16xf32>) k(%k : tensor<1x2x?x16xf32>)
      v(%v : tensor<1x2x?x16xf32>) -> tensor<1x4x?x16xf32>
  return %o : tensor<1x4x?x16xf32>
}
func.func @caller(%q: tensor<1x4x?x16xf32>, %k: tensor<1x2x?x16xf32>,
                  %v: tensor<1x2x?x16xf32>) -> tensor<1x4x?x16xf32> {
  %o = call @callee(%q, %k, %v) : (tensor<1x4x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>) -> tensor<1x4x?x16xf32>
  return %o : tensor<1x4x?x16xf32>
}

// -----

// attn.combine: out takes out_a's sizes, lse lse_a's.
// CHECK-LABEL: func.func @combine
// CHECK-SAME: (%[[OA:[^:]+]]: tensor<?x?x8x32xf32>, %[[LA:[^:]+]]: tensor<?x8x?xf32>, %{{[^:]+}}: tensor<?x?x8x32xf32>, %{{[^:]+}}: tensor<?x8x?xf32>, %[[OUT:[^:]+]]: tensor<?x?x8x32xf32> {attn.destination}, %[[LSE:[^:]+]]: tensor<?x8x?xf32> {attn.destination})
// CHECK: %[[G0:.+]] = tensor.dim %[[OUT]], %c0
// CHECK: %[[W0:.+]] = tensor.dim %[[OA]], %c0
// CHECK: arith.cmpi eq, %[[G0]], %[[W0]]
// CHECK: %[[G1:.+]] = tensor.dim %[[OUT]], %c1
// CHECK: %[[W1:.+]] = tensor.dim %[[OA]], %c1
// CHECK: arith.cmpi eq, %[[G1]], %[[W1]]
// CHECK: %[[G2:.+]] = tensor.dim %[[LSE]], %c2
// CHECK: %[[W2:.+]] = tensor.dim %[[LA]], %c2
// CHECK: arith.cmpi eq, %[[G2]], %[[W2]]
// CHECK: %[[O:.+]], %[[L:.+]] = attn.combine
// CHECK: %[[M0:.+]] = bufferization.materialize_in_destination %[[O]] in %[[OUT]]
// CHECK: %[[M1:.+]] = bufferization.materialize_in_destination %[[L]] in %[[LSE]]
// CHECK: return %[[M0]], %[[M1]]
func.func @combine(%oa: tensor<?x?x8x32xf32>, %la: tensor<?x8x?xf32>,
                   %ob: tensor<?x?x8x32xf32>, %lb: tensor<?x8x?xf32>)
    -> (tensor<?x?x8x32xf32>, tensor<?x8x?xf32>) {
  %o, %l = attn.combine a(%oa, %la : tensor<?x?x8x32xf32>, tensor<?x8x?xf32>)
      b(%ob, %lb : tensor<?x?x8x32xf32>, tensor<?x8x?xf32>) layout(bnhd)
      -> tensor<?x?x8x32xf32>, tensor<?x8x?xf32>
  return %o, %l : tensor<?x?x8x32xf32>, tensor<?x8x?xf32>
}

// -----

// An op with a sink: its results are destinations too (attn-expand-sinks
// rescales out in place afterwards).
// CHECK-LABEL: func.func @sink
// CHECK-SAME: %[[OUT:[^:]+]]: tensor<1x4x?x16xf32> {attn.destination}
// CHECK: %[[O:.+]] = attn.attention {{.*}} sink(
// CHECK: %[[M:.+]] = bufferization.materialize_in_destination %[[O]] in %[[OUT]]
// CHECK: return %[[M]]
func.func @sink(%q: tensor<1x4x?x16xf32>, %k: tensor<1x2x?x16xf32>,
                %v: tensor<1x2x?x16xf32>, %s: tensor<4xf32>)
    -> tensor<1x4x?x16xf32> {
  %o = attn.attention q(%q : tensor<1x4x?x16xf32>) k(%k : tensor<1x2x?x16xf32>)
      v(%v : tensor<1x2x?x16xf32>) sink(%s : tensor<4xf32>)
      -> tensor<1x4x?x16xf32>
  return %o : tensor<1x4x?x16xf32>
}
