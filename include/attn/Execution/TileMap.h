//===- TileMap.h - fused key tiles and structural FLOPs ---------*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// Host-side predictions of what a compiled attention kernel does for concrete
// sizes: which key tiles the fused form computes in full, computes with mask
// arithmetic or skips, and how many FLOPs the contract needs.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_EXECUTION_TILEMAP_H
#define ATTN_EXECUTION_TILEMAP_H

#include "attn/Execution/HostTensor.h"
#include "attn/IR/AttnOps.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>

namespace mlir {
namespace attn {

/// Key tiles of the fused form: computed without mask arithmetic (full), with
/// it (boundary), or never visited (skipped); summed over every batch entry
/// and K/V head.
struct TileCounts {
  int64_t full = 0, boundary = 0, skipped = 0;
};

/// The fused form's key-tile classification for concrete sizes (`kvLens`
/// empty: every batch reads all `nk` keys) and tiles of `tq` x `tk`. Counts
/// are per (batch, K/V head) pair summed over batch. With `print`, writes one
/// map per distinct kv_len ('#' full, '+' boundary, '.' skipped) and a
/// summary line to it.
TileCounts tileMap(AttentionOp op, llvm::ArrayRef<HostTensor> args,
                   int64_t batch, int64_t hkv, int64_t nq, int64_t nk,
                   llvm::ArrayRef<int64_t> kvLens, int64_t tq, int64_t tk,
                   llvm::raw_ostream *print);

/// FLOPs the contract needs, (2 Dqk + 2 Dv) per structurally allowed
/// (query, key) pair per query head, counted row by row from kv_len, causal
/// and window (as the reference counts them, without the mask's content).
/// `args` are the values of the entry function's arguments; 0 when q, k, v
/// or kv_len are not arguments.
double structuralFlops(AttentionOp op, llvm::ArrayRef<HostTensor> args);

/// Bytes a call moves at least: every input read and every result written
/// once, K and V only up to kv_len (the floor of the memory traffic; decode
/// is bound by it). `args` are the entry function's arguments, `results` its
/// results.
double trafficBytes(AttentionOp op, llvm::ArrayRef<HostTensor> args,
                    llvm::ArrayRef<HostTensor> results);

} // namespace attn
} // namespace mlir

#endif // ATTN_EXECUTION_TILEMAP_H
