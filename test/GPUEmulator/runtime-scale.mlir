// The logit scale as a run-time operand in the GPU kernels: read from its
// buffer in the kernel (not folded into the exponential's FMA, whose fold
// needs a positive scale known at compile time), checked against the f64
// reference on the warp-level emulator with random scales in [-0.25, 0.5],
// and with a given negative one (-1), and with the hand-computed example of
// test/Execution/runtime-scale.mlir.
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.two.npy f4 scalar 2
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.neg.npy f4 scalar -1
// RUN: attn-run %s --device=gpu-emulate --entry=prefill --verify --seed=1 | FileCheck %s --check-prefix=PREFILL
// RUN: attn-run %s --device=gpu-emulate --entry=prefill --verify --input scale=%t.neg.npy | FileCheck %s --check-prefix=PREFILL
// RUN: attn-run %s --device=gpu-emulate --entry=decode --verify | FileCheck %s --check-prefixes=DECODE,SPLIT
// RUN: attn-run %s --device=gpu-emulate --entry=decode --verify --gpu-splits=0 | FileCheck %s --check-prefixes=DECODE,ONE
// RUN: attn-run %s --device=gpu-emulate --entry=prefill_d128 --gpu-wgmma --verify | FileCheck %s --check-prefix=D128
// PREFILL: out: bf16 [1, 4, 80, 64] {{.*}} [ok
// PREFILL: lse: f32 [1, 4, 80] {{.*}} [ok
// SPLIT: emulate: {{.*}} (2 launches
// ONE: emulate: {{.*}} (1 launch,
// DECODE: out: f16 [2, 8, 1, 128] {{.*}} [ok
// DECODE: lse: f32 [2, 8, 1] {{.*}} [ok
// D128: out: bf16 [1, 8, 70, 128] {{.*}} [ok
//
// D = 16 (the GPU's smallest head), q = 1 in dimension 0, keys whose
// dimension 0 is 0 and 1, values 10 and 20 in every dimension; with s = 2:
//   out = 18.808, lse = 2.12693; with s = -1: out = 12.6894, lse = 0.313262
// (out within the bf16 rounding of P for P V: 18.81, 12.68).
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.q.npy f4 1x1x1x16 1,0*15
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.k.npy f4 1x1x2x16 0*16,1,0*15
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.v.npy f4 1x1x2x16 10*16,20*16
// RUN: attn-run %s --device=gpu-emulate --entry=hand --print --reps=0 --verify --input q=%t.q.npy --input k=%t.k.npy --input v=%t.v.npy --input scale=%t.two.npy | FileCheck %s --check-prefix=TWO
// RUN: attn-run %s --device=gpu-emulate --entry=hand --print --reps=0 --verify --input q=%t.q.npy --input k=%t.k.npy --input v=%t.v.npy --input scale=%t.neg.npy | FileCheck %s --check-prefix=NEG
// TWO: out: f32 [1, 1, 1, 16] {{.*}} [ok
// TWO-NEXT: {{^18\.8[0-9]* }}
// TWO: lse: f32 [1, 1, 1]
// TWO-NEXT: {{^}}2.12693{{$}}
// NEG: out: f32 [1, 1, 1, 16] {{.*}} [ok
// NEG-NEXT: {{^12\.6[0-9]* }}
// NEG: lse: f32 [1, 1, 1]
// NEG-NEXT: {{^}}0.313262{{$}}

func.func @prefill(%q: tensor<1x4x80x64xbf16>, %k: tensor<1x2x80x64xbf16>,
                   %v: tensor<1x2x80x64xbf16>, %s: tensor<f32>)
    -> (tensor<1x4x80x64xbf16>, tensor<1x4x80xf32>) {
  %o, %l = attn.attention q(%q : tensor<1x4x80x64xbf16>)
      k(%k : tensor<1x2x80x64xbf16>) v(%v : tensor<1x2x80x64xbf16>)
      scale(%s : tensor<f32>) causal(top_left) window_left(40)
      -> tensor<1x4x80x64xbf16>, tensor<1x4x80xf32>
  return %o, %l : tensor<1x4x80x64xbf16>, tensor<1x4x80xf32>
}

func.func @decode(%q: tensor<2x8x1x128xf16>, %k: tensor<2x2x300x128xf16>,
                  %v: tensor<2x2x300x128xf16>, %len: tensor<2xi32>,
                  %s: tensor<f32>)
    -> (tensor<2x8x1x128xf16>, tensor<2x8x1xf32>) {
  %o, %l = attn.attention q(%q : tensor<2x8x1x128xf16>)
      k(%k : tensor<2x2x300x128xf16>) v(%v : tensor<2x2x300x128xf16>)
      kv_len(%len : tensor<2xi32>) scale(%s : tensor<f32>)
      causal(bottom_right)
      -> tensor<2x8x1x128xf16>, tensor<2x8x1xf32>
  return %o, %l : tensor<2x8x1x128xf16>, tensor<2x8x1xf32>
}

func.func @prefill_d128(%q: tensor<1x8x70x128xbf16>,
                        %k: tensor<1x2x90x128xbf16>,
                        %v: tensor<1x2x90x128xbf16>, %s: tensor<f32>)
    -> tensor<1x8x70x128xbf16> {
  %o = attn.attention q(%q : tensor<1x8x70x128xbf16>)
      k(%k : tensor<1x2x90x128xbf16>) v(%v : tensor<1x2x90x128xbf16>)
      scale(%s : tensor<f32>) causal(bottom_right)
      -> tensor<1x8x70x128xbf16>
  return %o : tensor<1x8x70x128xbf16>
}

func.func @hand(%q: tensor<1x1x1x16xf32>, %k: tensor<1x1x2x16xf32>,
                %v: tensor<1x1x2x16xf32>, %s: tensor<f32>)
    -> (tensor<1x1x1x16xf32>, tensor<1x1x1xf32>) {
  %out, %lse = attn.attention q(%q : tensor<1x1x1x16xf32>)
      k(%k : tensor<1x1x2x16xf32>) v(%v : tensor<1x1x2x16xf32>)
      scale(%s : tensor<f32>) -> tensor<1x1x1x16xf32>, tensor<1x1x1xf32>
  return %out, %lse : tensor<1x1x1x16xf32>, tensor<1x1x1xf32>
}
