//===- HoistLoopBuffers.cpp - scratch buffers out of sequential loops -----===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/BufferViewFlowAnalysis.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNHOISTLOOPBUFFERS
#include "attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

namespace {

/// True when an alias of the buffer flows from one iteration of `loop` to
/// the next or out of it: an iter_arg, a result, or an operand of the body's
/// terminator.
bool carriedByLoop(scf::ForOp loop,
                   const BufferViewFlowAnalysis::ValueSetT &aliases) {
  Operation *yield = loop.getBody()->getTerminator();
  for (Value alias : aliases) {
    if (alias.getDefiningOp() == loop.getOperation())
      return true;
    if (auto arg = dyn_cast<BlockArgument>(alias);
        arg && arg.getOwner() == loop.getBody())
      return true;
    if (llvm::is_contained(yield->getOperands(), alias))
      return true;
  }
  return false;
}

/// The outermost `scf.for` that `alloc` can move in front of, or null:
/// walks out through `scf.for` and `scf.if` ops, stops at anything else
/// (`scf.forall`, `scf.parallel`, functions).
scf::ForOp outermostTarget(memref::AllocOp alloc,
                           const BufferViewFlowAnalysis &analysis) {
  auto aliases = analysis.resolve(alloc.getResult());
  // Freed already (the pass runs before the deallocation pipeline, but IR
  // written by hand may free its buffers): moving the allocation would free
  // it in the first iteration and use it in the next.
  for (Value alias : aliases)
    for (Operation *user : alias.getUsers())
      if (isa<memref::DeallocOp, bufferization::DeallocOp>(user))
        return {};
  scf::ForOp target;
  for (Operation *parent = alloc->getParentOp(); parent;
       parent = parent->getParentOp()) {
    if (isa<scf::IfOp>(parent))
      continue;
    auto loop = dyn_cast<scf::ForOp>(parent);
    if (!loop)
      break;
    bool invariant = llvm::all_of(alloc->getOperands(), [&](Value v) {
      return !loop->isAncestor(v.getParentBlock()->getParentOp());
    });
    if (!invariant || carriedByLoop(loop, aliases))
      break;
    target = loop;
  }
  return target;
}

struct AttnHoistLoopBuffersPass
    : public attn::impl::AttnHoistLoopBuffersBase<AttnHoistLoopBuffersPass> {
  void runOnOperation() override {
    BufferViewFlowAnalysis analysis(getOperation());
    SmallVector<std::pair<memref::AllocOp, scf::ForOp>> moves;
    getOperation()->walk([&](memref::AllocOp alloc) {
      if (scf::ForOp target = outermostTarget(alloc, analysis))
        moves.emplace_back(alloc, target);
    });
    for (auto [alloc, target] : moves)
      alloc->moveBefore(target);
  }
};

} // namespace
