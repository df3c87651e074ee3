//===- Interp.h - the emulator's interpreter (private) ----------*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// The state of an emulation: per-thread values of a block executing in
// lockstep, buffers, asynchronous copies in flight, and the dispatch table
// from op types to their handlers (one file per op family registers its
// handlers).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_GPUEMULATOR_INTERP_H
#define ATTN_LIB_GPUEMULATOR_INTERP_H

#include "attn/GPUEmulator/Emulator.h"

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Twine.h"

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

namespace mlir {
namespace attn {
namespace gpuemu {

//===----------------------------------------------------------------------===//
// Scalars
//===----------------------------------------------------------------------===//

/// Element kinds the emulator computes with.
/// Float kinds follow F16 (isFloat); the fp8 kinds (quantized K/V caches)
/// are rounded, encoded and decoded through llvm::APFloat.
enum class EK : uint8_t {
  I1,
  I8,
  I16,
  I32,
  I64,
  Index,
  F16,
  BF16,
  F32,
  F64,
  F8E4M3FN,
  F8E5M2
};

/// The element kind of a scalar type (or of a vector's/memref's elements);
/// false when unsupported.
bool kindOf(Type type, EK &kind);
inline bool isFloat(EK k) { return k >= EK::F16; }
unsigned bitWidth(EK k);
/// Bytes in memory (i1 takes a byte).
unsigned byteSize(EK k);
const char *kindName(EK k);

/// One element: integers sign-extended from their width (i1 is 0 or 1),
/// floats as the double holding their exact value.
union Slot {
  int64_t i;
  double f;
};

/// Rounds `x` to the nearest value of float kind `k` (ties to even).
double roundTo(EK k, double x);
/// Integer `x` reduced to the width of `k` (sign-extended; i1 to 0/1).
int64_t wrapInt(EK k, int64_t x);
/// Bit pattern of an element (zero-extended to 64 bits), and back.
uint64_t toBits(EK k, Slot s);
Slot fromBits(EK k, uint64_t bits);
/// Memory encoding of an element.
Slot loadElem(EK k, const uint8_t *p);
void storeElem(EK k, uint8_t *p, Slot s);

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

constexpr int kMaxRank = 8;

/// A memref as a (buffer, aligned pointer, offset, sizes, strides) view.
struct MemRefDesc {
  int32_t buf = -1;
  /// Byte offset of the aligned pointer in the buffer.
  int64_t base = 0;
  /// Offset in elements from the aligned pointer.
  int64_t offset = 0;
  int32_t rank = 0;
  int64_t sizes[kMaxRank] = {};
  int64_t strides[kMaxRank] = {};
};

/// An SSA value in a frame: one value per thread, or one for all threads
/// (`uniform`). Scalars and vectors keep `n` elements per thread (vectors
/// row-major); memrefs keep one descriptor per thread.
struct Val {
  bool defined = false;
  bool uniform = true;
  bool isRef = false;
  uint32_t n = 1;
  /// The interpreted-op count when the value was last defined (wgmma's
  /// fence rule compares it with the warpgroup's last wgmma.fence).
  int64_t stamp = 0;
  std::vector<Slot> data;
  std::vector<MemRefDesc> refs;

  Slot &at(unsigned lane, unsigned e) {
    return data[(uniform ? 0 : lane) * n + e];
  }
  const Slot &at(unsigned lane, unsigned e) const {
    return data[(uniform ? 0 : lane) * n + e];
  }
  MemRefDesc &ref(unsigned lane) { return refs[uniform ? 0 : lane]; }
};

//===----------------------------------------------------------------------===//
// Buffers and asynchronous copies
//===----------------------------------------------------------------------===//

struct Buffer {
  uint8_t *data = nullptr;
  int64_t bytes = 0;
  bool shared = false;
  /// Shared memory only: the buffer's address in the block's shared window
  /// (what memref.extract_aligned_pointer_as_index gives and wgmma
  /// descriptors hold).
  int64_t sharedBase = 0;
  std::string name;
  /// Storage the emulator owns (shared memory, allocations).
  std::vector<uint8_t> owned;
  // Shared memory only: per byte, the last writer and reader (a thread, or
  // -2 for several readers) and the barrier epoch of that access; and the
  // number of asynchronous copies in flight that will write it.
  std::vector<int32_t> writer, reader;
  std::vector<uint32_t> writeEpoch, readEpoch;
  std::vector<uint16_t> pending;
  /// Shared memory only: per byte, the wgmma operations in flight that read
  /// it (a write before their wait is a hazard).
  std::vector<uint16_t> asyncReads;
  /// Shared memory only: per byte, the TMA loads in flight that will write
  /// it (they land when their mbarrier's phase completes).
  std::vector<uint16_t> tmaPending;
  /// Shared memory only: per byte, the TMA landing that wrote it last
  /// (Interp::landings), or -1 if a thread wrote it since; a thread reading
  /// it must have seen that mbarrier phase complete.
  std::vector<int32_t> landedBy;
  /// Shared memory only: per byte, Interp::proxyClock when a thread last
  /// wrote it through the generic proxy (a store, a cp.async landing); the
  /// async proxy (wgmma) may read it once that thread has executed
  /// fence.proxy.async since.
  std::vector<int64_t> genericStamp;
};

// Buffers live in a vector that grows: moving one must keep `data` (the heap
// storage of `owned` moves with it).
static_assert(std::is_nothrow_move_constructible_v<Buffer>);

/// An asynchronous copy in flight: its bytes were read from the source when
/// it was issued and land in shared memory when a wait retires its group.
struct AsyncCopy {
  int32_t buf;
  int64_t dst;
  uint32_t len;
  uint8_t bytes[16];
  Operation *op;
};

/// The bytes of a TMA load (TmaOps.cpp), read from global memory when it
/// was issued, that land in shared memory when its mbarrier's phase
/// completes.
struct TmaLanding {
  int32_t buf;
  int64_t off;
  std::vector<uint8_t> bytes;
};

/// An mbarrier object (MBarrierOps.cpp): expected arrivals per phase, the
/// arrivals and transaction bytes its current phase still waits for, the
/// phase number, and the TMA loads that complete with the phase.
struct MBarrierState {
  bool initialized = false;
  int64_t index = 0;
  int64_t expected = 0, pending = 0, txBytes = 0, phase = 0;
  std::vector<TmaLanding> landing;
  /// Per thread, how many phases it has seen complete (a wait that
  /// returned): bytes a TMA load landed with phase p are visible to the
  /// threads with seen > p.
  std::vector<int64_t> seen;
};

/// The phase completion with which TMA bytes landed (Buffer::landedBy).
struct TmaLanded {
  const MBarrierState *barrier;
  int64_t phase;
};

/// A tensor map (nvgpu.tma.create.descriptor, TmaOps.cpp): the global
/// tensor, the box (outermost dimension first, as the memref), the swizzle
/// width in bytes (0: none) and the out-of-bounds fill.
struct TensorMap {
  MemRefDesc global;
  int32_t kind = 0; // EK
  int64_t box[kMaxRank] = {};
  unsigned swizzleBytes = 0;
  bool nanFill = false;
};

/// A wgmma group of one warpgroup (WgmmaOps.cpp): the accumulators its
/// wgmma.mma_async operations produce and the shared-memory bytes they read,
/// both in flight until a wgmma.wait.group retires the group.
struct WgmmaGroup {
  SmallVector<Value> results;
  /// (buffer, byte offset, bytes).
  std::vector<std::tuple<int32_t, int64_t, int64_t>> reads;
};

/// The wgmma state of one warpgroup (128 consecutive threads).
struct WarpgroupState {
  /// The interpreted-op count at its last wgmma.fence.aligned (0: none).
  int64_t fenceStamp = 0;
  /// Registers per thread its last setmaxnreg set (0: the launch's).
  int64_t maxRegisters = 0;
  /// Issued since the last commit, and committed but not yet retired.
  WgmmaGroup open;
  std::deque<WgmmaGroup> committed;
};

struct LaneAsyncState {
  std::vector<AsyncCopy> open;
  std::deque<std::vector<AsyncCopy>> committed;
};

//===----------------------------------------------------------------------===//
// Frames
//===----------------------------------------------------------------------===//

/// The values of one function activation or one block of a launch.
struct Frame {
  unsigned lanes = 1;
  std::vector<Val> vals;
  Frame *parent = nullptr;
  /// Threads executing the current region.
  std::vector<uint8_t> active;
  bool allActive = true;
  // Launch context (a block of the grid).
  bool isKernel = false;
  int64_t blockId[3] = {0, 0, 0};
  int64_t gridDim[3] = {1, 1, 1};
  int64_t blockDim[3] = {1, 1, 1};
  std::vector<LaneAsyncState> async;
  int32_t dynamicSharedBuf = -1;
  /// The block's shared buffers (dynamic, then workgroup attributions).
  std::vector<int32_t> sharedBufs;
};

class Interp;
using Handler = LogicalResult (*)(Interp &, Operation *, Frame &);

//===----------------------------------------------------------------------===//
// The interpreter
//===----------------------------------------------------------------------===//

class Interp {
public:
  Interp(ModuleOp module, const EmulatorOptions &options);

  llvm::Error run(StringRef funcName, ArrayRef<EmulatedBuffer> args);

  // Values.
  Val &get(Frame &f, Value v);
  /// The storage of result `v`: `n` elements per thread, uniform or not
  /// (always uniform in a one-thread frame). Old contents are undefined.
  Val &def(Frame &f, Value v, unsigned n, bool uniform);
  Val &defRef(Frame &f, Value v, bool uniform);
  /// Copies `src` into `dst` for the active threads (all of `src` when
  /// every thread is active).
  void assignMasked(Frame &f, Val &dst, const Val &src);

  /// Whether the active threads all hold the same value of `v`.
  bool isUniformOverActive(Frame &f, const Val &v);

  template <typename F> void forActive(Frame &f, F fn) {
    for (unsigned l = 0; l < f.lanes; ++l)
      if (f.allActive || f.active[l])
        fn(l);
  }
  /// Lanes to compute for a result: one if uniform, else the active ones.
  template <typename F> void forResult(Frame &f, bool uniform, F fn) {
    if (uniform)
      fn(0u);
    else
      forActive(f, fn);
  }

  // Execution.
  LogicalResult execBlock(Block &block, Frame &f);
  LogicalResult execOp(Operation *op, Frame &f);
  /// Runs `region`'s single block with `args` bound to its arguments and
  /// returns the operands of its terminator in `yielded`.
  LogicalResult execRegion(Region &region, Frame &f, ArrayRef<Val *> args,
                           SmallVectorImpl<Val *> &yielded);

  // Errors.
  LogicalResult fail(Operation *op, const Twine &msg);
  LogicalResult failLane(Operation *op, Frame &f, unsigned lane,
                         const Twine &msg);
  std::string threadName(Frame &f, unsigned lane);

  // Memory.
  int32_t addBuffer(Buffer b);
  Buffer &buffer(int32_t id) { return buffers[id]; }
  /// Resolves an access of `count` consecutive elements (along the last
  /// dimension) at `indices`, checking bounds; returns the byte offset in
  /// the buffer.
  LogicalResult address(Operation *op, Frame &f, unsigned lane,
                        const MemRefDesc &m, ArrayRef<int64_t> indices,
                        unsigned elemBytes, int64_t count, int64_t &byteOff);
  /// Race and in-flight-copy checks of shared memory accesses.
  LogicalResult noteRead(Operation *op, Frame &f, unsigned lane, int32_t buf,
                         int64_t off, int64_t len);
  LogicalResult noteWrite(Operation *op, Frame &f, unsigned lane, int32_t buf,
                          int64_t off, int64_t len);
  /// Retires the oldest groups of `lane` until at most `keep` are pending.
  LogicalResult retireAsync(Operation *op, Frame &f, unsigned lane,
                            size_t keep);
  void barrier() { ++epoch; }
  /// Per named barrier (0 to 15, BarrierOps.cpp): the threads that have
  /// arrived at its current use.
  std::array<int64_t, 16> namedArrivals = {};
  /// Checks that every warp is entirely active or entirely inactive and
  /// that the block is made of whole warps.
  LogicalResult checkWarpsConverged(Operation *op, Frame &f);

  // Kernel launch.
  LogicalResult launch(Operation *op, Frame &host);

  void registerHandler(TypeID id, Handler h) { handlers[id] = h; }

  const EmulatorOptions &options;
  EmulatorStats stats;
  /// The first failed run-time check of the host code (the message
  /// libattn_runtime would give); empty if none.
  std::string checkFailure;
  /// Its attn_status_t.
  int checkStatus = 0;
  uint32_t epoch = 1;
  /// The mbarrier objects, by (buffer of their group, index in it).
  std::map<std::pair<int32_t, int64_t>, MBarrierState> mbarriers;
  /// wgmma (WgmmaOps.cpp): per warpgroup of the block, and the accumulators
  /// in flight with, per warpgroup, how many issued groups still produce
  /// them. Reading one before its wait is an error (execOp checks every
  /// operand while any is in flight).
  std::vector<WarpgroupState> warpgroups;
  llvm::DenseMap<Value, std::array<uint16_t, 8>> inflight;
  /// Tensor maps by the value their descriptors hold.
  std::vector<TensorMap> tensorMaps;
  /// The phase completions that landed TMA bytes in this block.
  std::vector<TmaLanded> landings;
  /// Cross-proxy ordering (BarrierOps.cpp): a clock, and per thread its
  /// value at the thread's last fence.proxy.async (0: none).
  int64_t proxyClock = 0;
  std::vector<int64_t> proxyFence;
  /// Fails when the async proxy (wgmma) reads bytes a thread wrote through
  /// the generic proxy without a fence.proxy.async after the write.
  LogicalResult checkAsyncProxyRead(Operation *op, Frame &f, unsigned lane,
                                    int32_t buf, int64_t off, int64_t len);
  /// Completes the current phase of `s` (MBarrierOps.cpp and TmaOps.cpp):
  /// the TMA loads of the phase land, the next phase starts.
  LogicalResult completePhase(Operation *op, Frame &f, unsigned lane,
                              MBarrierState &s);
  LogicalResult checkInflightOperands(Operation *op, Frame &f);
  /// Resolves `len` bytes at shared-window address `addr` to a shared
  /// buffer of the block and a byte offset in it; fails if they are not
  /// inside one.
  LogicalResult sharedAddress(Operation *op, Frame &f, unsigned lane,
                              int64_t addr, int64_t len, int32_t &buf,
                              int64_t &off);

private:
  void numberValues(Operation *root);
  unsigned id(Value v);

  ModuleOp module;
  llvm::DenseMap<Value, unsigned> ids;
  llvm::DenseMap<TypeID, Handler> handlers;
  std::vector<Buffer> buffers;
  std::string error;
  Frame kernelFrame;
};

// Registration of each op family's handlers.
void registerArithHandlers(Interp &interp);
void registerVectorHandlers(Interp &interp);
void registerMemRefHandlers(Interp &interp);
void registerGPUHandlers(Interp &interp);
void registerNVGPUHandlers(Interp &interp);
void registerMBarrierHandlers(Interp &interp);
void registerWgmmaHandlers(Interp &interp);
void registerTmaHandlers(Interp &interp);
/// The mbarrier `id` of the group `group` for thread `lane` (MBarrierOps.cpp;
/// an index outside the group is an error).
LogicalResult barrierOf(Interp &in, Operation *op, Frame &f, unsigned lane,
                        Value group, Value id, MBarrierState *&out);
void registerBarrierHandlers(Interp &interp);
void registerControlFlowHandlers(Interp &interp);

/// Element kind of a value's type (scalar, vector or memref), failing on
/// unsupported types.
LogicalResult valueKind(Interp &interp, Operation *op, Type type, EK &kind);
/// Elements per thread of a scalar (1) or vector type.
unsigned numElems(Type type);
/// Reads index-like operands (index or integer) of thread `lane`.
void readIndices(Interp &interp, Frame &f, ValueRange values, unsigned lane,
                 SmallVectorImpl<int64_t> &out);

} // namespace gpuemu
} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_GPUEMULATOR_INTERP_H
