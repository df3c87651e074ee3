//===- PagedKv.h - reading paged K/V through a page table -------*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// Paged K/V (`page_table(...)` on attn.attention): k and v are page pools
// [P, Hkv, S, D] (bhnd) or [P, S, Hkv, D] (bnhd), and logical key j of batch
// entry b is row j % S of page page_table[b, j / S]. Every form reads them
// through these helpers: the naive form gathers a dense copy, the fused and
// decode forms slice whole pages per key tile (their key tiles divide S).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_PAGEDKV_H
#define ATTN_CONVERSION_PAGEDKV_H

#include "attn/IR/AttnOps.h"

#include "mlir/IR/Builders.h"

namespace mlir {
namespace attn {

/// The logical key count Nk as an index value: k's N dimension, or
/// max_pages * S for paged K/V.
Value buildKvSeqLen(OpBuilder &b, Location loc, AttentionOp op);

/// Paged K/V: checks (a run-time check, RuntimeChecks.h) that every page
/// table entry a sequence reads, pages [0, ceil(min(kv_len[b], Nk) / S)),
/// lies in [0, P); the work is guarded by the checks, so that no form reads
/// outside the pool. Entries past a sequence's last page are
/// never read and may hold anything. No-op without a page table.
void emitPageTableChecks(OpBuilder &b, Location loc, AttentionOp op);

/// Paged K/V: the pool page (index) holding logical key `j` of batch entry
/// `bIdx` (page_table[bIdx, j / S]); the caller has checked it is readable.
Value buildPageIndex(OpBuilder &b, Location loc, AttentionOp op, Value bIdx,
                     Value j);

/// Paged K/V: a dense copy of `pool` (k or v) as [B, Hkv, Nk, D] in the op's
/// layout, read through the page table (a gather); keys past kv_len[b] are 0.
Value gatherPagedKv(OpBuilder &b, Location loc, AttentionOp op, Value pool);

} // namespace attn
} // namespace mlir

#endif // ATTN_CONVERSION_PAGEDKV_H
