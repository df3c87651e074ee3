// Dynamic sizes that turn out inconsistent at run time (docs/Robustness.md).
// attn-run checks the concrete sizes on the host before compiling or
// allocating anything: it gives the function's arguments their concrete
// types and runs the op's verifier, so the user gets the same diagnostic as
// for static types, and exit status 1. (Callers of the compiled code that
// bypass attn-run get run-time checks in the generated code:
// test/Robustness/runtime-shape-check.mlir.)
//
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.q.npy f4 2x1x2x4 zeros
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.k3.npy f4 2x1x3x3 zeros
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.k1.npy f4 1x1x3x4 zeros
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.mask.npy b1 2x5 1
//
// RUN: not attn-run %s --entry=f --input q=%t.q.npy --input k=%t.k3.npy --size Hq=1,Hkv=1,Dv=4 2>&1 | FileCheck %s --check-prefix=DQK
// DQK: error: 'attn.attention' op q and k must have the same head dimension (Dqk): q has 4, k has 3
// DQK: attn-run: error: the given sizes are inconsistent with the spec
//
// RUN: not attn-run %s --entry=f --input q=%t.q.npy --input k=%t.k1.npy --size Hq=1,Hkv=1,Dv=4 2>&1 | FileCheck %s --check-prefix=BATCH
// BATCH: error: 'attn.attention' op batch sizes differ: q has B = 2, k has B = 1, v has B = 2
// BATCH: attn-run: error: the given sizes are inconsistent with the spec
//
// RUN: not attn-run %s --entry=f --size B=2,Hq=1,Hkv=1,Nq=2,Nk=3,Dqk=4,Dv=4 --shape kv_len=3 2>&1 | FileCheck %s --check-prefix=KVLEN
// KVLEN: error: 'attn.attention' op kv_len must be a rank-1 tensor with one length per batch entry (B = 2); got 'tensor<3xi32>'
// KVLEN: attn-run: error: the given sizes are inconsistent with the spec
//
// RUN: not attn-run %s --entry=f --size B=2,Hq=1,Hkv=1,Nq=2,Nk=3,Dqk=4,Dv=4 --input mask=%t.mask.npy 2>&1 | FileCheck %s --check-prefix=MASK
// MASK: error: 'attn.attention' op mask of shape [2, 5] is not broadcastable to [B, Hq, Nq, Nk] = [2, 1, 2, 3]: dimension 1 has size 5, expected 1 or Nk = 3
// MASK: attn-run: error: the given sizes are inconsistent with the spec
//
// RUN: not attn-run %s --entry=f --size B=2,Hq=3,Hkv=2,Nq=2,Nk=3,Dqk=4,Dv=4 2>&1 | FileCheck %s --check-prefix=HEADS
// HEADS: error: 'attn.attention' op query heads must be a multiple of K/V heads: Hq = 3 is not divisible by Hkv = 2
//
// RUN: not attn-run %s --entry=f --size B=2,Hq=2,Hkv=1,Nq=2,Nk=3,Dqk=4,Dv=4 --shape alibi=3 2>&1 | FileCheck %s --check-prefix=ALIBI
// ALIBI: error: 'attn.attention' op alibi slopes must be a rank-1 tensor with one slope per query head (Hq = 2); got 'tensor<3xf32>'
//
// The consistent sizes run.
// RUN: attn-run %s --entry=f --size B=2,Hq=2,Hkv=1,Nq=2,Nk=3,Dqk=4,Dv=4 --verify --reps=0 | FileCheck %s --check-prefix=OK
// OK: out: f32 [2, 2, 2, 4] {{.*}} [ok

func.func @f(%q: tensor<?x?x?x?xf32>, %k: tensor<?x?x?x?xf32>,
             %v: tensor<?x?x?x?xf32>, %kv_len: tensor<?xi32>,
             %mask: tensor<?x?xi1>, %alibi: tensor<?xf32>)
    -> tensor<?x?x?x?xf32> {
  %out = attn.attention q(%q : tensor<?x?x?x?xf32>) k(%k : tensor<?x?x?x?xf32>)
      v(%v : tensor<?x?x?x?xf32>) kv_len(%kv_len : tensor<?xi32>)
      mask(%mask : tensor<?x?xi1>) alibi(%alibi : tensor<?xf32>)
      -> tensor<?x?x?x?xf32>
  return %out : tensor<?x?x?x?xf32>
}
