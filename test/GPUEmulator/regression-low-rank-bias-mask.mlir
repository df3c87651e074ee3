// Regression test of a GPU kernel bug (convert-attn-to-gpu) the emulator
// sweep found (fixed): a bias or mask of rank below 4 (broadcast [Hq, Nq, Nk] or
// [Nq, Nk], which the dialect allows) is indexed with four indices; the
// lowering produces invalid IR ("'memref.load' op incorrect number of
// RUN: attn-run %s --device=gpu-emulate --entry=bias3 --verify | FileCheck %s
// RUN: attn-run %s --device=gpu-emulate --entry=mask2 --verify | FileCheck %s
// CHECK: out: {{.*}} [ok

func.func @bias3(%q: tensor<1x4x64x64xf16>, %k: tensor<1x4x64x64xf16>,
                 %v: tensor<1x4x64x64xf16>, %b: tensor<4x64x64xf32>)
    -> tensor<1x4x64x64xf16> {
  %out = attn.attention q(%q : tensor<1x4x64x64xf16>)
      k(%k : tensor<1x4x64x64xf16>) v(%v : tensor<1x4x64x64xf16>)
      bias(%b : tensor<4x64x64xf32>) -> tensor<1x4x64x64xf16>
  return %out : tensor<1x4x64x64xf16>
}

func.func @mask2(%q: tensor<1x4x64x64xf16>, %k: tensor<1x4x64x64xf16>,
                 %v: tensor<1x4x64x64xf16>, %m: tensor<64x64xi1>)
    -> tensor<1x4x64x64xf16> {
  %out = attn.attention q(%q : tensor<1x4x64x64xf16>)
      k(%k : tensor<1x4x64x64xf16>) v(%v : tensor<1x4x64x64xf16>)
      mask(%m : tensor<64x64xi1>) -> tensor<1x4x64x64xf16>
  return %out : tensor<1x4x64x64xf16>
}
