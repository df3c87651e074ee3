//===- LoweringOps.cpp - attn ops the lowerings place ---------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// Ops users do not write: the lowerings place them for later passes
// (attn.grid_work, the work of a kernel's grid for its thread choice).
//
//===----------------------------------------------------------------------===//

#include "attn/IR/AttnOps.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::attn;

LogicalResult GridWorkOp::verify() {
  auto grid = dyn_cast<scf::ForallOp>((*this)->getParentOp());
  if (grid && grid->isAncestor(getWork().getParentRegion()->getParentOp()))
    return emitOpError("work must be defined above its scf.forall");
  return success();
}

LogicalResult GridWorkOp::canonicalize(GridWorkOp op,
                                       PatternRewriter &rewriter) {
  // Only the grid (an scf.forall) has a thread choice to make.
  if (isa<scf::ForallOp>(op->getParentOp()))
    return failure();
  rewriter.eraseOp(op);
  return success();
}
