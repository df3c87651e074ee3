// RUN: attn-opt %s -split-input-file -verify-diagnostics

// One case per verifier message of ragged batches on attn.attention
// (lib/IR/AttnOps.cpp). docs/Diagnostics.md lists them.

func.func @offsets_rank(%q: tensor<1x4x10x8xf32>, %cq: tensor<2x3xi32>, %ck: tensor<3xi32>) -> tensor<1x4x10x8xf32> {
  // expected-error @+1 {{'attn.attention' op ragged offsets must be two rank-1 tensors of B + 1 offsets each; got 'tensor<2x3xi32>' and 'tensor<3xi32>'}}
  %0 = attn.attention q(%q : tensor<1x4x10x8xf32>) k(%q : tensor<1x4x10x8xf32>)
      v(%q : tensor<1x4x10x8xf32>) ragged(%cq, %ck : tensor<2x3xi32>, tensor<3xi32>)
      -> tensor<1x4x10x8xf32>
  return %0 : tensor<1x4x10x8xf32>
}

// -----

func.func @offsets_count(%q: tensor<1x4x10x8xf32>, %cq: tensor<3xi32>, %ck: tensor<4xi32>) -> tensor<1x4x10x8xf32> {
  // expected-error @+1 {{'attn.attention' op ragged offsets must be two rank-1 tensors of B + 1 offsets each; got 'tensor<3xi32>' and 'tensor<4xi32>'}}
  %0 = attn.attention q(%q : tensor<1x4x10x8xf32>) k(%q : tensor<1x4x10x8xf32>)
      v(%q : tensor<1x4x10x8xf32>) ragged(%cq, %ck : tensor<3xi32>, tensor<4xi32>)
      -> tensor<1x4x10x8xf32>
  return %0 : tensor<1x4x10x8xf32>
}

// -----

func.func @offsets_empty(%q: tensor<1x4x10x8xf32>, %cq: tensor<0xi32>) -> tensor<1x4x10x8xf32> {
  // expected-error @+1 {{'attn.attention' op ragged offsets must be two rank-1 tensors of B + 1 offsets each; got 'tensor<0xi32>' and 'tensor<0xi32>'}}
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

func.func @kv_len(%q: tensor<1x4x10x8xf32>, %cq: tensor<3xi32>, %len: tensor<1xi32>) -> tensor<1x4x10x8xf32> {
  // expected-error @+1 {{'attn.attention' op ragged batches do not take kv_len (the sequences' lengths come from the offsets)}}
  %0 = attn.attention q(%q : tensor<1x4x10x8xf32>) k(%q : tensor<1x4x10x8xf32>)
      v(%q : tensor<1x4x10x8xf32>) ragged(%cq, %cq : tensor<3xi32>, tensor<3xi32>)
      kv_len(%len : tensor<1xi32>) -> tensor<1x4x10x8xf32>
  return %0 : tensor<1x4x10x8xf32>
}

// -----

func.func @mask(%q: tensor<1x4x10x8xf32>, %cq: tensor<3xi32>, %m: tensor<10x10xi1>) -> tensor<1x4x10x8xf32> {
  // expected-error @+1 {{'attn.attention' op ragged batches do not take mask (the sequences' lengths come from the offsets)}}
  %0 = attn.attention q(%q : tensor<1x4x10x8xf32>) k(%q : tensor<1x4x10x8xf32>)
      v(%q : tensor<1x4x10x8xf32>) ragged(%cq, %cq : tensor<3xi32>, tensor<3xi32>)
      mask(%m : tensor<10x10xi1>) -> tensor<1x4x10x8xf32>
  return %0 : tensor<1x4x10x8xf32>
}

// -----

func.func @paged(%q: tensor<1x4x10x8xf32>, %kp: tensor<8x4x2x8xf32>, %pt: tensor<1x4xi32>, %len: tensor<1xi32>, %cq: tensor<3xi32>) -> tensor<1x4x10x8xf32> {
  // expected-error @+1 {{'attn.attention' op ragged batches do not take page_table (the sequences' lengths come from the offsets)}}
  %0 = attn.attention q(%q : tensor<1x4x10x8xf32>) k(%kp : tensor<8x4x2x8xf32>)
      v(%kp : tensor<8x4x2x8xf32>) page_table(%pt : tensor<1x4xi32>)
      ragged(%cq, %cq : tensor<3xi32>, tensor<3xi32>) kv_len(%len : tensor<1xi32>)
      -> tensor<1x4x10x8xf32>
  return %0 : tensor<1x4x10x8xf32>
}

// -----

func.func @region(%q: tensor<1x4x10x8xf32>, %cq: tensor<3xi32>) -> tensor<1x4x10x8xf32> {
  // expected-error @+1 {{'attn.attention' op ragged batches do not take mask_mod (the sequences' lengths come from the offsets)}}
  %0 = attn.attention q(%q : tensor<1x4x10x8xf32>) k(%q : tensor<1x4x10x8xf32>)
      v(%q : tensor<1x4x10x8xf32>) ragged(%cq, %cq : tensor<3xi32>, tensor<3xi32>)
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %t = arith.cmpi sle, %j, %i : index
        attn.yield %t : i1
      } -> tensor<1x4x10x8xf32>
  return %0 : tensor<1x4x10x8xf32>
}

// -----

// Only one of the two offsets (the generic form can say it).
func.func @one_offset(%q: tensor<1x4x10x8xf32>, %cq: tensor<3xi32>) -> tensor<1x4x10x8xf32> {
  // expected-error @+1 {{'attn.attention' op ragged batches need both cu_seqlens_q and cu_seqlens_k}}
  %0 = "attn.attention"(%q, %q, %q, %cq) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0>}> ({}, {}) : (tensor<1x4x10x8xf32>, tensor<1x4x10x8xf32>, tensor<1x4x10x8xf32>, tensor<3xi32>) -> tensor<1x4x10x8xf32>
  return %0 : tensor<1x4x10x8xf32>
}

// -----

// ragged(...) needs both offsets, each with its type.
func.func @ragged_one_type(%q: tensor<1x2x8x8xf32>, %cq: tensor<3xi32>) -> tensor<1x2x8x8xf32> {
  // expected-error @+3 {{expected ','}}
  %0 = attn.attention q(%q : tensor<1x2x8x8xf32>) k(%q : tensor<1x2x8x8xf32>)
      v(%q : tensor<1x2x8x8xf32>) causal(top_left)
      ragged(%cq, %cq : tensor<3xi32>) -> tensor<1x2x8x8xf32>
  return %0 : tensor<1x2x8x8xf32>
}
