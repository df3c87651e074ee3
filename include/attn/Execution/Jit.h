//===- Jit.h - compile and call attn specs on the host ----------*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// Compiles a module holding attn specs for the host CPU with MLIR's
// ExecutionEngine and calls one function of it with host tensors. The
// function's tensor arguments become memref descriptors; its results come
// back as memrefs that the compiled code allocated, copied into HostTensors
// and freed.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_EXECUTION_JIT_H
#define ATTN_EXECUTION_JIT_H

#include "attn/Execution/HostTensor.h"
#include "attn/Pipelines/Pipelines.h"
#include "attn/Schedule/LoweringChoice.h"
#include "attn/Target/CpuTarget.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <tuple>
#include <vector>

namespace mlir {
class ExecutionEngine;
namespace attn {

/// The CPU code generation options. targetCpu and targetFeatures may name
/// a CPU other than the host, with features alone meaning the host's CPU
/// with them; compiling for a CPU with features this host lacks fails,
/// rather than stopping at run time on an illegal instruction. `parallel`
/// uses OMP_NUM_THREADS threads.
struct JitOptions : CpuCodegenOptions {};

/// One key tile an instrumented kernel computed.
struct TileVisit {
  int64_t batch, kvHead, queryTile, keyTile;
  bool boundary;
  bool operator<(const TileVisit &o) const {
    return std::tie(batch, kvHead, queryTile, keyTile, boundary) <
           std::tie(o.batch, o.kvHead, o.queryTile, o.keyTile, o.boundary);
  }
  bool operator==(const TileVisit &o) const {
    return !(*this < o) && !(o < *this);
  }
};

class JitFunction {
public:
  ~JitFunction();

  /// Lowers a clone of `module` holding `entry` and what it reaches
  /// (eraseOtherFunctions) and JIT-compiles it. `entry` names a func.func
  /// whose arguments and results are ranked tensors. Fails for an
  /// unknown target CPU or feature, and for a target this host cannot run.
  static llvm::Expected<std::unique_ptr<JitFunction>>
  compile(ModuleOp module, llvm::StringRef entry, const JitOptions &options);

  /// Calls the function. `inputs` must match the argument types (element
  /// kinds and static sizes). Statically shaped results are written into
  /// `outputs` by the compiled code itself (out-params, the default);
  /// results of dynamic size are allocated by it and copied. A failed run-time
  /// check of the generated code (dynamic sizes that disagree, page table
  /// entries, ragged offsets, region reads; docs/Robustness.md) is an error
  /// with the check's message, and lastCheckStatus() says its status; `outputs`
  /// is then empty.
  llvm::Error invoke(llvm::ArrayRef<const HostTensor *> inputs,
                     std::vector<HostTensor> &outputs);

  /// The attn_status_t (attn-c/Kernel.h) of the last call's failed run-time
  /// check; 0 (ATTN_STATUS_OK) when none failed.
  int lastCheckStatus() const { return checkStatus; }

  /// Number of key tiles visited (total, boundary) by instrumented kernels
  /// since the last reset; see JitOptions::instrumentTiles.
  static void resetTileCounters();
  static std::pair<int64_t, int64_t> tileCounters();
  /// Every key tile instrumented kernels computed since the last reset, in
  /// the order of the calls (any order across threads), while logging is
  /// enabled (off by default: the counters above cost no lock).
  static std::vector<TileVisit> visitedTiles();
  static void setTileLogging(bool enabled);

  /// Heap bytes the compiled code holds now / held at most since the last
  /// resetHeapPeak (all JIT-compiled functions share one counter).
  static void resetHeapPeak();
  static int64_t heapPeakBytes();
  static int64_t heapCurrentBytes();

  /// Makes every allocation of the compiled code larger than `bytes` fail
  /// (return null, as malloc does when memory runs out; 0: no limit), for
  /// all JIT-compiled functions: the call then fails with
  /// ATTN_STATUS_OUT_OF_MEMORY (attn-check-allocations). For tests of that
  /// path, and to cap what one call may allocate.
  static void setAllocationLimit(int64_t bytes);

  /// What the lowering chose for each attention op of the function (form,
  /// tiles, splits, register tile), in order.
  llvm::ArrayRef<LoweringChoice> loweringChoices() const { return choices; }

  /// Seconds spent lowering and compiling.
  double compileSeconds() const { return compileTime; }
  /// Seconds the last invoke spent in the compiled function itself (with
  /// the allocation of outputs of dynamic size; not the argument checks
  /// and out-param buffers before it or the copy of returned results into
  /// HostTensors after it).
  double lastCallSeconds() const { return callTime; }
  const std::vector<RankedTensorType> &argumentTypes() const { return args; }
  const std::vector<RankedTensorType> &resultTypes() const { return results; }
  /// True when the results are out-params (JitOptions::outParams, and every
  /// result statically shaped or the results destinations sized from the
  /// arguments, attn::destinationShapes): the compiled code allocates none
  /// of them.
  bool resultsAreOutParams() const { return resultsOut; }
  /// The CPU the code was generated for (JitOptions::targetCpu and
  /// targetFeatures resolved; the host's when both are empty).
  const CpuTarget &target() const { return cpuTarget; }

private:
  JitFunction() = default;
  std::unique_ptr<ExecutionEngine> engine;
  std::string name;
  std::vector<RankedTensorType> args, results;
  CpuTarget cpuTarget;
  llvm::SmallVector<LoweringChoice> choices;
  double callTime = 0;
  double compileTime = 0;
  int checkStatus = 0;
  bool resultsOut = false;
  /// Results that are destinations: per dimension, (argument, dimension) or
  /// (-1, static size).
  std::vector<std::vector<std::pair<int64_t, int64_t>>> resultSizes;
};

/// Path of MLIR's C runner utilities (memrefCopy and friends).
llvm::StringRef cRunnerUtilsPath();
/// Path of the OpenMP runtime parallel kernels call into.
llvm::StringRef openMPRuntimePath();

} // namespace attn
} // namespace mlir

#endif // ATTN_EXECUTION_JIT_H
