// RUN: attn-opt %s -split-input-file -verify-diagnostics
//
// Sizes that q, k and v leave dynamic but out or lse state statically
// (docs/Robustness.md): the modifiers are checked against them, as they are
// against q's own sizes, instead of being accepted and failing at run time.

func.func @batch_from_out(%q: tensor<?x2x3x4xf32>, %kv_len: tensor<3xi32>)
    -> tensor<4x2x3x4xf32> {
  // expected-error @+1 {{kv_len must be a rank-1 tensor with one length per batch entry (B = 4); got 'tensor<3xi32>'}}
  %0 = attn.attention q(%q : tensor<?x2x3x4xf32>) k(%q : tensor<?x2x3x4xf32>)
      v(%q : tensor<?x2x3x4xf32>) kv_len(%kv_len : tensor<3xi32>)
      -> tensor<4x2x3x4xf32>
  return %0 : tensor<4x2x3x4xf32>
}

// -----

func.func @heads_from_out(%q: tensor<1x?x3x4xf32>, %k: tensor<1x2x3x4xf32>,
                          %slopes: tensor<4xf32>) -> tensor<1x6x3x4xf32> {
  // expected-error @+1 {{alibi slopes must be a rank-1 tensor with one slope per query head (Hq = 6); got 'tensor<4xf32>'}}
  %0 = attn.attention q(%q : tensor<1x?x3x4xf32>) k(%k : tensor<1x2x3x4xf32>)
      v(%k : tensor<1x2x3x4xf32>) alibi(%slopes : tensor<4xf32>)
      -> tensor<1x6x3x4xf32>
  return %0 : tensor<1x6x3x4xf32>
}

// -----

func.func @heads_not_divisible_from_out(%q: tensor<1x?x3x4xf32>,
                                        %k: tensor<1x4x3x4xf32>)
    -> tensor<1x6x3x4xf32> {
  // expected-error @+1 {{query heads must be a multiple of K/V heads: Hq = 6 is not divisible by Hkv = 4}}
  %0 = attn.attention q(%q : tensor<1x?x3x4xf32>) k(%k : tensor<1x4x3x4xf32>)
      v(%k : tensor<1x4x3x4xf32>) -> tensor<1x6x3x4xf32>
  return %0 : tensor<1x6x3x4xf32>
}

// -----

func.func @query_len_from_lse(%q: tensor<1x1x?x4xf32>, %k: tensor<1x1x5x4xf32>,
                              %mask: tensor<2x5xi1>)
    -> (tensor<1x1x?x4xf32>, tensor<1x1x3xf32>) {
  // expected-error @+1 {{mask of shape [2, 5] is not broadcastable to [B, Hq, Nq, Nk] = [1, 1, 3, 5]: dimension 0 has size 2, expected 1 or Nq = 3}}
  %0, %1 = attn.attention q(%q : tensor<1x1x?x4xf32>) k(%k : tensor<1x1x5x4xf32>)
      v(%k : tensor<1x1x5x4xf32>) mask(%mask : tensor<2x5xi1>)
      -> tensor<1x1x?x4xf32>, tensor<1x1x3xf32>
  return %0, %1 : tensor<1x1x?x4xf32>, tensor<1x1x3xf32>
}

// -----

func.func @lse_heads_disagree_with_out(%q: tensor<1x?x3x4xf32>, %k: tensor<1x1x3x4xf32>)
    -> (tensor<1x2x3x4xf32>, tensor<1x4x3xf32>) {
  // expected-error @+1 {{lse must be [B, Hq, Nq] = [1, 2, 3] f32; got 'tensor<1x4x3xf32>'}}
  %0, %1 = attn.attention q(%q : tensor<1x?x3x4xf32>) k(%k : tensor<1x1x3x4xf32>)
      v(%k : tensor<1x1x3x4xf32>) -> tensor<1x2x3x4xf32>, tensor<1x4x3xf32>
  return %0, %1 : tensor<1x2x3x4xf32>, tensor<1x4x3xf32>
}

// -----

// Valid: the same sizes agreeing.
func.func @consistent(%q: tensor<?x?x?x4xf32>, %k: tensor<?x2x5x4xf32>,
                      %kv_len: tensor<4xi32>, %slopes: tensor<6xf32>)
    -> (tensor<4x6x3x4xf32>, tensor<4x6x3xf32>) {
  %0, %1 = attn.attention q(%q : tensor<?x?x?x4xf32>) k(%k : tensor<?x2x5x4xf32>)
      v(%k : tensor<?x2x5x4xf32>) kv_len(%kv_len : tensor<4xi32>)
      alibi(%slopes : tensor<6xf32>) -> tensor<4x6x3x4xf32>, tensor<4x6x3xf32>
  return %0, %1 : tensor<4x6x3x4xf32>, tensor<4x6x3xf32>
}
