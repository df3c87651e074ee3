// Option and pipeline errors are diagnostics with a non-zero exit.
// RUN: not attn-opt --convert-attn-to-gpu="warps=3" %s 2>&1 | FileCheck %s --check-prefix=WARPS
// RUN: not attn-opt --convert-attn-to-gpu="tile-k=24" %s 2>&1 | FileCheck %s --check-prefix=TILEK
// RUN: not attn-opt --convert-attn-to-gpu="warp-rows=24" %s 2>&1 | FileCheck %s --check-prefix=ROWS
// RUN: not attn-run %s --device=gpu-emulate --gpu-warp-rows=64 2>&1 | FileCheck %s --check-prefix=ROWS64
// RUN: not attn-opt --attn-to-nvvm="chip=sm_75" %s 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not attn-opt --attn-to-nvvm="chip=gfx90a" %s 2>&1 | FileCheck %s --check-prefix=NOTNV
// RUN: not attn-opt --attn-to-nvvm="format=elf" %s 2>&1 | FileCheck %s --check-prefix=FORMAT
// RUN: not attn-opt --attn-to-nvvm="cuda-path=%t.missing" %s 2>&1 | FileCheck %s --check-prefix=TOOLKIT
// RUN: not attn-opt --attn-to-nvvm="chip=sm_80 wgmma=1" %s 2>&1 | FileCheck %s --check-prefix=WGMMA
// RUN: not attn-opt --attn-to-nvvm="chip=sm_100a wgmma=1" %s 2>&1 | FileCheck %s --check-prefix=WGMMA100

// WARPS: error: 'attn.attention' op cannot be lowered to the GPU: warps must be 1, 2, 4 or 8 (got 3)
// TILEK: error: 'attn.attention' op cannot be lowered to the GPU: tile-k must be a multiple of 16 in [16, 128] (got 24)
// ROWS: error: 'attn.attention' op cannot be lowered to the GPU: warp-rows must be 16 or 32 (got 24)
// ROWS64: error: 'attn.attention' op cannot be lowered to the GPU: warp-rows must be 16 or 32 (got 64)
// CHIP: error: attn-to-nvvm: chip 'sm_75' is not supported: the kernels need mma.sync m16n8k16 and cp.async (sm_80 or newer)
// NOTNV: error: attn-to-nvvm: unknown chip 'gfx90a': expected sm_80, sm_90a, ...
// FORMAT: error: attn-to-nvvm: unknown GPU binary format 'elf': expected isa, bin or fatbin
// WGMMA: error: attn-to-nvvm: wgmma needs chip sm_90a (got 'sm_80')
// WGMMA100: error: attn-to-nvvm: wgmma needs chip sm_90a (got 'sm_100a')
// TOOLKIT: error: attn-to-nvvm: no CUDA toolkit with nvvm/libdevice/libdevice.10.bc found (looked in {{.*}}.missing): pass cuda-path

func.func @f(%q: tensor<1x1x16x64xf16>, %k: tensor<1x1x16x64xf16>,
             %v: tensor<1x1x16x64xf16>) -> tensor<1x1x16x64xf16> {
  %o = attn.attention q(%q : tensor<1x1x16x64xf16>) k(%k : tensor<1x1x16x64xf16>)
      v(%v : tensor<1x1x16x64xf16>) -> tensor<1x1x16x64xf16>
  return %o : tensor<1x1x16x64xf16>
}
