// Rows left without any key (docs/Robustness.md): by the boolean mask, by
// kv_len = 0, by the causal mask and the window, and by a bias that is -inf
// on the whole row. Softmax rows give exactly out = 0 and lse = -inf
// (docs/Semantics.md; a row whose allowed logits are all -inf counts as
// empty, lib/Reference/Reference.h); sigmoid rows give out = 0. Every form,
// and the fused and decode forms with tiny tiles so that whole key tiles
// are skipped.
//
// q = 0: every allowed key has logit 0, so a row's out is the mean of the v
// values it reads (v = 1, 2, ..., 6) and its lse the log of their count.
//
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.q2.npy f4 2x1x4x1 zeros
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.k2.npy f4 2x1x6x1 1
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.v2.npy f4 2x1x6x1 1,2,3,4,5,6,1,2,3,4,5,6
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.mask.npy b1 4x6 1,1,1,1,1,1,0,0,0,0,0,0,1,0,1,0,1,0,0,0,0,1,1,1
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.len.npy i4 2 6,0
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.q1.npy f4 1x1x4x1 zeros
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.k1.npy f4 1x1x6x1 1
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.v1.npy f4 1x1x6x1 1,2,3,4,5,6
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.bias.npy f4 4x6 0,0,0,0,0,0,0,0,0,0,0,0,-inf,-inf,-inf,-inf,-inf,-inf,0,0,0,0,0,0
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.ks.npy f4 1x1x2x1 1
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.vs.npy f4 1x1x2x1 1,2
// DEFINE: %{mask_inputs} = --input q=%t.q2.npy --input k=%t.k2.npy --input v=%t.v2.npy --input kv_len=%t.len.npy --input mask=%t.mask.npy
// DEFINE: %{bias_inputs} = --input q=%t.q1.npy --input k=%t.k1.npy --input v=%t.v1.npy --input bias=%t.bias.npy
// DEFINE: %{sigmoid_inputs} = --input q=%t.q1.npy --input k=%t.ks.npy --input v=%t.vs.npy
//
// Mask rows (batch 0, kv_len 6, causal top-left: row i reads keys <= i):
// row 0 all true -> key 0; row 1 all false -> none; row 2 keys 0, 2; row 3
// keys 3..5 -> key 3. Batch 1 has kv_len 0: no row reads anything.
// RUN: attn-run %s --entry=mask_len --form=naive %{mask_inputs} --verify --reps=0 --print | FileCheck %s --check-prefix=MASK
// RUN: attn-run %s --entry=mask_len --form=fused %{mask_inputs} --verify --reps=0 --print | FileCheck %s --check-prefix=MASK
// RUN: attn-run %s --entry=mask_len --form=fused --tile-q=1 --tile-k=1 %{mask_inputs} --verify --reps=0 --print | FileCheck %s --check-prefix=MASK
// RUN: attn-run %s --entry=mask_len --form=decode --splits=4 %{mask_inputs} --verify --reps=0 --print | FileCheck %s --check-prefix=MASK
// RUN: attn-run %s --entry=mask_len --form=decode --tile-q=1 --tile-k=1 --splits=4 %{mask_inputs} --verify --reps=0 --print | FileCheck %s --check-prefix=MASK
// MASK:      out: f32 [2, 1, 4, 1] {{.*}} [ok
// MASK-NEXT: {{^}}1 0 2 4 0 0 0 0{{$}}
// MASK-NEXT: lse: f32 [2, 1, 4] {{.*}} [ok
// MASK-NEXT: {{^}}0 -inf 0.693147 0 -inf -inf -inf -inf{{$}}
func.func @mask_len(%q: tensor<2x1x4x1xf32>, %k: tensor<2x1x6x1xf32>,
                    %v: tensor<2x1x6x1xf32>, %kv_len: tensor<2xi32>,
                    %mask: tensor<4x6xi1>)
    -> (tensor<2x1x4x1xf32>, tensor<2x1x4xf32>) {
  %out, %lse = attn.attention q(%q : tensor<2x1x4x1xf32>)
      k(%k : tensor<2x1x6x1xf32>) v(%v : tensor<2x1x6x1xf32>)
      kv_len(%kv_len : tensor<2xi32>) mask(%mask : tensor<4x6xi1>)
      causal(top_left) -> tensor<2x1x4x1xf32>, tensor<2x1x4xf32>
  return %out, %lse : tensor<2x1x4x1xf32>, tensor<2x1x4xf32>
}

// Row 2 of the bias is -inf everywhere; the other rows read all 6 keys.
// RUN: attn-run %s --entry=bias_row --form=naive %{bias_inputs} --verify --reps=0 --print | FileCheck %s --check-prefix=BIAS
// RUN: attn-run %s --entry=bias_row --form=fused %{bias_inputs} --verify --reps=0 --print | FileCheck %s --check-prefix=BIAS
// RUN: attn-run %s --entry=bias_row --form=fused --tile-q=2 --tile-k=4 %{bias_inputs} --verify --reps=0 --print | FileCheck %s --check-prefix=BIAS
// RUN: attn-run %s --entry=bias_row --form=decode --splits=3 %{bias_inputs} --verify --reps=0 --print | FileCheck %s --check-prefix=BIAS
// BIAS:      out: f32 [1, 1, 4, 1] {{.*}} [ok
// BIAS-NEXT: {{^}}3.5 3.5 0 3.5{{$}}
// BIAS-NEXT: lse: f32 [1, 1, 4] {{.*}} [ok
// BIAS-NEXT: {{^}}1.79176 1.79176 -inf 1.79176{{$}}
func.func @bias_row(%q: tensor<1x1x4x1xf32>, %k: tensor<1x1x6x1xf32>,
                    %v: tensor<1x1x6x1xf32>, %bias: tensor<4x6xf32>)
    -> (tensor<1x1x4x1xf32>, tensor<1x1x4xf32>) {
  %out, %lse = attn.attention q(%q : tensor<1x1x4x1xf32>)
      k(%k : tensor<1x1x6x1xf32>) v(%v : tensor<1x1x6x1xf32>)
      bias(%bias : tensor<4x6xf32>) -> tensor<1x1x4x1xf32>, tensor<1x1x4xf32>
  return %out, %lse : tensor<1x1x4x1xf32>, tensor<1x1x4xf32>
}

// Sigmoid, causal(bottom_right) with a window of width 0: Nq = 4, Nk = 2, so
// p(i) = i + Nk - Nq = i - 2. Rows 0 and 1 (p < 0) read nothing: out = 0.
// Rows 2 and 3 read key 0 and key 1 with weight sigmoid(0) = 0.5.
// RUN: attn-run %s --entry=sigmoid_window --form=naive %{sigmoid_inputs} --verify --reps=0 --print | FileCheck %s --check-prefix=SIGMOID
// RUN: attn-run %s --entry=sigmoid_window --form=fused %{sigmoid_inputs} --verify --reps=0 --print | FileCheck %s --check-prefix=SIGMOID
// RUN: attn-run %s --entry=sigmoid_window --form=fused --tile-q=1 --tile-k=1 %{sigmoid_inputs} --verify --reps=0 --print | FileCheck %s --check-prefix=SIGMOID
// RUN: attn-run %s --entry=sigmoid_window --form=decode --splits=4 %{sigmoid_inputs} --verify --reps=0 --print | FileCheck %s --check-prefix=SIGMOID
// SIGMOID:      out: f32 [1, 1, 4, 1] {{.*}} [ok
// SIGMOID-NEXT: {{^}}0 0 0.5 1{{$}}
func.func @sigmoid_window(%q: tensor<1x1x4x1xf32>, %k: tensor<1x1x2x1xf32>,
                          %v: tensor<1x1x2x1xf32>) -> tensor<1x1x4x1xf32> {
  %out = attn.attention q(%q : tensor<1x1x4x1xf32>) k(%k : tensor<1x1x2x1xf32>)
      v(%v : tensor<1x1x2x1xf32>) causal(bottom_right) window_left(0)
      window_right(0) norm(sigmoid) -> tensor<1x1x4x1xf32>
  return %out : tensor<1x1x4x1xf32>
}
