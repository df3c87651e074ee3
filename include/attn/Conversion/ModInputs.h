//===- ModInputs.h - how generated code reads the regions' tensors -*- C++
//-*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// score_mod and mask_mod regions read the op's mod_inputs with tensor.dim and
// tensor.extract. Each form reaches those tensors its own way: the CPU forms
// read the tensors themselves and record a failed bounds check through the
// runtime (RuntimeChecks.h); the GPU kernel reads its global-memory buffers
// and records into a device-side error word. ModInputAccess is that choice;
// the region inliner (LogitBuilder.h) and the per-tile summaries that
// classify mask regions (buildTensorRange) are written once over it.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_MODINPUTS_H
#define ATTN_CONVERSION_MODINPUTS_H

#include "attn/Conversion/RuntimeChecks.h"
#include "attn/IR/AttnOps.h"

#include "mlir/IR/Builders.h"

#include <functional>
#include <optional>

namespace mlir {
namespace attn {

/// How generated code reads the op's mod_inputs.
struct ModInputAccess {
  /// What stands for each mod_input (a tensor or a buffer), in order.
  SmallVector<Value> inputs;
  /// Size of dimension `dim` of `input` (index).
  std::function<Value(OpBuilder &, Location, Value input, int64_t dim)> dim;
  /// The element of `input` at `indices` (known to be in bounds).
  std::function<Value(OpBuilder &, Location, Value input, ValueRange indices)>
      read;
  /// Records `check` with `args` unless `ok` holds (the first failure wins).
  std::function<void(OpBuilder &, Location, Value ok, RuntimeCheck check,
                     ArrayRef<Value> args)>
      report;

  /// The op's own tensors, checks recorded through the runtime functions
  /// (emitRuntimeCheck) in the error record of `op`'s block.
  static ModInputAccess ofTensors(AttentionOp op);
};

/// The range [min, max] of an integer mod_input's values over an index box
/// (inclusive ranges, one per dimension, clamped to the input), computed by
/// a loop nest at the insertion point; the element type's whole range for a
/// box outside the input or of more than `maxElements` elements (the per-
/// element code then decides, and reports a read out of bounds); nullopt for
/// inputs that are not integers of 2 to 64 bits. The tile classification of
/// mask regions (MaskBounds) reads these summaries.
std::optional<std::pair<Value, Value>>
buildTensorRange(OpBuilder &b, Location loc, const ModInputAccess &access,
                 unsigned input, ArrayRef<std::pair<Value, Value>> box,
                 int64_t maxElements);

} // namespace attn
} // namespace mlir

#endif // ATTN_CONVERSION_MODINPUTS_H
