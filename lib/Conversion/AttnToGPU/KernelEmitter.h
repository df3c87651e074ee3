//===- KernelEmitter.h - the GPU kernel emitter (private) ------*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// The emitter of the GPU form, shared by KernelBuilder.cpp (the kernel body:
// staging, S = Q K^T, online softmax, P V, epilogue) and KernelHost.cpp
// (host code, split-KV merge kernel, the entry points of KernelBuilder.h).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_ATTNTOGPU_KERNELEMITTER_H
#define ATTN_CONVERSION_ATTNTOGPU_KERNELEMITTER_H

#include "KernelBuilder.h"

#include "attn/Conversion/LogitBuilder.h"
#include "attn/Conversion/ModInputs.h"
#include "attn/Schedule/LoweringChoice.h"
#include "attn/Schedule/MaskBounds.h"
#include "attn/Schedule/Schedule.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>

namespace mlir {
namespace attn {
namespace gpu_codegen {
namespace detail {

constexpr int64_t kLanes = 32;
/// Row padding of the shared-memory tiles, in elements (16 bytes): rows of
/// an 8x8 ldmatrix tile then start in different banks.
constexpr int64_t kPad = 8;
constexpr double kLog2E = 1.4426950408889634;

/// Four warps unless stated: fewer warps would compute fewer padded rows
/// for decode (G * Nq <= 16), but each thread would then issue four times
/// the copies per tile, and their addresses spill at head dim 128.
inline int64_t chooseWarps(AttentionOp op, const GpuKernelOptions &opts) {
  return opts.warps > 0 ? opts.warps : 4;
}

/// Query rows per warp of the row-tiled kernel: 16 unless stated. 32
/// (FlashAttention-2's shape: each K and V fragment read from shared memory
/// feeds two mma.sync) is built and verified but not the default: it has
/// not been measured on a device, and ptxas spills it at Dv = 128 with 64-key
/// tiles (S and O of two fragments, 192 accumulator registers, leave too
/// few for the rest; docs/GPU.md has the register table).
inline int64_t chooseWarpRows(AttentionOp op, const GpuKernelOptions &opts) {
  return opts.warpRows > 0 ? opts.warpRows : 16;
}

/// The projections' GEMM kernel (GemmKernel.cpp): 64 columns and 32 steps
/// of K per block.
constexpr int64_t kGemmTileN = 64;
constexpr int64_t kGemmTileK = 32;

/// Blocks per SM the split-KV decode form aims for, of the device's SMs
/// (attn_gpu_sm_count at run time; kDefaultSmCount, an H100/H200's, when the
/// runtime cannot tell).
constexpr int64_t kBlocksPerSm = 2;
constexpr int64_t kDefaultSmCount = 132;

/// Split-KV when every row of the op fits one row tile (decode: Nq * G <=
/// TQ) and splits are not turned off.
/// Whether split-KV is chosen per call: the query length is dynamic (the
/// heads static), so the host launches split-KV when the rows of every
/// (batch, K/V head) fit one row tile and the row-tiled kernel otherwise.
inline bool choosesSplitKvPerCall(AttentionOp op, int64_t splits) {
  if (splits == 0 || op.isRagged())
    return false;
  int64_t hq = op.getNumQueryHeads(), hkv = op.getNumKvHeads();
  return !ShapedType::isDynamic(hq) && !ShapedType::isDynamic(hkv) &&
         hkv != 0 && ShapedType::isDynamic(op.getQuerySeqLen());
}

inline bool usesSplitKv(AttentionOp op, int64_t tq, int64_t splits) {
  if (splits == 0 || op.isRagged())
    return false;
  int64_t hq = op.getNumQueryHeads(), hkv = op.getNumKvHeads();
  int64_t nq = op.getQuerySeqLen();
  if (ShapedType::isDynamic(hq) || ShapedType::isDynamic(hkv) ||
      ShapedType::isDynamic(nq) || hkv == 0)
    return false;
  return nq * (hq / hkv) <= tq;
}

/// The identity-layout memref of a ranked tensor type.
inline MemRefType toMemRef(Type t) {
  auto ranked = cast<RankedTensorType>(t);
  return MemRefType::get(ranked.getShape(), ranked.getElementType());
}

/// The device-side error word of a launch whose kernel checks data only it
/// reads: i64 [6] in device memory, [0] the number of failed checks, [1] the
/// first one's RuntimeCheck index, [2..5] its operands. The host zeroes it
/// before the launches, copies it back after them and records the check in
/// the calling thread's error record (the same messages and statuses as the
/// CPU's).
struct ErrorWord {
  Value device, host;
  /// Allocates and zeroes the word in the stream-ordered chain `token`.
  static ErrorWord begin(OpBuilder &b, Location loc, Value &token);
  /// Copies the word back to the host and frees it, in the chain.
  void end(OpBuilder &b, Location loc, Value &token) const;
  /// After the chain's wait: records the word's check in `errors`; i1,
  /// whether one failed.
  Value report(OpBuilder &b, Location loc, Value errors) const;
};

/// In a kernel: records `check` with `args` in the error word `word` unless
/// `ok` holds; the thread that raises the count from 0 writes the check and
/// its operands (the first failure of the launch wins).
void emitDeviceCheck(OpBuilder &b, Location loc, Value word, Value ok,
                     RuntimeCheck check, ArrayRef<Value> args);

/// On the host: when `cond` holds, fills `bufs` (null ones skipped) with
/// zeros and waits.
void emitZeroFill(OpBuilder &b, Location loc, Value cond, ArrayRef<Value> bufs);

/// The host function that replaces `fn` (same name once `fn` is gone, set
/// by replaceWithHostFunction): memref arguments (`fn`'s inputs, then
/// `results` as out-parameters), no results, `fn`'s attributes, and the
/// lowering choice of `warps` warps and row tiles of `tileQ` rows; the
/// builder at its entry.
func::FuncOp createHostFunction(OpBuilder &b, func::FuncOp fn,
                                TypeRange results, int64_t warps, int64_t tileQ,
                                const GpuKernelOptions &opts);
/// Erases `fn` and gives `hostFn` its name.
void replaceWithHostFunction(func::FuncOp fn, func::FuncOp hostFn);

/// Everything the kernel emitter needs: the op, its memrefs and sizes.
class KernelEmitter {
public:
  KernelEmitter(OpBuilder &b, Location loc, AttentionOp op, int64_t warps,
                int64_t tileK, int64_t splits, int64_t warpRows = 16)
      : b(b), loc(loc), op(op), warps(warps), tq(16 * warps), tk(tileK),
        splitsOpt(splits), a{b, loc} {
    // Split-KV is decided with 16 rows per warp, and its kernels keep them
    // (a decode step's few rows would otherwise leave most rows padding).
    splitMode = usesSplitKv(op, tq, splits);
    splitPerCall = choosesSplitKvPerCall(op, splits);
    rowFragsTiled = warpRows / 16;
    setRowFrags(splitMode ? 1 : rowFragsTiled);
    sigmoid = op.getNormalization() == Normalization::sigmoid;
    srcElem = cast<ShapedType>(op.getQuery().getType()).getElementType();
    // f32 inputs are rounded to bf16 (f32's range) as they are staged.
    elem = srcElem.isF32() ? Type(b.getBF16Type()) : srcElem;
    d = op.getHeadDimQK();
    dv = op.getHeadDimV();
    f32 = b.getF32Type();
  }

  std::string fnName;
  /// S = Q K^T (and O += P V) on wgmma where the shape allows it
  /// (usesWgmma, usesWgmmaPV); how many of the two GEMMs the kernels
  /// emitted so far run on it (0, 1 or 2).
  bool wgmmaOpt = false;
  int64_t emittedWgmma = 0;
  /// Records on `hostFn`'s lowering choices that a kernel runs wgmma.
  void recordWgmma(Operation *hostFn) const {
    if (int64_t n = emittedWgmma)
      updateLoweringChoices(hostFn, [n](LoweringChoice &c) { c.wgmma = n; });
  }

  /// The body of a GEMM launch: `result` [m, n] = `lhs` [m, k] `rhs` [k, n],
  /// row-major buffers of the spec's element type (GemmKernel.cpp); the
  /// launch has (ceil(m / 16 W), ceil(n / 64)) blocks of 32 W threads and
  /// gemmSharedBytes() of dynamic shared memory. k and n are multiples of 8.
  void emitGemm(gpu::LaunchOp launch, Value lhs, Value rhs, Value result,
                Value m, Value n, Value k);
  int64_t gemmSharedBytes();
  /// The launch's GPU module and a kernel name in it (<fn>_<what>).
  FlatSymbolRefAttr gpuModule() { return kernelModule(); }
  FlatSymbolRefAttr kernel(StringRef what) { return kernelName(what); }
  int64_t numWarps() const { return warps; }

  /// Host code: sizes, checks, the launch. `args` are the new function's
  /// arguments in the order q, k, v, modifiers..., out, [lse].
  void emitHost(ValueRange inputs, Value outBuf, Value lseBuf);

private:
  // Small helpers.
  Value ci(int64_t v) { return a.c(v); }
  Value cf(double v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }
  Value divu(Value x, Value y) { return arith::DivUIOp::create(b, loc, x, y); }
  Value remu(Value x, Value y) { return arith::RemUIOp::create(b, loc, x, y); }
  Value dim(Value memref, int64_t logical) {
    return memref::DimOp::create(b, loc, memref, op.getPhysicalDim(logical));
  }
  /// Physical indices of logical [b, h, n, d].
  SmallVector<Value> phys(Value bb, Value h, Value n, Value dd) {
    SmallVector<Value> idx(4);
    Value logical[4] = {bb, h, n, dd};
    for (int64_t l = 0; l < 4; ++l)
      idx[op.getPhysicalDim(l)] = logical[l];
    return idx;
  }
  /// Index `idx` into a dimension broadcast from size 1.
  Value bcast(Value memref, int64_t dimPos, Value idx) {
    auto type = cast<MemRefType>(memref.getType());
    int64_t size = type.getDimSize(dimPos);
    if (size == 1)
      return ci(0);
    if (!ShapedType::isDynamic(size))
      return idx;
    Value s = memref::DimOp::create(b, loc, memref, dimPos);
    return a.select(a.eq(s, ci(1)), ci(0), idx);
  }
  /// Rows [2 h, 2 h + 2) of a vector<4x2> ldmatrix x4 result: the B
  /// fragment of its matrices 2 h and 2 h + 1.
  Value halfOf(Value x4, int64_t h) {
    return vector::ShuffleOp::create(b, loc, x4, x4,
                                     ArrayRef<int64_t>{2 * h, 2 * h + 1});
  }
  Value shuffleXor(Value v, int32_t offset) {
    return gpu::ShuffleOp::create(b, loc, v, offset, kLanes,
                                  gpu::ShuffleMode::XOR)
        .getShuffleResult();
  }

  void emitKernel(gpu::LaunchOp launch);

  /// The key loop's state: m then l of each of the lane's 2 rowFrags rows,
  /// then the O fragments ([f][dv / 8]) from index keyLoopOBase().
  int64_t keyLoopOBase() const { return 4 * rowFrags; }

  /// What a block of the attention kernel holds while emitKernel builds it,
  /// for the steps of one key tile (KeyTile.cpp) and the epilogue
  /// (KernelEpilogue.cpp).
  struct BlockState {
    /// Batch entry, K/V head, the regions' batch index (the entry, or the
    /// ragged sequence), the split-KV chunk (null in the row-tiled kernel).
    Value bb, hk, seq, split;
    /// Ragged batches: where the sequence's rows and keys start in the
    /// packed tensors, and the tensors' last rows.
    Value qBase, kBase, lastQ, lastK;
    /// The lane; the warp's first row; the lane's row (quad) and column
    /// pair (pair, pair + 1) in each 16 x 8 accumulator tile.
    Value lane, wrow, quad, pair;
    /// The clamped kv_len (or Nk); the last query row and key.
    Value kvLen, nqLast, nkLast;
    /// Per row fr = 2 f + r the lane holds: query, head, ALiBi slope.
    SmallVector<Value> rowI, rowH, rowSlope;
    /// vector<2x2xf32> zeros: an empty accumulator tile.
    Value zeroC;
    LogitContext lctx;
    /// The scale folded into the exponential's FMA: logits and the row max
    /// stay raw (emitKernel says when).
    bool foldScale = false;
    double scaleValue = 1.0;
  };
  /// Ragged batches: block x is the (sequence, row tile) pair found by
  /// walking the sequences' row tiles in the offsets (after their checks).
  /// Sets the row tile `rt`, `firstOfSeq` (the sequence's first block: its
  /// page table checks), blk.seq, blk.qBase and blk.kBase (where the
  /// sequence's rows and keys start) and nq and nk to the sequence's own
  /// lengths (the caller restores them), and leaves the builder inside an
  /// scf.if of the blocks that have a tile (the caller's guard restores it).
  void placeRaggedBlock(gpu::LaunchOp launch, ModInputAccess &modAccess,
                        Value totalQ, Value totalK, Value &rt,
                        Value &firstOfSeq, BlockState &blk);
  /// The lane's place in its accumulator tiles (blk.quad, blk.pair) and the
  /// two rows it holds of each fragment (blk.rowI, rowH, rowSlope), for the
  /// row tile starting at block row `row0`.
  void emitRowFacts(BlockState &blk, Value row0);
  /// The block's logit context (blk.lctx: sizes, scale, soft cap, the
  /// regions' inputs through `modAccess`), whether the scale is folded into
  /// the exponential (blk.foldScale), and the page table's checks (by the
  /// sequence's first block, `firstOfSeq`); returns the sequence's clamped
  /// kv_len (Nk without one). blk.seq must be set.
  Value emitBlockLogitContext(BlockState &blk, ModInputAccess &modAccess,
                              Value firstOfSeq);
  /// Packed rows of the sequence's query row `i` and key `j` (in bounds of
  /// the tensors whatever the sizes); `i` and `j` unless ragged.
  Value qRow(const BlockState &blk, Value i) {
    return cuQBuf ? a.min(a.add(blk.qBase, i), blk.lastQ) : i;
  }
  Value kRow(const BlockState &blk, Value j) {
    return cuKBuf ? a.min(a.add(blk.kBase, j), blk.lastK) : j;
  }
  /// The block's row of the lane's row `fr` (fragment fr / 2, half fr % 2).
  Value rowInWarpTile(const BlockState &blk, int64_t fr) {
    return a.add(blk.wrow, a.add(blk.quad, ci(16 * (fr / 2) + 8 * (fr % 2))));
  }
  /// Q's A fragment [f][kk] (rows wrow + 16 f, dims 16 kk) from the staged
  /// tile `qs` (ldmatrix x4).
  Value loadQFragment(const BlockState &blk, Value qs, int64_t f, int64_t kk);
  /// S = Q K^T of K buffer `cur` of `ks` on mma.sync: the rowFrags x tk / 8
  /// accumulator tiles `s` ([f][n]), in steps of 32 dims (the last may be
  /// 16); Q's fragments from `qFrag` ([f][kk]) where held, else loaded per
  /// step (only the step's are live).
  void emitMmaSyncQK(const BlockState &blk, MutableArrayRef<Value> s, Value qs,
                     Value ks, Value cur, ArrayRef<Value> qFrag);
  /// The logits of the key tile at `k0` from its S tiles: an scf.if on
  /// `full` whose results ([f][n][r][c]) skip the masks where it holds.
  SmallVector<Value> emitTileLogits(const BlockState &blk, ArrayRef<Value> s,
                                    Value k0, Value full);
  /// The online softmax of one key tile's `logits` against the loop state
  /// `state` (m [2 rowFrags], l [2 rowFrags], O tiles): sets m and l in
  /// `newState`, rescales the O tiles `o` by each row's alpha (exp of the
  /// old max minus the new, in the logits' units) and returns P's tiles
  /// ([f][n], f32). Sigmoid: P = sigmoid(logits); m, l and O are left as
  /// given.
  SmallVector<Value> emitOnlineSoftmax(const BlockState &blk, ValueRange state,
                                       ValueRange logits,
                                       MutableArrayRef<Value> newState,
                                       MutableArrayRef<Value> o);
  /// O += P V on mma.sync: P's tiles `p` as A operands in registers, V
  /// buffer `cur` of `vs` by ldmatrix.trans, into the O tiles `o`.
  void emitMmaSyncPV(const BlockState &blk, MutableArrayRef<Value> o,
                     ArrayRef<Value> p, Value vs, Value cur);
  /// After the key loop (its results `results`): out = O / l and lse =
  /// m + log l (with sinks), or the split-KV partial state.
  void emitEpilogue(const BlockState &blk, ValueRange results);
  /// Whether Q's fragments stay in registers for the whole key loop: per
  /// lane S takes tk/2, O dv/2 and Q d/4 registers; large head dims with
  /// modifier tensors, f32 staging or split-KV bookkeeping spill when all
  /// three are held (ptxas-sweep.test), so Q is reloaded there.
  bool holdQInRegisters() {
    bool extra = op.getBias() || op.getMask() || op.getAlibiSlopes() ||
                 op.getSoftcapAttr() || srcElem.isF32() || splitMode;
    int64_t regs = rowFrags * (tk / 2 + dv / 2 + d / 4);
    return regs <= (extra ? 96 : 128);
  }
  /// Rows of a staged tile of `rows` x `cols` elements including the
  /// scratch rows its copy needs when the block's threads do not divide its
  /// 16-byte chunks.
  int64_t stagedRows(int64_t rows, int64_t cols) {
    int64_t threads = kLanes * warps, chunks = rows * cols / 8;
    if (chunks % threads == 0)
      return rows;
    return rows + (threads * 8 + cols + kPad - 1) / (cols + kPad);
  }
  /// S = Q K^T on wgmma (sm_90a) where the kernel's shape allows it (one
  /// warpgroup of 16-row warps: 64 rows, the m64 of wgmma; head dims in
  /// whole 128-byte swizzle rows of 16-bit elements).
  bool usesWgmma() const {
    return wgmmaOpt && warps == 4 && rowFrags == 1 && d % 64 == 0 &&
           elem.getIntOrFloatBitWidth() == 16 && tk % 8 == 0 && tk <= 256;
  }
  /// O += P V on wgmma too: P (the warpgroup's 64 rows, the accumulator
  /// tiles of S rounded to the staged type) is stored to shared memory in
  /// the swizzled layout (A, K-major), V staged swizzled like K and read
  /// MN-major (B transposed); both in whole 64-column blocks, O's n = Dv
  /// at most 256.
  bool usesWgmmaPV() const {
    return usesWgmma() && tk % 64 == 0 && dv % 64 == 0 && dv <= 256;
  }
  /// Rows of a tile staged for wgmma: [cols / 64][rows][64] with the
  /// 16-byte chunks of row r XORed with r % 8 (the 128-byte swizzle), plus
  /// scratch rows (multiples of 8, keeping each 64-column block at a
  /// 1024-byte boundary) for the copies of idle threads.
  int64_t swizzledRows(int64_t rows, int64_t cols) {
    int64_t threads = kLanes * warps, chunks = rows * cols / 8;
    if (chunks % threads == 0)
      return rows;
    return rows + (threads * 8 / 64 + 7) / 8 * 8;
  }
  /// fence.proxy.async.shared::cta: the thread's copies into shared memory
  /// (cp.async and stores: the generic proxy) become visible to wgmma (the
  /// async proxy); before the barrier after which wgmma reads them.
  void fenceForAsyncProxy() {
    NVVM::FenceProxyOp::create(
        b, loc, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(b.getContext(),
                                   NVVM::SharedSpace::shared_cta));
  }
  /// S = Q K^T for the warpgroup's 64 rows on wgmma: Q at shared address
  /// `smemAddr`, K at `smemAddr + kTileOff`, both swizzled (swizzledRows:
  /// 64-column blocks `qBlockBytes` / `kBlockBytes` apart); the warp's
  /// accumulators become the tk / 8 mma.sync C tiles `s`.
  void emitWgmmaQK(MutableArrayRef<Value> s, Value smemAddr, Value kTileOff,
                   int64_t qBlockBytes, int64_t kBlockBytes);
  /// O += P V for the warpgroup's 64 rows on wgmma: the warp's P tiles `p`
  /// (the tk / 8 mma.sync C tiles of its 16 rows, f32) are rounded to the
  /// staged type and stored into the swizzled P tile `pView` (at shared
  /// address `pAddr`), fenced for the async proxy and published by a
  /// barrier; then one m64nDvk16 per 16 keys with P K-major and V (at
  /// `vAddr`, 64-column blocks `vBlockBytes` apart) MN-major, accumulating
  /// into the warp's O tiles `o` (the Dv / 8 mma.sync C tiles).
  void emitWgmmaPV(MutableArrayRef<Value> o, ArrayRef<Value> p, Value pView,
                   Value pAddr, Value vAddr, int64_t pBlockBytes,
                   int64_t vBlockBytes);
  /// How a tile is staged in shared memory: rows padded by kPad elements
  /// ([rows][cols + kPad], for ldmatrix) or in wgmma's 128-byte swizzle
  /// ([cols / 64][rows][64], chunk c of row r at c ^ (r % 8)).
  enum class TileLayout { Padded, Swizzled };
  /// Where the attention kernel's tiles lie in its dynamic shared memory:
  /// Q, then two K buffers, then two V buffers, from the start of the
  /// window, or (swizzled, for wgmma) from the first 1024-byte boundary in
  /// it (the swizzle pattern is a function of the address; `align` bytes
  /// are reserved for the rounding). Padded tiles are [rows][cols + kPad];
  /// swizzled ones [cols / 64][rows][64], 128 bytes a row, whose 64-column
  /// blocks lie `qBlockBytes` / `kBlockBytes` apart; V is padded, or
  /// swizzled too when P V runs on wgmma (pvSwizzled), P's tile after it.
  /// One statement of the layout for the host (the launch's byte count)
  /// and the kernel (its views and descriptors).
  struct SharedLayout {
    bool swizzled = false;
    bool pvSwizzled = false; // V swizzled too, and P's tile after V
    MemRefType q, k, v, p;   // the views (K and V: [2] buffers first)
    int64_t kOff = 0;        // byte offsets from the tiles' start
    int64_t vOff = 0;
    int64_t kBufBytes = 0;   // one K buffer
    int64_t qBlockBytes = 0; // swizzled: a 64-column block of Q / of K
    int64_t kBlockBytes = 0;
    int64_t vBufBytes = 0;   // one V buffer
    int64_t vBlockBytes = 0; // pvSwizzled: a 64-column block of V / of P
    int64_t pOff = 0, pBlockBytes = 0;
    int64_t align = 0; // bytes reserved to align the start
    int64_t bytes = 0; // the kernel's dynamic shared memory
  };
  SharedLayout sharedLayout();
  /// The block's views of its dynamic shared memory (sharedLayout): Q, the
  /// two K and V buffers, P's tile where P V runs on wgmma (else null), and
  /// where the tiles start (the swizzled layouts' 1024-byte boundary; null
  /// when nothing is swizzled).
  struct SharedTiles {
    SharedLayout layout;
    TileLayout qLayout = TileLayout::Padded, vLayout = TileLayout::Padded;
    Value q, k, v, p, addr;
  };
  SharedTiles emitSharedTiles();
  /// One key tile `t` (K/V buffer `cur`) of the key loop: S = Q K^T
  /// (wgmma or mma.sync), the logits (masks skipped where `isFull(k0)`
  /// holds, k0 the tile's first key), the online softmax and O += P V, from
  /// the loop's `state` (m, l per row, then the O fragments) to the next.
  SmallVector<Value> emitKeyTileStep(const BlockState &blk,
                                     const SharedTiles &sh,
                                     ArrayRef<Value> qFrag, ValueRange state,
                                     Value t, Value cur,
                                     function_ref<Value(Value)> isFull);
  /// The block's row tile `rt`, its queries [q0, qLast] (qCount of them)
  /// and the key tiles [ktLo, ktHi) it visits (its split's chunk of them).
  struct BlockKeys {
    Value rt, q0, qLast, qCount, ktLo, ktHi;
  };
  /// Key tile `t` classified for the block's rows by the mask_mod region
  /// (classifyBlockKeyTile), or {true, false} (may allow, never denies)
  /// without one.
  MaskBounds<IRArith>::Truth
  classifyKeyTileIfMasked(const BlockState &blk, const BlockKeys &keys, Value t,
                          const ModInputAccess &modAccess);
  /// Whether key tile `t` is read (loaded and computed): in the block's
  /// range and not denied entirely by the mask_mod region (`cls`); a tile
  /// that is not read is neither loaded (its copies read nothing) nor
  /// computed.
  Value readsKeyTile(const BlockKeys &keys, Value t,
                     const MaskBounds<IRArith>::Truth &cls);
  /// Copies key tile `tile`'s K and V rows into shared buffer `buf`
  /// (paged or not; rows past kv_len, or all when `inRange` is false,
  /// zero-filled), adding the copies to `tokens`.
  void emitKeyValueTileCopy(const BlockState &blk, const SharedTiles &sh,
                            Value tile, Value buf, Value inRange,
                            SmallVectorImpl<Value> &tokens);
  /// The key loop over [keys.ktLo, keys.ktHi) (`rules`: the block's
  /// schedule rules) from a fresh state (sets
  /// blk.zeroC): each iteration issues the next tile's copies (double
  /// buffered; the first tile's, classified as `firstCls`, are in flight
  /// in `tokens`), waits for its own, and runs emitKeyTileStep unless the
  /// mask_mod region denies the tile entirely. Each tile is classified
  /// once, when its copies are issued, and the classification is carried
  /// to the iteration that computes it. Returns the final state (m, l per
  /// row, then the O fragments; keyLoopOBase).
  SmallVector<Value> emitKeyLoop(BlockState &blk, const SharedTiles &sh,
                                 ArrayRef<Value> qFrag,
                                 TileRules<IRArith> &rules,
                                 const BlockKeys &keys,
                                 const ModInputAccess &modAccess,
                                 MaskBounds<IRArith>::Truth firstCls,
                                 SmallVectorImpl<Value> &tokens);
  /// Dynamic shared memory of the kernel being emitted.
  int64_t sharedBytes() { return sharedLayout().bytes; }
  /// Commits the copies in `tokens` as one group and waits until at most
  /// `pending` groups are in flight (nothing for converting copies).
  void waitForCopies(ArrayRef<Value> tokens, int32_t pending) {
    if (tokens.empty())
      return;
    auto tokenType = nvgpu::DeviceAsyncTokenType::get(b.getContext());
    Value group =
        nvgpu::DeviceAsyncCreateGroupOp::create(b, loc, tokenType, tokens);
    nvgpu::DeviceAsyncWaitOp::create(b, loc, group,
                                     b.getI32IntegerAttr(pending));
  }
  /// cp.async of rows [0, rows) x cols [0, cols) of a tile: row r comes from
  /// `src` at the indices `srcRow(r)` (the last one the column where the
  /// tile starts), valid or zero-filled; with `colLimit`, the 8-element
  /// chunks from that column on are zero-filled too (a multiple of 8).
  /// `scale` (quantized K/V): the k_scale or v_scale buffer; `src` then
  /// holds i8 or fp8 values, decoded and scaled into the staged tile.
  void
  emitTileCopy(Value dst, ArrayRef<Value> dstPrefix, TileLayout layout,
               int64_t rows, int64_t cols, Value src,
               function_ref<std::pair<SmallVector<Value>, Value>(Value)> srcRow,
               SmallVectorImpl<Value> &tokens, Value colLimit = Value(),
               Value scale = Value());

  void emitMerge(gpu::LaunchOp launch);
  /// The split-KV kernels in the chain `token`: workspace, split kernel,
  /// merge kernel, free.
  void emitSplitLaunches(Value smem, Value &token);

  /// Whether the launch needs an error word (ErrorWord): its kernel checks
  /// data only it reads (the regions' reads of mod_inputs, page table
  /// entries, ragged offsets).
  bool usesErrorWord() {
    return !op.getModInputs().empty() || op.isPaged() || op.isRagged();
  }
  /// The tile map of a mask_mod region that reads mod_inputs: a kernel run
  /// once per call, before the attention, classifies every (row tile, key
  /// tile) pair of every batch entry (and K/V head, unless the region
  /// ignores the head index: then one map serves every head) by the shared
  /// MaskBounds rules, with the CPU's summary limit (kMaxSummaryElements);
  /// the attention kernel reads one byte per key tile (bit 0: the region
  /// may allow a pair, bit 1: it may deny one). Masks without tensor reads
  /// are classified in the attention kernel (a few integer ops per tile).
  bool usesTileMap() {
    return op.getMaskModBlock() && !op.getModInputs().empty() && !op.isRagged();
  }
  bool maskIgnoresHead() {
    return op.getMaskModBlock()->getArgument(1).use_empty();
  }
  /// Key tile `t` for the queries [q0, qLast] and heads [hLo, hHi] of batch
  /// entry `bb`, classified by MaskBounds over the mask_mod region, with
  /// boxes of mod_inputs of up to `maxElements` summarized.
  MaskBounds<IRArith>::Truth classifyKeyTile(Value bb, Value hLo, Value hHi,
                                             Value q0, Value qLast, Value t,
                                             const ModInputAccess &access,
                                             int64_t maxElements);
  /// Key tile `t` for the block's rows (row tile `rt`, queries [q0, qLast],
  /// the heads of blk.hk's group): read from the tile map kernel's byte
  /// when there is one (mask_mod regions that read integer mod_inputs),
  /// else classifyKeyTile by every thread.
  MaskBounds<IRArith>::Truth
  classifyBlockKeyTile(const BlockState &blk, Value rt, Value q0, Value qLast,
                       Value t, const ModInputAccess &modAccess);
  /// The queries [q0, qLast] of row tile `rt` (rows are (query, head of
  /// the group) pairs, query-major).
  std::pair<Value, Value> rowTileQueries(Value rt);
  /// The tile map kernel: block (row tile, head or 0, batch entry), its
  /// threads over the key tiles.
  void emitTileMapKernel(gpu::LaunchOp launch);
  /// The tile map's byte of key tile `t` of row tile `rt`, batch entry `bb`
  /// and map head `hIdx` (0 when one map serves every head).
  Value tileMapIndex(Value bb, Value hIdx, Value rt, Value t) {
    Value row =
        a.add(a.mul(a.add(a.mul(bb, tileMapHeads), hIdx), numRowTiles), rt);
    return a.add(a.mul(row, numKeyTiles), t);
  }
  /// How the kernel reads the mod_inputs: the buffers, checks recorded in
  /// the error word (the first failure of a launch wins).
  ModInputAccess kernelModInputAccess();

  /// Paged K/V: block (0, 0, b) checks every page table entry sequence b
  /// reads (pages [0, ceil(kv_len / S))), recording a bad one in the error
  /// word, as the CPU forms check them before their work.
  void emitPageTableChecks(Value bb, Value kvLen, const ModInputAccess &report,
                           Value isFirstBlock);
  /// Paged K/V: the physical indices of logical key `key` (< Nk) of batch
  /// entry `bb`, head `hk` and whether its page table entry lies in the
  /// pool (loaded only where `valid`; an entry outside gives invalid).
  std::pair<SmallVector<Value>, Value> pagedRow(Value bb, Value hk, Value key,
                                                Value valid);

  /// Ragged batches: block (0, 0) checks the offsets (non-decreasing, within
  /// the packed tokens), recording a bad one in the error word.
  void emitRaggedOffsetChecks(const ModInputAccess &report, Value isFirstBlock);
  /// Ragged batches: `cu[i]` clamped to [lo, total] (blocks read only inside
  /// the tensors whatever the offsets; bad offsets are reported by
  /// emitRaggedOffsetChecks).
  Value clampedOffset(Value cu, Value i, Value lo, Value total);

  /// One GPU module per function (one binary): <fn>_kernels, holding
  /// <fn>_attention (or _attention_split and _merge).
  FlatSymbolRefAttr kernelModule() {
    return FlatSymbolRefAttr::get(b.getContext(), fnName + "_kernels");
  }
  FlatSymbolRefAttr kernelName(StringRef what) {
    return FlatSymbolRefAttr::get(b.getContext(),
                                  fnName + "_" + what.str() + kernelSuffix);
  }
  /// Offsets into the split-KV workspace: acc [B][Hkv][S][TQ][Dv], then
  /// m and l [B][Hkv][S][TQ] each.
  Value wsRow(Value bb, Value hk, Value split, Value row) {
    return a.add(
        a.mul(a.add(a.mul(a.add(a.mul(bb, hkv), hk), numSplits), split),
              ci(tq)),
        row);
  }
  Value wsRows() { return a.mul(a.mul(a.mul(batch, hkv), numSplits), ci(tq)); }

  OpBuilder &b;
  Location loc;
  AttentionOp op;
  int64_t warps, tq, tk, d, dv, splitsOpt;
  /// 16-row fragments per warp of the kernel being emitted (tq = 16 W
  /// rowFrags): FlashAttention-2's shape holds 32 rows per warp, so each K
  /// and V fragment loaded from shared memory feeds two mma.sync. The
  /// split-KV kernels take 1; rowFragsTiled is the row-tiled kernel's.
  int64_t rowFrags = 1, rowFragsTiled = 1;
  void setRowFrags(int64_t frags) {
    rowFrags = frags;
    tq = 16 * warps * frags;
  }
  /// The decode form's split-KV: a grid over key-tile chunks whose partial
  /// states a second kernel merges.
  bool splitMode = false;
  /// Both launches, chosen per call from the query length
  /// (choosesSplitKvPerCall); splitMode says which one is being emitted.
  bool splitPerCall = false;
  /// Appended to the kernels' names (the split-KV launches of a per-call
  /// choice, so that both launches' tile-map kernels are distinct).
  std::string kernelSuffix;
  /// norm(sigmoid): out = sum_j sigmoid(s_ij) v_j, no row max or sum.
  bool sigmoid = false;
  Value numSplits, ws;
  Type srcElem, elem, f32;
  IRArith a;

  // Host values visible in the kernel.
  /// Quantized K/V: kScaleBuf and vScaleBuf (null otherwise).
  Value kScaleBuf, vScaleBuf;
  Value q, k, v, kvLenBuf, maskBuf, biasBuf, alibiBuf, sinkBuf, scaleBuf, out,
      lse;
  /// Paged K/V: the page table, the page size S and the pool's page count.
  Value ptBuf, pageSize, poolPages;
  /// Ragged batches: the offsets and the number of sequences.
  Value cuQBuf, cuKBuf, numSeqs;
  SmallVector<Value> modInputBufs;
  /// The launch's error word.
  ErrorWord errorWord;
  /// The tile map (usesTileMap): i8 [B][heads][row tiles][key tiles].
  Value tileMap, tileMapHeads, numRowTiles, numKeyTiles;
  Value batch, hq, hkv, nq, nk, groups;
};

} // namespace detail
} // namespace gpu_codegen
} // namespace attn
} // namespace mlir

#endif // ATTN_CONVERSION_ATTNTOGPU_KERNELEMITTER_H
