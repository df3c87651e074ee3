// Very long rows (docs/Robustness.md): Nk = 100000 keys with a tiny head
// dimension, causal(bottom_right) (row i of Nq = 4 reads 99997 + i keys), in
// every form: random inputs within tolerance of the f64 reference, and an
// exact case: q = 0 makes every weight 1, so with v = 1 the row sum and the
// weighted sum both count the keys exactly in f32 (< 2^24) and out = 1
// exactly, lse = log(99997 + i).
//
// RUN: attn-run %s --form=naive --verify --reps=0 | FileCheck %s --check-prefix=RANDOM
// RUN: attn-run %s --form=fused --verify --reps=0 | FileCheck %s --check-prefix=RANDOM
// RUN: attn-run %s --form=decode --splits=4 --verify --reps=0 | FileCheck %s --check-prefix=RANDOM
// RANDOM: out: f32 [1, 2, 4, 1] {{.*}} [ok
// RANDOM: lse: f32 [1, 2, 4] {{.*}} [ok
//
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.q.npy f4 1x2x4x2 zeros
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.k.npy f4 1x1x100000x2 0.5
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.v.npy f4 1x1x100000x1 1
// DEFINE: %{in} = --input q=%t.q.npy --input k=%t.k.npy --input v=%t.v.npy
// RUN: attn-run %s --form=naive %{in} --verify --reps=0 --print | FileCheck %s --check-prefix=EXACT
// RUN: attn-run %s --form=fused %{in} --verify --reps=0 --print | FileCheck %s --check-prefix=EXACT
// RUN: attn-run %s --form=decode --splits=4 %{in} --verify --reps=0 --print | FileCheck %s --check-prefix=EXACT
// EXACT:      out: f32 [1, 2, 4, 1] sum 8 abs-sum 8 {{.*}} [ok
// EXACT-NEXT: {{^}}1 1 1 1 1 1 1 1{{$}}
// EXACT-NEXT: lse: f32 [1, 2, 4] {{.*}} [ok
// EXACT-NEXT: {{^}}11.5129 11.5129 11.5129 11.5129 11.5129 11.5129 11.5129 11.5129{{$}}

func.func @f(%q: tensor<1x2x4x2xf32>, %k: tensor<1x1x100000x2xf32>,
             %v: tensor<1x1x100000x1xf32>)
    -> (tensor<1x2x4x1xf32>, tensor<1x2x4xf32>) {
  %out, %lse = attn.attention q(%q : tensor<1x2x4x2xf32>)
      k(%k : tensor<1x1x100000x2xf32>) v(%v : tensor<1x1x100000x1xf32>)
      causal(bottom_right) -> tensor<1x2x4x1xf32>, tensor<1x2x4xf32>
  return %out, %lse : tensor<1x2x4x1xf32>, tensor<1x2x4xf32>
}
