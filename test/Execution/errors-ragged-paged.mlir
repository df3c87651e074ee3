// Chunked prefill over a paged cache: data only the kernel sees is a
// run-time error, in every form and on the GPU emulator (attn-run exits 1,
// no crash): a page table entry outside the pool that a sequence reads
// (named by its sequence row), and a kv_len or page table whose length is
// not the number of sequences (dynamic sizes).
// RUN: %python %S/Inputs/write_npy.py %t.cq.npy i4 3 0,3,6
// RUN: %python %S/Inputs/write_npy.py %t.len.npy i4 2 5,9
// RUN: %python %S/Inputs/write_npy.py %t.pt_bad.npy i4 2x3 0,1,-1,2,9,4
// RUN: %python %S/Inputs/write_npy.py %t.pt_ok.npy i4 2x3 0,1,-1,2,3,4
// RUN: not attn-run %s --entry=chunked --form=naive --reps=0 --input cu_seqlens_q=%t.cq.npy --input kv_len=%t.len.npy --input page_table=%t.pt_bad.npy 2>&1 | FileCheck %s --check-prefix=ENTRY
// RUN: not attn-run %s --entry=chunked --form=fused --reps=0 --input cu_seqlens_q=%t.cq.npy --input kv_len=%t.len.npy --input page_table=%t.pt_bad.npy 2>&1 | FileCheck %s --check-prefix=ENTRY
// RUN: not attn-run %s --entry=chunked --form=decode --reps=0 --input cu_seqlens_q=%t.cq.npy --input kv_len=%t.len.npy --input page_table=%t.pt_bad.npy 2>&1 | FileCheck %s --check-prefix=ENTRY
// RUN: not attn-run %s --entry=chunked --device=gpu-emulate --reps=0 --input cu_seqlens_q=%t.cq.npy --input kv_len=%t.len.npy --input page_table=%t.pt_bad.npy 2>&1 | FileCheck %s --check-prefix=ENTRY
// ENTRY: attn: a page_table entry that a sequence reads lies outside the page pool: page_table[1, 1] = 9, the pool has 8 pages
// The good table then runs against the reference:
// RUN: attn-run %s --entry=chunked --verify --reps=0 --input cu_seqlens_q=%t.cq.npy --input kv_len=%t.len.npy --input page_table=%t.pt_ok.npy | FileCheck %s --check-prefix=OK
// RUN: attn-run %s --entry=chunked --device=gpu-emulate --verify --reps=0 --input cu_seqlens_q=%t.cq.npy --input kv_len=%t.len.npy --input page_table=%t.pt_ok.npy | FileCheck %s --check-prefix=OK
// OK: vs reference: {{.*}} [ok
//
// Three lengths or a table of three rows for two sequences: attn-run checks
// the sizes it binds with the verifier (compiled code checks them at run
// time too: RuntimeChecksTest's RaggedKvLenEntries and RaggedPageTableRows).
// RUN: %python %S/Inputs/write_npy.py %t.len3.npy i4 3 5,9,1
// RUN: %python %S/Inputs/write_npy.py %t.pt3.npy i4 3x3 0,1,-1,2,3,-1,4,-1,-1
// RUN: not attn-run %s --entry=dynamic --form=fused --reps=0 --input cu_seqlens_q=%t.cq.npy --input kv_len=%t.len3.npy --input page_table=%t.pt_ok.npy 2>&1 | FileCheck %s --check-prefix=LEN
// LEN: kv_len of a ragged batch must have one length per sequence (B = 2, one less than the offsets); got 'tensor<3xi32>'
// LEN: attn-run: error: the given sizes are inconsistent with the spec
// RUN: not attn-run %s --entry=dynamic --form=naive --reps=0 --input cu_seqlens_q=%t.cq.npy --input kv_len=%t.len.npy --input page_table=%t.pt3.npy 2>&1 | FileCheck %s --check-prefix=ROWS
// ROWS: page_table must be [B, max_pages] with one row of page indices per sequence (B = 2); got 'tensor<3x3xi32>'
func.func @chunked(%q: tensor<1x2x6x16xf32>, %kp: tensor<8x1x4x16xf32>,
                   %vp: tensor<8x1x4x16xf32>, %cq: tensor<3xi32>,
                   %pt: tensor<2x3xi32>, %len: tensor<2xi32>)
    -> tensor<1x2x6x16xf32> {
  %o = attn.attention q(%q : tensor<1x2x6x16xf32>)
      k(%kp : tensor<8x1x4x16xf32>) v(%vp : tensor<8x1x4x16xf32>)
      ragged(%cq : tensor<3xi32>) page_table(%pt : tensor<2x3xi32>)
      kv_len(%len : tensor<2xi32>) causal(bottom_right)
      -> tensor<1x2x6x16xf32>
  return %o : tensor<1x2x6x16xf32>
}
func.func @dynamic(%q: tensor<1x2x6x16xf32>, %kp: tensor<8x1x4x16xf32>,
                   %vp: tensor<8x1x4x16xf32>, %cq: tensor<?xi32>,
                   %pt: tensor<?x3xi32>, %len: tensor<?xi32>)
    -> tensor<1x2x6x16xf32> {
  %o = attn.attention q(%q : tensor<1x2x6x16xf32>)
      k(%kp : tensor<8x1x4x16xf32>) v(%vp : tensor<8x1x4x16xf32>)
      ragged(%cq : tensor<?xi32>) page_table(%pt : tensor<?x3xi32>)
      kv_len(%len : tensor<?xi32>) causal(bottom_right)
      -> tensor<1x2x6x16xf32>
  return %o : tensor<1x2x6x16xf32>
}
