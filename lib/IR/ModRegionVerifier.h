//===- ModRegionVerifier.h - verifier of score/mask regions ----*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_IR_MODREGIONVERIFIER_H
#define ATTN_LIB_IR_MODREGIONVERIFIER_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Region.h"

namespace mlir {
namespace attn {
namespace detail {

/// Checks one user region: its block arguments (b, h, i, j : index, the f32
/// logit for score_mod, then one per mod_inputs tensor), the ops it may
/// contain, and its terminator.
LogicalResult verifyModRegion(Operation *op, Region &region, StringRef name,
                              bool isScore, ValueRange modInputs);

} // namespace detail
} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_IR_MODREGIONVERIFIER_H
