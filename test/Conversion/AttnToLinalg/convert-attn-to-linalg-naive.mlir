// RUN: attn-opt %s --convert-attn-to-linalg-naive --canonicalize --split-input-file | FileCheck %s

// The naive form materializes the [B, Hkv, R, Nq, Nk] scores. GQA is a read
// pattern: q is reshaped (no copy) from Hq = 8 to [Hkv, R] = [2, 4], and k, v
// are read in place by indexing maps that use g only; no K/V copy per query
// head exists.

// CHECK-DAG: #[[QMAP:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d5)>
// CHECK-DAG: #[[KMAP:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d5)>
// CHECK-LABEL: func.func @gqa_causal
// CHECK-SAME: %[[Q:[^:]+]]: tensor<2x8x16x32xf32>, %[[K:[^:]+]]: tensor<2x2x24x32xf32>, %[[V:[^:]+]]: tensor<2x2x24x32xf32>
// CHECK: %[[Q5:.+]] = tensor.expand_shape %[[Q]] {{\[}}[0], [1, 2], [3], [4]] output_shape [2, 2, 4, 16, 32]
// CHECK: %[[S:.+]] = linalg.generic {indexing_maps = [#[[QMAP]], #[[KMAP]], {{.+}}]
// CHECK-SAME: ins(%[[Q5]], %[[K]] : tensor<2x2x4x16x32xf32>, tensor<2x2x24x32xf32>) outs(%{{.+}} : tensor<2x2x4x16x24xf32>)
// Masking to -inf before normalization, causal j <= i.
// CHECK: linalg.index 3
// CHECK: linalg.index 4
// CHECK: arith.cmpi sle
// CHECK: arith.select %{{.+}}, %{{.+}}, %cst
// Row max, exp(S - m) with m = 0 for empty rows, row sum.
// CHECK: arith.maximumf
// CHECK: arith.cmpf oeq
// CHECK: math.exp
// CHECK: arith.addf
// P V reads v in place: acc = sum p v; then, only if some |acc| is inf, the
// normalized sum (p / l) v (which cannot overflow where the result is
// finite) in a second pass.
// CHECK: %[[ACC:.+]] = linalg.generic
// CHECK-SAME: ins(%{{.+}}, %[[V]] : tensor<2x2x4x16x24xf32>, tensor<2x2x24x32xf32>)
// CHECK-SAME: outs(%{{.+}} : tensor<2x2x4x16x32xf32>)
// CHECK: %[[ANY:.+]] = linalg.generic {{.*}} iterator_types = ["reduction", "reduction", "reduction", "reduction", "reduction"]
// CHECK-SAME: ins(%[[ACC]] : tensor<2x2x4x16x32xf32>) outs(%{{.+}} : tensor<i1>)
// CHECK: math.absf
// CHECK: arith.ori
// CHECK: %[[OVER:.+]] = tensor.extract %[[ANY]][] : tensor<i1>
// CHECK: scf.if %[[OVER]] -> (tensor<2x2x4x16x32xf32>)
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.+}}, %[[V]], %{{.+}} : tensor<2x2x4x16x24xf32>, tensor<2x2x24x32xf32>, tensor<2x2x4x16xf32>)
// CHECK: arith.divf
// CHECK: } else {
// CHECK: scf.yield %[[ACC]]
// out = acc / l, 0 for empty rows (not NaN), or the normalized sum where acc
// overflowed; heads merge back by reshape.
// CHECK: math.absf
// CHECK: arith.divf
// CHECK: arith.select
// CHECK: tensor.collapse_shape %{{.+}} {{\[}}[0], [1, 2], [3], [4]] : tensor<2x2x4x16x32xf32> into tensor<2x8x16x32xf32>
func.func @gqa_causal(%q: tensor<2x8x16x32xf32>, %k: tensor<2x2x24x32xf32>,
                      %v: tensor<2x2x24x32xf32>) -> tensor<2x8x16x32xf32> {
  %o = attn.attention q(%q : tensor<2x8x16x32xf32>)
      k(%k : tensor<2x2x24x32xf32>) v(%v : tensor<2x2x24x32xf32>)
      causal(top_left) -> tensor<2x8x16x32xf32>
  return %o : tensor<2x8x16x32xf32>
}

// -----

// bnhd: the head dimension is split in place at position 2; a head-indexed
// mask [Hq, Nq, Nk] is split the same way and read by (g, r, i, j).

// CHECK-DAG: #[[MMAP:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d2, d3, d4)>
// CHECK-LABEL: func.func @bnhd_mask_lse
// CHECK: tensor.expand_shape %{{.+}} {{\[}}[0], [1], [2, 3], [4]] output_shape [1, 5, 1, 4, 8]
// CHECK: tensor.expand_shape %{{.+}} {{\[}}[0, 1], [2], [3]] output_shape [1, 4, 5, 7] : tensor<4x5x7xi1>
// CHECK: linalg.generic {indexing_maps = [#[[MMAP]],
// CHECK: tensor.collapse_shape %{{.+}} {{\[}}[0], [1], [2, 3], [4]] : tensor<1x5x1x4x8xf32> into tensor<1x5x4x8xf32>
// CHECK: math.log
func.func @bnhd_mask_lse(%q: tensor<1x5x4x8xf32>, %k: tensor<1x7x1x8xf32>,
    %v: tensor<1x7x1x8xf32>, %m: tensor<4x5x7xi1>)
    -> (tensor<1x5x4x8xf32>, tensor<1x4x5xf32>) {
  %o, %l = attn.attention q(%q : tensor<1x5x4x8xf32>) k(%k : tensor<1x7x1x8xf32>)
      v(%v : tensor<1x7x1x8xf32>) layout(bnhd) mask(%m : tensor<4x5x7xi1>)
      -> tensor<1x5x4x8xf32>, tensor<1x4x5xf32>
  return %o, %l : tensor<1x5x4x8xf32>, tensor<1x4x5xf32>
}

// -----

// A mask region is evaluated per element inside the logit generic: query
// head h = g * R + r from the (g, r) loops of the grouped score tensor, then
// the region's own ops, and-ed with the structural mask (here j < Nk).
// CHECK-LABEL: func.func @per_head_mask_region
// CHECK: linalg.generic
// CHECK:   %[[R:.+]] = linalg.index 2 : index
// CHECK:   %[[G:.+]] = linalg.index 1 : index
// CHECK:   %[[GR:.+]] = arith.muli %[[G]], %c2 : index
// CHECK:   %[[H:.+]] = arith.addi %[[GR]], %[[R]] : index
// CHECK:   %[[I:.+]] = linalg.index 3 : index
// CHECK:   %[[J:.+]] = linalg.index 4 : index
// CHECK:   %[[KV:.+]] = arith.cmpi slt, %[[J]], %c16 : index
// CHECK:   %[[W:.+]] = arith.addi %[[H]], %[[I]] : index
// CHECK:   %[[OK:.+]] = arith.cmpi sle, %[[J]], %[[W]] : index
// CHECK:   %[[ALLOWED:.+]] = arith.andi %[[KV]], %[[OK]] : i1
// CHECK:   arith.select %[[ALLOWED]]
func.func @per_head_mask_region(%q: tensor<1x4x16x8xf32>, %k: tensor<1x2x16x8xf32>,
                                %v: tensor<1x2x16x8xf32>) -> tensor<1x4x16x8xf32> {
  %out = attn.attention q(%q : tensor<1x4x16x8xf32>)
      k(%k : tensor<1x2x16x8xf32>) v(%v : tensor<1x2x16x8xf32>)
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %w = arith.addi %h, %i : index
        %ok = arith.cmpi sle, %j, %w : index
        attn.yield %ok : i1
      } -> tensor<1x4x16x8xf32>
  return %out : tensor<1x4x16x8xf32>
}
