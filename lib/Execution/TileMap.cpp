//===- TileMap.cpp - the fused form's key tiles and structural FLOPs ------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Execution/TileMap.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <vector>

using namespace mlir;
using namespace mlir::attn;

/// a + b clamped to the int64 range (windows may be as wide as INT64_MAX).
static int64_t satAdd(int64_t a, int64_t b) {
  int64_t r;
  if (!llvm::AddOverflow(a, b, r))
    return r;
  return b > 0 ? std::numeric_limits<int64_t>::max()
               : std::numeric_limits<int64_t>::min();
}

/// The fused form's key-tile classification for concrete sizes, computed on
/// the host with the rules the lowering states (keyRange / isFullTile in
/// lib/Conversion/AttnToLinalg/FusedAttention.cpp). Counts are per (batch,
/// K/V head) pair summed over batch; prints one map per distinct kv_len.
TileCounts mlir::attn::tileMap(AttentionOp op, int64_t batch, int64_t nq,
                               int64_t nk, llvm::ArrayRef<int64_t> kvLens,
                               int64_t tq, int64_t tk,
                               llvm::raw_ostream *print) {
  TileCounts total;
  std::vector<int64_t> printed;
  auto causal = op.getCausal();
  bool bottomRight = causal && *causal == CausalAlign::bottom_right;
  std::optional<int64_t> left = op.getEffectiveWindowLeft();
  std::optional<int64_t> right = op.getEffectiveWindowRight();
  int64_t nqt = (nq + tq - 1) / tq, nkt = (nk + tk - 1) / tk;
  auto floorDiv = [](int64_t a, int64_t b) {
    return a >= 0 ? a / b : -((-a + b - 1) / b);
  };
  auto ceilDiv = [&](int64_t a, int64_t b) { return -floorDiv(-a, b); };
  for (int64_t b = 0; b < batch; ++b) {
    int64_t kvl = kvLens.empty() ? nk : std::clamp<int64_t>(kvLens[b], 0, nk);
    bool show = print && !llvm::is_contained(printed, kvl);
    if (show) {
      printed.push_back(kvl);
      *print << "tile map (batch " << b << ", kv_len " << kvl << ", " << nqt
             << " query tiles x " << nkt << " key tiles of " << tq << "x" << tk
             << "):\n";
    }
    for (int64_t qt = 0; qt < nqt; ++qt) {
      int64_t q0 = qt * tq, qs = std::min(tq, nq - q0);
      int64_t off = bottomRight ? kvl - nq : 0;
      int64_t pLo = q0 + off, pHi = q0 + qs - 1 + off;
      int64_t lo = 0, hi = kvl;
      if (causal)
        hi = std::min(hi, pHi + 1);
      if (left)
        lo = std::max(lo, satAdd(pLo, -*left));
      if (right)
        hi = std::min(hi, satAdd(satAdd(pHi, *right), 1));
      hi = std::max(hi, lo);
      int64_t ktLo = floorDiv(lo, tk);
      int64_t ktHi = lo < hi ? ceilDiv(hi, tk) : ktLo;
      std::string row;
      for (int64_t kt = 0; kt < nkt; ++kt) {
        if (kt < ktLo || kt >= ktHi) {
          ++total.skipped;
          row += '.';
          continue;
        }
        int64_t k0 = kt * tk, ks = std::min(tk, nk - k0), kEnd = k0 + ks - 1;
        bool full = kEnd < kvl;
        if (causal)
          full &= kEnd <= pLo;
        if (left)
          full &= satAdd(pHi, -k0) <= *left;
        if (right)
          full &= satAdd(kEnd, -pLo) <= *right;
        ++(full ? total.full : total.boundary);
        row += full ? '#' : '+';
      }
      if (show && nkt <= 128)
        *print << "  " << row << "\n";
    }
  }
  int64_t all = total.full + total.boundary + total.skipped;
  if (print && all > 0)
    *print << llvm::format(
        "tiles: %lld full, %lld boundary, %lld skipped of %lld per K/V head "
        "(%.1f%% skipped)\n",
        (long long)total.full, (long long)total.boundary,
        (long long)total.skipped, (long long)all, 100.0 * total.skipped / all);
  return total;
}

/// FLOPs the contract needs, (2 Dqk + 2 Dv) per structurally allowed
/// (query, key) pair per query head, counted row by row from kv_len, causal
/// and window (as the reference counts them, without the mask's content).
double mlir::attn::structuralFlops(AttentionOp op,
                                   llvm::ArrayRef<HostTensor> args) {
  auto shapeOf = [&](Value v) -> const std::vector<int64_t> & {
    return args[cast<BlockArgument>(v).getArgNumber()].shape;
  };
  auto dim = [&](Value v, int64_t logical) {
    return shapeOf(v)[op.getPhysicalDim(logical)];
  };
  Value q = op.getQuery(), k = op.getKey(), v = op.getValue();
  if (!isa<BlockArgument>(q) || !isa<BlockArgument>(k) ||
      !isa<BlockArgument>(v))
    return 0;
  int64_t batch = dim(q, 0), hq = dim(q, 1), nq = dim(q, 2), nk = dim(k, 2);
  int64_t dqk = dim(q, 3), dv = dim(v, 3);
  const HostTensor *kvLen = nullptr;
  if (Value kv = op.getKvLen()) {
    if (!isa<BlockArgument>(kv))
      return 0;
    kvLen = &args[cast<BlockArgument>(kv).getArgNumber()];
  }
  auto causal = op.getCausal();
  bool bottomRight = causal && *causal == CausalAlign::bottom_right;
  std::optional<int64_t> left = op.getEffectiveWindowLeft();
  std::optional<int64_t> right = op.getEffectiveWindowRight();
  double pairs = 0;
  for (int64_t b = 0; b < batch; ++b) {
    int64_t kvl = kvLen ? std::clamp<int64_t>(kvLen->getInt(b), 0, nk) : nk;
    for (int64_t i = 0; i < nq; ++i) {
      int64_t p = bottomRight ? i + kvl - nq : i;
      int64_t lo = 0, hi = kvl;
      if (causal)
        hi = std::min(hi, p + 1);
      if (left)
        lo = std::max(lo, satAdd(p, -*left));
      if (right)
        hi = std::min(hi, satAdd(satAdd(p, *right), 1));
      pairs += static_cast<double>(std::max<int64_t>(hi - lo, 0));
    }
  }
  return pairs * static_cast<double>(hq) * (2.0 * dqk + 2.0 * dv);
}
