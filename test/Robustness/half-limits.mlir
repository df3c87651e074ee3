// f16 and bf16 inputs near their limits (docs/Robustness.md). Logits, row
// sums and the output accumulate in f32 (docs/Semantics.md), so products of
// the largest f16 values (65504^2 = 4.3e9) and bf16 logits up to ~1e38 stay
// finite; outputs near the f16 maximum and f16 subnormals come back exact.
// Every form.
//
// f16: q = [65504, 0], [0, 0]; k = [65504, 0], [-65504, 0], [0, 65504];
// scale(1.0). Row 0 reads key 0 alone (logits 4.29e9, -4.29e9, 0); row 1 is
// uniform (all logits 0): out = (65504 - 65504 + 65504) / 3 = 21834.7,
// 21840 in f16.
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.q16.npy f2 1x1x2x2 65504,0,0,0
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.k16.npy f2 1x1x3x2 65504,0,-65504,0,0,65504
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.v16.npy f2 1x1x3x1 65504,-65504,65504
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.v16sub.npy f2 1x1x3x1 6e-8
// DEFINE: %{f16} = --input q=%t.q16.npy --input k=%t.k16.npy --input v=%t.v16.npy
// DEFINE: %{f16sub} = --input q=%t.q16.npy --input k=%t.k16.npy --input v=%t.v16sub.npy
// RUN: attn-run %s --entry=f16 --form=naive %{f16} --verify --reps=0 --print | FileCheck %s --check-prefix=F16
// RUN: attn-run %s --entry=f16 --form=fused %{f16} --verify --reps=0 --print | FileCheck %s --check-prefix=F16
// RUN: attn-run %s --entry=f16 --form=decode --splits=4 %{f16} --verify --reps=0 --print | FileCheck %s --check-prefix=F16
// F16:      out: f16 [1, 1, 2, 1] {{.*}} [ok
// F16-NEXT: {{^}}65504 21840{{$}}
// F16-NEXT: lse: f32 [1, 1, 2] {{.*}} [ok
// F16-NEXT: {{^}}4.29077e+09 1.09861{{$}}
// The smallest f16 subnormal (2^-24) in every v row comes back unchanged.
// RUN: attn-run %s --entry=f16 --form=naive %{f16sub} --verify --reps=0 --print | FileCheck %s --check-prefix=F16SUB
// RUN: attn-run %s --entry=f16 --form=fused %{f16sub} --verify --reps=0 --print | FileCheck %s --check-prefix=F16SUB
// RUN: attn-run %s --entry=f16 --form=decode --splits=4 %{f16sub} --verify --reps=0 --print | FileCheck %s --check-prefix=F16SUB
// F16SUB:      out: f16 [1, 1, 2, 1] {{.*}} [ok
// F16SUB-NEXT: {{^}}5.96046e-08 5.96046e-08{{$}}
func.func @f16(%q: tensor<1x1x2x2xf16>, %k: tensor<1x1x3x2xf16>,
               %v: tensor<1x1x3x1xf16>)
    -> (tensor<1x1x2x1xf16>, tensor<1x1x2xf32>) {
  %out, %lse = attn.attention q(%q : tensor<1x1x2x2xf16>)
      k(%k : tensor<1x1x3x2xf16>) v(%v : tensor<1x1x3x1xf16>) scale(1.0)
      -> tensor<1x1x2x1xf16>, tensor<1x1x2xf32>
  return %out, %lse : tensor<1x1x2x1xf16>, tensor<1x1x2xf32>
}

// bf16: q = [2^63, 0], [0, 0]; k = [2^62, 0], [0, 0], [0, 2^62]: row 0 has
// logits 2^125 = 4.25e37, 0, 0 and reads key 0 alone; row 1 is uniform.
// v = 1e38, -1e38, 1e38 (bf16-rounded): row 1's out is 1e38 / 3.
// (.npy has no bf16: attn-run reads f4 files for bf16 arguments.)
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.qb.npy f4 1x1x2x2 9.223372036854775808e18,0,0,0
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.kb.npy f4 1x1x3x2 4.611686018427387904e18,0,0,0,0,4.611686018427387904e18
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.vb.npy f4 1x1x3x1 1e38,-1e38,1e38
// DEFINE: %{bf16} = --input q=%t.qb.npy --input k=%t.kb.npy --input v=%t.vb.npy
// RUN: attn-run %s --entry=bf16 --form=naive %{bf16} --verify --reps=0 --print | FileCheck %s --check-prefix=BF16
// RUN: attn-run %s --entry=bf16 --form=fused %{bf16} --verify --reps=0 --print | FileCheck %s --check-prefix=BF16
// RUN: attn-run %s --entry=bf16 --form=decode --splits=4 %{bf16} --verify --reps=0 --print | FileCheck %s --check-prefix=BF16
// BF16:      out: bf16 [1, 1, 2, 1] {{.*}} [ok
// BF16-NEXT: {{^}}9.96921e+37 3.32307e+37{{$}}
// BF16-NEXT: lse: f32 [1, 1, 2] {{.*}} [ok
// BF16-NEXT: {{^}}4.25353e+37 1.09861{{$}}
func.func @bf16(%q: tensor<1x1x2x2xbf16>, %k: tensor<1x1x3x2xbf16>,
                %v: tensor<1x1x3x1xbf16>)
    -> (tensor<1x1x2x1xbf16>, tensor<1x1x2xf32>) {
  %out, %lse = attn.attention q(%q : tensor<1x1x2x2xbf16>)
      k(%k : tensor<1x1x3x2xbf16>) v(%v : tensor<1x1x3x1xbf16>) scale(1.0)
      -> tensor<1x1x2x1xbf16>, tensor<1x1x2xf32>
  return %out, %lse : tensor<1x1x2x1xbf16>, tensor<1x1x2xf32>
}
