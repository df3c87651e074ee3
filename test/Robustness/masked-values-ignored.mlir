// Values at keys a row may not read must not change its result
// (docs/Robustness.md): the unused part of a KV cache (beyond kv_len) may
// hold anything, NaN and inf included, and so may the keys a causal mask
// hides. The reference (lib/Reference) never reads them.
//
// Every form guards the weight-times-v product: a masked key's weight is
// exactly 0 and contributes 0 even when v is NaN or inf there (the fused
// microkernel runs only on tiles without masked keys). NaN in k there is
// harmless (the logit is replaced by -inf first).
//
// q = [0,0], [1,0], [1,1]; k = [1,0], [0,1], then NaN; v = 1, 2, then NaN;
// kv_len = 2, scale(1.0): row 0 -> 1.5, row 1 -> (e + 2) / (e + 1), row 2 -> 1.5.
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.q.npy f4 1x1x3x2 0,0,1,0,1,1
// RUN: %python -c "print(','.join(['1','0','0','1'] + ['nan'] * 76))" > %t.kvals
// RUN: %python -c "print(','.join(['1','2'] + ['nan'] * 38))" > %t.vvals
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.k.npy f4 1x1x40x2 %{readfile:%t.kvals}
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.v.npy f4 1x1x40x1 %{readfile:%t.vvals}
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.len.npy i4 1 2
// DEFINE: %{in} = --input q=%t.q.npy --input k=%t.k.npy --input v=%t.v.npy --input kv_len=%t.len.npy
// RUN: attn-run %s --entry=cache --form=naive %{in} --verify --reps=0 --print | FileCheck %s --check-prefix=CACHE
// RUN: attn-run %s --entry=cache --form=fused %{in} --verify --reps=0 --print | FileCheck %s --check-prefix=CACHE
// RUN: attn-run %s --entry=cache --form=decode --splits=4 %{in} --verify --reps=0 --print | FileCheck %s --check-prefix=CACHE
// CACHE:      out: f32 [1, 1, 3, 1] {{.*}} [ok
// CACHE-NEXT: {{^}}1.5 1.26894 1.5{{$}}
// CACHE-NEXT: lse: f32 [1, 1, 3] {{.*}} [ok
// CACHE-NEXT: {{^}}0.693147 1.31326 1.69315{{$}}
func.func @cache(%q: tensor<1x1x3x2xf32>, %k: tensor<1x1x40x2xf32>,
                 %v: tensor<1x1x40x1xf32>, %kv_len: tensor<1xi32>)
    -> (tensor<1x1x3x1xf32>, tensor<1x1x3xf32>) {
  %out, %lse = attn.attention q(%q : tensor<1x1x3x2xf32>)
      k(%k : tensor<1x1x40x2xf32>) v(%v : tensor<1x1x40x1xf32>)
      kv_len(%kv_len : tensor<1xi32>) scale(1.0)
      -> tensor<1x1x3x1xf32>, tensor<1x1x3xf32>
  return %out, %lse : tensor<1x1x3x1xf32>, tensor<1x1x3xf32>
}

// Causal top-left, Nq = 2, Nk = 3: no row reads key 2, whose v is inf.
// Rows read keys {0} and {0, 1}: out 1 and 1.5 (q = 0).
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.qc.npy f4 1x1x2x1 zeros
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.kc.npy f4 1x1x3x1 1
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.vc.npy f4 1x1x3x1 1,2,inf
// DEFINE: %{inc} = --input q=%t.qc.npy --input k=%t.kc.npy --input v=%t.vc.npy
// RUN: attn-run %s --entry=causal --form=naive %{inc} --verify --reps=0 --print | FileCheck %s --check-prefix=CAUSAL
// RUN: attn-run %s --entry=causal --form=fused %{inc} --verify --reps=0 --print | FileCheck %s --check-prefix=CAUSAL
// RUN: attn-run %s --entry=causal --form=decode --splits=4 %{inc} --verify --reps=0 --print | FileCheck %s --check-prefix=CAUSAL
// CAUSAL:      out: f32 [1, 1, 2, 1] {{.*}} [ok
// CAUSAL-NEXT: {{^}}1 1.5{{$}}
func.func @causal(%q: tensor<1x1x2x1xf32>, %k: tensor<1x1x3x1xf32>,
                  %v: tensor<1x1x3x1xf32>) -> tensor<1x1x2x1xf32> {
  %out = attn.attention q(%q : tensor<1x1x2x1xf32>) k(%k : tensor<1x1x3x1xf32>)
      v(%v : tensor<1x1x3x1xf32>) causal(top_left) -> tensor<1x1x2x1xf32>
  return %out : tensor<1x1x2x1xf32>
}
