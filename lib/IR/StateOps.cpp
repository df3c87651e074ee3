//===- StateOps.cpp - verifiers of the serving state ops ------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// attn.kv_cache_append and attn.combine: the ops around an attention that
// update a cache and merge partial results.
//
//===----------------------------------------------------------------------===//

#include "attn/IR/AttnOps.h"

#include "ShapeUtils.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::detail;

//===----------------------------------------------------------------------===//
// KvCacheAppendOp
//===----------------------------------------------------------------------===//

LogicalResult KvCacheAppendOp::verify() {
  auto cache = getCache().getType(), update = getUpdate().getType();
  if (cache.getRank() != 4 || update.getRank() != 4)
    return emitOpError() << "cache and update must have rank 4; got " << cache
                         << " and " << update;
  Type cacheElt = cache.getElementType();
  bool quantized = isQuantizedKvType(cacheElt);
  if (!quantized && cacheElt != update.getElementType())
    return emitOpError() << "cache and update must share one element type; "
                            "got "
                         << cache.getElementType() << " and "
                         << update.getElementType();
  if (quantized != static_cast<bool>(getScales()))
    return emitOpError() << (quantized ? "a quantized cache (element type "
                                       : "scales go with a quantized cache; "
                                         "the cache's element type is ")
                         << cacheElt
                         << (quantized ? ") needs scales(...), which the "
                                         "append updates"
                                       : "");
  if (static_cast<bool>(getScales()) != static_cast<bool>(getNewScales()))
    return emitOpError() << "with scales(...) the op returns the cache and "
                            "its updated scales; without, the cache alone";
  if (Value scales = getScales()) {
    auto type = cast<RankedTensorType>(scales.getType());
    if (getNewScales().getType() != type)
      return emitOpError() << "the updated scales must have the scales' type "
                           << type << "; got " << getNewScales().getType();
    std::string expected =
        kvScaleMismatch(type.getShape(), cache.getShape(), getLayout(),
                        static_cast<bool>(getPageTable()));
    if (!expected.empty())
      return emitOpError() << "scales must hold " << expected << "; got "
                           << type;
  }
  auto c = logicalShape(cache, getLayout());
  auto u = logicalShape(update, getLayout());
  static constexpr StringLiteral names[4] = {"B", "H", "N", "D"};
  if (Value table = getPageTable()) {
    // A page pool [P, H, S, D]; the batch comes from the update.
    auto pt = cast<RankedTensorType>(table.getType());
    if (pt.getRank() != 2 || !compatible(pt.getDimSize(0), u[0]))
      return emitOpError() << "page_table must be [B, max_pages] with one row "
                              "per batch entry of the update (B = "
                           << fmtSize(u[0]) << "); got " << pt;
    for (int64_t i : {1, 3})
      if (!compatible(c[i], u[i]))
        return emitOpError()
               << "update must match the page pool in " << names[i]
               << ": pool has " << c[i] << ", update has " << u[i];
    if (c[2] == 0)
      return emitOpError() << "the page pool's page size must be positive";
    auto pos = getPositions().getType();
    if (pos.getRank() != 1 || !compatible(pos.getDimSize(0), u[0]))
      return emitOpError() << "positions must be a rank-1 tensor with one "
                              "entry per batch entry (B = "
                           << fmtSize(u[0]) << "); got " << pos;
    return success();
  }
  for (int64_t i : {0, 1, 3})
    if (!compatible(c[i], u[i]))
      return emitOpError() << "update must match the cache in " << names[i]
                           << ": cache has " << c[i] << ", update has " << u[i];
  if (c[2] != kDyn && u[2] != kDyn && u[2] > c[2])
    return emitOpError() << "update has more rows (" << u[2]
                         << ") than the cache holds (" << c[2] << ")";
  auto pos = getPositions().getType();
  if (pos.getRank() != 1 || !compatible(pos.getDimSize(0), c[0]))
    return emitOpError() << "positions must be a rank-1 tensor with one entry "
                            "per batch entry (B = "
                         << fmtSize(c[0]) << "); got " << pos;
  return success();
}

//===----------------------------------------------------------------------===//
// CombineOp
//===----------------------------------------------------------------------===//

LogicalResult CombineOp::verify() {
  auto out = getOutA().getType();
  auto lse = getLseA().getType();
  if (out.getRank() != 4)
    return emitOpError() << "out must have rank 4; got " << out;
  auto o = logicalShape(out, getLayout());
  SmallVector<int64_t, 3> expect = {o[0], o[1], o[2]};
  if (!compatibleShape(lse.getShape(), expect))
    return emitOpError() << "lse must be [B, Hq, Nq] = " << fmtShape(expect)
                         << " to match out; got " << lse;
  return success();
}
