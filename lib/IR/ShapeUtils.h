//===- ShapeUtils.h - shape helpers of the op verifiers (private) -*- C++
//-*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// Sizes, layouts and size printing shared by the verifiers of the attn ops
// (AttnOps.cpp, StateOps.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_IR_SHAPEUTILS_H
#define ATTN_LIB_IR_SHAPEUTILS_H

#include "attn/IR/AttnOps.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlir {
namespace attn {
namespace detail {

constexpr int64_t kDyn = ShapedType::kDynamic;

/// True when two sizes may be equal (either is dynamic, or they are equal).
inline bool compatible(int64_t a, int64_t b) {
  return a == kDyn || b == kDyn || a == b;
}

/// True when `shape` may be `expect` (same rank, compatible sizes).
inline bool compatibleShape(ArrayRef<int64_t> shape, ArrayRef<int64_t> expect) {
  if (shape.size() != expect.size())
    return false;
  for (auto [got, want] : llvm::zip(shape, expect))
    if (!compatible(got, want))
      return false;
  return true;
}

/// Prints a size list as `[2, ?, 64]`.
inline std::string fmtShape(ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "[";
  llvm::interleaveComma(shape, os, [&](int64_t d) {
    if (d == kDyn)
      os << "?";
    else
      os << d;
  });
  os << "]";
  return s;
}

inline std::string fmtSize(int64_t d) {
  return d == kDyn ? std::string("?") : std::to_string(d);
}

/// Physical index of logical dimension `logical` of a [B, H, N, D] tensor.
inline int64_t physicalDim(Layout layout, int64_t logical) {
  if (layout == Layout::bhnd)
    return logical;
  static constexpr int64_t bnhd[4] = {0, 2, 1, 3};
  return bnhd[logical];
}

/// Logical [B, H, N, D] sizes of a rank-4 tensor stored in `layout`.
inline SmallVector<int64_t, 4> logicalShape(Type t, Layout layout) {
  auto shape = cast<RankedTensorType>(t).getShape();
  SmallVector<int64_t, 4> result;
  for (int64_t i = 0; i < 4; ++i)
    result.push_back(shape[physicalDim(layout, i)]);
  return result;
}

/// The scales of a quantized K/V cache of physical shape `cache` ([B or P,
/// H, N, D] in `layout`): one per token and head (the cache's shape without
/// D) or one per page (batch entry) and head. Returns "" when `scale` may be
/// either, otherwise what it must be ("one scale per token and head [...] or
/// per page and head [...]").
inline std::string kvScaleMismatch(ArrayRef<int64_t> scale,
                                   ArrayRef<int64_t> cache, Layout layout,
                                   bool paged) {
  SmallVector<int64_t, 3> perToken(cache.take_front(3));
  SmallVector<int64_t, 2> perBlock = {cache[0], cache[physicalDim(layout, 1)]};
  if (compatibleShape(scale, perToken) || compatibleShape(scale, perBlock))
    return "";
  return "one scale per token and head " + fmtShape(perToken) + " or per " +
         (paged ? "page" : "batch entry") + " and head " + fmtShape(perBlock);
}

} // namespace detail
} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_IR_SHAPEUTILS_H
