// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s

// Round trip of every attn feature: both layouts, every modifier, lse, every
// element type, dynamic sizes, MHA/GQA/MQA, cross-attention and the
// projection-level op. Default-valued attributes (layout(bhnd),
// norm(softmax)) are elided by the printer.

//===----------------------------------------------------------------------===//
// attn.attention: head grouping and layouts
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @mha_bhnd
// CHECK-SAME: %[[Q:[a-zA-Z0-9_]+]]: tensor<2x4x16x32xf32>
// CHECK-SAME: %[[K:[a-zA-Z0-9_]+]]: tensor<2x4x16x32xf32>
// CHECK-SAME: %[[V:[a-zA-Z0-9_]+]]: tensor<2x4x16x32xf32>
// CHECK: %[[OUT:.+]] = attn.attention q(%[[Q]] : tensor<2x4x16x32xf32>) k(%[[K]] : tensor<2x4x16x32xf32>) v(%[[V]] : tensor<2x4x16x32xf32>) -> tensor<2x4x16x32xf32>
// CHECK-NOT: layout
// CHECK: return %[[OUT]]
func.func @mha_bhnd(%q: tensor<2x4x16x32xf32>, %k: tensor<2x4x16x32xf32>,
                    %v: tensor<2x4x16x32xf32>) -> tensor<2x4x16x32xf32> {
  %0 = attn.attention q(%q : tensor<2x4x16x32xf32>) k(%k : tensor<2x4x16x32xf32>)
      v(%v : tensor<2x4x16x32xf32>) -> tensor<2x4x16x32xf32>
  return %0 : tensor<2x4x16x32xf32>
}

// The default layout written out is elided on print.
// CHECK-LABEL: func.func @explicit_defaults
// CHECK: attn.attention
// CHECK-NOT: layout
// CHECK-NOT: norm
// CHECK-SAME: -> tensor<1x2x8x16xf32>
func.func @explicit_defaults(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>,
                             %v: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%k : tensor<1x2x8x16xf32>)
      v(%v : tensor<1x2x8x16xf32>) layout(bhnd) norm(softmax)
      -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// The seed's example: H = 8 query heads share G = 2 K/V heads (R = 4),
// B = 2, T = 5, Dh = 64, causal, as [B, H, N, D].
// CHECK-LABEL: func.func @seed_gqa_h8_g2
// CHECK-SAME: %[[Q:[a-zA-Z0-9_]+]]: tensor<2x8x5x64xf32>
// CHECK-SAME: %[[K:[a-zA-Z0-9_]+]]: tensor<2x2x5x64xf32>
// CHECK-SAME: %[[V:[a-zA-Z0-9_]+]]: tensor<2x2x5x64xf32>
// CHECK: attn.attention q(%[[Q]] : tensor<2x8x5x64xf32>) k(%[[K]] : tensor<2x2x5x64xf32>) v(%[[V]] : tensor<2x2x5x64xf32>) causal(top_left) -> tensor<2x8x5x64xf32>
func.func @seed_gqa_h8_g2(%q: tensor<2x8x5x64xf32>, %k: tensor<2x2x5x64xf32>,
                          %v: tensor<2x2x5x64xf32>) -> tensor<2x8x5x64xf32> {
  %0 = attn.attention q(%q : tensor<2x8x5x64xf32>) k(%k : tensor<2x2x5x64xf32>)
      v(%v : tensor<2x2x5x64xf32>) causal(top_left) -> tensor<2x8x5x64xf32>
  return %0 : tensor<2x8x5x64xf32>
}

// MQA: every query head reads the single K/V head.
// CHECK-LABEL: func.func @mqa
// CHECK: attn.attention q(%{{.+}} : tensor<1x8x32x64xf16>) k(%{{.+}} : tensor<1x1x32x64xf16>) v(%{{.+}} : tensor<1x1x32x64xf16>) -> tensor<1x8x32x64xf16>
func.func @mqa(%q: tensor<1x8x32x64xf16>, %k: tensor<1x1x32x64xf16>,
               %v: tensor<1x1x32x64xf16>) -> tensor<1x8x32x64xf16> {
  %0 = attn.attention q(%q : tensor<1x8x32x64xf16>) k(%k : tensor<1x1x32x64xf16>)
      v(%v : tensor<1x1x32x64xf16>) -> tensor<1x8x32x64xf16>
  return %0 : tensor<1x8x32x64xf16>
}

// [B, N, H, D]: the same GQA problem stored as FlashAttention stores it.
// CHECK-LABEL: func.func @gqa_bnhd
// CHECK: attn.attention q(%{{.+}} : tensor<2x5x8x64xf32>) k(%{{.+}} : tensor<2x5x2x64xf32>) v(%{{.+}} : tensor<2x5x2x64xf32>) layout(bnhd) causal(top_left) -> tensor<2x5x8x64xf32>
func.func @gqa_bnhd(%q: tensor<2x5x8x64xf32>, %k: tensor<2x5x2x64xf32>,
                    %v: tensor<2x5x2x64xf32>) -> tensor<2x5x8x64xf32> {
  %0 = attn.attention q(%q : tensor<2x5x8x64xf32>) k(%k : tensor<2x5x2x64xf32>)
      v(%v : tensor<2x5x2x64xf32>) layout(bnhd) causal(top_left)
      -> tensor<2x5x8x64xf32>
  return %0 : tensor<2x5x8x64xf32>
}

// Cross-attention: Nq = 7 queries read Nk = 19 keys; Dv (48) != Dqk (32).
// CHECK-LABEL: func.func @cross_attention
// CHECK: attn.attention q(%{{.+}} : tensor<2x4x7x32xf32>) k(%{{.+}} : tensor<2x4x19x32xf32>) v(%{{.+}} : tensor<2x4x19x48xf32>) -> tensor<2x4x7x48xf32>
func.func @cross_attention(%q: tensor<2x4x7x32xf32>, %k: tensor<2x4x19x32xf32>,
                           %v: tensor<2x4x19x48xf32>) -> tensor<2x4x7x48xf32> {
  %0 = attn.attention q(%q : tensor<2x4x7x32xf32>) k(%k : tensor<2x4x19x32xf32>)
      v(%v : tensor<2x4x19x48xf32>) -> tensor<2x4x7x48xf32>
  return %0 : tensor<2x4x7x48xf32>
}

// Cross-attention in [B, N, H, D] with Nq != Nk.
// CHECK-LABEL: func.func @cross_attention_bnhd
// CHECK: attn.attention q(%{{.+}} : tensor<1x3x4x16xf32>) k(%{{.+}} : tensor<1x10x2x16xf32>) v(%{{.+}} : tensor<1x10x2x16xf32>) layout(bnhd) -> tensor<1x3x4x16xf32>
func.func @cross_attention_bnhd(%q: tensor<1x3x4x16xf32>, %k: tensor<1x10x2x16xf32>,
                                %v: tensor<1x10x2x16xf32>) -> tensor<1x3x4x16xf32> {
  %0 = attn.attention q(%q : tensor<1x3x4x16xf32>) k(%k : tensor<1x10x2x16xf32>)
      v(%v : tensor<1x10x2x16xf32>) layout(bnhd) -> tensor<1x3x4x16xf32>
  return %0 : tensor<1x3x4x16xf32>
}

//===----------------------------------------------------------------------===//
// attn.attention: element types and dynamic sizes
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @f16
// CHECK: attn.attention {{.*}} -> tensor<1x2x8x16xf16>
func.func @f16(%q: tensor<1x2x8x16xf16>, %k: tensor<1x2x8x16xf16>,
               %v: tensor<1x2x8x16xf16>) -> tensor<1x2x8x16xf16> {
  %0 = attn.attention q(%q : tensor<1x2x8x16xf16>) k(%k : tensor<1x2x8x16xf16>)
      v(%v : tensor<1x2x8x16xf16>) -> tensor<1x2x8x16xf16>
  return %0 : tensor<1x2x8x16xf16>
}

// bf16 with lse: lse is always f32.
// CHECK-LABEL: func.func @bf16_lse
// CHECK: %[[OUT:.+]], %[[LSE:.+]] = attn.attention {{.*}} -> tensor<1x2x8x16xbf16>, tensor<1x2x8xf32>
// CHECK: return %[[OUT]], %[[LSE]]
func.func @bf16_lse(%q: tensor<1x2x8x16xbf16>, %k: tensor<1x2x8x16xbf16>,
                    %v: tensor<1x2x8x16xbf16>)
    -> (tensor<1x2x8x16xbf16>, tensor<1x2x8xf32>) {
  %0, %1 = attn.attention q(%q : tensor<1x2x8x16xbf16>) k(%k : tensor<1x2x8x16xbf16>)
      v(%v : tensor<1x2x8x16xbf16>) -> tensor<1x2x8x16xbf16>, tensor<1x2x8xf32>
  return %0, %1 : tensor<1x2x8x16xbf16>, tensor<1x2x8xf32>
}

// CHECK-LABEL: func.func @f32_lse_bnhd
// CHECK: attn.attention {{.*}} layout(bnhd) -> tensor<2x8x4x16xf32>, tensor<2x4x8xf32>
func.func @f32_lse_bnhd(%q: tensor<2x8x4x16xf32>, %k: tensor<2x8x4x16xf32>,
                        %v: tensor<2x8x4x16xf32>)
    -> (tensor<2x8x4x16xf32>, tensor<2x4x8xf32>) {
  %0, %1 = attn.attention q(%q : tensor<2x8x4x16xf32>) k(%k : tensor<2x8x4x16xf32>)
      v(%v : tensor<2x8x4x16xf32>) layout(bnhd)
      -> tensor<2x8x4x16xf32>, tensor<2x4x8xf32>
  return %0, %1 : tensor<2x8x4x16xf32>, tensor<2x4x8xf32>
}

// Every size dynamic.
// CHECK-LABEL: func.func @all_dynamic
// CHECK: attn.attention q(%{{.+}} : tensor<?x?x?x?xf32>) k(%{{.+}} : tensor<?x?x?x?xf32>) v(%{{.+}} : tensor<?x?x?x?xf32>) kv_len(%{{.+}} : tensor<?xi64>) causal(bottom_right) -> tensor<?x?x?x?xf32>, tensor<?x?x?xf32>
func.func @all_dynamic(%q: tensor<?x?x?x?xf32>, %k: tensor<?x?x?x?xf32>,
                       %v: tensor<?x?x?x?xf32>, %len: tensor<?xi64>)
    -> (tensor<?x?x?x?xf32>, tensor<?x?x?xf32>) {
  %0, %1 = attn.attention q(%q : tensor<?x?x?x?xf32>) k(%k : tensor<?x?x?x?xf32>)
      v(%v : tensor<?x?x?x?xf32>) kv_len(%len : tensor<?xi64>) causal(bottom_right)
      -> tensor<?x?x?x?xf32>, tensor<?x?x?xf32>
  return %0, %1 : tensor<?x?x?x?xf32>, tensor<?x?x?xf32>
}

// Dynamic batch and sequence lengths, static heads and head dimensions, mixed
// with static sizes in the result.
// CHECK-LABEL: func.func @dynamic_batch_seq
// CHECK: attn.attention q(%{{.+}} : tensor<?x8x?x64xf16>) k(%{{.+}} : tensor<?x2x?x64xf16>) v(%{{.+}} : tensor<2x2x?x64xf16>) -> tensor<2x8x?x64xf16>
func.func @dynamic_batch_seq(%q: tensor<?x8x?x64xf16>, %k: tensor<?x2x?x64xf16>,
                             %v: tensor<2x2x?x64xf16>) -> tensor<2x8x?x64xf16> {
  %0 = attn.attention q(%q : tensor<?x8x?x64xf16>) k(%k : tensor<?x2x?x64xf16>)
      v(%v : tensor<2x2x?x64xf16>) -> tensor<2x8x?x64xf16>
  return %0 : tensor<2x8x?x64xf16>
}

//===----------------------------------------------------------------------===//
// attn.attention: modifiers, one at a time
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @kv_len_i32
// CHECK-SAME: %[[LEN:[a-zA-Z0-9_]+]]: tensor<2xi32>
// CHECK: attn.attention {{.*}} kv_len(%[[LEN]] : tensor<2xi32>) -> tensor<2x4x8x16xf32>
func.func @kv_len_i32(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>,
                      %v: tensor<2x4x8x16xf32>, %len: tensor<2xi32>)
    -> tensor<2x4x8x16xf32> {
  %0 = attn.attention q(%q : tensor<2x4x8x16xf32>) k(%k : tensor<2x4x8x16xf32>)
      v(%v : tensor<2x4x8x16xf32>) kv_len(%len : tensor<2xi32>)
      -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// kv_start is written anywhere among the modifiers and printed after kv_len.
// CHECK-LABEL: func.func @kv_start
// CHECK-SAME: %[[LEN:[a-zA-Z0-9_]+]]: tensor<2xi32>, %[[FIRST:[a-zA-Z0-9_]+]]: tensor<2xi64>
// CHECK: attn.attention {{.*}} kv_len(%[[LEN]] : tensor<2xi32>) kv_start(%[[FIRST]] : tensor<2xi64>) causal(top_left) -> tensor<2x4x8x16xf32>
func.func @kv_start(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>,
                    %v: tensor<2x4x8x16xf32>, %len: tensor<2xi32>,
                    %first: tensor<2xi64>) -> tensor<2x4x8x16xf32> {
  %0 = attn.attention q(%q : tensor<2x4x8x16xf32>) k(%k : tensor<2x4x8x16xf32>)
      v(%v : tensor<2x4x8x16xf32>) causal(top_left)
      kv_start(%first : tensor<2xi64>) kv_len(%len : tensor<2xi32>)
      -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// CHECK-LABEL: func.func @key_mask
// CHECK: attn.attention {{.*}} kv_start(%{{.+}} : tensor<2xi32>) key_mask(%{{.+}} : tensor<2x8xi1>) -> tensor<2x4x8x16xf32>
func.func @key_mask(%q: tensor<2x4x8x16xf32>, %m: tensor<2x8xi1>,
                    %first: tensor<2xi32>) -> tensor<2x4x8x16xf32> {
  %0 = attn.attention q(%q : tensor<2x4x8x16xf32>) k(%q : tensor<2x4x8x16xf32>)
      v(%q : tensor<2x4x8x16xf32>) key_mask(%m : tensor<2x8xi1>)
      kv_start(%first : tensor<2xi32>) -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// CHECK-LABEL: func.func @projected_kv_start
// CHECK: attn.projected_attention {{.*}} heads(4, 2) kv_start(%{{.+}} : tensor<2xi32>) causal(top_left)
func.func @projected_kv_start(%x: tensor<2x8x64xf32>, %wq: tensor<64x64xf32>,
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

// CHECK-LABEL: func.func @kv_len_i64
// CHECK-SAME: %[[LEN:[a-zA-Z0-9_]+]]: tensor<2xi64>
// CHECK: attn.attention {{.*}} kv_len(%[[LEN]] : tensor<2xi64>) -> tensor<2x4x8x16xf32>
func.func @kv_len_i64(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>,
                      %v: tensor<2x4x8x16xf32>, %len: tensor<2xi64>)
    -> tensor<2x4x8x16xf32> {
  %0 = attn.attention q(%q : tensor<2x4x8x16xf32>) k(%k : tensor<2x4x8x16xf32>)
      v(%v : tensor<2x4x8x16xf32>) kv_len(%len : tensor<2xi64>)
      -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// A [Nq, Nk] mask shared by every batch entry and head.
// CHECK-LABEL: func.func @mask_rank2
// CHECK-SAME: %[[M:[a-zA-Z0-9_]+]]: tensor<8x12xi1>
// CHECK: attn.attention {{.*}} mask(%[[M]] : tensor<8x12xi1>) -> tensor<2x4x8x16xf32>
func.func @mask_rank2(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x12x16xf32>,
                      %v: tensor<2x4x12x16xf32>, %m: tensor<8x12xi1>)
    -> tensor<2x4x8x16xf32> {
  %0 = attn.attention q(%q : tensor<2x4x8x16xf32>) k(%k : tensor<2x4x12x16xf32>)
      v(%v : tensor<2x4x12x16xf32>) mask(%m : tensor<8x12xi1>)
      -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// A per-head [Hq, 1, Nk] mask broadcast over queries.
// CHECK-LABEL: func.func @mask_rank3
// CHECK: attn.attention {{.*}} mask(%{{.+}} : tensor<4x1x12xi1>) -> tensor<2x4x8x16xf32>
func.func @mask_rank3(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x12x16xf32>,
                      %v: tensor<2x4x12x16xf32>, %m: tensor<4x1x12xi1>)
    -> tensor<2x4x8x16xf32> {
  %0 = attn.attention q(%q : tensor<2x4x8x16xf32>) k(%k : tensor<2x4x12x16xf32>)
      v(%v : tensor<2x4x12x16xf32>) mask(%m : tensor<4x1x12xi1>)
      -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// A padding-style [B, 1, 1, Nk] mask, and a full-rank one with dynamic sizes.
// CHECK-LABEL: func.func @mask_rank4
// CHECK: attn.attention {{.*}} mask(%{{.+}} : tensor<2x1x1x12xi1>) -> tensor<2x4x8x16xf32>
// CHECK: attn.attention {{.*}} mask(%{{.+}} : tensor<2x4x?x12xi1>) -> tensor<2x4x8x16xf32>
func.func @mask_rank4(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x12x16xf32>,
                      %v: tensor<2x4x12x16xf32>, %m: tensor<2x1x1x12xi1>,
                      %m2: tensor<2x4x?x12xi1>)
    -> (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) {
  %0 = attn.attention q(%q : tensor<2x4x8x16xf32>) k(%k : tensor<2x4x12x16xf32>)
      v(%v : tensor<2x4x12x16xf32>) mask(%m : tensor<2x1x1x12xi1>)
      -> tensor<2x4x8x16xf32>
  %1 = attn.attention q(%q : tensor<2x4x8x16xf32>) k(%k : tensor<2x4x12x16xf32>)
      v(%v : tensor<2x4x12x16xf32>) mask(%m2 : tensor<2x4x?x12xi1>)
      -> tensor<2x4x8x16xf32>
  return %0, %1 : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>
}

// CHECK-LABEL: func.func @bias_f32
// CHECK-SAME: %[[B:[a-zA-Z0-9_]+]]: tensor<2x4x8x12xf32>
// CHECK: attn.attention {{.*}} bias(%[[B]] : tensor<2x4x8x12xf32>) -> tensor<2x4x8x16xf32>
func.func @bias_f32(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x12x16xf32>,
                    %v: tensor<2x4x12x16xf32>, %b: tensor<2x4x8x12xf32>)
    -> tensor<2x4x8x16xf32> {
  %0 = attn.attention q(%q : tensor<2x4x8x16xf32>) k(%k : tensor<2x4x12x16xf32>)
      v(%v : tensor<2x4x12x16xf32>) bias(%b : tensor<2x4x8x12xf32>)
      -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// CHECK-LABEL: func.func @bias_f16
// CHECK: attn.attention {{.*}} bias(%{{.+}} : tensor<8x12xf16>) -> tensor<2x4x8x16xf16>
func.func @bias_f16(%q: tensor<2x4x8x16xf16>, %k: tensor<2x4x12x16xf16>,
                    %v: tensor<2x4x12x16xf16>, %b: tensor<8x12xf16>)
    -> tensor<2x4x8x16xf16> {
  %0 = attn.attention q(%q : tensor<2x4x8x16xf16>) k(%k : tensor<2x4x12x16xf16>)
      v(%v : tensor<2x4x12x16xf16>) bias(%b : tensor<8x12xf16>)
      -> tensor<2x4x8x16xf16>
  return %0 : tensor<2x4x8x16xf16>
}

// CHECK-LABEL: func.func @alibi
// CHECK-SAME: %[[S:[a-zA-Z0-9_]+]]: tensor<8xf32>
// CHECK: attn.attention {{.*}} alibi(%[[S]] : tensor<8xf32>) causal(top_left) -> tensor<1x8x16x32xf32>
func.func @alibi(%q: tensor<1x8x16x32xf32>, %k: tensor<1x8x16x32xf32>,
                 %v: tensor<1x8x16x32xf32>, %s: tensor<8xf32>)
    -> tensor<1x8x16x32xf32> {
  %0 = attn.attention q(%q : tensor<1x8x16x32xf32>) k(%k : tensor<1x8x16x32xf32>)
      v(%v : tensor<1x8x16x32xf32>) alibi(%s : tensor<8xf32>) causal(top_left)
      -> tensor<1x8x16x32xf32>
  return %0 : tensor<1x8x16x32xf32>
}

// Attention sinks: one logit per query head in the softmax's denominator
// (any order among the modifiers; printed after alibi).
// CHECK-LABEL: func.func @sink
// CHECK-SAME: %[[S:[a-zA-Z0-9_]+]]: tensor<8xf32>
// CHECK: attn.attention {{.*}} alibi(%[[S]] : tensor<8xf32>) sink(%[[S]] : tensor<8xf32>) causal(top_left) -> tensor<1x8x16x32xf32>, tensor<1x8x16xf32>
func.func @sink(%q: tensor<1x8x16x32xf32>, %k: tensor<1x2x16x32xf32>,
                %v: tensor<1x2x16x32xf32>, %s: tensor<8xf32>)
    -> (tensor<1x8x16x32xf32>, tensor<1x8x16xf32>) {
  %0, %1 = attn.attention q(%q : tensor<1x8x16x32xf32>) k(%k : tensor<1x2x16x32xf32>)
      v(%v : tensor<1x2x16x32xf32>) sink(%s : tensor<8xf32>) causal(top_left)
      alibi(%s : tensor<8xf32>)
      -> tensor<1x8x16x32xf32>, tensor<1x8x16xf32>
  return %0, %1 : tensor<1x8x16x32xf32>, tensor<1x8x16xf32>
}

// The scale as a run-time operand: `scale(%s : tensor<f32>)` (printed after
// the attribute modifiers), on both ops.
// CHECK-LABEL: func.func @runtime_scale
// CHECK-SAME: %[[S:[a-zA-Z0-9_]+]]: tensor<f32>
// CHECK: attn.attention {{.*}} causal(top_left) scale(%[[S]] : tensor<f32>) -> tensor<1x8x16x32xf32>
// CHECK: attn.projected_attention {{.*}} scale(%[[S]] : tensor<f32>) -> tensor<2x5x64xf32>
func.func @runtime_scale(%q: tensor<1x8x16x32xf32>, %k: tensor<1x2x16x32xf32>,
                         %v: tensor<1x2x16x32xf32>, %s: tensor<f32>,
                         %x: tensor<2x5x64xf32>, %w: tensor<64x64xf32>)
    -> (tensor<1x8x16x32xf32>, tensor<2x5x64xf32>) {
  %0 = attn.attention q(%q : tensor<1x8x16x32xf32>) k(%k : tensor<1x2x16x32xf32>)
      v(%v : tensor<1x2x16x32xf32>) scale(%s : tensor<f32>) causal(top_left)
      -> tensor<1x8x16x32xf32>
  %1 = attn.projected_attention x(%x : tensor<2x5x64xf32>)
      wq(%w : tensor<64x64xf32>) wk(%w : tensor<64x64xf32>)
      wv(%w : tensor<64x64xf32>) wo(%w : tensor<64x64xf32>) heads(4, 4)
      scale(%s : tensor<f32>) -> tensor<2x5x64xf32>
  return %0, %1 : tensor<1x8x16x32xf32>, tensor<2x5x64xf32>
}

// CHECK-LABEL: func.func @causal_top_left
// CHECK: attn.attention {{.*}} causal(top_left) -> tensor<1x2x8x16xf32>
func.func @causal_top_left(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x12x16xf32>,
                           %v: tensor<1x2x12x16xf32>) -> tensor<1x2x8x16xf32> {
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%k : tensor<1x2x12x16xf32>)
      v(%v : tensor<1x2x12x16xf32>) causal(top_left) -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// CHECK-LABEL: func.func @causal_bottom_right
// CHECK: attn.attention {{.*}} causal(bottom_right) -> tensor<1x2x8x16xf32>
func.func @causal_bottom_right(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x12x16xf32>,
                               %v: tensor<1x2x12x16xf32>) -> tensor<1x2x8x16xf32> {
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%k : tensor<1x2x12x16xf32>)
      v(%v : tensor<1x2x12x16xf32>) causal(bottom_right) -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// CHECK-LABEL: func.func @window_left_only
// CHECK: attn.attention {{.*}} window_left(4) -> tensor<1x2x8x16xf32>
func.func @window_left_only(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>,
                            %v: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%k : tensor<1x2x8x16xf32>)
      v(%v : tensor<1x2x8x16xf32>) window_left(4) -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// CHECK-LABEL: func.func @window_right_only
// CHECK: attn.attention {{.*}} window_right(2) -> tensor<1x2x8x16xf32>
func.func @window_right_only(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>,
                             %v: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%k : tensor<1x2x8x16xf32>)
      v(%v : tensor<1x2x8x16xf32>) window_right(2) -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// A symmetric local window, zero-width on the right (only the diagonal).
// CHECK-LABEL: func.func @window_both
// CHECK: attn.attention {{.*}} window_left(3) window_right(0) -> tensor<1x2x8x16xf32>
func.func @window_both(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>,
                       %v: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%k : tensor<1x2x8x16xf32>)
      v(%v : tensor<1x2x8x16xf32>) window_left(3) window_right(0)
      -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// CHECK-LABEL: func.func @scale
// CHECK: attn.attention {{.*}} scale(1.250000e-01) -> tensor<1x2x8x16xf32>
func.func @scale(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>,
                 %v: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%k : tensor<1x2x8x16xf32>)
      v(%v : tensor<1x2x8x16xf32>) scale(0.125) -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// CHECK-LABEL: func.func @softcap
// CHECK: attn.attention {{.*}} softcap(5.000000e+01) -> tensor<1x2x8x16xf32>
func.func @softcap(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>,
                   %v: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%k : tensor<1x2x8x16xf32>)
      v(%v : tensor<1x2x8x16xf32>) softcap(50.0) -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// CHECK-LABEL: func.func @norm_sigmoid
// CHECK: attn.attention {{.*}} bias(%{{.+}} : tensor<1x2x8x8xf32>) norm(sigmoid) -> tensor<1x2x8x16xf32>
func.func @norm_sigmoid(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>,
                        %v: tensor<1x2x8x16xf32>, %b: tensor<1x2x8x8xf32>)
    -> tensor<1x2x8x16xf32> {
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%k : tensor<1x2x8x16xf32>)
      v(%v : tensor<1x2x8x16xf32>) bias(%b : tensor<1x2x8x8xf32>) norm(sigmoid)
      -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// Every modifier at once, bnhd, with lse; printed in the canonical order
// whatever order the modifiers are written in.
// CHECK-LABEL: func.func @everything
// CHECK-SAME: %[[Q:[a-zA-Z0-9_]+]]: tensor<2x8x4x16xbf16>
// CHECK-SAME: %[[K:[a-zA-Z0-9_]+]]: tensor<2x12x2x16xbf16>
// CHECK-SAME: %[[V:[a-zA-Z0-9_]+]]: tensor<2x12x2x16xbf16>
// CHECK-SAME: %[[LEN:[a-zA-Z0-9_]+]]: tensor<2xi32>
// CHECK-SAME: %[[M:[a-zA-Z0-9_]+]]: tensor<2x1x8x12xi1>
// CHECK-SAME: %[[B:[a-zA-Z0-9_]+]]: tensor<4x8x12xbf16>
// CHECK-SAME: %[[S:[a-zA-Z0-9_]+]]: tensor<4xf32>
// CHECK: %[[OUT:.+]], %[[LSE:.+]] = attn.attention q(%[[Q]] : tensor<2x8x4x16xbf16>) k(%[[K]] : tensor<2x12x2x16xbf16>) v(%[[V]] : tensor<2x12x2x16xbf16>) layout(bnhd)
// CHECK-SAME: kv_len(%[[LEN]] : tensor<2xi32>) mask(%[[M]] : tensor<2x1x8x12xi1>) bias(%[[B]] : tensor<4x8x12xbf16>) alibi(%[[S]] : tensor<4xf32>)
// CHECK-SAME: causal(bottom_right) window_left(6) window_right(1) scale(2.500000e-01) softcap(3.000000e+01)
// CHECK-SAME: -> tensor<2x8x4x16xbf16>, tensor<2x4x8xf32>
// CHECK: return %[[OUT]], %[[LSE]]
func.func @everything(%q: tensor<2x8x4x16xbf16>, %k: tensor<2x12x2x16xbf16>,
                      %v: tensor<2x12x2x16xbf16>, %len: tensor<2xi32>,
                      %m: tensor<2x1x8x12xi1>, %b: tensor<4x8x12xbf16>,
                      %s: tensor<4xf32>)
    -> (tensor<2x8x4x16xbf16>, tensor<2x4x8xf32>) {
  %0, %1 = attn.attention q(%q : tensor<2x8x4x16xbf16>)
      k(%k : tensor<2x12x2x16xbf16>) v(%v : tensor<2x12x2x16xbf16>)
      layout(bnhd) kv_len(%len : tensor<2xi32>) mask(%m : tensor<2x1x8x12xi1>)
      bias(%b : tensor<4x8x12xbf16>) alibi(%s : tensor<4xf32>)
      causal(bottom_right) window_left(6) window_right(1) scale(0.25)
      softcap(30.0) norm(softmax)
      -> tensor<2x8x4x16xbf16>, tensor<2x4x8xf32>
  return %0, %1 : tensor<2x8x4x16xbf16>, tensor<2x4x8xf32>
}

// Decoding one token against a KV cache: Nq = 1, bottom-right causal and
// per-batch cache lengths.
// CHECK-LABEL: func.func @decode
// CHECK: attn.attention q(%{{.+}} : tensor<2x8x1x64xf16>) k(%{{.+}} : tensor<2x2x256x64xf16>) v(%{{.+}} : tensor<2x2x256x64xf16>) kv_len(%{{.+}} : tensor<2xi32>) causal(bottom_right) -> tensor<2x8x1x64xf16>, tensor<2x8x1xf32>
func.func @decode(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x256x64xf16>,
                  %v: tensor<2x2x256x64xf16>, %len: tensor<2xi32>)
    -> (tensor<2x8x1x64xf16>, tensor<2x8x1xf32>) {
  %0, %1 = attn.attention q(%q : tensor<2x8x1x64xf16>) k(%k : tensor<2x2x256x64xf16>)
      v(%v : tensor<2x2x256x64xf16>) kv_len(%len : tensor<2xi32>)
      causal(bottom_right) -> tensor<2x8x1x64xf16>, tensor<2x8x1xf32>
  return %0, %1 : tensor<2x8x1x64xf16>, tensor<2x8x1xf32>
}

//===----------------------------------------------------------------------===//
// attn.projected_attention
//===----------------------------------------------------------------------===//

// The seed's GQA example at the projection level: D = 512, Hq = 8, Hkv = 2,
// Dh = 64, causal self-attention.
// CHECK-LABEL: func.func @projected_self_seed
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<2x5x512xf32>
// CHECK-SAME: %[[WQ:[a-zA-Z0-9_]+]]: tensor<512x512xf32>
// CHECK-SAME: %[[WK:[a-zA-Z0-9_]+]]: tensor<512x128xf32>
// CHECK-SAME: %[[WV:[a-zA-Z0-9_]+]]: tensor<512x128xf32>
// CHECK-SAME: %[[WO:[a-zA-Z0-9_]+]]: tensor<512x512xf32>
// CHECK: %[[Y:.+]] = attn.projected_attention x(%[[X]] : tensor<2x5x512xf32>) wq(%[[WQ]] : tensor<512x512xf32>) wk(%[[WK]] : tensor<512x128xf32>) wv(%[[WV]] : tensor<512x128xf32>) wo(%[[WO]] : tensor<512x512xf32>) heads(8, 2) causal(top_left) -> tensor<2x5x512xf32>
// CHECK: return %[[Y]]
func.func @projected_self_seed(%x: tensor<2x5x512xf32>, %wq: tensor<512x512xf32>,
                               %wk: tensor<512x128xf32>, %wv: tensor<512x128xf32>,
                               %wo: tensor<512x512xf32>) -> tensor<2x5x512xf32> {
  %0 = attn.projected_attention x(%x : tensor<2x5x512xf32>)
      wq(%wq : tensor<512x512xf32>) wk(%wk : tensor<512x128xf32>)
      wv(%wv : tensor<512x128xf32>) wo(%wo : tensor<512x512xf32>)
      heads(8, 2) causal(top_left) -> tensor<2x5x512xf32>
  return %0 : tensor<2x5x512xf32>
}

// Cross-attention at the projection level: a decoder state of Nq = 6 reads
// an encoder memory of Nk = 20; Dv (8) != Dqk (16).
// CHECK-LABEL: func.func @projected_cross
// CHECK-SAME: %[[Y:[a-zA-Z0-9_]+]]: tensor<2x6x64xf32>
// CHECK-SAME: %[[MEM:[a-zA-Z0-9_]+]]: tensor<2x20x64xf32>
// CHECK: attn.projected_attention x(%[[Y]] : tensor<2x6x64xf32>) kv_source(%[[MEM]] : tensor<2x20x64xf32>) wq(%{{.+}} : tensor<64x64xf32>) wk(%{{.+}} : tensor<64x16xf32>) wv(%{{.+}} : tensor<64x8xf32>) wo(%{{.+}} : tensor<32x64xf32>) heads(4, 1) kv_len(%{{.+}} : tensor<2xi64>) -> tensor<2x6x64xf32>
func.func @projected_cross(%y: tensor<2x6x64xf32>, %mem: tensor<2x20x64xf32>,
                           %wq: tensor<64x64xf32>, %wk: tensor<64x16xf32>,
                           %wv: tensor<64x8xf32>, %wo: tensor<32x64xf32>,
                           %len: tensor<2xi64>) -> tensor<2x6x64xf32> {
  %0 = attn.projected_attention x(%y : tensor<2x6x64xf32>)
      kv_source(%mem : tensor<2x20x64xf32>)
      wq(%wq : tensor<64x64xf32>) wk(%wk : tensor<64x16xf32>)
      wv(%wv : tensor<64x8xf32>) wo(%wo : tensor<32x64xf32>)
      heads(4, 1) kv_len(%len : tensor<2xi64>) -> tensor<2x6x64xf32>
  return %0 : tensor<2x6x64xf32>
}

// Every modifier on the projection-level op, f16, dynamic batch and length.
// CHECK-LABEL: func.func @projected_everything
// CHECK: attn.projected_attention x(%{{.+}} : tensor<?x?x32xf16>) wq(%{{.+}} : tensor<32x32xf16>) wk(%{{.+}} : tensor<32x16xf16>) wv(%{{.+}} : tensor<32x16xf16>) wo(%{{.+}} : tensor<32x32xf16>) heads(4, 2)
// CHECK-SAME: kv_len(%{{.+}} : tensor<?xi32>) mask(%{{.+}} : tensor<?x?xi1>) bias(%{{.+}} : tensor<4x1x?xf16>) alibi(%{{.+}} : tensor<4xf32>)
// CHECK-SAME: causal(bottom_right) window_left(8) window_right(0) scale(1.000000e+00) softcap(2.000000e+01) -> tensor<?x?x32xf16>
func.func @projected_everything(%x: tensor<?x?x32xf16>, %wq: tensor<32x32xf16>,
                                %wk: tensor<32x16xf16>, %wv: tensor<32x16xf16>,
                                %wo: tensor<32x32xf16>, %len: tensor<?xi32>,
                                %m: tensor<?x?xi1>, %b: tensor<4x1x?xf16>,
                                %s: tensor<4xf32>) -> tensor<?x?x32xf16> {
  %0 = attn.projected_attention x(%x : tensor<?x?x32xf16>)
      wq(%wq : tensor<32x32xf16>) wk(%wk : tensor<32x16xf16>)
      wv(%wv : tensor<32x16xf16>) wo(%wo : tensor<32x32xf16>) heads(4, 2)
      kv_len(%len : tensor<?xi32>) mask(%m : tensor<?x?xi1>)
      bias(%b : tensor<4x1x?xf16>) alibi(%s : tensor<4xf32>)
      causal(bottom_right) window_left(8) window_right(0) scale(1.0)
      softcap(20.0) -> tensor<?x?x32xf16>
  return %0 : tensor<?x?x32xf16>
}

// Sigmoid normalization at the projection level, bf16.
// CHECK-LABEL: func.func @projected_sigmoid_bf16
// CHECK: attn.projected_attention {{.*}} heads(2, 2) norm(sigmoid) -> tensor<1x8x16xbf16>
func.func @projected_sigmoid_bf16(%x: tensor<1x8x16xbf16>, %wq: tensor<16x16xbf16>,
                                  %wk: tensor<16x16xbf16>, %wv: tensor<16x16xbf16>,
                                  %wo: tensor<16x16xbf16>) -> tensor<1x8x16xbf16> {
  %0 = attn.projected_attention x(%x : tensor<1x8x16xbf16>)
      wq(%wq : tensor<16x16xbf16>) wk(%wk : tensor<16x16xbf16>)
      wv(%wv : tensor<16x16xbf16>) wo(%wo : tensor<16x16xbf16>) heads(2, 2)
      norm(sigmoid) -> tensor<1x8x16xbf16>
  return %0 : tensor<1x8x16xbf16>
}
