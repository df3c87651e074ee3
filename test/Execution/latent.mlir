// Latent attention (DeepSeek's MLA, absorbed form): V is the first Dv
// columns of the one latent cache K (v_from_k), MQA over the latent head,
// in every form on random inputs against the f64 reference: decode over a
// dense cache with DeepSeek's sizes (Dqk 576, Dv 512), prefill with
// kv_len and a causal diagonal, decode over a paged latent cache (bf16).
//
// RUN: attn-run %s --entry=mla_decode --form=naive --verify --reps=1 | FileCheck %s
// RUN: attn-run %s --entry=mla_decode --form=fused --verify --reps=1 --seed=2 | FileCheck %s
// RUN: attn-run %s --entry=mla_decode --form=decode --splits=4 --verify --reps=1 --seed=3 | FileCheck %s
// RUN: attn-run %s --entry=prefill --form=naive --verify --reps=1 | FileCheck %s
// RUN: attn-run %s --entry=prefill --form=fused --verify --reps=1 --seed=4 | FileCheck %s
// RUN: attn-run %s --entry=prefill --form=decode --verify --reps=1 --seed=5 | FileCheck %s
// RUN: attn-run %s --entry=paged_decode --form=fused --verify --reps=1 | FileCheck %s
// RUN: attn-run %s --entry=paged_decode --form=decode --verify --reps=1 --seed=6 | FileCheck %s
// CHECK: out: {{.*}} vs reference: {{.*}} [ok
//
// The CPU forms read V as a slice of K (--attn-expand-latent): no copy of
// the cache in the IR.
// RUN: attn-opt %s --attn-expand-latent | FileCheck %s --check-prefix=IR
// IR-LABEL: func.func @mla_decode
// IR: %[[V:.+]] = tensor.extract_slice %arg1[0, 0, 0, 0] [2, 1, 256, 512] [1, 1, 1, 1] : tensor<2x1x256x576xf32> to tensor<2x1x256x512xf32>
// IR: attn.attention q(%arg0 : tensor<2x16x1x576xf32>) k(%arg1 : tensor<2x1x256x576xf32>) v(%[[V]] : tensor<2x1x256x512xf32>) {{.*}}scale(
// IR-NOT: v_from_k
// The lowering passes alone (without the expansion) read V as k's first
// columns too.
// RUN: attn-opt %s --convert-attn-to-linalg-naive -o /dev/null
// RUN: attn-opt %s --convert-attn-to-fused-loops -o /dev/null

// Decode: 16 query heads over the latent head, the 576-wide latent cache
// (512 of it V, 64 the rope part), a cache of 256 tokens with kv_len.
func.func @mla_decode(%q: tensor<2x16x1x576xf32>, %c: tensor<2x1x256x576xf32>,
                      %len: tensor<2xi32>)
    -> (tensor<2x16x1x512xf32>, tensor<2x16x1xf32>) {
  %o, %l = attn.attention q(%q : tensor<2x16x1x576xf32>)
      k(%c : tensor<2x1x256x576xf32>) v(%c : tensor<2x1x256x576xf32>)
      v_from_k(512) scale(0.0721) kv_len(%len : tensor<2xi32>)
      causal(bottom_right)
      -> tensor<2x16x1x512xf32>, tensor<2x16x1xf32>
  return %o, %l : tensor<2x16x1x512xf32>, tensor<2x16x1xf32>
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
