//===- RaggedAttention.h - ragged batches as a loop over sequences -*- C++ -*-//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// Ragged batches (`ragged(%cu_q, %cu_k ...)` on attn.attention) pack the
// tokens of B sequences along N of q, k, v and out. Each sequence is the
// dense attn.attention over its slices (its own Nq and Nk, so causal,
// windows and ALiBi sit on its own diagonal): buildSequenceOp builds it.
// The naive form lowers a ragged op as a loop over the sequences of such
// ops (rewriteRaggedAsLoop), each lowered in turn by the form's own
// pattern; the CPU's fused and decode forms build one work list over every
// sequence's tiles instead (AttnToCPU/RaggedWorkList.cpp), lowering one
// query tile of the sequence's op per item. Tile skipping and the split-KV
// merge thus work per sequence, and no padded copy exists.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_RAGGEDATTENTION_H
#define ATTN_CONVERSION_RAGGEDATTENTION_H

#include "attn/IR/AttnOps.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace attn {

/// Replaces a ragged `op` by run-time checks of its offsets (non-decreasing,
/// within the packed tokens) and a loop over its sequences of dense
/// attn.attention ops on slices; rows outside every sequence get out = 0 and
/// lse = -inf.
void rewriteRaggedAsLoop(PatternRewriter &rewriter, AttentionOp op);

/// The run-time checks of a ragged `op`: offsets non-decreasing and within
/// the packed tokens, as many offsets for K as for Q, at least one sequence,
/// and the shape checks of every attention op (emitRuntimeShapeChecks).
void emitRaggedChecks(OpBuilder &b, Location loc, AttentionOp op);

/// Sequence `s`'s packed query rows [q0, q0 + nq) of a ragged `op`.
std::pair<Value, Value> sequenceRows(OpBuilder &b, Location loc, AttentionOp op,
                                     Value s);
/// Sequence `s`'s packed keys [k0, k0 + nk) of a ragged `op` that is not
/// paged (from cu_seqlens_k).
std::pair<Value, Value> sequenceKeys(OpBuilder &b, Location loc, AttentionOp op,
                                     Value s);

/// The dense attn.attention of sequence `s` of a ragged `op` (rows
/// [q0, q0 + nq)): its slices of q, k, v, scales, masks and bias, its row of
/// the page table and its kv_len entry, and `op`'s regions, which see `s` as
/// their batch index.
AttentionOp buildSequenceOp(PatternRewriter &rewriter, Location loc,
                            AttentionOp op, Value s, Value q0, Value nq);

} // namespace attn
} // namespace mlir

#endif // ATTN_CONVERSION_RAGGEDATTENTION_H
