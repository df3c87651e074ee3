// RUN: attn-opt %s -split-input-file -verify-diagnostics

// One case per verifier message of attn.attention and
// attn.projected_attention (lib/IR/AttnOps.cpp), then the ODS type and
// attribute constraints, then parse errors. docs/Diagnostics.md lists them.

//===----------------------------------------------------------------------===//
// attn.attention: ranks and element types
//===----------------------------------------------------------------------===//

func.func @q_rank(%q: tensor<2x8x64xf32>, %k: tensor<2x2x8x64xf32>,
                  %v: tensor<2x2x8x64xf32>) -> tensor<2x2x8x64xf32> {
  // expected-error @+1 {{'attn.attention' op q must have rank 4 ([B, H, N, D] or [B, N, H, D]); got 'tensor<2x8x64xf32>'}}
  %0 = attn.attention q(%q : tensor<2x8x64xf32>) k(%k : tensor<2x2x8x64xf32>)
      v(%v : tensor<2x2x8x64xf32>) -> tensor<2x2x8x64xf32>
  return %0 : tensor<2x2x8x64xf32>
}

// -----

func.func @k_rank(%q: tensor<2x2x8x64xf32>, %k: tensor<2x2x8x8x64xf32>,
                  %v: tensor<2x2x8x64xf32>) -> tensor<2x2x8x64xf32> {
  // expected-error @+1 {{k must have rank 4 ([B, H, N, D] or [B, N, H, D]); got 'tensor<2x2x8x8x64xf32>'}}
  %0 = attn.attention q(%q : tensor<2x2x8x64xf32>) k(%k : tensor<2x2x8x8x64xf32>)
      v(%v : tensor<2x2x8x64xf32>) -> tensor<2x2x8x64xf32>
  return %0 : tensor<2x2x8x64xf32>
}

// -----

func.func @v_rank(%q: tensor<2x2x8x64xf32>, %k: tensor<2x2x8x64xf32>,
                  %v: tensor<64xf32>) -> tensor<2x2x8x64xf32> {
  // expected-error @+1 {{v must have rank 4 ([B, H, N, D] or [B, N, H, D]); got 'tensor<64xf32>'}}
  %0 = attn.attention q(%q : tensor<2x2x8x64xf32>) k(%k : tensor<2x2x8x64xf32>)
      v(%v : tensor<64xf32>) -> tensor<2x2x8x64xf32>
  return %0 : tensor<2x2x8x64xf32>
}

// -----

func.func @out_rank(%q: tensor<2x2x8x64xf32>, %k: tensor<2x2x8x64xf32>,
                    %v: tensor<2x2x8x64xf32>) -> tensor<2x8x128xf32> {
  // expected-error @+1 {{out must have rank 4 ([B, H, N, D] or [B, N, H, D]); got 'tensor<2x8x128xf32>'}}
  %0 = attn.attention q(%q : tensor<2x2x8x64xf32>) k(%k : tensor<2x2x8x64xf32>)
      v(%v : tensor<2x2x8x64xf32>) -> tensor<2x8x128xf32>
  return %0 : tensor<2x8x128xf32>
}

// -----

func.func @element_type(%q: tensor<2x2x8x64xf32>, %k: tensor<2x2x8x64xf16>,
                        %v: tensor<2x2x8x64xf32>) -> tensor<2x2x8x64xf32> {
  // expected-error @+1 {{q, k, v and out must share one element type (k and v may share an 8-bit quantized one); got 'f32', 'f16', 'f32', 'f32'}}
  %0 = attn.attention q(%q : tensor<2x2x8x64xf32>) k(%k : tensor<2x2x8x64xf16>)
      v(%v : tensor<2x2x8x64xf32>) -> tensor<2x2x8x64xf32>
  return %0 : tensor<2x2x8x64xf32>
}

// -----

func.func @out_element_type(%q: tensor<2x2x8x64xbf16>, %k: tensor<2x2x8x64xbf16>,
                            %v: tensor<2x2x8x64xbf16>) -> tensor<2x2x8x64xf32> {
  // expected-error @+1 {{q, k, v and out must share one element type (k and v may share an 8-bit quantized one); got 'bf16', 'bf16', 'bf16', 'f32'}}
  %0 = attn.attention q(%q : tensor<2x2x8x64xbf16>) k(%k : tensor<2x2x8x64xbf16>)
      v(%v : tensor<2x2x8x64xbf16>) -> tensor<2x2x8x64xf32>
  return %0 : tensor<2x2x8x64xf32>
}

//===----------------------------------------------------------------------===//
// attn.attention: sizes
//===----------------------------------------------------------------------===//

// -----

func.func @batch(%q: tensor<2x2x8x64xf32>, %k: tensor<3x2x8x64xf32>,
                 %v: tensor<?x2x8x64xf32>) -> tensor<2x2x8x64xf32> {
  // expected-error @+1 {{batch sizes differ: q has B = 2, k has B = 3, v has B = ?}}
  %0 = attn.attention q(%q : tensor<2x2x8x64xf32>) k(%k : tensor<3x2x8x64xf32>)
      v(%v : tensor<?x2x8x64xf32>) -> tensor<2x2x8x64xf32>
  return %0 : tensor<2x2x8x64xf32>
}

// -----

func.func @zero_query_heads(%q: tensor<2x0x8x64xf32>, %k: tensor<2x2x8x64xf32>,
                            %v: tensor<2x2x8x64xf32>) -> tensor<2x0x8x64xf32> {
  // expected-error @+1 {{q must have at least one head; got 0}}
  %0 = attn.attention q(%q : tensor<2x0x8x64xf32>) k(%k : tensor<2x2x8x64xf32>)
      v(%v : tensor<2x2x8x64xf32>) -> tensor<2x0x8x64xf32>
  return %0 : tensor<2x0x8x64xf32>
}

// -----

// In bnhd the head count is dimension 2.
func.func @zero_kv_heads_bnhd(%q: tensor<2x8x4x64xf32>, %k: tensor<2x8x0x64xf32>,
                              %v: tensor<2x8x0x64xf32>) -> tensor<2x8x4x64xf32> {
  // expected-error @+1 {{k must have at least one head; got 0}}
  %0 = attn.attention q(%q : tensor<2x8x4x64xf32>) k(%k : tensor<2x8x0x64xf32>)
      v(%v : tensor<2x8x0x64xf32>) layout(bnhd) -> tensor<2x8x4x64xf32>
  return %0 : tensor<2x8x4x64xf32>
}

// -----

func.func @zero_v_heads(%q: tensor<2x4x8x64xf32>, %k: tensor<2x?x8x64xf32>,
                        %v: tensor<2x0x8x64xf32>) -> tensor<2x4x8x64xf32> {
  // expected-error @+1 {{v must have at least one head; got 0}}
  %0 = attn.attention q(%q : tensor<2x4x8x64xf32>) k(%k : tensor<2x?x8x64xf32>)
      v(%v : tensor<2x0x8x64xf32>) -> tensor<2x4x8x64xf32>
  return %0 : tensor<2x4x8x64xf32>
}

// -----

func.func @kv_heads_differ(%q: tensor<2x8x8x64xf32>, %k: tensor<2x2x8x64xf32>,
                           %v: tensor<2x4x8x64xf32>) -> tensor<2x8x8x64xf32> {
  // expected-error @+1 {{k and v must have the same number of heads (Hkv): k has 2, v has 4}}
  %0 = attn.attention q(%q : tensor<2x8x8x64xf32>) k(%k : tensor<2x2x8x64xf32>)
      v(%v : tensor<2x4x8x64xf32>) -> tensor<2x8x8x64xf32>
  return %0 : tensor<2x8x8x64xf32>
}

// -----

func.func @heads_not_divisible(%q: tensor<2x6x8x64xf32>, %k: tensor<2x4x8x64xf32>,
                               %v: tensor<2x4x8x64xf32>) -> tensor<2x6x8x64xf32> {
  // expected-error @+1 {{query heads must be a multiple of K/V heads: Hq = 6 is not divisible by Hkv = 4}}
  %0 = attn.attention q(%q : tensor<2x6x8x64xf32>) k(%k : tensor<2x4x8x64xf32>)
      v(%v : tensor<2x4x8x64xf32>) -> tensor<2x6x8x64xf32>
  return %0 : tensor<2x6x8x64xf32>
}

// -----

// More K/V heads than query heads is not a grouping either.
func.func @more_kv_heads(%q: tensor<2x2x8x64xf32>, %k: tensor<2x8x8x64xf32>,
                         %v: tensor<2x8x8x64xf32>) -> tensor<2x2x8x64xf32> {
  // expected-error @+1 {{Hq = 2 is not divisible by Hkv = 8}}
  %0 = attn.attention q(%q : tensor<2x2x8x64xf32>) k(%k : tensor<2x8x8x64xf32>)
      v(%v : tensor<2x8x8x64xf32>) -> tensor<2x2x8x64xf32>
  return %0 : tensor<2x2x8x64xf32>
}

// -----

func.func @head_dim_qk(%q: tensor<2x8x8x64xf32>, %k: tensor<2x2x8x32xf32>,
                       %v: tensor<2x2x8x64xf32>) -> tensor<2x8x8x64xf32> {
  // expected-error @+1 {{q and k must have the same head dimension (Dqk): q has 64, k has 32}}
  %0 = attn.attention q(%q : tensor<2x8x8x64xf32>) k(%k : tensor<2x2x8x32xf32>)
      v(%v : tensor<2x2x8x64xf32>) -> tensor<2x8x8x64xf32>
  return %0 : tensor<2x8x8x64xf32>
}

// -----

func.func @head_dim_zero(%q: tensor<2x8x8x64xf32>, %k: tensor<2x2x8x64xf32>,
                         %v: tensor<2x2x8x0xf32>) -> tensor<2x8x8x0xf32> {
  // expected-error @+1 {{head dimensions must be positive; got Dqk = 64, Dv = 0}}
  %0 = attn.attention q(%q : tensor<2x8x8x64xf32>) k(%k : tensor<2x2x8x64xf32>)
      v(%v : tensor<2x2x8x0xf32>) -> tensor<2x8x8x0xf32>
  return %0 : tensor<2x8x8x0xf32>
}

// -----

func.func @seq_len_kv(%q: tensor<2x8x8x64xf32>, %k: tensor<2x2x16x64xf32>,
                      %v: tensor<2x2x12x64xf32>) -> tensor<2x8x8x64xf32> {
  // expected-error @+1 {{k and v must have the same sequence length (Nk): k has 16, v has 12}}
  %0 = attn.attention q(%q : tensor<2x8x8x64xf32>) k(%k : tensor<2x2x16x64xf32>)
      v(%v : tensor<2x2x12x64xf32>) -> tensor<2x8x8x64xf32>
  return %0 : tensor<2x8x8x64xf32>
}

// -----

// out takes Dv from v, not Dqk from q.
func.func @out_shape(%q: tensor<2x8x8x64xf32>, %k: tensor<2x2x16x64xf32>,
                     %v: tensor<2x2x16x32xf32>) -> tensor<2x8x8x64xf32> {
  // expected-error @+1 {{out must be [B, Hq, Nq, Dv] = [2, 8, 8, 32] (stored as [2, 8, 8, 32] in layout bhnd); got 'tensor<2x8x8x64xf32>'}}
  %0 = attn.attention q(%q : tensor<2x8x8x64xf32>) k(%k : tensor<2x2x16x64xf32>)
      v(%v : tensor<2x2x16x32xf32>) -> tensor<2x8x8x64xf32>
  return %0 : tensor<2x8x8x64xf32>
}

// -----

// out takes Nq from q, not Nk, and is stored in the op's layout.
func.func @out_shape_bnhd(%q: tensor<2x4x8x64xf32>, %k: tensor<2x16x2x64xf32>,
                          %v: tensor<2x16x2x64xf32>) -> tensor<2x16x8x64xf32> {
  // expected-error @+1 {{out must be [B, Hq, Nq, Dv] = [2, 8, 4, 64] (stored as [2, 4, 8, 64] in layout bnhd); got 'tensor<2x16x8x64xf32>'}}
  %0 = attn.attention q(%q : tensor<2x4x8x64xf32>) k(%k : tensor<2x16x2x64xf32>)
      v(%v : tensor<2x16x2x64xf32>) layout(bnhd) -> tensor<2x16x8x64xf32>
  return %0 : tensor<2x16x8x64xf32>
}

// -----

func.func @lse_shape(%q: tensor<2x8x4x64xf32>, %k: tensor<2x2x4x64xf32>,
                     %v: tensor<2x2x4x64xf32>)
    -> (tensor<2x8x4x64xf32>, tensor<2x4x8xf32>) {
  // expected-error @+1 {{lse must be [B, Hq, Nq] = [2, 8, 4] f32; got 'tensor<2x4x8xf32>'}}
  %0, %1 = attn.attention q(%q : tensor<2x8x4x64xf32>) k(%k : tensor<2x2x4x64xf32>)
      v(%v : tensor<2x2x4x64xf32>) -> tensor<2x8x4x64xf32>, tensor<2x4x8xf32>
  return %0, %1 : tensor<2x8x4x64xf32>, tensor<2x4x8xf32>
}

// -----

func.func @lse_rank(%q: tensor<2x8x4x64xf32>, %k: tensor<2x2x4x64xf32>,
                    %v: tensor<2x2x4x64xf32>)
    -> (tensor<2x8x4x64xf32>, tensor<2x8x4x1xf32>) {
  // expected-error @+1 {{lse must be [B, Hq, Nq] = [2, 8, 4] f32; got 'tensor<2x8x4x1xf32>'}}
  %0, %1 = attn.attention q(%q : tensor<2x8x4x64xf32>) k(%k : tensor<2x2x4x64xf32>)
      v(%v : tensor<2x2x4x64xf32>) -> tensor<2x8x4x64xf32>, tensor<2x8x4x1xf32>
  return %0, %1 : tensor<2x8x4x64xf32>, tensor<2x8x4x1xf32>
}

// -----

func.func @lse_sigmoid(%q: tensor<2x8x4x64xf32>, %k: tensor<2x2x4x64xf32>,
                       %v: tensor<2x2x4x64xf32>)
    -> (tensor<2x8x4x64xf32>, tensor<2x8x4xf32>) {
  // expected-error @+1 {{lse is defined only for softmax normalization; got norm(sigmoid)}}
  %0, %1 = attn.attention q(%q : tensor<2x8x4x64xf32>) k(%k : tensor<2x2x4x64xf32>)
      v(%v : tensor<2x2x4x64xf32>) norm(sigmoid)
      -> tensor<2x8x4x64xf32>, tensor<2x8x4xf32>
  return %0, %1 : tensor<2x8x4x64xf32>, tensor<2x8x4xf32>
}

//===----------------------------------------------------------------------===//
// attn.attention: modifiers
//===----------------------------------------------------------------------===//

// -----

func.func @kv_len_batch(%q: tensor<2x8x4x64xf32>, %k: tensor<2x2x4x64xf32>,
                        %v: tensor<2x2x4x64xf32>, %len: tensor<3xi32>)
    -> tensor<2x8x4x64xf32> {
  // expected-error @+1 {{kv_len must be a rank-1 tensor with one length per batch entry (B = 2); got 'tensor<3xi32>'}}
  %0 = attn.attention q(%q : tensor<2x8x4x64xf32>) k(%k : tensor<2x2x4x64xf32>)
      v(%v : tensor<2x2x4x64xf32>) kv_len(%len : tensor<3xi32>)
      -> tensor<2x8x4x64xf32>
  return %0 : tensor<2x8x4x64xf32>
}

// -----

func.func @kv_start_batch(%q: tensor<2x8x4x64xf32>, %k: tensor<2x2x4x64xf32>,
                          %v: tensor<2x2x4x64xf32>, %first: tensor<3xi32>)
    -> tensor<2x8x4x64xf32> {
  // expected-error @+1 {{kv_start must be a rank-1 tensor with one start per batch entry (B = 2); got 'tensor<3xi32>'}}
  %0 = attn.attention q(%q : tensor<2x8x4x64xf32>) k(%k : tensor<2x2x4x64xf32>)
      v(%v : tensor<2x2x4x64xf32>) kv_start(%first : tensor<3xi32>)
      -> tensor<2x8x4x64xf32>
  return %0 : tensor<2x8x4x64xf32>
}

// -----

func.func @key_mask_shape(%q: tensor<2x8x4x64xf32>, %k: tensor<2x2x6x64xf32>,
                          %m: tensor<2x4xi1>) -> tensor<2x8x4x64xf32> {
  // expected-error @+1 {{key_mask must be a [B, Nk] tensor (B = 2, Nk = 6); got 'tensor<2x4xi1>'}}
  %0 = attn.attention q(%q : tensor<2x8x4x64xf32>) k(%k : tensor<2x2x6x64xf32>)
      v(%k : tensor<2x2x6x64xf32>) key_mask(%m : tensor<2x4xi1>)
      -> tensor<2x8x4x64xf32>
  return %0 : tensor<2x8x4x64xf32>
}

// -----

func.func @key_mask_rank(%q: tensor<2x8x4x64xf32>, %m: tensor<2x1x1x4xi1>)
    -> tensor<2x8x4x64xf32> {
  // expected-error @+1 {{key_mask must be a [B, Nk] tensor (B = 2, Nk = 4); got 'tensor<2x1x1x4xi1>'}}
  %0 = attn.attention q(%q : tensor<2x8x4x64xf32>) k(%q : tensor<2x8x4x64xf32>)
      v(%q : tensor<2x8x4x64xf32>) key_mask(%m : tensor<2x1x1x4xi1>)
      -> tensor<2x8x4x64xf32>
  return %0 : tensor<2x8x4x64xf32>
}

// -----

func.func @kv_start_type(%q: tensor<2x8x4x64xf32>, %k: tensor<2x2x4x64xf32>,
                         %v: tensor<2x2x4x64xf32>, %first: tensor<2xf32>)
    -> tensor<2x8x4x64xf32> {
  // expected-error @+1 {{operand #3 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<2xf32>'}}
  %0 = attn.attention q(%q : tensor<2x8x4x64xf32>) k(%k : tensor<2x2x4x64xf32>)
      v(%v : tensor<2x2x4x64xf32>) kv_start(%first : tensor<2xf32>)
      -> tensor<2x8x4x64xf32>
  return %0 : tensor<2x8x4x64xf32>
}

// -----

func.func @kv_start_twice(%q: tensor<2x8x4x64xf32>, %first: tensor<2xi32>)
    -> tensor<2x8x4x64xf32> {
  // expected-error @+2 {{modifier 'kv_start' is given twice}}
  %0 = attn.attention q(%q : tensor<2x8x4x64xf32>) k(%q : tensor<2x8x4x64xf32>)
      v(%q : tensor<2x8x4x64xf32>) kv_start(%first : tensor<2xi32>) kv_start(%first : tensor<2xi32>)
      -> tensor<2x8x4x64xf32>
  return %0 : tensor<2x8x4x64xf32>
}

// -----

func.func @kv_len_rank(%q: tensor<?x8x4x64xf32>, %k: tensor<?x2x4x64xf32>,
                       %v: tensor<?x2x4x64xf32>, %len: tensor<2x1xi64>)
    -> tensor<?x8x4x64xf32> {
  // expected-error @+1 {{kv_len must be a rank-1 tensor with one length per batch entry (B = ?); got 'tensor<2x1xi64>'}}
  %0 = attn.attention q(%q : tensor<?x8x4x64xf32>) k(%k : tensor<?x2x4x64xf32>)
      v(%v : tensor<?x2x4x64xf32>) kv_len(%len : tensor<2x1xi64>)
      -> tensor<?x8x4x64xf32>
  return %0 : tensor<?x8x4x64xf32>
}

// -----

func.func @mask_rank(%q: tensor<2x8x4x64xf32>, %k: tensor<2x2x4x64xf32>,
                     %v: tensor<2x2x4x64xf32>, %m: tensor<1x2x8x4x4xi1>)
    -> tensor<2x8x4x64xf32> {
  // expected-error @+1 {{mask of rank 5 is not broadcastable to [B, Hq, Nq, Nk] = [2, 8, 4, 4]: rank must be at most 4}}
  %0 = attn.attention q(%q : tensor<2x8x4x64xf32>) k(%k : tensor<2x2x4x64xf32>)
      v(%v : tensor<2x2x4x64xf32>) mask(%m : tensor<1x2x8x4x4xi1>)
      -> tensor<2x8x4x64xf32>
  return %0 : tensor<2x8x4x64xf32>
}

// -----

// A mask per K/V head is not a mask per query head: broadcasting is against
// Hq = 8, not Hkv = 2.
func.func @mask_kv_heads(%q: tensor<2x8x4x64xf32>, %k: tensor<2x2x16x64xf32>,
                         %v: tensor<2x2x16x64xf32>, %m: tensor<2x2x4x16xi1>)
    -> tensor<2x8x4x64xf32> {
  // expected-error @+1 {{mask of shape [2, 2, 4, 16] is not broadcastable to [B, Hq, Nq, Nk] = [2, 8, 4, 16]: dimension 1 has size 2, expected 1 or Hq = 8}}
  %0 = attn.attention q(%q : tensor<2x8x4x64xf32>) k(%k : tensor<2x2x16x64xf32>)
      v(%v : tensor<2x2x16x64xf32>) mask(%m : tensor<2x2x4x16xi1>)
      -> tensor<2x8x4x64xf32>
  return %0 : tensor<2x8x4x64xf32>
}

// -----

// Broadcasting aligns trailing dimensions: a rank-2 mask is [Nq, Nk].
func.func @mask_transposed(%q: tensor<2x8x4x64xf32>, %k: tensor<2x2x16x64xf32>,
                           %v: tensor<2x2x16x64xf32>, %m: tensor<16x4xi1>)
    -> tensor<2x8x4x64xf32> {
  // expected-error @+1 {{mask of shape [16, 4] is not broadcastable to [B, Hq, Nq, Nk] = [2, 8, 4, 16]: dimension 0 has size 16, expected 1 or Nq = 4}}
  %0 = attn.attention q(%q : tensor<2x8x4x64xf32>) k(%k : tensor<2x2x16x64xf32>)
      v(%v : tensor<2x2x16x64xf32>) mask(%m : tensor<16x4xi1>)
      -> tensor<2x8x4x64xf32>
  return %0 : tensor<2x8x4x64xf32>
}

// -----

// The mask is always in the logical order, whatever the layout.
func.func @mask_bnhd(%q: tensor<2x4x8x64xf32>, %k: tensor<2x16x2x64xf32>,
                     %v: tensor<2x16x2x64xf32>, %m: tensor<2x4x8x16xi1>)
    -> tensor<2x4x8x64xf32> {
  // expected-error @+1 {{mask of shape [2, 4, 8, 16] is not broadcastable to [B, Hq, Nq, Nk] = [2, 8, 4, 16]: dimension 1 has size 4, expected 1 or Hq = 8}}
  %0 = attn.attention q(%q : tensor<2x4x8x64xf32>) k(%k : tensor<2x16x2x64xf32>)
      v(%v : tensor<2x16x2x64xf32>) layout(bnhd) mask(%m : tensor<2x4x8x16xi1>)
      -> tensor<2x4x8x64xf32>
  return %0 : tensor<2x4x8x64xf32>
}

// -----

func.func @bias_rank(%q: tensor<2x8x4x64xf32>, %k: tensor<2x2x4x64xf32>,
                     %v: tensor<2x2x4x64xf32>, %b: tensor<1x1x1x1x1xf32>)
    -> tensor<2x8x4x64xf32> {
  // expected-error @+1 {{bias of rank 5 is not broadcastable to [B, Hq, Nq, Nk] = [2, 8, 4, 4]: rank must be at most 4}}
  %0 = attn.attention q(%q : tensor<2x8x4x64xf32>) k(%k : tensor<2x2x4x64xf32>)
      v(%v : tensor<2x2x4x64xf32>) bias(%b : tensor<1x1x1x1x1xf32>)
      -> tensor<2x8x4x64xf32>
  return %0 : tensor<2x8x4x64xf32>
}

// -----

func.func @bias_shape(%q: tensor<2x8x4x64xf32>, %k: tensor<2x2x16x64xf32>,
                      %v: tensor<2x2x16x64xf32>, %b: tensor<4x15xf32>)
    -> tensor<2x8x4x64xf32> {
  // expected-error @+1 {{bias of shape [4, 15] is not broadcastable to [B, Hq, Nq, Nk] = [2, 8, 4, 16]: dimension 1 has size 15, expected 1 or Nk = 16}}
  %0 = attn.attention q(%q : tensor<2x8x4x64xf32>) k(%k : tensor<2x2x16x64xf32>)
      v(%v : tensor<2x2x16x64xf32>) bias(%b : tensor<4x15xf32>)
      -> tensor<2x8x4x64xf32>
  return %0 : tensor<2x8x4x64xf32>
}

// -----

func.func @bias_batch(%q: tensor<2x8x4x64xf32>, %k: tensor<2x2x16x64xf32>,
                      %v: tensor<2x2x16x64xf32>, %b: tensor<3x1x1x16xf16>)
    -> tensor<2x8x4x64xf32> {
  // expected-error @+1 {{bias of shape [3, 1, 1, 16] is not broadcastable to [B, Hq, Nq, Nk] = [2, 8, 4, 16]: dimension 0 has size 3, expected 1 or B = 2}}
  %0 = attn.attention q(%q : tensor<2x8x4x64xf32>) k(%k : tensor<2x2x16x64xf32>)
      v(%v : tensor<2x2x16x64xf32>) bias(%b : tensor<3x1x1x16xf16>)
      -> tensor<2x8x4x64xf32>
  return %0 : tensor<2x8x4x64xf32>
}

// -----

// One slope per query head (Hq = 8), not per K/V head.
func.func @alibi_heads(%q: tensor<2x8x4x64xf32>, %k: tensor<2x2x4x64xf32>,
                       %v: tensor<2x2x4x64xf32>, %s: tensor<2xf32>)
    -> tensor<2x8x4x64xf32> {
  // expected-error @+1 {{alibi slopes must be a rank-1 tensor with one slope per query head (Hq = 8); got 'tensor<2xf32>'}}
  %0 = attn.attention q(%q : tensor<2x8x4x64xf32>) k(%k : tensor<2x2x4x64xf32>)
      v(%v : tensor<2x2x4x64xf32>) alibi(%s : tensor<2xf32>)
      -> tensor<2x8x4x64xf32>
  return %0 : tensor<2x8x4x64xf32>
}

// -----

// One sink logit per query head (Hq = 8).
func.func @sink_heads(%q: tensor<2x8x4x64xf32>, %k: tensor<2x2x4x64xf32>,
                      %v: tensor<2x2x4x64xf32>, %s: tensor<2xf32>)
    -> tensor<2x8x4x64xf32> {
  // expected-error @+1 {{sink must be a rank-1 tensor with one logit per query head (Hq = 8); got 'tensor<2xf32>'}}
  %0 = attn.attention q(%q : tensor<2x8x4x64xf32>) k(%k : tensor<2x2x4x64xf32>)
      v(%v : tensor<2x2x4x64xf32>) sink(%s : tensor<2xf32>)
      -> tensor<2x8x4x64xf32>
  return %0 : tensor<2x8x4x64xf32>
}

// -----

// A sink joins the softmax's denominator: sigmoid has none.
func.func @sink_sigmoid(%q: tensor<2x8x4x64xf32>, %k: tensor<2x2x4x64xf32>,
                        %v: tensor<2x2x4x64xf32>, %s: tensor<8xf32>)
    -> tensor<2x8x4x64xf32> {
  // expected-error @+1 {{sink joins the softmax's denominator; norm(sigmoid) has none}}
  %0 = attn.attention q(%q : tensor<2x8x4x64xf32>) k(%k : tensor<2x2x4x64xf32>)
      v(%v : tensor<2x2x4x64xf32>) sink(%s : tensor<8xf32>) norm(sigmoid)
      -> tensor<2x8x4x64xf32>
  return %0 : tensor<2x8x4x64xf32>
}

// -----

func.func @alibi_rank(%q: tensor<2x8x4x64xf32>, %k: tensor<2x2x4x64xf32>,
                      %v: tensor<2x2x4x64xf32>, %s: tensor<2x8xf32>)
    -> tensor<2x8x4x64xf32> {
  // expected-error @+1 {{alibi slopes must be a rank-1 tensor with one slope per query head (Hq = 8); got 'tensor<2x8xf32>'}}
  %0 = attn.attention q(%q : tensor<2x8x4x64xf32>) k(%k : tensor<2x2x4x64xf32>)
      v(%v : tensor<2x2x4x64xf32>) alibi(%s : tensor<2x8xf32>)
      -> tensor<2x8x4x64xf32>
  return %0 : tensor<2x8x4x64xf32>
}

// -----

func.func @window_left_negative(%q: tensor<1x2x8x16xf32>)
    -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{window_left must be non-negative; got -1}}
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%q : tensor<1x2x8x16xf32>)
      v(%q : tensor<1x2x8x16xf32>) causal(top_left) window_left(-1)
      -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

func.func @window_right_negative(%q: tensor<1x2x8x16xf32>)
    -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{window_right must be non-negative; got -9223372036854775808}}
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%q : tensor<1x2x8x16xf32>)
      v(%q : tensor<1x2x8x16xf32>) window_right(-9223372036854775808)
      -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

// The scale is an attribute or a run-time operand, not both (the custom
// syntax takes one scale(...); the generic form could state both).
func.func @scale_twice(%q: tensor<1x2x8x16xf32>, %s: tensor<f32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{scale is given both as an attribute and as a run-time operand; state one}}
  %0 = "attn.attention"(%q, %q, %q, %s) <{scale = 5.000000e-01 : f64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0>}> ({}, {}) : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<f32>) -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

func.func @scale_rank(%q: tensor<1x2x8x16xf32>, %s: tensor<1xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{operand #3 must be 0D tensor of 32-bit float values, but got 'tensor<1xf32>'}}
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%q : tensor<1x2x8x16xf32>)
      v(%q : tensor<1x2x8x16xf32>) scale(%s : tensor<1xf32>)
      -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

func.func @scale_inf(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{scale must be finite; got INF}}
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%q : tensor<1x2x8x16xf32>)
      v(%q : tensor<1x2x8x16xf32>) scale(0x7FF0000000000000)
      -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

func.func @scale_nan(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{scale must be finite; got nan}}
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%q : tensor<1x2x8x16xf32>)
      v(%q : tensor<1x2x8x16xf32>) scale(0x7FF8000000000000)
      -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

func.func @softcap_zero(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{softcap must be positive and finite; got 0}}
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%q : tensor<1x2x8x16xf32>)
      v(%q : tensor<1x2x8x16xf32>) softcap(0.0) -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

func.func @softcap_negative(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{softcap must be positive and finite; got -3.000000e+01}}
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%q : tensor<1x2x8x16xf32>)
      v(%q : tensor<1x2x8x16xf32>) softcap(-30.0) -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

func.func @softcap_inf(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{softcap must be positive and finite; got INF}}
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%q : tensor<1x2x8x16xf32>)
      v(%q : tensor<1x2x8x16xf32>) softcap(0x7FF0000000000000)
      -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

//===----------------------------------------------------------------------===//
// attn.projected_attention
//===----------------------------------------------------------------------===//

// -----

func.func @proj_heads_not_divisible(%x: tensor<2x5x96xf32>, %wq: tensor<96x96xf32>,
                                    %wk: tensor<96x64xf32>, %wv: tensor<96x64xf32>,
                                    %wo: tensor<96x96xf32>) -> tensor<2x5x96xf32> {
  // expected-error @+1 {{'attn.projected_attention' op query heads must be a multiple of K/V heads: Hq = 6 is not divisible by Hkv = 4}}
  %0 = attn.projected_attention x(%x : tensor<2x5x96xf32>)
      wq(%wq : tensor<96x96xf32>) wk(%wk : tensor<96x64xf32>)
      wv(%wv : tensor<96x64xf32>) wo(%wo : tensor<96x96xf32>) heads(6, 4)
      -> tensor<2x5x96xf32>
  return %0 : tensor<2x5x96xf32>
}

// -----

func.func @proj_element_type(%x: tensor<2x5x64xf32>, %wq: tensor<64x64xf32>,
                             %wk: tensor<64x32xf16>, %wv: tensor<64x32xf32>,
                             %wo: tensor<64x64xf32>) -> tensor<2x5x64xf32> {
  // expected-error @+1 {{sources, weights and result must share one element type; expected 'f32', got 'tensor<64x32xf16>'}}
  %0 = attn.projected_attention x(%x : tensor<2x5x64xf32>)
      wq(%wq : tensor<64x64xf32>) wk(%wk : tensor<64x32xf16>)
      wv(%wv : tensor<64x32xf32>) wo(%wo : tensor<64x64xf32>) heads(4, 2)
      -> tensor<2x5x64xf32>
  return %0 : tensor<2x5x64xf32>
}

// -----

func.func @proj_kv_source_element_type(%x: tensor<2x5x64xbf16>,
                                       %mem: tensor<2x9x64xf32>,
                                       %w: tensor<64x64xbf16>)
    -> tensor<2x5x64xbf16> {
  // expected-error @+1 {{sources, weights and result must share one element type; expected 'bf16', got 'tensor<2x9x64xf32>'}}
  %0 = attn.projected_attention x(%x : tensor<2x5x64xbf16>)
      kv_source(%mem : tensor<2x9x64xf32>)
      wq(%w : tensor<64x64xbf16>) wk(%w : tensor<64x64xbf16>)
      wv(%w : tensor<64x64xbf16>) wo(%w : tensor<64x64xbf16>) heads(4, 4)
      -> tensor<2x5x64xbf16>
  return %0 : tensor<2x5x64xbf16>
}

// -----

func.func @proj_x_rank(%x: tensor<10x64xf32>, %w: tensor<64x64xf32>)
    -> tensor<10x64xf32> {
  // expected-error @+1 {{x must be [B, Nq, D]; got 'tensor<10x64xf32>'}}
  %0 = attn.projected_attention x(%x : tensor<10x64xf32>)
      wq(%w : tensor<64x64xf32>) wk(%w : tensor<64x64xf32>)
      wv(%w : tensor<64x64xf32>) wo(%w : tensor<64x64xf32>) heads(4, 4)
      -> tensor<10x64xf32>
  return %0 : tensor<10x64xf32>
}

// -----

func.func @proj_kv_source_rank(%x: tensor<2x5x64xf32>, %mem: tensor<2x3x9x64xf32>,
                               %w: tensor<64x64xf32>) -> tensor<2x5x64xf32> {
  // expected-error @+1 {{kv_source must be [B, Nk, D]; got 'tensor<2x3x9x64xf32>'}}
  %0 = attn.projected_attention x(%x : tensor<2x5x64xf32>)
      kv_source(%mem : tensor<2x3x9x64xf32>)
      wq(%w : tensor<64x64xf32>) wk(%w : tensor<64x64xf32>)
      wv(%w : tensor<64x64xf32>) wo(%w : tensor<64x64xf32>) heads(4, 4)
      -> tensor<2x5x64xf32>
  return %0 : tensor<2x5x64xf32>
}

// -----

func.func @proj_kv_source_model_dim(%x: tensor<2x5x64xf32>, %mem: tensor<2x9x32xf32>,
                                    %w: tensor<64x64xf32>) -> tensor<2x5x64xf32> {
  // expected-error @+1 {{kv_source must be [B, Nk, D] with B = 2 and D = 64 as in x; got 'tensor<2x9x32xf32>'}}
  %0 = attn.projected_attention x(%x : tensor<2x5x64xf32>)
      kv_source(%mem : tensor<2x9x32xf32>)
      wq(%w : tensor<64x64xf32>) wk(%w : tensor<64x64xf32>)
      wv(%w : tensor<64x64xf32>) wo(%w : tensor<64x64xf32>) heads(4, 4)
      -> tensor<2x5x64xf32>
  return %0 : tensor<2x5x64xf32>
}

// -----

func.func @proj_kv_source_batch(%x: tensor<2x5x64xf32>, %mem: tensor<3x9x64xf32>,
                                %w: tensor<64x64xf32>) -> tensor<2x5x64xf32> {
  // expected-error @+1 {{kv_source must be [B, Nk, D] with B = 2 and D = 64 as in x; got 'tensor<3x9x64xf32>'}}
  %0 = attn.projected_attention x(%x : tensor<2x5x64xf32>)
      kv_source(%mem : tensor<3x9x64xf32>)
      wq(%w : tensor<64x64xf32>) wk(%w : tensor<64x64xf32>)
      wv(%w : tensor<64x64xf32>) wo(%w : tensor<64x64xf32>) heads(4, 4)
      -> tensor<2x5x64xf32>
  return %0 : tensor<2x5x64xf32>
}

// -----

func.func @proj_wq_heads(%x: tensor<2x5x64xf32>, %wq: tensor<64x60xf32>,
                         %wk: tensor<64x32xf32>, %wv: tensor<64x32xf32>,
                         %wo: tensor<64x64xf32>) -> tensor<2x5x64xf32> {
  // expected-error @+1 {{wq must be [D, Hq*Dqk] with D = 64 and a multiple of 8 heads on the head side; got 'tensor<64x60xf32>'}}
  %0 = attn.projected_attention x(%x : tensor<2x5x64xf32>)
      wq(%wq : tensor<64x60xf32>) wk(%wk : tensor<64x32xf32>)
      wv(%wv : tensor<64x32xf32>) wo(%wo : tensor<64x64xf32>) heads(8, 2)
      -> tensor<2x5x64xf32>
  return %0 : tensor<2x5x64xf32>
}

// -----

func.func @proj_wk_model_dim(%x: tensor<2x5x64xf32>, %wq: tensor<64x64xf32>,
                             %wk: tensor<32x32xf32>, %wv: tensor<64x32xf32>,
                             %wo: tensor<64x64xf32>) -> tensor<2x5x64xf32> {
  // expected-error @+1 {{wk must be [D, Hkv*Dqk] with D = 64 and a multiple of 2 heads on the head side; got 'tensor<32x32xf32>'}}
  %0 = attn.projected_attention x(%x : tensor<2x5x64xf32>)
      wq(%wq : tensor<64x64xf32>) wk(%wk : tensor<32x32xf32>)
      wv(%wv : tensor<64x32xf32>) wo(%wo : tensor<64x64xf32>) heads(8, 2)
      -> tensor<2x5x64xf32>
  return %0 : tensor<2x5x64xf32>
}

// -----

func.func @proj_wv_rank(%x: tensor<2x5x64xf32>, %wq: tensor<64x64xf32>,
                        %wk: tensor<64x32xf32>, %wv: tensor<64x2x16xf32>,
                        %wo: tensor<64x64xf32>) -> tensor<2x5x64xf32> {
  // expected-error @+1 {{wv must be [D, Hkv*Dv] with D = 64 and a multiple of 2 heads on the head side; got 'tensor<64x2x16xf32>'}}
  %0 = attn.projected_attention x(%x : tensor<2x5x64xf32>)
      wq(%wq : tensor<64x64xf32>) wk(%wk : tensor<64x32xf32>)
      wv(%wv : tensor<64x2x16xf32>) wo(%wo : tensor<64x64xf32>) heads(8, 2)
      -> tensor<2x5x64xf32>
  return %0 : tensor<2x5x64xf32>
}

// -----

// MQA: one K/V head, so the message says "1 head".
func.func @proj_wv_zero(%x: tensor<2x5x64xf32>, %wq: tensor<64x64xf32>,
                        %wk: tensor<64x8xf32>, %wv: tensor<64x0xf32>,
                        %wo: tensor<64x64xf32>) -> tensor<2x5x64xf32> {
  // expected-error @+1 {{wv must be [D, Hkv*Dv] with D = 64 and a multiple of 1 head on the head side; got 'tensor<64x0xf32>'}}
  %0 = attn.projected_attention x(%x : tensor<2x5x64xf32>)
      wq(%wq : tensor<64x64xf32>) wk(%wk : tensor<64x8xf32>)
      wv(%wv : tensor<64x0xf32>) wo(%wo : tensor<64x64xf32>) heads(8, 1)
      -> tensor<2x5x64xf32>
  return %0 : tensor<2x5x64xf32>
}

// -----

// wo is [Hq*Dv, D]: the heads are on the rows.
func.func @proj_wo_transposed(%x: tensor<2x5x64xf32>, %wq: tensor<64x64xf32>,
                              %wk: tensor<64x32xf32>, %wv: tensor<64x32xf32>,
                              %wo: tensor<64x132xf32>) -> tensor<2x5x64xf32> {
  // expected-error @+1 {{wo must be [Hq*Dv, D] with D = 64 and a multiple of 8 heads on the head side; got 'tensor<64x132xf32>'}}
  %0 = attn.projected_attention x(%x : tensor<2x5x64xf32>)
      wq(%wq : tensor<64x64xf32>) wk(%wk : tensor<64x32xf32>)
      wv(%wv : tensor<64x32xf32>) wo(%wo : tensor<64x132xf32>) heads(8, 2)
      -> tensor<2x5x64xf32>
  return %0 : tensor<2x5x64xf32>
}

// -----

// Hq*Dqk = 64 with Hq = 8 gives Dqk = 8; Hkv*Dqk = 32 with Hkv = 2 gives 16.
func.func @proj_dqk(%x: tensor<2x5x64xf32>, %wq: tensor<64x64xf32>,
                    %wk: tensor<64x32xf32>, %wv: tensor<64x16xf32>,
                    %wo: tensor<64x64xf32>) -> tensor<2x5x64xf32> {
  // expected-error @+1 {{wq and wk give different head dimensions (Dqk): 8 from wq (Hq = 8), 16 from wk (Hkv = 2)}}
  %0 = attn.projected_attention x(%x : tensor<2x5x64xf32>)
      wq(%wq : tensor<64x64xf32>) wk(%wk : tensor<64x32xf32>)
      wv(%wv : tensor<64x16xf32>) wo(%wo : tensor<64x64xf32>) heads(8, 2)
      -> tensor<2x5x64xf32>
  return %0 : tensor<2x5x64xf32>
}

// -----

func.func @proj_dv(%x: tensor<2x5x64xf32>, %wq: tensor<64x64xf32>,
                   %wk: tensor<64x16xf32>, %wv: tensor<64x32xf32>,
                   %wo: tensor<64x64xf32>) -> tensor<2x5x64xf32> {
  // expected-error @+1 {{wv and wo give different value head dimensions (Dv): 16 from wv (Hkv = 2), 8 from wo (Hq = 8)}}
  %0 = attn.projected_attention x(%x : tensor<2x5x64xf32>)
      wq(%wq : tensor<64x64xf32>) wk(%wk : tensor<64x16xf32>)
      wv(%wv : tensor<64x32xf32>) wo(%wo : tensor<64x64xf32>) heads(8, 2)
      -> tensor<2x5x64xf32>
  return %0 : tensor<2x5x64xf32>
}

// -----

// The result has the query sequence length (5), not the memory's (9).
func.func @proj_result(%x: tensor<2x5x64xf32>, %mem: tensor<2x9x64xf32>,
                       %w: tensor<64x64xf32>) -> tensor<2x9x64xf32> {
  // expected-error @+1 {{result must be [B, Nq, D] = [2, 5, 64]; got 'tensor<2x9x64xf32>'}}
  %0 = attn.projected_attention x(%x : tensor<2x5x64xf32>)
      kv_source(%mem : tensor<2x9x64xf32>)
      wq(%w : tensor<64x64xf32>) wk(%w : tensor<64x64xf32>)
      wv(%w : tensor<64x64xf32>) wo(%w : tensor<64x64xf32>) heads(4, 4)
      -> tensor<2x9x64xf32>
  return %0 : tensor<2x9x64xf32>
}

// -----

// Modifiers are checked against [B, Hq, Nq, Nk] with Nk from kv_source.
func.func @proj_mask_nk(%x: tensor<2x5x64xf32>, %mem: tensor<2x9x64xf32>,
                        %w: tensor<64x64xf32>, %m: tensor<5x5xi1>)
    -> tensor<2x5x64xf32> {
  // expected-error @+1 {{'attn.projected_attention' op mask of shape [5, 5] is not broadcastable to [B, Hq, Nq, Nk] = [2, 4, 5, 9]: dimension 1 has size 5, expected 1 or Nk = 9}}
  %0 = attn.projected_attention x(%x : tensor<2x5x64xf32>)
      kv_source(%mem : tensor<2x9x64xf32>)
      wq(%w : tensor<64x64xf32>) wk(%w : tensor<64x64xf32>)
      wv(%w : tensor<64x64xf32>) wo(%w : tensor<64x64xf32>) heads(4, 4)
      mask(%m : tensor<5x5xi1>) -> tensor<2x5x64xf32>
  return %0 : tensor<2x5x64xf32>
}

// -----

func.func @proj_kv_len(%x: tensor<2x5x64xf32>, %w: tensor<64x64xf32>,
                       %len: tensor<1xi32>) -> tensor<2x5x64xf32> {
  // expected-error @+1 {{'attn.projected_attention' op kv_len must be a rank-1 tensor with one length per batch entry (B = 2); got 'tensor<1xi32>'}}
  %0 = attn.projected_attention x(%x : tensor<2x5x64xf32>)
      wq(%w : tensor<64x64xf32>) wk(%w : tensor<64x64xf32>)
      wv(%w : tensor<64x64xf32>) wo(%w : tensor<64x64xf32>) heads(4, 4)
      kv_len(%len : tensor<1xi32>) -> tensor<2x5x64xf32>
  return %0 : tensor<2x5x64xf32>
}

// -----

func.func @proj_bias(%x: tensor<2x5x64xf32>, %w: tensor<64x64xf32>,
                     %b: tensor<2x2x5x5xf32>) -> tensor<2x5x64xf32> {
  // expected-error @+1 {{'attn.projected_attention' op bias of shape [2, 2, 5, 5] is not broadcastable to [B, Hq, Nq, Nk] = [2, 4, 5, 5]: dimension 1 has size 2, expected 1 or Hq = 4}}
  %0 = attn.projected_attention x(%x : tensor<2x5x64xf32>)
      wq(%w : tensor<64x64xf32>) wk(%w : tensor<64x64xf32>)
      wv(%w : tensor<64x64xf32>) wo(%w : tensor<64x64xf32>) heads(4, 4)
      bias(%b : tensor<2x2x5x5xf32>) -> tensor<2x5x64xf32>
  return %0 : tensor<2x5x64xf32>
}

// -----

func.func @proj_alibi(%x: tensor<2x5x64xf32>, %wq: tensor<64x64xf32>,
                      %wkv: tensor<64x16xf32>, %s: tensor<1xf32>)
    -> tensor<2x5x64xf32> {
  // expected-error @+1 {{'attn.projected_attention' op alibi slopes must be a rank-1 tensor with one slope per query head (Hq = 4); got 'tensor<1xf32>'}}
  %0 = attn.projected_attention x(%x : tensor<2x5x64xf32>)
      wq(%wq : tensor<64x64xf32>) wk(%wkv : tensor<64x16xf32>)
      wv(%wkv : tensor<64x16xf32>) wo(%wq : tensor<64x64xf32>) heads(4, 1)
      alibi(%s : tensor<1xf32>) -> tensor<2x5x64xf32>
  return %0 : tensor<2x5x64xf32>
}

// -----

func.func @proj_window_left(%x: tensor<2x5x64xf32>, %w: tensor<64x64xf32>)
    -> tensor<2x5x64xf32> {
  // expected-error @+1 {{'attn.projected_attention' op window_left must be non-negative; got -4}}
  %0 = attn.projected_attention x(%x : tensor<2x5x64xf32>)
      wq(%w : tensor<64x64xf32>) wk(%w : tensor<64x64xf32>)
      wv(%w : tensor<64x64xf32>) wo(%w : tensor<64x64xf32>) heads(4, 4)
      window_left(-4) -> tensor<2x5x64xf32>
  return %0 : tensor<2x5x64xf32>
}

// -----

func.func @proj_window_right(%x: tensor<2x5x64xf32>, %w: tensor<64x64xf32>)
    -> tensor<2x5x64xf32> {
  // expected-error @+1 {{'attn.projected_attention' op window_right must be non-negative; got -1}}
  %0 = attn.projected_attention x(%x : tensor<2x5x64xf32>)
      wq(%w : tensor<64x64xf32>) wk(%w : tensor<64x64xf32>)
      wv(%w : tensor<64x64xf32>) wo(%w : tensor<64x64xf32>) heads(4, 4)
      window_right(-1) -> tensor<2x5x64xf32>
  return %0 : tensor<2x5x64xf32>
}

// -----

func.func @proj_scale(%x: tensor<2x5x64xf32>, %w: tensor<64x64xf32>)
    -> tensor<2x5x64xf32> {
  // expected-error @+1 {{'attn.projected_attention' op scale must be finite; got -INF}}
  %0 = attn.projected_attention x(%x : tensor<2x5x64xf32>)
      wq(%w : tensor<64x64xf32>) wk(%w : tensor<64x64xf32>)
      wv(%w : tensor<64x64xf32>) wo(%w : tensor<64x64xf32>) heads(4, 4)
      scale(0xFFF0000000000000) -> tensor<2x5x64xf32>
  return %0 : tensor<2x5x64xf32>
}

// -----

func.func @proj_softcap(%x: tensor<2x5x64xf32>, %w: tensor<64x64xf32>)
    -> tensor<2x5x64xf32> {
  // expected-error @+1 {{'attn.projected_attention' op softcap must be positive and finite; got -1.000000e+00}}
  %0 = attn.projected_attention x(%x : tensor<2x5x64xf32>)
      wq(%w : tensor<64x64xf32>) wk(%w : tensor<64x64xf32>)
      wv(%w : tensor<64x64xf32>) wo(%w : tensor<64x64xf32>) heads(4, 4)
      softcap(-1.0) -> tensor<2x5x64xf32>
  return %0 : tensor<2x5x64xf32>
}

//===----------------------------------------------------------------------===//
// ODS constraints (types and attributes)
//===----------------------------------------------------------------------===//

// -----

func.func @f64_element(%q: tensor<1x2x8x16xf64>) -> tensor<1x2x8x16xf64> {
  // expected-error @+1 {{'attn.attention' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<1x2x8x16xf64>'}}
  %0 = attn.attention q(%q : tensor<1x2x8x16xf64>) k(%q : tensor<1x2x8x16xf64>)
      v(%q : tensor<1x2x8x16xf64>) -> tensor<1x2x8x16xf64>
  return %0 : tensor<1x2x8x16xf64>
}

// -----

func.func @integer_element(%q: tensor<1x2x8x16xi8>) -> tensor<1x2x8x16xi8> {
  // expected-error @+1 {{operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<1x2x8x16xi8>'}}
  %0 = attn.attention q(%q : tensor<1x2x8x16xi8>) k(%q : tensor<1x2x8x16xi8>)
      v(%q : tensor<1x2x8x16xi8>) -> tensor<1x2x8x16xi8>
  return %0 : tensor<1x2x8x16xi8>
}

// -----

func.func @i8_mask(%q: tensor<1x2x8x16xf32>, %m: tensor<8x8xi8>)
    -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{'attn.attention' op operand #3 must be ranked tensor of 1-bit signless integer values, but got 'tensor<8x8xi8>'}}
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%q : tensor<1x2x8x16xf32>)
      v(%q : tensor<1x2x8x16xf32>) mask(%m : tensor<8x8xi8>)
      -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

func.func @f32_kv_len(%q: tensor<1x2x8x16xf32>, %len: tensor<1xf32>)
    -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{operand #3 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<1xf32>'}}
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%q : tensor<1x2x8x16xf32>)
      v(%q : tensor<1x2x8x16xf32>) kv_len(%len : tensor<1xf32>)
      -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

func.func @f64_bias(%q: tensor<1x2x8x16xf32>, %b: tensor<8x8xf64>)
    -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{operand #3 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<8x8xf64>'}}
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%q : tensor<1x2x8x16xf32>)
      v(%q : tensor<1x2x8x16xf32>) bias(%b : tensor<8x8xf64>)
      -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

func.func @f16_alibi(%q: tensor<1x2x8x16xf16>, %s: tensor<2xf16>)
    -> tensor<1x2x8x16xf16> {
  // expected-error @+1 {{operand #3 must be ranked tensor of 32-bit float values, but got 'tensor<2xf16>'}}
  %0 = attn.attention q(%q : tensor<1x2x8x16xf16>) k(%q : tensor<1x2x8x16xf16>)
      v(%q : tensor<1x2x8x16xf16>) alibi(%s : tensor<2xf16>)
      -> tensor<1x2x8x16xf16>
  return %0 : tensor<1x2x8x16xf16>
}

// -----

func.func @f16_lse(%q: tensor<1x2x8x16xf16>)
    -> (tensor<1x2x8x16xf16>, tensor<1x2x8xf16>) {
  // expected-error @+1 {{result #1 must be ranked tensor of 32-bit float values, but got 'tensor<1x2x8xf16>'}}
  %0, %1 = attn.attention q(%q : tensor<1x2x8x16xf16>) k(%q : tensor<1x2x8x16xf16>)
      v(%q : tensor<1x2x8x16xf16>) -> tensor<1x2x8x16xf16>, tensor<1x2x8xf16>
  return %0, %1 : tensor<1x2x8x16xf16>, tensor<1x2x8xf16>
}

// -----

func.func @proj_zero_heads(%x: tensor<2x5x64xf32>, %w: tensor<64x64xf32>)
    -> tensor<2x5x64xf32> {
  // expected-error @+1 {{'attn.projected_attention' op attribute 'num_kv_heads' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %0 = attn.projected_attention x(%x : tensor<2x5x64xf32>)
      wq(%w : tensor<64x64xf32>) wk(%w : tensor<64x64xf32>)
      wv(%w : tensor<64x64xf32>) wo(%w : tensor<64x64xf32>) heads(4, 0)
      -> tensor<2x5x64xf32>
  return %0 : tensor<2x5x64xf32>
}

// -----

func.func @proj_negative_heads(%x: tensor<2x5x64xf32>, %w: tensor<64x64xf32>)
    -> tensor<2x5x64xf32> {
  // expected-error @+1 {{attribute 'num_query_heads' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %0 = attn.projected_attention x(%x : tensor<2x5x64xf32>)
      wq(%w : tensor<64x64xf32>) wk(%w : tensor<64x64xf32>)
      wv(%w : tensor<64x64xf32>) wo(%w : tensor<64x64xf32>) heads(-4, 4)
      -> tensor<2x5x64xf32>
  return %0 : tensor<2x5x64xf32>
}

// -----

func.func @proj_f64(%x: tensor<2x5x64xf64>, %w: tensor<64x64xf64>)
    -> tensor<2x5x64xf64> {
  // expected-error @+1 {{'attn.projected_attention' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<2x5x64xf64>'}}
  %0 = attn.projected_attention x(%x : tensor<2x5x64xf64>)
      wq(%w : tensor<64x64xf64>) wk(%w : tensor<64x64xf64>)
      wv(%w : tensor<64x64xf64>) wo(%w : tensor<64x64xf64>) heads(4, 4)
      -> tensor<2x5x64xf64>
  return %0 : tensor<2x5x64xf64>
}

// -----

// Generic form: the layout enum is checked when the properties are built.
func.func @generic_bad_layout(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{Invalid attribute `layout` in property conversion: 7 : i32}}
  %0 = "attn.attention"(%q, %q, %q) <{layout = 7 : i32, normalization = 0 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>}> ({}, {}) : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

// Generic form: two optional results are one too many.
func.func @generic_two_lse(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{'attn.attention' op result group starting at #1 requires 0 or 1 element, but found 2}}
  %0:3 = "attn.attention"(%q, %q, %q) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>}> ({}, {}) : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> (tensor<1x2x8x16xf32>, tensor<1x2x8xf32>, tensor<1x2x8xf32>)
  return %0#0 : tensor<1x2x8x16xf32>
}

// -----

// Generic form: the segment sizes must match the operands.
func.func @generic_segments(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{'attn.attention' op operand count (3) does not match with the total size (4) specified in attribute 'operandSegmentSizes'}}
  %0 = "attn.attention"(%q, %q, %q) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0>}> ({}, {}) : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

//===----------------------------------------------------------------------===//
// Parse errors
//===----------------------------------------------------------------------===//

// -----

func.func @causal_middle(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+2 {{expected top_left or bottom_right in causal(...); got 'middle'}}
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%q : tensor<1x2x8x16xf32>)
      v(%q : tensor<1x2x8x16xf32>) causal(middle) -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

func.func @layout_bshd(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+2 {{expected bhnd or bnhd in layout(...); got 'bshd'}}
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%q : tensor<1x2x8x16xf32>)
      v(%q : tensor<1x2x8x16xf32>) layout(bshd) -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

func.func @norm_relu(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+2 {{expected softmax or sigmoid in norm(...); got 'relu'}}
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%q : tensor<1x2x8x16xf32>)
      v(%q : tensor<1x2x8x16xf32>) norm(relu) -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

// causal takes an alignment: there is no silent default.
func.func @causal_bare(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+2 {{expected '('}}
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%q : tensor<1x2x8x16xf32>)
      v(%q : tensor<1x2x8x16xf32>) causal -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

func.func @window_float(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+2 {{floating point value not valid for specified type}}
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%q : tensor<1x2x8x16xf32>)
      v(%q : tensor<1x2x8x16xf32>) window_left(1.5) -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

// Modifiers may come in any order (ops.mlir), but each only once.
func.func @modifier_twice(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+2 {{modifier 'scale' is given twice}}
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%q : tensor<1x2x8x16xf32>)
      v(%q : tensor<1x2x8x16xf32>) scale(0.5) causal(top_left) scale(0.25) -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

// A misspelt modifier is named, with the ones that exist.
func.func @modifier_unknown(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+2 {{unknown modifier 'casual'; expected one of page_table, ragged, layout, v_from_k, k_scale, v_scale, kv_len, kv_start, key_mask, mask, bias, alibi, sink, mod_inputs, causal, align, window_left, window_right, scale, softcap, norm, score_mod, mask_mod, or '->'}}
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%q : tensor<1x2x8x16xf32>)
      v(%q : tensor<1x2x8x16xf32>) casual(top_left) -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

// projected_attention has no layout modifier.
func.func @projected_layout(%x: tensor<2x5x64xf32>, %w: tensor<64x64xf32>) -> tensor<2x5x64xf32> {
  // expected-error @+3 {{unknown modifier 'layout'; expected one of kv_len, kv_start, key_mask, mask}}
  %0 = attn.projected_attention x(%x : tensor<2x5x64xf32>) wq(%w : tensor<64x64xf32>)
      wk(%w : tensor<64x64xf32>) wv(%w : tensor<64x64xf32>) wo(%w : tensor<64x64xf32>)
      heads(4, 4) layout(bnhd) -> tensor<2x5x64xf32>
  return %0 : tensor<2x5x64xf32>
}

// -----

func.func @missing_v(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+2 {{expected 'v'}}
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%q : tensor<1x2x8x16xf32>)
      -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

func.func @proj_missing_heads(%x: tensor<2x5x64xf32>, %w: tensor<64x64xf32>)
    -> tensor<2x5x64xf32> {
  // expected-error @+4 {{expected 'heads'}}
  %0 = attn.projected_attention x(%x : tensor<2x5x64xf32>)
      wq(%w : tensor<64x64xf32>) wk(%w : tensor<64x64xf32>)
      wv(%w : tensor<64x64xf32>) wo(%w : tensor<64x64xf32>)
      -> tensor<2x5x64xf32>
  return %0 : tensor<2x5x64xf32>
}

// -----

func.func @unranked(%q: tensor<*xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{invalid kind of type specified}}
  %0 = attn.attention q(%q : tensor<*xf32>) k(%q : tensor<*xf32>)
      v(%q : tensor<*xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @zero_key_head_dim(%q: tensor<1x2x4x?xf32>, %k: tensor<1x2x4x0xf32>,
                             %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{head dimensions must be positive; got Dqk = 0, Dv = 8}}
  %0 = attn.attention q(%q : tensor<1x2x4x?xf32>) k(%k : tensor<1x2x4x0xf32>)
      v(%v : tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %0 : tensor<1x2x4x8xf32>
}

// -----

func.func @proj_rows_overflow(%x: tensor<4611686018427387904x4x8xf32>,
                              %w: tensor<8x8xf32>)
    -> tensor<4611686018427387904x4x8xf32> {
  // expected-error @+1 {{B * Nq = 4611686018427387904 * 4 overflows a 64-bit size}}
  %0 = attn.projected_attention x(%x : tensor<4611686018427387904x4x8xf32>)
      wq(%w : tensor<8x8xf32>) wk(%w : tensor<8x8xf32>)
      wv(%w : tensor<8x8xf32>) wo(%w : tensor<8x8xf32>)
      heads(2, 2) -> tensor<4611686018427387904x4x8xf32>
  return %0 : tensor<4611686018427387904x4x8xf32>
}

// -----

func.func @operand_bytes_overflow(%q: tensor<1x1x2305843009213693952x4xf32>,
                                  %k: tensor<1x1x1x4xf32>)
    -> tensor<1x1x2305843009213693952x4xf32> {
  // expected-error @+1 {{operand #0 of type 'tensor<1x1x2305843009213693952x4xf32>' is too large: its size in bytes overflows a 64-bit size}}
  %0 = attn.attention q(%q : tensor<1x1x2305843009213693952x4xf32>)
      k(%k : tensor<1x1x1x4xf32>) v(%k : tensor<1x1x1x4xf32>)
      -> tensor<1x1x2305843009213693952x4xf32>
  return %0 : tensor<1x1x2305843009213693952x4xf32>
}

// -----

func.func @logits_bytes_overflow(%q: tensor<1x1x2147483648x1xf32>)
    -> tensor<1x1x2147483648x1xf32> {
  // expected-error @+1 {{[B, Hq, Nq, Nk] = [1, 1, 2147483648, 2147483648] is too large: the bytes of its f32 logits overflow a 64-bit size}}
  %0 = attn.attention q(%q : tensor<1x1x2147483648x1xf32>)
      k(%q : tensor<1x1x2147483648x1xf32>) v(%q : tensor<1x1x2147483648x1xf32>)
      -> tensor<1x1x2147483648x1xf32>
  return %0 : tensor<1x1x2147483648x1xf32>
}

// -----

func.func @append_rank(%c: tensor<8x4096x128xf32>, %u: tensor<8x1x128xf32>,
                       %p: tensor<8xi32>) -> tensor<8x4096x128xf32> {
  // expected-error @+1 {{cache and update must have rank 4; got 'tensor<8x4096x128xf32>' and 'tensor<8x1x128xf32>'}}
  %0 = attn.kv_cache_append cache(%c : tensor<8x4096x128xf32>)
      update(%u : tensor<8x1x128xf32>) at(%p : tensor<8xi32>) -> tensor<8x4096x128xf32>
  return %0 : tensor<8x4096x128xf32>
}

// -----

func.func @append_element_type(%c: tensor<1x2x8x4xf32>, %u: tensor<1x2x1x4xf16>,
                               %p: tensor<1xi32>) -> tensor<1x2x8x4xf32> {
  // expected-error @+1 {{cache and update must share one element type; got 'f32' and 'f16'}}
  %0 = attn.kv_cache_append cache(%c : tensor<1x2x8x4xf32>)
      update(%u : tensor<1x2x1x4xf16>) at(%p : tensor<1xi32>) -> tensor<1x2x8x4xf32>
  return %0 : tensor<1x2x8x4xf32>
}

// -----

func.func @append_heads(%c: tensor<1x2x8x4xf32>, %u: tensor<1x3x1x4xf32>,
                        %p: tensor<1xi32>) -> tensor<1x2x8x4xf32> {
  // expected-error @+1 {{update must match the cache in H: cache has 2, update has 3}}
  %0 = attn.kv_cache_append cache(%c : tensor<1x2x8x4xf32>)
      update(%u : tensor<1x3x1x4xf32>) at(%p : tensor<1xi32>) -> tensor<1x2x8x4xf32>
  return %0 : tensor<1x2x8x4xf32>
}

// -----

func.func @append_too_many_rows(%c: tensor<1x2x8x4xf32>, %u: tensor<1x2x9x4xf32>,
                                %p: tensor<1xi32>) -> tensor<1x2x8x4xf32> {
  // expected-error @+1 {{update has more rows (9) than the cache holds (8)}}
  %0 = attn.kv_cache_append cache(%c : tensor<1x2x8x4xf32>)
      update(%u : tensor<1x2x9x4xf32>) at(%p : tensor<1xi32>) -> tensor<1x2x8x4xf32>
  return %0 : tensor<1x2x8x4xf32>
}

// -----

func.func @append_positions(%c: tensor<2x2x8x4xf32>, %u: tensor<2x2x1x4xf32>,
                            %p: tensor<3xi32>) -> tensor<2x2x8x4xf32> {
  // expected-error @+1 {{positions must be a rank-1 tensor with one entry per batch entry (B = 2); got 'tensor<3xi32>'}}
  %0 = attn.kv_cache_append cache(%c : tensor<2x2x8x4xf32>)
      update(%u : tensor<2x2x1x4xf32>) at(%p : tensor<3xi32>) -> tensor<2x2x8x4xf32>
  return %0 : tensor<2x2x8x4xf32>
}

// -----

func.func @combine_out_rank(%o: tensor<2x8x4xf32>, %l: tensor<2x8xf32>)
    -> (tensor<2x8x4xf32>, tensor<2x8xf32>) {
  // expected-error @+1 {{out must have rank 4; got 'tensor<2x8x4xf32>'}}
  %0, %1 = attn.combine a(%o, %l : tensor<2x8x4xf32>, tensor<2x8xf32>)
      b(%o, %l : tensor<2x8x4xf32>, tensor<2x8xf32>) -> tensor<2x8x4xf32>, tensor<2x8xf32>
  return %0, %1 : tensor<2x8x4xf32>, tensor<2x8xf32>
}

// -----

func.func @combine_lse(%o: tensor<1x2x8x4xf32>, %l: tensor<1x2x9xf32>)
    -> (tensor<1x2x8x4xf32>, tensor<1x2x9xf32>) {
  // expected-error @+1 {{lse must be [B, Hq, Nq] = [1, 2, 8] to match out; got 'tensor<1x2x9xf32>'}}
  %0, %1 = attn.combine a(%o, %l : tensor<1x2x8x4xf32>, tensor<1x2x9xf32>)
      b(%o, %l : tensor<1x2x8x4xf32>, tensor<1x2x9xf32>) -> tensor<1x2x8x4xf32>, tensor<1x2x9xf32>
  return %0, %1 : tensor<1x2x8x4xf32>, tensor<1x2x9xf32>
}

// -----

func.func @combine_types(%o: tensor<1x2x8x4xf32>, %l: tensor<1x2x8xf32>,
                         %o2: tensor<1x2x8x4xf16>)
    -> (tensor<1x2x8x4xf32>, tensor<1x2x8xf32>) {
  // expected-error @+1 {{all of {out_a, out_b, out} have same type}}
  %0, %1 = attn.combine a(%o, %l : tensor<1x2x8x4xf32>, tensor<1x2x8xf32>)
      b(%o2, %l : tensor<1x2x8x4xf16>, tensor<1x2x8xf32>) -> tensor<1x2x8x4xf32>, tensor<1x2x8xf32>
  return %0, %1 : tensor<1x2x8x4xf32>, tensor<1x2x8xf32>
}

// -----

func.func @proj_expansion_overflow(%x: tensor<1x2147483648x4xf32>,
                                   %w: tensor<4x8589934592xf32>,
                                   %wv: tensor<4x1xf32>, %wo: tensor<1x4xf32>)
    -> tensor<1x2147483648x4xf32> {
  // expected-error @+1 {{the projected q [B, N, H, D] = [1, 2147483648, 1, 8589934592] is too large: its size in bytes overflows a 64-bit size}}
  %0 = attn.projected_attention x(%x : tensor<1x2147483648x4xf32>)
      wq(%w : tensor<4x8589934592xf32>) wk(%w : tensor<4x8589934592xf32>)
      wv(%wv : tensor<4x1xf32>) wo(%wo : tensor<1x4xf32>)
      heads(1, 1) -> tensor<1x2147483648x4xf32>
  return %0 : tensor<1x2147483648x4xf32>
}

//===----------------------------------------------------------------------===//
// Score and mask regions, align
//===----------------------------------------------------------------------===//

// -----

func.func @align_contradicts_causal(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{'attn.attention' op align(top_left) contradicts causal(bottom_right): the causal mask fixes the alignment}}
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%q : tensor<1x2x8x16xf32>)
      v(%q : tensor<1x2x8x16xf32>) causal(bottom_right) align(top_left) -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

func.func @align_bad(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+2 {{expected top_left or bottom_right in align(...); got 'center'}}
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%q : tensor<1x2x8x16xf32>)
      v(%q : tensor<1x2x8x16xf32>) align(center) -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

func.func @mask_mod_args(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{'attn.attention' op mask_mod must have block arguments (b, h, i, j : index) = (index, index, index, index); got (index, index, index)}}
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%q : tensor<1x2x8x16xf32>)
      v(%q : tensor<1x2x8x16xf32>) mask_mod {
      ^bb0(%b: index, %i: index, %j: index):
        %t = arith.cmpi sle, %j, %i : index
        attn.yield %t : i1
      } -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

func.func @score_mod_args(%q: tensor<1x2x8x16xf32>, %t: tensor<2xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{'attn.attention' op score_mod must have block arguments (b, h, i, j : index, s : f32, then one per mod_inputs tensor) = (index, index, index, index, f32, tensor<2xf32>); got (index, index, index, index, f32)}}
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%q : tensor<1x2x8x16xf32>)
      v(%q : tensor<1x2x8x16xf32>) mod_inputs(%t : tensor<2xf32>) score_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32):
        attn.yield %s : f32
      } -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

func.func @mask_mod_yields_f32(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{'attn.attention' op mask_mod must yield whether the key may be read (i1); got 'f32'}}
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%q : tensor<1x2x8x16xf32>)
      v(%q : tensor<1x2x8x16xf32>) mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %c = arith.constant 1.0 : f32
        attn.yield %c : f32
      } -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

func.func @score_mod_yields_f16(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{'attn.attention' op score_mod must yield the new logit (f32); got 'f16'}}
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%q : tensor<1x2x8x16xf32>)
      v(%q : tensor<1x2x8x16xf32>) score_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32):
        %x = arith.truncf %s : f32 to f16
        attn.yield %x : f16
      } -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

func.func @region_bad_op(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{'attn.attention' op mask_mod may contain only arith and math ops, tensor.extract and tensor.dim; got 'scf.if'}}
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%q : tensor<1x2x8x16xf32>)
      v(%q : tensor<1x2x8x16xf32>) mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %t = arith.cmpi sle, %j, %i : index
        // expected-note @+1 {{this op}}
        %r = scf.if %t -> i1 {
          scf.yield %t : i1
        } else {
          scf.yield %t : i1
        }
        attn.yield %r : i1
      } -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

// The regions are isolated: they read tensors through mod_inputs only.
func.func @region_captures(%q: tensor<1x2x8x16xf32>, %doc: tensor<8xi32>) -> tensor<1x2x8x16xf32> {
  // expected-note @+1 {{required by region isolation constraints}}
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%q : tensor<1x2x8x16xf32>)
      v(%q : tensor<1x2x8x16xf32>) mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        // expected-error @+1 {{using value defined outside the region}}
        %di = tensor.extract %doc[%i] : tensor<8xi32>
        %dj = tensor.extract %doc[%j] : tensor<8xi32>
        %t = arith.cmpi eq, %di, %dj : i32
        attn.yield %t : i1
      } -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

func.func @mod_inputs_unused(%q: tensor<1x2x8x16xf32>, %doc: tensor<8xi32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{'attn.attention' op mod_inputs are read only by score_mod and mask_mod regions; this op has neither}}
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%q : tensor<1x2x8x16xf32>)
      v(%q : tensor<1x2x8x16xf32>) mod_inputs(%doc : tensor<8xi32>) -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

func.func @yield_outside(%x: i1) {
  // expected-error @+1 {{'attn.yield' op expects parent op to be one of 'attn.attention, attn.projected_attention'}}
  attn.yield %x : i1
}

// -----

func.func @mod_region_two_blocks(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{'attn.attention' op region #1 ('mask_mod') failed to verify constraint: region with at most 1 blocks}}
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%q : tensor<1x2x8x16xf32>)
      v(%q : tensor<1x2x8x16xf32>) mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %t = arith.cmpi sle, %j, %i : index
        cf.br ^bb1
      ^bb1:
        attn.yield %t : i1
      } -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

// A region may be less static than the tensor it reads (sizes specialized at
// run time), never more: it would read a size the tensor does not have.
func.func @region_more_static(%q: tensor<1x2x8x16xf32>, %doc: tensor<?xi32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{'attn.attention' op mask_mod must have block arguments (b, h, i, j : index, then one per mod_inputs tensor) = (index, index, index, index, tensor<?xi32>); got (index, index, index, index, tensor<4xi32>)}}
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%q : tensor<1x2x8x16xf32>)
      v(%q : tensor<1x2x8x16xf32>) mod_inputs(%doc : tensor<?xi32>) mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %d: tensor<4xi32>):
        %t = arith.cmpi sle, %j, %i : index
        attn.yield %t : i1
      } -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

func.func @region_dim_index(%q: tensor<1x2x8x16xf32>, %t: tensor<4x4xi32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{'attn.attention' op mask_mod: tensor.dim needs a constant dimension index}}
  %0 = attn.attention q(%q : tensor<1x2x8x16xf32>) k(%q : tensor<1x2x8x16xf32>)
      v(%q : tensor<1x2x8x16xf32>) mod_inputs(%t : tensor<4x4xi32>) mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %d: tensor<4x4xi32>):
        %n = tensor.dim %d, %h : tensor<4x4xi32>
        %ok = arith.cmpi slt, %j, %n : index
        attn.yield %ok : i1
      } -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

// The per-tile classification of a mask region bounds its index arithmetic
// with sizes below 2^40.
func.func @mask_mod_huge(%q: tensor<1x1x1x1xf32>, %k: tensor<1x1x1099511627776x1xf32>) -> tensor<1x1x1x1xf32> {
  // expected-error @+1 {{'attn.attention' op mask_mod needs B, Hq, Nq and Nk below 2^40; got Nk = 1099511627776}}
  %0 = attn.attention q(%q : tensor<1x1x1x1xf32>) k(%k : tensor<1x1x1099511627776x1xf32>)
      v(%k : tensor<1x1x1099511627776x1xf32>) mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %t = arith.cmpi sle, %j, %i : index
        attn.yield %t : i1
      } -> tensor<1x1x1x1xf32>
  return %0 : tensor<1x1x1x1xf32>
}
