// attn-run --device=gpu where no GPU can be used, and with bad options: a
// clear error and exit code 1, never a crash. The driver is named through
// ATTN_CUDA_DRIVER so that the tests mean the same on a machine with a GPU.
// RUN: env ATTN_CUDA_DRIVER=/nonexistent/libcuda.so.1 not attn-run %s \
// RUN:   --device=gpu 2>&1 | FileCheck %s --check-prefix=NODRIVER
// NODRIVER: attn-run: error: --device=gpu: no usable GPU: no NVIDIA driver (/nonexistent/libcuda.so.1) could be loaded: /nonexistent/libcuda.so.1: cannot open shared object file
// RUN: env ATTN_CUDA_DRIVER=%fake_cuda FAKE_CUDA_DEVICES=0 not attn-run %s \
// RUN:   --device=gpu --verify 2>&1 | FileCheck %s --check-prefix=NODEVICE
// NODEVICE: attn-run: error: --device=gpu: no usable GPU: no CUDA device

// An explicit chip is checked before anything needs a GPU.
// RUN: not attn-run %s --device=gpu --gpu-chip=sm_75 2>&1 \
// RUN:   | FileCheck %s --check-prefix=OLDCHIP
// OLDCHIP: attn-run: error: --device=gpu: chip 'sm_75' is not supported: the kernels need mma.sync m16n8k16 and cp.async (sm_80 or newer)
// RUN: not attn-run %s --device=gpu --gpu-chip=volta 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BADCHIP
// BADCHIP: attn-run: error: --device=gpu: unknown chip 'volta': expected sm_80, sm_90a, ...
// RUN: not attn-run %s --device=gpu --gpu-format=elf 2>&1 \
// RUN:   | FileCheck %s --check-prefix=FORMAT
// FORMAT: attn-run: error: unknown --gpu-format 'elf': expected isa, bin or fatbin
// RUN: not attn-run %s --device=gpu --tile-map 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TILEMAP
// TILEMAP: attn-run: error: --tile-map and --count-tiles are not available with --device=gpu

func.func @gqa_small(%q: tensor<2x4x64x64xf16>, %k: tensor<2x2x64x64xf16>,
                     %v: tensor<2x2x64x64xf16>) -> tensor<2x4x64x64xf16> {
  %out = attn.attention q(%q : tensor<2x4x64x64xf16>)
      k(%k : tensor<2x2x64x64xf16>) v(%v : tensor<2x2x64x64xf16>)
      causal(top_left) -> tensor<2x4x64x64xf16>
  return %out : tensor<2x4x64x64xf16>
}
