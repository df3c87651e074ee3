//===- ResultsToDestinations.cpp - dynamic results the caller passes ------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// An entry function whose attention (or combine) results are dynamically
// shaped takes them as trailing tensor arguments the caller allocates
// (destination-passing style): the returned values are materialized in those
// tensors, and empty tensor elimination lets the lowering write straight into
// them, so neither an allocation nor a copy of the results remains. The
// caller's sizes are checked against the ones the inputs give before the
// attention op, whose lowering skips the work when a check failed (a failed
// check fills the destinations with zeros, as every failed attention op does).
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/RuntimeChecks.h"
#include "attn/IR/AttnOps.h"
#include "attn/Transforms/Destinations.h"
#include "attn/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotModuleBufferize.h"
#include "mlir/Dialect/Bufferization/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNRESULTSTODESTINATIONS
#define GEN_PASS_DEF_ATTNWRITEDESTINATIONS
#include "attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

/// The argument number of `v` in `fn`, if it is one of its arguments.
static std::optional<int64_t> argumentOf(func::FuncOp fn, Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg || arg.getOwner() != &fn.getBody().front())
    return std::nullopt;
  return arg.getArgNumber();
}

std::optional<SmallVector<DestinationShape>>
mlir::attn::destinationShapes(func::FuncOp fn) {
  if (fn.isExternal() || !fn.isPublic() || fn.getNumResults() == 0 ||
      !fn.getBody().hasOneBlock())
    return std::nullopt;
  // A function its module calls keeps its signature.
  if (Operation *table = SymbolTable::getNearestSymbolTable(fn->getParentOp()))
    if (!SymbolTable::symbolKnownUseEmpty(fn, table))
      return std::nullopt;
  bool anyDynamic = false;
  SmallVector<DestinationShape> shapes;
  Operation *ret = fn.getBody().front().getTerminator();
  for (Value r : ret->getOperands()) {
    auto type = dyn_cast<RankedTensorType>(r.getType());
    // attn.combine: out has out_a's sizes, lse lse_a's.
    if (auto combine = r.getDefiningOp<CombineOp>()) {
      if (!type)
        return std::nullopt;
      anyDynamic |= !type.hasStaticShape();
      unsigned which = cast<OpResult>(r).getResultNumber();
      std::optional<int64_t> from =
          argumentOf(fn, which == 0 ? combine.getOutA() : combine.getLseA());
      DestinationShape shape(type.getRank());
      for (int64_t p = 0; p < type.getRank(); ++p) {
        if (!type.isDynamicDim(p)) {
          shape[p].size = type.getDimSize(p);
          continue;
        }
        if (!from)
          return std::nullopt;
        shape[p].arg = *from;
        shape[p].dim = p;
      }
      shapes.push_back(std::move(shape));
      continue;
    }
    auto op = r.getDefiningOp<AttentionOp>();
    // (Sinks: ExpandSinks' merge rescales out in place and writes lse'
    // into a new tensor, both guarded like the op.)
    if (!type || !op)
      return std::nullopt;
    anyDynamic |= !type.hasStaticShape();
    unsigned which = cast<OpResult>(r).getResultNumber();
    std::optional<int64_t> q = argumentOf(fn, op.getQuery());
    std::optional<int64_t> v = argumentOf(fn, op.getValue());
    DestinationShape shape(type.getRank());
    for (int64_t p = 0; p < type.getRank(); ++p) {
      DestinationDim &d = shape[p];
      if (!type.isDynamicDim(p)) {
        d.size = type.getDimSize(p);
        continue;
      }
      // out: q's sizes but Dv (v's last dimension); lse: [B, Hq, Nq], read
      // from q in its layout.
      bool headDim = which == 0 && op.getPhysicalDim(3) == p;
      if (headDim && op.getVFromK()) {
        d.size = *op.getVFromK();
        continue;
      }
      if (headDim) {
        if (!v)
          return std::nullopt;
        d.arg = *v;
        d.dim = 3;
        continue;
      }
      if (!q)
        return std::nullopt;
      d.arg = *q;
      d.dim = which == 0 ? p : op.getPhysicalDim(p);
    }
    shapes.push_back(std::move(shape));
  }
  if (!anyDynamic)
    return std::nullopt;
  return shapes;
}

namespace {
struct AttnResultsToDestinationsPass
    : public attn::impl::AttnResultsToDestinationsBase<
          AttnResultsToDestinationsPass> {
  void runOnOperation() override {
    for (auto fn : getOperation().getOps<func::FuncOp>())
      if (std::optional<SmallVector<DestinationShape>> shapes =
              destinationShapes(fn))
        rewrite(fn, *shapes);
  }

  static void rewrite(func::FuncOp fn, ArrayRef<DestinationShape> shapes) {
    Block &entry = fn.getBody().front();
    Operation *ret = entry.getTerminator();
    MLIRContext *ctx = fn.getContext();
    unsigned first = fn.getNumArguments();
    auto marked = DictionaryAttr::get(
        ctx, {NamedAttribute(kDestinationAttr, UnitAttr::get(ctx))});
    for (Type t : SmallVector<Type>(fn.getResultTypes()))
      if (failed(
              fn.insertArgument(fn.getNumArguments(), t, marked, fn.getLoc())))
        return;

    OpBuilder b(ctx);
    for (auto [i, value] : llvm::enumerate(ret->getOperands())) {
      // An attn.attention or attn.combine (destinationShapes).
      Operation *op = value.getDefiningOp();
      Value dest = entry.getArgument(first + i);
      Location loc = op->getLoc();
      // The caller's sizes, checked before the op (its lowering guards the
      // work on every check of the block).
      b.setInsertionPoint(op);
      auto type = cast<RankedTensorType>(dest.getType());
      for (auto [d, dim] : llvm::enumerate(shapes[i])) {
        if (!type.isDynamicDim(d))
          continue;
        Value got = tensor::DimOp::create(b, loc, dest, d);
        Value want =
            dim.arg < 0
                ? Value(arith::ConstantIndexOp::create(b, loc, dim.size))
                : Value(tensor::DimOp::create(
                      b, loc, entry.getArgument(dim.arg), dim.dim));
        Value ok =
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, got, want);
        Value which = arith::ConstantIndexOp::create(b, loc, i);
        Value dIdx = arith::ConstantIndexOp::create(b, loc, d);
        emitRuntimeCheck(b, loc, op, ok, RuntimeCheck::OutputBufferDim,
                         {which, got, dIdx, want});
      }
    }
    b.setInsertionPoint(ret);
    for (OpOperand &operand : ret->getOpOperands()) {
      Value dest = entry.getArgument(first + operand.getOperandNumber());
      auto m = bufferization::MaterializeInDestinationOp::create(
          b, ret->getLoc(), operand.get(), dest);
      operand.set(m.getResult());
    }
  }
};
} // namespace

namespace {
/// Upstream's empty tensor elimination, analysed as the pipeline bufferizes:
/// across function boundaries, where arguments are writable (upstream's pass
/// analyses each function alone, with read-only arguments, and so never
/// writes into a destination argument).
struct AttnWriteDestinationsPass
    : public attn::impl::AttnWriteDestinationsBase<AttnWriteDestinationsPass> {
  /// A failed attention op yields zeros of size 0 (buildZeroResults); when
  /// its result is materialized in a destination, the zeros fill the
  /// destination instead, so that both branches of the guard yield it.
  static void fillDestinationsAfterFailure(ModuleOp module) {
    module.walk([](bufferization::MaterializeInDestinationOp m) {
      auto dest = dyn_cast<BlockArgument>(m.getDest());
      auto result = dyn_cast<OpResult>(m.getSource());
      auto ifOp = result ? dyn_cast<scf::IfOp>(result.getOwner()) : nullptr;
      if (!dest || !ifOp)
        return;
      unsigned i = result.getResultNumber();
      for (Region *region : {&ifOp.getThenRegion(), &ifOp.getElseRegion()}) {
        if (region->empty())
          continue;
        auto yield = cast<scf::YieldOp>(region->front().getTerminator());
        Value v = yield.getOperand(i);
        while (auto c = v.getDefiningOp<tensor::CastOp>())
          v = c.getSource();
        auto fill = v.getDefiningOp<linalg::FillOp>();
        if (!fill || !fill->hasAttr(kZerosAfterFailureAttr))
          continue;
        OpBuilder b(yield);
        Value filled = linalg::FillOp::create(
                           b, fill.getLoc(), fill.getInputs(), ValueRange{dest})
                           .getResult(0);
        if (filled.getType() != result.getType())
          filled = tensor::CastOp::create(b, fill.getLoc(), result.getType(),
                                          filled);
        Value old = yield.getOperand(i);
        yield.setOperand(i, filled);
        // The zeros of size 0, now unused.
        while (Operation *def = old.getDefiningOp()) {
          if (!def->use_empty() || def->getNumOperands() == 0 ||
              !isa<tensor::CastOp, linalg::FillOp>(def))
            break;
          old = isa<linalg::FillOp>(def)
                    ? cast<linalg::FillOp>(def).getOutputs()[0]
                    : def->getOperand(0);
          def->erase();
        }
        if (Operation *def = old.getDefiningOp<tensor::EmptyOp>())
          if (def->use_empty())
            def->erase();
      }
    });
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    fillDestinationsAfterFailure(module);
    bufferization::OneShotBufferizationOptions options;
    options.bufferizeFunctionBoundaries = true;
    options.allowReturnAllocsFromLoops = true;
    options.setFunctionBoundaryTypeConversion(
        bufferization::LayoutMapOption::IdentityLayoutMap);
    bufferization::OneShotAnalysisState state(module, options);
    if (failed(bufferization::analyzeModuleOp(module, state)))
      return signalPassFailure();
    IRRewriter rewriter(module.getContext());
    if (failed(bufferization::eliminateEmptyTensors(rewriter, module, state)))
      signalPassFailure();
  }
};
} // namespace
