//===- ResultsToOutParams.cpp - static results become out-params ----------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNRESULTSTOOUTPARAMS
#include "attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

namespace {
struct AttnResultsToOutParamsPass
    : public attn::impl::AttnResultsToOutParamsBase<
          AttnResultsToOutParamsPass> {
  void runOnOperation() override {
    bufferization::BufferResultsToOutParamsOpts opts;
    opts.hoistStaticAllocs = true;
    opts.modifyPublicFunctions = true;
    opts.filterFn = [](func::FuncOp *func) {
      return llvm::all_of(func->getResultTypes(), [](Type t) {
        auto memref = dyn_cast<MemRefType>(t);
        return !memref || memref.hasStaticShape();
      });
    };
    if (failed(bufferization::promoteBufferResultsToOutParams(getOperation(),
                                                              opts)))
      signalPassFailure();
  }
};
} // namespace
