// The logit scale as a run-time operand, scale(%s : tensor<f32>): one
// compiled kernel, the scale passed with each call.
//
// D = 1, q = 1, keys k = [0, 1], values v = [10, 20]; the scale is the
// call's. With s = 2 the logits are [0, 2]:
//   out = (10 + 20 e^2) / (1 + e^2) = 18.808, lse = log(1 + e^2) = 2.12693.
// With s = -1 (a negative scale reverses which key dominates), [0, -1]:
//   out = (10 + 20 e^-1) / (1 + e^-1) = 12.6894, lse = 0.313262.
// RUN: %python %S/Inputs/write_npy.py %t.two.npy f4 scalar 2
// RUN: %python %S/Inputs/write_npy.py %t.neg.npy f4 scalar -1
// RUN: for f in naive fused decode; do attn-run %s --entry=hand --print --reps=0 --form=$f --input scale=%t.two.npy; done | FileCheck %s --check-prefix=TWO
// RUN: for f in naive fused decode; do attn-run %s --entry=hand --print --reps=0 --form=$f --input scale=%t.neg.npy; done | FileCheck %s --check-prefix=NEG
// TWO-COUNT-3: {{^}}18.808{{$}}
// TWO-NOT: 12.6894
// NEG-COUNT-3: {{^}}12.6894{{$}}
// NEG-NOT: 18.808
// RUN: attn-run %s --entry=hand --print --reps=0 --input scale=%t.two.npy | FileCheck %s --check-prefix=LSE
// LSE: lse: f32 [1, 1, 1]
// LSE-NEXT: {{^}}2.12693{{$}}
//
// Random inputs (random scales in [-0.25, 0.5]) against the f64 reference in
// every CPU form: GQA with a causal window and kv_len, dynamic sizes, a
// ragged batch, projections.
// RUN: for f in naive fused decode; do attn-run %s --entry=gqa --form=$f --verify --seed=3; done | FileCheck %s --check-prefix=GQA
// GQA-COUNT-3: lse: f32 [2, 8, 40] {{.*}} [ok
// RUN: for f in naive fused decode; do attn-run %s --entry=dynamic --form=$f --size B=2,Hq=4,Nq=33,Nk=47 --verify; done | FileCheck %s --check-prefix=DYN
// DYN-COUNT-3: out: f32 [2, 4, 33, 32] {{.*}} [ok
// RUN: %python %S/Inputs/write_npy.py %t.cq.npy i4 4 2,20,30,45
// RUN: %python %S/Inputs/write_npy.py %t.ck.npy i4 4 0,30,40,70
// RUN: for f in naive fused decode; do attn-run %s --entry=ragged --form=$f --size Nq=50,Nk=70 --input cu_seqlens_q=%t.cq.npy --input cu_seqlens_k=%t.ck.npy --verify; done | FileCheck %s --check-prefix=RAGGED
// RAGGED-COUNT-3: out: f16 [1, 4, 50, 64] {{.*}} [ok
// RUN: for f in naive fused decode; do attn-run %s --entry=projected --form=$f --verify; done | FileCheck %s --check-prefix=PROJ
// PROJ-COUNT-3: result: f32 [2, 16, 64] {{.*}} [ok

func.func @hand(%s: tensor<f32>) -> (tensor<1x1x1x1xf32>, tensor<1x1x1xf32>) {
  %q = arith.constant dense<1.0> : tensor<1x1x1x1xf32>
  %k = arith.constant dense<[[[[0.0], [1.0]]]]> : tensor<1x1x2x1xf32>
  %v = arith.constant dense<[[[[10.0], [20.0]]]]> : tensor<1x1x2x1xf32>
  %out, %lse = attn.attention q(%q : tensor<1x1x1x1xf32>)
      k(%k : tensor<1x1x2x1xf32>) v(%v : tensor<1x1x2x1xf32>)
      scale(%s : tensor<f32>) -> tensor<1x1x1x1xf32>, tensor<1x1x1xf32>
  return %out, %lse : tensor<1x1x1x1xf32>, tensor<1x1x1xf32>
}

func.func @gqa(%q: tensor<2x8x40x64xf32>, %k: tensor<2x2x56x64xf32>,
               %v: tensor<2x2x56x64xf32>, %len: tensor<2xi32>,
               %s: tensor<f32>)
    -> (tensor<2x8x40x64xf32>, tensor<2x8x40xf32>) {
  %o, %l = attn.attention q(%q : tensor<2x8x40x64xf32>)
      k(%k : tensor<2x2x56x64xf32>) v(%v : tensor<2x2x56x64xf32>)
      kv_len(%len : tensor<2xi32>) scale(%s : tensor<f32>)
      causal(bottom_right) window_left(24)
      -> tensor<2x8x40x64xf32>, tensor<2x8x40xf32>
  return %o, %l : tensor<2x8x40x64xf32>, tensor<2x8x40xf32>
}

func.func @dynamic(%q: tensor<?x?x?x32xf32>, %k: tensor<?x2x?x32xf32>,
                   %v: tensor<?x2x?x32xf32>, %s: tensor<f32>)
    -> tensor<?x?x?x32xf32> {
  %o = attn.attention q(%q : tensor<?x?x?x32xf32>)
      k(%k : tensor<?x2x?x32xf32>) v(%v : tensor<?x2x?x32xf32>)
      scale(%s : tensor<f32>) causal(top_left) -> tensor<?x?x?x32xf32>
  return %o : tensor<?x?x?x32xf32>
}

func.func @ragged(%q: tensor<1x4x?x64xf16>, %k: tensor<1x2x?x64xf16>,
                  %v: tensor<1x2x?x64xf16>, %cq: tensor<4xi32>,
                  %ck: tensor<4xi32>, %s: tensor<f32>)
    -> tensor<1x4x?x64xf16> {
  %o = attn.attention q(%q : tensor<1x4x?x64xf16>)
      k(%k : tensor<1x2x?x64xf16>) v(%v : tensor<1x2x?x64xf16>)
      ragged(%cq, %ck : tensor<4xi32>, tensor<4xi32>) scale(%s : tensor<f32>)
      causal(bottom_right) -> tensor<1x4x?x64xf16>
  return %o : tensor<1x4x?x64xf16>
}

func.func @projected(%x: tensor<2x16x64xf32>, %wq: tensor<64x64xf32>,
                     %wk: tensor<64x32xf32>, %wv: tensor<64x32xf32>,
                     %wo: tensor<64x64xf32>, %s: tensor<f32>)
    -> tensor<2x16x64xf32> {
  %y = attn.projected_attention x(%x : tensor<2x16x64xf32>)
      wq(%wq : tensor<64x64xf32>) wk(%wk : tensor<64x32xf32>)
      wv(%wv : tensor<64x32xf32>) wo(%wo : tensor<64x64xf32>) heads(4, 2)
      scale(%s : tensor<f32>) causal(top_left) -> tensor<2x16x64xf32>
  return %y : tensor<2x16x64xf32>
}
