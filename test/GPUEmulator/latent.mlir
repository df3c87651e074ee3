// Latent attention in the GPU kernel (V read from K's buffer, its first Dv
// columns; one cache, no copy), on the warp-level emulator against the f64
// reference: a latent decode with the largest head dimensions the kernel
// takes (Dqk 256, Dv 192: DeepSeek's 576 / 512 is refused with the head
// dimension message), prefill with kv_len, paged decode.
//
// RUN: attn-run %s --device=gpu-emulate --entry=latent_decode --verify | FileCheck %s
// RUN: attn-run %s --device=gpu-emulate --entry=prefill --verify --seed=4 | FileCheck %s
// RUN: attn-run %s --device=gpu-emulate --entry=paged_decode --verify --seed=6 | FileCheck %s
// CHECK: out: {{.*}} vs reference: {{.*}} [ok
//
// The host function takes the one cache (no V argument, no copy): the
// kernel's V copies read the first 192 of its 256 columns.
// RUN: attn-opt %s --convert-attn-to-gpu | FileCheck %s --check-prefix=IR
// IR: func.func @latent_decode(%arg0: memref<2x16x1x256xbf16>, %arg1: memref<2x1x300x256xbf16>, %arg2: memref<2xi32>, %arg3: memref<2x16x1x192xbf16>, %arg4: memref<2x16x1xf32>)
// IR-NOT: memref.copy
// IR: func.func @prefill

func.func @latent_decode(%q: tensor<2x16x1x256xbf16>, %c: tensor<2x1x300x256xbf16>,
                         %len: tensor<2xi32>)
    -> (tensor<2x16x1x192xbf16>, tensor<2x16x1xf32>) {
  %o, %l = attn.attention q(%q : tensor<2x16x1x256xbf16>)
      k(%c : tensor<2x1x300x256xbf16>) v(%c : tensor<2x1x300x256xbf16>)
      v_from_k(192) kv_len(%len : tensor<2xi32>) causal(bottom_right)
      -> tensor<2x16x1x192xbf16>, tensor<2x16x1xf32>
  return %o, %l : tensor<2x16x1x192xbf16>, tensor<2x16x1xf32>
}

// Prefill of 40 tokens over 64 cached, bnhd, f16.
func.func @prefill(%q: tensor<1x40x8x64xf16>, %c: tensor<1x64x1x64xf16>,
                   %len: tensor<1xi32>) -> tensor<1x40x8x48xf16> {
  %o = attn.attention q(%q : tensor<1x40x8x64xf16>)
      k(%c : tensor<1x64x1x64xf16>) v(%c : tensor<1x64x1x64xf16>)
      layout(bnhd) v_from_k(48) kv_len(%len : tensor<1xi32>)
      causal(bottom_right) -> tensor<1x40x8x48xf16>
  return %o : tensor<1x40x8x48xf16>
}

// Decode over a paged latent cache (pages of 16 tokens), bf16.
func.func @paged_decode(%q: tensor<4x16x1x128xbf16>,
                        %c: tensor<32x1x16x128xbf16>, %pt: tensor<4x8xi32>,
                        %len: tensor<4xi32>) -> tensor<4x16x1x96xbf16> {
  %o = attn.attention q(%q : tensor<4x16x1x128xbf16>)
      k(%c : tensor<32x1x16x128xbf16>) v(%c : tensor<32x1x16x128xbf16>)
      v_from_k(96) page_table(%pt : tensor<4x8xi32>)
      kv_len(%len : tensor<4xi32>) causal(bottom_right)
      -> tensor<4x16x1x96xbf16>
  return %o : tensor<4x16x1x96xbf16>
}
