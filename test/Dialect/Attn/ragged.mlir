// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s

// Round trip of ragged batches: packed q, k, v with B = 1 and per-sequence
// offsets, both layouts, i32 and i64 offsets, dynamic token counts, GQA,
// lse and the modifiers that compose with them.

// CHECK-LABEL: func.func @prefill
// CHECK: attn.attention q(%{{.+}} : tensor<1x8x?x64xf32>) k(%{{.+}} : tensor<1x2x?x64xf32>) v(%{{.+}} : tensor<1x2x?x64xf32>) ragged(%{{.+}}, %{{.+}} : tensor<9xi32>, tensor<9xi32>) causal(bottom_right) -> tensor<1x8x?x64xf32>, tensor<1x8x?xf32>
func.func @prefill(%q: tensor<1x8x?x64xf32>, %k: tensor<1x2x?x64xf32>,
                   %v: tensor<1x2x?x64xf32>, %cq: tensor<9xi32>,
                   %ck: tensor<9xi32>) -> (tensor<1x8x?x64xf32>, tensor<1x8x?xf32>) {
  %o, %l = attn.attention q(%q : tensor<1x8x?x64xf32>)
      k(%k : tensor<1x2x?x64xf32>) v(%v : tensor<1x2x?x64xf32>)
      ragged(%cq, %ck : tensor<9xi32>, tensor<9xi32>) causal(bottom_right)
      -> tensor<1x8x?x64xf32>, tensor<1x8x?xf32>
  return %o, %l : tensor<1x8x?x64xf32>, tensor<1x8x?xf32>
}

// CHECK-LABEL: func.func @varlen_bnhd
// CHECK: ragged(%{{.+}}, %{{.+}} : tensor<?xi64>, tensor<?xi64>) layout(bnhd) alibi(%{{.+}} : tensor<4xf32>) causal(top_left) window_left(16) softcap(3.000000e+01)
func.func @varlen_bnhd(%q: tensor<1x100x4x32xbf16>, %k: tensor<1x120x4x32xbf16>,
                       %v: tensor<1x120x4x32xbf16>, %cq: tensor<?xi64>,
                       %ck: tensor<?xi64>, %s: tensor<4xf32>) -> tensor<1x100x4x32xbf16> {
  %o = attn.attention q(%q : tensor<1x100x4x32xbf16>)
      k(%k : tensor<1x120x4x32xbf16>) v(%v : tensor<1x120x4x32xbf16>)
      ragged(%cq, %ck : tensor<?xi64>, tensor<?xi64>) layout(bnhd)
      alibi(%s : tensor<4xf32>) causal(top_left) window_left(16) softcap(30.0)
      -> tensor<1x100x4x32xbf16>
  return %o : tensor<1x100x4x32xbf16>
}

// ragged(...) may stand anywhere among the modifiers (it prints first).
// CHECK-LABEL: func.func @any_order
// CHECK: v(%{{.+}} : tensor<1x2x?x8xf32>) ragged(%{{.+}}, %{{.+}} : tensor<3xi32>, tensor<3xi32>) causal(bottom_right) window_left(4) -> tensor<1x2x?x8xf32>
func.func @any_order(%q: tensor<1x2x?x8xf32>, %cq: tensor<3xi32>,
                     %ck: tensor<3xi32>) -> tensor<1x2x?x8xf32> {
  %o = attn.attention q(%q : tensor<1x2x?x8xf32>)
      k(%q : tensor<1x2x?x8xf32>) v(%q : tensor<1x2x?x8xf32>)
      causal(bottom_right) window_left(4)
      ragged(%cq, %ck : tensor<3xi32>, tensor<3xi32>) -> tensor<1x2x?x8xf32>
  return %o : tensor<1x2x?x8xf32>
}

// Chunked prefill over a paged cache: query offsets only, keys through the
// page table (a row per sequence) and kv_len (an entry per sequence).
// CHECK-LABEL: func.func @chunked_prefill
// CHECK: page_table(%{{.+}} : tensor<4x64xi32>) ragged(%{{.+}} : tensor<5xi32>) kv_len(%{{.+}} : tensor<4xi32>) causal(bottom_right) -> tensor<1x8x?x64xf16>
func.func @chunked_prefill(%q: tensor<1x8x?x64xf16>, %kp: tensor<256x2x16x64xf16>,
                           %vp: tensor<256x2x16x64xf16>, %cq: tensor<5xi32>,
                           %pt: tensor<4x64xi32>, %len: tensor<4xi32>)
    -> tensor<1x8x?x64xf16> {
  %o = attn.attention q(%q : tensor<1x8x?x64xf16>)
      k(%kp : tensor<256x2x16x64xf16>) v(%vp : tensor<256x2x16x64xf16>)
      ragged(%cq : tensor<5xi32>) page_table(%pt : tensor<4x64xi32>)
      kv_len(%len : tensor<4xi32>) causal(bottom_right)
      -> tensor<1x8x?x64xf16>
  return %o : tensor<1x8x?x64xf16>
}

// kv_len per sequence over packed keys, a mask and a bias over packed rows,
// a mask_mod region.
// CHECK-LABEL: func.func @packed_modifiers
// CHECK: ragged(%{{.+}}, %{{.+}} : tensor<3xi32>, tensor<3xi32>) kv_len(%{{.+}} : tensor<2xi32>) mask(%{{.+}} : tensor<1x1x10x12xi1>) bias(%{{.+}} : tensor<10x12xf32>)
// CHECK: mask_mod
func.func @packed_modifiers(%q: tensor<1x2x10x8xf32>, %k: tensor<1x2x12x8xf32>,
                            %cq: tensor<3xi32>, %ck: tensor<3xi32>,
                            %len: tensor<2xi32>, %m: tensor<1x1x10x12xi1>,
                            %bias: tensor<10x12xf32>) -> tensor<1x2x10x8xf32> {
  %o = attn.attention q(%q : tensor<1x2x10x8xf32>)
      k(%k : tensor<1x2x12x8xf32>) v(%k : tensor<1x2x12x8xf32>)
      ragged(%cq, %ck : tensor<3xi32>, tensor<3xi32>)
      kv_len(%len : tensor<2xi32>) mask(%m : tensor<1x1x10x12xi1>)
      bias(%bias : tensor<10x12xf32>)
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %t = arith.cmpi ne, %b, %j : index
        attn.yield %t : i1
      } -> tensor<1x2x10x8xf32>
  return %o : tensor<1x2x10x8xf32>
}
