//===- SpecEmulation.h - run an attn spec's GPU kernel on the emulator -*- C++
//-*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// Lowers a spec with `--convert-attn-to-gpu` and runs the emitted host
// function and its kernels on the warp-level emulator (Emulator.h), on the
// same host tensors the CPU path takes. attn-run --device=gpu-emulate and
// the GPU emulation sweep use it.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_GPUEMULATOR_SPECEMULATION_H
#define ATTN_GPUEMULATOR_SPECEMULATION_H

#include "attn/Execution/HostTensor.h"
#include "attn/GPUEmulator/Emulator.h"
#include "attn/Pipelines/GpuPipeline.h"
#include "attn/Schedule/LoweringChoice.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mlir {
namespace attn {

struct GpuEmulationOptions {
  /// The GPU kernel's options (warps, tile-k, splits; the emulator runs the
  /// gpu.launch form, so chip and format do not matter).
  GpuCodegenOptions gpu;
  /// Emulator options (checks, block subset, statistics).
  EmulatorOptions emulator;
  /// When non-null, receives the lowered module as text.
  std::string *loweredIR = nullptr;
  /// When non-null, receives what the lowering chose (attn.lowering: the
  /// warps, tiles and splits).
  llvm::SmallVector<LoweringChoice> *choices = nullptr;
};

/// A spec's entry lowered once to the GPU form (gpu.launch), emulated per
/// call.
class EmulatedSpec {
public:
  /// Lowers a clone of `spec`'s function `entry` (which returns the results
  /// of one attn.attention) with `options.gpu`; the lowering's diagnostics
  /// become the error.
  static llvm::Expected<std::unique_ptr<EmulatedSpec>>
  lower(ModuleOp spec, llvm::StringRef entry,
        const GpuEmulationOptions &options = {});

  /// Emulates the GPU form on `args` (one per argument of the entry);
  /// `results` receives the out-parameters (out, then lse when the function
  /// returns it), shaped `resultShapes` and filled with NaN bit patterns
  /// before the call, so that elements the kernel never writes show.
  llvm::Error run(llvm::ArrayRef<const HostTensor *> args,
                  const std::vector<std::vector<int64_t>> &resultShapes,
                  std::vector<HostTensor> &results,
                  const EmulatorOptions &emulator) const;

  /// What the lowering chose (attn.lowering).
  llvm::ArrayRef<LoweringChoice> choices() const { return loweringChoices; }
  /// The GPU form.
  ModuleOp module() const { return *lowered; }

private:
  OwningOpRef<ModuleOp> lowered;
  std::string entry;
  llvm::SmallVector<LoweringChoice> loweringChoices;
};

/// Lowers a clone of `spec` (the function `entry` with one attn.attention)
/// to the GPU form and emulates it on `args` (one per argument of `entry`).
/// `results` receives the out-parameters (out, then lse when the function
/// returns it), shaped `resultShapes`.
llvm::Error emulateSpecOnGpu(
    ModuleOp spec, llvm::StringRef entry, const std::vector<HostTensor> &args,
    const std::vector<std::vector<int64_t>> &resultShapes,
    std::vector<HostTensor> &results, const GpuEmulationOptions &options = {});

} // namespace attn
} // namespace mlir

#endif // ATTN_GPUEMULATOR_SPECEMULATION_H
