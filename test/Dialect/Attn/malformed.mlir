// RUN: not attn-opt %s -split-input-file -o /dev/null 2>&1 | FileCheck %s --implicit-check-not=error:
// RUN: not attn-opt %s -split-input-file -o /dev/null --attn-expand-projections 2>&1 | FileCheck %s --implicit-check-not=error:

// Malformed and extreme inputs: every one ends with a diagnostic or parses
// cleanly, never with a crash (`not` fails on a crash). The cases that are
// valid (extreme but legal sizes and windows) must produce no error at all.

// Truncated in the middle of an operand list.
// CHECK: error: expected ':'
func.func @truncated_operand(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%q : tensor<1x2x8x16xf32>) v(%q

// -----

// Truncated after an open parenthesis.
// CHECK: error: custom op 'attn.attention' expected valid keyword
func.func @truncated_causal(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%q : tensor<1x2x8x16xf32>) v(%q : tensor<1x2x8x16xf32>) causal(

// -----

// Truncated inside a type.
// CHECK: error: expected non-function type
func.func @truncated_type(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %0 = attn.attention q(%q : tensor<1x2x8x

// -----

// A run-time scale without its type; a scale that is neither a number nor
// an operand.
// CHECK: error: expected ':'
func.func @scale_untyped(%q: tensor<1x2x8x16xf32>, %s: tensor<f32>) -> tensor<1x2x8x16xf32> {
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%q : tensor<1x2x8x16xf32>) v(%q : tensor<1x2x8x16xf32>) scale(%s) -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

// CHECK: error: expected attribute value
func.func @scale_keyword(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%q : tensor<1x2x8x16xf32>) v(%q : tensor<1x2x8x16xf32>) scale(half) -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

// CHECK: error: custom op 'attn.projected_attention' expected 'wk'
func.func @truncated_projected(%x: tensor<2x5x64xf32>, %w: tensor<64x64xf32>) -> tensor<2x5x64xf32> {
  %0 = attn.projected_attention x(%x : tensor<2x5x64xf32>) wq(%w : tensor<64x64xf32>) heads(4,

// -----

// CHECK: error: custom op 'attn.attention' expected 'q'
attn.attention attn.projected_attention )))(((

// -----

// CHECK: error: use of value '%q' expects different type than prior uses: 'tensor<1x2x8x16xf16>' vs 'tensor<1x2x8x16xf32>'
func.func @type_mismatch(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %0 = attn.attention q(%q : tensor<1x2x8x16xf16>) k(%q : tensor<1x2x8x16xf32>) v(%q : tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

// CHECK: error: custom op 'attn.attention' invalid kind of type specified: expected builtin.tensor, but found 'memref<1x2x8x16xf32>'
func.func @memref(%q: memref<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %0 = attn.attention q(%q : memref<1x2x8x16xf32>) k(%q : memref<1x2x8x16xf32>) v(%q : memref<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

// CHECK: error: custom op 'attn.attention' invalid kind of type specified: expected builtin.tensor, but found 'vector<1x2x8x16xf32>'
func.func @vector_result(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%q : tensor<1x2x8x16xf32>) v(%q : tensor<1x2x8x16xf32>) -> vector<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

// CHECK: error: operation defines 2 results but was provided 1 to bind
func.func @result_count(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%q : tensor<1x2x8x16xf32>) v(%q : tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>, tensor<1x2x8xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

// CHECK: error: unexpected decimal integer literal for a floating point value
func.func @integer_scale(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%q : tensor<1x2x8x16xf32>) v(%q : tensor<1x2x8x16xf32>) scale(1) -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

// CHECK: error: use of undeclared SSA value name
func.func @undefined_operand(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%q : tensor<1x2x8x16xf32>) v(%undefined : tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

// CHECK: error: expected SSA operand
func.func @missing_operand(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %0 = attn.attention q( : tensor<1x2x8x16xf32>) k(%q : tensor<1x2x8x16xf32>) v(%q : tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

// CHECK: error: 'attn.attention' op expected 3 or more operands, but found 2
func.func @generic_missing_operand(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %0 = "attn.attention"(%q, %q) <{operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>}> ({}, {}) : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

// CHECK: error: 'attn.attention' op operand count (3) does not match with the total size (0) specified in attribute 'operandSegmentSizes'
func.func @generic_no_segments(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %0 = "attn.attention"(%q, %q, %q) ({}, {}) : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

// CHECK: error: 'attn.attention' op 'operandSegmentSizes' attribute cannot have negative elements
func.func @generic_negative_segment(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %0 = "attn.attention"(%q, %q, %q) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, -1, 0, 0, 1, 0, 0, 0, 0, 0>}> ({}, {}) : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

// CHECK: error: 'attn.attention' op expected 1 or more results
func.func @generic_no_result(%q: tensor<1x2x8x16xf32>) {
  "attn.attention"(%q, %q, %q) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>}> ({}, {}) : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> ()
  return
}

// -----

// CHECK: error: invalid properties {{.*}} for op attn.attention
func.func @generic_bad_attr_types(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %0 = "attn.attention"(%q, %q, %q) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, window_left = 1.5 : f32, scale = 3 : i64, causal = "x"}> ({}, {}) : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

// Out-of-range enum values given as (non-property) attributes.
// CHECK: error: 'attn.attention' op attribute 'causal' failed to satisfy constraint: alignment of the causal diagonal
func.func @generic_bad_enum(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %0 = "attn.attention"(%q, %q, %q) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, causal = 9 : i32, normalization = -1 : i32} : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

// CHECK: error: 'attn.projected_attention' op requires attribute 'num_kv_heads'
func.func @generic_no_heads(%x: tensor<2x5x64xf32>, %w: tensor<64x64xf32>) -> tensor<2x5x64xf32> {
  %0 = "attn.projected_attention"(%x, %w, %w, %w, %w) <{operandSegmentSizes = array<i32: 1, 0, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0>}> ({}, {}) : (tensor<2x5x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<2x5x64xf32>
  return %0 : tensor<2x5x64xf32>
}

// -----

// Zero K/V heads in the generic form: rejected by the attribute constraint
// before the op's own rules divide by the head count.
// CHECK: error: 'attn.projected_attention' op attribute 'num_kv_heads' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive
func.func @generic_zero_heads(%x: tensor<2x5x64xf32>, %w: tensor<64x64xf32>) -> tensor<2x5x64xf32> {
  %0 = "attn.projected_attention"(%x, %w, %w, %w, %w) <{num_query_heads = 4 : i64, num_kv_heads = 0 : i64, operandSegmentSizes = array<i32: 1, 0, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0>}> ({}, {}) : (tensor<2x5x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<2x5x64xf32>
  return %0 : tensor<2x5x64xf32>
}

// -----

// CHECK: error: 'attn.attention' op q must have rank 4 ([B, H, N, D] or [B, N, H, D]); got 'tensor<f32>'
func.func @scalar_tensors(%q: tensor<f32>, %l: tensor<i32>, %s: tensor<f32>, %m: tensor<i1>) -> tensor<f32> {
  %0 = attn.attention q(%q : tensor<f32>) k(%q : tensor<f32>) v(%q : tensor<f32>) kv_len(%l : tensor<i32>) mask(%m : tensor<i1>) alibi(%s : tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// A rank-0 mask and bias broadcast to everything; a rank-0 kv_len does not.
// CHECK: error: 'attn.attention' op kv_len must be a rank-1 tensor with one length per batch entry (B = 1); got 'tensor<i32>'
func.func @scalar_modifiers(%q: tensor<1x2x8x16xf32>, %l: tensor<i32>, %m: tensor<i1>, %b: tensor<f32>) -> tensor<1x2x8x16xf32> {
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%q : tensor<1x2x8x16xf32>) v(%q : tensor<1x2x8x16xf32>) mask(%m : tensor<i1>) bias(%b : tensor<f32>) -> tensor<1x2x8x16xf32>
  %1 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%q : tensor<1x2x8x16xf32>) v(%q : tensor<1x2x8x16xf32>) kv_len(%l : tensor<i32>) -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

// CHECK: error: 'attn.projected_attention' op x must be [B, Nq, D]; got 'tensor<f32>'
func.func @scalar_projected(%x: tensor<f32>, %w: tensor<f32>) -> tensor<f32> {
  %0 = attn.projected_attention x(%x : tensor<f32>) wq(%w : tensor<f32>) wk(%w : tensor<f32>) wv(%w : tensor<f32>) wo(%w : tensor<f32>) heads(1, 1) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// A dimension one past INT64_MAX.
// CHECK: error: invalid dimension
func.func @dimension_overflow(%q: tensor<9223372036854775808x2x8x16xf32>) {
  return
}

// -----

// The largest batch size: q would have more bytes than a 64-bit size counts.
// CHECK: error: 'attn.attention' op operand #0 of type 'tensor<9223372036854775807x2x8x16xf32>' is too large: its size in bytes overflows a 64-bit size
func.func @int64_max_batch(%q: tensor<9223372036854775807x2x8x16xf32>) -> tensor<9223372036854775807x2x8x16xf32> {
  %0, %1 = attn.attention q(%q : tensor<9223372036854775807x2x8x16xf32>) k(%q : tensor<9223372036854775807x2x8x16xf32>) v(%q : tensor<9223372036854775807x2x8x16xf32>) -> tensor<9223372036854775807x2x8x16xf32>, tensor<9223372036854775807x2x8xf32>
  return %0 : tensor<9223372036854775807x2x8x16xf32>
}

// -----

// Valid: the largest head dimension whose bytes a 64-bit size counts, with lse.
func.func @largest_head_dim(%q: tensor<1x1x1x2305843009213693951xf32>) -> tensor<1x1x1x2305843009213693951xf32> {
  %0, %1 = attn.attention q(%q : tensor<1x1x1x2305843009213693951xf32>) k(%q : tensor<1x1x1x2305843009213693951xf32>) v(%q : tensor<1x1x1x2305843009213693951xf32>) -> tensor<1x1x1x2305843009213693951xf32>, tensor<1x1x1xf32>
  return %0 : tensor<1x1x1x2305843009213693951xf32>
}

// -----

// CHECK: error: 'attn.attention' op mask of shape [9223372036854775807, 9223372036854775807] is not broadcastable to [B, Hq, Nq, Nk] = [1, 9223372036854775807, 8, 8]: dimension 0 has size 9223372036854775807, expected 1 or Nq = 8
func.func @int64_max_heads(%q: tensor<1x9223372036854775807x8x16xf32>, %k: tensor<1x1x8x16xf32>, %m: tensor<9223372036854775807x9223372036854775807xi1>) -> tensor<1x9223372036854775807x8x16xf32> {
  %0 = attn.attention q(%q : tensor<1x9223372036854775807x8x16xf32>) k(%k : tensor<1x1x8x16xf32>) v(%k : tensor<1x1x8x16xf32>) mask(%m : tensor<9223372036854775807x9223372036854775807xi1>) -> tensor<1x9223372036854775807x8x16xf32>
  return %0 : tensor<1x9223372036854775807x8x16xf32>
}

// -----

// CHECK: error: 'attn.projected_attention' op B * Nq = 9223372036854775807 * 9223372036854775807 overflows a 64-bit size
func.func @int64_max_projected(%x: tensor<9223372036854775807x9223372036854775807x9223372036854775807xf32>, %w: tensor<9223372036854775807x9223372036854775807xf32>) -> tensor<9223372036854775807x9223372036854775807x9223372036854775807xf32> {
  %0 = attn.projected_attention x(%x : tensor<9223372036854775807x9223372036854775807x9223372036854775807xf32>) wq(%w : tensor<9223372036854775807x9223372036854775807xf32>) wk(%w : tensor<9223372036854775807x9223372036854775807xf32>) wv(%w : tensor<9223372036854775807x9223372036854775807xf32>) wo(%w : tensor<9223372036854775807x9223372036854775807xf32>) heads(9223372036854775807, 1) -> tensor<9223372036854775807x9223372036854775807x9223372036854775807xf32>
  return %0 : tensor<9223372036854775807x9223372036854775807x9223372036854775807xf32>
}

// -----

// CHECK: error: integer constant out of range for attribute
func.func @heads_overflow(%x: tensor<2x5x64xf32>, %w: tensor<64x64xf32>) -> tensor<2x5x64xf32> {
  %0 = attn.projected_attention x(%x : tensor<2x5x64xf32>) wq(%w : tensor<64x64xf32>) wk(%w : tensor<64x64xf32>) wv(%w : tensor<64x64xf32>) wo(%w : tensor<64x64xf32>) heads(99999999999999999999, 1) -> tensor<2x5x64xf32>
  return %0 : tensor<2x5x64xf32>
}

// -----

// Valid: the widest windows there are.
func.func @int64_max_window(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%q : tensor<1x2x8x16xf32>) v(%q : tensor<1x2x8x16xf32>) causal(bottom_right) window_left(9223372036854775807) window_right(9223372036854775807) -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

// 2^63 is read as a 64-bit pattern and wraps to INT64_MIN.
// CHECK: error: 'attn.attention' op window_left must be non-negative; got -9223372036854775808
func.func @window_wraps(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%q : tensor<1x2x8x16xf32>) v(%q : tensor<1x2x8x16xf32>) window_left(9223372036854775808) -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

// CHECK: error: integer constant out of range for attribute
func.func @window_overflow(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%q : tensor<1x2x8x16xf32>) v(%q : tensor<1x2x8x16xf32>) window_right(99999999999999999999999) -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

// CHECK: error: integer constant out of range for attribute
func.func @window_underflow(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%q : tensor<1x2x8x16xf32>) v(%q : tensor<1x2x8x16xf32>) window_left(-9223372036854775809) -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

// Valid: empty batch and sequences.
func.func @zero_sizes(%q: tensor<0x2x0x16xf32>, %k: tensor<0x2x0x16xf32>) -> (tensor<0x2x0x16xf32>, tensor<0x2x0xf32>) {
  %0, %1 = attn.attention q(%q : tensor<0x2x0x16xf32>) k(%k : tensor<0x2x0x16xf32>) v(%k : tensor<0x2x0x16xf32>) -> tensor<0x2x0x16xf32>, tensor<0x2x0xf32>
  return %0, %1 : tensor<0x2x0x16xf32>, tensor<0x2x0xf32>
}

// -----

// Valid: dynamic weights at the projection level.
func.func @dynamic_weights(%x: tensor<2x5x?xf32>, %wq: tensor<?x?xf32>, %wo: tensor<?x?xf32>) -> tensor<2x5x?xf32> {
  %0 = attn.projected_attention x(%x : tensor<2x5x?xf32>) wq(%wq : tensor<?x?xf32>) wk(%wq : tensor<?x?xf32>) wv(%wq : tensor<?x?xf32>) wo(%wo : tensor<?x?xf32>) heads(4, 2) -> tensor<2x5x?xf32>
  return %0 : tensor<2x5x?xf32>
}
