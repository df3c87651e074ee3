//===- SetCpuTarget.cpp - stamp the target CPU on generated functions -----===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Target/CpuTarget.h"
#include "attn/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNSETCPUTARGET
#include "attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

namespace {
struct AttnSetCpuTargetPass
    : public attn::impl::AttnSetCpuTargetBase<AttnSetCpuTargetPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto target =
        attn::resolveCpuTarget(targetCpu, targetFeatures, targetTriple);
    if (!target) {
      module.emitError("attn: ") << llvm::toString(target.takeError());
      return signalPassFailure();
    }
    MLIRContext *ctx = module.getContext();
    module->setAttr(LLVM::LLVMDialect::getTargetTripleAttrName(),
                    StringAttr::get(ctx, target->triple));
    auto cpu = StringAttr::get(ctx, target->cpu);
    auto features = LLVM::TargetFeaturesAttr::get(ctx, target->features);
    module.walk([&](LLVM::LLVMFuncOp fn) {
      if (fn.isExternal())
        return;
      fn.setTargetCpuAttr(cpu);
      fn.setTargetFeaturesAttr(features);
    });
  }
};
} // namespace
