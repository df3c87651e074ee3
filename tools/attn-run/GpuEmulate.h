//===- GpuEmulate.h - attn-run --device=gpu-emulate -------------*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TOOLS_ATTN_RUN_GPUEMULATE_H
#define ATTN_TOOLS_ATTN_RUN_GPUEMULATE_H

#include "attn/Execution/RunReport.h"
#include "attn/Execution/SpecBinding.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/CommandLine.h"

#include <string>
#include <vector>

namespace mlir {
namespace attn {

/// The options only --device=gpu-emulate reads (warps, tile, checks).
extern llvm::cl::OptionCategory gpuEmulateCategory;
/// --gpu-warps and --gpu-tile-k: the GPU kernel's options, for both GPU
/// devices (--device=gpu-emulate and --device=gpu).
extern llvm::cl::opt<int64_t> gpuWarps;
extern llvm::cl::opt<int64_t> gpuTileK;

/// Runs the spec's GPU kernel on the warp-level emulator and compares it
/// with the f64 reference (at the tolerance of the type the GPU computes
/// in, as the GPU run); writes the JSON report to `reportFile` unless it is
/// empty; returns attn-run's exit code.
int runGpuEmulated(ModuleOp module, const SpecInfo &spec,
                   const SpecBinding &binding, const ReportOptions &report,
                   llvm::StringRef specPath, llvm::StringRef reportFile);

/// Whether `module` already holds GPU kernels (a gpu.launch): attn-run then
/// emulates its function directly instead of lowering a spec.
bool hasGpuLaunch(ModuleOp module);

/// Emulates `entry` (or the only public function with a body) of a module
/// with hand-written kernels on seeded random buffers, one per memref
/// argument (static shapes), and prints every buffer afterwards (--print:
/// all values); returns attn-run's exit code.
int runGpuKernelModule(ModuleOp module, llvm::StringRef entry, unsigned seed,
                       bool print);

} // namespace attn
} // namespace mlir

#endif // ATTN_TOOLS_ATTN_RUN_GPUEMULATE_H
