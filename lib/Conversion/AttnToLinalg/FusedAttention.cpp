//===- FusedAttention.cpp - attn.attention -> tiled online softmax --------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// The fused form (FlashAttention style) and the split-KV decode form.
//
// For every (batch b, K/V head g, query tile) one parallel iteration keeps a
// running row max m, row sum l and f32 accumulator for the R query heads that
// share K/V head g, and walks the key tiles that the structural masks
// (kv_len, causal, window) leave readable:
//
//   [lo, hi) = readable key range of the tile's rows   (from run-time sizes)
//   for kt in [lo / Tk, ceil(hi / Tk)):
//     S    = Q_tile K_tile^T                           [R, Tq, Tk]
//     S    = logits(S), mask arithmetic only if the tile is a boundary tile
//     m'   = max(m, rowmax S);  P = exp(S - m');  a = exp(m - m')
//     l    = a l + rowsum P;    acc = a acc + P V_tile
//   out = acc / l  (0 where l = 0),  lse = m + log l  (-inf where l = 0)
//
// K/V tiles are read once per group of R query heads. No [Nq, Nk] buffer
// exists: the largest temporary is one [R, Tq, Tk] score tile.
//
// The decode form splits each row's readable key range into `splits` chunks
// processed in parallel, each leaving a partial (acc, m, l); a final merge
// combines them exactly: M = max m_s, L = sum exp(m_s - M) l_s,
// out = sum exp(m_s - M) acc_s / L.
//
//===----------------------------------------------------------------------===//

#include "LogitBuilder.h"

#include "attn/Conversion/Passes.h"
#include "attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <tuple>

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_CONVERTATTNTOFUSEDLOOPS
#define GEN_PASS_DEF_CONVERTATTNTOSPLITKV
#include "attn/Conversion/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

namespace {

using utils::IteratorType;

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

/// Fast-math flags for the contractions: reassociation (vectorized
/// reductions) and contraction into FMAs. Masking, max and the softmax
/// bookkeeping keep strict semantics.
constexpr arith::FastMathFlags kFast =
    arith::FastMathFlags::reassoc | arith::FastMathFlags::contract;

/// Name of the external function instrumented kernels call once per
/// computed key tile: attn_tile_visit(i64 batch, i64 kvHead, i64 queryTile,
/// i64 keyTile, i1 boundary).
constexpr StringLiteral kTileVisitFn = "attn_tile_visit";

/// Small arithmetic helpers on index values.
struct IndexMath {
  OpBuilder &b;
  Location loc;
  Value c(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value min(Value x, Value y) { return arith::MinSIOp::create(b, loc, x, y); }
  Value max(Value x, Value y) { return arith::MaxSIOp::create(b, loc, x, y); }
  Value floorDiv(Value x, Value y) {
    return arith::FloorDivSIOp::create(b, loc, x, y);
  }
  Value ceilDiv(Value x, Value y) {
    return arith::CeilDivSIOp::create(b, loc, x, y);
  }
  Value sle(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, x, y);
  }
  Value slt(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x, y);
  }
  Value andI(Value x, Value y) { return arith::AndIOp::create(b, loc, x, y); }
  Value eq(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, y);
  }
};

/// Everything a tile of one attention op needs, built once per op.
class FusedLowering {
public:
  FusedLowering(AttentionOp op, OpBuilder &b, int64_t tileQ, int64_t tileK,
                bool instrument)
      : op(op), tileQ(tileQ), tileK(tileK), instrument(instrument) {
    Location loc = op.getLoc();
    layout = op.getLayout();
    elt = op.getQuery().getType().getElementType();
    f32 = b.getF32Type();
    softmax = op.getNormalization() == Normalization::softmax;
    auto size = [&](Value t, int64_t logical) {
      return getValueOrCreateConstantIndexOp(
          b, loc, tensor::getMixedSize(b, loc, t, op.getPhysicalDim(logical)));
    };
    batch = size(op.getQuery(), 0);
    hq = size(op.getQuery(), 1);
    hkv = size(op.getKey(), 1);
    nq = size(op.getQuery(), 2);
    nk = size(op.getKey(), 2);
    dqk = size(op.getQuery(), 3);
    dv = size(op.getValue(), 3);
    groups = arith::DivUIOp::create(b, loc, hq, hkv);
    lctx = buildLogitContext(b, loc, op);
  }

  AttentionOp op;
  int64_t tileQ, tileK;
  bool instrument;
  Layout layout;
  Type elt, f32;
  bool softmax;
  Value batch, hq, hkv, groups, nq, nk, dqk, dv;
  LogitContext lctx;

  /// Running state of one query tile: row max, row sum, accumulator.
  struct State {
    Value m, l, acc;
  };

  /// The structurally readable key range [lo, hi) of query rows
  /// [q0, q0 + qs) of batch entry with valid length kvLen.
  std::pair<Value, Value> keyRange(OpBuilder &b, Location loc, Value q0,
                                   Value qs, Value kvLen) {
    IndexMath m{b, loc};
    Value pLo = buildQueryPosition(b, loc, lctx, q0, kvLen);
    Value pHi =
        buildQueryPosition(b, loc, lctx, m.sub(m.add(q0, qs), m.c(1)), kvLen);
    Value lo = m.c(0), hi = kvLen;
    if (op.getCausal())
      hi = m.min(hi, m.add(pHi, m.c(1)));
    if (auto left = op.getEffectiveWindowLeft())
      lo = m.max(lo, m.sub(pLo, m.c(*left)));
    if (auto right = op.getEffectiveWindowRight())
      hi = m.min(hi, m.add(pHi, m.c(*right + 1)));
    hi = m.max(hi, lo);
    return {lo, hi};
  }

  /// Key tiles [ktLo, ktHi) overlapping keys [lo, hi); empty when lo == hi.
  std::pair<Value, Value> keyTileRange(OpBuilder &b, Location loc, Value lo,
                                       Value hi, Value tk) {
    IndexMath m{b, loc};
    Value ktLo = m.floorDiv(lo, tk);
    Value ktHi =
        arith::SelectOp::create(b, loc, m.slt(lo, hi), m.ceilDiv(hi, tk), ktLo);
    return {ktLo, ktHi};
  }

  /// Whether no structural mask cuts into the tile rows [q0, q0+qs) x keys
  /// [k0, k0+ks): such a tile needs no mask arithmetic.
  Value isFullTile(OpBuilder &b, Location loc, Value q0, Value qs, Value k0,
                   Value ks, Value kvLen) {
    IndexMath m{b, loc};
    Value pLo = buildQueryPosition(b, loc, lctx, q0, kvLen);
    Value pHi =
        buildQueryPosition(b, loc, lctx, m.sub(m.add(q0, qs), m.c(1)), kvLen);
    Value kEnd = m.sub(m.add(k0, ks), m.c(1));
    Value full = m.slt(kEnd, kvLen);
    if (op.getCausal())
      full = m.andI(full, m.sle(kEnd, pLo));
    if (auto left = op.getEffectiveWindowLeft())
      full = m.andI(full, m.sle(m.sub(pHi, k0), m.c(*left)));
    if (auto right = op.getEffectiveWindowRight())
      full = m.andI(full, m.sle(m.sub(kEnd, pLo), m.c(*right)));
    return full;
  }

  Value filled(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> shape,
               double v) {
    Value e = tensor::EmptyOp::create(b, loc, shape, f32);
    Value c = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
    return linalg::FillOp::create(b, loc, c, e).getResult(0);
  }

  AffineMap map(OpBuilder &b, unsigned n, ArrayRef<int64_t> dims) {
    SmallVector<AffineExpr> e;
    for (int64_t d : dims)
      e.push_back(d < 0 ? getAffineConstantExpr(0, b.getContext())
                        : getAffineDimExpr(d, b.getContext()));
    return AffineMap::get(n, 0, e, b.getContext());
  }

  static SmallVector<IteratorType> iters(unsigned par, unsigned red) {
    SmallVector<IteratorType> it(par, IteratorType::parallel);
    it.append(red, IteratorType::reduction);
    return it;
  }

  Value ext(OpBuilder &b, Location loc, Value x) {
    return x.getType() == f32 ? x : arith::ExtFOp::create(b, loc, f32, x);
  }

  /// Slice of q (or out) holding heads [g*R, g*R+R) and rows [q0, q0+qs):
  /// [1, R, qs, D] (bhnd) or [1, qs, R, D] (bnhd).
  SmallVector<OpFoldResult> headRowOffsets(Value bIdx, Value h0, Value q0) {
    if (layout == Layout::bhnd)
      return {bIdx, h0, q0, OpFoldResult(OpBuilder(op).getIndexAttr(0))};
    return {bIdx, q0, h0, OpFoldResult(OpBuilder(op).getIndexAttr(0))};
  }
  SmallVector<OpFoldResult> headRowSizes(OpBuilder &b, OpFoldResult r, Value qs,
                                         Value d) {
    if (layout == Layout::bhnd)
      return {b.getIndexAttr(1), r, qs, d};
    return {b.getIndexAttr(1), qs, r, d};
  }

  /// Register-tile shape of the vector microkernel: kMR rows by kNW lanes
  /// (two 512-bit vectors), i.e. 16 accumulator registers.
  static constexpr int64_t kMR = 8, kNW = 32;

  /// C[r, i, j] += sum_k A(r, i, k) * Brow(k)[j] on an f32 tensor C of shape
  /// [R, M, N] with M % kMR == 0 and N % kNW == 0 (checked by the caller):
  /// an outer-product microkernel that keeps a kMR x kNW block of C in
  /// vector registers over the whole k loop, broadcasting one A scalar per
  /// row and reading one contiguous kNW-wide row of B per k.
  ///
  /// `zeroInit`: the block starts from 0 instead of C's values (C may be
  /// uninitialized). `guard`: a zero A scalar contributes nothing, whatever
  /// B holds (0 * NaN would be NaN): the FMA is masked by A != 0, which is
  /// how masked keys (weight exactly 0) stay out of P V.
  Value microkernel(
      OpBuilder &b, Location loc, Value c, Value m, Value n, Value kEnd,
      function_ref<Value(OpBuilder &, Location, Value, Value, Value)> readA,
      function_ref<Value(OpBuilder &, Location, Value, Value)> readB,
      bool zeroInit = false, bool guard = false) {
    IndexMath im{b, loc};
    auto vecTy = VectorType::get({kNW}, f32);
    Value zero = im.c(0), one = im.c(1);
    auto rLoop = scf::ForOp::create(
        b, loc, zero, groups, one, ValueRange{c},
        [&](OpBuilder &b1, Location l1, Value r, ValueRange c1) {
          // Column blocks outside, row blocks inside: the kNW-wide panel
          // of B stays in L1 while every row block of A passes over it.
          auto iLoop = scf::ForOp::create(
              b1, l1, zero, n, im.c(kNW), c1,
              [&](OpBuilder &b2, Location l2, Value j0, ValueRange c2) {
                auto jLoop = scf::ForOp::create(
                    b2, l2, zero, m, im.c(kMR), c2,
                    [&](OpBuilder &b3, Location l3, Value i0, ValueRange c3) {
                      IndexMath m3{b3, l3};
                      Value pad = arith::ConstantOp::create(
                          b3, l3, b3.getF32FloatAttr(0.0));
                      SmallVector<bool> inBounds = {true};
                      SmallVector<Value> accs;
                      Value zeros;
                      if (zeroInit)
                        zeros = splatConstant(b3, l3, vecTy, 0.0);
                      for (int64_t ii = 0; ii < kMR; ++ii)
                        accs.push_back(
                            zeroInit
                                ? zeros
                                : Value(vector::TransferReadOp::create(
                                      b3, l3, vecTy, c3[0],
                                      ValueRange{r, m3.add(i0, m3.c(ii)), j0},
                                      pad, inBounds)));
                      auto kLoop = scf::ForOp::create(
                          b3, l3, zero, kEnd, one, accs,
                          [&](OpBuilder &b4, Location l4, Value k,
                              ValueRange a4) {
                            IndexMath m4{b4, l4};
                            Value row = readB(b4, l4, k, j0);
                            SmallVector<Value> next;
                            for (int64_t ii = 0; ii < kMR; ++ii) {
                              Value a =
                                  readA(b4, l4, r, m4.add(i0, m4.c(ii)), k);
                              Value splat =
                                  vector::BroadcastOp::create(b4, l4, vecTy, a);
                              Value fma = vector::FMAOp::create(b4, l4, splat,
                                                                row, a4[ii]);
                              if (guard) {
                                // A lane-wise condition (not a scalar one,
                                // which LLVM turns into a branch per row):
                                // a masked FMA.
                                Value zero = splatConstant(b4, l4, vecTy, 0.0);
                                Value isZero = arith::CmpFOp::create(
                                    b4, l4, arith::CmpFPredicate::OEQ, splat,
                                    zero);
                                fma = arith::SelectOp::create(b4, l4, isZero,
                                                              a4[ii], fma);
                              }
                              next.push_back(fma);
                            }
                            scf::YieldOp::create(b4, l4, next);
                          });
                      Value out = c3[0];
                      for (int64_t ii = 0; ii < kMR; ++ii)
                        out = vector::TransferWriteOp::create(
                                  b3, l3, kLoop.getResult(ii), out,
                                  ValueRange{r, m3.add(i0, m3.c(ii)), j0},
                                  inBounds)
                                  .getResult();
                      scf::YieldOp::create(b3, l3, out);
                    });
                scf::YieldOp::create(b2, l2, jLoop.getResult(0));
              });
          scf::YieldOp::create(b1, l1, iLoop.getResult(0));
        });
    return rLoop.getResult(0);
  }

  /// Indices of row j, column `col` of a K or V tile ([1, 1, ks, D] or
  /// [1, ks, 1, D]); `zero` is an index constant 0.
  SmallVector<Value> kvIndex(Value zero, Value j, Value col) {
    if (layout == Layout::bhnd)
      return {zero, zero, j, col};
    return {zero, j, zero, col};
  }
  /// Indices of head r, row i, column `col` of a query or out tile
  /// ([1, R, qs, D] or [1, qs, R, D]).
  SmallVector<Value> headRowIndex(Value zero, Value r, Value i, Value col) {
    if (layout == Layout::bhnd)
      return {zero, r, i, col};
    return {zero, i, r, col};
  }
  /// A vector constant with every lane `v`.
  static Value splatConstant(OpBuilder &b, Location loc, VectorType type,
                             double v) {
    return arith::ConstantOp::create(
        b, loc, type,
        DenseElementsAttr::get(type, b.getFloatAttr(type.getElementType(), v)));
  }

  /// A static size, or kDynamic.
  static int64_t staticSize(Value v) {
    if (auto c = getConstantIntValue(v))
      return *c;
    return ShapedType::kDynamic;
  }

  /// Reads `width` lanes of a K, V or Q tile row (any element type) at
  /// `idx`, extended to f32; lanes past the row's end read 0.
  Value readRow(OpBuilder &b, Location loc, Value tile, ValueRange idx,
                int64_t width, bool inBounds) {
    auto tileTy = cast<RankedTensorType>(tile.getType());
    Type e = tileTy.getElementType();
    Value pad = arith::ConstantOp::create(b, loc, b.getZeroAttr(e));
    SmallVector<bool> ib = {inBounds};
    Value x = vector::TransferReadOp::create(
        b, loc, VectorType::get({width}, e), tile, idx, pad, ib);
    if (e != f32)
      x = arith::ExtFOp::create(b, loc, VectorType::get({width}, f32), x);
    return x;
  }

  /// S[r, i, j] = q[r, i, :] . k[j, :] for any tile shape and element type,
  /// as vector code: one key row at a time against every query row of the
  /// tile, the d loop in 16-lane chunks (unrolled into independent
  /// accumulators when Dqk is static), one horizontal sum per logit. This is
  /// what decode tiles (R x 1 rows) and tails run.
  Value rowwiseQK(OpBuilder &b, Location loc, Value qTile, Value kTile,
                  Value sInit, Value qs, Value ks) {
    IndexMath im{b, loc};
    auto vecTy = VectorType::get({kVW}, f32);
    Value zero = im.c(0), one = im.c(1);
    int64_t d = staticSize(dqk);
    bool dInBounds = !ShapedType::isDynamic(d) && d % kVW == 0;
    auto zeros = [&](OpBuilder &nb, Location nl) -> Value {
      return splatConstant(nb, nl, vecTy, 0.0);
    };
    auto qIdx = [&](Value r, Value i, Value d0) {
      return headRowIndex(zero, r, i, d0);
    };
    auto kIdx = [&](Value j, Value d0) { return kvIndex(zero, j, d0); };
    // sum_d q[r, i, d] k[j, d] as a 16-lane vector.
    auto dot = [&](OpBuilder &nb, Location nl, Value r, Value i,
                   Value j) -> Value {
      IndexMath m{nb, nl};
      auto chunk = [&](OpBuilder &cb, Location cl, Value d0, Value acc) {
        Value qv = readRow(cb, cl, qTile, qIdx(r, i, d0), kVW, dInBounds);
        Value kv = readRow(cb, cl, kTile, kIdx(j, d0), kVW, dInBounds);
        return Value(vector::FMAOp::create(cb, cl, qv, kv, acc));
      };
      if (!ShapedType::isDynamic(d) && d <= 16 * kVW) {
        // Unrolled, four independent chains.
        int64_t chunks = llvm::divideCeil(d, kVW);
        SmallVector<Value> accs(std::min<int64_t>(chunks, 4), zeros(nb, nl));
        for (int64_t c = 0; c < chunks; ++c)
          accs[c % accs.size()] =
              chunk(nb, nl, m.c(c * kVW), accs[c % accs.size()]);
        Value sum = accs[0];
        for (size_t a = 1; a < accs.size(); ++a)
          sum = arith::AddFOp::create(nb, nl, sum, accs[a], kFast);
        return sum;
      }
      auto loop = scf::ForOp::create(
          nb, nl, zero, dqk, m.c(kVW), ValueRange{zeros(nb, nl)},
          [&](OpBuilder &lb, Location ll, Value d0, ValueRange it) {
            scf::YieldOp::create(lb, ll, chunk(lb, ll, d0, it[0]));
          });
      return loop.getResult(0);
    };
    auto jLoop = scf::ForOp::create(
        b, loc, zero, ks, one, ValueRange{sInit},
        [&](OpBuilder &b1, Location l1, Value j, ValueRange it1) {
          auto rLoop = scf::ForOp::create(
              b1, l1, zero, groups, one, it1,
              [&](OpBuilder &b2, Location l2, Value r, ValueRange it2) {
                auto iLoop = scf::ForOp::create(
                    b2, l2, zero, qs, one, it2,
                    [&](OpBuilder &b3, Location l3, Value i, ValueRange it3) {
                      Value sum = vector::ReductionOp::create(
                          b3, l3, vector::CombiningKind::ADD,
                          dot(b3, l3, r, i, j), /*acc=*/Value(), kFast);
                      scf::YieldOp::create(
                          b3, l3,
                          Value(tensor::InsertOp::create(b3, l3, sum, it3[0],
                                                         ValueRange{r, i, j})));
                    });
                scf::YieldOp::create(b2, l2, iLoop.getResults());
              });
          scf::YieldOp::create(b1, l1, rLoop.getResults());
        });
    return jLoop.getResult(0);
  }

  /// acc[r, i, :] += sum_j P[r, i, j] v[j, :] for any tile shape and element
  /// type, as vector code. The R x qs rows of the tile go in blocks of
  /// kPVRows (then one by one for the rest); per block, up to four 16-lane
  /// accumulators of Dv per row stay in registers across the key loop, and
  /// each V row chunk is read once for the whole block (decode's R x 1 rows
  /// read the V tile once per Dv chunk instead of once per row). `guard`: a
  /// weight of exactly 0 (a masked key) adds nothing, even against NaN or inf
  /// in v.
  static constexpr int64_t kPVRows = 4;
  Value rowwisePV(OpBuilder &b, Location loc, Value acc, Value p, Value vTile,
                  Value qs, Value ks, bool guard) {
    IndexMath im{b, loc};
    auto vecTy = VectorType::get({kVW}, f32);
    Value zero = im.c(0), one = im.c(1);
    int64_t e = staticSize(dv);
    int64_t width = 4;
    if (!ShapedType::isDynamic(e))
      width = std::clamp<int64_t>(llvm::divideCeil(e, kVW), 1, 4);
    bool eInBounds = !ShapedType::isDynamic(e) && e % (width * kVW) == 0;
    SmallVector<bool> ib = {eInBounds};
    // Rows [lo, hi) in blocks of `block`; row n is (r, i) = (n / qs, n % qs).
    auto rowBlocks = [&](OpBuilder &b0, Location l0, Value lo, Value hi,
                         int64_t block, Value init) -> Value {
      IndexMath m0{b0, l0};
      auto nLoop = scf::ForOp::create(
          b0, l0, lo, hi, m0.c(block), ValueRange{init},
          [&](OpBuilder &b1, Location l1, Value n0, ValueRange it1) {
            IndexMath m1{b1, l1};
            SmallVector<Value> rs, is;
            for (int64_t rb = 0; rb < block; ++rb) {
              Value n = m1.add(n0, m1.c(rb));
              rs.push_back(arith::DivUIOp::create(b1, l1, n, qs));
              is.push_back(arith::RemUIOp::create(b1, l1, n, qs));
            }
            auto eLoop = scf::ForOp::create(
                b1, l1, zero, dv, im.c(width * kVW), it1,
                [&](OpBuilder &b3, Location l3, Value e0, ValueRange it3) {
                  IndexMath m3{b3, l3};
                  Value pad = arith::ConstantOp::create(
                      b3, l3, b3.getF32FloatAttr(0.0));
                  SmallVector<Value> accs, cols;
                  for (int64_t c = 0; c < width; ++c)
                    cols.push_back(m3.add(e0, m3.c(c * kVW)));
                  for (int64_t rb = 0; rb < block; ++rb)
                    for (int64_t c = 0; c < width; ++c)
                      accs.push_back(vector::TransferReadOp::create(
                          b3, l3, vecTy, it3[0],
                          ValueRange{rs[rb], is[rb], cols[c]}, pad, ib));
                  auto kLoop = scf::ForOp::create(
                      b3, l3, zero, ks, one, accs,
                      [&](OpBuilder &b4, Location l4, Value j, ValueRange a4) {
                        Value z = arith::ConstantIndexOp::create(b4, l4, 0);
                        SmallVector<Value> vv;
                        for (int64_t c = 0; c < width; ++c)
                          vv.push_back(readRow(b4, l4, vTile,
                                               kvIndex(z, j, cols[c]), kVW,
                                               eInBounds));
                        SmallVector<Value> next;
                        for (int64_t rb = 0; rb < block; ++rb) {
                          Value w = tensor::ExtractOp::create(
                              b4, l4, p, ValueRange{rs[rb], is[rb], j});
                          Value splat =
                              vector::BroadcastOp::create(b4, l4, vecTy, w);
                          Value isZero;
                          if (guard)
                            isZero = arith::CmpFOp::create(
                                b4, l4, arith::CmpFPredicate::OEQ, splat,
                                splatConstant(b4, l4, vecTy, 0.0));
                          for (int64_t c = 0; c < width; ++c) {
                            Value prev = a4[rb * width + c];
                            Value f = vector::FMAOp::create(b4, l4, splat,
                                                            vv[c], prev);
                            if (guard)
                              f = arith::SelectOp::create(b4, l4, isZero, prev,
                                                          f);
                            next.push_back(f);
                          }
                        }
                        scf::YieldOp::create(b4, l4, next);
                      });
                  Value out = it3[0];
                  for (int64_t rb = 0; rb < block; ++rb)
                    for (int64_t c = 0; c < width; ++c)
                      out = vector::TransferWriteOp::create(
                                b3, l3, kLoop.getResult(rb * width + c), out,
                                ValueRange{rs[rb], is[rb], cols[c]}, ib)
                                .getResult();
                  scf::YieldOp::create(b3, l3, out);
                });
            scf::YieldOp::create(b1, l1, eLoop.getResults());
          });
      return nLoop.getResult(0);
    };
    Value rows = im.mul(groups, qs);
    Value blocked =
        im.sub(rows, arith::RemUIOp::create(b, loc, rows, im.c(kPVRows)));
    Value out = rowBlocks(b, loc, zero, blocked, kPVRows, acc);
    return rowBlocks(b, loc, blocked, rows, 1, out);
  }

  /// kT[d, j] = K[j, d] for an f32 K tile with Dqk and `ks` multiples of 16:
  /// 16 x 16 blocks read as 16 row vectors, transposed in registers
  /// (`vector.transpose`, lowered to AVX-512 shuffles by the pipeline's
  /// `vector-transpose-lowering=shuffle16x16`) and written as 16 rows.
  Value packTransposed(OpBuilder &b, Location loc, Value kTile, Value kT,
                       Value ks) {
    IndexMath im{b, loc};
    auto rowTy = VectorType::get({kVW}, f32);
    auto blockTy = VectorType::get({kVW, kVW}, f32);
    Value zero = im.c(0), step = im.c(kVW);
    SmallVector<bool> ib = {true};
    auto jLoop = scf::ForOp::create(
        b, loc, zero, ks, step, ValueRange{kT},
        [&](OpBuilder &b1, Location l1, Value j0, ValueRange it1) {
          auto dLoop = scf::ForOp::create(
              b1, l1, zero, dqk, step, it1,
              [&](OpBuilder &b2, Location l2, Value d0, ValueRange it2) {
                IndexMath m{b2, l2};
                Value pad =
                    arith::ConstantOp::create(b2, l2, b2.getF32FloatAttr(0.0));
                Value block = splatConstant(b2, l2, blockTy, 0.0);
                for (int64_t jj = 0; jj < kVW; ++jj) {
                  Value j = m.add(j0, m.c(jj));
                  SmallVector<Value> idx = kvIndex(zero, j, d0);
                  Value row = vector::TransferReadOp::create(
                      b2, l2, rowTy, kTile, idx, pad, ib);
                  block = vector::InsertOp::create(b2, l2, row, block,
                                                   ArrayRef<int64_t>{jj});
                }
                Value t = vector::TransposeOp::create(b2, l2, block,
                                                      ArrayRef<int64_t>{1, 0});
                Value out = it2[0];
                for (int64_t dd = 0; dd < kVW; ++dd) {
                  Value row = vector::ExtractOp::create(b2, l2, t,
                                                        ArrayRef<int64_t>{dd});
                  out = vector::TransferWriteOp::create(
                            b2, l2, row, out,
                            ValueRange{m.add(d0, m.c(dd)), j0}, ib)
                            .getResult();
                }
                scf::YieldOp::create(b2, l2, out);
              });
          scf::YieldOp::create(b1, l1, dLoop.getResults());
        });
    return jLoop.getResult(0);
  }

  /// Whether every value of a V tile [ks, Dv] (in the op's layout) is
  /// finite: the sum of v * 0 over the tile is 0 exactly when no element is
  /// a NaN or an infinity (strict float semantics, no fast-math flags).
  Value allFinite(OpBuilder &b, Location loc, Value vTile, Value ks) {
    IndexMath im{b, loc};
    auto vecTy = VectorType::get({kVW}, f32);
    Value zero = im.c(0), one = im.c(1);
    int64_t e = staticSize(dv);
    bool eInBounds = !ShapedType::isDynamic(e) && e % kVW == 0;
    Value zeros = splatConstant(b, loc, vecTy, 0.0);
    auto jLoop = scf::ForOp::create(
        b, loc, zero, ks, one, ValueRange{zeros},
        [&](OpBuilder &b1, Location l1, Value j, ValueRange it1) {
          auto eLoop = scf::ForOp::create(
              b1, l1, zero, dv, im.c(kVW), it1,
              [&](OpBuilder &b2, Location l2, Value e0, ValueRange it2) {
                SmallVector<Value> idx = kvIndex(zero, j, e0);
                Value v = readRow(b2, l2, vTile, idx, kVW, eInBounds);
                Value z = arith::MulFOp::create(b2, l2, v, zeros);
                scf::YieldOp::create(
                    b2, l2, Value(arith::AddFOp::create(b2, l2, it2[0], z)));
              });
          scf::YieldOp::create(b1, l1, eLoop.getResults());
        });
    Value sum = vector::ReductionOp::create(b, loc, vector::CombiningKind::ADD,
                                            jLoop.getResult(0));
    return arith::CmpFOp::create(
        b, loc, arith::CmpFPredicate::OEQ, sum,
        arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0)));
  }

  /// Whether `x` is a multiple of `n` (an i1 value).
  Value divisible(OpBuilder &b, Location loc, Value x, int64_t n) {
    IndexMath m{b, loc};
    Value rem = arith::RemSIOp::create(b, loc, x, m.c(n));
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rem, m.c(0));
  }

  /// Runs `fast` when `cond` holds and `slow` otherwise; both produce a
  /// tensor of `c`'s type.
  Value branch(OpBuilder &b, Location loc, Value cond, Value c,
               function_ref<Value(OpBuilder &, Location)> fast,
               function_ref<Value(OpBuilder &, Location)> slow) {
    auto ifOp = scf::IfOp::create(
        b, loc, cond,
        [&](OpBuilder &tb, Location tl) {
          Value v = fast(tb, tl);
          if (v.getType() != c.getType())
            v = tensor::CastOp::create(tb, tl, c.getType(), v);
          scf::YieldOp::create(tb, tl, v);
        },
        [&](OpBuilder &eb, Location el) {
          Value v = slow(eb, el);
          if (v.getType() != c.getType())
            v = tensor::CastOp::create(eb, el, c.getType(), v);
          scf::YieldOp::create(eb, el, v);
        });
    return ifOp.getResult(0);
  }

  /// q[r, i, d] of a query tile in the op's layout.
  Value readQ(OpBuilder &b, Location loc, Value qTile, Value r, Value i,
              Value d) {
    Value z = arith::ConstantIndexOp::create(b, loc, 0);
    if (layout == Layout::bhnd)
      return tensor::ExtractOp::create(b, loc, qTile, ValueRange{z, r, i, d});
    return tensor::ExtractOp::create(b, loc, qTile, ValueRange{z, i, r, d});
  }

  /// Processes key tiles [ktLo, ktHi) of one query tile and returns the
  /// updated running state.
  State walkKeyTiles(OpBuilder &b, Location loc, Value bIdx, Value gIdx,
                     Value qt, Value q0, Value qs, Value kvLen, Value ktLo,
                     Value ktHi, State init) {
    IndexMath im{b, loc};
    Value h0 = im.mul(gIdx, groups);
    auto sizes1 = [&](ArrayRef<OpFoldResult> s) {
      return SmallVector<OpFoldResult>(s.size(), b.getIndexAttr(1));
    };
    SmallVector<OpFoldResult> qOff = headRowOffsets(bIdx, h0, q0);
    SmallVector<OpFoldResult> qSz = headRowSizes(b, groups, qs, dqk);
    Value qTile = tensor::ExtractSliceOp::create(b, loc, op.getQuery(), qOff,
                                                 qSz, sizes1(qSz));
    Value tk = im.c(tileK);

    auto loop = scf::ForOp::create(
        b, loc, ktLo, ktHi, im.c(1), ValueRange{init.m, init.l, init.acc},
        [&](OpBuilder &lb, Location l, Value kt, ValueRange iter) {
          IndexMath m{lb, l};
          Value k0 = m.mul(kt, tk);
          Value ks = m.min(tk, m.sub(nk, k0));
          SmallVector<OpFoldResult> kOff =
              layout == Layout::bhnd
                  ? SmallVector<OpFoldResult>{bIdx, gIdx, k0,
                                              lb.getIndexAttr(0)}
                  : SmallVector<OpFoldResult>{bIdx, k0, gIdx,
                                              lb.getIndexAttr(0)};
          auto kvSizes = [&](Value d) {
            return layout == Layout::bhnd
                       ? SmallVector<OpFoldResult>{lb.getIndexAttr(1),
                                                   lb.getIndexAttr(1), ks, d}
                       : SmallVector<OpFoldResult>{lb.getIndexAttr(1), ks,
                                                   lb.getIndexAttr(1), d};
          };
          SmallVector<OpFoldResult> kSz = kvSizes(dqk), vSz = kvSizes(dv);
          Value kTile = tensor::ExtractSliceOp::create(lb, l, op.getKey(), kOff,
                                                       kSz, sizes1(kSz));
          Value vTile = tensor::ExtractSliceOp::create(lb, l, op.getValue(),
                                                       kOff, vSz, sizes1(vSz));

          bool bhnd = layout == Layout::bhnd;
          // Scratch tiles are sized by loop-invariant values (the query
          // tile's rows, the static tile width) and sliced to this tile, so
          // that --attn-hoist-loop-buffers allocates them once per query
          // tile instead of once per key tile.
          auto scratch = [&](OpBuilder &sb, Location sl,
                             SmallVector<OpFoldResult> sizes,
                             Type type) -> Value {
            SmallVector<OpFoldResult> full(sizes);
            full.back() = sb.getIndexAttr(tileK);
            Value e = tensor::EmptyOp::create(sb, sl, full, type);
            SmallVector<OpFoldResult> zeros(sizes.size(), sb.getIndexAttr(0));
            return tensor::ExtractSliceOp::create(sb, sl, e, zeros, sizes,
                                                  sizes1(sizes));
          };
          SmallVector<OpFoldResult> sShape = {groups, qs, ks};
          Value sTile = scratch(lb, l, sShape, f32);
          // Partial tiles and few rows (decode): dot products over d on the
          // K tile as it is (loops (r, i, j, d); reassoc lets LLVM vectorize
          // the reduction), no packing.
          auto dotQK = [&](OpBuilder &nb0, Location nl0) -> Value {
            return rowwiseQK(nb0, nl0, qTile, kTile, sTile, qs, ks);
          };
          // Whole register tiles: pack the K tile transposed, kT[d, j], once
          // (it is shared by the R query heads and every row of the query
          // tile), then the vector microkernel broadcasts q[r, i, d] against
          // contiguous rows of kT.
          auto packedQK = [&](OpBuilder &fb, Location fl) -> Value {
            Value kT = scratch(fb, fl, {dqk, ks}, elt);
            int64_t d = staticSize(dqk);
            if (!ShapedType::isDynamic(d) && d % kVW == 0) {
              kT = packTransposed(fb, fl, kTile, kT, ks);
            } else {
              AffineMap kMap = bhnd ? map(fb, 2, {-1, -1, 1, 0})
                                    : map(fb, 2, {-1, 1, -1, 0});
              kT = linalg::GenericOp::create(
                       fb, fl, kT.getType(), kTile, kT,
                       {kMap, map(fb, 2, {0, 1})}, iters(2, 0),
                       [&](OpBuilder &nb, Location nl, ValueRange a) {
                         linalg::YieldOp::create(nb, nl, a[0]);
                       })
                       .getResult(0);
            }
            return microkernel(
                fb, fl, sTile, qs, ks, dqk,
                [&](OpBuilder &ab, Location al, Value r, Value i, Value d) {
                  return readQ(ab, al, qTile, r, i, d);
                },
                [&](OpBuilder &bb, Location bl, Value d, Value j0) {
                  Value pad = arith::ConstantOp::create(
                      bb, bl, bb.getF32FloatAttr(0.0));
                  SmallVector<bool> inBounds = {true};
                  return Value(vector::TransferReadOp::create(
                      bb, bl, VectorType::get({kNW}, f32), kT,
                      ValueRange{d, j0}, pad, inBounds));
                },
                /*zeroInit=*/true);
          };
          Value s;
          if (elt == f32) {
            Value fits =
                m.andI(divisible(lb, l, qs, kMR), divisible(lb, l, ks, kNW));
            auto sType = RankedTensorType::get({ShapedType::kDynamic,
                                                ShapedType::kDynamic,
                                                ShapedType::kDynamic},
                                               f32);
            s = branch(lb, l, fits,
                       tensor::EmptyOp::create(lb, l, sType.getShape(), f32,
                                               ValueRange{groups, qs, ks}),
                       packedQK, dotQK);
          } else {
            s = dotQK(lb, l);
          }

          // Logits: full tiles skip the structural mask arithmetic.
          Value full = isFullTile(lb, l, q0, qs, k0, ks, kvLen);
          if (instrument) {
            auto i64 = lb.getI64Type();
            auto cast = [&](Value v) -> Value {
              return arith::IndexCastOp::create(lb, l, i64, v);
            };
            Value boundary = arith::XOrIOp::create(
                lb, l, full,
                arith::ConstantOp::create(lb, l, lb.getBoolAttr(true)));
            func::CallOp::create(lb, l, kTileVisitFn, TypeRange{},
                                 ValueRange{cast(bIdx), cast(gIdx), cast(qt),
                                            cast(kt), boundary});
          }
          // With softmax and logits that are just `scale * q.k` plus the
          // structural masks (no soft cap, bias, ALiBi or mask tensor), the
          // score tile keeps its raw dot products: the vector softmax step
          // applies the scale and, per row, the readable key interval as it
          // reads them. Otherwise a logit generic writes the final logits
          // (full tiles skip the structural mask arithmetic).
          bool vectorLogits = softmax && !lctx.softcap && !op.getBias() &&
                              !op.getAlibiSlopes() && !op.getMask();
          RowLogits rowLogits;
          if (vectorLogits) {
            rowLogits.scale = lctx.scale;
            rowLogits.keys = [&, q0, k0, ks, kvLen](OpBuilder &rb, Location rl,
                                                    Value i) {
              IndexMath rm{rb, rl};
              auto [lo, hi] = keyRange(rb, rl, rm.add(q0, i), rm.c(1), kvLen);
              return std::make_pair(rm.sub(lo, k0), rm.min(rm.sub(hi, k0), ks));
            };
          } else {
            auto ifOp = scf::IfOp::create(
                lb, l, full,
                [&](OpBuilder &tb, Location tl) {
                  scf::YieldOp::create(
                      tb, tl,
                      logits(tb, tl, s, bIdx, h0, q0, k0, kvLen, false));
                },
                [&](OpBuilder &eb, Location el) {
                  scf::YieldOp::create(
                      eb, el, logits(eb, el, s, bIdx, h0, q0, k0, kvLen, true));
                });
            s = ifOp.getResult(0);
          }

          State st{iter[0], iter[1], iter[2]};
          State next = update(lb, l, st, s, vTile, qs, full, rowLogits);
          scf::YieldOp::create(lb, l, ValueRange{next.m, next.l, next.acc});
        });
    return {loop.getResult(0), loop.getResult(1), loop.getResult(2)};
  }

  /// The logit generic over one [R, qs, ks] score tile. Mask, bias, kv_len
  /// and ALiBi operands are read with tensor.extract at absolute indices.
  Value logits(OpBuilder &b, Location loc, Value s, Value bIdx, Value h0,
               Value q0, Value k0, Value kvLen, bool structural) {
    auto ty = cast<RankedTensorType>(s.getType());
    return linalg::GenericOp::create(
               b, loc, ty, ValueRange{}, s, {map(b, 3, {0, 1, 2})}, iters(3, 0),
               [&](OpBuilder &nb, Location nl, ValueRange a) {
                 IndexMath m{nb, nl};
                 Value r = linalg::IndexOp::create(nb, nl, 0);
                 Value h = m.add(h0, r);
                 Value i = m.add(q0, linalg::IndexOp::create(nb, nl, 1));
                 Value j = m.add(k0, linalg::IndexOp::create(nb, nl, 2));
                 LogitOperands in;
                 in.raw = a[0];
                 in.i = i;
                 in.j = j;
                 in.kvLen = kvLen;
                 SmallVector<Value, 4> logical = {bIdx, h, i, j};
                 if (Value mask = op.getMask())
                   in.maskBit = extractBroadcast(nb, nl, mask, logical);
                 if (Value bias = op.getBias())
                   in.bias = extractBroadcast(nb, nl, bias, logical);
                 if (Value slopes = op.getAlibiSlopes())
                   in.slope = tensor::ExtractOp::create(nb, nl, slopes, h);
                 Value out = structural ? buildLogit(nb, nl, lctx, in)
                                        : buildUnmaskedLogit(nb, nl, lctx, in);
                 linalg::YieldOp::create(nb, nl, out);
               })
        .getResult(0);
  }

  /// Reads a tensor broadcastable to [B, Hq, Nq, Nk] at logical indices.
  Value extractBroadcast(OpBuilder &b, Location loc, Value t,
                         ArrayRef<Value> logical) {
    auto type = cast<RankedTensorType>(t.getType());
    int64_t offset = 4 - type.getRank();
    SmallVector<Value> idx;
    for (int64_t d = 0; d < type.getRank(); ++d)
      idx.push_back(type.getDimSize(d) == 1
                        ? arith::ConstantIndexOp::create(b, loc, 0)
                        : logical[offset + d]);
    return tensor::ExtractOp::create(b, loc, t, idx);
  }

  /// Lanes of the vector code of the softmax step (one 512-bit register).
  static constexpr int64_t kVW = 16;

  /// How the softmax step turns raw scores into logits: x = scale * s on
  /// the keys [lo, hi) (relative to the tile) that row i may read, -inf on
  /// the others. Null members: s already holds the logits.
  struct RowLogits {
    Value scale;
    std::function<std::pair<Value, Value>(OpBuilder &, Location, Value)> keys;
  };

  /// The online-softmax bookkeeping of one score tile as explicit vector
  /// code, row by row (every row of the tile stays in L1 between the two
  /// sweeps):
  ///   x    = s[r, i, :], or the logits of `rowLogits` from raw scores
  ///   m'   = max(m, max_j x);  safe = (m' == -inf ? 0 : m')
  ///   a    = exp(m - safe)
  ///   P    = exp(x - safe), written over s;  l' = a l + sum_j P
  ///   acc[r, i, :] *= a
  /// Lanes past the tile's end are masked. A NaN logit does not enter the
  /// row max (maxnumf) but makes its weight, the row sum and so the row's
  /// out and lse NaN, as the contract says.
  std::pair<State, Value> softmaxStep(OpBuilder &b, Location loc, State st,
                                      Value s, Value qs,
                                      const RowLogits &rowLogits) {
    IndexMath im{b, loc};
    auto vecTy = VectorType::get({kVW}, f32);
    auto maskTy = VectorType::get({kVW}, b.getI1Type());
    Value zero = im.c(0), one = im.c(1), step = im.c(kVW);
    Value ks = tensor::DimOp::create(b, loc, s, 2);
    auto fconst = [&](OpBuilder &nb, Location nl, double v) -> Value {
      return arith::ConstantOp::create(nb, nl, nb.getF32FloatAttr(v));
    };
    auto splat = [&](OpBuilder &nb, Location nl, Value x) -> Value {
      return vector::BroadcastOp::create(nb, nl, vecTy, x);
    };
    SmallVector<bool> oob = {false};
    // The logits of row (r, i) at columns j0 + [0, kVW), -inf on the lanes
    // outside `mask`.
    auto readRow = [&](OpBuilder &nb, Location nl, Value t, Value r, Value i,
                       Value j0, Value mask) -> Value {
      Value x = vector::TransferReadOp::create(
          nb, nl, vecTy, t, ValueRange{r, i, j0}, fconst(nb, nl, kNegInf),
          ArrayRef<bool>{!mask});
      if (rowLogits.scale)
        x = arith::MulFOp::create(nb, nl, x, splat(nb, nl, rowLogits.scale));
      if (!mask)
        return x;
      return arith::SelectOp::create(nb, nl, mask, x,
                                     splat(nb, nl, fconst(nb, nl, kNegInf)));
    };
    // x - safe for the logits of row (r, i) at columns j0 + [0, kVW) (as
    // readRow, -inf outside `mask`). Not one FMA raw * scale - safe: the
    // logit is the rounded product, which may overflow to inf (and then
    // inf - inf makes the row NaN, as in the other forms).
    auto shiftedLogits = [&](OpBuilder &nb, Location nl, Value t, Value r,
                             Value i, Value j0, Value mask,
                             Value negSafe) -> Value {
      Value x = readRow(nb, nl, t, r, i, j0, mask);
      return arith::AddFOp::create(nb, nl, x, negSafe);
    };
    // Lanes j0 + [0, kVW) inside [lo, hi) (hi <= ks).
    auto laneMask = [&](OpBuilder &nb, Location nl, Value lo, Value hi,
                        Value j0) -> Value {
      IndexMath m{nb, nl};
      Value below = vector::CreateMaskOp::create(nb, nl, maskTy,
                                                 ValueRange{m.sub(hi, j0)});
      if (!lo)
        return below;
      Value before = vector::CreateMaskOp::create(nb, nl, maskTy,
                                                  ValueRange{m.sub(lo, j0)});
      Value ones = arith::ConstantOp::create(
          nb, nl, maskTy, DenseElementsAttr::get(maskTy, true));
      return arith::AndIOp::create(nb, nl, below,
                                   arith::XOrIOp::create(nb, nl, before, ones));
    };

    // t[r, i, 0:n] *= factor (a splat), in 16-lane chunks.
    auto scaleRow = [&](OpBuilder &nb, Location nl, Value t, Value n, Value r,
                        Value i, Value factor) -> Value {
      auto loop = scf::ForOp::create(
          nb, nl, zero, n, step, ValueRange{t},
          [&](OpBuilder &b3, Location l3, Value j0, ValueRange it3) {
            Value x = vector::TransferReadOp::create(b3, l3, vecTy, it3[0],
                                                     ValueRange{r, i, j0},
                                                     fconst(b3, l3, 0.0), oob);
            x = arith::MulFOp::create(b3, l3, x, factor);
            scf::YieldOp::create(
                b3, l3,
                vector::TransferWriteOp::create(b3, l3, x, it3[0],
                                                ValueRange{r, i, j0}, oob)
                    .getResult());
          });
      return loop.getResult(0);
    };

    auto rLoop = scf::ForOp::create(
        b, loc, zero, groups, one, ValueRange{st.m, st.l, st.acc, s},
        [&](OpBuilder &b1, Location l1, Value r, ValueRange it1) {
          auto iLoop = scf::ForOp::create(
              b1, l1, zero, qs, one, it1,
              [&](OpBuilder &b2, Location l2, Value i, ValueRange it2) {
                Value m = it2[0], l = it2[1], acc = it2[2], p = it2[3];
                Value ninf = fconst(b2, l2, kNegInf);
                Value lo, hi = ks;
                if (rowLogits.keys)
                  std::tie(lo, hi) = rowLogits.keys(b2, l2, i);
                Value mOld =
                    tensor::ExtractOp::create(b2, l2, m, ValueRange{r, i});
                // Sweeps 1 and 2 over the row; `masked`: lanes outside
                // [lo, hi) and past the tile's end are masked, else every
                // lane of the row is a logit (the row's keys are the whole
                // tile, a multiple of kVW wide). Yields m', sum_j P, P.
                auto sweeps = [&](OpBuilder &b5, Location l5,
                                  bool masked) -> SmallVector<Value> {
                  auto maskAt = [&](OpBuilder &nb, Location nl,
                                    Value j0) -> Value {
                    return masked ? laneMask(nb, nl, lo, hi, j0) : Value();
                  };
                  // Sweep 1: the row max.
                  auto maxLoop = scf::ForOp::create(
                      b5, l5, zero, ks, step, ValueRange{splat(b5, l5, ninf)},
                      [&](OpBuilder &b3, Location l3, Value j0,
                          ValueRange it3) {
                        Value x =
                            readRow(b3, l3, p, r, i, j0, maskAt(b3, l3, j0));
                        // max(acc, x) ignoring a NaN x, as a compare and
                        // select (one vmaxps; maxnumf would add NaN
                        // fix-ups): the running max is never NaN.
                        Value gt = arith::CmpFOp::create(
                            b3, l3, arith::CmpFPredicate::OGT, x, it3[0]);
                        scf::YieldOp::create(b3, l3,
                                             Value(arith::SelectOp::create(
                                                 b3, l3, gt, x, it3[0])));
                      });
                  // No NaN lane (see above): a shuffle tree, not a chain of
                  // NaN-aware scalar maxima.
                  Value tileMax = vector::ReductionOp::create(
                      b5, l5, vector::CombiningKind::MAXNUMF,
                      maxLoop.getResult(0), /*acc=*/Value(),
                      arith::FastMathFlags::nnan);
                  Value mNew = arith::MaxNumFOp::create(b5, l5, mOld, tileMax);
                  Value safe = buildSafeMax(b5, l5, mNew);
                  // Sweep 2: P = exp(x - safe) in place, and its row sum.
                  Value negSafe =
                      splat(b5, l5, arith::NegFOp::create(b5, l5, safe));
                  auto sumLoop = scf::ForOp::create(
                      b5, l5, zero, ks, step,
                      ValueRange{splat(b5, l5, fconst(b5, l5, 0.0)), p},
                      [&](OpBuilder &b3, Location l3, Value j0,
                          ValueRange it3) {
                        Value mask = maskAt(b3, l3, j0);
                        auto exp = math::ExpOp::create(
                            b3, l3,
                            shiftedLogits(b3, l3, it3[1], r, i, j0, mask,
                                          negSafe));
                        // x <= m' (or NaN): the short polynomial applies.
                        exp->setAttr(kExpNonPositiveAttr,
                                     UnitAttr::get(b3.getContext()));
                        Value e = exp;
                        if (mask)
                          e = arith::SelectOp::create(
                              b3, l3, mask, e,
                              splat(b3, l3, fconst(b3, l3, 0.0)));
                        Value t = vector::TransferWriteOp::create(
                                      b3, l3, e, it3[1], ValueRange{r, i, j0},
                                      ArrayRef<bool>{!mask})
                                      .getResult();
                        scf::YieldOp::create(
                            b3, l3,
                            ValueRange{
                                arith::AddFOp::create(b3, l3, it3[0], e, kFast),
                                t});
                      });
                  Value rowSum = vector::ReductionOp::create(
                      b5, l5, vector::CombiningKind::ADD, sumLoop.getResult(0),
                      /*acc=*/Value(), kFast);
                  return {mNew, rowSum, sumLoop.getResult(1)};
                };
                // The whole row is readable: no lane masks (most tiles).
                IndexMath m2{b2, l2};
                Value whole = divisible(b2, l2, ks, kVW);
                if (lo)
                  whole = m2.andI(whole, m2.eq(lo, zero));
                if (hi != ks)
                  whole = m2.andI(whole, m2.eq(hi, ks));
                auto wholeIf = scf::IfOp::create(
                    b2, l2, whole,
                    [&](OpBuilder &tb, Location tl) {
                      scf::YieldOp::create(tb, tl, sweeps(tb, tl, false));
                    },
                    [&](OpBuilder &eb, Location el) {
                      scf::YieldOp::create(eb, el, sweeps(eb, el, true));
                    });
                Value mNew = wholeIf.getResult(0);
                Value rowSum = wholeIf.getResult(1);
                Value safe = buildSafeMax(b2, l2, mNew);
                Value alpha = math::ExpOp::create(
                    b2, l2, arith::SubFOp::create(b2, l2, mOld, safe));
                Value lOld =
                    tensor::ExtractOp::create(b2, l2, l, ValueRange{r, i});
                Value lNew = arith::AddFOp::create(
                    b2, l2, arith::MulFOp::create(b2, l2, alpha, lOld), rowSum);
                m = tensor::InsertOp::create(b2, l2, mNew, m, ValueRange{r, i});
                l = tensor::InsertOp::create(b2, l2, lNew, l, ValueRange{r, i});
                // The accumulator is kept scaled by s' = buildRowSumScale(l'),
                // a power of two with l' s' < 1: |acc| stays below the largest
                // |v|, so it cannot overflow f32 where the result is finite
                // (bf16 values near the bf16 maximum), and the scaling is
                // exact. Sweep 3: P *= s'; then acc *= alpha s' / s.
                Value invL = buildRowSumScale(b2, l2, lNew);
                Value scaledP = scaleRow(b2, l2, wholeIf.getResult(2), ks, r, i,
                                         splat(b2, l2, invL));
                Value wOld = arith::MulFOp::create(
                    b2, l2, alpha,
                    arith::DivFOp::create(b2, l2, invL,
                                          buildRowSumScale(b2, l2, lOld)));
                // acc[r, i, :] *= alpha s' / s.
                Value scaledAcc =
                    scaleRow(b2, l2, acc, dv, r, i, splat(b2, l2, wOld));
                scf::YieldOp::create(b2, l2,
                                     ValueRange{m, l, scaledAcc, scaledP});
              });
          scf::YieldOp::create(b1, l1, iLoop.getResults());
        });
    return {State{rLoop.getResult(0), rLoop.getResult(1), rLoop.getResult(2)},
            rLoop.getResult(3)};
  }

  /// One online-softmax step with score tile `s` (logits, or raw scores
  /// that `rowLogits` turns into logits) and V tile. `full` says the tile has
  /// no masked key (so every weight is a real one): only then may the
  /// microkernel multiply weights by V unguarded.
  State update(OpBuilder &b, Location loc, State st, Value s, Value vTile,
               Value qs, Value full, const RowLogits &rowLogits) {
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
    // (boundary tiles, or any tile when a boolean mask tensor is given)
    // whose V tile holds a NaN or an infinity take a guarded P V, so that a
    // masked key contributes nothing whatever its value.
    Value ksAll = tensor::DimOp::create(b, loc, s, 2);
    Value noMasked =
        op.getMask() ? arith::ConstantOp::create(b, loc, b.getBoolAttr(false))
                           .getResult()
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
          scf::YieldOp::create(eb, el, allFinite(eb, el, vTile, ksAll));
        });
    Value unguarded = ifOp.getResult(0);
    auto slowPV = [&](OpBuilder &nb0, Location nl0) -> Value {
      return branch(
          nb0, nl0, unguarded, alphaAcc,
          [&](OpBuilder &gb, Location gl) {
            return rowwisePV(gb, gl, alphaAcc, s, vTile, qs, ksAll, false);
          },
          [&](OpBuilder &gb, Location gl) {
            return rowwisePV(gb, gl, alphaAcc, s, vTile, qs, ksAll, true);
          });
    };
    Value acc;
    if (elt == f32) {
      IndexMath m{b, loc};
      Value ks = tensor::DimOp::create(b, loc, s, 2);
      Value fits =
          m.andI(divisible(b, loc, qs, kMR), divisible(b, loc, dv, kNW));
      auto pv = [&](OpBuilder &fb, Location fl, bool guard) {
        return microkernel(
            fb, fl, alphaAcc, qs, dv, ks,
            [&](OpBuilder &ab, Location al, Value r, Value i, Value j) {
              return Value(
                  tensor::ExtractOp::create(ab, al, s, ValueRange{r, i, j}));
            },
            [&](OpBuilder &bb, Location bl, Value j, Value e0) {
              Value pad =
                  arith::ConstantOp::create(bb, bl, bb.getF32FloatAttr(0.0));
              Value z = arith::ConstantIndexOp::create(bb, bl, 0);
              SmallVector<Value> idx = kvIndex(z, j, e0);
              SmallVector<bool> inBounds = {true};
              return Value(vector::TransferReadOp::create(
                  bb, bl, VectorType::get({kNW}, f32), vTile, idx, pad,
                  inBounds));
            },
            /*zeroInit=*/false, guard);
      };
      acc = branch(
          b, loc, fits, alphaAcc,
          [&](OpBuilder &fb, Location fl) {
            return branch(
                fb, fl, unguarded, alphaAcc,
                [&](OpBuilder &gb, Location gl) { return pv(gb, gl, false); },
                [&](OpBuilder &gb, Location gl) { return pv(gb, gl, true); });
          },
          slowPV);
    } else {
      acc = slowPV(b, loc);
    }
    return {newM, alphaL, acc};
  }

  State initState(OpBuilder &b, Location loc, Value qs) {
    SmallVector<OpFoldResult> rows = {groups, qs};
    SmallVector<OpFoldResult> accShape = {groups, qs, dv};
    return {filled(b, loc, rows, kNegInf), filled(b, loc, rows, 0.0),
            filled(b, loc, accShape, 0.0)};
  }

  /// out tile (in the op's layout, element type) and lse tile [1, R, qs].
  /// `outDest` / `lseDest`: the slices of the forall's shared outputs the
  /// tiles go to (so that bufferization writes them in place, without a
  /// temporary tile and a copy), or null for fresh tiles.
  std::pair<Value, Value> finalize(OpBuilder &b, Location loc, State st,
                                   Value qs, Value outDest = {},
                                   Value lseDest = {}) {
    SmallVector<OpFoldResult> outShape = headRowSizes(b, groups, qs, dv);
    Value out = outDest ? outDest
                        : Value(tensor::EmptyOp::create(b, loc, outShape, elt));
    // Vector code, row by row: out[r, i, :] = acc[r, i, :] / (l s), with the
    // accumulator's scale s (softmaxStep; l s is exact), 0 for a row without
    // keys (l = 0; its acc is 0).
    IndexMath im{b, loc};
    Value zero = im.c(0), one = im.c(1), step = im.c(kVW);
    auto vecTy = VectorType::get({kVW}, f32);
    int64_t e = staticSize(dv);
    SmallVector<bool> ib = {!ShapedType::isDynamic(e) && e % kVW == 0};
    auto rLoop = scf::ForOp::create(
        b, loc, zero, groups, one, ValueRange{out},
        [&](OpBuilder &b1, Location l1, Value r, ValueRange it1) {
          auto iLoop = scf::ForOp::create(
              b1, l1, zero, qs, one, it1,
              [&](OpBuilder &b2, Location l2, Value i, ValueRange it2) {
                Value inv;
                if (softmax) {
                  Value l =
                      tensor::ExtractOp::create(b2, l2, st.l, ValueRange{r, i});
                  Value ls = arith::MulFOp::create(b2, l2, l,
                                                   buildRowSumScale(b2, l2, l));
                  Value oneF =
                      arith::ConstantOp::create(b2, l2, b2.getF32FloatAttr(1));
                  inv = vector::BroadcastOp::create(
                      b2, l2, vecTy, buildNormalizedOutput(b2, l2, oneF, ls));
                }
                auto eLoop = scf::ForOp::create(
                    b2, l2, zero, dv, step, it2,
                    [&](OpBuilder &b3, Location l3, Value e0, ValueRange it3) {
                      Value pad = arith::ConstantOp::create(
                          b3, l3, b3.getF32FloatAttr(0.0));
                      Value o = vector::TransferReadOp::create(
                          b3, l3, vecTy, st.acc, ValueRange{r, i, e0}, pad, ib);
                      if (inv)
                        o = arith::MulFOp::create(b3, l3, o, inv);
                      if (elt != f32)
                        o = arith::TruncFOp::create(
                            b3, l3, VectorType::get({kVW}, elt), o);
                      SmallVector<Value> idx = headRowIndex(zero, r, i, e0);
                      scf::YieldOp::create(b3, l3,
                                           vector::TransferWriteOp::create(
                                               b3, l3, o, it3[0], idx, ib)
                                               .getResult());
                    });
                scf::YieldOp::create(b2, l2, eLoop.getResults());
              });
          scf::YieldOp::create(b1, l1, iLoop.getResults());
        });
    out = rLoop.getResult(0);
    Value lse;
    if (op.getLse()) {
      SmallVector<OpFoldResult> lseShape = {b.getIndexAttr(1), groups, qs};
      lse = lseDest ? lseDest
                    : Value(tensor::EmptyOp::create(b, loc, lseShape, f32));
      lse = linalg::GenericOp::create(
                b, loc, lse.getType(), ValueRange{st.m, st.l}, lse,
                {map(b, 2, {0, 1}), map(b, 2, {0, 1}), map(b, 2, {-1, 0, 1})},
                iters(2, 0),
                [&](OpBuilder &nb, Location nl, ValueRange a) {
                  linalg::YieldOp::create(nb, nl,
                                          buildLogSumExp(nb, nl, a[0], a[1]));
                })
                .getResult(0);
    }
    return {out, lse};
  }

  Value kvLenOf(OpBuilder &b, Location loc, Value bIdx) {
    Value kvLen = op.getKvLen();
    if (!kvLen)
      return nk;
    Value e = tensor::ExtractOp::create(b, loc, kvLen, bIdx);
    return buildClampedKvLen(b, loc, lctx, e);
  }

  /// Empty destinations for out and (if present) lse.
  SmallVector<Value> destinations(OpBuilder &b, Location loc) {
    SmallVector<Value> dests;
    dests.push_back(tensor::EmptyOp::create(
        b, loc,
        tensor::getMixedSizes(b, loc, op.getQuery()).size() == 4
            ? outSizes(b, loc)
            : SmallVector<OpFoldResult>{},
        elt));
    if (op.getLse()) {
      SmallVector<OpFoldResult> s = {batch, hq, nq};
      dests.push_back(tensor::EmptyOp::create(b, loc, s, f32));
    }
    return dests;
  }

  SmallVector<OpFoldResult> outSizes(OpBuilder &b, Location loc) {
    if (layout == Layout::bhnd)
      return {batch, hq, nq, dv};
    return {batch, nq, hq, dv};
  }

  /// Writes an out tile and an lse tile into the forall's shared outputs.
  void insertTiles(OpBuilder &b, Location loc, scf::ForallOp forall, Value bIdx,
                   Value gIdx, Value q0, Value qs, Value outTile,
                   Value lseTile) {
    IndexMath im{b, loc};
    Value h0 = im.mul(gIdx, groups);
    auto ones = [&](size_t n) {
      return SmallVector<OpFoldResult>(n, b.getIndexAttr(1));
    };
    b.setInsertionPointToStart(forall.getTerminator().getBody());
    SmallVector<OpFoldResult> off = headRowOffsets(bIdx, h0, q0);
    SmallVector<OpFoldResult> sz = headRowSizes(b, groups, qs, dv);
    tensor::ParallelInsertSliceOp::create(
        b, loc, outTile, forall.getRegionIterArgs()[0], off, sz, ones(4));
    if (lseTile) {
      SmallVector<OpFoldResult> lo = {bIdx, h0, q0};
      SmallVector<OpFoldResult> ls = {b.getIndexAttr(1), groups, qs};
      tensor::ParallelInsertSliceOp::create(
          b, loc, lseTile, forall.getRegionIterArgs()[1], lo, ls, ones(3));
    }
  }

  SmallVector<Value> castResults(OpBuilder &b, Location loc,
                                 ValueRange results) {
    SmallVector<Value> out;
    for (auto [v, want] : llvm::zip(results, op->getResults())) {
      Value r = v;
      if (r.getType() != want.getType())
        r = tensor::CastOp::create(b, loc, want.getType(), r);
      out.push_back(r);
    }
    return out;
  }

  /// The fused form: forall (b, g, query tile) { walk readable key tiles }.
  SmallVector<Value> buildFused(OpBuilder &b, Location loc) {
    IndexMath im{b, loc};
    Value tq = im.c(tileQ);
    Value numQTiles = im.ceilDiv(nq, tq);
    SmallVector<OpFoldResult> ubs = {batch, hkv, numQTiles};
    auto forall =
        scf::ForallOp::create(b, loc, ubs, destinations(b, loc), std::nullopt);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(forall.getTerminator());
    IndexMath m{b, loc};
    Value bIdx = forall.getInductionVar(0), gIdx = forall.getInductionVar(1),
          qt = forall.getInductionVar(2);
    Value q0 = m.mul(qt, tq);
    Value qs = m.min(tq, m.sub(nq, q0));
    Value kvLen = kvLenOf(b, loc, bIdx);
    auto [lo, hi] = keyRange(b, loc, q0, qs, kvLen);
    Value tk = m.c(tileK);
    auto [ktLo, ktHi] = keyTileRange(b, loc, lo, hi, tk);
    State st = initState(b, loc, qs);
    st = walkKeyTiles(b, loc, bIdx, gIdx, qt, q0, qs, kvLen, ktLo, ktHi, st);
    // The out and lse tiles are computed into slices of the shared outputs
    // and inserted back at the same place: in place after bufferization.
    Value h0 = m.mul(gIdx, groups);
    auto ones = [&](size_t n) {
      return SmallVector<OpFoldResult>(n, b.getIndexAttr(1));
    };
    SmallVector<OpFoldResult> outSz = headRowSizes(b, groups, qs, dv);
    Value outDest = tensor::ExtractSliceOp::create(
        b, loc, forall.getRegionIterArgs()[0], headRowOffsets(bIdx, h0, q0),
        outSz, ones(4));
    Value lseDest;
    if (op.getLse()) {
      SmallVector<OpFoldResult> lo = {bIdx, h0, q0};
      SmallVector<OpFoldResult> ls = {b.getIndexAttr(1), groups, qs};
      lseDest = tensor::ExtractSliceOp::create(
          b, loc, forall.getRegionIterArgs()[1], lo, ls, ones(3));
    }
    auto [outTile, lseTile] = finalize(b, loc, st, qs, outDest, lseDest);
    insertTiles(b, loc, forall, bIdx, gIdx, q0, qs, outTile, lseTile);
    b.setInsertionPointAfter(forall);
    return castResults(b, loc, forall.getResults());
  }

  /// The decode form: forall (b, g, query tile, split) computes partial
  /// states over a chunk of the readable key tiles; a merge combines them.
  SmallVector<Value> buildSplitKv(OpBuilder &b, Location loc, int64_t splits) {
    IndexMath im{b, loc};
    Value tq = im.c(tileQ);
    Value numQTiles = im.ceilDiv(nq, tq);
    Value numSplits = im.c(splits);
    // Partial states, one slot per split: m, l [B, Hkv, S, R, Nq] and
    // acc [B, Hkv, S, R, Nq, Dv] (f32).
    SmallVector<OpFoldResult> rowShape = {batch, hkv, numSplits, groups, nq};
    SmallVector<OpFoldResult> accShape = {batch,  hkv, numSplits,
                                          groups, nq,  dv};
    SmallVector<Value> dests = {tensor::EmptyOp::create(b, loc, rowShape, f32),
                                tensor::EmptyOp::create(b, loc, rowShape, f32),
                                tensor::EmptyOp::create(b, loc, accShape, f32)};
    SmallVector<OpFoldResult> ubs = {batch, hkv, numQTiles, numSplits};
    auto forall = scf::ForallOp::create(b, loc, ubs, dests, std::nullopt);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(forall.getTerminator());
      IndexMath m{b, loc};
      Value bIdx = forall.getInductionVar(0), gIdx = forall.getInductionVar(1),
            qt = forall.getInductionVar(2), sIdx = forall.getInductionVar(3);
      Value q0 = m.mul(qt, tq);
      Value qs = m.min(tq, m.sub(nq, q0));
      Value kvLen = kvLenOf(b, loc, bIdx);
      auto [lo, hi] = keyRange(b, loc, q0, qs, kvLen);
      Value tk = m.c(tileK);
      auto [ktLo, ktHi] = keyTileRange(b, loc, lo, hi, tk);
      // Split the readable tiles [ktLo, ktHi) into `splits` even chunks.
      Value count = m.sub(ktHi, ktLo);
      Value per = m.ceilDiv(count, numSplits);
      Value sLo = m.min(ktHi, m.add(ktLo, m.mul(sIdx, per)));
      Value sHi = m.min(ktHi, m.add(sLo, per));
      State st = initState(b, loc, qs);
      st = walkKeyTiles(b, loc, bIdx, gIdx, qt, q0, qs, kvLen, sLo, sHi, st);
      b.setInsertionPointToStart(forall.getTerminator().getBody());
      auto one = b.getIndexAttr(1), zero = b.getIndexAttr(0);
      SmallVector<OpFoldResult> off = {bIdx, gIdx, sIdx, zero, q0};
      SmallVector<OpFoldResult> sz = {one, one, one, groups, qs};
      SmallVector<OpFoldResult> str(5, one);
      tensor::ParallelInsertSliceOp::create(
          b, loc, st.m, forall.getRegionIterArgs()[0], off, sz, str);
      tensor::ParallelInsertSliceOp::create(
          b, loc, st.l, forall.getRegionIterArgs()[1], off, sz, str);
      SmallVector<OpFoldResult> aoff = {bIdx, gIdx, sIdx, zero, q0, zero};
      SmallVector<OpFoldResult> asz = {one, one, one, groups, qs, dv};
      SmallVector<OpFoldResult> astr(6, one);
      tensor::ParallelInsertSliceOp::create(
          b, loc, st.acc, forall.getRegionIterArgs()[2], aoff, asz, astr);
    }
    Value pm = forall.getResult(0), pl = forall.getResult(1),
          pacc = forall.getResult(2);

    // Merge. Loops (b, g, r, i) over splits s: M = max_s m_s.
    SmallVector<OpFoldResult> mergedRows = {batch, hkv, groups, nq};
    AffineMap part5 = map(b, 5, {0, 1, 4, 2, 3});
    AffineMap rows5 = map(b, 5, {0, 1, 2, 3});
    Value bigM = filled(b, loc, mergedRows, kNegInf);
    bigM =
        linalg::GenericOp::create(
            b, loc, bigM.getType(), pm, bigM, {part5, rows5}, iters(4, 1),
            [&](OpBuilder &nb, Location nl, ValueRange a) {
              linalg::YieldOp::create(
                  nb, nl, Value(arith::MaximumFOp::create(nb, nl, a[0], a[1])));
            })
            .getResult(0);
    Value bigL = softmax ? filled(b, loc, mergedRows, 0.0) : Value();
    if (softmax)
      bigL = linalg::GenericOp::create(
                 b, loc, bigL.getType(), ValueRange{pm, pl, bigM}, bigL,
                 {part5, part5, rows5, rows5}, iters(4, 1),
                 [&](OpBuilder &nb, Location nl, ValueRange a) {
                   Value w = buildMergeWeight(nb, nl, a[0], a[2]);
                   Value t = arith::MulFOp::create(nb, nl, w, a[1]);
                   linalg::YieldOp::create(
                       nb, nl, Value(arith::AddFOp::create(nb, nl, a[3], t)));
                 })
                 .getResult(0);
    // softmax: out = sum_s (w_s l_s / L) (acc_s / (l_s s_s)), a convex
    // combination of the splits' outputs (0 where L = 0), which cannot
    // overflow where the result is finite; sigmoid: acc = sum_s acc_s.
    // Loops (b, g, r, i, e, s).
    SmallVector<OpFoldResult> mergedAcc = {batch, hkv, groups, nq, dv};
    Value acc = filled(b, loc, mergedAcc, 0.0);
    SmallVector<Value> accIns = {pm, pacc, bigM};
    SmallVector<AffineMap> accMaps = {map(b, 6, {0, 1, 5, 2, 3}),
                                      map(b, 6, {0, 1, 5, 2, 3, 4}),
                                      map(b, 6, {0, 1, 2, 3})};
    if (softmax) {
      accIns.append({pl, bigL});
      accMaps.append({map(b, 6, {0, 1, 5, 2, 3}), map(b, 6, {0, 1, 2, 3})});
    }
    accMaps.push_back(map(b, 6, {0, 1, 2, 3, 4}));
    acc = linalg::GenericOp::create(
              b, loc, acc.getType(), accIns, acc, accMaps, iters(5, 1),
              [&](OpBuilder &nb, Location nl, ValueRange a) {
                Value w =
                    arith::ConstantOp::create(nb, nl, nb.getF32FloatAttr(1.0));
                Value x = a[1];
                if (softmax) {
                  Value ws = arith::MulFOp::create(
                      nb, nl, buildMergeWeight(nb, nl, a[0], a[2]), a[3]);
                  w = buildNormalizedOutput(nb, nl, ws, a[4]);
                  // acc_s / (l_s s_s): split s's own normalized output.
                  Value ls = arith::MulFOp::create(
                      nb, nl, a[3], buildRowSumScale(nb, nl, a[3]));
                  x = buildNormalizedOutput(nb, nl, x, ls);
                }
                Value t = arith::MulFOp::create(nb, nl, w, x);
                linalg::YieldOp::create(
                    nb, nl, Value(arith::AddFOp::create(nb, nl, a.back(), t)));
              })
              .getResult(0);
    // Final: out in the op's layout, lse.
    bool bhnd = layout == Layout::bhnd;
    SmallVector<OpFoldResult> out5Shape =
        bhnd ? SmallVector<OpFoldResult>{batch, hkv, groups, nq, dv}
             : SmallVector<OpFoldResult>{batch, nq, hkv, groups, dv};
    Value out5 = tensor::EmptyOp::create(b, loc, out5Shape, elt);
    SmallVector<Value> ins = {acc};
    SmallVector<AffineMap> maps = {map(b, 5, {0, 1, 2, 3, 4})};
    maps.push_back(bhnd ? map(b, 5, {0, 1, 2, 3, 4})
                        : map(b, 5, {0, 3, 1, 2, 4}));
    out5 = linalg::GenericOp::create(
               b, loc, out5.getType(), ins, out5, maps, iters(5, 0),
               [&](OpBuilder &nb, Location nl, ValueRange a) {
                 Value o = a[0];
                 if (elt != f32)
                   o = arith::TruncFOp::create(nb, nl, elt, o);
                 linalg::YieldOp::create(nb, nl, o);
               })
               .getResult(0);
    SmallVector<ReassociationIndices> merge =
        bhnd ? SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}, {4}}
             : SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}, {4}};
    SmallVector<Value> results = {
        tensor::CollapseShapeOp::create(b, loc, out5, merge)};
    if (op.getLse()) {
      Value lse4 = tensor::EmptyOp::create(b, loc, mergedRows, f32);
      AffineMap id4 = map(b, 4, {0, 1, 2, 3});
      lse4 = linalg::GenericOp::create(
                 b, loc, lse4.getType(), ValueRange{bigM, bigL}, lse4,
                 {id4, id4, id4}, iters(4, 0),
                 [&](OpBuilder &nb, Location nl, ValueRange a) {
                   linalg::YieldOp::create(nb, nl,
                                           buildLogSumExp(nb, nl, a[0], a[1]));
                 })
                 .getResult(0);
      SmallVector<ReassociationIndices> lm = {{0}, {1, 2}, {3}};
      results.push_back(tensor::CollapseShapeOp::create(b, loc, lse4, lm));
    }
    return castResults(b, loc, results);
  }
};

/// Declares attn_tile_visit in the module if an instrumented kernel needs it.
static void declareTileVisit(ModuleOp module) {
  if (module.lookupSymbol(kTileVisitFn))
    return;
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  auto i64 = b.getI64Type();
  auto type = b.getFunctionType({i64, i64, i64, i64, b.getI1Type()}, {});
  auto fn = func::FuncOp::create(b, module.getLoc(), kTileVisitFn, type);
  fn.setPrivate();
}

struct LowerAttentionFused : public OpRewritePattern<AttentionOp> {
  LowerAttentionFused(MLIRContext *ctx, int64_t tq, int64_t tk, bool instrument,
                      int64_t splits)
      : OpRewritePattern(ctx), tq(tq), tk(tk), instrument(instrument),
        splits(splits) {}

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    emitRuntimeShapeChecks(rewriter, op.getLoc(), op);
    TileSizes tiles = chooseTileSizes(op, splits > 0, tq, tk);
    FusedLowering lowering(op, rewriter, tiles.q, tiles.k, instrument);
    SmallVector<Value> results =
        splits > 0 ? lowering.buildSplitKv(rewriter, op.getLoc(), splits)
                   : lowering.buildFused(rewriter, op.getLoc());
    rewriter.replaceOp(op, results);
    return success();
  }

  int64_t tq, tk;
  bool instrument;
  int64_t splits;
};

static LogicalResult runFused(Operation *root, int64_t tq, int64_t tk,
                              bool instrument, int64_t splits) {
  if (tq < 0 || tk < 0)
    return root->emitError("attn: tile sizes must be positive (or 0 for the "
                           "default); got tile-q = ")
           << tq << ", tile-k = " << tk;
  if (instrument) {
    auto module = dyn_cast<ModuleOp>(root);
    if (!module)
      module = root->getParentOfType<ModuleOp>();
    if (!module)
      return root->emitError("attn: instrumentation needs a module");
    declareTileVisit(module);
  }
  RewritePatternSet patterns(root->getContext());
  patterns.add<LowerAttentionFused>(root->getContext(), tq, tk, instrument,
                                    splits);
  return applyPatternsGreedily(root, std::move(patterns));
}

struct ConvertAttnToFusedLoopsPass
    : public attn::impl::ConvertAttnToFusedLoopsBase<
          ConvertAttnToFusedLoopsPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(runFused(getOperation(), tileQ, tileK, instrumentTiles, 0)))
      signalPassFailure();
  }
};

struct ConvertAttnToSplitKvPass
    : public attn::impl::ConvertAttnToSplitKvBase<ConvertAttnToSplitKvPass> {
  using Base::Base;
  void runOnOperation() override {
    if (splits <= 0) {
      getOperation()->emitError("attn: splits must be positive; got ")
          << static_cast<int64_t>(splits);
      return signalPassFailure();
    }
    if (failed(runFused(getOperation(), tileQ, tileK, instrumentTiles,
                            splits)))
      signalPassFailure();
  }
};

} // namespace

TileSizes mlir::attn::chooseTileSizes(AttentionOp op, bool decode,
                                      int64_t tileQ, int64_t tileK) {
  TileSizes t;
  if (decode) {
    // Few query rows against a long cache: small query tiles, long key
    // tiles; the parallelism comes from the splits.
    t = {16, 128};
  } else {
    // Without structural masks: about 256 score rows per tile (R query
    // heads share each K/V tile) so that the [R, Tq, Tk] score tile, the
    // accumulator and the K/V tiles stay in L2, and 128 keys per tile.
    // With causal or a window: square tiles (Tq = Tk), so that the diagonal
    // cuts one key tile per query tile and few masked pairs are computed;
    // 128, or 64 from R = 8 on.
    auto q = op.getQuery().getType();
    auto k = op.getKey().getType();
    int64_t hq = q.getDimSize(op.getPhysicalDim(1));
    int64_t hkv = k.getDimSize(op.getPhysicalDim(1));
    int64_t group = 1;
    if (!ShapedType::isDynamic(hq) && !ShapedType::isDynamic(hkv) && hkv > 0)
      group = std::max<int64_t>(hq / hkv, 1);
    bool banded = op.getCausal() || op.getEffectiveWindowLeft() ||
                  op.getEffectiveWindowRight();
    int64_t rows = std::clamp<int64_t>(256 / group, 32, 256);
    int64_t keys = 128;
    if (banded)
      rows = keys = std::clamp<int64_t>(512 / group, 64, 128);
    // Keep enough parallel iterations (batch x K/V heads x query tiles) for
    // the cores when the sizes are known.
    int64_t batch = q.getDimSize(op.getPhysicalDim(0));
    int64_t nq = q.getDimSize(op.getPhysicalDim(2));
    if (!ShapedType::isDynamic(batch) && !ShapedType::isDynamic(hkv) &&
        !ShapedType::isDynamic(nq)) {
      // Saturating: static sizes may be as large as INT64_MAX.
      auto iterations = [&](int64_t tq) {
        uint64_t n = llvm::SaturatingMultiply<uint64_t>(batch, hkv);
        return llvm::SaturatingMultiply<uint64_t>(n, llvm::divideCeil(nq, tq));
      };
      while (rows > 32 && iterations(rows) < 16)
        rows /= 2;
    }
    t = {rows, keys};
  }
  if (tileQ > 0)
    t.q = tileQ;
  if (tileK > 0)
    t.k = tileK;
  return t;
}
