// inf and NaN in the inputs (docs/Robustness.md). The compiled code follows
// IEEE arithmetic and keeps the damage to the rows that read the bad value:
//  - NaN in a query row: that row's out and lse are NaN, other rows exact;
//  - NaN in k or v at a key a row reads: that row's out is NaN (k also makes
//    its lse NaN; v does not touch lse);
//  - +inf in the bias (or a logit that overflows to inf): that row is NaN
//    (inf - inf in the softmax);
//  - -inf in the bias at some keys: those keys are ignored; a row that is
//    -inf everywhere is an empty row (empty-rows.mlir).
// Every form gives the same. scale(1.0), Nq = 3, Nk = 4, Dqk = 2, Dv = 1;
// k = [1,0], [0,1], [1,1], [0,0]; v = 1, 2, 3, 4; q = [0,0], [1,0], [1,1]
// unless a case changes it.
//
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.q.npy f4 1x1x3x2 0,0,1,0,1,1
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.q_nan.npy f4 1x1x3x2 0,0,nan,0,1,1
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.k.npy f4 1x1x4x2 1,0,0,1,1,1,0,0
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.k_nan.npy f4 1x1x4x2 1,0,0,1,nan,1,0,0
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.v.npy f4 1x1x4x1 1,2,3,4
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.v_nan.npy f4 1x1x4x1 1,2,3,nan
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.b0.npy f4 3x4 zeros
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.b_inf.npy f4 3x4 0,inf,0,0,0,0,0,0,0,0,-inf,0
//
// NaN in q row 1. The f64 reference disagrees here (it returns out = 0 and
// lse = -inf for a row whose logits are all NaN), so no --verify.
// RUN: attn-run %s --form=naive --input q=%t.q_nan.npy --input k=%t.k.npy --input v=%t.v.npy --input bias=%t.b0.npy --reps=0 --print | FileCheck %s --check-prefix=QNAN
// RUN: attn-run %s --form=fused --input q=%t.q_nan.npy --input k=%t.k.npy --input v=%t.v.npy --input bias=%t.b0.npy --reps=0 --print | FileCheck %s --check-prefix=QNAN
// RUN: attn-run %s --form=decode --splits=4 --input q=%t.q_nan.npy --input k=%t.k.npy --input v=%t.v.npy --input bias=%t.b0.npy --reps=0 --print | FileCheck %s --check-prefix=QNAN
// QNAN:      out: f32 [1, 1, 3, 1]
// QNAN-NEXT: {{^}}2.5 {{-?nan}} 2.48249{{$}}
// QNAN-NEXT: lse: f32 [1, 1, 3]
// QNAN-NEXT: {{^}}1.38629 {{-?nan}} 2.62652{{$}}
//
// NaN in v at key 3, which every row reads: every out is NaN, lse is exact.
// RUN: attn-run %s --form=naive --input q=%t.q.npy --input k=%t.k.npy --input v=%t.v_nan.npy --input bias=%t.b0.npy --verify --reps=0 --print | FileCheck %s --check-prefix=VNAN
// RUN: attn-run %s --form=fused --input q=%t.q.npy --input k=%t.k.npy --input v=%t.v_nan.npy --input bias=%t.b0.npy --verify --reps=0 --print | FileCheck %s --check-prefix=VNAN
// RUN: attn-run %s --form=decode --splits=4 --input q=%t.q.npy --input k=%t.k.npy --input v=%t.v_nan.npy --input bias=%t.b0.npy --verify --reps=0 --print | FileCheck %s --check-prefix=VNAN
// VNAN:      out: f32 [1, 1, 3, 1] {{.*}} [ok
// VNAN-NEXT: {{^}}{{-?nan}} {{-?nan}} {{-?nan}}{{$}}
// VNAN-NEXT: lse: f32 [1, 1, 3] {{.*}} [ok
// VNAN-NEXT: {{^}}1.38629 2.00641 2.62652{{$}}
//
// NaN in k at key 2, which every row reads: out and lse are NaN.
// RUN: attn-run %s --form=naive --input q=%t.q.npy --input k=%t.k_nan.npy --input v=%t.v.npy --input bias=%t.b0.npy --verify --reps=0 --print | FileCheck %s --check-prefix=KNAN
// RUN: attn-run %s --form=fused --input q=%t.q.npy --input k=%t.k_nan.npy --input v=%t.v.npy --input bias=%t.b0.npy --verify --reps=0 --print | FileCheck %s --check-prefix=KNAN
// RUN: attn-run %s --form=decode --splits=4 --input q=%t.q.npy --input k=%t.k_nan.npy --input v=%t.v.npy --input bias=%t.b0.npy --verify --reps=0 --print | FileCheck %s --check-prefix=KNAN
// KNAN:      out: f32 [1, 1, 3, 1] {{.*}} [ok
// KNAN-NEXT: {{^}}{{-?nan}} {{-?nan}} {{-?nan}}{{$}}
// KNAN-NEXT: lse: f32 [1, 1, 3] {{.*}} [ok
// KNAN-NEXT: {{^}}{{-?nan}} {{-?nan}} {{-?nan}}{{$}}
//
// bias +inf at (row 0, key 1): row 0 is NaN. bias -inf at (row 2, key 2):
// key 2 is ignored by row 2, out = (e + 2e + 4) / (2e + 1).
// RUN: attn-run %s --form=naive --input q=%t.q.npy --input k=%t.k.npy --input v=%t.v.npy --input bias=%t.b_inf.npy --verify --reps=0 --print | FileCheck %s --check-prefix=BINF
// RUN: attn-run %s --form=fused --input q=%t.q.npy --input k=%t.k.npy --input v=%t.v.npy --input bias=%t.b_inf.npy --verify --reps=0 --print | FileCheck %s --check-prefix=BINF
// RUN: attn-run %s --form=decode --splits=4 --input q=%t.q.npy --input k=%t.k.npy --input v=%t.v.npy --input bias=%t.b_inf.npy --verify --reps=0 --print | FileCheck %s --check-prefix=BINF
// BINF:      out: f32 [1, 1, 3, 1] {{.*}} [ok
// BINF-NEXT: {{^}}{{-?nan}} 2.26894 1.88841{{$}}
// BINF-NEXT: lse: f32 [1, 1, 3] {{.*}} [ok
// BINF-NEXT: {{^}}{{-?nan}} 2.00641 1.8619{{[0-9]}}{{$}}

func.func @f(%q: tensor<1x1x3x2xf32>, %k: tensor<1x1x4x2xf32>,
             %v: tensor<1x1x4x1xf32>, %bias: tensor<3x4xf32>)
    -> (tensor<1x1x3x1xf32>, tensor<1x1x3xf32>) {
  %out, %lse = attn.attention q(%q : tensor<1x1x3x2xf32>)
      k(%k : tensor<1x1x4x2xf32>) v(%v : tensor<1x1x4x1xf32>)
      bias(%bias : tensor<3x4xf32>) scale(1.0)
      -> tensor<1x1x3x1xf32>, tensor<1x1x3xf32>
  return %out, %lse : tensor<1x1x3x1xf32>, tensor<1x1x3xf32>
}
