//===- StateOps.cpp - lower attn.kv_cache_append and attn.combine ---------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/Dequant.h"
#include "attn/Conversion/LogitBuilder.h"
#include "attn/Conversion/RuntimeChecks.h"

#include "attn/Conversion/Passes.h"
#include "attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <limits>
#include <tuple>
#include <utility>

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_CONVERTATTNSTATEOPS
#include "attn/Conversion/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

namespace {

/// The number of batch entries an append writes: `batch`, or 0 after a
/// failed run-time check (of this op or an earlier one).
static Value buildWriteCount(OpBuilder &b, Location loc, Operation *op,
                             Value batch) {
  Value failed = buildHasFailed(b, loc, op);
  return arith::SelectOp::create(
      b, loc, failed, arith::ConstantIndexOp::create(b, loc, 0), batch);
}

/// `v` without its last entry: the slice of a row-scale tensor ([B, H, N])
/// that goes with a slice of its cache ([B, H, N, D]).
static SmallVector<OpFoldResult> dropLast(SmallVector<OpFoldResult> v) {
  v.pop_back();
  return v;
}

/// A quantized append: the update rounded to the cache's element type, and
/// the scale of each of its rows ([B, H, N] in the update's physical order
/// without D). Per-token scales are each row's largest magnitude / qmax (1
/// for a zero row); per-block scales are read from `scales` at the row's
/// batch entry or page (a page the checks will reject reads page 0: the
/// values are then never written).
static std::pair<Value, Value> quantizeUpdate(OpBuilder &b,
                                              KvCacheAppendOp op) {
  Location loc = op.getLoc();
  MLIRContext *ctx = b.getContext();
  bool bhnd = op.getLayout() == Layout::bhnd;
  int64_t hDim = bhnd ? 1 : 2, nDim = bhnd ? 2 : 1;
  Value update = op.getUpdate(), scales = op.getScales();
  Type elt = cast<RankedTensorType>(op.getCache().getType()).getElementType();
  Type f32 = b.getF32Type();
  auto toF32 = [&](OpBuilder &nb, Location nl, Value x) -> Value {
    return x.getType() == f32 ? x : arith::ExtFOp::create(nb, nl, f32, x);
  };
  SmallVector<OpFoldResult> rowSizes = tensor::getMixedSizes(b, loc, update);
  rowSizes.pop_back();
  Value rowsEmpty = tensor::EmptyOp::create(b, loc, rowSizes, f32);
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  auto id3 = AffineMap::getMultiDimIdentityMap(3, ctx);
  auto id4 = AffineMap::getMultiDimIdentityMap(4, ctx);
  auto rowsOf4 = AffineMap::get(4, 0, {d(0), d(1), d(2)}, ctx);
  auto par = utils::IteratorType::parallel;
  Value rowScale;
  if (cast<RankedTensorType>(scales.getType()).getRank() == 3) {
    Value zero = linalg::FillOp::create(b, loc,
                                        ValueRange{arith::ConstantOp::create(
                                            b, loc, b.getF32FloatAttr(0.0))},
                                        ValueRange{rowsEmpty})
                     .getResult(0);
    Value amax =
        linalg::GenericOp::create(
            b, loc, zero.getType(), ValueRange{update}, ValueRange{zero},
            {id4, rowsOf4}, {par, par, par, utils::IteratorType::reduction},
            [&](OpBuilder &nb, Location nl, ValueRange a) {
              Value x = math::AbsFOp::create(nb, nl, toF32(nb, nl, a[0]));
              linalg::YieldOp::create(
                  nb, nl, Value(arith::MaximumFOp::create(nb, nl, a[1], x)));
            })
            .getResult(0);
    double qmax = quantizedMax(elt);
    rowScale =
        linalg::GenericOp::create(
            b, loc, rowsEmpty.getType(), ValueRange{amax},
            ValueRange{rowsEmpty}, {id3, id3}, {par, par, par},
            [&](OpBuilder &nb, Location nl, ValueRange a) {
              Value s = arith::DivFOp::create(
                  nb, nl, a[0],
                  arith::ConstantOp::create(nb, nl, nb.getF32FloatAttr(qmax)));
              Value isZero = arith::CmpFOp::create(
                  nb, nl, arith::CmpFPredicate::OEQ, a[0],
                  arith::ConstantOp::create(nb, nl, nb.getF32FloatAttr(0.0)));
              linalg::YieldOp::create(nb, nl,
                                      Value(arith::SelectOp::create(
                                          nb, nl, isZero,
                                          arith::ConstantOp::create(
                                              nb, nl, nb.getF32FloatAttr(1.0)),
                                          s)));
            })
            .getResult(0);
  } else {
    // The caller's scale of the row's batch entry (or page) and head.
    Value table = op.getPageTable();
    rowScale =
        linalg::GenericOp::create(
            b, loc, rowsEmpty.getType(), ValueRange{}, ValueRange{rowsEmpty},
            {id3}, {par, par, par},
            [&](OpBuilder &nb, Location nl, ValueRange) {
              Value bi = linalg::IndexOp::create(nb, nl, 0);
              Value h = linalg::IndexOp::create(nb, nl, hDim);
              Value block = bi;
              if (table) {
                // page_table[b, (positions[b] + t) / S], clamped into the
                // table and the pool.
                auto idx = [&](Value v) -> Value {
                  return arith::IndexCastOp::create(nb, nl, nb.getIndexType(),
                                                    v);
                };
                auto dimOf = [&](Value v, int64_t i) -> Value {
                  return tensor::DimOp::create(nb, nl, v, i);
                };
                Value zero = arith::ConstantIndexOp::create(nb, nl, 0);
                Value one = arith::ConstantIndexOp::create(nb, nl, 1);
                Value t = linalg::IndexOp::create(nb, nl, nDim);
                Value p = idx(tensor::ExtractOp::create(
                    nb, nl, op.getPositions(), ValueRange{bi}));
                Value pos = arith::AddIOp::create(nb, nl, p, t);
                Value slot = arith::DivSIOp::create(nb, nl, pos,
                                                    dimOf(op.getCache(), nDim));
                Value lastSlot =
                    arith::SubIOp::create(nb, nl, dimOf(table, 1), one);
                slot = arith::MaxSIOp::create(
                    nb, nl, zero,
                    arith::MinSIOp::create(nb, nl, slot, lastSlot));
                Value page = idx(tensor::ExtractOp::create(
                    nb, nl, table, ValueRange{bi, slot}));
                Value lastPage =
                    arith::SubIOp::create(nb, nl, dimOf(op.getCache(), 0), one);
                block = arith::MaxSIOp::create(
                    nb, nl, zero,
                    arith::MinSIOp::create(nb, nl, page, lastPage));
              }
              linalg::YieldOp::create(
                  nb, nl,
                  Value(tensor::ExtractOp::create(nb, nl, scales,
                                                  ValueRange{block, h})));
            })
            .getResult(0);
  }
  Value qEmpty = tensor::EmptyOp::create(
      b, loc, tensor::getMixedSizes(b, loc, update), elt);
  Value quantized =
      linalg::GenericOp::create(
          b, loc, qEmpty.getType(), ValueRange{update, rowScale},
          ValueRange{qEmpty}, {id4, rowsOf4, id4}, {par, par, par, par},
          [&](OpBuilder &nb, Location nl, ValueRange a) {
            Value y = arith::DivFOp::create(nb, nl, toF32(nb, nl, a[0]), a[1]);
            linalg::YieldOp::create(nb, nl, encodeQuantized(nb, nl, y, elt));
          })
          .getResult(0);
  return {quantized, rowScale};
}

/// Paged append: token t of batch entry b goes to row (p + t) % S of page
/// page_table[b, (p + t) / S], p = positions[b], one token at a time in batch
/// order (sequences may share pages), each write checked first.
/// With `rowScale` (a quantized append with per-token scales) each token's
/// scales go to the scales pool beside its row; returns the cache and the
/// scales (null without `rowScale`).
static std::pair<Value, Value> lowerPagedAppend(OpBuilder &b,
                                                KvCacheAppendOp op,
                                                Value update, Value rowScale) {
  Location loc = op.getLoc();
  bool bhnd = op.getLayout() == Layout::bhnd;
  Value cache = op.getCache();
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
  // Token t of batch entry bi (at position p + t): its position, page table
  // slot and page.
  auto pageOf = [&](OpBuilder &nb, Location nl, Value bi, Value p, Value t) {
    Value pos = arith::AddIOp::create(nb, nl, p, t);
    Value slot = arith::DivUIOp::create(nb, nl, pos, pageSize);
    Value e = tensor::ExtractOp::create(nb, nl, table, ValueRange{bi, slot});
    Value page = arith::IndexCastOp::create(nb, nl, nb.getIndexType(), e);
    return std::make_tuple(pos, slot, page);
  };
  auto cmp = [&](OpBuilder &nb, Location nl, arith::CmpIPredicate pred, Value x,
                 Value y) -> Value {
    return arith::CmpIOp::create(nb, nl, pred, x, y);
  };
  // Every write is checked before the first: positions within the table,
  // then the entries the writes go to within the pool. After a failed
  // check nothing is written (the cache is returned as it was).
  getErrorContext(b, op);
  emitAppendSizeChecks(b, loc, op);
  scf::ForOp::create(
      b, loc, zero, batch, one, ValueRange{},
      [&](OpBuilder &ob, Location ol, Value bi, ValueRange) {
        Value p = tensor::ExtractOp::create(ob, ol, op.getPositions(), bi);
        p = arith::IndexCastOp::create(ob, ol, ob.getIndexType(), p);
        Value end = arith::AddIOp::create(ob, ol, p, rows);
        Value ok = arith::AndIOp::create(
            ob, ol, cmp(ob, ol, arith::CmpIPredicate::sge, p, zero),
            arith::AndIOp::create(
                ob, ol, cmp(ob, ol, arith::CmpIPredicate::sle, p, capacity),
                cmp(ob, ol, arith::CmpIPredicate::sle, end, capacity)));
        emitRuntimeCheck(ob, ol, op, ok, RuntimeCheck::AppendPastTable,
                         {bi, p, rows, capacity});
        auto ifOk = scf::IfOp::create(ob, ol, ok, /*withElse=*/false);
        {
          OpBuilder::InsertionGuard guard(ob);
          ob.setInsertionPointToStart(&ifOk.getThenRegion().front());
          scf::ForOp::create(
              ob, ol, zero, rows, one, ValueRange{},
              [&](OpBuilder &ib, Location il, Value t, ValueRange) {
                auto [pos, slot, page] = pageOf(ib, il, bi, p, t);
                (void)pos;
                Value inPool = arith::AndIOp::create(
                    ib, il, cmp(ib, il, arith::CmpIPredicate::sge, page, zero),
                    cmp(ib, il, arith::CmpIPredicate::slt, page, pages));
                emitRuntimeCheck(ib, il, op, inPool,
                                 RuntimeCheck::AppendPageEntry,
                                 {bi, slot, page, pages});
                scf::YieldOp::create(ib, il);
              });
        }
        scf::YieldOp::create(ob, ol);
      });
  // After a failed check the loop runs no iteration: the cache is returned
  // as it was, and (unlike an scf.if around the loop) bufferization still
  // updates it in place.
  Value writes = buildWriteCount(b, loc, op, batch);
  SmallVector<Value> inits = {cache};
  if (rowScale)
    inits.push_back(op.getScales());
  auto bLoop = scf::ForOp::create(
      b, loc, zero, writes, one, inits,
      [&](OpBuilder &ob, Location ol, Value bi, ValueRange it) {
        Value p = tensor::ExtractOp::create(ob, ol, op.getPositions(), bi);
        p = arith::IndexCastOp::create(ob, ol, ob.getIndexType(), p);
        auto tLoop = scf::ForOp::create(
            ob, ol, zero, rows, one, it,
            [&](OpBuilder &ib, Location il, Value t, ValueRange it2) {
              auto [pos, slot, page] = pageOf(ib, il, bi, p, t);
              (void)slot;
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
              SmallVector<Value> next = {tensor::InsertSliceOp::create(
                  ib, il, slice, it2[0], dstOff, sizes, strides)};
              if (rowScale) {
                // The token's scales: [1, H, 1] (bnhd [1, 1, H]) at its row.
                SmallVector<OpFoldResult> sz = dropLast(sizes),
                                          st = dropLast(strides);
                Value s = tensor::ExtractSliceOp::create(
                    ib, il, rowScale, dropLast(srcOff), sz, st);
                next.push_back(tensor::InsertSliceOp::create(
                    ib, il, s, it2[1], dropLast(dstOff), sz, st));
              }
              scf::YieldOp::create(ib, il, next);
            });
        scf::YieldOp::create(ob, ol, tLoop.getResults());
      });
  return {bLoop.getResult(0), rowScale ? bLoop.getResult(1) : Value()};
}

struct LowerKvCacheAppend : public OpRewritePattern<KvCacheAppendOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(KvCacheAppendOp op,
                                PatternRewriter &b) const override {
    // A quantized cache: the rounded update is written, and with per-token
    // scales the new rows' scales beside it (per-block scales are the
    // caller's and stay as they are).
    Value update = op.getUpdate(), rowScale;
    bool perToken = false;
    if (Value scales = op.getScales()) {
      std::tie(update, rowScale) = quantizeUpdate(b, op);
      perToken = cast<RankedTensorType>(scales.getType()).getRank() == 3;
    }
    auto results = [&](Value cache, Value newScales) {
      SmallVector<Value> r = {cache};
      if (op.getScales())
        r.push_back(perToken ? newScales : op.getScales());
      return r;
    };
    if (op.getPageTable()) {
      auto [cache, newScales] =
          lowerPagedAppend(b, op, update, perToken ? rowScale : Value());
      b.replaceOp(op, results(cache, newScales));
      return success();
    }
    Location loc = op.getLoc();
    bool bhnd = op.getLayout() == Layout::bhnd;
    Value cache = op.getCache();
    // Physical positions of the logical B, H, N, D dimensions.
    int64_t hDim = bhnd ? 1 : 2, nDim = bhnd ? 2 : 1;
    auto size = [&](Value v, int64_t d) {
      return getValueOrCreateConstantIndexOp(
          b, loc, tensor::getMixedSize(b, loc, v, d));
    };
    Value batch = size(update, 0), heads = size(update, hDim),
          rows = size(update, nDim), dim = size(update, 3),
          capacity = size(cache, nDim);
    // Every write is checked before the first; after a failed check nothing
    // is written (the cache is returned as it was).
    getErrorContext(b, op);
    emitAppendSizeChecks(b, loc, op);
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    scf::ForOp::create(
        b, loc, zero, batch, arith::ConstantIndexOp::create(b, loc, 1),
        ValueRange{}, [&](OpBuilder &ob, Location ol, Value bi, ValueRange) {
          Value p = tensor::ExtractOp::create(ob, ol, op.getPositions(), bi);
          p = arith::IndexCastOp::create(ob, ol, ob.getIndexType(), p);
          Value end = arith::AddIOp::create(ob, ol, p, rows);
          auto cmp = [&](arith::CmpIPredicate pred, Value x, Value y) {
            return arith::CmpIOp::create(ob, ol, pred, x, y);
          };
          Value ok = arith::AndIOp::create(
              ob, ol, cmp(arith::CmpIPredicate::sge, p, zero),
              arith::AndIOp::create(
                  ob, ol, cmp(arith::CmpIPredicate::sle, p, capacity),
                  cmp(arith::CmpIPredicate::sle, end, capacity)));
          emitRuntimeCheck(ob, ol, op, ok, RuntimeCheck::AppendPastCache,
                           {bi, p, rows, capacity});
          scf::YieldOp::create(ob, ol);
        });
    // After a failed check the loop runs no iteration (see above).
    Value writes = buildWriteCount(b, loc, op, batch);
    SmallVector<Value> outs = {cache};
    if (perToken)
      outs.push_back(op.getScales());
    auto forall = scf::ForallOp::create(
        b, loc, SmallVector<OpFoldResult>{writes}, outs, std::nullopt);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(forall.getTerminator());
      Value bi = forall.getInductionVar(0);
      Value p = tensor::ExtractOp::create(b, loc, op.getPositions(), bi);
      p = arith::IndexCastOp::create(b, loc, b.getIndexType(), p);
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
      Value scaleSlice;
      if (perToken)
        scaleSlice =
            tensor::ExtractSliceOp::create(b, loc, rowScale, dropLast(srcOff),
                                           dropLast(sizes), dropLast(strides));
      b.setInsertionPointToStart(forall.getTerminator().getBody());
      tensor::ParallelInsertSliceOp::create(
          b, loc, slice, forall.getRegionIterArgs()[0], dstOff, sizes, strides);
      if (perToken)
        tensor::ParallelInsertSliceOp::create(
            b, loc, scaleSlice, forall.getRegionIterArgs()[1], dropLast(dstOff),
            dropLast(sizes), dropLast(strides));
    }
    b.replaceOp(op, results(forall.getResult(0),
                            perToken ? forall.getResult(1) : Value()));
    return success();
  }
};

/// Checks the sizes of combine's operands that the types leave dynamic:
/// out_b's against out_a's, and both lse's against out_a's [B, Hq, Nq].
static void checkCombineSizes(OpBuilder &b, CombineOp op) {
  Location loc = op.getLoc();
  Value outA = op.getOutA();
  auto dynamic = [](Value v, int64_t d) {
    return cast<ShapedType>(v.getType()).isDynamicDim(d);
  };
  auto check = [&](int64_t operand, Value v, int64_t d, int64_t outDim) {
    if (!dynamic(v, d) && !dynamic(outA, outDim))
      return;
    Value got = tensor::DimOp::create(b, loc, v, d);
    Value want = tensor::DimOp::create(b, loc, outA, outDim);
    Value eq =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, got, want);
    emitRuntimeCheck(b, loc, op, eq, RuntimeCheck::CombineSizes,
                     {arith::ConstantIndexOp::create(b, loc, operand), got,
                      arith::ConstantIndexOp::create(b, loc, d), want});
  };
  for (int64_t d = 0; d < 4; ++d)
    check(2, op.getOutB(), d, d);
  // lse is [B, Hq, Nq]; out is [B, Hq, Nq, D] (bhnd) or [B, Nq, Hq, D].
  bool bhnd = op.getLayout() == Layout::bhnd;
  int64_t outDims[3] = {0, bhnd ? 1 : 2, bhnd ? 2 : 1};
  for (int64_t d = 0; d < 3; ++d) {
    check(1, op.getLseA(), d, outDims[d]);
    check(3, op.getLseB(), d, outDims[d]);
  }
}

struct LowerCombine : public OpRewritePattern<CombineOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(CombineOp op,
                                PatternRewriter &b) const override {
    // The work runs only when every run-time check passed.
    checkCombineSizes(b, op);
    SmallVector<Type> types = {op.getOutA().getType(), op.getLseA().getType()};
    SmallVector<Value> results = buildGuarded(
        b, op.getLoc(), op, types,
        [&](OpBuilder &fb, Location fl) {
          return buildZeroResults(fb, fl, types);
        },
        [&](OpBuilder &, Location) { return lower(b, op); });
    b.replaceOp(op, results);
    return success();
  }

  /// The elementwise combination at the builder's insertion point.
  SmallVector<Value> lower(PatternRewriter &b, CombineOp op) const {
    Location loc = op.getLoc();
    MLIRContext *ctx = b.getContext();
    Type f32 = b.getF32Type();
    Type elt = op.getOutA().getType().getElementType();
    bool bhnd = op.getLayout() == Layout::bhnd;
    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    // The shared merge (LogitBuilder.h) of two normalized parts: part x is
    // (lse_x, 1, out_x); M = max(lse_a, lse_b), L = w_a + w_b. An empty
    // segment (lse = -inf) weighs 0; both empty give out 0 and lse -inf.
    auto mergedSum = [&](OpBuilder &nb, Location nl, Value la, Value lb) {
      Value m = arith::MaximumFOp::create(nb, nl, la, lb);
      Value one = arith::ConstantOp::create(nb, nl, nb.getF32FloatAttr(1.0));
      Value l = arith::ConstantOp::create(nb, nl, nb.getF32FloatAttr(0.0));
      for (Value part : {la, lb})
        l = buildMergeRowSum(nb, nl, l, part, one, m);
      return std::make_pair(m, l);
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
              auto [m, l] = mergedSum(nb, nl, a[1], a[3]);
              Value one =
                  arith::ConstantOp::create(nb, nl, nb.getF32FloatAttr(1.0));
              Value o =
                  arith::ConstantOp::create(nb, nl, nb.getF32FloatAttr(0.0));
              for (auto [out, lse] :
                   {std::make_pair(a[0], a[1]), std::make_pair(a[2], a[3])}) {
                Value os = out.getType() == f32
                               ? out
                               : arith::ExtFOp::create(nb, nl, f32, out);
                o = buildMergeOutputStep(nb, nl, o, lse, one, os, m, l);
              }
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
              auto [m, l] = mergedSum(nb, nl, a[0], a[1]);
              linalg::YieldOp::create(nb, nl, buildLogSumExp(nb, nl, m, l));
            })
            .getResult(0);
    return {out, lse};
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
