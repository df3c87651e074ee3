// Ragged offsets that decrease or run past the packed tokens stop the
// program with the rule they broke, in every form.
// RUN: %python %S/Inputs/write_npy.py %t.cq_dec.npy i4 3 0,5,3
// RUN: %python %S/Inputs/write_npy.py %t.cq_past.npy i4 3 0,5,11
// RUN: %python %S/Inputs/write_npy.py %t.ck.npy i4 3 0,4,8
// RUN: not --crash attn-run %s --form=naive --reps=0 --input cu_seqlens_q=%t.cq_dec.npy --input cu_seqlens_k=%t.ck.npy 2>&1 | FileCheck %s
// RUN: not --crash attn-run %s --form=fused --reps=0 --input cu_seqlens_q=%t.cq_dec.npy --input cu_seqlens_k=%t.ck.npy 2>&1 | FileCheck %s
// RUN: not --crash attn-run %s --form=decode --reps=0 --input cu_seqlens_q=%t.cq_past.npy --input cu_seqlens_k=%t.ck.npy 2>&1 | FileCheck %s
// CHECK: attn: ragged cu_seqlens_q offsets must be non-decreasing and within the packed tokens
func.func @bad(%q: tensor<1x2x10x8xf32>, %k: tensor<1x2x8x8xf32>,
               %cq: tensor<3xi32>, %ck: tensor<3xi32>) -> tensor<1x2x10x8xf32> {
  %o = attn.attention q(%q : tensor<1x2x10x8xf32>)
      k(%k : tensor<1x2x8x8xf32>) v(%k : tensor<1x2x8x8xf32>)
      ragged(%cq, %ck : tensor<3xi32>, tensor<3xi32>) -> tensor<1x2x10x8xf32>
  return %o : tensor<1x2x10x8xf32>
}
