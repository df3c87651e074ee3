//===- RuntimeChecks.h - run-time checks of generated code ------*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// The one error channel of generated code. A check whose condition fails
// calls `attn_rt_check_failed(ctx, check, a0..a3)` (libattn_runtime, or the
// JIT's registration of the same functions): it records the check's index
// (attn/Runtime/RuntimeChecks.def) and up to four operands (the index and
// the offending value) in the calling thread's error record, the first
// failure of a call winning. `ctx` is that record's address, taken once per
// block on the calling thread, so that OpenMP workers record into the
// caller's. Work that depends on checked data is guarded by
// `attn_rt_has_failed(ctx)`: after a failure it is skipped and the results
// are zeros. Nothing aborts, asserts or traps.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_RUNTIMECHECKS_H
#define ATTN_CONVERSION_RUNTIMECHECKS_H

#include "mlir/IR/Builders.h"

#include "llvm/ADT/STLFunctionalExtras.h"

namespace mlir {
namespace attn {

enum class RuntimeCheck : int32_t {
#define ATTN_RUNTIME_CHECK(Name, STATUS, FORMAT) Name,
#include "attn/Runtime/RuntimeChecks.def"
};

/// The names of the runtime functions generated code calls.
inline constexpr StringLiteral kErrorContextFn = "attn_rt_error_context";
inline constexpr StringLiteral kCheckFailedFn = "attn_rt_check_failed";
inline constexpr StringLiteral kHasFailedFn = "attn_rt_has_failed";
/// The GPU runtime's multiprocessor count of the current device (0 when
/// unknown; attn-c/Gpu.h), called by the GPU host code.
inline constexpr StringLiteral kGpuSmCountFn = "attn_gpu_sm_count";
/// Marks the linalg.fill of buildZeroResults.
inline constexpr StringLiteral kZerosAfterFailureAttr =
    "attn.zeros_after_failure";

/// The calling thread's error record (its address as an i64), obtained right
/// before `anchor` (reused when an op before `anchor` in its block obtains it).
/// The functions are declared in the nearest symbol table.
Value getErrorContext(OpBuilder &b, Operation *anchor);

/// Declares the runtime functions in `symbolTable` and obtains the calling
/// thread's error record at the insertion point (for code built outside an
/// anchor's block, such as a new host function).
Value buildErrorContext(OpBuilder &b, Location loc, Operation *symbolTable);

/// Records `check` with `args` (index or integer values, at most four)
/// unless `ok` holds.
void emitRuntimeCheck(OpBuilder &b, Location loc, Operation *anchor, Value ok,
                      RuntimeCheck check, ArrayRef<Value> args = {});
void emitRuntimeCheckInto(OpBuilder &b, Location loc, Value ctx, Value ok,
                          RuntimeCheck check, ArrayRef<Value> args = {});
/// Records the check whose index (RuntimeCheck, an integer value) was
/// recorded elsewhere (a GPU kernel's error word) with `args` when `failed`.
void emitRecordedCheckInto(OpBuilder &b, Location loc, Value ctx, Value failed,
                           Value check, ArrayRef<Value> args);

/// i1: a check of this call has failed (this op's or an earlier one's).
Value buildHasFailed(OpBuilder &b, Location loc, Operation *anchor);
Value buildHasFailedIn(OpBuilder &b, Location loc, Value ctx);

/// `scf.if` on buildHasFailed: `onFailure` builds the values yielded after
/// a failure, `body` the work. Returns the if's results. Without a check
/// in `anchor`'s block so far, just `body` (no runtime call for a spec
/// whose sizes are static; its allocations are checked later, by
/// attn-check-allocations).
SmallVector<Value>
buildGuarded(OpBuilder &b, Location loc, Operation *anchor, TypeRange types,
             function_ref<SmallVector<Value>(OpBuilder &, Location)> onFailure,
             function_ref<SmallVector<Value>(OpBuilder &, Location)> body);

/// buildGuarded over `op`'s result types, with zeros after a failure (what
/// an attention op yields then).
SmallVector<Value> buildGuardedOrZeros(
    OpBuilder &b, Location loc, Operation *op,
    function_ref<SmallVector<Value>(OpBuilder &, Location)> body);

/// Zero-filled tensors of `types`, dynamic dimensions of size 0: what an
/// attention op yields after a failed check. The fills carry
/// kZerosAfterFailureAttr (attn-write-destinations fills a destination
/// instead).
SmallVector<Value> buildZeroResults(OpBuilder &b, Location loc,
                                    TypeRange types);

} // namespace attn
} // namespace mlir

#endif // ATTN_CONVERSION_RUNTIMECHECKS_H
