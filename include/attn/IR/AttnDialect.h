//===- AttnDialect.h - attn dialect -----------------------------*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_IR_ATTNDIALECT_H
#define ATTN_IR_ATTNDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dialect.h"

#include "attn/IR/AttnDialect.h.inc"

namespace mlir {
namespace attn {
/// Discardable attribute the lowerings put on a `math.exp` whose f32
/// argument is known to be <= 0 or NaN (the softmax's x - max):
/// attn-approximate-math expands it with a shorter polynomial (no upper
/// clamp, no large-argument cases).
inline constexpr llvm::StringLiteral kExpNonPositiveAttr =
    "attn.exp_nonpositive";
} // namespace attn
} // namespace mlir

#endif // ATTN_IR_ATTNDIALECT_H
