// REQUIRES: aarch64-registered-target
// AArch64 code from the same target description: with target-triple
// aarch64-linux-gnu the pipeline reads the named CPU's features and
// registers from LLVM's AArch64 tables (32 x 128-bit NEON registers, 4 f32
// lanes: an 8 x 8 register tile, 16 accumulators) and stamps the triple and
// CPU on the module, so opt and llc generate AArch64 code with no -mtriple
// or -mcpu. asm-loops.py prints one line per innermost loop with at least 8
// vector FMAs (fmla): the Q K^T and P V microkernel loops keep their 16
// accumulators in NEON registers, with no spill in any such loop. (The
// kernels run under qemu-aarch64 in aarch64-qemu.test.)
// RUN: attn-opt %s --attn-to-llvm-cpu="parallel=false target-triple=aarch64-linux-gnu target-cpu=neoverse-n1" \
// RUN:   | mlir-translate --mlir-to-llvmir | opt -O3 -S | llc -O3 \
// RUN:   | %python %S/Inputs/asm-loops.py --min-fma 8 \
// RUN:   | FileCheck %s --check-prefix=NEON
// RUN: attn-opt %s --attn-to-llvm-cpu="parallel=false target-triple=aarch64-linux-gnu target-cpu=neoverse-v2" \
// RUN:   | mlir-translate --mlir-to-llvmir | opt -O3 -S | llc -O3 \
// RUN:   | %python %S/Inputs/asm-loops.py --min-fma 8 \
// RUN:   | FileCheck %s --check-prefix=NEON
// NEON:     loop: fma=16 spills=0 width=q
// NEON:     loop: fma=16 spills=0 width=q
// NEON-NOT: spills={{[1-9]}}
// NEON:     zmm: no

// RUN: attn-opt %s --attn-to-llvm-cpu="parallel=false target-triple=aarch64-linux-gnu target-cpu=neoverse-v1" \
// RUN:   | FileCheck %s --check-prefix=STAMP
// STAMP: llvm.target_triple = "aarch64-unknown-linux-gnu"
// STAMP: llvm.func @f({{.*}}target_cpu = "neoverse-v1"

// An empty CPU for another architecture is that architecture's generic CPU.
// RUN: attn-opt %s --attn-to-llvm-cpu="parallel=false target-triple=aarch64-linux-gnu" \
// RUN:   | FileCheck %s --check-prefix=GENERIC
// GENERIC: llvm.target_triple = "aarch64-unknown-linux-gnu"
// GENERIC: llvm.func @f({{.*}}target_cpu = "generic"

func.func @f(%q: tensor<1x4x256x64xf32>, %k: tensor<1x4x256x64xf32>,
             %v: tensor<1x4x256x64xf32>) -> tensor<1x4x256x64xf32> {
  %o = attn.attention q(%q : tensor<1x4x256x64xf32>)
      k(%k : tensor<1x4x256x64xf32>) v(%v : tensor<1x4x256x64xf32>)
      causal(top_left) -> tensor<1x4x256x64xf32>
  return %o : tensor<1x4x256x64xf32>
}
