// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s

// Round trip of the user's variants: score_mod and mask_mod regions, the
// tensors they read (mod_inputs), align() without causal, and modifiers
// written in any order (printed in the canonical order).

// CHECK-LABEL: func.func @any_order
// CHECK: attn.attention {{.*}} causal(top_left) window_left(4) scale(5.000000e-01) softcap(3.000000e+01) -> tensor<1x2x8x16xf32>
func.func @any_order(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%q : tensor<1x2x8x16xf32>)
      v(%q : tensor<1x2x8x16xf32>) softcap(30.0) scale(0.5) window_left(4)
      causal(top_left) -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// CHECK-LABEL: func.func @layout_last
// CHECK: attn.attention {{.*}} layout(bnhd) causal(bottom_right) -> tensor<1x8x2x16xf32>
func.func @layout_last(%q: tensor<1x8x2x16xf32>) -> tensor<1x8x2x16xf32> {
  %0 = attn.attention q(%q : tensor<1x8x2x16xf32>) k(%q : tensor<1x8x2x16xf32>)
      v(%q : tensor<1x8x2x16xf32>) causal(bottom_right) layout(bnhd) -> tensor<1x8x2x16xf32>
  return %0 : tensor<1x8x2x16xf32>
}

// A window on the bottom-right diagonal without a causal mask.
// CHECK-LABEL: func.func @aligned_window
// CHECK: attn.attention {{.*}} kv_len(%{{.*}} : tensor<1xi32>) align(bottom_right) window_left(3) window_right(2) -> tensor<1x2x4x16xf32>
func.func @aligned_window(%q: tensor<1x2x4x16xf32>, %k: tensor<1x2x8x16xf32>,
                          %len: tensor<1xi32>) -> tensor<1x2x4x16xf32> {
  %0 = attn.attention q(%q : tensor<1x2x4x16xf32>) k(%k : tensor<1x2x8x16xf32>)
      v(%k : tensor<1x2x8x16xf32>) window_right(2) align(bottom_right)
      window_left(3) kv_len(%len : tensor<1xi32>) -> tensor<1x2x4x16xf32>
  return %0 : tensor<1x2x4x16xf32>
}

// Document masking: the mask reads a document id per token.
// CHECK-LABEL: func.func @document_mask
// CHECK: attn.attention {{.*}} mod_inputs(%{{.*}} : tensor<?xi32>) mask_mod {
// CHECK-NEXT: ^bb0(%{{.*}}: index, %{{.*}}: index, %[[I:.*]]: index, %[[J:.*]]: index, %[[D:.*]]: tensor<?xi32>):
// CHECK-NEXT: %[[DI:.*]] = tensor.extract %[[D]][%[[I]]] : tensor<?xi32>
// CHECK-NEXT: %[[DJ:.*]] = tensor.extract %[[D]][%[[J]]] : tensor<?xi32>
// CHECK-NEXT: %[[EQ:.*]] = arith.cmpi eq, %[[DI]], %[[DJ]] : i32
// CHECK-NEXT: attn.yield %[[EQ]] : i1
// CHECK-NEXT: } -> tensor<1x2x?x16xf32>
func.func @document_mask(%q: tensor<1x2x?x16xf32>, %doc: tensor<?xi32>) -> tensor<1x2x?x16xf32> {
  %0 = attn.attention q(%q : tensor<1x2x?x16xf32>) k(%q : tensor<1x2x?x16xf32>)
      v(%q : tensor<1x2x?x16xf32>) mod_inputs(%doc : tensor<?xi32>)
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %d: tensor<?xi32>):
        %di = tensor.extract %d[%i] : tensor<?xi32>
        %dj = tensor.extract %d[%j] : tensor<?xi32>
        %same = arith.cmpi eq, %di, %dj : i32
        attn.yield %same : i1
      } -> tensor<1x2x?x16xf32>
  return %0 : tensor<1x2x?x16xf32>
}

// A score region (tanh soft cap) and a mask region (prefix-LM) together,
// with a per-head table read by the score region.
// CHECK-LABEL: func.func @score_and_mask
// CHECK: attn.attention {{.*}} mod_inputs(%{{.*}} : tensor<2xf32>) causal(top_left) score_mod {
// CHECK-NEXT: ^bb0(%{{.*}}: index, %[[H:.*]]: index, %{{.*}}: index, %{{.*}}: index, %[[S:.*]]: f32, %[[T:.*]]: tensor<2xf32>):
// CHECK: math.tanh
// CHECK: attn.yield %{{.*}} : f32
// CHECK-NEXT: } mask_mod {
// CHECK: arith.ori
// CHECK: attn.yield %{{.*}} : i1
func.func @score_and_mask(%q: tensor<1x2x8x16xf32>, %t: tensor<2xf32>) -> tensor<1x2x8x16xf32> {
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%q : tensor<1x2x8x16xf32>)
      v(%q : tensor<1x2x8x16xf32>)
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %t2: tensor<2xf32>):
        %c4 = arith.constant 4 : index
        %prefix = arith.cmpi slt, %j, %c4 : index
        %past = arith.cmpi sle, %j, %i : index
        %ok = arith.ori %prefix, %past : i1
        attn.yield %ok : i1
      }
      score_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32, %t2: tensor<2xf32>):
        %cap = tensor.extract %t2[%h] : tensor<2xf32>
        %x = arith.divf %s, %cap : f32
        %y = math.tanh %x : f32
        %z = arith.mulf %y, %cap : f32
        attn.yield %z : f32
      }
      mod_inputs(%t : tensor<2xf32>) causal(top_left) -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// The projection-level op takes the same regions.
// CHECK-LABEL: func.func @projected_mask
// CHECK: attn.projected_attention {{.*}} heads(4, 2) mask_mod {
// CHECK: attn.yield %{{.*}} : i1
func.func @projected_mask(%x: tensor<2x5x64xf32>, %w: tensor<64x64xf32>,
                          %w2: tensor<64x32xf32>) -> tensor<2x5x64xf32> {
  %0 = attn.projected_attention x(%x : tensor<2x5x64xf32>) wq(%w : tensor<64x64xf32>)
      wk(%w2 : tensor<64x32xf32>) wv(%w2 : tensor<64x32xf32>) wo(%w : tensor<64x64xf32>)
      heads(4, 2) mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %d = arith.subi %i, %j : index
        %c2 = arith.constant 2 : index
        %r = arith.remsi %d, %c2 : index
        %c0 = arith.constant 0 : index
        %even = arith.cmpi eq, %r, %c0 : index
        attn.yield %even : i1
      } -> tensor<2x5x64xf32>
  return %0 : tensor<2x5x64xf32>
}
