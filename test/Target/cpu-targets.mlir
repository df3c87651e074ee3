// REQUIRES: x86_64-host
// The CPU code generation reads the target description: the register tile
// and vector width follow the target CPU given to the pipeline, and the
// pipeline stamps that CPU on the generated functions, so `opt` and `llc`
// (like the JIT and an ahead-of-time object) generate code for it without
// -mcpu, on whatever machine runs the test. asm-loops.py prints one line per
// innermost loop with at least 8 vector FMAs: its FMA count, the spills and
// reloads inside it, and the widest register its FMAs use.

// AVX2 (16 ymm registers): a 6 x 16 register tile, 12 accumulators, no zmm
// anywhere and no spill in the Q K^T and P V microkernel loops (llc unrolls
// the znver3 loops twice: 24 FMAs).
// RUN: attn-opt %s --attn-to-llvm-cpu="parallel=false target-cpu=haswell" \
// RUN:   | mlir-translate --mlir-to-llvmir | opt -O3 -S | llc -O3 \
// RUN:   | %python %S/Inputs/asm-loops.py --min-fma 8 \
// RUN:   | FileCheck %s --check-prefix=AVX2
// RUN: attn-opt %s --attn-to-llvm-cpu="parallel=false target-cpu=znver3" \
// RUN:   | mlir-translate --mlir-to-llvmir | opt -O3 -S | llc -O3 \
// RUN:   | %python %S/Inputs/asm-loops.py --min-fma 8 \
// RUN:   | FileCheck %s --check-prefix=AVX2
// AVX2-NOT: width=zmm
// AVX2:     loop: fma={{12|24}} spills=0 width=ymm
// AVX2-NOT: width=zmm
// AVX2:     loop: fma={{12|24}} spills=0 width=ymm
// AVX2-NOT: spills={{[1-9]}}
// AVX2:     zmm: no

// AVX-512 (32 zmm registers): an 8 x 32 register tile, 16 zmm accumulators,
// no spill in the microkernel loops.
// RUN: attn-opt %s --attn-to-llvm-cpu="parallel=false target-cpu=znver4" \
// RUN:   | mlir-translate --mlir-to-llvmir | opt -O3 -S | llc -O3 \
// RUN:   | %python %S/Inputs/asm-loops.py --min-fma 8 \
// RUN:   | FileCheck %s --check-prefix=AVX512
// RUN: attn-opt %s --attn-to-llvm-cpu="parallel=false target-cpu=sapphirerapids" \
// RUN:   | mlir-translate --mlir-to-llvmir | opt -O3 -S | llc -O3 \
// RUN:   | %python %S/Inputs/asm-loops.py --min-fma 8 \
// RUN:   | FileCheck %s --check-prefix=AVX512
// AVX512: loop: fma={{16|32}} spills=0 width=zmm
// AVX512: loop: fma={{16|32}} spills=0 width=zmm
// AVX512-NOT: spills={{[1-9]}}
// AVX512: zmm: yes

// The x86-64 baseline (SSE2, no FMA): no AVX register at all.
// RUN: attn-opt %s --attn-to-llvm-cpu="parallel=false target-cpu=x86-64" \
// RUN:   | mlir-translate --mlir-to-llvmir | opt -O3 -S | llc -O3 \
// RUN:   | FileCheck %s --check-prefix=SSE2
// SSE2-LABEL: f:
// SSE2-NOT: {{%[yz]mm}}
// SSE2: mulps
// SSE2-NOT: {{%[yz]mm}}

// The functions carry the CPU.
// RUN: attn-opt %s --attn-to-llvm-cpu="parallel=false target-cpu=znver3" \
// RUN:   | FileCheck %s --check-prefix=STAMP
// STAMP: llvm.target_triple
// STAMP: llvm.func @f({{.*}}target_cpu = "znver3"

func.func @f(%q: tensor<1x4x256x64xf32>, %k: tensor<1x4x256x64xf32>,
             %v: tensor<1x4x256x64xf32>) -> tensor<1x4x256x64xf32> {
  %o = attn.attention q(%q : tensor<1x4x256x64xf32>)
      k(%k : tensor<1x4x256x64xf32>) v(%v : tensor<1x4x256x64xf32>)
      causal(top_left) -> tensor<1x4x256x64xf32>
  return %o : tensor<1x4x256x64xf32>
}
