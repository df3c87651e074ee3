// RUN: attn-opt %s --attn-select-form="max-decode-queries=8" --split-input-file | FileCheck %s
// RUN: attn-opt %s --attn-select-form="max-decode-queries=8" --convert-attn-to-split-kv --split-input-file | FileCheck %s --check-prefix=SPLIT
// RUN: not attn-opt %s --attn-select-form="max-decode-queries=-1" --split-input-file 2>&1 | FileCheck %s --check-prefix=NEG

// The form `auto`: a dynamic query length versions the op on tensor.dim of
// the query (split-KV up to max-decode-queries rows, fused beyond), each copy
// marked with its form and the query lengths it runs for; a static length
// only marks the op.

// CHECK-LABEL: func.func @dynamic
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x4x?x32xf32>
// CHECK:      %[[C2:.+]] = arith.constant 2 : index
// CHECK-NEXT: %[[NQ:.+]] = tensor.dim %[[Q]], %[[C2]] : tensor<2x4x?x32xf32>
// CHECK-NEXT: %[[C8:.+]] = arith.constant 8 : index
// CHECK-NEXT: %[[SHORT:.+]] = arith.cmpi ule, %[[NQ]], %[[C8]] : index
// CHECK-NEXT: %[[R:.+]]:2 = scf.if %[[SHORT]] -> (tensor<2x4x?x32xf32>, tensor<2x4x?xf32>) {
// CHECK-NEXT:   %[[DO:.+]], %[[DL:.+]] = attn.attention q(%[[Q]] {{.*}} kv_len({{.*}}) causal(bottom_right) {attn.form = {form = "decode", max_queries = 8 : i64}}
// CHECK-NEXT:   scf.yield %[[DO]], %[[DL]]
// CHECK-NEXT: } else {
// CHECK-NEXT:   %[[FO:.+]], %[[FL:.+]] = attn.attention q(%[[Q]] {{.*}} kv_len({{.*}}) causal(bottom_right) {attn.form = {form = "fused", min_queries = 9 : i64}}
// CHECK-NEXT:   scf.yield %[[FO]], %[[FL]]
// CHECK-NEXT: }
// CHECK-NEXT: return %[[R]]#0, %[[R]]#1

// The split-KV lowering takes the decode copy and leaves the fused one.
// SPLIT-LABEL: func.func @dynamic
// SPLIT:       scf.if
// SPLIT-NOT:   attn.form = {form = "decode"
// SPLIT:       scf.forall
// SPLIT-NOT:   attn.form = {form = "decode"
// SPLIT:       attn.attention {{.*}}attn.form = {form = "fused", min_queries = 9 : i64}
func.func @dynamic(%q: tensor<2x4x?x32xf32>, %k: tensor<2x2x?x32xf32>,
                   %v: tensor<2x2x?x32xf32>, %l: tensor<2xi32>)
    -> (tensor<2x4x?x32xf32>, tensor<2x4x?xf32>) {
  %o, %lse = attn.attention q(%q : tensor<2x4x?x32xf32>)
      k(%k : tensor<2x2x?x32xf32>) v(%v : tensor<2x2x?x32xf32>)
      kv_len(%l : tensor<2xi32>) causal(bottom_right)
      -> tensor<2x4x?x32xf32>, tensor<2x4x?xf32>
  return %o, %lse : tensor<2x4x?x32xf32>, tensor<2x4x?xf32>
}

// NEG: error: attn: max-decode-queries must be 0 or more; got -1

// -----

// bnhd: the query length is dimension 1.
// CHECK-LABEL: func.func @bnhd
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x?x4x32xf32>
// CHECK:      %[[C1:.+]] = arith.constant 1 : index
// CHECK-NEXT: tensor.dim %[[Q]], %[[C1]] : tensor<2x?x4x32xf32>
// CHECK:      scf.if
// CHECK:      form = "decode"
// CHECK:      form = "fused"
func.func @bnhd(%q: tensor<2x?x4x32xf32>, %k: tensor<2x?x4x32xf32>,
                %v: tensor<2x?x4x32xf32>) -> tensor<2x?x4x32xf32> {
  %o = attn.attention q(%q : tensor<2x?x4x32xf32>) k(%k : tensor<2x?x4x32xf32>)
      v(%v : tensor<2x?x4x32xf32>) layout(bnhd) -> tensor<2x?x4x32xf32>
  return %o : tensor<2x?x4x32xf32>
}

// -----

// Static query lengths decide at compile time: 8 rows take the split-KV
// form, 9 the fused form; no scf.if.
// CHECK-LABEL: func.func @static
// CHECK-NOT:   scf.if
// CHECK:       attn.attention {{.*}} {attn.form = {form = "decode"}}
// CHECK:       attn.attention {{.*}} {attn.form = {form = "fused"}}
// SPLIT-LABEL: func.func @static
// SPLIT-NOT:   attn.form = {form = "decode"
// SPLIT:       attn.attention {{.*}} {attn.form = {form = "fused"}}
func.func @static(%q8: tensor<1x4x8x32xf32>, %q9: tensor<1x4x9x32xf32>,
                  %k: tensor<1x4x64x32xf32>, %v: tensor<1x4x64x32xf32>)
    -> (tensor<1x4x8x32xf32>, tensor<1x4x9x32xf32>) {
  %a = attn.attention q(%q8 : tensor<1x4x8x32xf32>) k(%k : tensor<1x4x64x32xf32>)
      v(%v : tensor<1x4x64x32xf32>) -> tensor<1x4x8x32xf32>
  %b = attn.attention q(%q9 : tensor<1x4x9x32xf32>) k(%k : tensor<1x4x64x32xf32>)
      v(%v : tensor<1x4x64x32xf32>) -> tensor<1x4x9x32xf32>
  return %a, %b : tensor<1x4x8x32xf32>, tensor<1x4x9x32xf32>
}

// -----

// Ragged batches (query lengths per sequence) take the fused form; an op
// already marked is left as it is.
// CHECK-LABEL: func.func @ragged
// CHECK-NOT:   scf.if
// CHECK:       ragged({{.*}}) {attn.form = {form = "fused"}}
// CHECK:       attn.attention {{.*}} {attn.form = {form = "decode", max_queries = 3 : i64}}
func.func @ragged(%q: tensor<1x4x?x32xf32>, %k: tensor<1x4x?x32xf32>,
                  %v: tensor<1x4x?x32xf32>, %cq: tensor<3xi32>,
                  %ck: tensor<3xi32>)
    -> (tensor<1x4x?x32xf32>, tensor<1x4x?x32xf32>) {
  %a = attn.attention q(%q : tensor<1x4x?x32xf32>) k(%k : tensor<1x4x?x32xf32>)
      v(%v : tensor<1x4x?x32xf32>) ragged(%cq, %ck : tensor<3xi32>, tensor<3xi32>)
      -> tensor<1x4x?x32xf32>
  %b = attn.attention q(%q : tensor<1x4x?x32xf32>) k(%k : tensor<1x4x?x32xf32>)
      v(%v : tensor<1x4x?x32xf32>)
      {attn.form = {form = "decode", max_queries = 3 : i64}}
      -> tensor<1x4x?x32xf32>
  return %a, %b : tensor<1x4x?x32xf32>, tensor<1x4x?x32xf32>
}
