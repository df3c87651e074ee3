// Ragged offsets that decrease or run past the packed tokens are a run-time
// error naming the offset, its value and the bounds it broke, in every form:
// attn-run prints it and exits 1, without a crash.
// RUN: %python %S/Inputs/write_npy.py %t.cq_dec.npy i4 3 0,5,3
// RUN: %python %S/Inputs/write_npy.py %t.cq_past.npy i4 3 0,5,11
// RUN: %python %S/Inputs/write_npy.py %t.ck.npy i4 3 0,4,8
// RUN: not attn-run %s --form=naive --reps=0 --input cu_seqlens_q=%t.cq_dec.npy --input cu_seqlens_k=%t.ck.npy 2>&1 | FileCheck %s
// RUN: not attn-run %s --form=fused --reps=0 --input cu_seqlens_q=%t.cq_dec.npy --input cu_seqlens_k=%t.ck.npy 2>&1 | FileCheck %s
// RUN: not attn-run %s --form=decode --reps=0 --input cu_seqlens_q=%t.cq_past.npy --input cu_seqlens_k=%t.ck.npy 2>&1 | FileCheck %s --check-prefix=PAST
// CHECK: attn: ragged cu_seqlens_q offsets must be non-decreasing and within the packed tokens: cu_seqlens_q[2] = 3 (at least 5, at most 10)
// PAST: attn: ragged cu_seqlens_q offsets must be non-decreasing and within the packed tokens: cu_seqlens_q[2] = 11 (at least 5, at most 10)
// A first offset below 0 and k offsets past the packed keys (offsets of
// different counts: RuntimeChecksTest):
// RUN: %python %S/Inputs/write_npy.py %t.cq_neg.npy i4 3 -1,5,10
// RUN: %python %S/Inputs/write_npy.py %t.ck_past.npy i4 3 0,4,9
// RUN: %python %S/Inputs/write_npy.py %t.cq_ok.npy i4 3 0,5,10
// RUN: not attn-run %s --form=fused --reps=0 --input cu_seqlens_q=%t.cq_neg.npy --input cu_seqlens_k=%t.ck.npy 2>&1 | FileCheck %s --check-prefix=NEG
// RUN: not attn-run %s --form=decode --reps=0 --input cu_seqlens_q=%t.cq_ok.npy --input cu_seqlens_k=%t.ck_past.npy 2>&1 | FileCheck %s --check-prefix=KPAST
// NEG: cu_seqlens_q[0] = -1 (at least 0, at most 10)
// KPAST: attn: ragged cu_seqlens_k offsets must be non-decreasing and within the packed tokens: cu_seqlens_k[2] = 9 (at least 4, at most 8)
// The good offsets then run:
// RUN: attn-run %s --verify --reps=0 --input cu_seqlens_q=%t.cq_ok.npy --input cu_seqlens_k=%t.ck.npy | FileCheck %s --check-prefix=OK
// OK: vs reference: {{.*}} [ok
func.func @bad(%q: tensor<1x2x10x8xf32>, %k: tensor<1x2x8x8xf32>,
               %cq: tensor<3xi32>, %ck: tensor<3xi32>) -> tensor<1x2x10x8xf32> {
  %o = attn.attention q(%q : tensor<1x2x10x8xf32>)
      k(%k : tensor<1x2x8x8xf32>) v(%k : tensor<1x2x8x8xf32>)
      ragged(%cq, %ck : tensor<3xi32>, tensor<3xi32>) -> tensor<1x2x10x8xf32>
  return %o : tensor<1x2x10x8xf32>
}
