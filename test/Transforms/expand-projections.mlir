// RUN: attn-opt %s --attn-expand-projections --split-input-file | FileCheck %s

// attn.projected_attention becomes the seed's pipeline: projections on the
// [B*N, D] rows, a head split that is a pure reshape to [B, N, H, Dh] (the
// bnhd layout, no transpose), attn.attention layout(bnhd), the inverse
// reshape and the output projection.

// CHECK-LABEL: func.func @self_attention
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<2x16x64xf32>
// CHECK-SAME: %[[WQ:[a-zA-Z0-9_]+]]: tensor<64x64xf32>
// CHECK-SAME: %[[WK:[a-zA-Z0-9_]+]]: tensor<64x32xf32>
// CHECK-SAME: %[[WV:[a-zA-Z0-9_]+]]: tensor<64x32xf32>
// CHECK-SAME: %[[WO:[a-zA-Z0-9_]+]]: tensor<64x64xf32>
// CHECK: %[[QP:.+]] = linalg.generic {{.*}} ins(%[[X]], %[[WQ]] : tensor<2x16x64xf32>, tensor<64x64xf32>) outs(%{{.+}} : tensor<2x16x64xf32>)
// CHECK: %[[Q:.+]] = tensor.expand_shape %[[QP]] {{\[}}[0], [1], [2, 3]] output_shape [2, 16, 4, 16] : tensor<2x16x64xf32> into tensor<2x16x4x16xf32>
// CHECK: %[[KP:.+]] = linalg.generic {{.*}} ins(%[[X]], %[[WK]] : {{.*}}) outs(%{{.+}} : tensor<2x16x32xf32>)
// CHECK: %[[K:.+]] = tensor.expand_shape %[[KP]] {{.*}} into tensor<2x16x2x16xf32>
// CHECK: %[[VP:.+]] = linalg.generic {{.*}} ins(%[[X]], %[[WV]] : {{.*}}) outs(%{{.+}} : tensor<2x16x32xf32>)
// CHECK: %[[V:.+]] = tensor.expand_shape %[[VP]] {{.*}} into tensor<2x16x2x16xf32>
// CHECK-NOT: linalg.transpose
// CHECK: %[[OUT:.+]] = attn.attention q(%[[Q]] : tensor<2x16x4x16xf32>) k(%[[K]] : tensor<2x16x2x16xf32>) v(%[[V]] : tensor<2x16x2x16xf32>) layout(bnhd) causal(top_left) -> tensor<2x16x4x16xf32>
// CHECK: %[[Z:.+]] = tensor.collapse_shape %[[OUT]] {{\[}}[0], [1], [2, 3]] : tensor<2x16x4x16xf32> into tensor<2x16x64xf32>
// CHECK: %[[Y:.+]] = linalg.generic {{.*}} ins(%[[Z]], %[[WO]] : {{.*}}) outs(%{{.+}} : tensor<2x16x64xf32>)
// CHECK: return %[[Y]]
// CHECK-NOT: attn.projected_attention
func.func @self_attention(%x: tensor<2x16x64xf32>, %wq: tensor<64x64xf32>,
                          %wk: tensor<64x32xf32>, %wv: tensor<64x32xf32>,
                          %wo: tensor<64x64xf32>) -> tensor<2x16x64xf32> {
  %y = attn.projected_attention x(%x : tensor<2x16x64xf32>)
      wq(%wq : tensor<64x64xf32>) wk(%wk : tensor<64x32xf32>)
      wv(%wv : tensor<64x32xf32>) wo(%wo : tensor<64x64xf32>) heads(4, 2)
      causal(top_left) -> tensor<2x16x64xf32>
  return %y : tensor<2x16x64xf32>
}

// -----

// Cross-attention: Q from the decoder state (Nq = 6), K and V from the
// encoder memory (Nk = 20); MQA (one K/V head), Dv = 8 != Dqk = 16.
// CHECK-LABEL: func.func @cross_attention
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<2x6x64xf32>
// CHECK-SAME: %[[MEM:[a-zA-Z0-9_]+]]: tensor<2x20x64xf32>
// CHECK-SAME: %[[LEN:[a-zA-Z0-9_]+]]: tensor<2xi32>
// CHECK: linalg.generic {{.*}} ins(%[[X]], {{.*}}) outs(%{{.+}} : tensor<2x6x64xf32>)
// CHECK: %[[Q:.+]] = tensor.expand_shape {{.*}} into tensor<2x6x4x16xf32>
// CHECK: linalg.generic {{.*}} ins(%[[MEM]], {{.*}}) outs(%{{.+}} : tensor<2x20x16xf32>)
// CHECK: %[[K:.+]] = tensor.expand_shape {{.*}} into tensor<2x20x1x16xf32>
// CHECK: linalg.generic {{.*}} ins(%[[MEM]], {{.*}}) outs(%{{.+}} : tensor<2x20x8xf32>)
// CHECK: %[[V:.+]] = tensor.expand_shape {{.*}} into tensor<2x20x1x8xf32>
// CHECK: %[[OUT:.+]] = attn.attention q(%[[Q]] : tensor<2x6x4x16xf32>) k(%[[K]] : tensor<2x20x1x16xf32>) v(%[[V]] : tensor<2x20x1x8xf32>) layout(bnhd) kv_len(%[[LEN]] : tensor<2xi32>) -> tensor<2x6x4x8xf32>
// CHECK: %[[Z:.+]] = tensor.collapse_shape %[[OUT]] {{.*}} into tensor<2x6x32xf32>
// CHECK: linalg.generic {{.*}} ins(%[[Z]], {{.*}} : tensor<2x6x32xf32>, tensor<32x64xf32>) outs(%{{.+}} : tensor<2x6x64xf32>)
func.func @cross_attention(%x: tensor<2x6x64xf32>, %mem: tensor<2x20x64xf32>,
                           %len: tensor<2xi32>, %wq: tensor<64x64xf32>,
                           %wk: tensor<64x16xf32>, %wv: tensor<64x8xf32>,
                           %wo: tensor<32x64xf32>) -> tensor<2x6x64xf32> {
  %y = attn.projected_attention x(%x : tensor<2x6x64xf32>)
      kv_source(%mem : tensor<2x20x64xf32>)
      wq(%wq : tensor<64x64xf32>) wk(%wk : tensor<64x16xf32>)
      wv(%wv : tensor<64x8xf32>) wo(%wo : tensor<32x64xf32>) heads(4, 1)
      kv_len(%len : tensor<2xi32>) -> tensor<2x6x64xf32>
  return %y : tensor<2x6x64xf32>
}

// -----

// f16: projections accumulate in f32 and round back with arith.truncf; the
// core op sees f16 Q, K, V.
// CHECK-LABEL: func.func @f16_rounds_accumulator
// CHECK: %[[ACC:.+]] = linalg.generic {{.*}} ins({{.*}} : tensor<2x8x32xf16>, tensor<32x32xf16>) outs({{.*}} : tensor<2x8x32xf32>)
// CHECK:   arith.extf
// CHECK: linalg.generic {{.*}} ins(%[[ACC]] : tensor<2x8x32xf32>) outs({{.*}} : tensor<2x8x32xf16>)
// CHECK: arith.truncf %{{.+}} : f32 to f16
// CHECK: attn.attention q(%{{.+}} : tensor<2x8x4x8xf16>) k(%{{.+}} : tensor<2x8x4x8xf16>) v(%{{.+}} : tensor<2x8x4x8xf16>) layout(bnhd) -> tensor<2x8x4x8xf16>
// CHECK: linalg.generic {{.*}} outs(%{{.+}} : tensor<2x8x32xf32>)
// CHECK: arith.truncf
// CHECK: return {{.*}} : tensor<2x8x32xf16>
func.func @f16_rounds_accumulator(%x: tensor<2x8x32xf16>, %w: tensor<32x32xf16>)
    -> tensor<2x8x32xf16> {
  %y = attn.projected_attention x(%x : tensor<2x8x32xf16>)
      wq(%w : tensor<32x32xf16>) wk(%w : tensor<32x32xf16>)
      wv(%w : tensor<32x32xf16>) wo(%w : tensor<32x32xf16>) heads(4, 4)
      -> tensor<2x8x32xf16>
  return %y : tensor<2x8x32xf16>
}

// -----

// Dynamic batch and sequence lengths: the head split reads them with
// tensor.dim; heads and head dimensions stay static.
// CHECK-LABEL: func.func @dynamic_sizes
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<?x?x32xf32>
// B and N stay separate dimensions: no reshape splits B*N, a product of two
// run-time sizes (MLIR 22 cannot lower such a memref.expand_shape).
// CHECK-NOT: tensor.collapse_shape %[[X]]
// CHECK: linalg.generic {{.*}} ins(%[[X]], {{.*}}) outs(%{{.+}} : tensor<?x?x32xf32>)
// CHECK: tensor.expand_shape {{.*}} {{\[}}[0], [1], [2, 3]] output_shape [%{{.+}}, %{{.+}}, 4, 8] : tensor<?x?x32xf32> into tensor<?x?x4x8xf32>
// CHECK: attn.attention {{.*}} layout(bnhd) {{.*}}-> tensor<?x?x4x8xf32>
// CHECK: tensor.collapse_shape {{.*}} : tensor<?x?x4x8xf32> into tensor<?x?x32xf32>
// CHECK: linalg.generic {{.*}} outs(%{{.+}} : tensor<?x?x32xf32>)
func.func @dynamic_sizes(%x: tensor<?x?x32xf32>, %wq: tensor<32x32xf32>,
                         %wkv: tensor<32x16xf32>, %wo: tensor<32x32xf32>)
    -> tensor<?x?x32xf32> {
  %y = attn.projected_attention x(%x : tensor<?x?x32xf32>)
      wq(%wq : tensor<32x32xf32>) wk(%wkv : tensor<32x16xf32>)
      wv(%wkv : tensor<32x16xf32>) wo(%wo : tensor<32x32xf32>) heads(4, 2)
      causal(bottom_right) -> tensor<?x?x32xf32>
  return %y : tensor<?x?x32xf32>
}

// -----

// Every modifier is carried over unchanged; mask and bias stay in the logical
// [B, Hq, Nq, Nk] order, which does not depend on the layout.
// CHECK-LABEL: func.func @modifiers_carried_over
// CHECK-SAME: %[[LEN:[a-zA-Z0-9_]+]]: tensor<2xi64>
// CHECK-SAME: %[[M:[a-zA-Z0-9_]+]]: tensor<2x1x5x9xi1>
// CHECK-SAME: %[[BIAS:[a-zA-Z0-9_]+]]: tensor<4x5x9xf32>
// CHECK-SAME: %[[S:[a-zA-Z0-9_]+]]: tensor<4xf32>
// CHECK: attn.attention q(%{{.+}} : tensor<2x5x4x16xf32>) k(%{{.+}} : tensor<2x9x2x16xf32>) v(%{{.+}} : tensor<2x9x2x16xf32>) layout(bnhd)
// CHECK-SAME: kv_len(%[[LEN]] : tensor<2xi64>) mask(%[[M]] : tensor<2x1x5x9xi1>) bias(%[[BIAS]] : tensor<4x5x9xf32>) alibi(%[[S]] : tensor<4xf32>)
// CHECK-SAME: causal(bottom_right) window_left(3) window_right(1) scale(1.250000e-01) softcap(3.000000e+01) norm(sigmoid)
// CHECK-SAME: -> tensor<2x5x4x16xf32>
func.func @modifiers_carried_over(%x: tensor<2x5x64xf32>, %mem: tensor<2x9x64xf32>,
                                  %len: tensor<2xi64>, %m: tensor<2x1x5x9xi1>,
                                  %b: tensor<4x5x9xf32>, %s: tensor<4xf32>,
                                  %wq: tensor<64x64xf32>, %wkv: tensor<64x32xf32>)
    -> tensor<2x5x64xf32> {
  %y = attn.projected_attention x(%x : tensor<2x5x64xf32>)
      kv_source(%mem : tensor<2x9x64xf32>)
      wq(%wq : tensor<64x64xf32>) wk(%wkv : tensor<64x32xf32>)
      wv(%wkv : tensor<64x32xf32>) wo(%wq : tensor<64x64xf32>) heads(4, 2)
      kv_len(%len : tensor<2xi64>) mask(%m : tensor<2x1x5x9xi1>)
      bias(%b : tensor<4x5x9xf32>) alibi(%s : tensor<4xf32>)
      causal(bottom_right) window_left(3) window_right(1) scale(0.125)
      softcap(30.0) norm(sigmoid) -> tensor<2x5x64xf32>
  return %y : tensor<2x5x64xf32>
}

// -----

// The core op is already expanded: the pass leaves it alone.
// CHECK-LABEL: func.func @core_op_untouched
// CHECK-NEXT: attn.attention {{.*}} causal(top_left) -> tensor<1x2x8x16xf32>
// CHECK-NEXT: return
func.func @core_op_untouched(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%q : tensor<1x2x8x16xf32>)
      v(%q : tensor<1x2x8x16xf32>) causal(top_left) -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

// A dynamic source with a static result (and the reverse) keeps valid IR:
// the output projection gets the type its sizes give, then a cast to the
// op's type.
// CHECK-LABEL: func.func @dynamic_source_static_result
// CHECK: tensor.collapse_shape {{.*}} into tensor<?x?x64xf32>
// CHECK: linalg.generic {{.*}} outs(%{{.+}} : tensor<?x?x64xf32>)
// CHECK: tensor.cast {{.*}} : tensor<?x?x64xf32> to tensor<2x5x64xf32>
func.func @dynamic_source_static_result(%x: tensor<?x?x64xf32>,
    %w: tensor<64x64xf32>) -> tensor<2x5x64xf32> {
  %0 = attn.projected_attention x(%x : tensor<?x?x64xf32>)
      wq(%w : tensor<64x64xf32>) wk(%w : tensor<64x64xf32>)
      wv(%w : tensor<64x64xf32>) wo(%w : tensor<64x64xf32>)
      heads(4, 4) -> tensor<2x5x64xf32>
  return %0 : tensor<2x5x64xf32>
}

// -----

// CHECK-LABEL: func.func @static_source_dynamic_result
// CHECK: tensor.collapse_shape {{.*}} into tensor<2x5x64xf32>
// CHECK: linalg.generic {{.*}} outs(%{{.+}} : tensor<2x5x64xf32>)
// CHECK: tensor.cast {{.*}} : tensor<2x5x64xf32> to tensor<?x?x64xf32>
func.func @static_source_dynamic_result(%x: tensor<2x5x64xf32>,
    %w: tensor<64x64xf32>) -> tensor<?x?x64xf32> {
  %0 = attn.projected_attention x(%x : tensor<2x5x64xf32>)
      wq(%w : tensor<64x64xf32>) wk(%w : tensor<64x64xf32>)
      wv(%w : tensor<64x64xf32>) wo(%w : tensor<64x64xf32>)
      heads(4, 4) -> tensor<?x?x64xf32>
  return %0 : tensor<?x?x64xf32>
}

// -----

// The user's regions and the tensors they read move to the expanded op
// unchanged (b, query head h, row i and key j mean the same there).
// CHECK-LABEL: func.func @regions_move
// CHECK-SAME: %[[POS:[a-zA-Z0-9_]+]]: tensor<5xi32>
// CHECK: attn.attention {{.*}} layout(bnhd) mod_inputs(%[[POS]] : tensor<5xi32>) causal(top_left) score_mod {
// CHECK: math.tanh
// CHECK: } mask_mod {
// CHECK: tensor.extract
// CHECK-NOT: attn.projected_attention
func.func @regions_move(%x: tensor<2x5x64xf32>, %w: tensor<64x64xf32>,
                        %pos: tensor<5xi32>) -> tensor<2x5x64xf32> {
  %0 = attn.projected_attention x(%x : tensor<2x5x64xf32>) wq(%w : tensor<64x64xf32>)
      wk(%w : tensor<64x64xf32>) wv(%w : tensor<64x64xf32>) wo(%w : tensor<64x64xf32>)
      heads(4, 4) causal(top_left) mod_inputs(%pos : tensor<5xi32>)
      score_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32, %p: tensor<5xi32>):
        %t = math.tanh %s : f32
        attn.yield %t : f32
      }
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %p: tensor<5xi32>):
        %pi = tensor.extract %p[%i] : tensor<5xi32>
        %pj = tensor.extract %p[%j] : tensor<5xi32>
        %ok = arith.cmpi sge, %pi, %pj : i32
        attn.yield %ok : i1
      } -> tensor<2x5x64xf32>
  return %0 : tensor<2x5x64xf32>
}
