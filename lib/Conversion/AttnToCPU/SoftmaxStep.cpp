//===- SoftmaxStep.cpp - online-softmax bookkeeping of a tile -------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "FusedLowering.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"

#include <cmath>
#include <tuple>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::cpu;

namespace {
/// scf.if on `cond` whose branches yield `body(b, loc, true)` (then) and
/// `body(b, loc, false)` (else): one code path built twice, for a flag the
/// generated code decides.
ValueRange ifThenElse(
    OpBuilder &b, Location loc, Value cond,
    llvm::function_ref<SmallVector<Value>(OpBuilder &, Location, bool)> body) {
  return scf::IfOp::create(
             b, loc, cond,
             [&](OpBuilder &tb, Location tl) {
               scf::YieldOp::create(tb, tl, body(tb, tl, true));
             },
             [&](OpBuilder &eb, Location el) {
               scf::YieldOp::create(eb, el, body(eb, el, false));
             })
      .getResults();
}

/// The two sweeps over one row of a score tile (the row max, then
/// P = exp(x - safe) in place with its row sum), as explicit vector code of
/// `lanes` f32 lanes. `masked`: lanes outside the row's keys [lo, hi) and
/// past the tile's end are masked; otherwise every lane of the row is a
/// logit (the row's keys are the whole tile, a multiple of lanes wide).
/// `inBounds` (masked sweeps): the tile is a multiple of lanes wide, so
/// every vector is read and written whole, the lanes outside [lo, hi)
/// selected away; otherwise the vectors past the tile's end are partial
/// (masked loads and stores, which AVX2 has only as the slow vmaskmovps).
class RowSweeps {
public:
  RowSweeps(OpBuilder &b, int64_t lanes, Value zero, Value step, Value ks,
            Value scale)
      : lanes(lanes), f32(b.getF32Type()), vecTy(VectorType::get({lanes}, f32)),
        maskTy(VectorType::get({lanes}, b.getI1Type())), zero(zero), step(step),
        ks(ks), scale(scale) {
    // The logits' scale, when it is a positive constant: the row max is then
    // taken over the raw scores and scaled once (rounding is monotonic, so
    // max_j round(c x_j) = round(c max_j x_j) exactly), not per lane.
    FloatAttr c;
    positiveScale = scale && matchPattern(scale, m_Constant(&c)) &&
                    c.getValue().isFiniteNonZero() &&
                    !c.getValue().isNegative();
  }

  /// The scale is a constant of magnitude below `bound`.
  bool constantScaleBelow(double bound) const {
    FloatAttr c;
    return scale && matchPattern(scale, m_Constant(&c)) &&
           std::abs(c.getValueAsDouble()) < bound;
  }

  Value fconst(OpBuilder &nb, Location nl, double v) const {
    return arith::ConstantOp::create(nb, nl, nb.getF32FloatAttr(v));
  }
  Value splat(OpBuilder &nb, Location nl, Value x) const {
    return vector::BroadcastOp::create(nb, nl, vecTy, x);
  }

  /// Lanes j0 + [0, lanes) inside [lo, hi) (hi <= ks).
  Value laneMask(OpBuilder &nb, Location nl, Value lo, Value hi,
                 Value j0) const {
    IndexMath m{nb, nl};
    Value below =
        vector::CreateMaskOp::create(nb, nl, maskTy, ValueRange{m.sub(hi, j0)});
    if (!lo)
      return below;
    Value before =
        vector::CreateMaskOp::create(nb, nl, maskTy, ValueRange{m.sub(lo, j0)});
    Value ones = arith::ConstantOp::create(
        nb, nl, maskTy, DenseElementsAttr::get(maskTy, true));
    return arith::AndIOp::create(nb, nl, below,
                                 arith::XOrIOp::create(nb, nl, before, ones));
  }

  /// The logits of row (r, i) at columns j0 + [0, lanes), -inf on the lanes
  /// outside `mask`: the scores times `by` (none: the scores as they are).
  Value readRow(OpBuilder &nb, Location nl, Value t, Value r, Value i, Value j0,
                Value mask, Value by, bool inBounds) const {
    Value x = vector::TransferReadOp::create(
        nb, nl, vecTy, t, ValueRange{r, i, j0}, fconst(nb, nl, kNegInf),
        ArrayRef<bool>{!mask || inBounds});
    if (by)
      x = arith::MulFOp::create(nb, nl, x, splat(nb, nl, by));
    if (!mask)
      return x;
    return arith::SelectOp::create(nb, nl, mask, x,
                                   splat(nb, nl, fconst(nb, nl, kNegInf)));
  }

  /// x - safe for the logits of row (r, i) at columns j0 + [0, lanes) (as
  /// readRow, -inf outside `mask`): the rounded logit, which may have
  /// overflowed to inf (and then inf - inf makes the row NaN, as in the
  /// other forms).
  Value shiftedLogits(OpBuilder &nb, Location nl, Value t, Value r, Value i,
                      Value j0, Value mask, Value negSafe,
                      bool inBounds) const {
    Value x = readRow(nb, nl, t, r, i, j0, mask, scale, inBounds);
    return arith::AddFOp::create(nb, nl, x, negSafe);
  }

  /// Sweep 1 over row (r, i) of p, reading keys [lo, hi): the row's maxima
  /// lane by lane (of the raw scores, when the scale is a positive
  /// constant; -inf where no key is read), not yet reduced across lanes.
  Value maxSweep(OpBuilder &b5, Location l5, Value p, Value r, Value i,
                 Value lo, Value hi, bool masked, bool inBounds) const {
    Value maxScale = positiveScale ? Value() : scale;
    auto maxLoop = scf::ForOp::create(
        b5, l5, zero, ks, step,
        ValueRange{splat(b5, l5, fconst(b5, l5, kNegInf))},
        [&](OpBuilder &b3, Location l3, Value j0, ValueRange it3) {
          Value mask = masked ? laneMask(b3, l3, lo, hi, j0) : Value();
          Value x = readRow(b3, l3, p, r, i, j0, mask, maxScale, inBounds);
          // max(acc, x) ignoring a NaN x, as a compare and select (one
          // vmaxps; maxnumf would add NaN fix-ups): the running max is never
          // NaN.
          Value gt = arith::CmpFOp::create(b3, l3, arith::CmpFPredicate::OGT, x,
                                           it3[0]);
          scf::YieldOp::create(
              b3, l3, Value(arith::SelectOp::create(b3, l3, gt, x, it3[0])));
        });
    return maxLoop.getResult(0);
  }

  /// Sweep 2 over row (r, i) of p, reading keys [lo, hi): P = exp(x - safe)
  /// in place. Returns the row's sums lane by lane (not yet reduced across
  /// lanes) and p with the row's P written.
  SmallVector<Value> sumSweep(OpBuilder &b5, Location l5, Value p, Value r,
                              Value i, Value safe, Value lo, Value hi,
                              bool masked, bool inBounds) const {
    // While |safe| < 2^16 (and |c| < 1e38), as
    // 2^(x (c log2(e)) - safe log2(e)): the logit's scale c and log2(e) are
    // one FMA, and the exponential needs no Cody-Waite reduction. The
    // rounding of the FMA's operands, c log2(e) and safe log2(e), then adds
    // a few ulps of the logit to x - safe, as much as rounding the logit
    // itself does. Larger logits (up to the f32
    // limit) take exp(x c - safe) on the rounded logits: its x - safe is
    // exact for the row's largest logit, where the rounding of
    // safe log2(e) would no longer be small against 1; and a logit that
    // overflowed to inf (safe = inf) makes the row NaN as in the other
    // forms.
    auto sweep = [&](OpBuilder &b6, Location l6,
                     bool base2) -> SmallVector<Value> {
      Value log2e = fconst(b6, l6, 1.44269504088896341);
      Value by, shift;
      if (base2) {
        by = scale ? arith::MulFOp::create(b6, l6, scale, log2e).getResult()
                   : log2e;
        by = splat(b6, l6, by);
        shift = splat(b6, l6,
                      arith::MulFOp::create(
                          b6, l6, safe, arith::NegFOp::create(b6, l6, log2e)));
      } else {
        shift = splat(b6, l6, arith::NegFOp::create(b6, l6, safe));
      }
      auto sumLoop = scf::ForOp::create(
          b6, l6, zero, ks, step,
          ValueRange{splat(b6, l6, fconst(b6, l6, 0.0)), p},
          [&](OpBuilder &b3, Location l3, Value j0, ValueRange it3) {
            Value mask = masked ? laneMask(b3, l3, lo, hi, j0) : Value();
            Operation *exp;
            if (base2) {
              Value x =
                  readRow(b3, l3, it3[1], r, i, j0, mask, Value(), inBounds);
              exp = math::Exp2Op::create(
                  b3, l3, math::FmaOp::create(b3, l3, x, by, shift));
            } else {
              exp = math::ExpOp::create(b3, l3,
                                        shiftedLogits(b3, l3, it3[1], r, i, j0,
                                                      mask, shift, inBounds));
            }
            // x <= m' (or NaN): the short polynomial applies.
            exp->setAttr(kExpNonPositiveAttr, UnitAttr::get(b3.getContext()));
            Value e = exp->getResult(0);
            if (mask)
              e = arith::SelectOp::create(b3, l3, mask, e,
                                          splat(b3, l3, fconst(b3, l3, 0.0)));
            Value t = vector::TransferWriteOp::create(
                          b3, l3, e, it3[1], ValueRange{r, i, j0},
                          ArrayRef<bool>{!mask || inBounds})
                          .getResult();
            scf::YieldOp::create(
                b3, l3,
                ValueRange{arith::AddFOp::create(b3, l3, it3[0], e, kFast), t});
          });
      return {sumLoop.getResult(0), sumLoop.getResult(1)};
    };
    Value inRange = arith::CmpFOp::create(b5, l5, arith::CmpFPredicate::OLT,
                                          math::AbsFOp::create(b5, l5, safe),
                                          fconst(b5, l5, 0x1p16));
    // ... and c log2(e) finite (a scale above 2.36e38 would make it inf).
    if (scale && !constantScaleBelow(1e38))
      inRange = arith::AndIOp::create(
          b5, l5, inRange,
          arith::CmpFOp::create(b5, l5, arith::CmpFPredicate::OLT,
                                math::AbsFOp::create(b5, l5, scale),
                                fconst(b5, l5, 1e38)));
    return llvm::to_vector(ifThenElse(b5, l5, inRange, sweep));
  }

  /// Lane k of the result: the maximum (or the sum) of the lanes of
  /// rows[k], for `lanes` vectors of `lanes` lanes, as a transpose-and-
  /// reduce tree: each level pairs two vectors, each holding groups of
  /// partial results (one group per row), and combines the first half of
  /// every group with its second half, the first vector's groups then the
  /// second's; lanes - 1 combinations of two shuffles each, with no
  /// horizontal reduction per row. The maxima ignore nothing: no lane is
  /// NaN (see maxSweep).
  Value transposeReduce(OpBuilder &b, Location l, SmallVector<Value> rows,
                        bool isMax) const {
    for (int64_t group = lanes; group > 1; group /= 2) {
      int64_t half = group / 2;
      SmallVector<int64_t> firsts, seconds;
      for (int64_t v = 0; v < 2; ++v)
        for (int64_t g = 0; g < lanes / group; ++g)
          for (int64_t e = 0; e < half; ++e) {
            firsts.push_back(v * lanes + g * group + e);
            seconds.push_back(v * lanes + g * group + half + e);
          }
      SmallVector<Value> next;
      for (size_t k = 0; k + 1 < rows.size(); k += 2) {
        Value a = vector::ShuffleOp::create(b, l, rows[k], rows[k + 1], firsts);
        Value c =
            vector::ShuffleOp::create(b, l, rows[k], rows[k + 1], seconds);
        if (isMax) {
          Value gt =
              arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, a, c);
          next.push_back(arith::SelectOp::create(b, l, gt, a, c));
        } else {
          next.push_back(arith::AddFOp::create(b, l, a, c, kFast));
        }
      }
      rows = std::move(next);
    }
    return rows.front();
  }

  int64_t lanes;
  Type f32;
  VectorType vecTy, maskTy;
  Value zero, step, ks, scale;
  bool positiveScale = false;
};
} // namespace

std::pair<FusedLowering::State, Value>
FusedLowering::softmaxStep(OpBuilder &b, Location loc, State st, Value s,
                           Value qs, const RowLogits &rowLogits) {
  IndexMath im{b, loc};
  auto vecTy = VectorType::get({lanes}, f32);
  auto maskTy = VectorType::get({lanes}, b.getI1Type());
  Value zero = im.c(0), one = im.c(1), step = im.c(lanes);
  Value ks = tensor::DimOp::create(b, loc, s, 2);
  RowSweeps rowSweeps(b, lanes, zero, step, ks, rowLogits.scale);
  auto fconst = [&](OpBuilder &nb, Location nl, double v) -> Value {
    return rowSweeps.fconst(nb, nl, v);
  };
  auto splat = [&](OpBuilder &nb, Location nl, Value x) -> Value {
    return rowSweeps.splat(nb, nl, x);
  };
  // Whether the tile's rows are whole vectors (every key tile but a last,
  // partial one): its sweeps then read and write whole vectors only.
  Value wholeVectors = divisible(b, loc, ks, lanes);

  // t[r, i, 0:n] *= factor (a splat), one vector of lanes at a time: whole
  // vectors where `whole` (n a multiple of lanes), else the last one
  // partial (a masked load and store).
  auto scaleRow = [&](OpBuilder &nb, Location nl, Value t, Value n, Value r,
                      Value i, Value factor, Value whole) -> Value {
    return ifThenElse(
        nb, nl, whole,
        [&](OpBuilder &b2, Location l2, bool inBounds) -> SmallVector<Value> {
          SmallVector<bool> ib = {inBounds};
          auto loop = scf::ForOp::create(
              b2, l2, zero, n, step, ValueRange{t},
              [&](OpBuilder &b3, Location l3, Value j0, ValueRange it3) {
                Value x = vector::TransferReadOp::create(
                    b3, l3, vecTy, it3[0], ValueRange{r, i, j0},
                    fconst(b3, l3, 0.0), ib);
                x = arith::MulFOp::create(b3, l3, x, factor);
                scf::YieldOp::create(
                    b3, l3,
                    vector::TransferWriteOp::create(b3, l3, x, it3[0],
                                                    ValueRange{r, i, j0}, ib)
                        .getResult());
              });
          return {loop.getResult(0)};
        })[0];
  };
  Value wholeDv = divisible(b, loc, dv, lanes);

  // A row's sweeps: unmasked where its keys are the whole tile (`whole`),
  // else masked, on whole vectors where the tile is a multiple of lanes wide.
  // Without per-row keys (a logit generic wrote the logits) a row is not
  // whole only where the tile is not whole vectors wide.
  auto rowSweep =
      [&](OpBuilder &b2, Location l2, Value whole,
          function_ref<SmallVector<Value>(OpBuilder &, Location, bool, bool)>
              sweep) -> ValueRange {
    return ifThenElse(
        b2, l2, whole,
        [&](OpBuilder &nb, Location nl, bool isWhole) -> SmallVector<Value> {
          if (isWhole)
            return sweep(nb, nl, /*masked=*/false, /*inBounds=*/true);
          if (!rowLogits.keys)
            return sweep(nb, nl, /*masked=*/true, /*inBounds=*/false);
          return llvm::to_vector(
              ifThenElse(nb, nl, wholeVectors,
                         [&](OpBuilder &mb, Location ml, bool inBounds) {
                           return sweep(mb, ml, /*masked=*/true, inBounds);
                         }));
        });
  };

  // Lane `ii` of a vector of rows.
  auto laneOf = [&](OpBuilder &nb, Location nl, Value v, Value ii) -> Value {
    return vector::ExtractOp::create(nb, nl, v, ArrayRef<OpFoldResult>{ii});
  };

  // Rows in blocks of `lanes`, in three steps per block, so that no scalar
  // chain per row (row sum -> a -> l' -> scale factors) holds up the next
  // row: (1) each row's sweeps, keeping its m' and sum_j P in a lane of a
  // vector; (2) the statistics of the block's rows as vector code, one lane
  // per row (a, l', the accumulator's scales); (3) each row's rescaling of
  // P and of its accumulator. The block's rows of P stay in L1 in between.
  auto rLoop = scf::ForOp::create(
      b, loc, zero, groups, one, ValueRange{st.m, st.l, st.acc, s},
      [&](OpBuilder &b1, Location l1, Value r, ValueRange it1) {
        auto blockLoop = scf::ForOp::create(
            b1, l1, zero, qs, step, it1,
            [&](OpBuilder &b4, Location l4, Value i0, ValueRange it4) {
              IndexMath m4{b4, l4};
              Value rows = m4.min(step, m4.sub(qs, i0));
              // Lanes past the block's rows are neither read nor written.
              Value rowMask = vector::CreateMaskOp::create(b4, l4, maskTy,
                                                           ValueRange{rows});
              AffineMapAttr rowsMap = AffineMapAttr::get(
                  AffineMap::getMinorIdentityMap(2, 1, b4.getContext()));
              ArrayAttr notInBounds = b4.getBoolArrayAttr({false});
              auto readRows = [&](Value t) -> Value {
                return vector::TransferReadOp::create(
                    b4, l4, vecTy, t, ValueRange{r, i0}, rowsMap,
                    fconst(b4, l4, 0.0), rowMask, notInBounds);
              };
              // Row (r, i0 + ii)'s keys [lo, hi), and whether they are the
              // whole tile (a multiple of lanes wide: no lane masks, most
              // tiles).
              auto rowKeys = [&](OpBuilder &b2, Location l2, Value i) {
                Value lo, hi = ks;
                if (rowLogits.keys)
                  std::tie(lo, hi) = rowLogits.keys(b2, l2, i);
                IndexMath m2{b2, l2};
                Value whole = wholeVectors;
                if (lo)
                  whole = m2.andI(whole, m2.eq(lo, zero));
                if (hi != ks)
                  whole = m2.andI(whole, m2.eq(hi, ks));
                return std::make_tuple(lo, hi, whole);
              };
              // Each row's lane-wise partial results go to a row of a
              // lanes x lanes scratch tile; its rows past the block's are
              // read as `pad` (the identity of the reduction).
              auto scratch = [&]() -> Value {
                return tensor::EmptyOp::create(
                    b4, l4, ArrayRef<int64_t>{lanes, lanes}, f32);
              };
              auto writeScratch = [&](OpBuilder &b2, Location l2, Value v,
                                      Value t, Value ii) -> Value {
                return vector::TransferWriteOp::create(b2, l2, v, t,
                                                       ValueRange{ii, zero},
                                                       ArrayRef<bool>{true})
                    .getResult();
              };
              auto reduceScratch = [&](Value t, double pad,
                                       bool isMax) -> Value {
                SmallVector<Value> partials;
                for (int64_t k = 0; k < lanes; ++k) {
                  IndexMath mk{b4, l4};
                  Value kk = mk.c(k);
                  Value n = arith::SelectOp::create(b4, l4, mk.slt(kk, rows),
                                                    step, zero);
                  Value mask = vector::CreateMaskOp::create(b4, l4, maskTy,
                                                            ValueRange{n});
                  partials.push_back(vector::TransferReadOp::create(
                      b4, l4, vecTy, t, ValueRange{kk, zero},
                      AffineMapAttr::get(AffineMap::getMinorIdentityMap(
                          2, 1, b4.getContext())),
                      fconst(b4, l4, pad), mask, b4.getBoolArrayAttr({true})));
                }
                return rowSweeps.transposeReduce(b4, l4, partials, isMax);
              };
              // (1a) Each row's maxima, then the block's row maxima at once
              // (one lane per row), m' and safe.
              auto maxLoop = scf::ForOp::create(
                  b4, l4, zero, rows, one, ValueRange{scratch()},
                  [&](OpBuilder &b2, Location l2, Value ii, ValueRange it2) {
                    Value i = IndexMath{b2, l2}.add(i0, ii);
                    Value lo, hi, whole;
                    std::tie(lo, hi, whole) = rowKeys(b2, l2, i);
                    Value partial = rowSweep(
                        b2, l2, whole,
                        [&](OpBuilder &nb, Location nl, bool masked,
                            bool inBounds) -> SmallVector<Value> {
                          return {rowSweeps.maxSweep(nb, nl, it4[3], r, i, lo,
                                                     hi, masked, inBounds)};
                        })[0];
                    scf::YieldOp::create(
                        b2, l2, writeScratch(b2, l2, partial, it2[0], ii));
                  });
              Value tileMax = reduceScratch(maxLoop.getResult(0), kNegInf,
                                            /*isMax=*/true);
              if (rowSweeps.positiveScale)
                tileMax = arith::MulFOp::create(b4, l4, tileMax,
                                                splat(b4, l4, rowLogits.scale));
              Value mNew =
                  arith::MaxNumFOp::create(b4, l4, readRows(it4[0]), tileMax);
              Value safeRows = buildSafeMax(b4, l4, mNew);
              // (1b) Each row's P and its sums, then the block's row sums.
              auto sumLoop = scf::ForOp::create(
                  b4, l4, zero, rows, one, ValueRange{it4[3], scratch()},
                  [&](OpBuilder &b2, Location l2, Value ii, ValueRange it2) {
                    Value i = IndexMath{b2, l2}.add(i0, ii);
                    Value lo, hi, whole;
                    std::tie(lo, hi, whole) = rowKeys(b2, l2, i);
                    Value safe = laneOf(b2, l2, safeRows, ii);
                    ValueRange swept = rowSweep(
                        b2, l2, whole,
                        [&](OpBuilder &nb, Location nl, bool masked,
                            bool inBounds) {
                          return rowSweeps.sumSweep(nb, nl, it2[0], r, i, safe,
                                                    lo, hi, masked, inBounds);
                        });
                    scf::YieldOp::create(
                        b2, l2,
                        ValueRange{swept[1],
                                   writeScratch(b2, l2, swept[0], it2[1], ii)});
                  });
              Value p = sumLoop.getResult(0);
              Value rowSum = reduceScratch(sumLoop.getResult(1), 0.0,
                                           /*isMax=*/false);
              // (2) The block's statistics, one lane per row.
              auto writeRows = [&](Value x, Value t) -> Value {
                return vector::TransferWriteOp::create(
                           b4, l4, x, t, ValueRange{r, i0}, rowsMap, rowMask,
                           notInBounds)
                    .getResult();
              };
              Value mOld = readRows(it4[0]), lOld = readRows(it4[1]);
              Value safe = buildSafeMax(b4, l4, mNew);
              Value alpha = math::ExpOp::create(
                  b4, l4, arith::SubFOp::create(b4, l4, mOld, safe));
              Value lNew = arith::AddFOp::create(
                  b4, l4, arith::MulFOp::create(b4, l4, alpha, lOld), rowSum);
              Value m = writeRows(mNew, it4[0]);
              Value l = writeRows(lNew, it4[1]);
              // The accumulator is kept scaled by s' = buildRowSumScale(l'),
              // a power of two with l' s' < 1: |acc| stays below the largest
              // |v|, so it cannot overflow f32 where the result is finite
              // (bf16 values near the bf16 maximum), and the scaling is
              // exact. (3): P *= s'; then acc *= alpha s' / s.
              Value invL = buildRowSumScale(b4, l4, lNew);
              Value wOld = arith::MulFOp::create(
                  b4, l4, alpha,
                  buildScaleRatio(b4, l4, invL,
                                  buildRowSumScale(b4, l4, lOld)));
              auto rescale = scf::ForOp::create(
                  b4, l4, zero, rows, one, ValueRange{it4[2], p},
                  [&](OpBuilder &b2, Location l2, Value ii, ValueRange it2) {
                    Value i = IndexMath{b2, l2}.add(i0, ii);
                    Value scaledP = scaleRow(
                        b2, l2, it2[1], ks, r, i,
                        splat(b2, l2, laneOf(b2, l2, invL, ii)), wholeVectors);
                    // acc[r, i, :] *= alpha s' / s.
                    Value scaledAcc = scaleRow(
                        b2, l2, it2[0], dv, r, i,
                        splat(b2, l2, laneOf(b2, l2, wOld, ii)), wholeDv);
                    scf::YieldOp::create(b2, l2,
                                         ValueRange{scaledAcc, scaledP});
                  });
              scf::YieldOp::create(
                  b4, l4,
                  ValueRange{m, l, rescale.getResult(0), rescale.getResult(1)});
            });
        scf::YieldOp::create(b1, l1, blockLoop.getResults());
      });
  return {State{rLoop.getResult(0), rLoop.getResult(1), rLoop.getResult(2)},
          rLoop.getResult(3)};
}

FusedLowering::State FusedLowering::update(OpBuilder &b, Location loc, State st,
                                           Value s, const TileRows &vRows,
                                           Value qs, Value full,
                                           const RowLogits &rowLogits,
                                           const BlockKeys *blockKeys) {
  AffineMap id3 = map(b, 3, {0, 1, 2});

  Value newM = st.m, alphaL = st.l, alphaAcc = st.acc;
  if (softmax) {
    auto [next, p] = softmaxStep(b, loc, st, s, qs, rowLogits);
    newM = next.m;
    alphaL = next.l;
    alphaAcc = next.acc;
    s = p;
  } else {
    // sigmoid: P = sigmoid(S); masked keys have S = -inf, P = 0.
    s = linalg::GenericOp::create(
            b, loc, s.getType(), ValueRange{}, s, {id3}, iters(3, 0),
            [&](OpBuilder &nb, Location nl, ValueRange a) {
              Value one =
                  arith::ConstantOp::create(nb, nl, nb.getF32FloatAttr(1.0));
              Value e = math::ExpOp::create(
                  nb, nl, arith::NegFOp::create(nb, nl, a[0]));
              linalg::YieldOp::create(
                  nb, nl,
                  Value(arith::DivFOp::create(
                      nb, nl, one, arith::AddFOp::create(nb, nl, one, e))));
            })
            .getResult(0);
  }
  // A masked key has weight exactly 0. Where every value of the V tile is
  // finite, 0 * v = 0 and the plain P V is exact; tiles with masked keys
  // (boundary tiles, or any tile when a boolean mask tensor is given, or a
  // bias or score_mod that may make a logit -inf) whose V tile holds a NaN
  // or an infinity take a guarded P V, so that a masked key contributes
  // nothing whatever its value. Quantized rows take the guarded P V in every
  // tile with masked keys (a row's value is its raw value times its scale,
  // either of which may be what is not finite).
  bool anyTile = op.getMask() || op.getBias() || op.getScoreModBlock();
  Value noMasked =
      anyTile
          ? arith::ConstantOp::create(b, loc, b.getBoolAttr(false)).getResult()
          : full;
  auto ifOp = scf::IfOp::create(
      b, loc, noMasked,
      [&](OpBuilder &tb, Location tl) {
        scf::YieldOp::create(
            tb, tl,
            ValueRange{arith::ConstantOp::create(tb, tl, tb.getBoolAttr(true))
                           .getResult()});
      },
      [&](OpBuilder &eb, Location el) {
        Value init =
            arith::ConstantOp::create(eb, el, eb.getBoolAttr(!vRows.scale));
        if (vRows.scale) {
          scf::YieldOp::create(eb, el, init);
          return;
        }
        Value all =
            forEachPage(eb, el, vRows, {init},
                        [&](OpBuilder &pb, Location pl, Value vPage, Value,
                            Value n, ValueRange it) -> SmallVector<Value> {
                          return {arith::AndIOp::create(
                              pb, pl, it[0], allFinite(pb, pl, vPage, n))};
                        })[0];
        scf::YieldOp::create(eb, el, all);
      });
  Value unguarded = ifOp.getResult(0);
  // The weights of keys [j0, j0 + n) of the tile: `s` itself when the tile
  // is one slice.
  auto weights = [&](OpBuilder &pb, Location pl, const TileRows &rows, Value j0,
                     Value n) -> Value {
    if (rows.tile)
      return s;
    OpFoldResult z = pb.getIndexAttr(0);
    return tensor::ExtractSliceOp::create(
        pb, pl, s, SmallVector<OpFoldResult>{z, z, j0},
        SmallVector<OpFoldResult>{groups, qs, n},
        SmallVector<OpFoldResult>(3, pb.getIndexAttr(1)));
  };
  // The readable keys (the others weigh 0); paged tiles of several pages
  // read each key's V row from its page in place, quantized rows raw.
  auto rowwise = [&](OpBuilder &gb, Location gl, bool guard) -> Value {
    return rowwisePV(gb, gl, alphaAcc, s, vRows.tile, qs, vRows.readable, guard,
                     &vRows);
  };

  auto slowPV = [&](OpBuilder &nb0, Location nl0) -> Value {
    return branch(
        nb0, nl0, unguarded, alphaAcc,
        [&](OpBuilder &gb, Location gl) { return rowwise(gb, gl, false); },
        [&](OpBuilder &gb, Location gl) { return rowwise(gb, gl, true); });
  };
  // A block's k loop runs over the keys its rows read, from a page's
  // first key j0 on (the weights of the others are 0).
  auto pvKeys = [&](Value j0, int64_t keysPerStep) {
    std::optional<BlockKeys> keys;
    if (blockKeys) {
      keys = *blockKeys;
      keys->alongN = false;
      keys->offset = j0;
      keys->keysPerStep = keysPerStep;
    }
    return keys;
  };
  // Whole register-tile columns of Dv: the microkernel (f16 / bf16 V rows
  // converted to f32 once per key tile or page); otherwise the row-wise
  // kernel.
  auto pv = [&](OpBuilder &fb, Location fl, Value acc, Value p, Value vRows,
                bool converted, Value n, bool guard, Value j0) {
    std::optional<BlockKeys> keys = pvKeys(j0, 1);
    return microkernel(
        fb, fl, acc, qs, dv, n,
        [&](OpBuilder &ab, Location al, Value r, Value i, Value j) {
          return Value(
              tensor::ExtractOp::create(ab, al, p, ValueRange{r, i, j}));
        },
        [&](OpBuilder &bb, Location bl, Value j, Value e0) {
          Value pad =
              arith::ConstantOp::create(bb, bl, bb.getF32FloatAttr(0.0));
          Value z = arith::ConstantIndexOp::create(bb, bl, 0);
          SmallVector<Value> idx =
              converted ? SmallVector<Value>{j, e0} : kvIndex(z, j, e0);
          SmallVector<bool> inBounds = {true};
          return Value(vector::TransferReadOp::create(
              bb, bl, VectorType::get({nw}, f32), vRows, idx, pad, inBounds));
        },
        /*zeroInit=*/false, guard, /*pairs=*/false, keys ? &*keys : nullptr);
  };
  // Whole register-tile columns of Dv and enough rows per head (decode's
  // single rows share each V row chunk in the row-wise kernel instead).
  IndexMath im{b, loc};
  Value fitsPV = im.andI(divisible(b, loc, dv, nw), im.sle(im.c(mr), qs));
  Value acc = branch(
      b, loc, fitsPV, alphaAcc,
      [&](OpBuilder &fb, Location fl) {
        TileRows vSrc = contiguous(fb, fl, vRows);
        auto pages = [&](OpBuilder &gb, Location gl, bool guard) -> Value {
          return forEachPage(
              gb, gl, vSrc, {alphaAcc},
              [&](OpBuilder &pb, Location pl, Value vPage, Value j0, Value n,
                  ValueRange it) -> SmallVector<Value> {
                Value w = weights(pb, pl, vSrc, j0, n);
                Type vElt =
                    cast<RankedTensorType>(vPage.getType()).getElementType();
                auto f32PV = [&](OpBuilder &cb, Location cl) -> Value {
                  Value rows = vPage;
                  bool convert = vElt != f32;
                  if (convert)
                    rows = convertKeyTile(cb, cl, vPage, n, dv,
                                          scratchTile(cb, cl, {n, dv}, f32, 0));
                  return pv(cb, cl, it[0], w, rows, convert, n, guard, j0);
                };
                // bf16 pairs of keys: tiles and pages of whole pairs of
                // registers in place (the last, partial tile and rows
                // already gathered into f32 take the f32 kernel); f16 on
                // AMX split into pairs of bf16 (f16Split).
                bool pairsV = vElt.isBF16() || (f16Split && vElt.isF16());
                if (guard || !pairsV || !(pairedPV || amxPV))
                  return {f32PV(pb, pl)};
                if (amxPV) {
                  // AMX: full key tiles and whole 16-row blocks.
                  IndexMath pm{pb, pl};
                  Value whole =
                      pm.andI(pm.eq(n, pm.c(tileK)), divisible(pb, pl, qs, 16));
                  return {branch(
                      pb, pl, whole, it[0],
                      [&](OpBuilder &cb, Location cl) {
                        return amxPVTile(cb, cl, it[0], w, vPage, qs, f32PV);
                      },
                      f32PV)};
                }
                return {branch(
                    pb, pl, divisible(pb, pl, n, 2 * lanes), it[0],
                    [&](OpBuilder &cb, Location cl) {
                      std::optional<BlockKeys> keys = pvKeys(j0, 2);
                      return pairedPVTile(cb, cl, it[0], w, vPage, qs, n,
                                          keys ? &*keys : nullptr);
                    },
                    f32PV)};
              })[0];
        };
        return branch(
            fb, fl, unguarded, alphaAcc,
            [&](OpBuilder &gb, Location gl) { return pages(gb, gl, false); },
            [&](OpBuilder &gb, Location gl) { return pages(gb, gl, true); });
      },
      slowPV);
  return {newM, alphaL, acc};
}
