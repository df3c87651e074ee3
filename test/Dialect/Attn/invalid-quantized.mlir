// RUN: attn-opt %s -split-input-file -verify-diagnostics

// One case per verifier message of quantized K/V caches (k_scale, v_scale)
// on attn.attention (lib/IR/AttnOps.cpp). docs/Diagnostics.md lists them.

func.func @no_k_scale(%q: tensor<1x4x8x64xf32>, %k: tensor<1x1x8x64xi8>, %v: tensor<1x1x8x64xi8>, %vs: tensor<1x1x8xf32>) -> tensor<1x4x8x64xf32> {
  // expected-error @+1 {{'attn.attention' op a quantized cache (k and v of element type 'i8') needs k_scale(...): f32 scales per token and head, or per page and head}}
  %0 = attn.attention q(%q : tensor<1x4x8x64xf32>) k(%k : tensor<1x1x8x64xi8>)
      v(%v : tensor<1x1x8x64xi8>) v_scale(%vs : tensor<1x1x8xf32>) -> tensor<1x4x8x64xf32>
  return %0 : tensor<1x4x8x64xf32>
}

// -----

func.func @no_v_scale(%q: tensor<1x4x8x64xf32>, %k: tensor<1x1x8x64xf8E4M3FN>, %v: tensor<1x1x8x64xf8E4M3FN>, %ks: tensor<1x1x8xf32>) -> tensor<1x4x8x64xf32> {
  // expected-error @+1 {{'attn.attention' op a quantized cache (k and v of element type 'f8E4M3FN') needs v_scale(...): f32 scales per token and head, or per page and head}}
  %0 = attn.attention q(%q : tensor<1x4x8x64xf32>) k(%k : tensor<1x1x8x64xf8E4M3FN>)
      v(%v : tensor<1x1x8x64xf8E4M3FN>) k_scale(%ks : tensor<1x1x8xf32>) -> tensor<1x4x8x64xf32>
  return %0 : tensor<1x4x8x64xf32>
}

// -----

func.func @scale_without_quantized(%q: tensor<1x4x8x64xf32>, %k: tensor<1x1x8x64xf32>, %v: tensor<1x1x8x64xf32>, %ks: tensor<1x1x8xf32>) -> tensor<1x4x8x64xf32> {
  // expected-error @+1 {{'attn.attention' op k_scale goes with a quantized cache (k and v of element type i8, f8E4M3FN or f8E5M2); k is 'tensor<1x1x8x64xf32>'}}
  %0 = attn.attention q(%q : tensor<1x4x8x64xf32>) k(%k : tensor<1x1x8x64xf32>)
      v(%v : tensor<1x1x8x64xf32>) k_scale(%ks : tensor<1x1x8xf32>) -> tensor<1x4x8x64xf32>
  return %0 : tensor<1x4x8x64xf32>
}

// -----

func.func @latent_v_scale(%q: tensor<1x4x8x64xf32>, %k: tensor<1x1x8x64xi8>, %ks: tensor<1x1x8xf32>) -> tensor<1x4x8x32xf32> {
  // expected-error @+1 {{'attn.attention' op v_from_k reads V from k, scaled by k_scale; drop v_scale}}
  %0 = attn.attention q(%q : tensor<1x4x8x64xf32>) k(%k : tensor<1x1x8x64xi8>)
      v(%k : tensor<1x1x8x64xi8>) v_from_k(32) k_scale(%ks : tensor<1x1x8xf32>)
      v_scale(%ks : tensor<1x1x8xf32>) -> tensor<1x4x8x32xf32>
  return %0 : tensor<1x4x8x32xf32>
}

// -----

func.func @scale_shape(%q: tensor<1x4x8x64xf32>, %k: tensor<1x1x8x64xi8>, %v: tensor<1x1x8x64xi8>, %ks: tensor<1x8xf32>, %vs: tensor<1x1xf32>) -> tensor<1x4x8x64xf32> {
  // expected-error @+1 {{'attn.attention' op k_scale must hold one scale per token and head [1, 1, 8] or per batch entry and head [1, 1]; got 'tensor<1x8xf32>'}}
  %0 = attn.attention q(%q : tensor<1x4x8x64xf32>) k(%k : tensor<1x1x8x64xi8>)
      v(%v : tensor<1x1x8x64xi8>) k_scale(%ks : tensor<1x8xf32>)
      v_scale(%vs : tensor<1x1xf32>) -> tensor<1x4x8x64xf32>
  return %0 : tensor<1x4x8x64xf32>
}

// -----

func.func @paged_scale_shape(%q: tensor<2x4x1x64xf32>, %k: tensor<16x1x8x64xi8>, %v: tensor<16x1x8x64xi8>, %ks: tensor<16x1xf32>, %vs: tensor<2x1x8xf32>, %pt: tensor<2x4xi32>, %len: tensor<2xi32>) -> tensor<2x4x1x64xf32> {
  // expected-error @+1 {{'attn.attention' op v_scale must hold one scale per token and head [16, 1, 8] or per page and head [16, 1]; got 'tensor<2x1x8xf32>'}}
  %0 = attn.attention q(%q : tensor<2x4x1x64xf32>) k(%k : tensor<16x1x8x64xi8>)
      v(%v : tensor<16x1x8x64xi8>) page_table(%pt : tensor<2x4xi32>)
      kv_len(%len : tensor<2xi32>) k_scale(%ks : tensor<16x1xf32>)
      v_scale(%vs : tensor<2x1x8xf32>) -> tensor<2x4x1x64xf32>
  return %0 : tensor<2x4x1x64xf32>
}

// -----

func.func @mixed_cache_types(%q: tensor<1x4x8x64xf32>, %k: tensor<1x1x8x64xi8>, %v: tensor<1x1x8x64xf8E5M2>, %ks: tensor<1x1x8xf32>) -> tensor<1x4x8x64xf32> {
  // expected-error @+1 {{'attn.attention' op q, k, v and out must share one element type (k and v may share an 8-bit quantized one); got 'f32', 'i8', 'f8E5M2', 'f32'}}
  %0 = attn.attention q(%q : tensor<1x4x8x64xf32>) k(%k : tensor<1x1x8x64xi8>)
      v(%v : tensor<1x1x8x64xf8E5M2>) k_scale(%ks : tensor<1x1x8xf32>)
      v_scale(%ks : tensor<1x1x8xf32>) -> tensor<1x4x8x64xf32>
  return %0 : tensor<1x4x8x64xf32>
}

// -----

func.func @q_quantized(%q: tensor<1x4x8x64xi8>, %k: tensor<1x1x8x64xi8>, %ks: tensor<1x1x8xf32>) -> tensor<1x4x8x64xf32> {
  // expected-error @+1 {{'attn.attention' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<1x4x8x64xi8>'}}
  %0 = attn.attention q(%q : tensor<1x4x8x64xi8>) k(%k : tensor<1x1x8x64xi8>)
      v(%k : tensor<1x1x8x64xi8>) k_scale(%ks : tensor<1x1x8xf32>)
      v_scale(%ks : tensor<1x1x8xf32>) -> tensor<1x4x8x64xf32>
  return %0 : tensor<1x4x8x64xf32>
}

// -----

func.func @scale_given_twice(%q: tensor<1x4x8x64xf32>, %k: tensor<1x1x8x64xi8>, %ks: tensor<1x1x8xf32>) -> tensor<1x4x8x64xf32> {
  %0 = attn.attention q(%q : tensor<1x4x8x64xf32>) k(%k : tensor<1x1x8x64xi8>)
      // expected-error @+1 {{modifier 'k_scale' is given twice}}
      v(%k : tensor<1x1x8x64xi8>) k_scale(%ks : tensor<1x1x8xf32>) k_scale(%ks : tensor<1x1x8xf32>) -> tensor<1x4x8x64xf32>
  return %0 : tensor<1x4x8x64xf32>
}

// -----

func.func @append_no_scales(%c: tensor<1x1x8x4xi8>, %u: tensor<1x1x1x4xf32>, %p: tensor<1xi32>) -> tensor<1x1x8x4xi8> {
  // expected-error @+1 {{'attn.kv_cache_append' op a quantized cache (element type 'i8') needs scales(...), which the append updates}}
  %0 = attn.kv_cache_append cache(%c : tensor<1x1x8x4xi8>) update(%u : tensor<1x1x1x4xf32>)
      at(%p : tensor<1xi32>) -> tensor<1x1x8x4xi8>
  return %0 : tensor<1x1x8x4xi8>
}

// -----

func.func @append_scales_float_cache(%c: tensor<1x1x8x4xf32>, %u: tensor<1x1x1x4xf32>, %p: tensor<1xi32>, %s: tensor<1x1x8xf32>) -> tensor<1x1x8x4xf32> {
  // expected-error @+1 {{'attn.kv_cache_append' op scales go with a quantized cache; the cache's element type is 'f32'}}
  %0, %1 = attn.kv_cache_append cache(%c : tensor<1x1x8x4xf32>) update(%u : tensor<1x1x1x4xf32>)
      at(%p : tensor<1xi32>) scales(%s : tensor<1x1x8xf32>) -> tensor<1x1x8x4xf32>, tensor<1x1x8xf32>
  return %0 : tensor<1x1x8x4xf32>
}

// -----

func.func @append_no_new_scales(%c: tensor<1x1x8x4xi8>, %u: tensor<1x1x1x4xf32>, %p: tensor<1xi32>, %s: tensor<1x1x8xf32>) -> tensor<1x1x8x4xi8> {
  // expected-error @+1 {{'attn.kv_cache_append' op with scales(...) the op returns the cache and its updated scales; without, the cache alone}}
  %0 = attn.kv_cache_append cache(%c : tensor<1x1x8x4xi8>) update(%u : tensor<1x1x1x4xf32>)
      at(%p : tensor<1xi32>) scales(%s : tensor<1x1x8xf32>) -> tensor<1x1x8x4xi8>
  return %0 : tensor<1x1x8x4xi8>
}

// -----

func.func @append_scales_shape(%c: tensor<4x1x8x4xf8E4M3FN>, %u: tensor<2x1x1x4xf32>, %p: tensor<2xi32>, %pt: tensor<2x4xi32>, %s: tensor<2x1xf32>) -> tensor<4x1x8x4xf8E4M3FN> {
  // expected-error @+1 {{'attn.kv_cache_append' op scales must hold one scale per token and head [4, 1, 8] or per page and head [4, 1]; got 'tensor<2x1xf32>'}}
  %0, %1 = attn.kv_cache_append cache(%c : tensor<4x1x8x4xf8E4M3FN>) update(%u : tensor<2x1x1x4xf32>)
      at(%p : tensor<2xi32>) page_table(%pt : tensor<2x4xi32>) scales(%s : tensor<2x1xf32>)
      -> tensor<4x1x8x4xf8E4M3FN>, tensor<2x1xf32>
  return %0 : tensor<4x1x8x4xf8E4M3FN>
}

// -----

func.func @append_new_scales_type(%c: tensor<1x1x8x4xi8>, %u: tensor<1x1x1x4xf32>, %p: tensor<1xi32>, %s: tensor<1x1x8xf32>) -> tensor<1x1x8x4xi8> {
  // expected-error @+1 {{'attn.kv_cache_append' op the updated scales must have the scales' type 'tensor<1x1x8xf32>'; got 'tensor<1x1x?xf32>'}}
  %0, %1 = attn.kv_cache_append cache(%c : tensor<1x1x8x4xi8>) update(%u : tensor<1x1x1x4xf32>)
      at(%p : tensor<1xi32>) scales(%s : tensor<1x1x8xf32>) -> tensor<1x1x8x4xi8>, tensor<1x1x?xf32>
  return %0 : tensor<1x1x8x4xi8>
}
