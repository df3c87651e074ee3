// bf16 v values near the bf16 maximum (3.39e38) must give finite outputs
// (docs/Robustness.md): the true result is a weighted mean of the v values.
//
// Every form used to accumulate sum_j exp(s_j - m) v_j in f32 before dividing
// by the row sum, which overflowed here (a uniform row over three keys with
// v = 2^127 gave inf). The fused and decode forms now keep the accumulator
// scaled by a power of two below 1 / l, the naive form falls back to a
// normalized accumulator where the plain one overflows.
//
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.q.npy f4 1x1x1x2 zeros
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.k.npy f4 1x1x3x2 zeros
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.v.npy f4 1x1x3x1 1.7014118346046923e38
// RUN: attn-run %s --form=naive --input q=%t.q.npy --input k=%t.k.npy --input v=%t.v.npy --verify --reps=0 --print | FileCheck %s
// RUN: attn-run %s --form=fused --input q=%t.q.npy --input k=%t.k.npy --input v=%t.v.npy --verify --reps=0 --print | FileCheck %s
// RUN: attn-run %s --form=decode --splits=4 --input q=%t.q.npy --input k=%t.k.npy --input v=%t.v.npy --verify --reps=0 --print | FileCheck %s
// CHECK:      out: bf16 [1, 1, 1, 1] {{.*}} [ok
// CHECK-NEXT: {{^}}1.70141e+38{{$}}
func.func @f(%q: tensor<1x1x1x2xbf16>, %k: tensor<1x1x3x2xbf16>,
             %v: tensor<1x1x3x1xbf16>) -> tensor<1x1x1x1xbf16> {
  %out = attn.attention q(%q : tensor<1x1x1x2xbf16>) k(%k : tensor<1x1x3x2xbf16>)
      v(%v : tensor<1x1x3x1xbf16>) -> tensor<1x1x1x1xbf16>
  return %out : tensor<1x1x1x1xbf16>
}
