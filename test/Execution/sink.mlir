// RUN: attn-run %s --entry=sinks --print --reps=0 --form=naive | FileCheck %s
// RUN: attn-run %s --entry=sinks --print --reps=0 --form=fused | FileCheck %s
// RUN: attn-run %s --entry=sinks --print --reps=0 --form=decode --splits=2 | FileCheck %s

// With ragged batches (rows outside every sequence keep out 0 and lse -inf),
// projections, GQA and dynamic sizes, on random inputs against the f64
// reference, in every CPU form (test/GPUEmulator/sink.mlir: the GPU's):
// RUN: %python %S/Inputs/write_npy.py %t.cq.npy i4 4 2,20,30,45
// RUN: %python %S/Inputs/write_npy.py %t.ck.npy i4 4 0,30,40,70
// RUN: for f in naive fused decode; do attn-run %s --entry=ragged --form=$f --size Nq=50,Nk=70 --input cu_seqlens_q=%t.cq.npy --input cu_seqlens_k=%t.ck.npy --verify; done | FileCheck %s --check-prefix=RAGGED
// RAGGED: lse: f32 [1, 4, 50] {{.*}} [ok
// RUN: for f in naive fused decode; do attn-run %s --entry=projected --form=$f --verify; done | FileCheck %s --check-prefix=PROJ
// PROJ: result: f32 [2, 16, 64] {{.*}} [ok
// RUN: for f in naive fused decode; do attn-run %s --entry=dynamic --form=$f --size B=2,Hq=4,Nq=33,Nk=47 --verify; done | FileCheck %s --check-prefix=DYN
// The dynamic results are the caller's buffers, written in place (the sink's
// rescaling of out too): no output is allocated by the kernel.
// DYN: memory: {{.*}}, 0.000 MiB of it outputs
// DYN: lse: f32 [2, 4, 33] {{.*}} [ok
// DYN: memory: {{.*}}, 0.000 MiB of it outputs
// DYN: lse: f32 [2, 4, 33] {{.*}} [ok
// DYN: memory: {{.*}}, 0.000 MiB of it outputs
// DYN: lse: f32 [2, 4, 33] {{.*}} [ok

// Attention sinks (gpt-oss): a logit per query head in the softmax's
// denominator, with no value. D = 1, scale 1, q = 1.
// The head's sink logit is 0.5.
//   Batch 0: keys k = [0, 1], v = [10, 20]:
//     out = (10 e^0 + 20 e^1) / (e^0.5 + e^0 + e^1) = 11.9928
//     lse = log(e^0.5 + 1 + e) = 1.68027
//   Batch 1: kv_len 0 (no key): out = 0, lse = the sink's logit, 0.5.
// CHECK: out: f32 [2, 1, 1, 1]
// CHECK-NEXT: {{^}}11.9928 0{{$}}
// CHECK: lse: f32 [2, 1, 1]
// CHECK-NEXT: {{^}}1.68027 0.5{{$}}
func.func @sinks() -> (tensor<2x1x1x1xf32>, tensor<2x1x1xf32>) {
  %q = arith.constant dense<1.0> : tensor<2x1x1x1xf32>
  %k = arith.constant dense<[[[[0.0], [1.0]]], [[[0.0], [1.0]]]]> : tensor<2x1x2x1xf32>
  %v = arith.constant dense<[[[[10.0], [20.0]]], [[[10.0], [20.0]]]]> : tensor<2x1x2x1xf32>
  %len = arith.constant dense<[2, 0]> : tensor<2xi32>
  %s = arith.constant dense<0.5> : tensor<1xf32>
  %out, %lse = attn.attention q(%q : tensor<2x1x1x1xf32>) k(%k : tensor<2x1x2x1xf32>)
      v(%v : tensor<2x1x2x1xf32>) kv_len(%len : tensor<2xi32>)
      sink(%s : tensor<1xf32>) scale(1.0)
      -> tensor<2x1x1x1xf32>, tensor<2x1x1xf32>
  return %out, %lse : tensor<2x1x1x1xf32>, tensor<2x1x1xf32>
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

func.func @projected(%x: tensor<2x16x64xf32>, %wq: tensor<64x64xf32>,
                     %wk: tensor<64x32xf32>, %wv: tensor<64x32xf32>,
                     %wo: tensor<64x64xf32>, %s: tensor<4xf32>)
    -> tensor<2x16x64xf32> {
  %y = attn.projected_attention x(%x : tensor<2x16x64xf32>)
      wq(%wq : tensor<64x64xf32>) wk(%wk : tensor<64x32xf32>)
      wv(%wv : tensor<64x32xf32>) wo(%wo : tensor<64x64xf32>) heads(4, 2)
      sink(%s : tensor<4xf32>) causal(top_left) -> tensor<2x16x64xf32>
  return %y : tensor<2x16x64xf32>
}

func.func @dynamic(%q: tensor<?x?x?x32xf32>, %k: tensor<?x2x?x32xf32>,
                   %v: tensor<?x2x?x32xf32>, %s: tensor<?xf32>)
    -> (tensor<?x?x?x32xf32>, tensor<?x?x?xf32>) {
  %o, %l = attn.attention q(%q : tensor<?x?x?x32xf32>)
      k(%k : tensor<?x2x?x32xf32>) v(%v : tensor<?x2x?x32xf32>)
      sink(%s : tensor<?xf32>) causal(bottom_right) window_left(9)
      -> tensor<?x?x?x32xf32>, tensor<?x?x?xf32>
  return %o, %l : tensor<?x?x?x32xf32>, tensor<?x?x?xf32>
}
