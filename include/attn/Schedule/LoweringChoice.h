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

/// The form an attention op is to take, set by attn-select-form on each
/// version of the op (a dictionary: `form`, and the query lengths the
/// version runs for, `min_queries` and `max_queries`). The CPU lowerings
/// lower only the ops meant for them and copy the range into their
/// LoweringChoice.
inline constexpr llvm::StringLiteral kFormAttr = "attn.form";

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
  /// CPU, bf16 specs: what the bf16 products of whole tiles run on:
  /// "vdpbf16ps" (AVX-512 BF16 dot products), "amx" (AMX tiles), "<Q K^T's>
  /// for Q K^T, <P V's> for P V" when the two differ ("f32" for one on f32
  /// FMAs), or empty (f32 FMAs on tiles converted to f32, as for every other
  /// element type and for quantized caches).
  std::string bf16Products;
  /// GPU: warps per block, and how many GEMMs run on wgmma (sm_90a): 1 for
  /// S = Q K^T, 2 for S = Q K^T and O += P V.
  int64_t warps = 0, wgmma = 0;
  /// The query lengths Nq this version runs for, when the op was lowered
  /// in several forms chosen per call (attn-select-form): Nq >=
  /// minQueries, and Nq <= maxQueries unless maxQueries is -1.
  int64_t minQueries = 0, maxQueries = -1;

  /// Whether this is one of several versions chosen per call.
  bool isVersion() const { return minQueries > 0 || maxQueries >= 0; }
  /// Whether this version runs for query length `nq`.
  bool runsFor(int64_t nq) const {
    return nq >= minQueries && (maxQueries < 0 || nq <= maxQueries);
  }

  /// One line: "form fused, tiles 64 x 128, register tile 8 x 32 (512-bit)"
  /// (and ", for Nq > 16" for one of several versions).
  void print(llvm::raw_ostream &os) const;
  /// The fields as the attributes of a JSON object (the attribute's names).
  void writeJSON(llvm::json::OStream &j) const;
};

/// Appends `choice` to the `attn.lowering` array of the function that holds
/// `op` (or of `op` itself when it is the function).
void recordLoweringChoice(Operation *op, const LoweringChoice &choice);

/// The choices recorded on `fn`, in order (empty when none).
llvm::SmallVector<LoweringChoice> readLoweringChoices(Operation *fn);
/// Rewrites every choice recorded on `fn` through `update`.
void updateLoweringChoices(Operation *fn,
                           llvm::function_ref<void(LoweringChoice &)> update);

} // namespace attn
} // namespace mlir

#endif // ATTN_SCHEDULE_LOWERINGCHOICE_H
