// RUN: attn-opt %s -split-input-file -verify-diagnostics

// One case per verifier message of latent attention (v_from_k) on
// attn.attention (lib/IR/AttnOps.cpp). docs/Diagnostics.md lists them.

func.func @v_not_k(%q: tensor<1x4x8x64xf32>, %k: tensor<1x1x8x64xf32>, %v: tensor<1x1x8x64xf32>) -> tensor<1x4x8x48xf32> {
  // expected-error @+1 {{'attn.attention' op v_from_k(48) reads V from k's first columns: v must be the same value as k}}
  %0 = attn.attention q(%q : tensor<1x4x8x64xf32>) k(%k : tensor<1x1x8x64xf32>)
      v(%v : tensor<1x1x8x64xf32>) v_from_k(48) -> tensor<1x4x8x48xf32>
  return %0 : tensor<1x4x8x48xf32>
}

// -----

func.func @too_wide(%q: tensor<1x4x8x64xf32>, %k: tensor<1x1x8x64xf32>) -> tensor<1x4x8x80xf32> {
  // expected-error @+1 {{'attn.attention' op v_from_k(80) must take between 1 and Dqk = 64 columns of k}}
  %0 = attn.attention q(%q : tensor<1x4x8x64xf32>) k(%k : tensor<1x1x8x64xf32>)
      v(%k : tensor<1x1x8x64xf32>) v_from_k(80) -> tensor<1x4x8x80xf32>
  return %0 : tensor<1x4x8x80xf32>
}

// -----

func.func @zero(%q: tensor<1x4x8x64xf32>, %k: tensor<1x1x8x64xf32>) -> tensor<1x4x8x64xf32> {
  // expected-error @+1 {{'attn.attention' op v_from_k(0) must take between 1 and Dqk = 64 columns of k}}
  %0 = attn.attention q(%q : tensor<1x4x8x64xf32>) k(%k : tensor<1x1x8x64xf32>)
      v(%k : tensor<1x1x8x64xf32>) v_from_k(0) -> tensor<1x4x8x64xf32>
  return %0 : tensor<1x4x8x64xf32>
}

// -----

func.func @dynamic_d(%q: tensor<1x4x8x?xf32>, %k: tensor<1x1x8x?xf32>) -> tensor<1x4x8x32xf32> {
  // expected-error @+1 {{'attn.attention' op v_from_k needs a static head dimension in k; got 'tensor<1x1x8x?xf32>'}}
  %0 = attn.attention q(%q : tensor<1x4x8x?xf32>) k(%k : tensor<1x1x8x?xf32>)
      v(%k : tensor<1x1x8x?xf32>) v_from_k(32) -> tensor<1x4x8x32xf32>
  return %0 : tensor<1x4x8x32xf32>
}

// -----

// out has Dv = v_from_k columns.
func.func @out_dv(%q: tensor<1x4x8x64xf32>, %k: tensor<1x1x8x64xf32>) -> tensor<1x4x8x64xf32> {
  // expected-error @+1 {{'attn.attention' op out must be [B, Hq, Nq, Dv] = [1, 4, 8, 48]}}
  %0 = attn.attention q(%q : tensor<1x4x8x64xf32>) k(%k : tensor<1x1x8x64xf32>)
      v(%k : tensor<1x1x8x64xf32>) v_from_k(48) -> tensor<1x4x8x64xf32>
  return %0 : tensor<1x4x8x64xf32>
}

// -----

// Only attn.attention takes v_from_k.
func.func @projected(%x: tensor<1x8x32xf32>, %w: tensor<32x32xf32>) -> tensor<1x8x32xf32> {
  // expected-error @+2 {{unknown modifier 'v_from_k'}}
  %0 = attn.projected_attention x(%x : tensor<1x8x32xf32>) wq(%w : tensor<32x32xf32>)
      wk(%w : tensor<32x32xf32>) wv(%w : tensor<32x32xf32>) wo(%w : tensor<32x32xf32>) heads(4, 4) v_from_k(4)
      -> tensor<1x8x32xf32>
  return %0 : tensor<1x8x32xf32>
}
