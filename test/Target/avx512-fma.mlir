// RUN: attn-opt %s --attn-to-llvm-cpu="parallel=false" \
// RUN:   | mlir-translate --mlir-to-llvmir \
// RUN:   | opt -O3 -mtriple=x86_64-unknown-linux-gnu -mcpu=znver4 -S \
// RUN:   | llc -O3 -mtriple=x86_64-unknown-linux-gnu -mcpu=znver4 \
// RUN:   | FileCheck %s

// The fused form's contractions (Q K^T on the packed K tile, P V) and its
// softmax sweeps (polynomial exp) vectorize to 512-bit AVX-512 code when LLVM
// knows the target (attn-run and the C++ JIT always give it the host's; this
// machine kind is an AMD Zen 4, `znver4`, which LLVM lets use full 512-bit
// vectors).

// CHECK-LABEL: f:
// CHECK: vfmadd{{[0-9]+}}ps {{.*}}%zmm
// CHECK: vmaxps {{.*}}%zmm
func.func @f(%q: tensor<1x4x256x64xf32>, %k: tensor<1x4x256x64xf32>,
             %v: tensor<1x4x256x64xf32>) -> tensor<1x4x256x64xf32> {
  %o = attn.attention q(%q : tensor<1x4x256x64xf32>)
      k(%k : tensor<1x4x256x64xf32>) v(%v : tensor<1x4x256x64xf32>)
      causal(top_left) -> tensor<1x4x256x64xf32>
  return %o : tensor<1x4x256x64xf32>
}
