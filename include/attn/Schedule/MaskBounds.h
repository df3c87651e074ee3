//===- MaskBounds.h - per-tile classification of mask_mod regions -*- C++
//-*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// A user's `mask_mod` region says per (b, h, i, j) whether a key may be read.
// The fused and decode forms need it per tile: a tile whose pairs the mask
// denies entirely is skipped, one it allows entirely is a full tile (no mask
// arithmetic), the rest evaluate it per element.
//
// `MaskBounds` answers that by abstract interpretation of the region over the
// tile's box of indices: every integer value gets an interval [lo, hi] that
// contains it for every point of the box, every i1 value a pair (may be
// true, may be false). Intervals of the index arguments come from the tile;
// comparisons, +, -, * , min/max, division and remainder by constants,
// and/or/xor/not and select propagate them (sums and products only of
// values computed from indices and constants, never of tensor contents);
// `tensor.extract` of a `mod_inputs` tensor gets the range of the values the
// box reads, from a callback (computed inside the kernel by a small loop over
// the tile's rows and keys, or from host data). Anything else is unknown
// (may be true and false). The answers are sound: "never true" and "always
// true" hold for every pair of the tile; the per-element mask stays exact.
//
// An affine mask (causal, windows, prefix-LM, dilations) is thus classified
// from the tile bounds alone; document masking from the smallest and largest
// document id of the query tile and of the key tile. Like `TileRules`, the
// evaluation is written once over an arithmetic domain (`HostArith` for the
// tile map, `IRArith` for the kernels), so the two cannot disagree.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_SCHEDULE_MASKBOUNDS_H
#define ATTN_SCHEDULE_MASKBOUNDS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Block.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <utility>

namespace mlir {
namespace attn {

/// The inclusive index ranges of one tile: batch entry, query heads, query
/// rows and keys (every range non-empty).
template <typename A> struct TileBox {
  using V = typename A::Value;
  V bLo, bHi, hLo, hHi, iLo, iHi, jLo, jHi;
};

/// The largest box of a mod_inputs tensor whose values the CPU forms, the
/// GPU's tile map kernel and `--tile-map` summarize per tile (a larger box
/// is unknown: the per-element mask decides).
inline constexpr int64_t kMaxSummaryElements = int64_t(1) << 14;

/// The values a mod_inputs tensor of `width`-bit integers can hold, the range
/// a summary gives when it cannot read the box: i1 (a key mask) is read
/// unsigned, 0 and 1; wider integers signed.
inline std::pair<int64_t, int64_t> summaryTypeRange(unsigned width) {
  if (width == 1)
    return {0, 1};
  if (width >= 64)
    return {INT64_MIN, INT64_MAX};
  return {-(int64_t(1) << (width - 1)), (int64_t(1) << (width - 1)) - 1};
}

/// Batch entries, heads, query rows and keys of an op with a mask_mod are
/// below this bound (the verifier checks static sizes, the generated code
/// dynamic ones), so that MaskBounds can bound its arithmetic statically.
inline constexpr int64_t kIndexBound = int64_t(1) << 40;

template <typename A> class MaskBounds {
public:
  using V = typename A::Value;
  using B = typename A::Bool;
  /// The range [lo, hi] of the integer values of mod_inputs tensor `input`
  /// at the indices of `box` (one inclusive range per dimension, possibly
  /// reaching outside the tensor), or nullopt when unknown.
  using TensorRange = llvm::function_ref<std::optional<std::pair<V, V>>(
      unsigned input, llvm::ArrayRef<std::pair<V, V>> box)>;

  /// Whether some pair of the tile may be allowed / may be denied.
  struct Truth {
    B mayTrue, mayFalse;
  };

  MaskBounds(Block &region, A &a, TensorRange tensorRange)
      : region(region), a(a), tensorRange(tensorRange) {}

  Truth classify(const TileBox<A> &box) {
    ints.clear();
    bools.clear();
    std::pair<V, V> args[4] = {{box.bLo, box.bHi},
                               {box.hLo, box.hHi},
                               {box.iLo, box.iHi},
                               {box.jLo, box.jHi}};
    for (unsigned k = 0; k < 4; ++k)
      ints[region.getArgument(k)] = {args[k].first, args[k].second, true,
                                     double(kIndexBound)};
    for (Operation &op : region.without_terminator())
      visit(op);
    return truth(region.getTerminator()->getOperand(0));
  }

private:
  /// An interval. `affine`: computed from indices and constants only, with
  /// `bound` a static bound on its magnitude (indices are below kIndexBound,
  /// which the verifier and the kernels' run-time checks guarantee), so that
  /// sums and products whose bound stays below 2^62 cannot overflow; a result
  /// that could is unknown.
  struct Range {
    V lo, hi;
    bool affine;
    double bound = 0;
  };
  static constexpr double kMaxBound = 4.611686018427387904e18; // 2^62

  Block &region;
  A &a;
  TensorRange tensorRange;
  llvm::DenseMap<Value, Range> ints;
  llvm::DenseMap<Value, Truth> bools;

  Truth truth(Value v) {
    auto it = bools.find(v);
    if (it != bools.end())
      return it->second;
    return {a.cb(true), a.cb(true)};
  }
  std::optional<Range> range(Value v) {
    auto it = ints.find(v);
    if (it == ints.end())
      return std::nullopt;
    return it->second;
  }
  static bool isWide(Type t) { return t.isIndex() || t.isInteger(64); }
  static std::optional<int64_t> positiveConstant(Value v) {
    APInt c;
    if (!matchPattern(v, m_ConstantInt(&c)) || c.getBitWidth() > 64)
      return std::nullopt;
    int64_t x = c.getSExtValue();
    return x > 0 ? std::optional<int64_t>(x) : std::nullopt;
  }
  B notB(B x) { return a.negate(x); }

  /// x < y for intervals.
  Truth less(const Range &x, const Range &y, bool orEqual) {
    if (orEqual)
      return {a.sle(x.lo, y.hi), a.slt(y.lo, x.hi)};
    return {a.slt(x.lo, y.hi), a.sle(y.lo, x.hi)};
  }

  /// The range of the values `extract` reads from a mod_inputs tensor over
  /// the box, or nullopt when unknown.
  std::optional<std::pair<V, V>> extractRange(tensor::ExtractOp extract) {
    auto arg = dyn_cast<BlockArgument>(extract.getTensor());
    if (!arg || arg.getOwner() != &region || arg.getArgNumber() < 4)
      return std::nullopt;
    llvm::SmallVector<std::pair<V, V>, 4> box;
    for (Value idx : extract.getIndices()) {
      auto r = range(idx);
      if (!r)
        return std::nullopt;
      box.push_back({r->lo, r->hi});
    }
    return tensorRange(arg.getArgNumber() - 4, box);
  }

  void visit(Operation &op) {
    if (auto c = dyn_cast<arith::ConstantOp>(op)) {
      auto attr = dyn_cast<IntegerAttr>(c.getValue());
      if (!attr)
        return;
      if (attr.getType().isInteger(1)) {
        bool v = attr.getValue().getBoolValue();
        bools[c] = {a.cb(v), a.cb(!v)};
      } else if (attr.getValue().getSignificantBits() <= 62) {
        int64_t v = attr.getValue().getSExtValue();
        V x = a.c(v);
        ints[c] = {x, x, true, std::abs(double(v))};
      }
      return;
    }
    if (op.getNumResults() != 1)
      return;
    Value res = op.getResult(0);
    Type type = res.getType();

    if (type.isInteger(1)) {
      // An i1 read from a mod_inputs tensor (a key mask): true somewhere in
      // the box when its largest value is 1, false somewhere when its
      // smallest is 0.
      if (auto extract = dyn_cast<tensor::ExtractOp>(op)) {
        if (auto r = extractRange(extract))
          bools[res] = {a.sle(a.c(1), r->second), a.sle(r->first, a.c(0))};
        return;
      }
      if (auto cmp = dyn_cast<arith::CmpIOp>(op)) {
        auto x = range(cmp.getLhs()), y = range(cmp.getRhs());
        if (!x || !y)
          return;
        using P = arith::CmpIPredicate;
        switch (cmp.getPredicate()) {
        case P::slt:
          bools[res] = less(*x, *y, false);
          return;
        case P::sle:
          bools[res] = less(*x, *y, true);
          return;
        case P::sgt:
          bools[res] = less(*y, *x, false);
          return;
        case P::sge:
          bools[res] = less(*y, *x, true);
          return;
        case P::eq:
        case P::ne: {
          B overlap = a.both(a.sle(x->lo, y->hi), a.sle(y->lo, x->hi));
          B single = a.both(a.both(a.eq(x->lo, x->hi), a.eq(y->lo, y->hi)),
                            a.eq(x->lo, y->lo));
          Truth eq = {overlap, notB(single)};
          if (cmp.getPredicate() == P::ne)
            std::swap(eq.mayTrue, eq.mayFalse);
          bools[res] = eq;
          return;
        }
        default:
          return; // unsigned predicates: unknown
        }
      }
      auto binary = [&](auto f) {
        Truth x = truth(op.getOperand(0)), y = truth(op.getOperand(1));
        bools[res] = f(x, y);
      };
      if (isa<arith::AndIOp>(op))
        return binary([&](Truth x, Truth y) {
          return Truth{a.both(x.mayTrue, y.mayTrue),
                       a.either(x.mayFalse, y.mayFalse)};
        });
      if (isa<arith::OrIOp>(op))
        return binary([&](Truth x, Truth y) {
          return Truth{a.either(x.mayTrue, y.mayTrue),
                       a.both(x.mayFalse, y.mayFalse)};
        });
      if (isa<arith::XOrIOp>(op))
        return binary([&](Truth x, Truth y) {
          return Truth{a.either(a.both(x.mayTrue, y.mayFalse),
                                a.both(x.mayFalse, y.mayTrue)),
                       a.either(a.both(x.mayTrue, y.mayTrue),
                                a.both(x.mayFalse, y.mayFalse))};
        });
      if (auto sel = dyn_cast<arith::SelectOp>(op)) {
        Truth c = truth(sel.getCondition());
        Truth x = truth(sel.getTrueValue()), y = truth(sel.getFalseValue());
        bools[res] = {a.either(a.both(c.mayTrue, x.mayTrue),
                               a.both(c.mayFalse, y.mayTrue)),
                      a.either(a.both(c.mayTrue, x.mayFalse),
                               a.both(c.mayFalse, y.mayFalse))};
      }
      return;
    }

    if (!type.isIntOrIndex())
      return;
    if (auto extract = dyn_cast<tensor::ExtractOp>(op)) {
      if (auto r = extractRange(extract))
        ints[res] = {r->first, r->second, false};
      return;
    }
    if (isa<arith::IndexCastOp, arith::ExtSIOp>(op)) {
      // Widening casts keep the value.
      auto r = range(op.getOperand(0));
      Type from = op.getOperand(0).getType();
      unsigned fw = from.isIndex() ? 64 : from.getIntOrFloatBitWidth();
      unsigned tw = type.isIndex() ? 64 : type.getIntOrFloatBitWidth();
      if (r && tw >= fw)
        ints[res] = *r;
      return;
    }
    if (auto sel = dyn_cast<arith::SelectOp>(op)) {
      auto t = range(sel.getTrueValue()), f = range(sel.getFalseValue());
      if (t && f)
        ints[res] = {a.min(t->lo, f->lo), a.max(t->hi, f->hi),
                     t->affine && f->affine, std::max(t->bound, f->bound)};
      return;
    }
    if (op.getNumOperands() != 2)
      return;
    auto x = range(op.getOperand(0)), y = range(op.getOperand(1));
    if (!x)
      return;
    if (isa<arith::MaxSIOp, arith::MinSIOp>(op)) {
      if (!y)
        return;
      bool mx = isa<arith::MaxSIOp>(op);
      ints[res] = {mx ? a.max(x->lo, y->lo) : a.min(x->lo, y->lo),
                   mx ? a.max(x->hi, y->hi) : a.min(x->hi, y->hi),
                   x->affine && y->affine, std::max(x->bound, y->bound)};
      return;
    }
    // Arithmetic: 64-bit values computed from indices and constants only.
    if (!isWide(type) || !x->affine)
      return;
    if (y && y->affine) {
      double sum = x->bound + y->bound, product = x->bound * y->bound;
      if (isa<arith::AddIOp>(op)) {
        if (sum < kMaxBound)
          ints[res] = {a.add(x->lo, y->lo), a.add(x->hi, y->hi), true, sum};
        return;
      }
      if (isa<arith::SubIOp>(op)) {
        if (sum < kMaxBound)
          ints[res] = {a.sub(x->lo, y->hi), a.sub(x->hi, y->lo), true, sum};
        return;
      }
      if (isa<arith::MulIOp>(op)) {
        if (!(product < kMaxBound))
          return;
        V p[4] = {a.mul(x->lo, y->lo), a.mul(x->lo, y->hi), a.mul(x->hi, y->lo),
                  a.mul(x->hi, y->hi)};
        ints[res] = {a.min(a.min(p[0], p[1]), a.min(p[2], p[3])),
                     a.max(a.max(p[0], p[1]), a.max(p[2], p[3])), true,
                     product};
        return;
      }
    }
    std::optional<int64_t> d = positiveConstant(op.getOperand(1));
    if (!d)
      return;
    V dv = a.c(*d);
    if (isa<arith::FloorDivSIOp, arith::CeilDivSIOp, arith::DivSIOp>(op)) {
      // Monotone in the dividend; truncation lies between floor and ceil.
      bool floor = isa<arith::FloorDivSIOp>(op);
      bool ceil = isa<arith::CeilDivSIOp>(op);
      ints[res] = {ceil ? a.ceilDiv(x->lo, dv) : a.floorDiv(x->lo, dv),
                   floor ? a.floorDiv(x->hi, dv) : a.ceilDiv(x->hi, dv), true,
                   x->bound};
      return;
    }
    if (isa<arith::RemSIOp>(op)) {
      // x >= 0 within one period: [lo mod d, hi mod d]; x >= 0: [0, d-1];
      // else [-(d-1), d-1] (remsi takes the dividend's sign).
      V qlo = a.floorDiv(x->lo, dv), qhi = a.floorDiv(x->hi, dv);
      B nonNeg = a.sle(a.c(0), x->lo);
      B onePeriod = a.both(nonNeg, a.eq(qlo, qhi));
      V base = a.mul(qlo, dv);
      V lo = a.select(onePeriod, a.sub(x->lo, base),
                      a.select(nonNeg, a.c(0), a.c(1 - *d)));
      V hi = a.select(onePeriod, a.sub(x->hi, base), a.c(*d - 1));
      ints[res] = {lo, hi, true, std::min(x->bound, double(*d - 1))};
    }
  }
};

} // namespace attn
} // namespace mlir

#endif // ATTN_SCHEDULE_MASKBOUNDS_H
