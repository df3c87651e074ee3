//===- Emulator.h - warp-level emulation of GPU kernels on the CPU -*- C++
//-*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// Runs a host function that launches GPU kernels (`gpu.launch`, at the stage
// `--convert-attn-to-gpu` produces, before outlining and NVVM conversion) on
// the CPU. Every block of the grid runs all its threads in lockstep; each SSA
// value holds one value per thread, so warp-level operations (gpu.shuffle,
// nvgpu.ldmatrix, nvgpu.mma.sync, nvgpu.device_async_copy) move data between
// lanes the way the PTX ISA describes. See docs/GPU.md, "Warp-level emulator".
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_GPUEMULATOR_EMULATOR_H
#define ATTN_GPUEMULATOR_EMULATOR_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir {
namespace attn {

/// One argument of the emulated host function: a buffer in host memory (for a
/// memref argument; its element type is the memref's) or a scalar (for an
/// integer, index or float argument).
struct EmulatedBuffer {
  /// Start of the buffer (the memref's aligned pointer, offset 0).
  void *data = nullptr;
  /// Size of the allocation in bytes (bounds checks use it).
  int64_t bytes = 0;
  std::vector<int64_t> shape;
  /// Strides in elements; empty means row-major contiguous.
  std::vector<int64_t> strides;
  /// Offset of the first element, in elements.
  int64_t offset = 0;

  bool isScalar = false;
  int64_t intValue = 0;
  double floatValue = 0;

  static EmulatedBuffer memref(void *data, int64_t bytes,
                               std::vector<int64_t> shape) {
    EmulatedBuffer b;
    b.data = data;
    b.bytes = bytes;
    b.shape = std::move(shape);
    return b;
  }
  static EmulatedBuffer scalarInt(int64_t v) {
    EmulatedBuffer b;
    b.isScalar = true;
    b.intValue = v;
    b.floatValue = static_cast<double>(v);
    return b;
  }
  static EmulatedBuffer scalarFloat(double v) {
    EmulatedBuffer b;
    b.isScalar = true;
    b.floatValue = v;
    b.intValue = static_cast<int64_t>(v);
    return b;
  }
};

/// Counters of one emulation (for tests and the CLI).
struct EmulatorStats {
  int64_t launches = 0;
  int64_t blocks = 0;
  int64_t threads = 0;
  /// Operations interpreted (once per op per block, not per thread).
  int64_t ops = 0;
  int64_t mmaSyncs = 0;
  /// wgmma.mma_async operations, once per warpgroup.
  int64_t wgmmas = 0;
  int64_t ldmatrices = 0;
  int64_t shuffles = 0;
  int64_t asyncCopies = 0;
  int64_t barriers = 0;
};

struct EmulatorOptions {
  /// Report a read of shared memory by thread A of bytes another thread wrote
  /// since the last barrier of the block (a missing gpu.barrier).
  bool detectSharedRaces = true;
  /// Report a read of shared-memory bytes no thread of the block has
  /// written (an asynchronous copy that landed counts as a write).
  bool detectUninitializedReads = true;
  /// Report a read or write of shared-memory bytes that an asynchronous copy
  /// still in flight will write (a missing nvgpu.device_async_wait). When
  /// false, such reads see the bytes as they were before the copy.
  bool reportAsyncHazards = true;
  /// Interpreted operations (per block, not per thread) after which the
  /// emulation stops with an error: a kernel that does not terminate.
  int64_t maxOps = int64_t(1) << 32;
  /// The multiprocessor count the host code's attn_gpu_sm_count call gets
  /// (the split-KV grid is sized from it); 0 stands for a runtime that
  /// cannot tell.
  int32_t smCount = 132;
  /// Emulate only these blocks (linear block ids; empty: all blocks).
  std::vector<int64_t> onlyBlocks;
  /// Filled when non-null.
  EmulatorStats *stats = nullptr;
  /// When non-null, receives the attn_status_t of the host code's first
  /// failed run-time check (the error then carries its message), 0 when
  /// none failed.
  int *checkStatus = nullptr;
};

/// Runs `funcName` of `module` with `args`, one per function argument.
/// Buffers are read and written in place. Errors (an unsupported op, an
/// out-of-bounds access, divergent collective operations, a race) name the
/// op's location, the block and the thread.
llvm::Error emulate(ModuleOp module, llvm::StringRef funcName,
                    llvm::ArrayRef<EmulatedBuffer> args,
                    const EmulatorOptions &options = {});

/// Registers the dialects the emulator interprets (for tools and tests that
/// parse kernels).
void registerEmulatorDialects(DialectRegistry &registry);

} // namespace attn
} // namespace mlir

#endif // ATTN_GPUEMULATOR_EMULATOR_H
