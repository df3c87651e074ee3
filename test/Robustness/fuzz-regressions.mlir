// RUN: attn-opt %s -split-input-file -verify-diagnostics
// RUN: attn-opt %s -split-input-file -verify-diagnostics --attn-expand-projections
//
// Inputs the fuzzers found (docs/Robustness.md), as specs: each case names
// the file under fuzz/regressions/ that the fuzz build replays as well.

// attn-fuzz-builder, fuzz/regressions/builder/projected-dynamic-model-dim-weights-disagree:
// with D dynamic in x, the weights disagreed on D (wq has 0 rows, wk 3) and
// the op verified; --attn-expand-projections then failed on a tensor.cast.
// The verifier now takes D from the first weight that states it.
func.func @projected_dynamic_model_dim(%x: tensor<16x2x?xf32>, %wq: tensor<0x2xf32>,
                                       %wk: tensor<3x2xf32>, %wv: tensor<3x1xf32>,
                                       %wo: tensor<1x3xf32>) -> tensor<16x2x0xf32> {
  // expected-error @+1 {{wk must be [D, Hkv*Dqk] with D = 0 and a multiple of 1 head on the head side; got 'tensor<3x2xf32>'}}
  %0 = attn.projected_attention x(%x : tensor<16x2x?xf32>) wq(%wq : tensor<0x2xf32>)
      wk(%wk : tensor<3x2xf32>) wv(%wv : tensor<3x1xf32>) wo(%wo : tensor<1x3xf32>)
      heads(1, 1) -> tensor<16x2x0xf32>
  return %0 : tensor<16x2x0xf32>
}

// -----

// The same weights agreeing on D = 3: valid, and it expands.
func.func @projected_dynamic_model_dim_ok(%x: tensor<16x2x?xf32>, %wq: tensor<3x2xf32>,
                                          %wv: tensor<3x1xf32>, %wo: tensor<1x3xf32>)
    -> tensor<16x2x3xf32> {
  %0 = attn.projected_attention x(%x : tensor<16x2x?xf32>) wq(%wq : tensor<3x2xf32>)
      wk(%wq : tensor<3x2xf32>) wv(%wv : tensor<3x1xf32>) wo(%wo : tensor<1x3xf32>)
      heads(1, 1) -> tensor<16x2x3xf32>
  return %0 : tensor<16x2x3xf32>
}

// -----

// attn-fuzz-builder, fuzz/regressions/builder/projected-expansion-too-large:
// every operand fit, but the q the expansion materializes,
// [B, Nq, Hq, Dqk] = [2, 2^32 + 1, 3, 2^31] f32, does not; the op verified and
// --attn-expand-projections failed on the expanded attn.attention.
func.func @projected_expansion_too_large(
    %x: tensor<2x4294967297x2xf32>, %kv: tensor<2x2x2xf32>,
    %wq: tensor<2x6442450944xf32>, %wk: tensor<2x2147483648xf32>,
    %wv: tensor<2x4294967297xf32>, %wo: tensor<12884901891x2xf32>)
    -> tensor<2x4294967297x2xf32> {
  // expected-error @+1 {{the projected q [B, N, H, D] = [2, 4294967297, 3, 2147483648] is too large: its size in bytes overflows a 64-bit size}}
  %0 = attn.projected_attention x(%x : tensor<2x4294967297x2xf32>)
      kv_source(%kv : tensor<2x2x2xf32>) wq(%wq : tensor<2x6442450944xf32>)
      wk(%wk : tensor<2x2147483648xf32>) wv(%wv : tensor<2x4294967297xf32>)
      wo(%wo : tensor<12884901891x2xf32>) heads(3, 1) -> tensor<2x4294967297x2xf32>
  return %0 : tensor<2x4294967297x2xf32>
}

// -----

// attn-fuzz-builder, fuzz/regressions/builder/projected-dynamic-batch-kv-len:
// with B dynamic in x, B = 4 of kv_source was not used to check the
// modifiers: kv_len of length 0 verified, and the expanded attn.attention
// failed to verify. The verifier now takes B from kv_source too.
func.func @projected_dynamic_batch(%x: tensor<?x?x2xf32>, %kv: tensor<4x16x2xf32>,
                                   %wq: tensor<2x8xf32>, %w: tensor<?x?xf32>,
                                   %kv_len: tensor<0xi32>)
    -> tensor<4x?x2xf32> {
  // expected-error @+1 {{kv_len must be a rank-1 tensor with one length per batch entry (B = 4); got 'tensor<0xi32>'}}
  %0 = attn.projected_attention x(%x : tensor<?x?x2xf32>) kv_source(%kv : tensor<4x16x2xf32>)
      wq(%wq : tensor<2x8xf32>) wk(%w : tensor<?x?xf32>) wv(%w : tensor<?x?xf32>)
      wo(%w : tensor<?x?xf32>) heads(4, 2) kv_len(%kv_len : tensor<0xi32>)
      -> tensor<4x?x2xf32>
  return %0 : tensor<4x?x2xf32>
}

// -----

// attn-fuzz-builder, fuzz/regressions/builder/mask-bias-disagree-on-dynamic-nq:
// with N dynamic in x, the mask stated Nq = 16 and the bias Nq = 3; both
// verified and the naive lowering built a linalg.generic whose operands
// disagree. The verifier now takes a dynamic size from the first mask or bias
// dimension that states it and checks the others against it.
func.func @projected_mask_bias_disagree(%x: tensor<2x?x?xf32>, %w: tensor<?x?xf32>,
                                        %mask: tensor<16x16xi1>, %bias: tensor<3x16xf32>)
    -> tensor<2x?x?xf32> {
  // expected-error @+1 {{bias of shape [3, 16] is not broadcastable to [B, Hq, Nq, Nk] = [2, 1, 16, 16]: dimension 0 has size 3, expected 1 or Nq = 16}}
  %0 = attn.projected_attention x(%x : tensor<2x?x?xf32>) wq(%w : tensor<?x?xf32>)
      wk(%w : tensor<?x?xf32>) wv(%w : tensor<?x?xf32>) wo(%w : tensor<?x?xf32>)
      heads(1, 1) mask(%mask : tensor<16x16xi1>) bias(%bias : tensor<3x16xf32>)
      -> tensor<2x?x?xf32>
  return %0 : tensor<2x?x?xf32>
}

// -----

// The same on attn.attention: a mask of [1, 4, 5] fixes the dynamic Hq = 4,
// and the bias's Hq = 2 disagrees.
func.func @attention_mask_bias_disagree(%q: tensor<1x?x?x8xf32>, %k: tensor<1x1x5x8xf32>,
                                        %mask: tensor<4x1x5xi1>, %bias: tensor<2x1x5xf32>)
    -> tensor<1x?x?x8xf32> {
  // expected-error @+1 {{bias of shape [2, 1, 5] is not broadcastable to [B, Hq, Nq, Nk] = [1, 4, ?, 5]: dimension 0 has size 2, expected 1 or Hq = 4}}
  %0 = attn.attention q(%q : tensor<1x?x?x8xf32>) k(%k : tensor<1x1x5x8xf32>)
      v(%k : tensor<1x1x5x8xf32>) mask(%mask : tensor<4x1x5xi1>)
      bias(%bias : tensor<2x1x5xf32>) -> tensor<1x?x?x8xf32>
  return %0 : tensor<1x?x?x8xf32>
}

// -----

// Valid: mask and bias agreeing (the bias broadcasts over Nq).
func.func @mask_bias_agree(%q: tensor<1x?x?x8xf32>, %k: tensor<1x1x5x8xf32>,
                           %mask: tensor<4x3x5xi1>, %bias: tensor<4x1x5xf32>)
    -> tensor<1x?x?x8xf32> {
  %0 = attn.attention q(%q : tensor<1x?x?x8xf32>) k(%k : tensor<1x1x5x8xf32>)
      v(%k : tensor<1x1x5x8xf32>) mask(%mask : tensor<4x3x5xi1>)
      bias(%bias : tensor<4x1x5xf32>) -> tensor<1x?x?x8xf32>
  return %0 : tensor<1x?x?x8xf32>
}
