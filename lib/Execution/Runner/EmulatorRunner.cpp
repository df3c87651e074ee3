//===- EmulatorRunner.cpp - run a spec's GPU kernels on the emulator ------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// The spec lowered once to the GPU form (convert-attn-to-gpu, gpu.launch),
// run per call on the warp-level emulator (lib/GPUEmulator) on the host
// tensors themselves.
//
//===----------------------------------------------------------------------===//

#include "RunnerImpl.h"

#include "attn-c/Kernel.h"
#include "attn/GPUEmulator/SpecEmulation.h"

#include "llvm/Support/JSON.h"

#include <chrono>

using namespace mlir;
using namespace mlir::attn;

namespace {
class EmulatorRunner final : public Runner {
public:
  EmulatorRunner(DenseResultRule rule, bool detectRaces)
      : Runner(RunDevice::GpuEmulator), rule(std::move(rule)),
        detectRaces(detectRaces) {}

  llvm::Error lower(ModuleOp module, llvm::StringRef entry,
                    const RunnerOptions &options) {
    auto start = std::chrono::steady_clock::now();
    GpuEmulationOptions opts;
    opts.gpu = options.gpu;
    opts.loweredIR = options.loweredIR;
    auto lowered = EmulatedSpec::lower(module, entry, opts);
    if (!lowered)
      return lowered.takeError();
    spec = std::move(*lowered);
    choices.assign(spec->choices().begin(), spec->choices().end());
    compileTime =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    return llvm::Error::success();
  }

  llvm::Error bind(llvm::ArrayRef<const HostTensor *> in) override {
    auto shapes = rule.shapes(in);
    if (!shapes)
      return shapes.takeError();
    resultShapes = std::move(*shapes);
    inputs.assign(in.begin(), in.end());
    return llvm::Error::success();
  }

  llvm::Error run() override {
    EmulatorOptions opts;
    opts.detectSharedRaces = detectRaces;
    stats = EmulatorStats();
    opts.stats = &stats;
    int checkStatus = 0;
    opts.checkStatus = &checkStatus;
    auto start = std::chrono::steady_clock::now();
    llvm::Error err = spec->run(inputs, resultShapes, results, opts);
    runTime =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    if (!err) {
      status = ATTN_STATUS_OK;
      return llvm::Error::success();
    }
    // A failed run-time check of the host code: its status and message, as
    // on the GPU. What the emulator itself finds (out-of-bounds accesses,
    // races) is what a GPU reports as a device error.
    status = checkStatus ? checkStatus : ATTN_STATUS_DEVICE_ERROR;
    if (checkStatus)
      return err;
    return runnerError("gpu emulation: " + llvm::toString(std::move(err)));
  }

  llvm::Expected<std::vector<double>> time(unsigned reps) override {
    if (reps == 0)
      return std::vector<double>{};
    return runnerError("the GPU emulator has no clock of the GPU: it "
                       "cannot time calls");
  }

  llvm::Error fetch(std::vector<HostTensor> &out) override {
    out = results;
    return llvm::Error::success();
  }

  llvm::StringRef clockName() const override { return "emulator"; }

  void writeJSON(llvm::json::OStream &j) const override {
    j.attributeObject("emulator", [&] {
      j.attribute("launches", stats.launches);
      j.attribute("blocks", stats.blocks);
      j.attribute("threads", stats.threads);
      j.attribute("mma_sync", stats.mmaSyncs);
      j.attribute("ldmatrix", stats.ldmatrices);
      j.attribute("cp_async", stats.asyncCopies);
      j.attribute("shuffles", stats.shuffles);
      j.attribute("barriers", stats.barriers);
    });
  }

  const EmulatorStats *emulatorStats() const override { return &stats; }

private:
  DenseResultRule rule;
  bool detectRaces;
  std::unique_ptr<EmulatedSpec> spec;
  std::vector<const HostTensor *> inputs;
  std::vector<std::vector<int64_t>> resultShapes;
  std::vector<HostTensor> results;
  EmulatorStats stats;
};
} // namespace

llvm::Expected<std::unique_ptr<Runner>>
mlir::attn::createEmulatorRunner(ModuleOp module, func::FuncOp fn,
                                 DenseResultRule rule,
                                 const RunnerOptions &options) {
  auto runner = std::make_unique<EmulatorRunner>(std::move(rule),
                                                 options.detectSharedRaces);
  if (llvm::Error err = runner->lower(module, fn.getSymName(), options))
    return std::move(err);
  return std::unique_ptr<Runner>(std::move(runner));
}
