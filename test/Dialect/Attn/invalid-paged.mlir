// RUN: attn-opt %s -split-input-file -verify-diagnostics

// One case per verifier message of paged K/V on attn.attention and of the
// paged attn.kv_cache_append (lib/IR/AttnOps.cpp), then the ODS type
// constraint on the page table. docs/Diagnostics.md lists them.

func.func @table_rank(%q: tensor<2x4x1x8xf32>, %kp: tensor<8x2x4x8xf32>, %pt: tensor<8xi32>, %len: tensor<2xi32>) -> tensor<2x4x1x8xf32> {
  // expected-error @+1 {{'attn.attention' op page_table must be [B, max_pages] with one row of page indices per batch entry (B = 2); got 'tensor<8xi32>'}}
  %0 = attn.attention q(%q : tensor<2x4x1x8xf32>) k(%kp : tensor<8x2x4x8xf32>)
      v(%kp : tensor<8x2x4x8xf32>) page_table(%pt : tensor<8xi32>)
      kv_len(%len : tensor<2xi32>) -> tensor<2x4x1x8xf32>
  return %0 : tensor<2x4x1x8xf32>
}

// -----

func.func @table_batch(%q: tensor<2x4x1x8xf32>, %kp: tensor<8x2x4x8xf32>, %pt: tensor<3x2xi32>, %len: tensor<2xi32>) -> tensor<2x4x1x8xf32> {
  // expected-error @+1 {{'attn.attention' op page_table must be [B, max_pages] with one row of page indices per batch entry (B = 2); got 'tensor<3x2xi32>'}}
  %0 = attn.attention q(%q : tensor<2x4x1x8xf32>) k(%kp : tensor<8x2x4x8xf32>)
      v(%kp : tensor<8x2x4x8xf32>) page_table(%pt : tensor<3x2xi32>)
      kv_len(%len : tensor<2xi32>) -> tensor<2x4x1x8xf32>
  return %0 : tensor<2x4x1x8xf32>
}

// -----

func.func @no_kv_len(%q: tensor<2x4x1x8xf32>, %kp: tensor<8x2x4x8xf32>, %pt: tensor<2x2xi32>) -> tensor<2x4x1x8xf32> {
  // expected-error @+1 {{'attn.attention' op page_table needs kv_len: the number of valid tokens of each sequence}}
  %0 = attn.attention q(%q : tensor<2x4x1x8xf32>) k(%kp : tensor<8x2x4x8xf32>)
      v(%kp : tensor<8x2x4x8xf32>) page_table(%pt : tensor<2x2xi32>)
      -> tensor<2x4x1x8xf32>
  return %0 : tensor<2x4x1x8xf32>
}

// -----

func.func @pool_pages(%q: tensor<2x4x1x8xf32>, %kp: tensor<8x2x4x8xf32>, %vp: tensor<6x2x4x8xf32>, %pt: tensor<2x2xi32>, %len: tensor<2xi32>) -> tensor<2x4x1x8xf32> {
  // expected-error @+1 {{'attn.attention' op k and v page pools must have the same number of pages: k has 8, v has 6}}
  %0 = attn.attention q(%q : tensor<2x4x1x8xf32>) k(%kp : tensor<8x2x4x8xf32>)
      v(%vp : tensor<6x2x4x8xf32>) page_table(%pt : tensor<2x2xi32>)
      kv_len(%len : tensor<2xi32>) -> tensor<2x4x1x8xf32>
  return %0 : tensor<2x4x1x8xf32>
}

// -----

func.func @dynamic_page(%q: tensor<2x4x1x8xf32>, %kp: tensor<8x2x?x8xf32>, %pt: tensor<2x2xi32>, %len: tensor<2xi32>) -> tensor<2x4x1x8xf32> {
  // expected-error @+1 {{'attn.attention' op paged k and v need a static page size (their N dimension); got 'tensor<8x2x?x8xf32>'}}
  %0 = attn.attention q(%q : tensor<2x4x1x8xf32>) k(%kp : tensor<8x2x?x8xf32>)
      v(%kp : tensor<8x2x?x8xf32>) page_table(%pt : tensor<2x2xi32>)
      kv_len(%len : tensor<2xi32>) -> tensor<2x4x1x8xf32>
  return %0 : tensor<2x4x1x8xf32>
}

// -----

// Both pools' page sizes must be static, not only one of them.
func.func @dynamic_k_page(%q: tensor<2x4x1x8xf32>, %kp: tensor<8x2x?x8xf32>, %vp: tensor<8x2x4x8xf32>, %pt: tensor<2x2xi32>, %len: tensor<2xi32>) -> tensor<2x4x1x8xf32> {
  // expected-error @+1 {{'attn.attention' op paged k and v need a static page size (their N dimension); got 'tensor<8x2x?x8xf32>'}}
  %0 = attn.attention q(%q : tensor<2x4x1x8xf32>) k(%kp : tensor<8x2x?x8xf32>)
      v(%vp : tensor<8x2x4x8xf32>) page_table(%pt : tensor<2x2xi32>)
      kv_len(%len : tensor<2xi32>) -> tensor<2x4x1x8xf32>
  return %0 : tensor<2x4x1x8xf32>
}

// -----

func.func @dynamic_v_page(%q: tensor<2x4x1x8xf32>, %kp: tensor<8x2x4x8xf32>, %vp: tensor<8x2x?x8xf32>, %pt: tensor<2x2xi32>, %len: tensor<2xi32>) -> tensor<2x4x1x8xf32> {
  // expected-error @+1 {{'attn.attention' op paged k and v need a static page size (their N dimension); got 'tensor<8x2x?x8xf32>'}}
  %0 = attn.attention q(%q : tensor<2x4x1x8xf32>) k(%kp : tensor<8x2x4x8xf32>)
      v(%vp : tensor<8x2x?x8xf32>) page_table(%pt : tensor<2x2xi32>)
      kv_len(%len : tensor<2xi32>) -> tensor<2x4x1x8xf32>
  return %0 : tensor<2x4x1x8xf32>
}

// -----

func.func @page_sizes(%q: tensor<2x4x1x8xf32>, %kp: tensor<8x2x4x8xf32>, %vp: tensor<8x2x2x8xf32>, %pt: tensor<2x2xi32>, %len: tensor<2xi32>) -> tensor<2x4x1x8xf32> {
  // expected-error @+1 {{'attn.attention' op paged k and v must have the same positive page size: k has 4, v has 2}}
  %0 = attn.attention q(%q : tensor<2x4x1x8xf32>) k(%kp : tensor<8x2x4x8xf32>)
      v(%vp : tensor<8x2x2x8xf32>) page_table(%pt : tensor<2x2xi32>)
      kv_len(%len : tensor<2xi32>) -> tensor<2x4x1x8xf32>
  return %0 : tensor<2x4x1x8xf32>
}

// -----

func.func @zero_page(%q: tensor<2x4x1x8xf32>, %kp: tensor<8x2x0x8xf32>, %pt: tensor<2x2xi32>, %len: tensor<2xi32>) -> tensor<2x4x1x8xf32> {
  // expected-error @+1 {{'attn.attention' op paged k and v must have the same positive page size: k has 0, v has 0}}
  %0 = attn.attention q(%q : tensor<2x4x1x8xf32>) k(%kp : tensor<8x2x0x8xf32>)
      v(%kp : tensor<8x2x0x8xf32>) page_table(%pt : tensor<2x2xi32>)
      kv_len(%len : tensor<2xi32>) -> tensor<2x4x1x8xf32>
  return %0 : tensor<2x4x1x8xf32>
}

// -----

// Masks broadcast to [B, Hq, Nq, Nk] with Nk = max_pages * page size = 8.
func.func @mask_nk(%q: tensor<2x4x1x8xf32>, %kp: tensor<8x2x4x8xf32>, %pt: tensor<2x2xi32>, %len: tensor<2xi32>, %m: tensor<2x1x1x4xi1>) -> tensor<2x4x1x8xf32> {
  // expected-error @+1 {{'attn.attention' op mask of shape [2, 1, 1, 4] is not broadcastable to [B, Hq, Nq, Nk] = [2, 4, 1, 8]: dimension 3 has size 4, expected 1 or Nk = 8}}
  %0 = attn.attention q(%q : tensor<2x4x1x8xf32>) k(%kp : tensor<8x2x4x8xf32>)
      v(%kp : tensor<8x2x4x8xf32>) page_table(%pt : tensor<2x2xi32>)
      kv_len(%len : tensor<2xi32>) mask(%m : tensor<2x1x1x4xi1>) -> tensor<2x4x1x8xf32>
  return %0 : tensor<2x4x1x8xf32>
}

// -----

// The pools' heads and head dimension are checked as for dense k and v.
func.func @pool_heads(%q: tensor<2x6x1x8xf32>, %kp: tensor<8x4x4x8xf32>, %pt: tensor<2x2xi32>, %len: tensor<2xi32>) -> tensor<2x6x1x8xf32> {
  // expected-error @+1 {{'attn.attention' op query heads must be a multiple of K/V heads: Hq = 6 is not divisible by Hkv = 4}}
  %0 = attn.attention q(%q : tensor<2x6x1x8xf32>) k(%kp : tensor<8x4x4x8xf32>)
      v(%kp : tensor<8x4x4x8xf32>) page_table(%pt : tensor<2x2xi32>)
      kv_len(%len : tensor<2xi32>) -> tensor<2x6x1x8xf32>
  return %0 : tensor<2x6x1x8xf32>
}

// -----

func.func @table_type(%q: tensor<2x4x1x8xf32>, %kp: tensor<8x2x4x8xf32>, %pt: tensor<2x2xf32>, %len: tensor<2xi32>) -> tensor<2x4x1x8xf32> {
  // expected-error @+1 {{operand #3 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values}}
  %0 = attn.attention q(%q : tensor<2x4x1x8xf32>) k(%kp : tensor<8x2x4x8xf32>)
      v(%kp : tensor<8x2x4x8xf32>) page_table(%pt : tensor<2x2xf32>)
      kv_len(%len : tensor<2xi32>) -> tensor<2x4x1x8xf32>
  return %0 : tensor<2x4x1x8xf32>
}

// -----

func.func @append_table(%kp: tensor<8x2x4x8xf32>, %kn: tensor<2x2x1x8xf32>, %len: tensor<2xi32>, %pt: tensor<3x4xi32>) -> tensor<8x2x4x8xf32> {
  // expected-error @+1 {{'attn.kv_cache_append' op page_table must be [B, max_pages] with one row per batch entry of the update (B = 2); got 'tensor<3x4xi32>'}}
  %0 = attn.kv_cache_append cache(%kp : tensor<8x2x4x8xf32>) update(%kn : tensor<2x2x1x8xf32>)
      at(%len : tensor<2xi32>) page_table(%pt : tensor<3x4xi32>) -> tensor<8x2x4x8xf32>
  return %0 : tensor<8x2x4x8xf32>
}

// -----

func.func @append_heads(%kp: tensor<8x2x4x8xf32>, %kn: tensor<2x3x1x8xf32>, %len: tensor<2xi32>, %pt: tensor<2x4xi32>) -> tensor<8x2x4x8xf32> {
  // expected-error @+1 {{'attn.kv_cache_append' op update must match the page pool in H: pool has 2, update has 3}}
  %0 = attn.kv_cache_append cache(%kp : tensor<8x2x4x8xf32>) update(%kn : tensor<2x3x1x8xf32>)
      at(%len : tensor<2xi32>) page_table(%pt : tensor<2x4xi32>) -> tensor<8x2x4x8xf32>
  return %0 : tensor<8x2x4x8xf32>
}

// -----

func.func @append_page_size(%kp: tensor<8x2x0x8xf32>, %kn: tensor<2x2x1x8xf32>, %len: tensor<2xi32>, %pt: tensor<2x4xi32>) -> tensor<8x2x0x8xf32> {
  // expected-error @+1 {{'attn.kv_cache_append' op the page pool's page size must be positive}}
  %0 = attn.kv_cache_append cache(%kp : tensor<8x2x0x8xf32>) update(%kn : tensor<2x2x1x8xf32>)
      at(%len : tensor<2xi32>) page_table(%pt : tensor<2x4xi32>) -> tensor<8x2x0x8xf32>
  return %0 : tensor<8x2x0x8xf32>
}

// -----

func.func @append_positions(%kp: tensor<8x2x4x8xf32>, %kn: tensor<2x2x1x8xf32>, %len: tensor<3xi32>, %pt: tensor<2x4xi32>) -> tensor<8x2x4x8xf32> {
  // expected-error @+1 {{'attn.kv_cache_append' op positions must be a rank-1 tensor with one entry per batch entry (B = 2); got 'tensor<3xi32>'}}
  %0 = attn.kv_cache_append cache(%kp : tensor<8x2x4x8xf32>) update(%kn : tensor<2x2x1x8xf32>)
      at(%len : tensor<3xi32>) page_table(%pt : tensor<2x4xi32>) -> tensor<8x2x4x8xf32>
  return %0 : tensor<8x2x4x8xf32>
}

// -----

// page_table, like every modifier, is given at most once.
func.func @table_twice(%q: tensor<2x4x1x8xf32>, %kp: tensor<8x2x4x8xf32>, %pt: tensor<2x4xi32>, %len: tensor<2xi32>) -> tensor<2x4x1x8xf32> {
  // expected-error @+3 {{modifier 'page_table' is given twice}}
  %0 = attn.attention q(%q : tensor<2x4x1x8xf32>) k(%kp : tensor<8x2x4x8xf32>)
      v(%kp : tensor<8x2x4x8xf32>) page_table(%pt : tensor<2x4xi32>)
      kv_len(%len : tensor<2xi32>) page_table(%pt : tensor<2x4xi32>) -> tensor<2x4x1x8xf32>
  return %0 : tensor<2x4x1x8xf32>
}

// -----

// projected_attention takes no page table (nor ragged offsets).
func.func @projected_table(%x: tensor<2x5x64xf32>, %w: tensor<64x64xf32>, %pt: tensor<2x4xi32>) -> tensor<2x5x64xf32> {
  // expected-error @+3 {{unknown modifier 'page_table'; expected one of kv_len, kv_start, key_mask, mask}}
  %0 = attn.projected_attention x(%x : tensor<2x5x64xf32>) wq(%w : tensor<64x64xf32>)
      wk(%w : tensor<64x64xf32>) wv(%w : tensor<64x64xf32>) wo(%w : tensor<64x64xf32>)
      heads(4, 4) page_table(%pt : tensor<2x4xi32>) -> tensor<2x5x64xf32>
  return %0 : tensor<2x5x64xf32>
}
