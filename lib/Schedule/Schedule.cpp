//===- Schedule.cpp - tiles, key-tile rules and the grid of work ----------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Schedule/Schedule.h"

#include "attn/Schedule/MaskBounds.h"
#include "attn/Target/CpuTarget.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <numeric>

using namespace mlir;
using namespace mlir::attn;

ScheduleSpec ScheduleSpec::forOp(AttentionOp op, TileSizes tiles,
                                 int64_t splits) {
  ScheduleSpec s;
  s.causal = op.getCausal().has_value();
  s.bottomRight = op.isBottomRightAligned();
  s.windowLeft = op.getEffectiveWindowLeft();
  s.windowRight = op.getEffectiveWindowRight();
  s.tiles = tiles;
  s.splits = splits;
  return s;
}

int64_t Schedule::numQueryTiles(int64_t nq) const {
  return llvm::divideCeil(nq, spec.tiles.q);
}

int64_t Schedule::numKeyTiles(int64_t nk) const {
  return llvm::divideCeil(nk, spec.tiles.k);
}

llvm::SmallVector<int64_t> Schedule::grid(int64_t batch, int64_t hkv,
                                          int64_t nq) const {
  assert(spec.splits >= 0 && "a split count chosen at run time has no host "
                             "grid");
  llvm::SmallVector<int64_t> g = {batch, hkv, numQueryTiles(nq)};
  if (spec.splits > 0)
    g.push_back(spec.splits);
  return g;
}

std::pair<int64_t, int64_t> Schedule::keyTileRange(int64_t qt, int64_t nq,
                                                   int64_t kvLen,
                                                   int64_t split) const {
  HostArith a;
  TileRules<HostArith> rules(spec, a);
  auto [q0, qs] = rules.queryTile(qt, nq);
  auto [lo, hi] = rules.readableKeys(q0, qs, kvLen, nq);
  auto range = rules.keyTiles(lo, hi);
  assert((split < 0 || spec.splits >= 0) &&
         "a split count chosen at run time has no host split");
  if (split >= 0 && spec.splits > 0)
    range = rules.splitTiles(range.first, range.second, split);
  return range;
}

TileKind Schedule::classify(int64_t qt, int64_t kt, int64_t nq, int64_t nk,
                            int64_t kvLen, int64_t batch,
                            int64_t kvHead) const {
  auto [ktLo, ktHi] = keyTileRange(qt, nq, kvLen);
  if (kt < ktLo || kt >= ktHi)
    return TileKind::Skipped;
  HostArith a;
  TileRules<HostArith> rules(spec, a);
  auto [q0, qs] = rules.queryTile(qt, nq);
  auto [k0, ks] = rules.keyTile(kt, nk);
  bool full = rules.isFull(q0, qs, k0, ks, kvLen, nq);
  if (maskMod.block) {
    auto range = [&](unsigned input,
                     llvm::ArrayRef<std::pair<int64_t, int64_t>> box)
        -> std::optional<std::pair<int64_t, int64_t>> {
      if (!maskMod.range)
        return std::nullopt;
      return maskMod.range(input, box);
    };
    MaskBounds<HostArith> bounds(*maskMod.block, a, range);
    int64_t h0 = kvHead * maskMod.groups;
    auto t = bounds.classify({batch, batch, h0, h0 + maskMod.groups - 1, q0,
                              q0 + qs - 1, k0, k0 + ks - 1});
    if (!t.mayTrue)
      return TileKind::Skipped;
    full = full && !t.mayFalse;
  }
  return full ? TileKind::Full : TileKind::Boundary;
}

std::pair<int64_t, int64_t> Schedule::rowKeys(int64_t i, int64_t nq,
                                              int64_t kvLen) const {
  HostArith a;
  TileRules<HostArith> rules(spec, a);
  return rules.readableKeys(i, 1, kvLen, nq);
}

double Schedule::allowedPairs(int64_t nq, int64_t kvLen,
                              int64_t kvStart) const {
  double pairs = 0;
  for (int64_t i = 0; i < nq; ++i) {
    auto [lo, hi] = rowKeys(i, nq, kvLen);
    pairs +=
        static_cast<double>(std::max<int64_t>(hi - std::max(lo, kvStart), 0));
  }
  return pairs;
}

void mlir::attn::canonicalizeModRegions(Operation *op) {
  MLIRContext *ctx = op->getContext();
  RewritePatternSet patterns(ctx);
  for (Dialect *dialect : ctx->getLoadedDialects())
    dialect->getCanonicalizationPatterns(patterns);
  for (RegisteredOperationName name : ctx->getRegisteredOperations())
    name.getCanonicalizationPatterns(patterns, ctx);
  FrozenRewritePatternSet frozen(std::move(patterns));
  GreedyRewriteConfig config;
  // The entry block's arguments are the region's signature: keep them.
  config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
  for (Region &region : op->getRegions())
    if (!region.empty())
      (void)applyPatternsGreedily(region, frozen, config);
}

TileSizes mlir::attn::chooseTileSizes(AttentionOp op, const CpuTarget &target,
                                      bool decode, int64_t tileQ,
                                      int64_t tileK) {
  TileSizes t;
  if (decode) {
    // Few query rows against a long cache: small query tiles, long key
    // tiles; the parallelism comes from the splits.
    t = {16, 128};
  } else {
    // Without structural masks: about 256 score rows per tile (R query
    // heads share each K/V tile) and 128 keys per tile, so that the
    // [R, Tq, Tk] score tile, the accumulator and the K/V tiles stay in L2.
    // With causal or a window: square tiles (Tq = Tk), so that the diagonal
    // cuts one key tile per query tile and few masked pairs are computed;
    // 128, or 64 from R = 8 on.
    auto q = op.getQuery().getType();
    auto k = op.getKey().getType();
    auto v = op.getValue().getType();
    int64_t hq = q.getDimSize(op.getPhysicalDim(1));
    int64_t hkv = k.getDimSize(op.getPhysicalDim(1));
    int64_t group = 1;
    if (!ShapedType::isDynamic(hq) && !ShapedType::isDynamic(hkv) && hkv > 0)
      group = std::max<int64_t>(hq / hkv, 1);
    // A mask_mod usually cuts the score matrix too (documents, prefixes,
    // bands): square tiles as well.
    bool banded = op.getCausal() || op.getEffectiveWindowLeft() ||
                  op.getEffectiveWindowRight() || op.getMaskModBlock();
    int64_t rows = std::clamp<int64_t>(256 / group, 32, 256);
    int64_t keys = 128;
    if (banded)
      rows = keys = std::clamp<int64_t>(512 / group, 64, 128);
    // A band of at most 1024 keys per query (window_left and window_right,
    // or a window on one side and causal on the other): 64 x 64 tiles. A
    // query tile reads the band plus one tile of keys, so halving the tile
    // cuts the masked pairs it computes (513 keys per query: 80% of the
    // computed pairs are allowed with 128 x 128 tiles, 89% with 64 x 64,
    // 7-15% faster on Zen 4).
    std::optional<int64_t> left = op.getEffectiveWindowLeft();
    std::optional<int64_t> right = op.getEffectiveWindowRight();
    if (op.getCausal())
      right = 0;
    if (left && right && *left <= 1024 && *right <= 1024 &&
        *left + *right < 1024)
      rows = keys = 64;
    // The per-iteration working set (score tile, accumulator, K and V
    // tiles, f32) should fit in the target's L2 where it is known: halve
    // the query rows until it does (the key tile stays, it sets the
    // microkernel's panel width).
    int64_t dqk = q.getDimSize(op.getPhysicalDim(3));
    int64_t dv = v.getDimSize(op.getPhysicalDim(3));
    if (target.l2Bytes && !ShapedType::isDynamic(dqk) &&
        !ShapedType::isDynamic(dv)) {
      // Saturating: static sizes may be as large as the verifier allows.
      auto bytes = [&](int64_t r) {
        uint64_t rows = llvm::SaturatingMultiply<uint64_t>(group, r);
        uint64_t score = llvm::SaturatingMultiply<uint64_t>(
            rows, llvm::SaturatingAdd<uint64_t>(keys, dv));
        uint64_t kv = llvm::SaturatingMultiply<uint64_t>(
            keys, llvm::SaturatingAdd<uint64_t>(dqk, dv));
        return llvm::SaturatingMultiply<uint64_t>(
            4, llvm::SaturatingAdd<uint64_t>(score, kv));
      };
      while (rows > 32 && bytes(rows) > uint64_t(*target.l2Bytes))
        rows /= 2;
    }
    // Keep enough parallel iterations (batch x K/V heads x query tiles)
    // for the cores (dynamically scheduled, so a few per core) when the
    // sizes are known.
    int64_t batch = q.getDimSize(op.getPhysicalDim(0));
    int64_t nq = q.getDimSize(op.getPhysicalDim(2));
    uint64_t wanted = std::max<uint64_t>(16, 8 * uint64_t(target.cores));
    if (!ShapedType::isDynamic(batch) && !ShapedType::isDynamic(hkv) &&
        !ShapedType::isDynamic(nq)) {
      // Saturating: static sizes may be as large as INT64_MAX.
      auto iterations = [&](int64_t tq) {
        uint64_t n = llvm::SaturatingMultiply<uint64_t>(batch, hkv);
        return llvm::SaturatingMultiply<uint64_t>(n, llvm::divideCeil(nq, tq));
      };
      while (rows > 32 && iterations(rows) < wanted)
        rows /= 2;
    }
    t = {rows, keys};
  }
  if (tileQ > 0)
    t.q = tileQ;
  if (tileK > 0)
    t.k = tileK;
  // Paged K/V: key tiles are whole pages (a multiple of the page size, read
  // page by page) or divide a page (a slice of one page), so that no tile
  // reads part of a page beyond the next tile's start; nothing is gathered.
  if (op.isPaged() && op.getPageSize() > 0) {
    int64_t s = op.getPageSize();
    t.k = t.k >= s ? t.k / s * s : std::gcd(t.k, s);
  }
  return t;
}
