// S = Q K^T and O += P V on Hopper's warpgroup MMA (--gpu-wgmma; P V on
// mma.sync at 32-key tiles) on the warp-level emulator against the f64
// reference: the emulator reads the swizzled Q, K, P and V tiles (V
// MN-major) through the kernels' own wgmma descriptors (the swizzle, the
// descriptor fields and the accumulator layout as the PTX ISA states them,
// test/unittests/GPUEmulator/WgmmaTest.cpp) and checks the ordering (fence,
// commit, wait before the accumulators are read, no shared-memory write
// while a wgmma reads it). Prefill with GQA, tails and kv_len at head dims
// 64 and 128, decode through the split-KV kernels, f32 inputs (staged as
// bf16), 32-key tiles, and keys past kv_len whose K and V rows are NaN.
// RUN: attn-run %s --device=gpu-emulate --entry=prefill_d128 --gpu-wgmma --verify | FileCheck %s --check-prefix=D128
// RUN: attn-run %s --device=gpu-emulate --entry=prefill_d128 --gpu-wgmma --gpu-tile-k=32 --verify | FileCheck %s --check-prefix=D128
// 128-key tiles: P in two 64-key blocks.
// RUN: attn-run %s --device=gpu-emulate --entry=prefill_d128 --gpu-wgmma --gpu-tile-k=128 --verify | FileCheck %s --check-prefix=D128
// Dv = 64 != Dqk = 128 and Dv = 256 (O's n = 256), sliding window.
// RUN: attn-run %s --device=gpu-emulate --entry=dv64 --gpu-wgmma --verify | FileCheck %s --check-prefix=DV64
// RUN: attn-run %s --device=gpu-emulate --entry=dv256 --gpu-wgmma --verify | FileCheck %s --check-prefix=DV256
// DV64: 0 mma.sync, {{[0-9]+}} wgmma
// DV64: out: bf16 [1, 4, 90, 64] {{.*}} [ok
// DV256: 0 mma.sync, {{[0-9]+}} wgmma
// DV256: out: f16 [1, 4, 70, 256] {{.*}} [ok
// RUN: attn-run %s --device=gpu-emulate --entry=decode --gpu-wgmma --verify --report=%t.json | FileCheck %s --check-prefix=DEC
// RUN: FileCheck %s --check-prefix=REPORT < %t.json
// REPORT: "warps": 4,
// REPORT-NEXT: "wgmma": 2
// RUN: attn-run %s --device=gpu-emulate --entry=f32_window --gpu-wgmma --verify | FileCheck %s --check-prefix=F32
// The examples' serving paths: chunked prefill against the reference, and
// the paged decode step (StepHost: append kernels, then the attention), which
// the reference cannot take as a whole, runs its wgmma kernels through the
// emulator's checks.
// RUN: attn-run %attn_src_root/examples/serving/chunked_prefill.mlir --device=gpu-emulate --gpu-wgmma --size Nq=70,Nk=90 --verify | FileCheck %s --check-prefix=CHUNK
// RUN: attn-run %attn_src_root/examples/serving/paged_decode_step.mlir --device=gpu-emulate --gpu-wgmma | FileCheck %s --check-prefix=STEP
// CHUNK: emulate: {{.*}} [[#]] wgmma,
// CHUNK: out: {{.*}} [ok
// STEP: emulate: {{.*}} (5 launches, {{.*}} [[#]] wgmma,
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.k.npy f2 1x1x128x64 0.5*4480,nan*3712
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.v.npy f2 1x1x128x64 0.25*4480,nan*3712
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.len.npy i4 1 70
// RUN: attn-run %s --device=gpu-emulate --entry=nan_past_kv_len --gpu-wgmma --input k=%t.k.npy --input v=%t.v.npy --input kv_len=%t.len.npy --verify | FileCheck %s --check-prefix=NAN

// D128: emulate: {{.*}} [[#]] wgmma,
// D128: out: bf16 [2, 8, 100, 128] {{.*}} [ok
// D128: lse: f32 [2, 8, 100] {{.*}} [ok
func.func @prefill_d128(%q: tensor<2x8x100x128xbf16>,
                        %k: tensor<2x2x130x128xbf16>,
                        %v: tensor<2x2x130x128xbf16>,
                        %kv_len: tensor<2xi32>)
    -> (tensor<2x8x100x128xbf16>, tensor<2x8x100xf32>) {
  %out, %lse = attn.attention q(%q : tensor<2x8x100x128xbf16>)
      k(%k : tensor<2x2x130x128xbf16>) v(%v : tensor<2x2x130x128xbf16>)
      kv_len(%kv_len : tensor<2xi32>) causal(bottom_right)
      -> tensor<2x8x100x128xbf16>, tensor<2x8x100xf32>
  return %out, %lse : tensor<2x8x100x128xbf16>, tensor<2x8x100xf32>
}

// Split-KV: the chunks' kernels run wgmma too.
// DEC: emulate: {{.*}} (2 launches, {{.*}} [[#]] wgmma,
// DEC: out: f16 [2, 8, 1, 64] {{.*}} [ok
// DEC: lse: f32 [2, 8, 1] {{.*}} [ok
func.func @decode(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x300x64xf16>,
                  %v: tensor<2x2x300x64xf16>, %kv_len: tensor<2xi32>)
    -> (tensor<2x8x1x64xf16>, tensor<2x8x1xf32>) {
  %out, %lse = attn.attention q(%q : tensor<2x8x1x64xf16>)
      k(%k : tensor<2x2x300x64xf16>) v(%v : tensor<2x2x300x64xf16>)
      kv_len(%kv_len : tensor<2xi32>) causal(bottom_right)
      -> tensor<2x8x1x64xf16>, tensor<2x8x1xf32>
  return %out, %lse : tensor<2x8x1x64xf16>, tensor<2x8x1xf32>
}

// F32: emulate: {{.*}} [[#]] wgmma,
// F32: out: f32 [1, 4, 77, 64] {{.*}} [ok
func.func @f32_window(%q: tensor<1x4x77x64xf32>, %k: tensor<1x4x77x64xf32>,
                      %v: tensor<1x4x77x64xf32>) -> tensor<1x4x77x64xf32> {
  %out = attn.attention q(%q : tensor<1x4x77x64xf32>)
      k(%k : tensor<1x4x77x64xf32>) v(%v : tensor<1x4x77x64xf32>)
      causal(top_left) window_left(20) -> tensor<1x4x77x64xf32>
  return %out : tensor<1x4x77x64xf32>
}

// NAN: emulate: {{.*}} [[#]] wgmma,
// NAN: out: f16 [1, 4, 64, 64] sum 4096 abs-sum 4096 {{.*}} max abs err 0, {{.*}} [ok
func.func @nan_past_kv_len(%q: tensor<1x4x64x64xf16>,
                           %k: tensor<1x1x128x64xf16>,
                           %v: tensor<1x1x128x64xf16>,
                           %kv_len: tensor<1xi32>) -> tensor<1x4x64x64xf16> {
  %out = attn.attention q(%q : tensor<1x4x64x64xf16>)
      k(%k : tensor<1x1x128x64xf16>) v(%v : tensor<1x1x128x64xf16>)
      kv_len(%kv_len : tensor<1xi32>) -> tensor<1x4x64x64xf16>
  return %out : tensor<1x4x64x64xf16>
}

func.func @dv64(%q: tensor<1x4x90x128xbf16>, %k: tensor<1x2x110x128xbf16>,
                %v: tensor<1x2x110x64xbf16>) -> tensor<1x4x90x64xbf16> {
  %o = attn.attention q(%q : tensor<1x4x90x128xbf16>)
      k(%k : tensor<1x2x110x128xbf16>) v(%v : tensor<1x2x110x64xbf16>)
      causal(bottom_right) window_left(50) -> tensor<1x4x90x64xbf16>
  return %o : tensor<1x4x90x64xbf16>
}

func.func @dv256(%q: tensor<1x4x70x64xf16>, %k: tensor<1x4x80x64xf16>,
                 %v: tensor<1x4x80x256xf16>) -> tensor<1x4x70x256xf16> {
  %o = attn.attention q(%q : tensor<1x4x70x64xf16>)
      k(%k : tensor<1x4x80x64xf16>) v(%v : tensor<1x4x80x256xf16>)
      -> tensor<1x4x70x256xf16>
  return %o : tensor<1x4x70x256xf16>
}
