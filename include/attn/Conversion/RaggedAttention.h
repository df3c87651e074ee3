//===- RaggedAttention.h - ragged batches as a loop over sequences -*- C++ -*-//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// Ragged batches (`ragged(%cu_q, %cu_k ...)` on attn.attention) pack the
// tokens of B sequences along N of q, k, v and out. Every form lowers them
// the same way: a loop over the sequences whose body is a dense
// attn.attention over the sequence's slices (its own Nq and Nk, so causal,
// windows and ALiBi sit on its own diagonal), lowered in turn by the form's
// own pattern. Tile skipping and the split-KV merge thus work per sequence,
// and no padded copy exists.
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

} // namespace attn
} // namespace mlir

#endif // ATTN_CONVERSION_RAGGEDATTENTION_H
