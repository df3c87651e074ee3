// REQUIRES: aarch64-registered-target, x86_64-host
// RUN: not attn-compile %S/Inputs/small.mlir --target-triple=aarch64-linux-gnu --target-cpu=haswell -o %t.o 2>&1 | FileCheck %s --check-prefix=A64CPU
// RUN: not attn-compile %S/Inputs/small.mlir --target-triple=aarch64-linux-gnu --target-features=+avx2 -o %t.o 2>&1 | FileCheck %s --check-prefix=A64FEAT
// RUN: not attn-compile %S/Inputs/small.mlir --target-triple=aarch64-linux-gnu --emit=shared -o %t.so 2>&1 | FileCheck %s --check-prefix=A64SHARED
// RUN: not attn-compile %S/Inputs/small.mlir --target-triple=aarch64-linux-gnu --target-cpu=host -o %t.o 2>&1 | FileCheck %s --check-prefix=A64HOST
// RUN: not attn-run %S/Inputs/small.mlir --target-triple=aarch64-linux-gnu --target-cpu=neoverse-v1 2>&1 | FileCheck %s --check-prefix=A64JIT
//
// Code for another architecture (docs/Targets.md, "AArch64"): CPU names,
// features and linking are that architecture's; the JIT runs none of it.

// A64CPU: attn-compile: error: unknown target CPU 'haswell' for aarch64-unknown-linux-gnu (LLVM names such as neoverse-n1,

// A64FEAT: attn-compile: error: unknown target feature '+avx2' for aarch64-unknown-linux-gnu

// A64SHARED: attn-compile: error: --emit=shared for aarch64-linux-gnu links with that architecture's C compiler and libattn_runtime: give --cc (e.g. aarch64-linux-gnu-gcc) and --runtime-dir

// A64HOST: attn-compile: error: target CPU 'host' is this machine's CPU, not one for aarch64-unknown-linux-gnu: name a CPU of that architecture, or leave the CPU out for its generic CPU

// A64JIT: attn-run: error: compilation failed: cannot run code for target CPU 'neoverse-v1' of aarch64-unknown-linux-gnu on this host ({{.*}}), which lacks: architecture aarch64
