//===- Destinations.h - results the caller passes in ------------*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// The rule of attn-results-to-destinations, shared by the pass, the kernel
// signature of attn-compile and the C++ JIT: which entry functions take
// their dynamically shaped results as caller-allocated destinations, and
// how a caller sizes each one from the arguments.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TRANSFORMS_DESTINATIONS_H
#define ATTN_TRANSFORMS_DESTINATIONS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace mlir {
namespace attn {

/// One dimension of a destination: `size` when `arg` is -1, else dimension
/// `dim` of argument `arg`.
struct DestinationDim {
  int64_t arg = -1;
  int64_t dim = 0;
  int64_t size = 0;
};
using DestinationShape = llvm::SmallVector<DestinationDim, 4>;

/// The destinations' shapes, one per result of `fn`, when its results become
/// destinations: `fn` is public with a body, some result is dynamically
/// shaped, and every result is a result of an `attn.attention` op whose q
/// (and v, when its head dimension is dynamic) are arguments of `fn`, or of
/// an `attn.combine` whose out_a (for out) and lse_a (for lse) are.
/// std::nullopt otherwise (the results stay results).
std::optional<llvm::SmallVector<DestinationShape>>
destinationShapes(func::FuncOp fn);

/// The argument attribute that marks a destination (on the tensor arguments
/// attn-results-to-destinations adds; attn-results-to-out-params drops the
/// results that return them).
inline constexpr llvm::StringLiteral kDestinationAttr = "attn.destination";

} // namespace attn
} // namespace mlir

#endif // ATTN_TRANSFORMS_DESTINATIONS_H
