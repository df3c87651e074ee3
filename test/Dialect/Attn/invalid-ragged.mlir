// RUN: attn-opt %s -split-input-file -verify-diagnostics

// One case per verifier message of ragged batches on attn.attention
// (lib/IR/AttnOps.cpp). docs/Diagnostics.md lists them.

func.func @offsets_rank(%q: tensor<1x4x10x8xf32>, %cq: tensor<2x3xi32>, %ck: tensor<3xi32>) -> tensor<1x4x10x8xf32> {
  // expected-error @+1 {{'attn.attention' op ragged offsets must be rank-1 tensors of B + 1 offsets each; got 'tensor<2x3xi32>' and 'tensor<3xi32>'}}
  %0 = attn.attention q(%q : tensor<1x4x10x8xf32>) k(%q : tensor<1x4x10x8xf32>)
      v(%q : tensor<1x4x10x8xf32>) ragged(%cq, %ck : tensor<2x3xi32>, tensor<3xi32>)
      -> tensor<1x4x10x8xf32>
  return %0 : tensor<1x4x10x8xf32>
}

// -----

func.func @offsets_count(%q: tensor<1x4x10x8xf32>, %cq: tensor<3xi32>, %ck: tensor<4xi32>) -> tensor<1x4x10x8xf32> {
  // expected-error @+1 {{'attn.attention' op ragged offsets must be rank-1 tensors of B + 1 offsets each; got 'tensor<3xi32>' and 'tensor<4xi32>'}}
  %0 = attn.attention q(%q : tensor<1x4x10x8xf32>) k(%q : tensor<1x4x10x8xf32>)
      v(%q : tensor<1x4x10x8xf32>) ragged(%cq, %ck : tensor<3xi32>, tensor<4xi32>)
      -> tensor<1x4x10x8xf32>
  return %0 : tensor<1x4x10x8xf32>
}

// -----

func.func @offsets_empty(%q: tensor<1x4x10x8xf32>, %cq: tensor<0xi32>) -> tensor<1x4x10x8xf32> {
  // expected-error @+1 {{'attn.attention' op ragged offsets must be rank-1 tensors of B + 1 offsets each; got 'tensor<0xi32>' and 'tensor<0xi32>'}}
  %0 = attn.attention q(%q : tensor<1x4x10x8xf32>) k(%q : tensor<1x4x10x8xf32>)
      v(%q : tensor<1x4x10x8xf32>) ragged(%cq, %cq : tensor<0xi32>, tensor<0xi32>)
      -> tensor<1x4x10x8xf32>
  return %0 : tensor<1x4x10x8xf32>
}

// -----

func.func @batch(%q: tensor<2x4x10x8xf32>, %cq: tensor<3xi32>) -> tensor<2x4x10x8xf32> {
  // expected-error @+1 {{'attn.attention' op ragged batches pack every sequence into one batch entry: q must have B = 1; got 2}}
  %0 = attn.attention q(%q : tensor<2x4x10x8xf32>) k(%q : tensor<2x4x10x8xf32>)
      v(%q : tensor<2x4x10x8xf32>) ragged(%cq, %cq : tensor<3xi32>, tensor<3xi32>)
      -> tensor<2x4x10x8xf32>
  return %0 : tensor<2x4x10x8xf32>
}

// -----

func.func @key_mask(%q: tensor<1x4x10x8xf32>, %cq: tensor<3xi32>, %m: tensor<1x10xi1>) -> tensor<1x4x10x8xf32> {
  // expected-error @+1 {{'attn.attention' op key_mask is for dense and paged batches; a ragged batch states key padding with kv_len, kv_start or a mask by packed rows}}
  %0 = attn.attention q(%q : tensor<1x4x10x8xf32>) k(%q : tensor<1x4x10x8xf32>)
      v(%q : tensor<1x4x10x8xf32>) ragged(%cq, %cq : tensor<3xi32>, tensor<3xi32>)
      key_mask(%m : tensor<1x10xi1>) -> tensor<1x4x10x8xf32>
  return %0 : tensor<1x4x10x8xf32>
}

// -----

func.func @kv_start(%q: tensor<1x4x10x8xf32>, %cq: tensor<3xi32>, %first: tensor<1xi32>) -> tensor<1x4x10x8xf32> {
  // expected-error @+1 {{'attn.attention' op kv_start of a ragged batch must have one start per sequence (B = 2, one less than the offsets); got 'tensor<1xi32>'}}
  %0 = attn.attention q(%q : tensor<1x4x10x8xf32>) k(%q : tensor<1x4x10x8xf32>)
      v(%q : tensor<1x4x10x8xf32>) ragged(%cq, %cq : tensor<3xi32>, tensor<3xi32>)
      kv_start(%first : tensor<1xi32>) -> tensor<1x4x10x8xf32>
  return %0 : tensor<1x4x10x8xf32>
}

// -----

func.func @kv_len(%q: tensor<1x4x10x8xf32>, %cq: tensor<3xi32>, %len: tensor<3xi32>) -> tensor<1x4x10x8xf32> {
  // expected-error @+1 {{'attn.attention' op kv_len of a ragged batch must have one length per sequence (B = 2, one less than the offsets); got 'tensor<3xi32>'}}
  %0 = attn.attention q(%q : tensor<1x4x10x8xf32>) k(%q : tensor<1x4x10x8xf32>)
      v(%q : tensor<1x4x10x8xf32>) ragged(%cq, %cq : tensor<3xi32>, tensor<3xi32>)
      kv_len(%len : tensor<3xi32>) -> tensor<1x4x10x8xf32>
  return %0 : tensor<1x4x10x8xf32>
}

// -----

// A mask of a ragged batch is indexed by packed rows: [1, Hq, Tq, Tk].
func.func @mask(%q: tensor<1x4x10x8xf32>, %cq: tensor<3xi32>, %m: tensor<2x10x10xi1>) -> tensor<1x4x10x8xf32> {
  // expected-error @+1 {{'attn.attention' op mask of shape [2, 10, 10] is not broadcastable to [B, Hq, Nq, Nk] = [1, 4, 10, 10]: dimension 0 has size 2, expected 1 or Hq = 4}}
  %0 = attn.attention q(%q : tensor<1x4x10x8xf32>) k(%q : tensor<1x4x10x8xf32>)
      v(%q : tensor<1x4x10x8xf32>) ragged(%cq, %cq : tensor<3xi32>, tensor<3xi32>)
      mask(%m : tensor<2x10x10xi1>) -> tensor<1x4x10x8xf32>
  return %0 : tensor<1x4x10x8xf32>
}

// -----

func.func @paged_with_cu_k(%q: tensor<1x4x10x8xf32>, %kp: tensor<8x4x2x8xf32>, %pt: tensor<2x4xi32>, %len: tensor<2xi32>, %cq: tensor<3xi32>) -> tensor<1x4x10x8xf32> {
  // expected-error @+1 {{'attn.attention' op a paged ragged batch reads each sequence's keys through its page_table row and kv_len; write ragged(%cu_q : ...) without cu_seqlens_k}}
  %0 = attn.attention q(%q : tensor<1x4x10x8xf32>) k(%kp : tensor<8x4x2x8xf32>)
      v(%kp : tensor<8x4x2x8xf32>) page_table(%pt : tensor<2x4xi32>)
      ragged(%cq, %cq : tensor<3xi32>, tensor<3xi32>) kv_len(%len : tensor<2xi32>)
      -> tensor<1x4x10x8xf32>
  return %0 : tensor<1x4x10x8xf32>
}

// -----

func.func @paged_rows(%q: tensor<1x4x10x8xf32>, %kp: tensor<8x4x2x8xf32>, %pt: tensor<1x4xi32>, %len: tensor<2xi32>, %cq: tensor<3xi32>) -> tensor<1x4x10x8xf32> {
  // expected-error @+1 {{'attn.attention' op page_table must be [B, max_pages] with one row of page indices per sequence (B = 2); got 'tensor<1x4xi32>'}}
  %0 = attn.attention q(%q : tensor<1x4x10x8xf32>) k(%kp : tensor<8x4x2x8xf32>)
      v(%kp : tensor<8x4x2x8xf32>) page_table(%pt : tensor<1x4xi32>)
      ragged(%cq : tensor<3xi32>) kv_len(%len : tensor<2xi32>)
      -> tensor<1x4x10x8xf32>
  return %0 : tensor<1x4x10x8xf32>
}

// -----

func.func @paged_no_kv_len(%q: tensor<1x4x10x8xf32>, %kp: tensor<8x4x2x8xf32>, %pt: tensor<2x4xi32>, %cq: tensor<3xi32>) -> tensor<1x4x10x8xf32> {
  // expected-error @+1 {{'attn.attention' op page_table needs kv_len: the number of valid tokens of each sequence}}
  %0 = attn.attention q(%q : tensor<1x4x10x8xf32>) k(%kp : tensor<8x4x2x8xf32>)
      v(%kp : tensor<8x4x2x8xf32>) page_table(%pt : tensor<2x4xi32>)
      ragged(%cq : tensor<3xi32>) -> tensor<1x4x10x8xf32>
  return %0 : tensor<1x4x10x8xf32>
}

// -----

// Keys from neither offsets nor a page table.
func.func @no_keys(%q: tensor<1x4x10x8xf32>, %cq: tensor<3xi32>) -> tensor<1x4x10x8xf32> {
  // expected-error @+1 {{'attn.attention' op ragged batches need cu_seqlens_k (or a page_table and kv_len for the keys)}}
  %0 = attn.attention q(%q : tensor<1x4x10x8xf32>) k(%q : tensor<1x4x10x8xf32>)
      v(%q : tensor<1x4x10x8xf32>) ragged(%cq : tensor<3xi32>)
      -> tensor<1x4x10x8xf32>
  return %0 : tensor<1x4x10x8xf32>
}

// -----

// Key offsets without query offsets (the generic form can say it).
func.func @one_offset(%q: tensor<1x4x10x8xf32>, %cq: tensor<3xi32>) -> tensor<1x4x10x8xf32> {
  // expected-error @+1 {{'attn.attention' op ragged batches need cu_seqlens_q}}
  %0 = "attn.attention"(%q, %q, %q, %cq) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>}> ({}, {}) : (tensor<1x4x10x8xf32>, tensor<1x4x10x8xf32>, tensor<1x4x10x8xf32>, tensor<3xi32>) -> tensor<1x4x10x8xf32>
  return %0 : tensor<1x4x10x8xf32>
}

// -----

// ragged(...) gives each offset its type.
func.func @ragged_one_type(%q: tensor<1x2x8x8xf32>, %cq: tensor<3xi32>) -> tensor<1x2x8x8xf32> {
  // expected-error @+3 {{expected ','}}
  %0 = attn.attention q(%q : tensor<1x2x8x8xf32>) k(%q : tensor<1x2x8x8xf32>)
      v(%q : tensor<1x2x8x8xf32>) causal(top_left)
      ragged(%cq, %cq : tensor<3xi32>) -> tensor<1x2x8x8xf32>
  return %0 : tensor<1x2x8x8xf32>
}
