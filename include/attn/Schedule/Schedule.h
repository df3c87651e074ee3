//===- Schedule.h - tiles, key-tile rules and the grid of work --*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// One schedule for every form and target. It says how an attention op is cut
// into work: query tiles of `tileQ` rows, key tiles of `tileK` keys, which
// key tiles each query tile reads (skipped, boundary or full, from kv_len,
// causal in either alignment and the sliding window), how the decode form
// partitions them into splits, and the grid of parallel work items.
//
// The rules are written once, in `TileRules`, over an arithmetic domain:
// `HostArith` evaluates them on integers (attn-run's tile map and FLOP
// count, tests), `IRArith` emits them as `arith` ops on `index` values (the
// CPU lowering, and the GPU lowering to come). Both instantiate the same
// code, so the host's prediction and the generated kernel cannot drift
// apart; ScheduleTest checks it on random shapes by counting the tiles an
// instrumented kernel computes.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_SCHEDULE_SCHEDULE_H
#define ATTN_SCHEDULE_SCHEDULE_H

#include "attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <utility>

namespace mlir {
namespace attn {

struct CpuTarget;

/// Query rows and keys per tile of the fused and decode forms.
struct TileSizes {
  int64_t q, k;
};

/// The static facts of one attention op that decide its tiles.
struct ScheduleSpec {
  /// Causal mask, and whether its diagonal is aligned bottom-right (query i
  /// sits at key position i + kv_len - Nq).
  bool causal = false, bottomRight = false;
  /// Sliding window: keys at most `windowLeft` before / `windowRight` after
  /// the query's position.
  std::optional<int64_t> windowLeft, windowRight;
  TileSizes tiles = {64, 64};
  /// 0 for the fused form; the number of key-tile chunks of the split-KV
  /// decode form otherwise, or -1 where the lowering chooses it at run time
  /// (from the threads that run the grid; the host-side Schedule below
  /// evaluates a fixed count only).
  int64_t splits = 0;

  static ScheduleSpec forOp(AttentionOp op, TileSizes tiles,
                            int64_t splits = 0);
};

/// How a query tile treats a key tile.
enum class TileKind {
  Skipped,  ///< no query row of the tile may read any of its keys
  Boundary, ///< some pairs are masked: the kernel applies the mask
  Full,     ///< every pair is readable: no mask arithmetic
};

/// Integer arithmetic on the host, wrapping like the IR's (no saturation):
/// the rules only see sizes the verifier bounds (below 2^61, windows of
/// 2^61 or more count as none), and readableKeys keeps 0 <= lo <= hi, so the
/// divisions see non-negative numerators.
struct HostArith {
  using Value = int64_t;
  using Bool = bool;
  Value c(int64_t v) { return v; }
  Value add(Value x, Value y) { return x + y; }
  Value sub(Value x, Value y) { return x - y; }
  Value mul(Value x, Value y) { return x * y; }
  Value min(Value x, Value y) { return std::min(x, y); }
  Value max(Value x, Value y) { return std::max(x, y); }
  Value floorDiv(Value x, Value y) {
    Value q = x / y;
    return (x % y != 0 && ((x < 0) != (y < 0))) ? q - 1 : q;
  }
  Value ceilDiv(Value x, Value y) { return -floorDiv(-x, y); }
  Bool slt(Value x, Value y) { return x < y; }
  Bool sle(Value x, Value y) { return x <= y; }
  Bool eq(Value x, Value y) { return x == y; }
  Bool both(Bool x, Bool y) { return x && y; }
  Bool either(Bool x, Bool y) { return x || y; }
  Bool negate(Bool x) { return !x; }
  Bool cb(bool v) { return v; }
  Value select(Bool c, Value x, Value y) { return c ? x : y; }
};

/// The same arithmetic as `arith` ops on `index` values (Bool: i1).
struct IRArith {
  OpBuilder &b;
  Location loc;
  using Value = mlir::Value;
  using Bool = mlir::Value;
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
  /// `x` (not negative) rounded down to a multiple of `k`: the part of a
  /// count that whole blocks of `k` cover.
  Value roundDown(Value x, int64_t k) {
    return sub(x, arith::RemUIOp::create(b, loc, x, c(k)));
  }
  Bool slt(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x, y);
  }
  Bool sle(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, x, y);
  }
  Bool both(Bool x, Bool y) { return arith::AndIOp::create(b, loc, x, y); }
  Bool andI(Bool x, Bool y) { return both(x, y); }
  Bool either(Bool x, Bool y) { return arith::OrIOp::create(b, loc, x, y); }
  Bool negate(Bool x) { return arith::XOrIOp::create(b, loc, x, cb(true)); }
  Bool cb(bool v) {
    return arith::ConstantOp::create(b, loc, b.getBoolAttr(v));
  }
  Bool eq(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, y);
  }
  Value select(Bool c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
};

/// The key-tile rules, written once for every domain `A` (HostArith or
/// IRArith). Sizes: `nq` query rows, `nk` keys of which the first `kvLen`
/// are valid (kv_len clamped to [0, Nk], or Nk).
template <typename A> class TileRules {
public:
  using V = typename A::Value;
  using B = typename A::Bool;

  TileRules(const ScheduleSpec &spec, A &a) : spec(spec), a(a) {}

  /// Rows [q0, q0 + qs) of query tile `qt`.
  std::pair<V, V> queryTile(V qt, V nq) {
    V q0 = a.mul(qt, a.c(spec.tiles.q));
    return {q0, a.min(a.c(spec.tiles.q), a.sub(nq, q0))};
  }
  /// Keys [k0, k0 + ks) of key tile `kt`.
  std::pair<V, V> keyTile(V kt, V nk) {
    V k0 = a.mul(kt, a.c(spec.tiles.k));
    return {k0, a.min(a.c(spec.tiles.k), a.sub(nk, k0))};
  }
  V numQueryTiles(V nq) { return a.ceilDiv(nq, a.c(spec.tiles.q)); }

  /// The key position p(i) of query row i: i, or i + kv_len - Nq when the
  /// causal diagonal is aligned bottom-right.
  V queryPosition(V i, V kvLen, V nq) {
    if (!spec.bottomRight)
      return i;
    return a.sub(a.add(i, kvLen), nq);
  }

  /// The keys [lo, hi) that any of the rows [q0, q0 + qs) may read (lo <=
  /// hi; empty when lo == hi). With qs = 1, exactly the keys of that row.
  std::pair<V, V> readableKeys(V q0, V qs, V kvLen, V nq) {
    V pLo = queryPosition(q0, kvLen, nq);
    V pHi = queryPosition(a.sub(a.add(q0, qs), a.c(1)), kvLen, nq);
    V lo = a.c(0), hi = kvLen;
    if (spec.causal)
      hi = a.min(hi, a.add(pHi, a.c(1)));
    if (spec.windowLeft)
      lo = a.max(lo, a.sub(pLo, a.c(*spec.windowLeft)));
    if (spec.windowRight)
      hi = a.min(hi, a.add(pHi, a.c(*spec.windowRight + 1)));
    return {lo, a.max(hi, lo)};
  }

  /// The key tiles [ktLo, ktHi) overlapping keys [lo, hi); empty when
  /// lo == hi.
  std::pair<V, V> keyTiles(V lo, V hi) {
    V tk = a.c(spec.tiles.k);
    V ktLo = a.floorDiv(lo, tk);
    return {ktLo, a.select(a.slt(lo, hi), a.ceilDiv(hi, tk), ktLo)};
  }

  /// Whether no structural mask cuts into rows [q0, q0 + qs) x keys
  /// [k0, k0 + ks) (a full tile); a visited tile that is not full is a
  /// boundary tile.
  B isFull(V q0, V qs, V k0, V ks, V kvLen, V nq) {
    V pLo = queryPosition(q0, kvLen, nq);
    V pHi = queryPosition(a.sub(a.add(q0, qs), a.c(1)), kvLen, nq);
    V kEnd = a.sub(a.add(k0, ks), a.c(1));
    B full = a.slt(kEnd, kvLen);
    if (spec.causal)
      full = a.both(full, a.sle(kEnd, pLo));
    if (spec.windowLeft)
      full = a.both(full, a.sle(a.sub(pHi, k0), a.c(*spec.windowLeft)));
    if (spec.windowRight)
      full = a.both(full, a.sle(a.sub(kEnd, pLo), a.c(*spec.windowRight)));
    return full;
  }

  /// Chunk `split` of the decode form's partition of the key tiles
  /// [ktLo, ktHi) into `spec.splits` even chunks (trailing ones may be
  /// empty).
  std::pair<V, V> splitTiles(V ktLo, V ktHi, V split) {
    return splitTiles(ktLo, ktHi, split, a.c(spec.splits));
  }
  /// How many of `n` chunks of `tiles` key tiles splitTiles fills (chunks
  /// of ceil(tiles / n) tiles: 8 tiles in 6 chunks fill 4), for `n` in
  /// [1, tiles].
  V filledSplits(V tiles, V n) { return a.ceilDiv(tiles, a.ceilDiv(tiles, n)); }
  /// The same with the number of splits a value (chosen at run time, as the
  /// GPU form does from the grid it needs).
  std::pair<V, V> splitTiles(V ktLo, V ktHi, V split, V numSplits) {
    V per = a.ceilDiv(a.sub(ktHi, ktLo), numSplits);
    V sLo = a.min(ktHi, a.add(ktLo, a.mul(split, per)));
    return {sLo, a.min(ktHi, a.add(sLo, per))};
  }

private:
  const ScheduleSpec &spec;
  A &a;
};

/// The schedule evaluated on the host for concrete sizes.
class Schedule {
public:
  explicit Schedule(ScheduleSpec spec) : spec(spec) {}
  const ScheduleSpec &getSpec() const { return spec; }

  int64_t numQueryTiles(int64_t nq) const;
  int64_t numKeyTiles(int64_t nk) const;
  /// The grid of parallel work items: {B, Hkv, query tiles} for the fused
  /// form, {B, Hkv, query tiles, splits} for the decode form.
  llvm::SmallVector<int64_t> grid(int64_t batch, int64_t hkv, int64_t nq) const;

  /// The key tiles [ktLo, ktHi) query tile `qt` visits (split `split` of
  /// them in the decode form, or all with split = -1).
  std::pair<int64_t, int64_t>
  keyTileRange(int64_t qt, int64_t nq, int64_t kvLen, int64_t split = -1) const;
  /// How query tile `qt` treats key tile `kt` (of batch entry `batch` and
  /// K/V head `kvHead`, which only a mask_mod region may tell apart).
  TileKind classify(int64_t qt, int64_t kt, int64_t nq, int64_t nk,
                    int64_t kvLen, int64_t batch = 0, int64_t kvHead = 0) const;

  /// The op's mask_mod region, classified per tile by MaskBounds: `groups`
  /// query heads per K/V head, and the range of a mod_inputs tensor's
  /// values over a box of indices (nullopt: unknown).
  using HostTensorRange =
      std::function<std::optional<std::pair<int64_t, int64_t>>(
          unsigned input, llvm::ArrayRef<std::pair<int64_t, int64_t>> box)>;
  void setMaskRegion(Block *block, int64_t groups, HostTensorRange range) {
    maskMod = {block, groups, std::move(range)};
  }
  bool hasMaskRegion() const { return maskMod.block; }
  /// The keys [lo, hi) query row `i` may read.
  std::pair<int64_t, int64_t> rowKeys(int64_t i, int64_t nq,
                                      int64_t kvLen) const;
  /// Number of (query row, key) pairs the structural masks allow, summed
  /// over rows for one batch entry and head, keys from `kvStart` on.
  double allowedPairs(int64_t nq, int64_t kvLen, int64_t kvStart = 0) const;

private:
  ScheduleSpec spec;
  struct {
    Block *block = nullptr;
    int64_t groups = 1;
    HostTensorRange range;
  } maskMod;
};

/// Canonicalizes the score_mod and mask_mod regions of `op` to a fixed point
/// (folding and every registered op's canonical patterns). The CPU lowering
/// classifies mask regions in this form, and so must every host prediction
/// of its tiles (tileMap), since folding can sharpen the classification.
void canonicalizeModRegions(Operation *op);

/// The tile sizes of the fused (`decode` false) or split-KV form of `op` on
/// `target`: chosen from the op's static sizes (group size, banded masks,
/// enough parallel work for the target's cores, tiles that fit its L2 where
/// known), each replaced by `tileQ` / `tileK` when positive.
TileSizes chooseTileSizes(AttentionOp op, const CpuTarget &target, bool decode,
                          int64_t tileQ = 0, int64_t tileK = 0);

} // namespace attn
} // namespace mlir

#endif // ATTN_SCHEDULE_SCHEDULE_H
