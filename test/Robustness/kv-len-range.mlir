// kv_len outside [0, Nk] (docs/Robustness.md): defined, clamped to [0, Nk]
// (docs/Semantics.md; lib/Reference/Reference.h), and the clamped value is
// the one the bottom-right positions p(i) = i + kv_len - Nq use. Every form,
// i32 and i64 lengths including the extremes of each type; i64 lengths come
// from the .npy file bit for bit (INT64_MAX is not rounded through double).
//
// q = 0, so a row's output is the mean of the v rows it reads (v = 1, 2, 4)
// and its lse the log of their count. Batch entries: kv_len = -5, 7, MIN, MAX,
// 0, 3 of the type, i.e. clamped 0, 3, 0, 3, 0, 3; Nq = 2, Nk = 3,
// causal(bottom_right): p = i + 1 where kv_len clamps to 3.
//
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.q.npy f4 6x1x2x1 zeros
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.k.npy f4 6x1x3x1 1
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.v.npy f4 6x1x3x1 1,2,4,1,2,4,1,2,4,1,2,4,1,2,4,1,2,4
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.len64.npy i8 6 -5,7,-9223372036854775808,9223372036854775807,0,3
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.len32.npy i4 6 -5,7,-2147483648,2147483647,0,3
//
// RUN: attn-run %s --entry=i64 --form=naive --input q=%t.q.npy --input k=%t.k.npy --input v=%t.v.npy --input kv_len=%t.len64.npy --verify --reps=0 --print | FileCheck %s
// RUN: attn-run %s --entry=i64 --form=fused --input q=%t.q.npy --input k=%t.k.npy --input v=%t.v.npy --input kv_len=%t.len64.npy --verify --reps=0 --print | FileCheck %s
// RUN: attn-run %s --entry=i64 --form=fused --tile-q=1 --tile-k=2 --input q=%t.q.npy --input k=%t.k.npy --input v=%t.v.npy --input kv_len=%t.len64.npy --verify --reps=0 --print | FileCheck %s
// RUN: attn-run %s --entry=i64 --form=decode --splits=4 --input q=%t.q.npy --input k=%t.k.npy --input v=%t.v.npy --input kv_len=%t.len64.npy --verify --reps=0 --print | FileCheck %s
// RUN: attn-run %s --entry=i64 --form=decode --tile-k=1 --splits=3 --input q=%t.q.npy --input k=%t.k.npy --input v=%t.v.npy --input kv_len=%t.len64.npy --verify --reps=0 --print | FileCheck %s
// RUN: attn-run %s --entry=i32 --form=naive --input q=%t.q.npy --input k=%t.k.npy --input v=%t.v.npy --input kv_len=%t.len32.npy --verify --reps=0 --print | FileCheck %s
// RUN: attn-run %s --entry=i32 --form=fused --input q=%t.q.npy --input k=%t.k.npy --input v=%t.v.npy --input kv_len=%t.len32.npy --verify --reps=0 --print | FileCheck %s
// RUN: attn-run %s --entry=i32 --form=decode --splits=4 --input q=%t.q.npy --input k=%t.k.npy --input v=%t.v.npy --input kv_len=%t.len32.npy --verify --reps=0 --print | FileCheck %s
//
// CHECK:      out: f32 [6, 1, 2, 1] {{.*}} [ok
// CHECK-NEXT: {{^}}0 0 1.5 2.33333 0 0 1.5 2.33333{{$}}
// CHECK-NEXT: {{^}}0 0 1.5 2.33333{{$}}
// CHECK-NEXT: lse: f32 [6, 1, 2] {{.*}} [ok
// CHECK-NEXT: {{^}}-inf -inf 0.693147 1.09861 -inf -inf 0.693147 1.09861{{$}}
// CHECK-NEXT: {{^}}-inf -inf 0.693147 1.09861{{$}}

func.func @i64(%q: tensor<6x1x2x1xf32>, %k: tensor<6x1x3x1xf32>,
               %v: tensor<6x1x3x1xf32>, %kv_len: tensor<6xi64>)
    -> (tensor<6x1x2x1xf32>, tensor<6x1x2xf32>) {
  %out, %lse = attn.attention q(%q : tensor<6x1x2x1xf32>)
      k(%k : tensor<6x1x3x1xf32>) v(%v : tensor<6x1x3x1xf32>)
      kv_len(%kv_len : tensor<6xi64>) causal(bottom_right)
      -> tensor<6x1x2x1xf32>, tensor<6x1x2xf32>
  return %out, %lse : tensor<6x1x2x1xf32>, tensor<6x1x2xf32>
}

func.func @i32(%q: tensor<6x1x2x1xf32>, %k: tensor<6x1x3x1xf32>,
               %v: tensor<6x1x3x1xf32>, %kv_len: tensor<6xi32>)
    -> (tensor<6x1x2x1xf32>, tensor<6x1x2xf32>) {
  %out, %lse = attn.attention q(%q : tensor<6x1x2x1xf32>)
      k(%k : tensor<6x1x3x1xf32>) v(%v : tensor<6x1x3x1xf32>)
      kv_len(%kv_len : tensor<6xi32>) causal(bottom_right)
      -> tensor<6x1x2x1xf32>, tensor<6x1x2xf32>
  return %out, %lse : tensor<6x1x2x1xf32>, tensor<6x1x2xf32>
}
