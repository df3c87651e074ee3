//===- StridedCopy.h - copies between strided views (private) ---*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// libattn_runtime's copy between two strided views of one shape: it gathers
// strided kernel arguments into the dense workspace, scatters strided
// outputs back, and is the memref.copy of kernels compiled ahead of time
// (attn_rt_memref_copy, StridedCopy.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_RUNTIME_STRIDEDCOPY_H
#define ATTN_LIB_RUNTIME_STRIDEDCOPY_H

#include <cstdint>

namespace attn {
namespace runtime {

/// Copy between two strided views of the same shape (strides in elements;
/// null strides: dense row-major). Dimensions of size 1 are dropped and a
/// dimension that both views step through as one run with the next inner
/// one is merged into it; when the innermost run is contiguous in both,
/// each run is one memcpy (a transposed [B, N, H, D] view copies rows of D
/// elements), otherwise the run is copied element by element.
void stridedCopy(const char *src, const int64_t *srcStrides, char *dst,
                 const int64_t *dstStrides, const int64_t *shape, int32_t ndim,
                 int64_t elemBytes);

} // namespace runtime
} // namespace attn

#endif // ATTN_LIB_RUNTIME_STRIDEDCOPY_H
