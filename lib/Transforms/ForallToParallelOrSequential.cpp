//===- ForallToParallelOrSequential.cpp - Parallel loops, serial twins ---===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Transforms/Passes.h"

#include "attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
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
constexpr llvm::StringLiteral kActiveLevel = "omp_get_active_level";
constexpr llvm::StringLiteral kMaxActiveLevels = "omp_get_max_active_levels";

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
  // Internal in LLVM IR too (a private func.func is lowered to an external
  // llvm.func): LLVM may then drop unused arguments and propagate the ones
  // both calls pass alike.
  fn->setAttr("llvm.linkage", LLVM::LinkageAttr::get(rewriter.getContext(),
                                                     LLVM::Linkage::Internal));
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
  using Base::Base;

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SymbolTableCollection tables;
    if (failed(lowerGridThreads(rewriter, tables)))
      return signalPassFailure();
    SmallVector<scf::ForallOp> outer;
    getOperation()->walk<WalkOrder::PreOrder>([&](scf::ForallOp forall) {
      outer.push_back(forall);
      return WalkResult::skip(); // nested foralls go with their root
    });
    if (!parallel) {
      // A serial build: loop nests only, nested grids first (the markers go
      // with canonicalization).
      SmallVector<scf::ForallOp> all;
      getOperation()->walk(
          [&](scf::ForallOp forall) { all.push_back(forall); });
      for (scf::ForallOp forall : all)
        if (forall->getNumResults() != 0) {
          forall.emitOpError("with results cannot become a loop nest");
          return signalPassFailure();
        }
      for (scf::ForallOp forall : all)
        if (failed(scf::forallToForLoop(rewriter, forall))) {
          forall.emitOpError("cannot be converted to a loop nest");
          return signalPassFailure();
        }
      return;
    }
    for (scf::ForallOp forall : outer)
      if (forall->getNumResults() != 0) {
        forall.emitOpError("with results cannot become a parallel loop");
        return signalPassFailure();
      }
    for (scf::ForallOp forall : outer) {
      SymbolTable *symbols = symbolsFor(forall, tables);
      if (!symbols)
        return signalPassFailure();
      auto parentFn = forall->getParentOfType<func::FuncOp>();
      // The grid's work (its own attn.grid_work; those of nested grids mean
      // nothing once they are loop nests).
      Value work;
      SmallVector<attn::GridWorkOp> marks;
      forall->walk([&](attn::GridWorkOp w) { marks.push_back(w); });
      for (attn::GridWorkOp w : marks) {
        if (w->getParentOp() == forall.getOperation())
          work = w.getWork();
        rewriter.eraseOp(w);
      }
      if (failed(outlineBody(rewriter, forall, *symbols,
                             ("__attn_grid_" + parentFn.getSymName()).str())))
        return signalPassFailure();
      rewriter.setInsertionPoint(forall);
      Value several;
      if (failed(buildParallelChoice(rewriter, forall.getLoc(), *symbols, work,
                                     several)))
        return signalPassFailure();
      auto branch = scf::IfOp::create(rewriter, forall.getLoc(), TypeRange{},
                                      several, /*withElseRegion=*/true);
      // The parallel copy in `then`, the original (serial) in `else`.
      rewriter.setInsertionPoint(branch.thenBlock()->getTerminator());
      auto parallelLoop = cast<scf::ForallOp>(rewriter.clone(*forall));
      rewriter.moveOpBefore(forall, branch.elseBlock()->getTerminator());
      if (failed(scf::forallToParallelLoop(rewriter, parallelLoop))) {
        parallelLoop.emitOpError("cannot be converted to a parallel loop");
        return signalPassFailure();
      }
      if (failed(scf::forallToForLoop(rewriter, forall))) {
        forall.emitOpError("cannot be converted to a loop nest");
        return signalPassFailure();
      }
    }
  }

  /// The symbol table the grid `op` (or an op before one) is outlined into
  /// and whose OpenMP declarations it calls; null after an error.
  static SymbolTable *symbolsFor(Operation *op, SymbolTableCollection &tables) {
    auto parentFn = op->getParentOfType<func::FuncOp>();
    Operation *tableOp =
        parentFn ? SymbolTable::getNearestSymbolTable(parentFn) : nullptr;
    if (!tableOp) {
      op->emitOpError("outside a func.func in a symbol table cannot be "
                      "outlined");
      return nullptr;
    }
    return &tables.getSymbolTable(tableOp);
  }

  /// At the rewriter's insertion point: `several` (i1), whether a grid of
  /// `work` multiply-adds (null: unknown) runs on several threads here, and
  /// `threads` (i32), omp_get_max_threads().
  LogicalResult buildParallelChoice(RewriterBase &rewriter, Location loc,
                                    SymbolTable &symbols, Value work,
                                    Value &several, Value *threads = nullptr) {
    func::FuncOp maxThreads = declareOmpQuery(rewriter, symbols, kMaxThreads);
    func::FuncOp activeLevel = declareOmpQuery(rewriter, symbols, kActiveLevel);
    func::FuncOp maxActiveLevels =
        declareOmpQuery(rewriter, symbols, kMaxActiveLevels);
    if (!maxThreads || !activeLevel || !maxActiveLevels)
      return failure();
    auto query = [&](func::FuncOp fn) {
      return func::CallOp::create(rewriter, loc, fn, ValueRange{}).getResult(0);
    };
    Value count = query(maxThreads);
    if (threads)
      *threads = count;
    Value one =
        arith::ConstantIntOp::create(rewriter, loc, rewriter.getI32Type(), 1);
    several = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::sgt,
                                    count, one);
    // Inside an OpenMP region that may not nest another active one (the
    // caller's own parallel loop, at OpenMP's default of one active
    // level), a parallel region would run serialized on this thread: the
    // loop nest does the same without entering the runtime.
    // (Two statements: the calls' order in the IR is fixed.)
    Value level = query(activeLevel);
    Value maxLevels = query(maxActiveLevels);
    Value nestable = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::slt, level, maxLevels);
    several = arith::AndIOp::create(rewriter, loc, several, nestable);
    // (A threshold of 0 or less lets every call with threads through.)
    if (work && minParallelWork > 0) {
      Value least =
          arith::ConstantIndexOp::create(rewriter, loc, minParallelWork);
      Value enough = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::sge, work, least);
      several = arith::AndIOp::create(rewriter, loc, several, enough);
    }
    return success();
  }

  /// Replaces each attn.grid_threads by the threads its grid will get: 1 in
  /// a serial build or inside another grid (nested grids become loop
  /// nests), else omp_get_max_threads() where the grid's choice (the same
  /// as buildParallelChoice makes for the grid) is parallel, 1 where not.
  LogicalResult lowerGridThreads(IRRewriter &rewriter,
                                 SymbolTableCollection &tables) {
    SmallVector<attn::GridThreadsOp> ops;
    getOperation()->walk([&](attn::GridThreadsOp op) { ops.push_back(op); });
    for (attn::GridThreadsOp op : ops) {
      Location loc = op.getLoc();
      rewriter.setInsertionPoint(op);
      if (!parallel || op->getParentOfType<scf::ForallOp>()) {
        rewriter.replaceOpWithNewOp<arith::ConstantIndexOp>(op, 1);
        continue;
      }
      SymbolTable *symbols = symbolsFor(op, tables);
      Value several, threads;
      if (!symbols ||
          failed(buildParallelChoice(rewriter, loc, *symbols, op.getWork(),
                                     several, &threads)))
        return failure();
      Value count = arith::IndexCastOp::create(
          rewriter, loc, rewriter.getIndexType(), threads);
      Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
      rewriter.replaceOpWithNewOp<arith::SelectOp>(op, several, count, one);
    }
    return success();
  }

  /// The OpenMP runtime's `i32 name()` (omp_get_max_threads and kin) in
  /// `symbols`: the declaration found there, or a new one; null (after an
  /// error) where the name has another type.
  static func::FuncOp declareOmpQuery(RewriterBase &rewriter,
                                      SymbolTable &symbols, StringRef name) {
    FunctionType type = rewriter.getFunctionType({}, {rewriter.getI32Type()});
    if (auto found = symbols.lookup<func::FuncOp>(name)) {
      if (found.getFunctionType() == type)
        return found;
      found.emitOpError("is not the OpenMP runtime's `i32 ") << name << "()`";
      return nullptr;
    }
    if (Operation *other = symbols.lookup(name)) {
      other->emitOpError("takes the name of the OpenMP runtime's `")
          << name << "`";
      return nullptr;
    }
    OpBuilder::InsertionGuard guard(rewriter);
    Region &body = symbols.getOp()->getRegion(0);
    rewriter.setInsertionPointToStart(&body.front());
    auto fn =
        func::FuncOp::create(rewriter, symbols.getOp()->getLoc(), name, type);
    fn.setPrivate();
    symbols.insert(fn);
    return fn;
  }
};
} // namespace
