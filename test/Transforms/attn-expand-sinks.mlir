// RUN: attn-opt --attn-expand-sinks %s | FileCheck %s

// The CPU forms' attention sinks: the op without its sink (with an lse
// result), then lse' = log(e^lse + e^sink[h]) and out' = out e^(lse - lse')
// in f32, rounded to out's type, in place of out (its init).
// CHECK-DAG: #[[ID3:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[HEAD:.+]] = affine_map<(d0, d1, d2) -> (d1)>
// CHECK-DAG: #[[ID4:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[ROW:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[ROWNH:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1)>
// CHECK-LABEL: func.func @sink(
// CHECK-SAME: %[[S:[a-z0-9]+]]: tensor<8xf32>)
// CHECK: %[[OUT:.+]], %[[LSE:.+]] = attn.attention
// CHECK-NOT: sink(
// CHECK-SAME: causal(top_left) -> tensor<1x8x16x32xf16>, tensor<1x8x16xf32>
// CHECK: %[[L2:.+]] = linalg.generic {indexing_maps = [#[[ID3]], #[[HEAD]], #[[ID3]]]{{.*}} ins(%[[LSE]], %[[S]] :
// CHECK: arith.maximumf
// CHECK: math.log1p
// CHECK: linalg.generic {indexing_maps = [#[[ROW]], #[[ROW]], #[[ID4]]]{{.*}} ins(%[[LSE]], %[[L2]] : {{.*}}) outs(%[[OUT]] :
// CHECK: math.exp
// CHECK: arith.truncf {{.*}} : f32 to f16
func.func @sink(%q: tensor<1x8x16x32xf16>, %k: tensor<1x2x16x32xf16>,
                %v: tensor<1x2x16x32xf16>, %s: tensor<8xf32>)
    -> tensor<1x8x16x32xf16> {
  %0 = attn.attention q(%q : tensor<1x8x16x32xf16>) k(%k : tensor<1x2x16x32xf16>)
      v(%v : tensor<1x2x16x32xf16>) sink(%s : tensor<8xf32>) causal(top_left)
      -> tensor<1x8x16x32xf16>
  return %0 : tensor<1x8x16x32xf16>
}

// The bnhd layout reads lse [B, Hq, Nq] at (b, n, h); the op's own lse
// result is replaced by lse'.
// CHECK-LABEL: func.func @bnhd_lse(
// CHECK: %[[OUT:.+]], %[[LSE:.+]] = attn.attention {{.*}} layout(bnhd)
// CHECK: %[[L2:.+]] = linalg.generic
// CHECK: %[[O2:.+]] = linalg.generic {indexing_maps = [#[[ROWNH]], #[[ROWNH]], #[[ID4]]]{{.*}} outs(%[[OUT]] :
// CHECK: return %[[O2]], %[[L2]]
func.func @bnhd_lse(%q: tensor<2x16x4x32xf32>, %k: tensor<2x16x4x32xf32>,
                    %v: tensor<2x16x4x32xf32>, %s: tensor<4xf32>)
    -> (tensor<2x16x4x32xf32>, tensor<2x4x16xf32>) {
  %0, %1 = attn.attention q(%q : tensor<2x16x4x32xf32>) k(%k : tensor<2x16x4x32xf32>)
      v(%v : tensor<2x16x4x32xf32>) layout(bnhd) sink(%s : tensor<4xf32>)
      -> tensor<2x16x4x32xf32>, tensor<2x4x16xf32>
  return %0, %1 : tensor<2x16x4x32xf32>, tensor<2x4x16xf32>
}

// Dynamic sizes: the sink's length is checked against Hq before the
// attention, and the merge is skipped (zeros) after a failed check.
// CHECK-LABEL: func.func @dynamic(
// CHECK: %[[CTX:.+]] = call @attn_rt_error_context()
// CHECK: %[[N:.+]] = tensor.dim %{{.+}}, %c0
// CHECK: %[[H:.+]] = tensor.dim %{{.+}}, %c1
// CHECK: arith.cmpi eq, %[[N]], %[[H]]
// CHECK: call @attn_rt_check_failed(%[[CTX]]
// CHECK: attn.attention
// CHECK: call @attn_rt_has_failed(%[[CTX]])
// CHECK: scf.if
// CHECK: linalg.fill
// CHECK: } else {
// CHECK: linalg.generic
func.func @dynamic(%q: tensor<1x?x16x32xf32>, %k: tensor<1x2x16x32xf32>,
                   %v: tensor<1x2x16x32xf32>, %s: tensor<?xf32>)
    -> tensor<1x?x16x32xf32> {
  %0 = attn.attention q(%q : tensor<1x?x16x32xf32>) k(%k : tensor<1x2x16x32xf32>)
      v(%v : tensor<1x2x16x32xf32>) sink(%s : tensor<?xf32>)
      -> tensor<1x?x16x32xf32>
  return %0 : tensor<1x?x16x32xf32>
}
