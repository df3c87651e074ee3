//===- Passes.cpp - the GPU lowering pass ---------------------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "attn/Conversion/Passes.h"
#include "attn/IR/AttnBuilders.h"
#include "attn/Schedule/Schedule.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_CONVERTATTNTOGPU
#include "attn/Conversion/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

namespace {

struct ConvertAttnToGpuPass
    : public attn::impl::ConvertAttnToGpuBase<ConvertAttnToGpuPass> {
  using Base::Base;

  void runOnOperation() override {
    gpu_codegen::GpuKernelOptions opts;
    opts.warps = warps;
    opts.tileK = tileK;
    opts.warpRows = warpRows;
    opts.splits = splits;
    opts.wgmma = wgmma;
    // Key padding becomes bounds of the mask region, as in the CPU forms.
    getOperation().walk([](Operation *op) {
      if (isa<AttentionOp, ProjectedAttentionOp>(op))
        expandKeyPadding(op);
    });
    SmallVector<std::pair<func::FuncOp, AttentionOp>> work;
    bool bad = false;
    // Functions of several ops (serving steps) are built as a whole.
    SmallVector<func::FuncOp> steps;
    llvm::SmallPtrSet<Operation *, 4> stepFns;
    getOperation().walk([&](func::FuncOp fn) {
      if (!gpu_codegen::isGpuStepFunction(fn))
        return;
      if (failed(gpu_codegen::checkGpuStepSupported(fn, opts)))
        bad = true;
      steps.push_back(fn);
      stepFns.insert(fn);
    });
    getOperation().walk([&](AttentionOp op) {
      auto fn = op->getParentOfType<func::FuncOp>();
      if (fn && stepFns.contains(fn))
        return;
      if (!fn) {
        op.emitOpError("cannot be lowered to the GPU outside a func.func");
        bad = true;
        return;
      }
      if (failed(gpu_codegen::checkGpuSupported(fn, op, opts)))
        bad = true;
      else
        work.push_back({fn, op});
    });
    SmallVector<std::pair<func::FuncOp, ProjectedAttentionOp>> projected;
    getOperation().walk([&](ProjectedAttentionOp op) {
      auto fn = op->getParentOfType<func::FuncOp>();
      if (!fn) {
        op.emitOpError("cannot be lowered to the GPU outside a func.func");
        bad = true;
      } else if (failed(gpu_codegen::checkGpuProjectedSupported(fn, op, opts)))
        bad = true;
      else
        projected.push_back({fn, op});
    });
    if (bad)
      return signalPassFailure();
    for (auto [fn, op] : projected)
      if (failed(gpu_codegen::buildGpuProjectedFunction(fn, op, opts)))
        return signalPassFailure();
    for (func::FuncOp fn : steps) {
      fn.walk([](AttentionOp op) { canonicalizeModRegions(op); });
      if (failed(gpu_codegen::buildGpuStepFunction(fn, opts)))
        return signalPassFailure();
    }
    for (auto [fn, op] : work) {
      // The regions in the canonical form the tile classification reads
      // (the CPU forms classify the same form).
      canonicalizeModRegions(op);
      if (failed(gpu_codegen::buildGpuFunction(fn, op, opts)))
        return signalPassFailure();
    }
  }
};

} // namespace
