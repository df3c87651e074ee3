//===- Internal.h - helpers shared by the reference's files ----*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_REFERENCE_INTERNAL_H
#define ATTN_LIB_REFERENCE_INTERNAL_H

#include <cstdint>
#include <string>
#include <vector>

namespace attn::ref::detail {

/// Prints a shape as `[2, 3]`.
std::string shapeStr(const std::vector<int64_t> &shape);

/// Rounds a non-negative finite double to the nearest integer, ties to even.
double roundHalfEven(double v);

} // namespace attn::ref::detail

#endif // ATTN_LIB_REFERENCE_INTERNAL_H
