//===- GpuDevice.h - attn-run --device=gpu ----------------------*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TOOLS_ATTN_RUN_GPUDEVICE_H
#define ATTN_TOOLS_ATTN_RUN_GPUDEVICE_H

#include "attn/Execution/RunReport.h"
#include "attn/Execution/SpecBinding.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/CommandLine.h"

#include <string>
#include <vector>

namespace mlir {
namespace attn {

/// The options only --device=gpu reads (chip, binary format, splits); it
/// also reads --gpu-warps and --gpu-tile-k of --device=gpu-emulate.
extern llvm::cl::OptionCategory gpuDeviceCategory;

/// The attn-run options the GPU run honours.
struct GpuDeviceRun {
  std::string specPath;
  ReportOptions report;
  unsigned reps = 3;
  /// --report path (empty: none).
  std::string reportFile;
};

/// Lowers the spec's entry with the GPU pipeline, JITs its host code, runs it
/// on the GPU (libattn_gpu_runtime) on the binding's inputs, times it with
/// events and compares the outputs with the f64 reference; returns
/// attn-run's exit code. Without a usable GPU it says why and returns 1.
int runOnGpu(ModuleOp module, const SpecInfo &spec, const SpecBinding &binding,
             const GpuDeviceRun &run);

} // namespace attn
} // namespace mlir

#endif // ATTN_TOOLS_ATTN_RUN_GPUDEVICE_H
