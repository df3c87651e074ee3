// RUN: attn-opt %s --attn-expand-key-padding --split-input-file | FileCheck %s

// Key padding becomes bounds of the mask region: kv_start as j >= first[b],
// key_mask as m[b, j]; alone, and-ed with the user's mask region, and beside a
// score region (which gets the new block arguments unused). Ops without key
// padding are left alone.

// CHECK-LABEL: func.func @alone
// CHECK-SAME: (%[[Q:.+]]: tensor<2x4x16x32xf32>, %[[FIRST:.+]]: tensor<2xi32>)
// CHECK: attn.attention
// CHECK-NOT: kv_start
// CHECK-SAME: mod_inputs(%[[FIRST]] : tensor<2xi32>) causal(top_left) mask_mod {
// CHECK-NEXT: ^bb0(%[[B:.+]]: index, %{{.+}}: index, %{{.+}}: index, %[[J:.+]]: index, %[[T:.+]]: tensor<2xi32>):
// CHECK-NEXT:   %[[S:.+]] = tensor.extract %[[T]][%[[B]]] : tensor<2xi32>
// CHECK-NEXT:   %[[SI:.+]] = arith.index_cast %[[S]] : i32 to index
// CHECK-NEXT:   %[[OK:.+]] = arith.cmpi sge, %[[J]], %[[SI]] : index
// CHECK-NEXT:   attn.yield %[[OK]] : i1
func.func @alone(%q: tensor<2x4x16x32xf32>, %first: tensor<2xi32>)
    -> tensor<2x4x16x32xf32> {
  %o = attn.attention q(%q : tensor<2x4x16x32xf32>)
      k(%q : tensor<2x4x16x32xf32>) v(%q : tensor<2x4x16x32xf32>)
      kv_start(%first : tensor<2xi32>) causal(top_left)
      -> tensor<2x4x16x32xf32>
  return %o : tensor<2x4x16x32xf32>
}

// -----

// CHECK-LABEL: func.func @with_regions
// CHECK-SAME: (%[[Q:.+]]: tensor<2x4x16x32xf32>, %[[DOC:.+]]: tensor<16xi32>, %[[FIRST:.+]]: tensor<2xi64>)
// CHECK: attn.attention
// CHECK-SAME: mod_inputs(%[[DOC]], %[[FIRST]] : tensor<16xi32>, tensor<2xi64>) score_mod {
// CHECK-NEXT: ^bb0(%{{.+}}: index, %{{.+}}: index, %{{.+}}: index, %{{.+}}: index, %[[SC:.+]]: f32, %{{.+}}: tensor<16xi32>, %{{.+}}: tensor<2xi64>):
// CHECK-NEXT:   attn.yield %[[SC]] : f32
// CHECK:      mask_mod {
// CHECK-NEXT: ^bb0(%[[B:.+]]: index, %{{.+}}: index, %[[I:.+]]: index, %[[J:.+]]: index, %[[D:.+]]: tensor<16xi32>, %[[T:.+]]: tensor<2xi64>):
// CHECK:        %[[SAME:.+]] = arith.cmpi eq
// CHECK-NEXT:   %[[S:.+]] = tensor.extract %[[T]][%[[B]]] : tensor<2xi64>
// CHECK-NEXT:   %[[SI:.+]] = arith.index_cast %[[S]] : i64 to index
// CHECK-NEXT:   %[[OK:.+]] = arith.cmpi sge, %[[J]], %[[SI]] : index
// CHECK-NEXT:   %[[BOTH:.+]] = arith.andi %[[SAME]], %[[OK]] : i1
// CHECK-NEXT:   attn.yield %[[BOTH]] : i1
func.func @with_regions(%q: tensor<2x4x16x32xf32>, %doc: tensor<16xi32>,
                        %first: tensor<2xi64>) -> tensor<2x4x16x32xf32> {
  %o = attn.attention q(%q : tensor<2x4x16x32xf32>)
      k(%q : tensor<2x4x16x32xf32>) v(%q : tensor<2x4x16x32xf32>)
      kv_start(%first : tensor<2xi64>) mod_inputs(%doc : tensor<16xi32>)
      score_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32,
           %d: tensor<16xi32>):
        attn.yield %s : f32
      } mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %d: tensor<16xi32>):
        %di = tensor.extract %d[%i] : tensor<16xi32>
        %dj = tensor.extract %d[%j] : tensor<16xi32>
        %same = arith.cmpi eq, %di, %dj : i32
        attn.yield %same : i1
      } -> tensor<2x4x16x32xf32>
  return %o : tensor<2x4x16x32xf32>
}

// -----

// CHECK-LABEL: func.func @projected
// CHECK: attn.projected_attention
// CHECK-NOT: kv_start
// CHECK-SAME: mod_inputs(%{{.+}} : tensor<2xi32>) causal(top_left) mask_mod {
// CHECK: arith.cmpi sge
func.func @projected(%x: tensor<2x8x64xf32>, %wq: tensor<64x64xf32>,
                     %wk: tensor<64x32xf32>, %wv: tensor<64x32xf32>,
                     %wo: tensor<64x64xf32>, %first: tensor<2xi32>)
    -> tensor<2x8x64xf32> {
  %y = attn.projected_attention x(%x : tensor<2x8x64xf32>)
      wq(%wq : tensor<64x64xf32>) wk(%wk : tensor<64x32xf32>)
      wv(%wv : tensor<64x32xf32>) wo(%wo : tensor<64x64xf32>)
      heads(4, 2) kv_start(%first : tensor<2xi32>) causal(top_left)
      -> tensor<2x8x64xf32>
  return %y : tensor<2x8x64xf32>
}

// -----

// CHECK-LABEL: func.func @untouched
// CHECK: attn.attention q(%{{.+}} : tensor<1x2x4x8xf32>) k(%{{.+}} : tensor<1x2x4x8xf32>) v(%{{.+}} : tensor<1x2x4x8xf32>) kv_len(%{{.+}} : tensor<1xi32>) -> tensor<1x2x4x8xf32>
func.func @untouched(%q: tensor<1x2x4x8xf32>, %len: tensor<1xi32>)
    -> tensor<1x2x4x8xf32> {
  %o = attn.attention q(%q : tensor<1x2x4x8xf32>) k(%q : tensor<1x2x4x8xf32>)
      v(%q : tensor<1x2x4x8xf32>) kv_len(%len : tensor<1xi32>)
      -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// Both: kv_start first, then the key mask.
// CHECK-LABEL: func.func @both
// CHECK-SAME: (%[[Q:.+]]: tensor<2x4x16x32xf32>, %[[FIRST:.+]]: tensor<2xi32>, %[[M:.+]]: tensor<2x16xi1>)
// CHECK: attn.attention
// CHECK-NOT: key_mask
// CHECK-SAME: mod_inputs(%[[FIRST]], %[[M]] : tensor<2xi32>, tensor<2x16xi1>) mask_mod {
// CHECK-NEXT: ^bb0(%[[B:.+]]: index, %{{.+}}: index, %{{.+}}: index, %[[J:.+]]: index, %[[T:.+]]: tensor<2xi32>, %[[KM:.+]]: tensor<2x16xi1>):
// CHECK-NEXT:   %[[S:.+]] = tensor.extract %[[T]][%[[B]]] : tensor<2xi32>
// CHECK-NEXT:   %[[SI:.+]] = arith.index_cast %[[S]] : i32 to index
// CHECK-NEXT:   %[[OK:.+]] = arith.cmpi sge, %[[J]], %[[SI]] : index
// CHECK-NEXT:   %[[REAL:.+]] = tensor.extract %[[KM]][%[[B]], %[[J]]] : tensor<2x16xi1>
// CHECK-NEXT:   %[[BOTH:.+]] = arith.andi %[[OK]], %[[REAL]] : i1
// CHECK-NEXT:   attn.yield %[[BOTH]] : i1
func.func @both(%q: tensor<2x4x16x32xf32>, %first: tensor<2xi32>,
                %m: tensor<2x16xi1>) -> tensor<2x4x16x32xf32> {
  %o = attn.attention q(%q : tensor<2x4x16x32xf32>)
      k(%q : tensor<2x4x16x32xf32>) v(%q : tensor<2x4x16x32xf32>)
      key_mask(%m : tensor<2x16xi1>) kv_start(%first : tensor<2xi32>)
      -> tensor<2x4x16x32xf32>
  return %o : tensor<2x4x16x32xf32>
}
