// Paged K/V read through a page table in every form, on random inputs (the
// page table shuffled, partially filled last pages, empty sequences, entries
// past a sequence's pages set to -1), checked against the f64 reference.
//
// RUN: attn-run %s --entry=decode_gqa --form=naive --verify --reps=1 | FileCheck %s
// RUN: attn-run %s --entry=decode_gqa --form=fused --verify --reps=1 | FileCheck %s
// RUN: attn-run %s --entry=decode_gqa --form=decode --splits=3 --verify --reps=1 | FileCheck %s
// RUN: attn-run %s --entry=prefill_bnhd --form=naive --verify --reps=1 --seed=7 | FileCheck %s
// RUN: attn-run %s --entry=prefill_bnhd --form=fused --verify --reps=1 --seed=7 | FileCheck %s
// RUN: attn-run %s --entry=prefill_bnhd --form=decode --verify --reps=1 --seed=7 | FileCheck %s
// RUN: attn-run %s --entry=modifiers --form=naive --verify --reps=1 --seed=3 | FileCheck %s
// RUN: attn-run %s --entry=modifiers --form=fused --verify --reps=1 --seed=3 | FileCheck %s
// RUN: attn-run %s --entry=modifiers --form=decode --verify --reps=1 --seed=3 | FileCheck %s
// RUN: attn-run %s --entry=dynamic --size B=3,Nq=5,MaxPages=6,Pages=11 --form=naive --verify --reps=1 | FileCheck %s
// RUN: attn-run %s --entry=dynamic --size B=3,Nq=5,MaxPages=6,Pages=11 --form=fused --verify --reps=1 | FileCheck %s
// RUN: attn-run %s --entry=dynamic --size B=3,Nq=5,MaxPages=6,Pages=11 --form=decode --verify --reps=1 | FileCheck %s
// RUN: attn-run %s --entry=mask_region --form=fused --verify --reps=1 | FileCheck %s
// RUN: attn-run %s --entry=mask_region --form=naive --verify --reps=1 | FileCheck %s

// CHECK: vs reference: {{.*}} [ok

// A pool of no pages: every sequence is empty (out 0, lse -inf), nothing is
// read, in every form.
// RUN: attn-run %s --entry=empty_pool --form=naive --verify --print --reps=1 | FileCheck %s --check-prefix=EMPTY
// RUN: attn-run %s --entry=empty_pool --form=fused --verify --print --reps=1 | FileCheck %s --check-prefix=EMPTY
// RUN: attn-run %s --entry=empty_pool --form=decode --verify --print --reps=1 | FileCheck %s --check-prefix=EMPTY
// EMPTY: lse: f32 [2, 2, 3] {{.*}} [ok
// EMPTY-NEXT: {{^}}-inf -inf -inf -inf -inf -inf -inf -inf{{$}}

// Decode (Nq = 1) with GQA (8 query heads over 2 K/V heads), pages of 16, lse.
func.func @decode_gqa(%q: tensor<4x8x1x64xf32>, %kp: tensor<64x2x16x64xf32>,
                      %vp: tensor<64x2x16x64xf32>, %pt: tensor<4x16xi32>,
                      %len: tensor<4xi32>)
    -> (tensor<4x8x1x64xf32>, tensor<4x8x1xf32>) {
  %o, %l = attn.attention q(%q : tensor<4x8x1x64xf32>)
      k(%kp : tensor<64x2x16x64xf32>) v(%vp : tensor<64x2x16x64xf32>)
      page_table(%pt : tensor<4x16xi32>) kv_len(%len : tensor<4xi32>)
      causal(bottom_right) -> tensor<4x8x1x64xf32>, tensor<4x8x1xf32>
  return %o, %l : tensor<4x8x1x64xf32>, tensor<4x8x1xf32>
}

// Chunked prefill in vLLM's [pages, page size, heads, D] order, i64 table,
// 5-token pages (key tiles of 5), Dv != Dqk, f16.
func.func @prefill_bnhd(%q: tensor<2x37x4x16xf16>, %kp: tensor<40x5x2x16xf16>,
                        %vp: tensor<40x5x2x8xf16>, %pt: tensor<2x20xi64>,
                        %len: tensor<2xi64>) -> tensor<2x37x4x8xf16> {
  %o = attn.attention q(%q : tensor<2x37x4x16xf16>)
      k(%kp : tensor<40x5x2x16xf16>) v(%vp : tensor<40x5x2x8xf16>)
      page_table(%pt : tensor<2x20xi64>) layout(bnhd) kv_len(%len : tensor<2xi64>)
      causal(bottom_right) -> tensor<2x37x4x8xf16>
  return %o : tensor<2x37x4x8xf16>
}

// Every other modifier on top of paging: mask, bias, ALiBi, window, soft cap,
// scale; MQA.
func.func @modifiers(%q: tensor<3x4x9x8xf32>, %kp: tensor<30x1x4x8xf32>,
                     %vp: tensor<30x1x4x8xf32>, %pt: tensor<3x10xi32>,
                     %len: tensor<3xi32>, %m: tensor<3x1x1x40xi1>,
                     %bias: tensor<4x9x40xf32>, %s: tensor<4xf32>)
    -> (tensor<3x4x9x8xf32>, tensor<3x4x9xf32>) {
  %o, %l = attn.attention q(%q : tensor<3x4x9x8xf32>)
      k(%kp : tensor<30x1x4x8xf32>) v(%vp : tensor<30x1x4x8xf32>)
      page_table(%pt : tensor<3x10xi32>) kv_len(%len : tensor<3xi32>)
      mask(%m : tensor<3x1x1x40xi1>) bias(%bias : tensor<4x9x40xf32>)
      alibi(%s : tensor<4xf32>) align(bottom_right) window_left(12)
      window_right(2) scale(0.3) softcap(5.0)
      -> tensor<3x4x9x8xf32>, tensor<3x4x9xf32>
  return %o, %l : tensor<3x4x9x8xf32>, tensor<3x4x9xf32>
}

// Dynamic sizes: batch, queries, pool and table width come from --size.
func.func @dynamic(%q: tensor<?x2x?x16xf32>, %kp: tensor<?x2x8x16xf32>,
                   %vp: tensor<?x2x8x16xf32>, %pt: tensor<?x?xi32>,
                   %len: tensor<?xi32>) -> tensor<?x2x?x16xf32> {
  %o = attn.attention q(%q : tensor<?x2x?x16xf32>)
      k(%kp : tensor<?x2x8x16xf32>) v(%vp : tensor<?x2x8x16xf32>)
      page_table(%pt : tensor<?x?xi32>) kv_len(%len : tensor<?xi32>)
      causal(top_left) -> tensor<?x2x?x16xf32>
  return %o : tensor<?x2x?x16xf32>
}

// A user mask region over the logical key index j.
func.func @mask_region(%q: tensor<2x2x24x16xf32>, %kp: tensor<12x2x4x16xf32>,
                       %vp: tensor<12x2x4x16xf32>, %pt: tensor<2x6xi32>,
                       %len: tensor<2xi32>) -> tensor<2x2x24x16xf32> {
  %o = attn.attention q(%q : tensor<2x2x24x16xf32>)
      k(%kp : tensor<12x2x4x16xf32>) v(%vp : tensor<12x2x4x16xf32>)
      page_table(%pt : tensor<2x6xi32>) kv_len(%len : tensor<2xi32>)
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %c3 = arith.constant 3 : index
        %r = arith.remui %j, %c3 : index
        %c0 = arith.constant 0 : index
        %keep = arith.cmpi ne, %r, %c0 : index
        attn.yield %keep : i1
      } -> tensor<2x2x24x16xf32>
  return %o : tensor<2x2x24x16xf32>
}

func.func @empty_pool(%q: tensor<2x2x3x8xf32>, %kp: tensor<0x2x4x8xf32>,
                      %vp: tensor<0x2x4x8xf32>, %pt: tensor<2x3xi32>,
                      %len: tensor<2xi32>)
    -> (tensor<2x2x3x8xf32>, tensor<2x2x3xf32>) {
  %o, %l = attn.attention q(%q : tensor<2x2x3x8xf32>)
      k(%kp : tensor<0x2x4x8xf32>) v(%vp : tensor<0x2x4x8xf32>)
      page_table(%pt : tensor<2x3xi32>) kv_len(%len : tensor<2xi32>)
      causal(bottom_right) -> tensor<2x2x3x8xf32>, tensor<2x2x3xf32>
  return %o, %l : tensor<2x2x3x8xf32>, tensor<2x2x3xf32>
}
