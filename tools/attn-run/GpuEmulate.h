//===- GpuEmulate.h - attn-run --device=gpu-emulate on kernels --*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TOOLS_ATTN_RUN_GPUEMULATE_H
#define ATTN_TOOLS_ATTN_RUN_GPUEMULATE_H

#include "attn/GPUEmulator/Emulator.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir {
namespace attn {

/// Prints the emulator's counters and the emulation's seconds (the
/// "emulate:" line).
void printEmulatorStats(const EmulatorStats &stats, double seconds);

/// Whether `module` already holds GPU kernels (a gpu.launch): attn-run then
/// emulates its function directly instead of lowering a spec.
bool hasGpuLaunch(ModuleOp module);

/// Emulates `entry` (or the only public function with a body) of a module
/// with hand-written kernels on seeded random buffers, one per memref
/// argument (static shapes), and prints every buffer afterwards (--print:
/// all values); returns attn-run's exit code.
int runGpuKernelModule(ModuleOp module, llvm::StringRef entry, unsigned seed,
                       bool print, bool detectRaces);

} // namespace attn
} // namespace mlir

#endif // ATTN_TOOLS_ATTN_RUN_GPUEMULATE_H
