//===- ResultsToOutParams.cpp - static results become out-params ----------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Transforms/Destinations.h"
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

/// Drops the results of `fn` that return one of its destination arguments
/// (through casts); fails when a function with destinations returns
/// anything else.
static LogicalResult dropDestinationResults(func::FuncOp fn) {
  if (fn.isExternal() || llvm::none_of(fn.getArguments(), [&](BlockArgument a) {
        return fn.getArgAttr(a.getArgNumber(), attn::kDestinationAttr);
      }))
    return success();
  if (!fn.getBody().hasOneBlock())
    return fn.emitError("attn: a function with destinations must have one "
                        "block");
  Operation *ret = fn.getBody().front().getTerminator();
  for (Value r : ret->getOperands()) {
    Value v = r;
    while (auto cast = v.getDefiningOp<memref::CastOp>())
      v = cast.getSource();
    auto arg = dyn_cast<BlockArgument>(v);
    if (!arg || arg.getOwner() != &fn.getBody().front() ||
        !fn.getArgAttr(arg.getArgNumber(), attn::kDestinationAttr))
      return fn.emitError("attn: a function with destinations must return "
                          "them (after bufferization); result ")
             << r << " is not one";
  }
  ret->setOperands({});
  llvm::BitVector all(fn.getNumResults(), true);
  if (failed(fn.eraseResults(all)))
    return failure();
  for (BlockArgument a : fn.getArguments())
    fn.removeArgAttr(a.getArgNumber(), attn::kDestinationAttr);
  return success();
}

namespace {
struct AttnResultsToOutParamsPass
    : public attn::impl::AttnResultsToOutParamsBase<
          AttnResultsToOutParamsPass> {
  void runOnOperation() override {
    for (auto fn : getOperation().getOps<func::FuncOp>())
      if (failed(dropDestinationResults(fn)))
        return signalPassFailure();
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
