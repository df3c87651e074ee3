// REQUIRES: cuda-toolkit
// A GPU kernel that needs more dynamic shared memory per block than the chip
// allows is refused at compile time, at the spec's function, instead of
// failing at launch on the device: head dimension 256 with 128-key tiles
// takes 304128 bytes, above sm_90a's 232448 (227 KiB); with 64-key tiles it
// fits sm_90a but not sm_86's 101376 (99 KiB).
// RUN: not attn-opt %s --attn-to-nvvm="chip=sm_90a tile-k=128 format=isa" 2>&1 | FileCheck %s --check-prefix=H100
// RUN: not attn-opt %s --attn-to-nvvm="chip=sm_86 tile-k=64 format=isa" 2>&1 | FileCheck %s --check-prefix=AMPERE
// RUN: attn-opt %s --attn-to-nvvm="chip=sm_90a tile-k=64 format=isa" | FileCheck %s --check-prefix=FITS
// RUN: not attn-compile %s --gpu-chip=sm_90a --gpu-tile-k=128 --emit=obj -o %t.o 2>&1 | FileCheck %s --check-prefix=H100

// H100: shared-memory-limit.mlir:[[@LINE+3]]:1: error: attn: the GPU kernel of @d256 needs 304128 bytes of shared memory per block; sm_90a allows at most 232448: use a smaller tile of keys (--gpu-tile-k) or head dimension
// AMPERE: shared-memory-limit.mlir:[[@LINE+2]]:1: error: attn: the GPU kernel of @d256 needs {{[0-9]+}} bytes of shared memory per block; sm_86 allows at most 101376
// FITS: gpu.binary @
func.func @d256(%q: tensor<1x4x256x256xbf16>, %k: tensor<1x4x256x256xbf16>,
                %v: tensor<1x4x256x256xbf16>) -> tensor<1x4x256x256xbf16> {
  %o = attn.attention q(%q : tensor<1x4x256x256xbf16>)
      k(%k : tensor<1x4x256x256xbf16>) v(%v : tensor<1x4x256x256xbf16>)
      causal(top_left) -> tensor<1x4x256x256xbf16>
  return %o : tensor<1x4x256x256xbf16>
}
