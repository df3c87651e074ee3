// norm(sigmoid) on the GPU form (fused and split-KV decode), run on the
// warp-level emulator against the f64 reference.
// RUN: attn-run %s --entry=sig --device=gpu-emulate --verify | FileCheck %s
// RUN: attn-run %s --entry=sigdec --device=gpu-emulate --verify | FileCheck %s
// CHECK: out: {{.*}} [ok

func.func @sig(%q: tensor<2x4x70x64xf16>, %k: tensor<2x2x150x64xf16>, %v: tensor<2x2x150x64xf16>, %len: tensor<2xi32>) -> tensor<2x4x70x64xf16> {
  %o = attn.attention q(%q : tensor<2x4x70x64xf16>) k(%k : tensor<2x2x150x64xf16>) v(%v : tensor<2x2x150x64xf16>) kv_len(%len : tensor<2xi32>) causal(bottom_right) norm(sigmoid) -> tensor<2x4x70x64xf16>
  return %o : tensor<2x4x70x64xf16>
}
func.func @sigdec(%q: tensor<2x4x1x64xbf16>, %k: tensor<2x2x150x64xbf16>, %v: tensor<2x2x150x64xbf16>, %len: tensor<2xi32>) -> tensor<2x4x1x64xbf16> {
  %o = attn.attention q(%q : tensor<2x4x1x64xbf16>) k(%k : tensor<2x2x150x64xbf16>) v(%v : tensor<2x2x150x64xbf16>) kv_len(%len : tensor<2xi32>) causal(bottom_right) norm(sigmoid) -> tensor<2x4x1x64xbf16>
  return %o : tensor<2x4x1x64xbf16>
}
