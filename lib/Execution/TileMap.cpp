//===- TileMap.cpp - the fused form's key tiles and structural FLOPs ------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Execution/TileMap.h"

#include "attn/Schedule/Schedule.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"

#include <algorithm>
#include <string>
#include <vector>

using namespace mlir;
using namespace mlir::attn;

/// The fused form's key-tile classification for concrete sizes, from the
/// shared schedule (the rules the kernels emit as IR). Counts are per
/// (batch, K/V head) pair summed over batch; prints one map per distinct
/// kv_len.
TileCounts mlir::attn::tileMap(AttentionOp op, int64_t batch, int64_t nq,
                               int64_t nk, llvm::ArrayRef<int64_t> kvLens,
                               int64_t tq, int64_t tk,
                               llvm::raw_ostream *print) {
  Schedule schedule(ScheduleSpec::forOp(op, {tq, tk}));
  TileCounts total;
  std::vector<int64_t> printed;
  int64_t nqt = schedule.numQueryTiles(nq), nkt = schedule.numKeyTiles(nk);
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
      std::string row;
      for (int64_t kt = 0; kt < nkt; ++kt) {
        switch (schedule.classify(qt, kt, nq, nk, kvl)) {
        case TileKind::Skipped:
          ++total.skipped;
          row += '.';
          break;
        case TileKind::Boundary:
          ++total.boundary;
          row += '+';
          break;
        case TileKind::Full:
          ++total.full;
          row += '#';
          break;
        }
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
/// and window by the shared schedule (without the mask's content).
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
  // Row-level rules do not depend on the tile sizes.
  Schedule schedule(ScheduleSpec::forOp(op, {1, 1}));
  double pairs = 0;
  for (int64_t b = 0; b < batch; ++b) {
    int64_t kvl = kvLen ? std::clamp<int64_t>(kvLen->getInt(b), 0, nk) : nk;
    pairs += schedule.allowedPairs(nq, kvl);
  }
  return pairs * static_cast<double>(hq) * (2.0 * dqk + 2.0 * dv);
}
