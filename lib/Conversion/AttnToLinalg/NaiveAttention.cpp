//===- NaiveAttention.cpp - attn.attention -> materialized-score linalg ---===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// The naive form: the [B, Hkv, R, Nq, Nk] score tensor is built in full, then
// normalized row by row and multiplied by V. Iteration spaces use the grouped
// head pair (g, r), h = g * R + r, so K and V are indexed by g alone: head
// sharing is a read pattern, never a copy.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/Dequant.h"
#include "attn/Conversion/LogitBuilder.h"
#include "attn/Conversion/PagedKv.h"
#include "attn/Conversion/RaggedAttention.h"
#include "attn/Conversion/RuntimeChecks.h"
#include "attn/Schedule/LoweringChoice.h"

#include "attn/Conversion/Passes.h"
#include "attn/IR/AttnBuilders.h"
#include "attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <limits>

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_CONVERTATTNTOLINALGNAIVE
#include "attn/Conversion/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

namespace {

using utils::IteratorType;

/// Sizes of one attention op, as index-typed fold results.
struct Sizes {
  OpFoldResult batch, hkv, groups, nq, nk, dqk, dv;
};

static RankedTensorType tensorOf(ArrayRef<OpFoldResult> sizes, Type elt) {
  SmallVector<int64_t> shape;
  for (OpFoldResult s : sizes)
    shape.push_back(getConstantIntValue(s).value_or(ShapedType::kDynamic));
  return RankedTensorType::get(shape, elt);
}

static Value emptyOf(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes,
                     Type elt) {
  return tensor::EmptyOp::create(b, loc, sizes, elt);
}

static Value filled(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes,
                    Type elt, double value) {
  Value init = emptyOf(b, loc, sizes, elt);
  Value c = arith::ConstantOp::create(b, loc, b.getFloatAttr(elt, value));
  return linalg::FillOp::create(b, loc, c, init).getResult(0);
}

/// Splits the head dimension `dim` of `v` into [Hkv, R]: a pure reshape,
/// except when both Hkv and R are dynamic. MLIR 22's expand-strided-metadata
/// crashes on a memref.expand_shape with two dynamic sizes in one group
/// (llvm-project issue 186830), so that case copies the heads into the
/// [.., Hkv, R, ..] layout instead (only specs with fully dynamic head counts
/// pay for it).
static Value splitHeads(OpBuilder &b, Location loc, Value v, int64_t dim,
                        const Sizes &sz) {
  auto type = cast<RankedTensorType>(v.getType());
  std::optional<int64_t> hkv = getConstantIntValue(sz.hkv);
  std::optional<int64_t> groups = getConstantIntValue(sz.groups);
  SmallVector<ReassociationIndices> reassoc;
  SmallVector<OpFoldResult> shape;
  int64_t out = 0;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (d == dim) {
      reassoc.push_back({out, out + 1});
      shape.push_back(sz.hkv);
      shape.push_back(sz.groups);
      out += 2;
      continue;
    }
    reassoc.push_back({out++});
    shape.push_back(tensor::getMixedSize(b, loc, v, d));
  }
  RankedTensorType resultType = tensorOf(shape, type.getElementType());
  if (!hkv && !groups) {
    Value init = tensor::EmptyOp::create(b, loc, shape, type.getElementType());
    int64_t rank = resultType.getRank();
    SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
    return linalg::GenericOp::create(
               b, loc, resultType, ValueRange{}, init,
               AffineMap::getMultiDimIdentityMap(rank, b.getContext()), iters,
               [&](OpBuilder &nb, Location nl, ValueRange) {
                 SmallVector<Value> idx;
                 for (int64_t d = 0; d < rank; ++d) {
                   if (d == dim + 1)
                     continue;
                   Value i = linalg::IndexOp::create(nb, nl, d);
                   if (d == dim) {
                     // h = g * R + r.
                     Value r = linalg::IndexOp::create(nb, nl, d + 1);
                     Value g = arith::MulIOp::create(
                         nb, nl, i,
                         getValueOrCreateConstantIndexOp(nb, nl, sz.groups));
                     i = arith::AddIOp::create(nb, nl, g, r);
                   }
                   idx.push_back(i);
                 }
                 Value e = tensor::ExtractOp::create(nb, nl, v, idx);
                 linalg::YieldOp::create(nb, nl, e);
               })
        .getResult(0);
  }
  // The head dimension must be dynamic exactly when the group is.
  bool groupStatic = hkv && groups;
  if (groupStatic != !type.isDynamicDim(dim)) {
    SmallVector<int64_t> s(type.getShape());
    s[dim] = groupStatic ? *hkv * *groups : ShapedType::kDynamic;
    v = tensor::CastOp::create(b, loc, type.clone(s), v);
  }
  return tensor::ExpandShapeOp::create(b, loc, resultType, v, reassoc, shape);
}

/// Merges the [Hkv, R] pair at `dim` of `v` back into one head dimension.
static Value mergeHeads(OpBuilder &b, Location loc, Value v, int64_t dim) {
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<ReassociationIndices> reassoc;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (d == dim) {
      reassoc.push_back({d, d + 1});
      ++d;
      continue;
    }
    reassoc.push_back({d});
  }
  return tensor::CollapseShapeOp::create(b, loc, v, reassoc);
}

/// Loop dimensions of the 5-D score space (b, g, r, i, j) plus one extra
/// (the contracted or output feature dimension) at position 5.
enum Dim : unsigned { kB = 0, kG, kR, kI, kJ, kX };

/// The map of a [B, Hkv, R, N, D] operand (q or out split into groups) in
/// the op's layout; `nDim` and `dDim` are the loop dims of N and D.
static AffineMap groupedMap(MLIRContext *ctx, Layout layout, unsigned nLoops,
                            unsigned nDim, unsigned dDim) {
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineExpr> r =
      layout == Layout::bhnd
          ? SmallVector<AffineExpr>{d(kB), d(kG), d(kR), d(nDim), d(dDim)}
          : SmallVector<AffineExpr>{d(kB), d(nDim), d(kG), d(kR), d(dDim)};
  return AffineMap::get(nLoops, 0, r, ctx);
}

/// The map of a [B, Hkv, N, D] operand (k or v) in the op's layout.
static AffineMap kvMap(MLIRContext *ctx, Layout layout, unsigned nLoops,
                       unsigned nDim, unsigned dDim) {
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineExpr> r =
      layout == Layout::bhnd
          ? SmallVector<AffineExpr>{d(kB), d(kG), d(nDim), d(dDim)}
          : SmallVector<AffineExpr>{d(kB), d(nDim), d(kG), d(dDim)};
  return AffineMap::get(nLoops, 0, r, ctx);
}

/// Prepares a mask or bias tensor broadcastable to [B, Hq, Nq, Nk] for
/// reading from the 5-D score space: a non-broadcast head dimension is split
/// into [Hkv, R]; static size-1 dimensions read index 0. A dynamic dimension
/// is read at full extent.
static std::pair<Value, AffineMap> broadcastOperand(OpBuilder &b, Location loc,
                                                    Value v, const Sizes &sz) {
  MLIRContext *ctx = b.getContext();
  auto type = cast<RankedTensorType>(v.getType());
  int64_t rank = type.getRank();
  int64_t offset = 4 - rank;
  static constexpr unsigned logicalToLoop[4] = {kB, ~0u, kI, kJ};
  SmallVector<AffineExpr> exprs;
  std::optional<int64_t> headDim;
  for (int64_t t = 0; t < rank; ++t) {
    int64_t logical = offset + t;
    if (type.getDimSize(t) == 1) {
      exprs.push_back(getAffineConstantExpr(0, ctx));
      continue;
    }
    if (logical == 1) {
      headDim = t;
      exprs.push_back(getAffineDimExpr(kG, ctx));
      exprs.push_back(getAffineDimExpr(kR, ctx));
      continue;
    }
    exprs.push_back(getAffineDimExpr(logicalToLoop[logical], ctx));
  }
  if (headDim)
    v = splitHeads(b, loc, v, *headDim, sz);
  return {v, AffineMap::get(5, 0, exprs, ctx)};
}

struct LowerAttentionNaive : public OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &b) const override {
    // Ragged batches: a loop of dense ops, which this pattern then lowers.
    if (op.isRagged()) {
      rewriteRaggedAsLoop(b, op);
      return success();
    }
    LoweringChoice choice;
    choice.form = "naive";
    recordLoweringChoice(op, choice);
    // The work runs only when every run-time check passed.
    emitRuntimeShapeChecks(b, op.getLoc(), op);
    SmallVector<Value> results =
        buildGuardedOrZeros(b, op.getLoc(), op, [&](OpBuilder &, Location) {
          return lower(b, op);
        });
    b.replaceOp(op, results);
    return success();
  }

  /// The naive form of `op` (checked) at the builder's insertion point.
  SmallVector<Value> lower(PatternRewriter &b, AttentionOp op) const {
    Location loc = op.getLoc();
    MLIRContext *ctx = b.getContext();
    Layout layout = op.getLayout();
    Type f32 = b.getF32Type();
    Type elt = op.getQuery().getType().getElementType();
    bool softmax = op.getNormalization() == Normalization::softmax;
    Value q = op.getQuery(), k = op.getKey(), v = op.getValue();
    // Quantized K/V: the naive form reads f32 copies of k * k_scale and
    // v * v_scale (pools whole, before the gather).
    if (op.isQuantized()) {
      k = dequantizeTensor(b, loc, k, op.getKScale(), layout);
      v = dequantizeTensor(b, loc, v, op.getValueScale(), layout);
    }
    // Latent attention not expanded yet (--attn-expand-latent): V is k's
    // first Dv columns.
    if (std::optional<int64_t> dv = op.getVFromK()) {
      SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, v);
      sizes[3] = b.getIndexAttr(*dv);
      v = tensor::ExtractSliceOp::create(
          b, loc, v, SmallVector<OpFoldResult>(4, b.getIndexAttr(0)), sizes,
          SmallVector<OpFoldResult>(4, b.getIndexAttr(1)));
    }
    // Paged K/V: the naive form gathers dense [B, Hkv, Nk, D] copies through
    // the page table (the pages it reads were checked above).
    if (op.isPaged()) {
      k = gatherPagedKv(b, loc, op, k);
      v = gatherPagedKv(b, loc, op, v);
    }
    auto sizeOf = [&](Value t, int64_t logical) {
      return tensor::getMixedSize(b, loc, t, op.getPhysicalDim(logical));
    };
    Sizes sz;
    sz.batch = sizeOf(q, 0);
    sz.hkv = sizeOf(k, 1);
    sz.nq = sizeOf(q, 2);
    sz.nk = sizeOf(k, 2);
    sz.dqk = sizeOf(q, 3);
    sz.dv = sizeOf(v, 3);
    OpFoldResult hq = sizeOf(q, 1);
    if (auto a = getConstantIntValue(hq), c = getConstantIntValue(sz.hkv);
        a && c) {
      sz.groups = b.getIndexAttr(*a / *c);
    } else {
      sz.groups = arith::DivUIOp::create(
                      b, loc, getValueOrCreateConstantIndexOp(b, loc, hq),
                      getValueOrCreateConstantIndexOp(b, loc, sz.hkv))
                      .getResult();
    }

    LogitContext lctx = buildLogitContext(b, loc, op);
    int64_t qHeadDim = op.getPhysicalDim(1);
    Value q5 = splitHeads(b, loc, q, qHeadDim, sz);

    SmallVector<OpFoldResult> scoreShape = {sz.batch, sz.hkv, sz.groups, sz.nq,
                                            sz.nk};
    SmallVector<OpFoldResult> rowShape = {sz.batch, sz.hkv, sz.groups, sz.nq};
    auto id = [&](unsigned n) {
      return AffineMap::getMultiDimIdentityMap(n, ctx);
    };
    auto dims = [&](unsigned n, ArrayRef<unsigned> ds) {
      SmallVector<AffineExpr> e;
      for (unsigned d : ds)
        e.push_back(getAffineDimExpr(d, ctx));
      return AffineMap::get(n, 0, e, ctx);
    };
    auto iters = [](unsigned parallel, unsigned reduction) {
      SmallVector<IteratorType> it(parallel, IteratorType::parallel);
      it.append(reduction, IteratorType::reduction);
      return it;
    };
    // |x| == inf: a sum of p v that overflowed f32.
    auto overflowed = [](OpBuilder &nb, Location l, Value x) -> Value {
      Value inf = arith::ConstantOp::create(
          nb, l, nb.getF32FloatAttr(std::numeric_limits<double>::infinity()));
      return arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ,
                                   math::AbsFOp::create(nb, l, x), inf);
    };
    auto ext = [&](OpBuilder &nb, Location l, Value x) -> Value {
      return x.getType() == f32 ? x : arith::ExtFOp::create(nb, l, f32, x);
    };

    // 1. Raw scores S = q . k (f32 accumulation).
    Value scores = filled(b, loc, scoreShape, f32, 0.0);
    scores = linalg::GenericOp::create(
                 b, loc, scores.getType(), ValueRange{q5, k}, scores,
                 {groupedMap(ctx, layout, 6, kI, kX),
                  kvMap(ctx, layout, 6, kJ, kX), dims(6, {kB, kG, kR, kI, kJ})},
                 iters(5, 1),
                 [&](OpBuilder &nb, Location l, ValueRange a) {
                   Value p = arith::MulFOp::create(nb, l, ext(nb, l, a[0]),
                                                   ext(nb, l, a[1]));
                   linalg::YieldOp::create(
                       nb, l, Value(arith::AddFOp::create(nb, l, a[2], p)));
                 })
                 .getResult(0);

    // 2. Logits: scale, soft cap, bias, ALiBi, mask to -inf.
    SmallVector<Value> ins;
    SmallVector<AffineMap> maps;
    int kvLenArg = -1, maskArg = -1, biasArg = -1, slopeArg = -1;
    if (Value kvLen = op.getKvLen()) {
      kvLenArg = ins.size();
      ins.push_back(kvLen);
      maps.push_back(dims(5, {kB}));
    }
    if (Value mask = op.getMask()) {
      auto [val, map] = broadcastOperand(b, loc, mask, sz);
      maskArg = ins.size();
      ins.push_back(val);
      maps.push_back(map);
    }
    if (Value bias = op.getBias()) {
      auto [val, map] = broadcastOperand(b, loc, bias, sz);
      biasArg = ins.size();
      ins.push_back(val);
      maps.push_back(map);
    }
    if (Value slopes = op.getAlibiSlopes()) {
      slopeArg = ins.size();
      ins.push_back(splitHeads(b, loc, slopes, 0, sz));
      maps.push_back(dims(5, {kG, kR}));
    }
    maps.push_back(id(5));
    Value groupsValue = getValueOrCreateConstantIndexOp(b, loc, sz.groups);
    scores =
        linalg::GenericOp::create(
            b, loc, scores.getType(), ins, scores, maps, iters(5, 0),
            [&](OpBuilder &nb, Location l, ValueRange a) {
              LogitOperands in;
              in.raw = a.back();
              in.b = linalg::IndexOp::create(nb, l, kB);
              // Query head h = g * R + r.
              in.h = arith::AddIOp::create(
                  nb, l,
                  arith::MulIOp::create(
                      nb, l, linalg::IndexOp::create(nb, l, kG), groupsValue),
                  linalg::IndexOp::create(nb, l, kR));
              in.i = linalg::IndexOp::create(nb, l, kI);
              in.j = linalg::IndexOp::create(nb, l, kJ);
              in.kvLen = kvLenArg >= 0
                             ? buildClampedKvLen(nb, l, lctx, a[kvLenArg])
                             : lctx.nk;
              in.maskBit = maskArg >= 0 ? a[maskArg] : Value();
              in.bias = biasArg >= 0 ? a[biasArg] : Value();
              in.slope = slopeArg >= 0 ? a[slopeArg] : Value();
              linalg::YieldOp::create(nb, l, buildLogit(nb, l, lctx, in));
            })
            .getResult(0);

    // 3. Weights. softmax: row max m, P = exp(S - m), row sum l.
    //    sigmoid: P = sigmoid(S) (masked keys have S = -inf, so P = 0).
    Value rowMax, rowSum;
    if (softmax) {
      rowMax = filled(b, loc, rowShape, f32,
                      -std::numeric_limits<double>::infinity());
      rowMax =
          linalg::GenericOp::create(
              b, loc, rowMax.getType(), scores, rowMax,
              {id(5), dims(5, {kB, kG, kR, kI})}, iters(4, 1),
              [&](OpBuilder &nb, Location l, ValueRange a) {
                linalg::YieldOp::create(
                    nb, l, Value(arith::MaximumFOp::create(nb, l, a[0], a[1])));
              })
              .getResult(0);
    }
    scores =
        linalg::GenericOp::create(
            b, loc, scores.getType(),
            softmax ? ValueRange{rowMax} : ValueRange{}, scores,
            softmax ? SmallVector<AffineMap>{dims(5, {kB, kG, kR, kI}), id(5)}
                    : SmallVector<AffineMap>{id(5)},
            iters(5, 0),
            [&](OpBuilder &nb, Location l, ValueRange a) {
              Value s = a.back();
              if (!softmax) {
                // sigmoid(s) = 1 / (1 + exp(-s)).
                Value one =
                    arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(1.0));
                Value e =
                    math::ExpOp::create(nb, l, arith::NegFOp::create(nb, l, s));
                Value w = arith::DivFOp::create(
                    nb, l, one, arith::AddFOp::create(nb, l, one, e));
                linalg::YieldOp::create(nb, l, w);
                return;
              }
              // A row with no allowed key has m = -inf: use 0 instead so
              // that exp(-inf - 0) = 0 rather than NaN.
              Value m = buildSafeMax(nb, l, a[0]);
              Value e = math::ExpOp::create(nb, l,
                                            arith::SubFOp::create(nb, l, s, m));
              linalg::YieldOp::create(nb, l, e);
            })
            .getResult(0);
    if (softmax) {
      rowSum = filled(b, loc, rowShape, f32, 0.0);
      rowSum =
          linalg::GenericOp::create(
              b, loc, rowSum.getType(), scores, rowSum,
              {id(5), dims(5, {kB, kG, kR, kI})}, iters(4, 1),
              [&](OpBuilder &nb, Location l, ValueRange a) {
                linalg::YieldOp::create(
                    nb, l, Value(arith::AddFOp::create(nb, l, a[0], a[1])));
              })
              .getResult(0);
    }

    // 4. O = P V in f32, loops (b, g, r, i, e, j).
    SmallVector<OpFoldResult> accShape = {sz.batch, sz.hkv, sz.groups, sz.nq,
                                          sz.dv};
    // With softmax a second accumulator sums the normalized weights,
    // accN = sum_j (p_j / l) v_j: a convex combination of v rows that cannot
    // overflow f32 where the result is finite (bf16 values near the bf16
    // maximum), used where acc = sum_j p_j v_j overflows. acc / l stays the
    // result otherwise (it is exact where the sums are, e.g. equal weights).
    // accN costs a second pass over the scores with a division per term, so
    // it is computed only when some element of acc overflowed.
    SmallVector<AffineMap> pvInMaps = {dims(6, {kB, kG, kR, kI, kX}),
                                       kvMap(ctx, layout, 6, kX, kJ)};
    AffineMap pvOutMap = dims(6, {kB, kG, kR, kI, kJ});
    // sum_j w(p_j) v_j, a masked key (weight exactly 0) contributing nothing
    // whatever its value (0 * NaN is NaN).
    auto weightedSum = [&](OpBuilder &pb, Location pl, Value rowSumOrNull) {
      SmallVector<Value> ins = {scores, v};
      SmallVector<AffineMap> maps(pvInMaps);
      if (rowSumOrNull) {
        ins.push_back(rowSumOrNull);
        maps.push_back(dims(6, {kB, kG, kR, kI}));
      }
      maps.push_back(pvOutMap);
      Value init = filled(pb, pl, accShape, f32, 0.0);
      return linalg::GenericOp::create(
                 pb, pl, init.getType(), ins, init, maps, iters(5, 1),
                 [&](OpBuilder &nb, Location l, ValueRange a) {
                   Value zero =
                       arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(0));
                   Value isZero = arith::CmpFOp::create(
                       nb, l, arith::CmpFPredicate::OEQ, a[0], zero);
                   Value w = a[0];
                   if (rowSumOrNull)
                     w = buildNormalizedOutput(nb, l, a[0], a[2]);
                   Value p = arith::MulFOp::create(nb, l, w, ext(nb, l, a[1]));
                   p = arith::SelectOp::create(nb, l, isZero, zero, p);
                   linalg::YieldOp::create(
                       nb, l, Value(arith::AddFOp::create(nb, l, a.back(), p)));
                 })
          .getResult(0);
    };
    Value acc = weightedSum(b, loc, Value());
    Value accN;
    if (softmax) {
      // Whether any |acc| is inf (a 0-d i1 reduction over acc).
      Type i1 = b.getI1Type();
      Value flag = linalg::FillOp::create(b, loc,
                                          ValueRange{arith::ConstantOp::create(
                                              b, loc, b.getBoolAttr(false))},
                                          ValueRange{tensor::EmptyOp::create(
                                              b, loc, ArrayRef<int64_t>{}, i1)})
                       .getResult(0);
      flag = linalg::GenericOp::create(
                 b, loc, flag.getType(), acc, flag,
                 {id(5), AffineMap::get(5, 0, ctx)}, iters(0, 5),
                 [&](OpBuilder &nb, Location l, ValueRange a) {
                   Value over = overflowed(nb, l, a[0]);
                   linalg::YieldOp::create(
                       nb, l, Value(arith::OrIOp::create(nb, l, a[1], over)));
                 })
                 .getResult(0);
      Value any = tensor::ExtractOp::create(b, loc, flag, ValueRange{});
      // Without overflow the final select never reads accN: acc stands in.
      accN = scf::IfOp::create(
                 b, loc, any,
                 [&](OpBuilder &tb, Location tl) {
                   scf::YieldOp::create(tb, tl, weightedSum(tb, tl, rowSum));
                 },
                 [&](OpBuilder &eb, Location el) {
                   scf::YieldOp::create(eb, el, acc);
                 })
                 .getResult(0);
    }

    // 5. out = acc / l (0 for empty rows), rounded to the element type and
    //    written in the op's layout.
    SmallVector<OpFoldResult> outShape =
        layout == Layout::bhnd
            ? SmallVector<OpFoldResult>{sz.batch, sz.hkv, sz.groups, sz.nq,
                                        sz.dv}
            : SmallVector<OpFoldResult>{sz.batch, sz.nq, sz.hkv, sz.groups,
                                        sz.dv};
    Value out5 = emptyOf(b, loc, outShape, elt);
    SmallVector<Value> finIns = {acc};
    SmallVector<AffineMap> finMaps = {id(5)};
    if (softmax) {
      finIns.append({rowSum, accN});
      finMaps.append({dims(5, {kB, kG, kR, kI}), id(5)});
    }
    // The output loop dimension kJ (4) plays the role of the feature e here.
    finMaps.push_back(groupedMap(ctx, layout, 5, kI, kJ));
    out5 = linalg::GenericOp::create(
               b, loc, out5.getType(), finIns, out5, finMaps, iters(5, 0),
               [&](OpBuilder &nb, Location l, ValueRange a) {
                 Value o = a[0];
                 if (softmax) {
                   Value overflow = overflowed(nb, l, o);
                   o = arith::SelectOp::create(
                       nb, l, overflow, a[2],
                       buildNormalizedOutput(nb, l, o, a[1]));
                 }
                 if (elt != f32)
                   o = arith::TruncFOp::create(nb, l, elt, o);
                 linalg::YieldOp::create(nb, l, o);
               })
               .getResult(0);
    Value out = mergeHeads(b, loc, out5, layout == Layout::bhnd ? 1 : 2);
    if (out.getType() != op.getOut().getType())
      out = tensor::CastOp::create(b, loc, op.getOut().getType(), out);

    SmallVector<Value> results = {out};
    if (op.getLse()) {
      Value lse4 = emptyOf(b, loc, rowShape, f32);
      lse4 = linalg::GenericOp::create(
                 b, loc, lse4.getType(), ValueRange{rowMax, rowSum}, lse4,
                 {id(4), id(4), id(4)}, iters(4, 0),
                 [&](OpBuilder &nb, Location l, ValueRange a) {
                   linalg::YieldOp::create(nb, l,
                                           buildLogSumExp(nb, l, a[0], a[1]));
                 })
                 .getResult(0);
      Value lse = mergeHeads(b, loc, lse4, 1);
      if (lse.getType() != op.getLse().getType())
        lse = tensor::CastOp::create(b, loc, op.getLse().getType(), lse);
      results.push_back(lse);
    }
    return results;
  }
};

struct ConvertAttnToLinalgNaivePass
    : public attn::impl::ConvertAttnToLinalgNaiveBase<
          ConvertAttnToLinalgNaivePass> {
  void runOnOperation() override {
    getOperation()->walk([](AttentionOp op) { expandKeyPadding(op); });
    RewritePatternSet patterns(&getContext());
    populateAttnToLinalgNaivePatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void mlir::attn::populateAttnToLinalgNaivePatterns(
    RewritePatternSet &patterns) {
  patterns.add<LowerAttentionNaive>(patterns.getContext());
}
