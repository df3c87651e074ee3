//===- StateOps.cpp - lower attn.kv_cache_append and attn.combine ---------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/LogitBuilder.h"

#include "attn/Conversion/Passes.h"
#include "attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <limits>

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_CONVERTATTNSTATEOPS
#include "attn/Conversion/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Paged append: token t of batch entry b goes to row (p + t) % S of page
/// page_table[b, (p + t) / S], p = positions[b], one token at a time in batch
/// order (sequences may share pages), each write checked first.
static Value lowerPagedAppend(OpBuilder &b, KvCacheAppendOp op) {
  Location loc = op.getLoc();
  bool bhnd = op.getLayout() == Layout::bhnd;
  Value cache = op.getCache(), update = op.getUpdate();
  Value table = op.getPageTable();
  int64_t hDim = bhnd ? 1 : 2, nDim = bhnd ? 2 : 1;
  auto size = [&](Value v, int64_t d) {
    return getValueOrCreateConstantIndexOp(b, loc,
                                           tensor::getMixedSize(b, loc, v, d));
  };
  Value batch = size(update, 0), heads = size(update, hDim),
        rows = size(update, nDim), dim = size(update, 3),
        pageSize = size(cache, nDim), pages = size(cache, 0),
        maxPages = size(table, 1);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value capacity = arith::MulIOp::create(b, loc, maxPages, pageSize);
  auto cmp = [&](OpBuilder &nb, Location nl, arith::CmpIPredicate pred, Value x,
                 Value y) -> Value {
    return arith::CmpIOp::create(nb, nl, pred, x, y);
  };
  auto bLoop = scf::ForOp::create(
      b, loc, zero, batch, one, ValueRange{cache},
      [&](OpBuilder &ob, Location ol, Value bi, ValueRange it) {
        Value p = tensor::ExtractOp::create(ob, ol, op.getPositions(), bi);
        p = arith::IndexCastOp::create(ob, ol, ob.getIndexType(), p);
        Value end = arith::AddIOp::create(ob, ol, p, rows);
        Value ok = arith::AndIOp::create(
            ob, ol, cmp(ob, ol, arith::CmpIPredicate::sge, p, zero),
            cmp(ob, ol, arith::CmpIPredicate::sle, end, capacity));
        cf::AssertOp::create(ob, ol, ok,
                             "attn: kv_cache_append writes past the page "
                             "table (positions[b] + Nnew > max_pages * S)");
        auto tLoop = scf::ForOp::create(
            ob, ol, zero, rows, one, it,
            [&](OpBuilder &ib, Location il, Value t, ValueRange it2) {
              Value pos = arith::AddIOp::create(ib, il, p, t);
              Value slot = arith::DivUIOp::create(ib, il, pos, pageSize);
              Value e = tensor::ExtractOp::create(ib, il, table,
                                                  ValueRange{bi, slot});
              Value page =
                  arith::IndexCastOp::create(ib, il, ib.getIndexType(), e);
              Value inPool = arith::AndIOp::create(
                  ib, il, cmp(ib, il, arith::CmpIPredicate::sge, page, zero),
                  cmp(ib, il, arith::CmpIPredicate::slt, page, pages));
              cf::AssertOp::create(ib, il, inPool,
                                   "attn: kv_cache_append: a page_table "
                                   "entry lies outside the page pool");
              Value row = arith::RemUIOp::create(ib, il, pos, pageSize);
              OpFoldResult o = ib.getIndexAttr(1), z = ib.getIndexAttr(0);
              SmallVector<OpFoldResult> sizes =
                  bhnd ? SmallVector<OpFoldResult>{o, heads, o, dim}
                       : SmallVector<OpFoldResult>{o, o, heads, dim};
              SmallVector<OpFoldResult> strides(4, o);
              SmallVector<OpFoldResult> srcOff =
                  bhnd ? SmallVector<OpFoldResult>{bi, z, t, z}
                       : SmallVector<OpFoldResult>{bi, t, z, z};
              SmallVector<OpFoldResult> dstOff =
                  bhnd ? SmallVector<OpFoldResult>{page, z, row, z}
                       : SmallVector<OpFoldResult>{page, row, z, z};
              Value slice = tensor::ExtractSliceOp::create(
                  ib, il, update, srcOff, sizes, strides);
              Value next = tensor::InsertSliceOp::create(
                  ib, il, slice, it2[0], dstOff, sizes, strides);
              scf::YieldOp::create(ib, il, next);
            });
        scf::YieldOp::create(ob, ol, tLoop.getResults());
      });
  return bLoop.getResult(0);
}

struct LowerKvCacheAppend : public OpRewritePattern<KvCacheAppendOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(KvCacheAppendOp op,
                                PatternRewriter &b) const override {
    if (op.getPageTable()) {
      b.replaceOp(op, lowerPagedAppend(b, op));
      return success();
    }
    Location loc = op.getLoc();
    bool bhnd = op.getLayout() == Layout::bhnd;
    Value cache = op.getCache(), update = op.getUpdate();
    // Physical positions of the logical B, H, N, D dimensions.
    int64_t hDim = bhnd ? 1 : 2, nDim = bhnd ? 2 : 1;
    auto size = [&](Value v, int64_t d) {
      return getValueOrCreateConstantIndexOp(
          b, loc, tensor::getMixedSize(b, loc, v, d));
    };
    Value batch = size(update, 0), heads = size(update, hDim),
          rows = size(update, nDim), dim = size(update, 3),
          capacity = size(cache, nDim);
    auto forall =
        scf::ForallOp::create(b, loc, SmallVector<OpFoldResult>{batch},
                              ValueRange{cache}, std::nullopt);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(forall.getTerminator());
      Value bi = forall.getInductionVar(0);
      Value p = tensor::ExtractOp::create(b, loc, op.getPositions(), bi);
      p = arith::IndexCastOp::create(b, loc, b.getIndexType(), p);
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      Value end = arith::AddIOp::create(b, loc, p, rows);
      Value ok = arith::AndIOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, p, zero),
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, end,
                                capacity));
      cf::AssertOp::create(b, loc, ok,
                           "attn: kv_cache_append writes past the cache");
      OpFoldResult one = b.getIndexAttr(1), z = b.getIndexAttr(0);
      SmallVector<OpFoldResult> srcOff = {bi, z, z, z};
      SmallVector<OpFoldResult> sizes =
          bhnd ? SmallVector<OpFoldResult>{one, heads, rows, dim}
               : SmallVector<OpFoldResult>{one, rows, heads, dim};
      SmallVector<OpFoldResult> strides(4, one);
      Value slice = tensor::ExtractSliceOp::create(b, loc, update, srcOff,
                                                   sizes, strides);
      SmallVector<OpFoldResult> dstOff =
          bhnd ? SmallVector<OpFoldResult>{bi, z, p, z}
               : SmallVector<OpFoldResult>{bi, p, z, z};
      b.setInsertionPointToStart(forall.getTerminator().getBody());
      tensor::ParallelInsertSliceOp::create(
          b, loc, slice, forall.getRegionIterArgs()[0], dstOff, sizes, strides);
    }
    b.replaceOp(op, forall.getResults());
    return success();
  }
};

struct LowerCombine : public OpRewritePattern<CombineOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(CombineOp op,
                                PatternRewriter &b) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = b.getContext();
    Type f32 = b.getF32Type();
    Type elt = op.getOutA().getType().getElementType();
    bool bhnd = op.getLayout() == Layout::bhnd;
    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    double ninf = -std::numeric_limits<double>::infinity();
    auto cst = [&](OpBuilder &nb, Location nl, double v) -> Value {
      return arith::ConstantOp::create(nb, nl, nb.getF32FloatAttr(v));
    };
    // Weights of the two segments relative to M = max(lse_a, lse_b); an
    // empty segment (lse = -inf) weighs 0, and so does everything when both
    // are empty.
    auto weights = [&](OpBuilder &nb, Location nl, Value la, Value lb) {
      Value m = arith::MaximumFOp::create(nb, nl, la, lb);
      Value empty = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ, m,
                                          cst(nb, nl, ninf));
      Value safeM = buildSafeMax(nb, nl, m);
      Value wa =
          math::ExpOp::create(nb, nl, arith::SubFOp::create(nb, nl, la, safeM));
      Value wb =
          math::ExpOp::create(nb, nl, arith::SubFOp::create(nb, nl, lb, safeM));
      return std::make_tuple(safeM, wa, wb, empty);
    };
    // out: loops over the physical [.., .., .., Dv] shape; lse is indexed by
    // the logical (b, h, i).
    AffineMap id4 = AffineMap::getMultiDimIdentityMap(4, ctx);
    AffineMap lseMap = bhnd ? AffineMap::get(4, 0, {d(0), d(1), d(2)}, ctx)
                            : AffineMap::get(4, 0, {d(0), d(2), d(1)}, ctx);
    Value outInit = tensor::EmptyOp::create(
        b, loc, tensor::getMixedSizes(b, loc, op.getOutA()), elt);
    SmallVector<utils::IteratorType> par4(4, utils::IteratorType::parallel);
    Value out =
        linalg::GenericOp::create(
            b, loc, outInit.getType(),
            ValueRange{op.getOutA(), op.getLseA(), op.getOutB(), op.getLseB()},
            outInit, {id4, lseMap, id4, lseMap, id4}, par4,
            [&](OpBuilder &nb, Location nl, ValueRange a) {
              auto [m, wa, wb, empty] = weights(nb, nl, a[1], a[3]);
              (void)m;
              auto ext = [&](Value x) -> Value {
                return x.getType() == f32
                           ? x
                           : arith::ExtFOp::create(nb, nl, f32, x);
              };
              // Normalized weights first: the sum is then a convex
              // combination of the two outputs and cannot overflow.
              Value den = arith::AddFOp::create(nb, nl, wa, wb);
              Value ua = arith::DivFOp::create(nb, nl, wa, den);
              Value ub = arith::DivFOp::create(nb, nl, wb, den);
              Value num = arith::AddFOp::create(
                  nb, nl, arith::MulFOp::create(nb, nl, ua, ext(a[0])),
                  arith::MulFOp::create(nb, nl, ub, ext(a[2])));
              Value o =
                  arith::SelectOp::create(nb, nl, empty, cst(nb, nl, 0), num);
              if (elt != f32)
                o = arith::TruncFOp::create(nb, nl, elt, o);
              linalg::YieldOp::create(nb, nl, o);
            })
            .getResult(0);
    AffineMap id3 = AffineMap::getMultiDimIdentityMap(3, ctx);
    Value lseInit = tensor::EmptyOp::create(
        b, loc, tensor::getMixedSizes(b, loc, op.getLseA()), f32);
    SmallVector<utils::IteratorType> par3(3, utils::IteratorType::parallel);
    Value lse =
        linalg::GenericOp::create(
            b, loc, lseInit.getType(), ValueRange{op.getLseA(), op.getLseB()},
            lseInit, {id3, id3, id3}, par3,
            [&](OpBuilder &nb, Location nl, ValueRange a) {
              auto [m, wa, wb, empty] = weights(nb, nl, a[0], a[1]);
              Value sum = arith::AddFOp::create(nb, nl, wa, wb);
              Value l = arith::AddFOp::create(nb, nl, m,
                                              math::LogOp::create(nb, nl, sum));
              linalg::YieldOp::create(
                  nb, nl,
                  Value(arith::SelectOp::create(nb, nl, empty,
                                                cst(nb, nl, ninf), l)));
            })
            .getResult(0);
    b.replaceOp(op, {out, lse});
    return success();
  }
};

struct ConvertAttnStateOpsPass
    : public attn::impl::ConvertAttnStateOpsBase<ConvertAttnStateOpsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateAttnStateOpsPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void mlir::attn::populateAttnStateOpsPatterns(RewritePatternSet &patterns) {
  patterns.add<LowerKvCacheAppend, LowerCombine>(patterns.getContext());
}
