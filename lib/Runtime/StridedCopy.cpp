//===- StridedCopy.cpp - copies between strided views ---------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "StridedCopy.h"

#include <cstring>
#include <vector>

#define ATTN_RT_EXPORT __attribute__((visibility("default")))

namespace {
/// Copies `count` elements of `Bytes` bytes `srcStep` and `dstStep`
/// elements apart.
template <int64_t Bytes>
void copyElements(const char *src, int64_t srcStep, char *dst, int64_t dstStep,
                  int64_t count) {
  for (int64_t i = 0; i < count; ++i)
    std::memcpy(dst + i * dstStep * Bytes, src + i * srcStep * Bytes, Bytes);
}

} // namespace

void attn::runtime::stridedCopy(const char *src, const int64_t *srcStrides,
                                char *dst, const int64_t *dstStrides,
                                const int64_t *shape, int32_t ndim,
                                int64_t elemBytes) {
  struct Dim {
    int64_t size, src, dst;
  };
  std::vector<Dim> dims; // innermost first
  int64_t dense = 1;
  for (int32_t d = ndim - 1; d >= 0; --d) {
    if (shape[d] == 0)
      return;
    int64_t s = srcStrides ? srcStrides[d] : dense;
    int64_t t = dstStrides ? dstStrides[d] : dense;
    dense *= shape[d];
    if (shape[d] == 1)
      continue;
    if (!dims.empty() && s == dims.back().src * dims.back().size &&
        t == dims.back().dst * dims.back().size) {
      dims.back().size *= shape[d];
      continue;
    }
    dims.push_back({shape[d], s, t});
  }
  if (dims.empty()) {
    std::memcpy(dst, src, elemBytes);
    return;
  }
  const Dim inner = dims.front();
  bool run = inner.src == 1 && inner.dst == 1;
  auto copyRun = [&](const char *from, char *to) {
    if (run) {
      std::memcpy(to, from, inner.size * elemBytes);
      return;
    }
    switch (elemBytes) {
    case 1:
      return copyElements<1>(from, inner.src, to, inner.dst, inner.size);
    case 2:
      return copyElements<2>(from, inner.src, to, inner.dst, inner.size);
    case 4:
      return copyElements<4>(from, inner.src, to, inner.dst, inner.size);
    case 8:
      return copyElements<8>(from, inner.src, to, inner.dst, inner.size);
    default:
      for (int64_t i = 0; i < inner.size; ++i)
        std::memcpy(to + i * inner.dst * elemBytes,
                    from + i * inner.src * elemBytes, elemBytes);
    }
  };
  // The outer dimensions: an odometer over dims[1..] with running offsets.
  std::vector<int64_t> idx(dims.size(), 0);
  int64_t so = 0, to = 0;
  while (true) {
    copyRun(src + so * elemBytes, dst + to * elemBytes);
    size_t k = 1;
    for (; k < dims.size(); ++k) {
      so += dims[k].src;
      to += dims[k].dst;
      if (++idx[k] < dims[k].size)
        break;
      so -= dims[k].src * dims[k].size;
      to -= dims[k].dst * dims[k].size;
      idx[k] = 0;
    }
    if (k == dims.size())
      return;
  }
}

extern "C" {

/// memrefCopy's contract (MLIR's c_runner_utils) for kernels compiled ahead
/// of time: attn-compile renames the kernels' calls to this function, so
/// that they need no MLIR runtime library. Unranked descriptors
/// {rank, ranked descriptor}; strides in elements.
struct UnrankedDesc {
  int64_t rank;
  int64_t *desc;
};

ATTN_RT_EXPORT void attn_rt_memref_copy(int64_t elemBytes, UnrankedDesc *src,
                                        UnrankedDesc *dst) {
  int32_t r = static_cast<int32_t>(src->rank);
  const int64_t *s = src->desc, *d = dst->desc;
  auto *srcBase = reinterpret_cast<const char *>(s[1]) + s[2] * elemBytes;
  auto *dstBase = reinterpret_cast<char *>(d[1]) + d[2] * elemBytes;
  if (r == 0) {
    std::memcpy(dstBase, srcBase, elemBytes);
    return;
  }
  attn::runtime::stridedCopy(srcBase, s + 3 + r, dstBase, d + 3 + r, s + 3, r,
                             elemBytes);
}

} // extern "C"
