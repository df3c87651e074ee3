// Regression test of a GPU kernel bug (convert-attn-to-gpu) the emulator found
// (fixed):
// a key tile cut short by Nk is treated as full when every key it holds is
// readable, so the logits of the zero-filled keys past Nk skip the mask and
// enter the softmax with logit 0 (outputs too small, lse too large). The
// mma.sync computes all tile-k keys; the "full tile" test must look at
// [k0, k0 + tile-k), not at [k0, min(k0 + tile-k, Nk)).
// (KernelBuilder.cpp: rules.isFull(q0, qCount, k0, ks0, ...) with
// RUN: attn-run %s --device=gpu-emulate --entry=no_mask --verify | FileCheck %s
// RUN: attn-run %s --device=gpu-emulate --entry=one_key --verify | FileCheck %s
// RUN: attn-run %s --device=gpu-emulate --entry=causal_tail --verify --gpu-warps=1 --gpu-tile-k=32 | FileCheck %s
// CHECK: out: {{.*}} [ok

func.func @no_mask(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x100x64xf16>,
                   %v: tensor<1x1x100x64xf16>) -> tensor<1x1x64x64xf16> {
  %out = attn.attention q(%q : tensor<1x1x64x64xf16>)
      k(%k : tensor<1x1x100x64xf16>) v(%v : tensor<1x1x100x64xf16>)
      -> tensor<1x1x64x64xf16>
  return %out : tensor<1x1x64x64xf16>
}

func.func @one_key(%q: tensor<1x1x16x64xf16>, %k: tensor<1x1x1x64xf16>,
                   %v: tensor<1x1x1x64xf16>) -> tensor<1x1x16x64xf16> {
  %out = attn.attention q(%q : tensor<1x1x16x64xf16>)
      k(%k : tensor<1x1x1x64xf16>) v(%v : tensor<1x1x1x64xf16>)
      -> tensor<1x1x16x64xf16>
  return %out : tensor<1x1x16x64xf16>
}

func.func @causal_tail(%q: tensor<2x8x37x64xf16>, %k: tensor<2x2x37x64xf16>,
                       %v: tensor<2x2x37x64xf16>) -> tensor<2x8x37x64xf16> {
  %out = attn.attention q(%q : tensor<2x8x37x64xf16>)
      k(%k : tensor<2x2x37x64xf16>) v(%v : tensor<2x2x37x64xf16>)
      causal(top_left) -> tensor<2x8x37x64xf16>
  return %out : tensor<2x8x37x64xf16>
}
