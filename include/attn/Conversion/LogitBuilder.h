//===- LogitBuilder.h - shared logit and mask arithmetic --------*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// Every form (naive, fused, decode) turns a raw dot product into the final
// logit of query i and key j the same way: scale, soft cap, bias, ALiBi, then
// -inf for keys that may not be read. This file is that one place, so that
// all forms agree by construction.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_LOGITBUILDER_H
#define ATTN_CONVERSION_LOGITBUILDER_H

#include "attn/IR/AttnOps.h"

#include "mlir/IR/Builders.h"

#include "llvm/ADT/STLFunctionalExtras.h"

namespace mlir {
namespace attn {

struct ModInputAccess;

/// Values that do not change across the key loop, built once outside it.
struct LogitContext {
  AttentionOp op;
  Value scale;   // f32
  Value softcap; // f32, or null
  Value nq, nk;  // index
  /// How the regions read the op's mod_inputs (ModInputs.h); null: the op's
  /// tensors, checks through the runtime functions.
  const ModInputAccess *modInputs = nullptr;
};

/// Builds the context (scale, soft cap, sizes) before the loops.
LogitContext buildLogitContext(OpBuilder &b, Location loc, AttentionOp op);

/// Per-element inputs of one logit.
struct LogitOperands {
  Value raw;     // f32 raw dot product q.k
  Value b, h;    // index: batch entry and query head (read by the regions)
  Value i, j;    // index: query row and key column
  Value kvLen;   // index: valid key count of this batch entry (clamped)
  Value bias;    // bias element (any float), or null
  Value slope;   // f32 ALiBi slope of this query head, or null
  Value maskBit; // i1 mask element, or null
  /// index: the query row and key the score_mod and mask_mod regions see,
  /// when they differ from i and j (null: i and j). The GPU kernel computes
  /// padded rows and keys past Nq and Nk, whose results it discards, and
  /// clamps what it passes the regions so that they only ever run on pairs
  /// of the problem.
  Value regionI, regionJ;
};

/// The query position p(i) for the op's alignment.
Value buildQueryPosition(OpBuilder &b, Location loc, const LogitContext &ctx,
                         Value i, Value kvLen);

/// Whether key j may be read by query i (kv_len, causal, window; not the
/// boolean mask tensor, which the caller folds in).
Value buildStructuralAllowed(OpBuilder &b, Location loc,
                             const LogitContext &ctx, Value i, Value j,
                             Value kvLen);

/// The final f32 logit: scale, soft cap, bias, ALiBi, then -inf where the
/// key may not be read.
Value buildLogit(OpBuilder &b, Location loc, const LogitContext &ctx,
                 const LogitOperands &in);

/// The logit of a key known to be readable by the structural masks and by
/// the op's mask_mod (a full tile): scale, soft cap, bias, ALiBi, score_mod,
/// and only the boolean mask tensor if any.
Value buildUnmaskedLogit(OpBuilder &b, Location loc, const LogitContext &ctx,
                         const LogitOperands &in);

/// Inlines the single block of a score_mod or mask_mod region at the
/// builder's insertion point with its block arguments bound to `args` (the
/// indices, the logit for score_mod) followed by the op's mod_inputs, and
/// returns the yielded value. Every tensor.extract of the region is
/// bounds-checked: an index outside the tensor is recorded as a run-time
/// check naming the region (RuntimeChecks.h) and the read yields 0. The
/// mod_inputs are read through `access` (null: the op's tensors).
Value inlineModRegion(OpBuilder &b, Location loc, Operation *op, Block &region,
                      StringRef name, ValueRange args,
                      const ModInputAccess *access = nullptr);

/// Reads physical dimension `dim` of the buffer a lowering holds for
/// `operand` (one of the op's tensor operands).
using OperandDimReader = function_ref<Value(Value operand, int64_t dim)>;

/// Emits run-time checks (RuntimeChecks.h) for every size relation the
/// verifier could not check because a size is dynamic (batch, heads, Dqk,
/// Nk, mask/bias broadcast, kv_len and ALiBi lengths) and for the page table
/// entries the sequences read. A violated check is recorded with the sizes
/// it compared; the caller guards the work with buildGuarded. By default the
/// checks read the operands' sizes with tensor.dim and record into the error
/// record of `op`'s block; a lowering that has moved to buffers (the GPU host
/// code) passes its error record and `readDim`, and then checks the page
/// table's entries itself.
void emitRuntimeShapeChecks(OpBuilder &b, Location loc, AttentionOp op,
                            Value errors = Value(),
                            OperandDimReader readDim = nullptr);

/// The same for attn.kv_cache_append: positions and the page table have one
/// entry (row) per batch entry of the update, the cache has the update's
/// heads and head dimension (and, dense, its batch).
void emitAppendSizeChecks(OpBuilder &b, Location loc, KvCacheAppendOp op,
                          Value errors = Value(),
                          OperandDimReader readDim = nullptr);

//===----------------------------------------------------------------------===//
// The softmax's edge cases, shared by every form (f32 values: scalars, or
// vectors of rows where a helper says so)
//===----------------------------------------------------------------------===//

/// The row max to subtract: `m`, or 0 for a row without any key (m = -inf),
/// so that exp(-inf - 0) = 0 instead of NaN. Scalar or vector.
Value buildSafeMax(OpBuilder &b, Location loc, Value m);

//===----------------------------------------------------------------------===//
// The merge of partial softmax states: the CPU decode form's split merge, the
// GPU decode kernel's merge kernel and attn.combine all build it from these.
//
// Part s covers a range of keys and holds its row max m_s, its row sum l_s
// (relative to m_s) and its own output o_s (its accumulator over l_s; a
// normalized (out, lse) pair is the part (lse, 1, out)). With M = max_s m_s
// and w_s = exp(m_s - M):
//   L = sum_s w_s l_s,   out = sum_s (w_s l_s / L) o_s,   lse = M + log L.
// The output is a convex combination of the parts' outputs, so it cannot
// overflow where the result is finite; empty parts (m_s = -inf) weigh 0, and
// a row whose parts are all empty gets out = 0 and lse = -inf.
//===----------------------------------------------------------------------===//

/// exp(m_s - M) for merging a partial state with max m_s into one with max
/// M: 0 for an empty part (m_s = -inf), also when M = -inf.
Value buildMergeWeight(OpBuilder &b, Location loc, Value ms, Value bigM);

/// One step of L: sum + w_s l_s.
Value buildMergeRowSum(OpBuilder &b, Location loc, Value sum, Value ms,
                       Value ls, Value bigM);

/// One step of the merged output: out + (w_s l_s / L) o_s; `out` itself when
/// that weight is 0 (an empty part, or L = 0), whatever o_s holds.
Value buildMergeOutputStep(OpBuilder &b, Location loc, Value out, Value ms,
                           Value ls, Value os, Value bigM, Value bigL);

/// out = acc / l, and exactly 0 for a row without any key (l = 0).
Value buildNormalizedOutput(OpBuilder &b, Location loc, Value acc, Value l);

/// Attention sinks: the final state (m, l) of a row (l = sum_j e^(s_j - m),
/// m = -inf and l = 0 for a row without keys) with the sink's logit added
/// to the denominator, as one more merge of a part with no value:
/// M = max(m, sink), l' = l e^(m - M) + e^(sink - M); the unnormalized
/// output is rescaled by `accScale` = e^(m - M) (0 for m = -inf).
struct SinkMerge {
  Value m, l, accScale;
};
SinkMerge buildSinkMerge(OpBuilder &b, Location loc, Value m, Value l,
                         Value sink);

/// lse = m + log l, and exactly -inf for a row without any key (l = 0).
Value buildLogSumExp(OpBuilder &b, Location loc, Value m, Value l);

/// The power of two s with l * s in [0.5, 1) for a row sum l >= 1 (2^126 for
/// l = 0): the fused forms keep their accumulator scaled by s, so that it
/// stays within the range of the v values (no f32 overflow where the result
/// is finite) while every scaling is exact. Scalar or vector.
Value buildRowSumScale(OpBuilder &b, Location loc, Value l);

/// s / t for two row-sum scales (buildRowSumScale: normal powers of two), by
/// exponent arithmetic instead of a division (a dependent vdivss per row in
/// the online softmax): the bit patterns' difference plus 1.0's. A quotient
/// below the normal range is 0 (it only arises for t of an empty row, l = 0,
/// whose accumulator is 0), one above it the largest power of two (it cannot
/// arise: l <= Nk); so the result is always finite. Scalar or vector.
Value buildScaleRatio(OpBuilder &b, Location loc, Value s, Value t);

/// Clamps a kv_len element (i32/i64) to [0, Nk] as an index.
Value buildClampedKvLen(OpBuilder &b, Location loc, const LogitContext &ctx,
                        Value element);

} // namespace attn
} // namespace mlir

#endif // ATTN_CONVERSION_LOGITBUILDER_H
