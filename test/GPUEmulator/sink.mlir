// Attention sinks in the GPU kernel: the sink's logit joins the row's
// denominator in the epilogue (one more log-sum-exp merge of a part with no
// value) or, split-KV, in the merge kernel; checked against the f64
// reference on the warp-level emulator (random sinks in [-1, 3], so the
// sink takes a visible share).
// RUN: attn-run %s --device=gpu-emulate --entry=prefill --verify | FileCheck %s --check-prefix=PREFILL
// RUN: attn-run %s --device=gpu-emulate --entry=decode --verify | FileCheck %s --check-prefixes=DECODE,SPLIT
// RUN: attn-run %s --device=gpu-emulate --entry=decode --verify --gpu-splits=0 | FileCheck %s --check-prefixes=DECODE,ONE
// ONE: emulate: {{.*}} (1 launch,
// PREFILL: out: bf16 [1, 4, 80, 64] {{.*}} [ok
// PREFILL: lse: f32 [1, 4, 80] {{.*}} [ok
// SPLIT: emulate: {{.*}} (2 launches
// DECODE: out: f16 [2, 8, 1, 128] {{.*}} [ok
// DECODE: lse: f32 [2, 8, 1] {{.*}} [ok
// A ragged batch: rows outside every sequence keep out 0 and lse -inf.
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.cq.npy i4 4 2,20,30,45
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.ck.npy i4 4 0,30,40,70
// RUN: attn-run %s --entry=ragged --device=gpu-emulate --size Nq=50,Nk=70 --input cu_seqlens_q=%t.cq.npy --input cu_seqlens_k=%t.ck.npy --verify | FileCheck %s --check-prefix=RAGGED
// RAGGED: out: f16 [1, 4, 50, 64] {{.*}} [ok
// RAGGED: lse: f32 [1, 4, 50] {{.*}} [ok
//
// A row without any key (kv_len 0) gets out 0 and lse = its sink's logit,
// on the CPU and the GPU.
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.len.npy i4 2 0,300
// RUN: attn-run %s --device=gpu-emulate --entry=decode --verify --input kv_len=%t.len.npy | FileCheck %s --check-prefix=DECODE
// RUN: attn-run %s --entry=decode --form=decode --verify --input kv_len=%t.len.npy | FileCheck %s --check-prefix=DECODE

func.func @prefill(%q: tensor<1x4x80x64xbf16>, %k: tensor<1x2x80x64xbf16>,
                   %v: tensor<1x2x80x64xbf16>, %s: tensor<4xf32>)
    -> (tensor<1x4x80x64xbf16>, tensor<1x4x80xf32>) {
  %o, %l = attn.attention q(%q : tensor<1x4x80x64xbf16>)
      k(%k : tensor<1x2x80x64xbf16>) v(%v : tensor<1x2x80x64xbf16>)
      sink(%s : tensor<4xf32>) causal(top_left) window_left(40)
      -> tensor<1x4x80x64xbf16>, tensor<1x4x80xf32>
  return %o, %l : tensor<1x4x80x64xbf16>, tensor<1x4x80xf32>
}

func.func @decode(%q: tensor<2x8x1x128xf16>, %k: tensor<2x2x300x128xf16>,
                  %v: tensor<2x2x300x128xf16>, %len: tensor<2xi32>,
                  %s: tensor<8xf32>)
    -> (tensor<2x8x1x128xf16>, tensor<2x8x1xf32>) {
  %o, %l = attn.attention q(%q : tensor<2x8x1x128xf16>)
      k(%k : tensor<2x2x300x128xf16>) v(%v : tensor<2x2x300x128xf16>)
      kv_len(%len : tensor<2xi32>) sink(%s : tensor<8xf32>)
      causal(bottom_right)
      -> tensor<2x8x1x128xf16>, tensor<2x8x1xf32>
  return %o, %l : tensor<2x8x1x128xf16>, tensor<2x8x1xf32>
}

func.func @ragged(%q: tensor<1x4x?x64xf16>, %k: tensor<1x2x?x64xf16>,
                  %v: tensor<1x2x?x64xf16>, %cq: tensor<4xi32>,
                  %ck: tensor<4xi32>, %s: tensor<4xf32>)
    -> (tensor<1x4x?x64xf16>, tensor<1x4x?xf32>) {
  %o, %l = attn.attention q(%q : tensor<1x4x?x64xf16>)
      k(%k : tensor<1x2x?x64xf16>) v(%v : tensor<1x2x?x64xf16>)
      ragged(%cq, %ck : tensor<4xi32>, tensor<4xi32>) sink(%s : tensor<4xf32>)
      causal(bottom_right)
      -> tensor<1x4x?x64xf16>, tensor<1x4x?xf32>
  return %o, %l : tensor<1x4x?x64xf16>, tensor<1x4x?xf32>
}
