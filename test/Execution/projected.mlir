// The projection-level op, executed and checked against numbers computed by
// hand (identity-like weights, so the projections are easy to follow).
//
// RUN: attn-run %s --entry=self_identity --print --reps=1 | FileCheck %s --check-prefix=SELF
// RUN: attn-run %s --entry=self_mqa_causal --print --reps=1 | FileCheck %s --check-prefix=MQA
// RUN: attn-run %s --entry=cross_identity --print --reps=1 | FileCheck %s --check-prefix=CROSS

// One head, D = Dqk = Dv = 2, Wq = Wk = Wv = I, Wo = 2 I, scale 1, x = I:
// Q = K = V = x, logits row 0 [1, 0], row 1 [0, 1].
//   a = e/(e+1) = 0.731059, b = 1/(e+1) = 0.268941
//   Z = [[a, b], [b, a]], result = 2 Z = [[1.46212, 0.537883], [0.537883, 1.46212]]
// SELF:      result: f32 [1, 2, 2]
// SELF-NEXT: {{^}}1.46212 0.537883 0.537883 1.46212{{$}}
func.func @self_identity() -> tensor<1x2x2xf32> {
  %x = arith.constant dense<[[[1.0, 0.0], [0.0, 1.0]]]> : tensor<1x2x2xf32>
  %i = arith.constant dense<[[1.0, 0.0], [0.0, 1.0]]> : tensor<2x2xf32>
  %wo = arith.constant dense<[[2.0, 0.0], [0.0, 2.0]]> : tensor<2x2xf32>
  %y = attn.projected_attention x(%x : tensor<1x2x2xf32>)
      wq(%i : tensor<2x2xf32>) wk(%i : tensor<2x2xf32>) wv(%i : tensor<2x2xf32>)
      wo(%wo : tensor<2x2xf32>) heads(1, 1) scale(1.0) -> tensor<1x2x2xf32>
  return %y : tensor<1x2x2xf32>
}

// Two query heads (Dqk = 1: head h's query is x[:, h]) share one K/V head
// (MQA): Wk = [[1], [1]] makes K = x0 + x1 = 1 for both tokens, so every
// allowed key gets the same logit; Wv = [[1], [2]] makes V = [1], [2]. Wo = I
// puts head h in column h. Causal top-left:
//   token 0 reads V0 = 1 in both heads         -> [1, 1]
//   token 1 reads mean(V0, V1) = 1.5 in both   -> [1.5, 1.5]
// MQA:      result: f32 [1, 2, 2]
// MQA-NEXT: {{^}}1 1 1.5 1.5{{$}}
func.func @self_mqa_causal() -> tensor<1x2x2xf32> {
  %x = arith.constant dense<[[[1.0, 0.0], [0.0, 1.0]]]> : tensor<1x2x2xf32>
  %wq = arith.constant dense<[[1.0, 0.0], [0.0, 1.0]]> : tensor<2x2xf32>
  %wk = arith.constant dense<[[1.0], [1.0]]> : tensor<2x1xf32>
  %wv = arith.constant dense<[[1.0], [2.0]]> : tensor<2x1xf32>
  %wo = arith.constant dense<[[1.0, 0.0], [0.0, 1.0]]> : tensor<2x2xf32>
  %y = attn.projected_attention x(%x : tensor<1x2x2xf32>)
      wq(%wq : tensor<2x2xf32>) wk(%wk : tensor<2x1xf32>) wv(%wv : tensor<2x1xf32>)
      wo(%wo : tensor<2x2xf32>) heads(2, 1) causal(top_left) -> tensor<1x2x2xf32>
  return %y : tensor<1x2x2xf32>
}

// Cross-attention: one query token x = [1, 0] reads a memory of two tokens
// [1, 0], [0, 1]; all weights I, scale 1. Logits [1, 0]:
//   result = a [1, 0] + b [0, 1] = [0.731059, 0.268941]
// CROSS:      result: f32 [1, 1, 2]
// CROSS-NEXT: {{^}}0.731059 0.268941{{$}}
func.func @cross_identity() -> tensor<1x1x2xf32> {
  %x = arith.constant dense<[[[1.0, 0.0]]]> : tensor<1x1x2xf32>
  %mem = arith.constant dense<[[[1.0, 0.0], [0.0, 1.0]]]> : tensor<1x2x2xf32>
  %i = arith.constant dense<[[1.0, 0.0], [0.0, 1.0]]> : tensor<2x2xf32>
  %y = attn.projected_attention x(%x : tensor<1x1x2xf32>)
      kv_source(%mem : tensor<1x2x2xf32>)
      wq(%i : tensor<2x2xf32>) wk(%i : tensor<2x2xf32>) wv(%i : tensor<2x2xf32>)
      wo(%i : tensor<2x2xf32>) heads(1, 1) scale(1.0) -> tensor<1x1x2xf32>
  return %y : tensor<1x1x2xf32>
}
