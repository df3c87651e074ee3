//===- ForallToParallelOrSequential.cpp - parallel loops with a serial twin
//===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNFORALLTOPARALLELORSEQUENTIAL
#include "attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

namespace {
constexpr llvm::StringLiteral kMaxThreads = "omp_get_max_threads";

/// Moves the body of `forall` (without results, its terminator empty) into
/// a new private function of `module` that takes the induction variables and
/// the values the body uses from above (constants are cloned into it
/// instead), and calls it from the body. Both loops then call one copy of
/// the code; LLVM's inliner copies it back only where it is small.
LogicalResult outlineBody(RewriterBase &rewriter, scf::ForallOp forall,
                          SymbolTable &symbols, StringRef baseName) {
  Block &body = forall.getRegion().front();
  if (!body.getTerminator()->getRegions().front().empty() &&
      !body.getTerminator()->getRegions().front().front().empty())
    return forall.emitOpError("with parallel inserts cannot be outlined");
  llvm::SetVector<Value> above;
  getUsedValuesDefinedAbove(forall.getRegion(), above);
  SmallVector<Value> passed;
  SmallVector<Operation *> constants;
  for (Value v : above) {
    Operation *def = v.getDefiningOp();
    if (def && def->hasTrait<OpTrait::ConstantLike>())
      constants.push_back(def);
    else
      passed.push_back(v);
  }
  SmallVector<Type> types(body.getArgumentTypes());
  for (Value v : passed)
    types.push_back(v.getType());

  OpBuilder::InsertionGuard guard(rewriter);
  auto parentFn = forall->getParentOfType<func::FuncOp>();
  rewriter.setInsertionPoint(parentFn);
  auto fn = func::FuncOp::create(rewriter, forall.getLoc(), baseName,
                                 rewriter.getFunctionType(types, {}));
  fn.setPrivate();
  symbols.insert(fn); // renamed where the name is taken
  Block *entry = fn.addEntryBlock();
  rewriter.setInsertionPointToStart(entry);
  IRMapping map;
  for (Operation *c : constants)
    rewriter.clone(*c, map);
  // The body's operations (all but the terminator) move into the function.
  entry->getOperations().splice(entry->end(), body.getOperations(),
                                body.begin(), std::prev(body.end()));
  unsigned numIvs = body.getNumArguments();
  for (auto [i, iv] : llvm::enumerate(body.getArguments()))
    iv.replaceAllUsesWith(entry->getArgument(i));
  for (auto [i, v] : llvm::enumerate(passed))
    replaceAllUsesInRegionWith(v, entry->getArgument(numIvs + i), fn.getBody());
  for (Operation *c : constants)
    replaceAllUsesInRegionWith(c->getResult(0), map.lookup(c->getResult(0)),
                               fn.getBody());
  rewriter.setInsertionPointToEnd(entry);
  func::ReturnOp::create(rewriter, forall.getLoc());
  // Nested grids run inside one iteration: loop nests (an OpenMP region
  // nested in another would be serialized anyway).
  SmallVector<scf::ForallOp> nested;
  fn->walk<WalkOrder::PostOrder>(
      [&](scf::ForallOp inner) { nested.push_back(inner); });
  for (scf::ForallOp inner : nested)
    if (failed(scf::forallToForLoop(rewriter, inner)))
      return inner.emitOpError("cannot be converted to a loop nest");

  rewriter.setInsertionPoint(body.getTerminator());
  SmallVector<Value> operands(body.getArguments());
  operands.append(passed.begin(), passed.end());
  func::CallOp::create(rewriter, forall.getLoc(), fn, operands);
  return success();
}

struct AttnForallToParallelOrSequentialPass
    : public attn::impl::AttnForallToParallelOrSequentialBase<
          AttnForallToParallelOrSequentialPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<scf::ForallOp> outer;
    module->walk<WalkOrder::PreOrder>([&](scf::ForallOp forall) {
      outer.push_back(forall);
      return WalkResult::skip(); // nested foralls go with their root
    });
    if (outer.empty())
      return;

    IRRewriter rewriter(&getContext());
    MLIRContext *ctx = &getContext();
    auto i32 = IntegerType::get(ctx, 32);
    auto declared = module.lookupSymbol<func::FuncOp>(kMaxThreads);
    if (!declared) {
      rewriter.setInsertionPointToStart(module.getBody());
      declared = func::FuncOp::create(rewriter, module.getLoc(), kMaxThreads,
                                      rewriter.getFunctionType({}, {i32}));
      declared.setPrivate();
    } else if (declared.getFunctionType() !=
               rewriter.getFunctionType({}, {i32})) {
      declared.emitOpError("is not the OpenMP runtime's `i32 ")
          << kMaxThreads << "()`";
      return signalPassFailure();
    }

    SymbolTable symbols(module);
    for (scf::ForallOp forall : outer) {
      if (forall->getNumResults() != 0) {
        forall.emitOpError("with results cannot become a parallel loop");
        return signalPassFailure();
      }
      auto parentFn = forall->getParentOfType<func::FuncOp>();
      if (!parentFn) {
        forall.emitOpError("outside a func.func cannot be outlined");
        return signalPassFailure();
      }
      if (failed(outlineBody(rewriter, forall, symbols,
                             ("__attn_grid_" + parentFn.getSymName()).str())))
        return signalPassFailure();
      Location loc = forall.getLoc();
      rewriter.setInsertionPoint(forall);
      Value threads =
          func::CallOp::create(rewriter, loc, declared, ValueRange{})
              .getResult(0);
      Value one = arith::ConstantIntOp::create(rewriter, loc, i32, 1);
      Value several = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::sgt, threads, one);
      auto branch = scf::IfOp::create(rewriter, loc, TypeRange{}, several,
                                      /*withElseRegion=*/true);
      // The parallel copy in `then`, the original (serial) in `else`.
      rewriter.setInsertionPoint(branch.thenBlock()->getTerminator());
      auto parallel = cast<scf::ForallOp>(rewriter.clone(*forall));
      rewriter.moveOpBefore(forall, branch.elseBlock()->getTerminator());
      if (failed(scf::forallToParallelLoop(rewriter, parallel)) ||
          failed(scf::forallToForLoop(rewriter, forall))) {
        parallel.emitOpError("cannot be converted to a loop");
        return signalPassFailure();
      }
    }
  }
};
} // namespace
