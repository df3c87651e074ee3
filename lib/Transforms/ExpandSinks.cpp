//===- ExpandSinks.cpp - attention sinks as a log-sum-exp merge -----------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// A sink is a logit per query head with no value. The attention over the keys
// alone gives (out, lse); adding the sink to the denominator is one more
// log-sum-exp merge: lse' = log(e^lse + e^sink), out' = out * e^(lse - lse').
// The CPU forms get it here, after the op; the GPU kernels in their epilogue.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/RuntimeChecks.h"
#include "attn/IR/AttnOps.h"
#include "attn/Transforms/Passes.h"

#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <limits>

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNEXPANDSINKS
#include "attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

namespace {

/// An empty tensor shaped like `like` with element type `elt`.
static Value emptyLike(OpBuilder &b, Location loc, Value like, Type elt) {
  return tensor::EmptyOp::create(b, loc, tensor::getMixedSizes(b, loc, like),
                                 elt);
}

struct ExpandSink : public OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &b) const override {
    Value sink = op.getSink();
    if (!sink)
      return failure();
    Location loc = op.getLoc();
    Type f32 = b.getF32Type();

    // The op without its sink, with an lse result.
    Type lseType = op.getLse() ? op.getLse().getType() : Type();
    if (!lseType) {
      auto q = cast<RankedTensorType>(op.getQuery().getType());
      SmallVector<int64_t> shape(3);
      for (int64_t l = 0; l < 3; ++l)
        shape[l] = q.getDimSize(op.getPhysicalDim(l));
      lseType = RankedTensorType::get(shape, f32);
    }
    auto inner = cast<AttentionOp>(b.clone(*op));
    inner.getSinkMutable().clear();
    SmallVector<Type> types = {op.getOut().getType(), lseType};
    auto plain = AttentionOp::create(b, loc, types, inner->getOperands(),
                                     inner->getAttrs());
    for (auto [from, to] : llvm::zip(inner->getRegions(), plain->getRegions()))
      to.takeBody(from);
    b.eraseOp(inner);
    Value out = plain.getOut(), lse = plain.getLse();

    // A sink length the types leave open is checked before the attention
    // (whose work, and the merge below, are skipped after a failure).
    auto sinkType = cast<RankedTensorType>(sink.getType());
    int64_t qHeadDim = op.getPhysicalDim(1);
    auto qType = cast<RankedTensorType>(op.getQuery().getType());
    if (sinkType.isDynamicDim(0) || qType.isDynamicDim(qHeadDim)) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(plain);
      Value len = tensor::DimOp::create(b, loc, sink, 0);
      Value hq = tensor::DimOp::create(b, loc, op.getQuery(), qHeadDim);
      Value eq =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, len, hq);
      emitRuntimeCheck(b, loc, plain, eq, RuntimeCheck::SinkLength, {len, hq});
    }
    SmallVector<Value> results =
        buildGuardedOrZeros(b, loc, op, [&](OpBuilder &, Location) {
          return mergeSink(b, loc, op, out, lse, lseType);
        });
    b.replaceOp(op, results);
    return success();
  }

  /// The sink's merge: lse' and out' (and lse' only if `op` has an lse).
  SmallVector<Value> mergeSink(PatternRewriter &b, Location loc, AttentionOp op,
                               Value out, Value lse, Type lseType) const {
    MLIRContext *ctx = b.getContext();
    Type f32 = b.getF32Type();
    Value sink = op.getSink();

    // Ragged batches: rows outside every sequence ([cu_q[0], cu_q[n-1]) are
    // the sequences' rows) keep lse = -inf.
    Value rowLo, rowHi;
    if (Value cuQ = op.getCuSeqlensQ()) {
      auto at = [&](Value i) -> Value {
        Value e = tensor::ExtractOp::create(b, loc, cuQ, ValueRange{i});
        return arith::IndexCastOp::create(b, loc, b.getIndexType(), e);
      };
      Value n = tensor::DimOp::create(b, loc, cuQ, 0);
      Value one = arith::ConstantIndexOp::create(b, loc, 1);
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      Value last = arith::MaxSIOp::create(
          b, loc, arith::SubIOp::create(b, loc, n, one), zero);
      rowLo = at(zero);
      rowHi = at(last);
    }

    // lse' [B, Hq, Nq] = log(e^lse + e^sink[h]).
    auto id3 = AffineMap::getMultiDimIdentityMap(3, ctx);
    auto head = AffineMap::get(3, 0, getAffineDimExpr(1, ctx), ctx);
    SmallVector<utils::IteratorType> par3(3, utils::IteratorType::parallel);
    double inf = std::numeric_limits<double>::infinity();
    auto newLse = linalg::GenericOp::create(
        b, loc, lseType, ValueRange{lse, sink},
        ValueRange{emptyLike(b, loc, lse, f32)},
        ArrayRef<AffineMap>{id3, head, id3}, par3,
        [&](OpBuilder &nb, Location nl, ValueRange args) {
          Value l = args[0], s = args[1];
          Value hi = arith::MaximumFOp::create(nb, nl, l, s);
          Value lo = arith::MinimumFOp::create(nb, nl, l, s);
          // hi = -inf (no key and a -inf sink): lo - hi is NaN; e^-inf = 0.
          Value ninf =
              arith::ConstantOp::create(nb, nl, nb.getF32FloatAttr(-inf));
          Value hiInf = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ,
                                              hi, ninf);
          Value diff = arith::SubFOp::create(nb, nl, lo, hi);
          diff = arith::SelectOp::create(nb, nl, hiInf, ninf, diff);
          Value r = arith::AddFOp::create(
              nb, nl, hi,
              math::Log1pOp::create(nb, nl, math::ExpOp::create(nb, nl, diff)));
          if (rowLo) {
            Value row = linalg::IndexOp::create(nb, nl, 2);
            Value inRows = arith::AndIOp::create(
                nb, nl,
                arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::sle, rowLo,
                                      row),
                arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt, row,
                                      rowHi));
            r = arith::SelectOp::create(nb, nl, inRows, r, l);
          }
          linalg::YieldOp::create(nb, nl, r);
        });
    Value lse2 = newLse.getResult(0);

    // out' = out * e^(lse - lse'), 0 where lse = -inf (out is 0 there),
    // in place of out (so that a destination the caller passes is written
    // by the attention and rescaled there, with no second buffer).
    bool bnhd = op.getLayout() == Layout::bnhd;
    auto id4 = AffineMap::getMultiDimIdentityMap(4, ctx);
    AffineExpr d0 = getAffineDimExpr(0, ctx), d1 = getAffineDimExpr(1, ctx),
               d2 = getAffineDimExpr(2, ctx);
    auto rowMap = AffineMap::get(4, 0,
                                 bnhd ? ArrayRef<AffineExpr>{d0, d2, d1}
                                      : ArrayRef<AffineExpr>{d0, d1, d2},
                                 ctx);
    Type outElt = cast<ShapedType>(out.getType()).getElementType();
    SmallVector<utils::IteratorType> par4(4, utils::IteratorType::parallel);
    auto newOut = linalg::GenericOp::create(
        b, loc, out.getType(), ValueRange{lse, lse2}, ValueRange{out},
        ArrayRef<AffineMap>{rowMap, rowMap, id4}, par4,
        [&](OpBuilder &nb, Location nl, ValueRange args) {
          Value o = args[2];
          if (o.getType() != f32)
            o = arith::ExtFOp::create(nb, nl, f32, o);
          Value ninf =
              arith::ConstantOp::create(nb, nl, nb.getF32FloatAttr(-inf));
          Value none = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ,
                                             args[0], ninf);
          Value w = math::ExpOp::create(
              nb, nl, arith::SubFOp::create(nb, nl, args[0], args[1]));
          w = arith::SelectOp::create(
              nb, nl, none,
              arith::ConstantOp::create(nb, nl, nb.getF32FloatAttr(0.0)), w);
          Value r = arith::MulFOp::create(nb, nl, o, w);
          if (r.getType() != outElt)
            r = arith::TruncFOp::create(nb, nl, outElt, r);
          linalg::YieldOp::create(nb, nl, r);
        });
    SmallVector<Value> results = {newOut.getResult(0)};
    if (op.getLse())
      results.push_back(lse2);
    return results;
  }
};

struct AttnExpandSinksPass
    : public attn::impl::AttnExpandSinksBase<AttnExpandSinksPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ExpandSink>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
