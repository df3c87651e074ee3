//===- TileMap.cpp - the fused form's key tiles and structural FLOPs ------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Execution/TileMap.h"

#include "attn/IR/AttnBuilders.h"
#include "attn/Schedule/MaskBounds.h"
#include "attn/Schedule/Schedule.h"

#include "mlir/IR/OwningOpRef.h"

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
/// The range of an integer host tensor's values over an inclusive index box
/// (clamped to the tensor; nullopt when the box misses it).
static std::optional<std::pair<int64_t, int64_t>>
hostRange(const HostTensor &t,
          llvm::ArrayRef<std::pair<int64_t, int64_t>> box) {
  size_t rank = t.shape.size();
  if (box.size() != rank)
    return std::nullopt;
  std::vector<int64_t> lo(rank), hi(rank), idx(rank);
  for (size_t d = 0; d < rank; ++d) {
    lo[d] = std::max<int64_t>(box[d].first, 0);
    hi[d] = std::min<int64_t>(box[d].second, t.shape[d] - 1);
    if (lo[d] > hi[d])
      return std::nullopt;
  }
  idx = lo;
  int64_t mn = INT64_MAX, mx = INT64_MIN;
  while (true) {
    int64_t flat = 0;
    for (size_t d = 0; d < rank; ++d)
      flat = flat * t.shape[d] + idx[d];
    int64_t x = t.getInt(flat);
    mn = std::min(mn, x);
    mx = std::max(mx, x);
    size_t d = rank;
    while (d > 0 && idx[d - 1] == hi[d - 1]) {
      idx[d - 1] = lo[d - 1];
      --d;
    }
    if (d == 0)
      break;
    ++idx[d - 1];
  }
  return std::make_pair(mn, mx);
}

TileCounts mlir::attn::tileMap(AttentionOp op, llvm::ArrayRef<HostTensor> args,
                               int64_t batch, int64_t hkv, int64_t nq,
                               int64_t nk, llvm::ArrayRef<int64_t> kvLens,
                               int64_t tq, int64_t tk,
                               llvm::raw_ostream *print) {
  Schedule schedule(ScheduleSpec::forOp(op, {tq, tk}));
  // The kernel classifies the canonical form of the mask region, key padding
  // included: so does the map (on a copy of the op).
  OwningOpRef<Operation *> canonical;
  if (op.getMaskModBlock() || op.getKvStart() || op.getKeyMask()) {
    canonical = op->clone();
    expandKeyPadding(*canonical);
    canonicalizeModRegions(*canonical);
  }
  if (Block *mask = canonical ? cast<AttentionOp>(*canonical).getMaskModBlock()
                              : nullptr) {
    // The kernel's own classification of the mask region, evaluated on the
    // host data of the mod_inputs (same MaskBounds code, HostArith).
    int64_t hq = op.getNumQueryHeads();
    int64_t groups = hq != ShapedType::kDynamic ? hq / hkv : 1;
    if (hq == ShapedType::kDynamic && isa<BlockArgument>(op.getQuery()))
      groups = args[cast<BlockArgument>(op.getQuery()).getArgNumber()]
                   .shape[op.getPhysicalDim(1)] /
               hkv;
    std::vector<const HostTensor *> inputs;
    for (Value v : cast<AttentionOp>(*canonical).getModInputs())
      inputs.push_back(isa<BlockArgument>(v)
                           ? &args[cast<BlockArgument>(v).getArgNumber()]
                           : nullptr);
    schedule.setMaskRegion(
        mask, groups,
        [inputs](unsigned input,
                 llvm::ArrayRef<std::pair<int64_t, int64_t>> box)
            -> std::optional<std::pair<int64_t, int64_t>> {
          const HostTensor *t = inputs[input];
          int bits = !t                            ? 0
                     : t->kind == ElementKind::I1  ? 1
                     : t->kind == ElementKind::I8  ? 8
                     : t->kind == ElementKind::I32 ? 32
                     : t->kind == ElementKind::I64 ? 64
                                                   : 0;
          if (!bits || box.size() != t->shape.size())
            return std::nullopt;
          // As the kernel (FusedLowering::tensorRange): a box of more than
          // 2^14 elements, or one that misses the tensor, gives the element
          // type's whole range (i1: 0 and 1, read unsigned).
          std::pair<int64_t, int64_t> whole = summaryTypeRange(bits);
          constexpr int64_t kMaxSummary = kMaxSummaryElements;
          int64_t volume = 1;
          for (size_t d = 0; d < box.size(); ++d) {
            int64_t extent =
                std::clamp<int64_t>(std::min(box[d].second, t->shape[d] - 1) -
                                        std::max<int64_t>(box[d].first, 0) + 1,
                                    0, kMaxSummary + 1);
            volume = std::min(volume * extent, kMaxSummary + 1);
          }
          if (volume > kMaxSummary || volume == 0)
            return whole;
          return hostRange(*t, box);
        });
  }
  // Without a mask region every K/V head has the same tiles: one is
  // classified and counted for all.
  bool perHead = schedule.hasMaskRegion();
  TileCounts total;
  std::vector<std::pair<int64_t, int64_t>> printed;
  int64_t nqt = schedule.numQueryTiles(nq), nkt = schedule.numKeyTiles(nk);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t g = 0; g < (perHead ? hkv : 1); ++g) {
      int64_t kvl = kvLens.empty() ? nk : std::clamp<int64_t>(kvLens[b], 0, nk);
      // Printed once per kv_len (and per batch entry with a mask region,
      // which may read per-batch data).
      std::pair<int64_t, int64_t> key = {perHead ? b : 0, kvl};
      bool show = print && g == 0 && !llvm::is_contained(printed, key);
      if (show) {
        printed.push_back(key);
        *print << "tile map (batch " << b << ", kv_len " << kvl << ", " << nqt
               << " query tiles x " << nkt << " key tiles of " << tq << "x"
               << tk << "):\n";
      }
      int64_t weight = perHead ? 1 : hkv;
      for (int64_t qt = 0; qt < nqt; ++qt) {
        std::string row;
        for (int64_t kt = 0; kt < nkt; ++kt) {
          switch (schedule.classify(qt, kt, nq, nk, kvl, b, g)) {
          case TileKind::Skipped:
            total.skipped += weight;
            row += '.';
            break;
          case TileKind::Boundary:
            total.boundary += weight;
            row += '+';
            break;
          case TileKind::Full:
            total.full += weight;
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
        (long long)(total.full / hkv), (long long)(total.boundary / hkv),
        (long long)(total.skipped / hkv), (long long)(all / hkv),
        100.0 * total.skipped / all);
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
  // Paged K/V: k is a pool of pages of nk rows; Nk = max_pages * S.
  if (Value pt = op.getPageTable()) {
    if (!isa<BlockArgument>(pt))
      return 0;
    nk *= shapeOf(pt)[1];
  }
  int64_t dqk = dim(q, 3),
          dv = std::optional<int64_t>(op.getVFromK()).value_or(dim(v, 3));
  const HostTensor *kvLen = nullptr;
  if (Value kv = op.getKvLen()) {
    if (!isa<BlockArgument>(kv))
      return 0;
    kvLen = &args[cast<BlockArgument>(kv).getArgNumber()];
  }
  const HostTensor *kvStart = nullptr;
  if (Value start = op.getKvStart()) {
    if (!isa<BlockArgument>(start))
      return 0;
    kvStart = &args[cast<BlockArgument>(start).getArgNumber()];
  }
  auto startOf = [&](int64_t b) {
    return kvStart && b < kvStart->numElements() ? kvStart->getInt(b) : 0;
  };
  // Row-level rules do not depend on the tile sizes.
  Schedule schedule(ScheduleSpec::forOp(op, {1, 1}));
  double pairs = 0;
  // Ragged batches: every sequence is its own problem.
  if (op.isRagged()) {
    // Keys: the packed offsets', or (paged) kv_len's through the table.
    Value cq = op.getCuSeqlensQ(), ck = op.getCuSeqlensK();
    if (!isa<BlockArgument>(cq) || (ck && !isa<BlockArgument>(ck)))
      return 0;
    const HostTensor &tq = args[cast<BlockArgument>(cq).getArgNumber()];
    const HostTensor *tk =
        ck ? &args[cast<BlockArgument>(ck).getArgNumber()] : nullptr;
    for (int64_t s = 0; s + 1 < tq.numElements(); ++s) {
      int64_t seqKeys = nk;
      if (tk) {
        if (s + 1 >= tk->numElements())
          break;
        seqKeys = tk->getInt(s + 1) - tk->getInt(s);
      }
      if (kvLen && s < kvLen->numElements())
        seqKeys = std::clamp<int64_t>(kvLen->getInt(s), 0, seqKeys);
      pairs += schedule.allowedPairs(tq.getInt(s + 1) - tq.getInt(s), seqKeys,
                                     startOf(s));
    }
    return pairs * static_cast<double>(hq) * (2.0 * dqk + 2.0 * dv);
  }
  for (int64_t b = 0; b < batch; ++b) {
    int64_t kvl = kvLen ? std::clamp<int64_t>(kvLen->getInt(b), 0, nk) : nk;
    pairs += schedule.allowedPairs(nq, kvl, startOf(b));
  }
  return pairs * static_cast<double>(hq) * (2.0 * dqk + 2.0 * dv);
}

double mlir::attn::trafficBytes(AttentionOp op, llvm::ArrayRef<HostTensor> args,
                                llvm::ArrayRef<HostTensor> results) {
  auto argOf = [&](Value v) -> const HostTensor * {
    auto arg = dyn_cast_or_null<BlockArgument>(v);
    return arg && arg.getArgNumber() < args.size() ? &args[arg.getArgNumber()]
                                                   : nullptr;
  };
  double kvFraction = 1;
  // The keys [kv_start, kv_len) each batch entry reads.
  const HostTensor *lens = argOf(op.getKvLen()), *k = argOf(op.getKey());
  const HostTensor *starts = argOf(op.getKvStart());
  const HostTensor *perBatch = lens ? lens : starts;
  if (perBatch && k && k->shape.size() == 4) {
    int64_t nk = op.getLayout() == Layout::bnhd ? k->shape[1] : k->shape[2];
    double read = 0;
    int64_t n = perBatch->numElements();
    for (int64_t b = 0; b < n; ++b) {
      int64_t hi = lens ? std::clamp<int64_t>(lens->getInt(b), 0, nk) : nk;
      int64_t lo = starts && b < starts->numElements()
                       ? std::clamp<int64_t>(starts->getInt(b), 0, hi)
                       : 0;
      read += static_cast<double>(hi - lo);
    }
    if (n > 0 && nk > 0)
      kvFraction = read / (double(n) * double(nk));
  }
  double bytes = 0;
  for (const HostTensor &t : args) {
    bool isKv = &t == argOf(op.getKey()) || &t == argOf(op.getValue());
    bytes += static_cast<double>(t.bytes.size()) * (isKv ? kvFraction : 1);
  }
  for (const HostTensor &t : results)
    bytes += static_cast<double>(t.bytes.size());
  return bytes;
}
