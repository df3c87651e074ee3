// Specs lowered by convert-attn-to-gpu and run on the warp-level emulator
// (every lane's ldmatrix, mma.sync, shuffle and cp.async), checked against
// the f64 reference. The randomized sweep is AttnGPUKernelSweepTests.
// RUN: attn-run %s --device=gpu-emulate --entry=gqa_causal --verify | FileCheck %s --check-prefix=GQA
// RUN: attn-run %s --device=gpu-emulate --entry=gqa_causal --verify --gpu-warps=2 --gpu-tile-k=16 --report=%t.json | FileCheck %s --check-prefix=GQA
// RUN: FileCheck %s --check-prefix=REPORT < %t.json
// 32 rows per warp (two 16-row fragments: 128-row tiles with 4 warps).
// RUN: attn-run %s --device=gpu-emulate --entry=gqa_causal --verify --gpu-warp-rows=32 --report=%t.rows.json | FileCheck %s --check-prefix=GQA
// RUN: FileCheck %s --check-prefix=ROWS < %t.rows.json
// RUN: attn-run %s --device=gpu-emulate --entry=window_alibi_bf16 --verify --gpu-warp-rows=32 --gpu-warps=2 | FileCheck %s --check-prefix=WIN
// RUN: attn-run %s --device=gpu-emulate --entry=softcap_bias --verify --gpu-warp-rows=32 | FileCheck %s --check-prefix=CAP
// RUN: attn-run %s --device=gpu-emulate --entry=window_alibi_bf16 --verify | FileCheck %s --check-prefix=WIN
// RUN: attn-run %s --device=gpu-emulate --entry=decode --verify --seed=3 | FileCheck %s --check-prefix=DEC
// RUN: attn-run %s --device=gpu-emulate --entry=softcap_bias --verify | FileCheck %s --check-prefix=CAP
// RUN: not attn-run %s --device=gpu-emulate --entry=decode --tile-map 2>&1 | FileCheck %s --check-prefix=OPT
// RUN: not attn-run %s --device=tpu --entry=decode 2>&1 | FileCheck %s --check-prefix=DEV
// OPT: error: --tile-map and --count-tiles are not available with --device=gpu-emulate
// DEV: error: unknown --device 'tpu': cpu, gpu or gpu-emulate
// The JSON report of an emulated run: what the lowering chose (2 warps:
// 32 query rows; 16 keys per tile), the emulator's counters, the check.
// REPORT: "device": "gpu-emulate",
// REPORT-NEXT: "lowering": [
// REPORT-NEXT: {
// REPORT-NEXT: "form": "gpu",
// REPORT-NEXT: "tile_q": 32,
// REPORT-NEXT: "tile_k": 16,
// REPORT: "warps": 2
// REPORT: "mma_sync": {{[1-9][0-9]*}},
// REPORT: "verified": true,
// ROWS: "tile_q": 128,
// ROWS: "verified": true,
// REPORT-NEXT: "max_abs_error": [

// GQA 8/2, 37 queries and keys (tails of the 16-row and 64-key tiles hidden
// by the causal mask).
// GQA: emulate: {{.*}} mma.sync
// GQA: out: f16 [2, 8, 37, 64] {{.*}} [ok
// GQA: lse: f32 [2, 8, 37] {{.*}} [ok
func.func @gqa_causal(%q: tensor<2x8x37x64xf16>, %k: tensor<2x2x37x64xf16>,
                      %v: tensor<2x2x37x64xf16>)
    -> (tensor<2x8x37x64xf16>, tensor<2x8x37xf32>) {
  %out, %lse = attn.attention q(%q : tensor<2x8x37x64xf16>)
      k(%k : tensor<2x2x37x64xf16>) v(%v : tensor<2x2x37x64xf16>)
      causal(top_left) -> tensor<2x8x37x64xf16>, tensor<2x8x37xf32>
  return %out, %lse : tensor<2x8x37x64xf16>, tensor<2x8x37xf32>
}

// WIN: out: bf16 [1, 8, 128, 32] {{.*}} [ok
func.func @window_alibi_bf16(%q: tensor<1x8x128x32xbf16>,
                             %k: tensor<1x8x128x32xbf16>,
                             %v: tensor<1x8x128x32xbf16>,
                             %slopes: tensor<8xf32>) -> tensor<1x8x128x32xbf16> {
  %out = attn.attention q(%q : tensor<1x8x128x32xbf16>)
      k(%k : tensor<1x8x128x32xbf16>) v(%v : tensor<1x8x128x32xbf16>)
      alibi(%slopes : tensor<8xf32>) causal(top_left) window_left(32)
      -> tensor<1x8x128x32xbf16>
  return %out : tensor<1x8x128x32xbf16>
}

// Decoding one token against a 256-entry cache, kv_len per sequence.
// DEC: out: f16 [2, 8, 1, 64] {{.*}} [ok
// DEC: lse: f32 [2, 8, 1] {{.*}} [ok
func.func @decode(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x256x64xf16>,
                  %v: tensor<2x2x256x64xf16>, %kv_len: tensor<2xi32>)
    -> (tensor<2x8x1x64xf16>, tensor<2x8x1xf32>) {
  %out, %lse = attn.attention q(%q : tensor<2x8x1x64xf16>)
      k(%k : tensor<2x2x256x64xf16>) v(%v : tensor<2x2x256x64xf16>)
      kv_len(%kv_len : tensor<2xi32>) causal(bottom_right)
      -> tensor<2x8x1x64xf16>, tensor<2x8x1xf32>
  return %out, %lse : tensor<2x8x1x64xf16>, tensor<2x8x1xf32>
}

// CAP: out: f16 [1, 4, 64, 128] {{.*}} [ok
func.func @softcap_bias(%q: tensor<1x4x64x128xf16>, %k: tensor<1x4x64x128xf16>,
                        %v: tensor<1x4x64x128xf16>,
                        %bias: tensor<1x4x64x64xf32>) -> tensor<1x4x64x128xf16> {
  %out = attn.attention q(%q : tensor<1x4x64x128xf16>)
      k(%k : tensor<1x4x64x128xf16>) v(%v : tensor<1x4x64x128xf16>)
      bias(%bias : tensor<1x4x64x64xf32>) softcap(30.0)
      -> tensor<1x4x64x128xf16>
  return %out : tensor<1x4x64x128xf16>
}
