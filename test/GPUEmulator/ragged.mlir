// Ragged batches in the GPU kernel: one launch over the (sequence, row tile)
// pairs of the whole batch (each block finds its pair in the offsets), each
// sequence with its own causal diagonal, window and ALiBi; rows outside
// every sequence give out = 0 and lse = -inf. Run on the warp-level emulator
// against the f64 reference (random lengths, and given offsets with empty
// sequences and rows outside every sequence).
// RUN: attn-run %s --device=gpu-emulate --entry=chunked --verify | FileCheck %s --check-prefix=CHUNKED
// RUN: attn-run %s --device=gpu-emulate --entry=chunked --verify --seed=7 --gpu-warps=2 --gpu-tile-k=32 | FileCheck %s --check-prefix=CHUNKED
// Rows outside every sequence (0-4, 280-299), an empty sequence, and a
// sequence with fewer keys than queries (its first rows read no key):
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.cq0.npy i4 9 5,20,20,70,100,160,200,250,280
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.ck0.npy i4 9 0,40,40,120,200,210,260,400,480
// RUN: attn-run %s --device=gpu-emulate --entry=chunked --verify \
// RUN:   --input cu_seqlens_q=%t.cq0.npy --input cu_seqlens_k=%t.ck0.npy | FileCheck %s --check-prefix=CHUNKED
// RUN: attn-run %s --device=gpu-emulate --entry=varlen_bnhd --verify --seed=5 | FileCheck %s --check-prefix=BNHD
// RUN: attn-run %s --device=gpu-emulate --entry=dynamic --size Seqs=5,Nq=77,Nk=90 --verify | FileCheck %s --check-prefix=DYN
// CHUNKED: out: f16 [1, 8, 300, 64] {{.*}} [ok
// CHUNKED: lse: f32 [1, 8, 300] {{.*}} [ok
// BNHD: out: bf16 [1, 120, 4, 32] {{.*}} [ok
// DYN: out: f32 [1, 2, 77, 32] {{.*}} [ok
//
// Offsets that decrease or leave the packed tokens are reported through the
// kernel's error word, with the CPU forms' message.
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.cq.npy i4 4 0,30,20,77
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.ck.npy i4 4 0,30,60,90
// RUN: not attn-run %s --device=gpu-emulate --entry=dynamic --size Seqs=3,Nq=77,Nk=90 \
// RUN:   --input cu_seqlens_q=%t.cq.npy --input cu_seqlens_k=%t.ck.npy 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not attn-run %s --form=fused --entry=dynamic --size Seqs=3,Nq=77,Nk=90 --reps=0 \
// RUN:   --input cu_seqlens_q=%t.cq.npy --input cu_seqlens_k=%t.ck.npy 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: attn-run: error: run failed: attn: ragged cu_seqlens_q offsets must be non-decreasing and within the packed tokens: cu_seqlens_q[2] = 20 (at least 30, at most 77)

// Chunked prefill: 8 sequences, bottom-right causal per sequence, GQA 8/2.
func.func @chunked(%q: tensor<1x8x300x64xf16>, %k: tensor<1x2x500x64xf16>,
                   %v: tensor<1x2x500x64xf16>, %cq: tensor<9xi32>,
                   %ck: tensor<9xi32>)
    -> (tensor<1x8x300x64xf16>, tensor<1x8x300xf32>) {
  %o, %l = attn.attention q(%q : tensor<1x8x300x64xf16>)
      k(%k : tensor<1x2x500x64xf16>) v(%v : tensor<1x2x500x64xf16>)
      ragged(%cq, %ck : tensor<9xi32>, tensor<9xi32>) causal(bottom_right)
      -> tensor<1x8x300x64xf16>, tensor<1x8x300xf32>
  return %o, %l : tensor<1x8x300x64xf16>, tensor<1x8x300xf32>
}

// FlashAttention's packed order, bf16, i64 offsets, a window and ALiBi on
// each sequence's top-left diagonal, soft cap.
func.func @varlen_bnhd(%q: tensor<1x120x4x32xbf16>,
                       %k: tensor<1x150x4x32xbf16>,
                       %v: tensor<1x150x4x32xbf16>, %cq: tensor<5xi64>,
                       %ck: tensor<5xi64>, %slopes: tensor<4xf32>)
    -> tensor<1x120x4x32xbf16> {
  %o = attn.attention q(%q : tensor<1x120x4x32xbf16>)
      k(%k : tensor<1x150x4x32xbf16>) v(%v : tensor<1x150x4x32xbf16>)
      layout(bnhd) ragged(%cq, %ck : tensor<5xi64>, tensor<5xi64>)
      alibi(%slopes : tensor<4xf32>) window_left(20) softcap(20.0)
      -> tensor<1x120x4x32xbf16>
  return %o : tensor<1x120x4x32xbf16>
}

// Dynamic sizes, f32 (staged as bf16).
func.func @dynamic(%q: tensor<1x2x?x32xf32>, %k: tensor<1x2x?x32xf32>,
                   %v: tensor<1x2x?x32xf32>, %cq: tensor<?xi32>,
                   %ck: tensor<?xi32>) -> tensor<1x2x?x32xf32> {
  %o = attn.attention q(%q : tensor<1x2x?x32xf32>)
      k(%k : tensor<1x2x?x32xf32>) v(%v : tensor<1x2x?x32xf32>)
      ragged(%cq, %ck : tensor<?xi32>, tensor<?xi32>) causal(top_left)
      -> tensor<1x2x?x32xf32>
  return %o : tensor<1x2x?x32xf32>
}
