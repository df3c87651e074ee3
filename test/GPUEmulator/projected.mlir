// attn.projected_attention on the GPU: the projections as tensor-core GEMMs
// (Q = x Wq, K = kv Wk, V = kv Wv: row-major [B*N, H*Dh] is the bnhd layout)
// feeding the attention kernel, then result = Z Wo; on the warp-level
// emulator against the f64 reference. The inputs make every projection exact
// in bf16 and f16 and Wo the identity (Inputs/projection_inputs.py), so that
// the GEMMs are checked exactly and the result to the attention's tolerance
// (random inputs would hold the GEMMs to tolerances made for attention
// outputs; the CPU forms with f16 intermediates miss those by as much).
//
// Self-attention, f16, GQA 4/2, causal: 6 launches (3 projections, the
// split-KV attention kernel and its merge, the output projection).
// RUN: %python %S/Inputs/projection_inputs.py %t.self f2 2 16 16 64 4 2 16 16
// RUN: attn-run %s --device=gpu-emulate --entry=self_f16 --verify \
// RUN:   --input x=%t.self/x.npy --input wq=%t.self/wq.npy --input wk=%t.self/wk.npy \
// RUN:   --input wv=%t.self/wv.npy --input wo=%t.self/wo.npy | FileCheck %s --check-prefix=SELF
// SELF: emulate: {{.*}}(6 launches,
// SELF: result: f16 [2, 16, 64] {{.*}} [ok
//
// Cross-attention, f32 (staged as bf16), MQA 4/1, Dqk 32 and Dv 16, kv_len:
// row and column tails in every GEMM (48 rows, 128, 32 and 16 columns).
// RUN: %python %S/Inputs/projection_inputs.py %t.cross f4 2 24 40 64 4 1 32 16
// RUN: attn-run %s --device=gpu-emulate --entry=cross_f32 --verify \
// RUN:   --input x=%t.cross/x.npy --input kv_source=%t.cross/kv.npy --input wq=%t.cross/wq.npy \
// RUN:   --input wk=%t.cross/wk.npy --input wv=%t.cross/wv.npy --input wo=%t.cross/wo.npy \
// RUN:   | FileCheck %s --check-prefix=CROSS
// CROSS: result: f32 [2, 24, 64] {{.*}} [ok
//
// Dynamic batch and sequence length, bf16, 2 warps: 3 x 70 rows.
// RUN: %python %S/Inputs/projection_inputs.py %t.dyn f4 3 70 70 64 2 2 32 32
// RUN: attn-run %s --device=gpu-emulate --entry=dynamic_bf16 --verify --gpu-warps=2 \
// RUN:   --input x=%t.dyn/x.npy --input wq=%t.dyn/wq.npy --input wk=%t.dyn/wk.npy \
// RUN:   --input wv=%t.dyn/wv.npy --input wo=%t.dyn/wo.npy | FileCheck %s --check-prefix=DYN
// DYN: result: bf16 [3, 70, 64] {{.*}} [ok

func.func @self_f16(%x: tensor<2x16x64xf16>, %wq: tensor<64x64xf16>,
                    %wk: tensor<64x32xf16>, %wv: tensor<64x32xf16>,
                    %wo: tensor<64x64xf16>) -> tensor<2x16x64xf16> {
  %y = attn.projected_attention x(%x : tensor<2x16x64xf16>)
      wq(%wq : tensor<64x64xf16>) wk(%wk : tensor<64x32xf16>)
      wv(%wv : tensor<64x32xf16>) wo(%wo : tensor<64x64xf16>)
      heads(4, 2) causal(top_left) -> tensor<2x16x64xf16>
  return %y : tensor<2x16x64xf16>
}

func.func @cross_f32(%x: tensor<2x24x64xf32>, %kv: tensor<2x40x64xf32>,
                     %wq: tensor<64x128xf32>, %wk: tensor<64x32xf32>,
                     %wv: tensor<64x16xf32>, %wo: tensor<64x64xf32>,
                     %len: tensor<2xi32>) -> tensor<2x24x64xf32> {
  %y = attn.projected_attention x(%x : tensor<2x24x64xf32>)
      kv_source(%kv : tensor<2x40x64xf32>)
      wq(%wq : tensor<64x128xf32>) wk(%wk : tensor<64x32xf32>)
      wv(%wv : tensor<64x16xf32>) wo(%wo : tensor<64x64xf32>)
      heads(4, 1) kv_len(%len : tensor<2xi32>) -> tensor<2x24x64xf32>
  return %y : tensor<2x24x64xf32>
}

func.func @dynamic_bf16(%x: tensor<?x?x64xbf16>, %wq: tensor<64x64xbf16>,
                        %wk: tensor<64x64xbf16>, %wv: tensor<64x64xbf16>,
                        %wo: tensor<64x64xbf16>) -> tensor<?x?x64xbf16> {
  %y = attn.projected_attention x(%x : tensor<?x?x64xbf16>)
      wq(%wq : tensor<64x64xbf16>) wk(%wk : tensor<64x64xbf16>)
      wv(%wv : tensor<64x64xbf16>) wo(%wo : tensor<64x64xbf16>)
      heads(2, 2) causal(bottom_right) -> tensor<?x?x64xbf16>
  return %y : tensor<?x?x64xbf16>
}
