//===- LoweringChoice.h - what a lowering chose, on the IR ------*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// Each lowering of an attention op records what it chose (the form, tile
// sizes, key splits, the CPU's register tile and vector width, the GPU's
// warps) on the function that holds the op, as the attribute
// `attn.lowering`: an array with one dictionary per op, in the order the
// ops were lowered. It stays on the function through the rest of the
// pipeline (func.func and llvm.func alike), so that the JIT, the GPU host
// path and the tools report and reuse the lowering's own choice (attn-run's
// --tile-map, the JSON report) instead of recomputing it.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_SCHEDULE_LOWERINGCHOICE_H
#define ATTN_SCHEDULE_LOWERINGCHOICE_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>

namespace mlir {
namespace attn {

/// The attribute name on the function.
inline constexpr llvm::StringLiteral kLoweringAttr = "attn.lowering";

struct LoweringChoice {
  /// naive, fused, decode (the CPU forms) or gpu.
  std::string form;
  /// Query rows and keys per tile (0: untiled, the naive form).
  int64_t tileQ = 0, tileK = 0;
  /// Key splits of the decode forms (0: none; -1: chosen at run time).
  int64_t splits = 0;
  /// CPU: rows and f32 columns of the microkernel's register tile, and the
  /// vector width in bits.
  int64_t registerRows = 0, registerCols = 0, vectorBits = 0;
  /// GPU: warps per block.
  int64_t warps = 0;

  /// One line: "form fused, tiles 64 x 128, register tile 8 x 32 (512-bit)".
  void print(llvm::raw_ostream &os) const;
  /// The fields as the attributes of a JSON object (the attribute's names).
  void writeJSON(llvm::json::OStream &j) const;
};

/// Appends `choice` to the `attn.lowering` array of the function that holds
/// `op` (or of `op` itself when it is the function).
void recordLoweringChoice(Operation *op, const LoweringChoice &choice);

/// The choices recorded on `fn`, in order (empty when none).
llvm::SmallVector<LoweringChoice> readLoweringChoices(Operation *fn);

} // namespace attn
} // namespace mlir

#endif // ATTN_SCHEDULE_LOWERINGCHOICE_H
