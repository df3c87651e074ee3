// REQUIRES: x86_64-host
// RUN: attn-opt %s --convert-attn-to-fused-loops="tile-q=64 tile-k=64 target-cpu=skylake-avx512" --canonicalize --cse --split-input-file | FileCheck %s
// RUN: attn-opt %s --convert-attn-to-split-kv="tile-q=16 tile-k=64 splits=2 target-cpu=skylake-avx512" --canonicalize --cse --split-input-file | FileCheck %s --check-prefix=SPLIT

// Document masking: per key tile, the kernel scans the document ids of the
// tile's query rows and keys for their smallest and largest value (at most
// 2^14 elements, else the whole i32 range), skips the tile when the ranges
// do not overlap, and treats it as full when both are one and the same
// document. Only the partial branch evaluates the region per element, with
// a bounds check of every read of a mod_inputs tensor (a read out of bounds
// is recorded as a run-time check and reads 0).

// CHECK-LABEL: func.func @document_mask
// CHECK: scf.forall
// CHECK: scf.for %[[KT:.+]] = %c0 to %{{.+}} step %c1
// The query rows' document ids...
// CHECK:   %[[QR:.+]]:2 = scf.for %{{.+}} = %{{.+}} to %{{.+}} step %c1 iter_args(%{{.+}} = %c2147483647, %{{.+}} = %c-2147483648) -> (index, index)
// CHECK:     tensor.extract %[[DOC:.+]][%{{.+}}] : tensor<?xi32>
// CHECK:     arith.minsi
// CHECK:     arith.maxsi
// ...and the keys'.
// CHECK:   %[[KR:.+]]:2 = scf.for %{{.+}} = %{{.+}} to %{{.+}} step %c1 iter_args(%{{.+}} = %c2147483647, %{{.+}} = %c-2147483648) -> (index, index)
// CHECK:     tensor.extract %[[DOC]][%{{.+}}] : tensor<?xi32>
// Overlap of the two ranges: some pair may be allowed.
// CHECK:   %[[MAY:.+]] = arith.andi
// CHECK:   scf.if %[[MAY]] -> (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?x?xf32>)
// Full tiles (structurally and by the region) skip the mask arithmetic...
// CHECK:     scf.if %{{.+}} -> (tensor<?x?x?xf32>)
// CHECK:       linalg.generic
// CHECK-NOT:     tensor.extract
// CHECK:         arith.mulf
// CHECK-NEXT:    linalg.yield
// ...partial tiles evaluate the region per element.
// CHECK:     } else {
// CHECK:       linalg.generic
// CHECK:         %[[DI:.+]] = scf.if %{{.+}} -> (i32) {
// CHECK-NEXT:      tensor.extract %[[DOC]]
// CHECK:         } else {
// CHECK:           func.call @attn_rt_check_failed(
// CHECK-NEXT:      scf.yield %c0_i32
// CHECK:         %[[DJ:.+]] = scf.if %{{.+}} -> (i32) {
// CHECK-NEXT:      tensor.extract %[[DOC]]
// CHECK:         } else {
// CHECK:           func.call @attn_rt_check_failed(
// CHECK-NEXT:      scf.yield %c0_i32
// CHECK:         %[[SAME:.+]] = arith.cmpi eq, %[[DI]], %[[DJ]] : i32
// CHECK:         arith.andi %{{.+}}, %[[SAME]] : i1
// A tile the region denies entirely leaves the state as it is.
// CHECK:   } else {
// CHECK:     scf.yield %{{.+}}, %{{.+}}, %{{.+}} : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?x?xf32>

// The decode form classifies its tiles the same way.
// SPLIT-LABEL: func.func @document_mask
// SPLIT: scf.forall
// SPLIT: scf.for
// SPLIT:   scf.for {{.*}} iter_args(%{{.+}} = %c2147483647, %{{.+}} = %c-2147483648) -> (index, index)
// SPLIT:   scf.for {{.*}} iter_args(%{{.+}} = %c2147483647, %{{.+}} = %c-2147483648) -> (index, index)
// SPLIT:   scf.if

func.func @document_mask(%q: tensor<1x8x?x64xf32>, %k: tensor<1x8x?x64xf32>,
                         %v: tensor<1x8x?x64xf32>, %doc: tensor<?xi32>)
    -> tensor<1x8x?x64xf32> {
  %out = attn.attention q(%q : tensor<1x8x?x64xf32>)
      k(%k : tensor<1x8x?x64xf32>) v(%v : tensor<1x8x?x64xf32>)
      mod_inputs(%doc : tensor<?xi32>)
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %d: tensor<?xi32>):
        %di = tensor.extract %d[%i] : tensor<?xi32>
        %dj = tensor.extract %d[%j] : tensor<?xi32>
        %same = arith.cmpi eq, %di, %dj : i32
        attn.yield %same : i1
      } -> tensor<1x8x?x64xf32>
  return %out : tensor<1x8x?x64xf32>
}

// -----

// An affine mask (prefix-LM: j < 32 or j <= i) needs no scan: its bounds
// over the tile are compared directly (j's smallest value against 32, j's
// smallest against i's largest, ...).
// CHECK-LABEL: func.func @prefix_lm
// CHECK: scf.for
// CHECK-NOT: iter_args(%{{.+}} = %c9223372036854775807
// CHECK:   %[[INPRE:.+]] = arith.cmpi slt, %{{.+}}, %c32 : index
// CHECK:   %[[PAST:.+]] = arith.cmpi sle, %{{.+}}, %{{.+}} : index
// CHECK:   %[[MAY:.+]] = arith.ori %[[INPRE]], %[[PAST]] : i1
// CHECK:   scf.if %[[MAY]]
func.func @prefix_lm(%q: tensor<1x2x128x64xf32>, %k: tensor<1x2x128x64xf32>,
                     %v: tensor<1x2x128x64xf32>) -> tensor<1x2x128x64xf32> {
  %out = attn.attention q(%q : tensor<1x2x128x64xf32>)
      k(%k : tensor<1x2x128x64xf32>) v(%v : tensor<1x2x128x64xf32>)
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %c32 = arith.constant 32 : index
        %pre = arith.cmpi slt, %j, %c32 : index
        %past = arith.cmpi sle, %j, %i : index
        %ok = arith.ori %pre, %past : i1
        attn.yield %ok : i1
      } -> tensor<1x2x128x64xf32>
  return %out : tensor<1x2x128x64xf32>
}

// -----

// A score region is applied to every logit, in full and partial tiles alike,
// after the scale (and before the -inf of the structural masks).
// CHECK-LABEL: func.func @tanh_cap
// CHECK: linalg.generic
// CHECK:   %[[S:.+]] = arith.mulf %{{.+}}, %cst{{.*}} : f32
// CHECK:   %[[X:.+]] = arith.divf %[[S]], %{{.+}} : f32
// CHECK:   %[[T:.+]] = math.tanh %[[X]] : f32
// CHECK:   arith.mulf %[[T]], %{{.+}} : f32
// CHECK: linalg.generic
// CHECK:   math.tanh
// CHECK:   arith.select
func.func @tanh_cap(%q: tensor<1x2x128x64xf32>, %k: tensor<1x2x128x64xf32>,
                    %v: tensor<1x2x128x64xf32>) -> tensor<1x2x128x64xf32> {
  %out = attn.attention q(%q : tensor<1x2x128x64xf32>)
      k(%k : tensor<1x2x128x64xf32>) v(%v : tensor<1x2x128x64xf32>)
      causal(top_left) score_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32):
        %cap = arith.constant 30.0 : f32
        %x = arith.divf %s, %cap : f32
        %t = math.tanh %x : f32
        %r = arith.mulf %t, %cap : f32
        attn.yield %r : f32
      } -> tensor<1x2x128x64xf32>
  return %out : tensor<1x2x128x64xf32>
}
