//===- KernelBuilder.cpp - the tensor-core attention kernel ---------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// The GPU form of attn.attention (FlashAttention-2 style, sm_80 and later):
//
//   grid  = (ceil(G * Nq / TQ), Hkv, B), block = 32 * W threads, TQ = 16 W
//   rows of a block: r = i * G + g (query i, head g of the K/V head's group)
//   Q tile -> shared (cp.async) -> A fragments in registers (ldmatrix x4)
//   for each key tile t the schedule says the rows may read:
//     prefetch tile t + 1 into the other buffer (cp.async, zero-filled
//     beyond kv_len), wait for tile t, barrier
//     S = Q K^T        ldmatrix x2 + mma.sync m16n8k16, f32 accumulators
//     logits           LogitBuilder (full tiles skip the masks)
//     online softmax   row max over the fragment + shuffle xor 1, 2; exp2
//     O += P V         P's fragments become A operands in registers;
//                      V by ldmatrix.trans
//     barrier
//   out = O / l, lse = m + log l (rows without keys: 0 and -inf)
//
// Fragment layouts (PTX ISA, mma.m16n8k16): lane l holds of a C/D tile the
// elements (l/4 + 8 r, 2 (l%4) + c), r, c in {0, 1}, as vector<2x2xf32>
// [r][c]; of an A tile the pairs (l/4 + 8 (p%2), 2 (l%4) + 8 (p/2) + c) as
// vector<4x2> [p][c]; of a B tile (k = 2 (l%4) + 8 p + c, n = l/4) as
// vector<2x2> [p][c]. So two adjacent C tiles of P are exactly the A
// operand of P V: [C0[0], C0[1], C1[0], C1[1]].
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "attn/Conversion/LogitBuilder.h"
#include "attn/Schedule/Schedule.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::gpu_codegen;

namespace {

constexpr int64_t kLanes = 32;
/// Row padding of the shared-memory tiles, in elements (16 bytes): rows of
/// an 8x8 ldmatrix tile then start in different banks.
constexpr int64_t kPad = 8;
constexpr double kLog2E = 1.4426950408889634;

/// Four warps unless stated: fewer warps would compute fewer padded rows
/// for decode (G * Nq <= 16), but each thread would then issue four times
/// the copies per tile, and their addresses spill at head dim 128.
int64_t chooseWarps(AttentionOp op, const GpuKernelOptions &opts) {
  return opts.warps > 0 ? opts.warps : 4;
}

/// Blocks the split-KV decode form aims for: two per SM of an H100/H200
/// (132 SMs); fewer SMs are filled all the same.
constexpr int64_t kTargetBlocks = 264;

/// Split-KV when every row of the op fits one row tile (decode: Nq * G <=
/// TQ) and splits are not turned off.
bool usesSplitKv(AttentionOp op, int64_t tq, int64_t splits) {
  if (splits == 0)
    return false;
  int64_t hq = op.getNumQueryHeads(), hkv = op.getNumKvHeads();
  int64_t nq = op.getQuerySeqLen();
  if (ShapedType::isDynamic(hq) || ShapedType::isDynamic(hkv) ||
      ShapedType::isDynamic(nq) || hkv == 0)
    return false;
  return nq * (hq / hkv) <= tq;
}

/// Everything the kernel emitter needs: the op, its memrefs and sizes.
class KernelEmitter {
public:
  KernelEmitter(OpBuilder &b, Location loc, AttentionOp op, int64_t warps,
                int64_t tileK, int64_t splits)
      : b(b), loc(loc), op(op), warps(warps), tq(16 * warps), tk(tileK),
        splitsOpt(splits), a{b, loc} {
    splitMode = usesSplitKv(op, tq, splits);
    sigmoid = op.getNormalization() == Normalization::sigmoid;
    srcElem = cast<ShapedType>(op.getQuery().getType()).getElementType();
    // f32 inputs are rounded to bf16 (f32's range) as they are staged.
    elem = srcElem.isF32() ? Type(b.getBF16Type()) : srcElem;
    d = op.getHeadDimQK();
    dv = op.getHeadDimV();
    f32 = b.getF32Type();
  }

  std::string fnName;

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
  /// Whether Q's fragments stay in registers for the whole key loop: per
  /// lane S takes tk/2, O dv/2 and Q d/4 registers; large head dims with
  /// modifier tensors, f32 staging or split-KV bookkeeping spill when all
  /// three are held (ptxas-sweep.test), so Q is reloaded there.
  bool holdQInRegisters() {
    bool extra = op.getBias() || op.getMask() || op.getAlibiSlopes() ||
                 op.getSoftcapAttr() || srcElem.isF32() || splitMode;
    int64_t regs = tk / 2 + dv / 2 + d / 4;
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
  int64_t sharedBytes() {
    return (stagedRows(tq, d) * (d + kPad) +
            2 * stagedRows(tk, d) * (d + kPad) +
            2 * stagedRows(tk, dv) * (dv + kPad)) *
           (elem.getIntOrFloatBitWidth() / 8);
  }
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
  /// `src` at the indices `srcIndex(r)`, valid or zero-filled.
  void
  emitTileCopy(Value dst, ArrayRef<Value> dstPrefix, int64_t rows, int64_t cols,
               Value src,
               function_ref<std::pair<SmallVector<Value>, Value>(Value)> srcRow,
               SmallVectorImpl<Value> &tokens);

  void emitMerge(gpu::LaunchOp launch);
  /// One GPU module per function (one binary): <fn>_kernels, holding
  /// <fn>_attention (or _attention_split and _merge).
  FlatSymbolRefAttr kernelModule() {
    return FlatSymbolRefAttr::get(b.getContext(), fnName + "_kernels");
  }
  FlatSymbolRefAttr kernelName(StringRef what) {
    return FlatSymbolRefAttr::get(b.getContext(), fnName + "_" + what.str());
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
  /// The decode form's split-KV: a grid over key-tile chunks whose partial
  /// states a second kernel merges.
  bool splitMode = false;
  /// norm(sigmoid): out = sum_j sigmoid(s_ij) v_j, no row max or sum.
  bool sigmoid = false;
  Value numSplits, ws;
  Type srcElem, elem, f32;
  IRArith a;

  // Host values visible in the kernel.
  Value q, k, v, kvLenBuf, maskBuf, biasBuf, alibiBuf, out, lse;
  Value batch, hq, hkv, nq, nk, groups;
};

void KernelEmitter::emitTileCopy(
    Value dst, ArrayRef<Value> dstPrefix, int64_t rows, int64_t cols, Value src,
    function_ref<std::pair<SmallVector<Value>, Value>(Value)> srcRow,
    SmallVectorImpl<Value> &tokens) {
  int64_t chunksPerRow = cols / 8;
  int64_t chunks = rows * chunksPerRow;
  int64_t threads = kLanes * warps;
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  auto tokenType = nvgpu::DeviceAsyncTokenType::get(b.getContext());
  // When the threads outnumber the last round's chunks, the extra threads
  // copy nothing (zero bytes read) into scratch rows past the tile, one
  // 16-byte slot each (see scratchRows), so that no two copies in flight
  // write the same bytes.
  for (int64_t it = 0; it < (chunks + threads - 1) / threads; ++it) {
    Value c = a.add(ci(it * threads), tid);
    Value inRange;
    if ((it + 1) * threads > chunks) {
      inRange = a.slt(c, ci(chunks));
      c = a.min(c, ci(chunks - 1));
    }
    Value row = divu(c, ci(chunksPerRow));
    Value col = a.mul(remu(c, ci(chunksPerRow)), ci(8));
    auto [srcIdx, valid] = srcRow(row);
    srcIdx.back() = col;
    SmallVector<Value> dstIdx(dstPrefix);
    if (inRange) {
      int64_t pitch = cols + kPad;
      Value slot = a.mul(tid, ci(8));
      valid = a.both(valid, inRange);
      row = a.select(inRange, row, a.add(ci(rows), divu(slot, ci(pitch))));
      col = a.select(inRange, col, remu(slot, ci(pitch)));
    }
    dstIdx.push_back(row);
    dstIdx.push_back(col);
    if (srcElem != elem) {
      // Converting copy (f32 inputs): a plain load of the (clamped, always
      // in-bounds) row, zero where invalid, rounded, stored.
      auto srcType = VectorType::get({8}, srcElem);
      Value x = vector::LoadOp::create(b, loc, srcType, src, srcIdx);
      Value zero = arith::ConstantOp::create(
          b, loc, DenseElementsAttr::get(srcType, b.getZeroAttr(srcElem)));
      x = arith::SelectOp::create(b, loc, valid, x, zero);
      x = arith::TruncFOp::create(b, loc, VectorType::get({8}, elem), x);
      vector::StoreOp::create(b, loc, x, dst, dstIdx);
      continue;
    }
    Value elems = a.select(valid, ci(8), ci(0));
    tokens.push_back(nvgpu::DeviceAsyncCopyOp::create(
        b, loc, tokenType, dst, dstIdx, src, srcIdx, b.getIndexAttr(8), elems,
        b.getUnitAttr()));
  }
}

void KernelEmitter::emitHost(ValueRange inputs, Value outBuf, Value lseBuf) {
  q = inputs[0];
  k = inputs[1];
  v = inputs[2];
  unsigned next = 3;
  if (op.getKvLen())
    kvLenBuf = inputs[next++];
  if (op.getMask())
    maskBuf = inputs[next++];
  if (op.getBias())
    biasBuf = inputs[next++];
  if (op.getAlibiSlopes())
    alibiBuf = inputs[next++];
  out = outBuf;
  lse = lseBuf;

  batch = dim(q, 0);
  hq = dim(q, 1);
  nq = dim(q, 2);
  hkv = dim(k, 1);
  nk = dim(k, 2);
  // Sizes the types leave dynamic are checked here (the kernel ABI checks
  // the sizes named alike; this is the relation between them).
  Value hkvNonZero = a.negate(a.eq(hkv, ci(0)));
  Value divisible =
      a.either(a.negate(hkvNonZero), a.eq(remu(hq, a.max(hkv, ci(1))), ci(0)));
  cf::AssertOp::create(b, loc, divisible,
                       "attn: the number of query heads must be a multiple "
                       "of the number of K/V heads");
  groups = divu(hq, a.max(hkv, ci(1)));
  Value rows = a.mul(nq, groups);
  Value gx = a.ceilDiv(rows, ci(tq));
  Value any = a.both(a.both(a.slt(ci(0), gx), hkvNonZero), a.slt(ci(0), batch));
  auto ifOp = scf::IfOp::create(b, loc, any, /*withElse=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  int64_t smemBytes = sharedBytes();
  Value smem = arith::ConstantIntOp::create(b, loc, b.getI32Type(), smemBytes);
  b.getBlock()->getParentOp()->getParentOfType<func::FuncOp>()->setAttr(
      "attn.gpu_shared_memory", b.getI64IntegerAttr(smemBytes));
  if (!splitMode) {
    auto launch = gpu::LaunchOp::create(
        b, loc, gx, hkv, batch, ci(kLanes * warps), ci(1), ci(1), smem, Type(),
        ValueRange{}, TypeRange{}, TypeRange{}, Value(), Value(), Value(),
        kernelModule(), kernelName("attention"));
    b.setInsertionPointToStart(&launch.getBody().front());
    emitKernel(launch);
    gpu::TerminatorOp::create(b, loc);
    return;
  }
  // Split-KV: S chunks of the key tiles (S from the grid the blocks need,
  // at most one per key tile), partial states in a workspace, a merge.
  Value maxSplits = a.max(a.ceilDiv(nk, ci(tk)), ci(1));
  Value want = splitsOpt > 0 ? ci(splitsOpt)
                             : a.ceilDiv(ci(kTargetBlocks), a.mul(hkv, batch));
  numSplits = a.min(a.max(want, ci(1)), maxSplits);
  Value wsSize = a.mul(wsRows(), ci(dv + 2));
  auto wsType = MemRefType::get({ShapedType::kDynamic}, f32);
  // One stream-ordered chain (gpu-to-llvm lowers gpu.alloc in async form
  // only): alloc, split kernel, merge, dealloc, then wait.
  auto tokenType = gpu::AsyncTokenType::get(b.getContext());
  Value token =
      gpu::WaitOp::create(b, loc, tokenType, ValueRange{}).getAsyncToken();
  auto alloc =
      gpu::AllocOp::create(b, loc, wsType, tokenType, ValueRange{token},
                           ValueRange{wsSize}, ValueRange{}, UnitAttr());
  ws = alloc.getMemref();
  token = alloc.getAsyncToken();
  {
    OpBuilder::InsertionGuard g(b);
    auto launch = gpu::LaunchOp::create(
        b, loc, numSplits, hkv, batch, ci(kLanes * warps), ci(1), ci(1), smem,
        tokenType, ValueRange{token}, TypeRange{}, TypeRange{}, Value(),
        Value(), Value(), kernelModule(), kernelName("attention_split"));
    token = launch.getAsyncToken();
    b.setInsertionPointToStart(&launch.getBody().front());
    emitKernel(launch);
    gpu::TerminatorOp::create(b, loc);
  }
  {
    OpBuilder::InsertionGuard g(b);
    auto merge = gpu::LaunchOp::create(
        b, loc, ci(tq), hkv, batch, ci(dv), ci(1), ci(1), Value(), tokenType,
        ValueRange{token}, TypeRange{}, TypeRange{}, Value(), Value(), Value(),
        kernelModule(), kernelName("merge"));
    token = merge.getAsyncToken();
    b.setInsertionPointToStart(&merge.getBody().front());
    emitMerge(merge);
    gpu::TerminatorOp::create(b, loc);
  }
  token = gpu::DeallocOp::create(b, loc, tokenType, ValueRange{token}, ws)
              .getAsyncToken();
  gpu::WaitOp::create(b, loc, Type(), ValueRange{token});
}

void KernelEmitter::emitMerge(gpu::LaunchOp launch) {
  Value row = launch.getBlockIds().x;
  Value hk = launch.getBlockIds().y;
  Value bb = launch.getBlockIds().z;
  Value col = launch.getThreadIds().x;
  auto inRows = scf::IfOp::create(b, loc, a.slt(row, a.mul(nq, groups)), false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&inRows.getThenRegion().front());
  Value i = divu(row, groups);
  Value h = a.add(a.mul(hk, groups), remu(row, groups));
  Value mBase = a.mul(wsRows(), ci(dv));
  Value lBase = a.add(mBase, wsRows());
  auto load = [&](Value idx) {
    return memref::LoadOp::create(b, loc, ws, ValueRange{idx}).getResult();
  };
  // M = max_s m_s.
  auto maxLoop = scf::ForOp::create(
      b, loc, ci(0), numSplits, ci(1),
      ValueRange{cf(-std::numeric_limits<double>::infinity())});
  {
    OpBuilder::InsertionGuard g2(b);
    b.setInsertionPointToStart(maxLoop.getBody());
    Value ms =
        load(a.add(mBase, wsRow(bb, hk, maxLoop.getInductionVar(), row)));
    scf::YieldOp::create(b, loc,
                         ValueRange{arith::MaximumFOp::create(
                             b, loc, maxLoop.getRegionIterArgs()[0], ms)});
  }
  Value bigM = maxLoop.getResult(0);
  // L = sum_s w_s l_s, acc = sum_s w_s acc_s, w_s = exp(m_s - M).
  auto sumLoop = scf::ForOp::create(b, loc, ci(0), numSplits, ci(1),
                                    ValueRange{cf(0.0), cf(0.0)});
  {
    OpBuilder::InsertionGuard g2(b);
    b.setInsertionPointToStart(sumLoop.getBody());
    Value r = wsRow(bb, hk, sumLoop.getInductionVar(), row);
    Value w = sigmoid ? cf(1.0)
                      : buildMergeWeight(b, loc, load(a.add(mBase, r)), bigM);
    Value l = math::FmaOp::create(b, loc, w, load(a.add(lBase, r)),
                                  sumLoop.getRegionIterArgs()[0]);
    Value acc =
        math::FmaOp::create(b, loc, w, load(a.add(a.mul(r, ci(dv)), col)),
                            sumLoop.getRegionIterArgs()[1]);
    scf::YieldOp::create(b, loc, ValueRange{l, acc});
  }
  Value bigL = sumLoop.getResult(0);
  Value val = sigmoid
                  ? sumLoop.getResult(1)
                  : buildNormalizedOutput(b, loc, sumLoop.getResult(1), bigL);
  Type outElem = cast<MemRefType>(out.getType()).getElementType();
  if (outElem != f32)
    val = arith::TruncFOp::create(b, loc, outElem, val);
  memref::StoreOp::create(b, loc, val, out, phys(bb, h, i, col));
  if (lse) {
    auto first = scf::IfOp::create(b, loc, a.eq(col, ci(0)), false);
    b.setInsertionPointToStart(&first.getThenRegion().front());
    memref::StoreOp::create(b, loc, buildLogSumExp(b, loc, bigM, bigL), lse,
                            ValueRange{bb, h, i});
  }
}

void KernelEmitter::emitKernel(gpu::LaunchOp launch) {
  MLIRContext *ctx = b.getContext();
  // The row tile, or (split-KV: one row tile) the chunk of key tiles.
  Value rt = splitMode ? ci(0) : launch.getBlockIds().x;
  Value split = splitMode ? launch.getBlockIds().x : Value();
  Value hk = launch.getBlockIds().y;
  Value bb = launch.getBlockIds().z;
  Value tid = launch.getThreadIds().x;
  Value warp = divu(tid, ci(kLanes));
  Value lane = remu(tid, ci(kLanes));

  // Shared memory: Q [TQ][D+8], K [2][TK][D+8], V [2][TK][Dv+8].
  auto wg = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  auto raw = gpu::DynamicSharedMemoryOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                      MemRefLayoutAttrInterface{}, wg));
  int64_t bytes = elem.getIntOrFloatBitWidth() / 8;
  int64_t qRows = stagedRows(tq, d), kRows = stagedRows(tk, d),
          vRows = stagedRows(tk, dv);
  auto qType =
      MemRefType::get({qRows, d + kPad}, elem, MemRefLayoutAttrInterface{}, wg);
  auto kType = MemRefType::get({2, kRows, d + kPad}, elem,
                               MemRefLayoutAttrInterface{}, wg);
  auto vType = MemRefType::get({2, vRows, dv + kPad}, elem,
                               MemRefLayoutAttrInterface{}, wg);
  Value qs = memref::ViewOp::create(b, loc, qType, raw, ci(0), ValueRange{});
  int64_t kOff = qRows * (d + kPad) * bytes;
  Value ks = memref::ViewOp::create(b, loc, kType, raw, ci(kOff), ValueRange{});
  int64_t vOff = kOff + 2 * kRows * (d + kPad) * bytes;
  Value vs = memref::ViewOp::create(b, loc, vType, raw, ci(vOff), ValueRange{});

  // Per-block facts: kv_len, the rows' queries, the key tiles to visit.
  LogitContext lctx;
  lctx.op = op;
  lctx.nq = nq;
  lctx.nk = nk;
  lctx.scale = cf(*op.getEffectiveScale());
  if (auto cap = op.getSoftcapAttr())
    lctx.softcap = cf(cap.getValueAsDouble());
  Value kvLen = nk;
  if (kvLenBuf) {
    Value len = memref::LoadOp::create(b, loc, kvLenBuf,
                                       ValueRange{bcast(kvLenBuf, 0, bb)});
    kvLen = buildClampedKvLen(b, loc, lctx, len);
  }
  Value row0 = a.mul(rt, ci(tq));
  Value rowEnd = a.min(a.add(row0, ci(tq)), a.mul(nq, groups));
  Value q0 = divu(row0, groups);
  Value qLast = divu(a.sub(rowEnd, ci(1)), groups);
  Value qCount = a.add(a.sub(qLast, q0), ci(1));
  ScheduleSpec spec = ScheduleSpec::forOp(op, TileSizes{tq, tk});
  TileRules<IRArith> rules(spec, a);
  std::pair<Value, Value> keys = rules.readableKeys(q0, qCount, kvLen, nq);
  std::pair<Value, Value> tiles = rules.keyTiles(keys.first, keys.second);
  if (splitMode)
    tiles = rules.splitTiles(tiles.first, tiles.second, split, numSplits);
  Value ktLo = tiles.first, ktHi = tiles.second;

  // Stage Q and the first K/V tile.
  SmallVector<Value> tokens;
  Value nqLast = a.max(a.sub(nq, ci(1)), ci(0));
  Value nkLast = a.max(a.sub(nk, ci(1)), ci(0));
  emitTileCopy(
      qs, {}, tq, d, q,
      [&](Value r) {
        Value row = a.add(row0, r);
        Value i = divu(row, groups);
        Value h = a.add(a.mul(hk, groups), remu(row, groups));
        Value valid = a.slt(i, nq);
        return std::make_pair(phys(bb, h, a.min(i, nqLast), ci(0)), valid);
      },
      tokens);
  auto copyKv = [&](Value tile, Value buf, Value inRange) {
    Value k0 = a.mul(tile, ci(tk));
    auto rowOf = [&](Value r) {
      Value key = a.add(k0, r);
      Value valid = a.both(inRange, a.slt(key, kvLen));
      return std::make_pair(phys(bb, hk, a.min(key, nkLast), ci(0)), valid);
    };
    emitTileCopy(ks, {buf}, tk, d, k, rowOf, tokens);
    emitTileCopy(vs, {buf}, tk, dv, v, rowOf, tokens);
  };
  copyKv(ktLo, ci(0), a.slt(ktLo, ktHi));
  waitForCopies(tokens, 0);
  gpu::BarrierOp::create(b, loc);

  // Q's A fragments, once.
  auto aType = VectorType::get({4, 2}, elem);
  auto bType = VectorType::get({2, 2}, elem);
  auto cType = VectorType::get({2, 2}, f32);
  Value wrow = a.mul(warp, ci(16));
  // Q's A fragments: held in registers across the key loop when they fit
  // next to S and O, else loaded from shared memory (where Q stays) per
  // key tile, which keeps large head dims with modifiers from spilling.
  auto loadQ = [&]() {
    SmallVector<Value> frags;
    for (int64_t kk = 0; kk < d / 16; ++kk) {
      Value r = a.add(wrow, remu(lane, ci(16)));
      Value c = a.add(ci(kk * 16), a.mul(divu(lane, ci(16)), ci(8)));
      frags.push_back(nvgpu::LdMatrixOp::create(b, loc, aType, qs,
                                                ValueRange{r, c}, false, 4));
    }
    return frags;
  };
  SmallVector<Value> qFrag;
  if (holdQInRegisters())
    qFrag = loadQ();

  // The two rows a lane holds: query, head, ALiBi slope.
  Value quad = divu(lane, ci(4));
  Value pair = a.mul(remu(lane, ci(4)), ci(2));
  Value rowI[2], rowH[2], rowSlope[2] = {};
  for (int r = 0; r < 2; ++r) {
    Value row = a.add(a.add(row0, wrow), a.add(quad, ci(8 * r)));
    rowI[r] = divu(row, groups);
    rowH[r] = a.add(a.mul(hk, groups), remu(row, groups));
    if (alibiBuf) {
      Value h = a.min(rowH[r], a.sub(hq, ci(1)));
      rowSlope[r] = memref::LoadOp::create(b, loc, alibiBuf, ValueRange{h});
    }
  }

  // The key loop: state m[2], l[2] (per-lane partial sums), O fragments.
  Value ninf = cf(-std::numeric_limits<double>::infinity());
  Value zeroC = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(cType, b.getF32FloatAttr(0.0)));
  SmallVector<Value> init = {ninf, ninf, cf(0.0), cf(0.0)};
  int64_t nOut = dv / 8;
  for (int64_t i = 0; i < nOut; ++i)
    init.push_back(zeroC);
  auto loop = scf::ForOp::create(b, loc, ktLo, ktHi, ci(1), init);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    Value t = loop.getInductionVar();
    ValueRange state = loop.getRegionIterArgs();
    Value cur = remu(a.sub(t, ktLo), ci(2));
    Value nextBuf = a.sub(ci(1), cur);
    Value tNext = a.add(t, ci(1));
    tokens.clear();
    copyKv(tNext, nextBuf, a.slt(tNext, ktHi));
    waitForCopies(tokens, 1);
    gpu::BarrierOp::create(b, loc);

    // S = Q K^T, tk/8 accumulator tiles of 16 x 8.
    int64_t nS = tk / 8;
    if (qFrag.empty())
      qFrag = loadQ();
    SmallVector<Value> qHere = qFrag;
    if (!holdQInRegisters())
      qFrag.clear();
    SmallVector<Value> s(nS);
    for (int64_t n = 0; n < nS; ++n) {
      Value acc = zeroC;
      Value r = a.add(ci(n * 8), remu(lane, ci(8)));
      for (int64_t kk = 0; kk < d / 16; ++kk) {
        SmallVector<Value, 2> kf;
        if (kk + 1 < d / 16) {
          // x4: the B fragments of two steps of 16 dims at once (lanes
          // 8 q .. 8 q + 7 address matrix q: dims kk * 16 + 8 q).
          Value c = a.add(ci(kk * 16), a.mul(divu(lane, ci(8)), ci(8)));
          Value both = nvgpu::LdMatrixOp::create(
              b, loc, aType, ks, ValueRange{cur, r, c}, false, 4);
          kf = {halfOf(both, 0), halfOf(both, 1)};
        } else {
          Value c =
              a.add(ci(kk * 16), a.mul(remu(divu(lane, ci(8)), ci(2)), ci(8)));
          kf = {nvgpu::LdMatrixOp::create(b, loc, bType, ks,
                                          ValueRange{cur, r, c}, false, 2)};
        }
        for (Value f : kf) {
          acc = nvgpu::MmaSyncOp::create(b, loc, qHere[kk], f, acc,
                                         ArrayRef<int64_t>{16, 8, 16});
          ++kk;
        }
        --kk;
      }
      s[n] = acc;
    }

    // Logits: full tiles skip the masks.
    Value k0 = a.mul(t, ci(tk));
    // The tile computes all tk columns (those past Nk are zero-filled), so
    // it is full only when all tk keys are readable: a tail tile cut short
    // by Nk is a boundary tile (found by the warp-level emulator).
    Value full = rules.isFull(q0, qCount, k0, ci(tk), kvLen, nq);
    SmallVector<Type> logitTypes(nS * 4, f32);
    auto ifFull = scf::IfOp::create(b, loc, logitTypes, full, true);
    for (int branch = 0; branch < 2; ++branch) {
      OpBuilder::InsertionGuard g3(b);
      b.setInsertionPointToStart(branch == 0 ? &ifFull.getThenRegion().front()
                                             : &ifFull.getElseRegion().front());
      SmallVector<Value> xs;
      for (int64_t n = 0; n < nS; ++n)
        for (int64_t r = 0; r < 2; ++r)
          for (int64_t c = 0; c < 2; ++c) {
            Value j = a.add(a.add(k0, ci(n * 8 + c)), pair);
            LogitOperands in;
            in.raw = vector::ExtractOp::create(b, loc, s[n],
                                               ArrayRef<int64_t>{r, c});
            in.b = bb;
            in.h = rowH[r];
            in.i = rowI[r];
            in.j = j;
            in.kvLen = kvLen;
            in.slope = rowSlope[r];
            Value ic = a.min(rowI[r], nqLast);
            Value jc = a.min(j, nkLast);
            Value hc = a.min(rowH[r], a.sub(hq, ci(1)));
            // Masks and biases broadcast by numpy rules: a rank-r tensor
            // is indexed by the last r of (b, h, i, j).
            auto tensorIdx = [&](Value buf) {
              Value logical[4] = {bb, hc, ic, jc};
              int64_t rank = cast<MemRefType>(buf.getType()).getRank();
              SmallVector<Value> idx;
              for (int64_t dpos = 0; dpos < rank; ++dpos)
                idx.push_back(bcast(buf, dpos, logical[4 - rank + dpos]));
              return idx;
            };
            if (biasBuf)
              in.bias =
                  memref::LoadOp::create(b, loc, biasBuf, tensorIdx(biasBuf));
            if (maskBuf)
              in.maskBit =
                  memref::LoadOp::create(b, loc, maskBuf, tensorIdx(maskBuf));
            xs.push_back(branch == 0 ? buildUnmaskedLogit(b, loc, lctx, in)
                                     : buildLogit(b, loc, lctx, in));
          }
      scf::YieldOp::create(b, loc, xs);
    }
    auto x = [&](int64_t n, int64_t r, int64_t c) {
      return ifFull.getResult(n * 4 + r * 2 + c);
    };

    // Online softmax per row (sigmoid: a_ij = sigmoid(s_ij), no row max, no
    // row sum, no rescaling).
    Value l2e = cf(kLog2E);
    SmallVector<Value> newState(state.begin(), state.end());
    Value alpha[2], mScaled[2];
    for (int64_t r = 0; r < 2 && !sigmoid; ++r) {
      Value mx = x(0, r, 0);
      for (int64_t n = 0; n < nS; ++n)
        for (int64_t c = 0; c < 2; ++c)
          if (n || c)
            mx = arith::MaximumFOp::create(b, loc, mx, x(n, r, c));
      mx = arith::MaximumFOp::create(b, loc, mx, shuffleXor(mx, 1));
      mx = arith::MaximumFOp::create(b, loc, mx, shuffleXor(mx, 2));
      Value mOld = state[r];
      Value mNew = arith::MaximumFOp::create(b, loc, mOld, mx);
      Value mSafe = buildSafeMax(b, loc, mNew);
      mScaled[r] = arith::MulFOp::create(b, loc, mSafe, l2e);
      alpha[r] = math::Exp2Op::create(
          b, loc,
          arith::SubFOp::create(
              b, loc, arith::MulFOp::create(b, loc, mOld, l2e), mScaled[r]));
      newState[r] = mNew;
    }
    SmallVector<Value> p(nS);
    Value sum[2] = {cf(0.0), cf(0.0)};
    for (int64_t n = 0; n < nS; ++n) {
      Value pv = zeroC;
      for (int64_t r = 0; r < 2; ++r)
        for (int64_t c = 0; c < 2; ++c) {
          Value pe;
          if (sigmoid) {
            // 1 / (1 + 2^(-x log2 e)): 0 for a masked key (x = -inf).
            Value e = math::Exp2Op::create(
                b, loc,
                arith::MulFOp::create(
                    b, loc, arith::NegFOp::create(b, loc, x(n, r, c)), l2e));
            pe = arith::DivFOp::create(
                b, loc, cf(1.0), arith::AddFOp::create(b, loc, cf(1.0), e));
          } else {
            Value e =
                math::FmaOp::create(b, loc, x(n, r, c), l2e,
                                    arith::NegFOp::create(b, loc, mScaled[r]));
            pe = math::Exp2Op::create(b, loc, e);
            sum[r] = arith::AddFOp::create(b, loc, sum[r], pe);
          }
          pv =
              vector::InsertOp::create(b, loc, pe, pv, ArrayRef<int64_t>{r, c});
        }
      p[n] = pv;
    }
    SmallVector<Value> o(nOut);
    if (sigmoid) {
      for (int64_t nd = 0; nd < nOut; ++nd)
        o[nd] = state[4 + nd];
    } else {
      for (int64_t r = 0; r < 2; ++r)
        newState[2 + r] =
            math::FmaOp::create(b, loc, state[2 + r], alpha[r], sum[r]);
      // O *= alpha (per row), then O += P V.
      Value alphaVec = vector::FromElementsOp::create(
          b, loc, cType, ValueRange{alpha[0], alpha[0], alpha[1], alpha[1]});
      for (int64_t nd = 0; nd < nOut; ++nd)
        o[nd] = arith::MulFOp::create(b, loc, state[4 + nd], alphaVec);
    }
    auto aHalf = VectorType::get({2, 2}, elem);
    for (int64_t kc = 0; kc < tk / 16; ++kc) {
      Value lo = arith::TruncFOp::create(b, loc, aHalf, p[2 * kc]);
      Value hi = arith::TruncFOp::create(b, loc, aHalf, p[2 * kc + 1]);
      Value pa = vector::ShuffleOp::create(b, loc, lo, hi,
                                           ArrayRef<int64_t>{0, 1, 2, 3});
      Value r = a.add(ci(kc * 16), remu(lane, ci(16)));
      for (int64_t nd = 0; nd < nOut; ++nd) {
        SmallVector<Value, 2> vf;
        if (nd + 1 < nOut) {
          // x4 transposed: the B fragments of two 8-column blocks of V
          // (lanes 16..31 address the second).
          Value c = a.add(ci(nd * 8), a.mul(divu(lane, ci(16)), ci(8)));
          Value both = nvgpu::LdMatrixOp::create(
              b, loc, aType, vs, ValueRange{cur, r, c}, true, 4);
          vf = {halfOf(both, 0), halfOf(both, 1)};
        } else {
          vf = {nvgpu::LdMatrixOp::create(
              b, loc, bType, vs, ValueRange{cur, r, ci(nd * 8)}, true, 2)};
        }
        for (Value f : vf) {
          o[nd] = nvgpu::MmaSyncOp::create(b, loc, pa, f, o[nd],
                                           ArrayRef<int64_t>{16, 8, 16});
          ++nd;
        }
        --nd;
      }
    }
    for (int64_t nd = 0; nd < nOut; ++nd)
      newState[4 + nd] = o[nd];
    gpu::BarrierOp::create(b, loc);
    scf::YieldOp::create(b, loc, newState);
  }

  // Epilogue: l over the quad, out = O / l, lse = m + log l; split-KV
  // stores the partial state (acc = O unnormalized, m, l) instead.
  Type outElem = cast<MemRefType>(out.getType()).getElementType();
  if (splitMode) {
    Value mBase = a.mul(wsRows(), ci(dv));
    Value lBase = a.add(mBase, wsRows());
    for (int64_t r = 0; r < 2; ++r) {
      Value l = loop.getResult(2 + r);
      l = arith::AddFOp::create(b, loc, l, shuffleXor(l, 1));
      l = arith::AddFOp::create(b, loc, l, shuffleXor(l, 2));
      Value rowInTile = a.add(wrow, a.add(quad, ci(8 * r)));
      Value wr = wsRow(bb, hk, split, rowInTile);
      SmallVector<Value> vals;
      for (int64_t nd = 0; nd < nOut; ++nd)
        for (int64_t c = 0; c < 2; ++c)
          vals.push_back(vector::ExtractOp::create(
              b, loc, loop.getResult(4 + nd), ArrayRef<int64_t>{r, c}));
      auto store =
          scf::IfOp::create(b, loc, a.slt(rowInTile, a.mul(nq, groups)), false);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(&store.getThenRegion().front());
      for (int64_t nd = 0; nd < nOut; ++nd)
        for (int64_t c = 0; c < 2; ++c)
          memref::StoreOp::create(
              b, loc, vals[nd * 2 + c], ws,
              ValueRange{
                  a.add(a.mul(wr, ci(dv)), a.add(ci(nd * 8 + c), pair))});
      auto first = scf::IfOp::create(b, loc, a.eq(pair, ci(0)), false);
      b.setInsertionPointToStart(&first.getThenRegion().front());
      memref::StoreOp::create(b, loc, loop.getResult(r), ws,
                              ValueRange{a.add(mBase, wr)});
      memref::StoreOp::create(b, loc, l, ws, ValueRange{a.add(lBase, wr)});
    }
    return;
  }
  for (int64_t r = 0; r < 2; ++r) {
    Value m = loop.getResult(r);
    Value l = loop.getResult(2 + r);
    l = arith::AddFOp::create(b, loc, l, shuffleXor(l, 1));
    l = arith::AddFOp::create(b, loc, l, shuffleXor(l, 2));
    SmallVector<Value> vals;
    for (int64_t nd = 0; nd < nOut; ++nd)
      for (int64_t c = 0; c < 2; ++c) {
        Value acc = vector::ExtractOp::create(b, loc, loop.getResult(4 + nd),
                                              ArrayRef<int64_t>{r, c});
        Value val = sigmoid ? acc : buildNormalizedOutput(b, loc, acc, l);
        if (outElem != f32)
          val = arith::TruncFOp::create(b, loc, outElem, val);
        vals.push_back(val);
      }
    Value lseVal = lse ? buildLogSumExp(b, loc, m, l) : Value();
    auto store = scf::IfOp::create(b, loc, a.slt(rowI[r], nq), false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&store.getThenRegion().front());
    for (int64_t nd = 0; nd < nOut; ++nd)
      for (int64_t c = 0; c < 2; ++c) {
        Value col = a.add(ci(nd * 8 + c), pair);
        memref::StoreOp::create(b, loc, vals[nd * 2 + c], out,
                                phys(bb, rowH[r], rowI[r], col));
      }
    if (lse) {
      auto first = scf::IfOp::create(b, loc, a.eq(pair, ci(0)), false);
      b.setInsertionPointToStart(&first.getThenRegion().front());
      memref::StoreOp::create(b, loc, lseVal, lse,
                              ValueRange{bb, rowH[r], rowI[r]});
    }
  }
}

} // namespace

LogicalResult gpu_codegen::checkGpuSupported(func::FuncOp fn, AttentionOp op,
                                             const GpuKernelOptions &opts) {
  auto fail = [&](const Twine &msg) {
    return op.emitOpError("cannot be lowered to the GPU: ") << msg;
  };
  Block &body = fn.getBody().front();
  auto ret = dyn_cast<func::ReturnOp>(body.getTerminator());
  if (&body.front() != op.getOperation() || op->getNextNode() != ret ||
      ret.getOperands() != op->getResults())
    return fail("the function must consist of this op alone, returning its "
                "results in order");
  for (Value operand : op->getOperands())
    if (!isa<BlockArgument>(operand) ||
        cast<BlockArgument>(operand).getOwner() != &body)
      return fail("every operand must be an argument of the function");
  Type elem = cast<ShapedType>(op.getQuery().getType()).getElementType();
  // (The verifier makes q, k, v and out share one element type.)
  if (!elem.isF16() && !elem.isBF16() && !elem.isF32())
    return fail("q, k and v must be f16, bf16 or f32 (got ") << elem << ")";
  int64_t d = op.getHeadDimQK(), dv = op.getHeadDimV();
  for (int64_t x : {d, dv})
    if (ShapedType::isDynamic(x) || x % 16 != 0 || x > 256 || x == 0)
      return fail("head dimensions must be static multiples of 16 up to 256 "
                  "(got Dqk = ")
             << (ShapedType::isDynamic(d) ? -1 : d)
             << ", Dv = " << (ShapedType::isDynamic(dv) ? -1 : dv) << ")";
  if (op.getPageTable())
    return fail("paged K/V (page_table) is not supported on the GPU yet");
  if (op.getCuSeqlensQ())
    return fail("ragged batches are not supported on the GPU yet");
  if (op.getScoreModBlock() || op.getMaskModBlock())
    return fail("score_mod and mask_mod regions are not supported on the "
                "GPU yet");
  if (!op.getModInputs().empty())
    return fail("mod_inputs are not supported on the GPU yet");
  if (opts.warps != 0 && opts.warps != 1 && opts.warps != 2 &&
      opts.warps != 4 && opts.warps != 8)
    return fail("warps must be 1, 2, 4 or 8 (got ") << opts.warps << ")";
  if (opts.tileK < 16 || opts.tileK > 128 || opts.tileK % 16 != 0)
    return fail("tile-k must be a multiple of 16 in [16, 128] (got ")
           << opts.tileK << ")";
  return success();
}

static MemRefType toMemRef(Type t) {
  auto ranked = cast<RankedTensorType>(t);
  return MemRefType::get(ranked.getShape(), ranked.getElementType());
}

LogicalResult gpu_codegen::buildGpuFunction(func::FuncOp fn, AttentionOp op,
                                            const GpuKernelOptions &opts) {
  Location loc = op.getLoc();
  OpBuilder b(fn);
  SmallVector<Type> inputs;
  for (Type t : fn.getArgumentTypes())
    inputs.push_back(toMemRef(t));
  for (Type t : op->getResultTypes())
    inputs.push_back(toMemRef(t));
  auto type = b.getFunctionType(inputs, {});
  auto gpuFn = func::FuncOp::create(b, fn.getLoc(), fn.getName(), type);
  gpuFn.setVisibility(fn.getVisibility());
  for (NamedAttribute attr : fn->getDiscardableAttrs())
    gpuFn->setAttr(attr.getName(), attr.getValue());
  gpuFn->setAttr("attn.gpu_kernel", b.getUnitAttr());
  Block *entry = gpuFn.addEntryBlock();
  b.setInsertionPointToStart(entry);

  // The op's operands, in operand order, as the new arguments.
  SmallVector<Value> operands;
  for (Value operand : op->getOperands())
    operands.push_back(
        entry->getArgument(cast<BlockArgument>(operand).getArgNumber()));
  unsigned numIn = fn.getNumArguments();
  Value outBuf = entry->getArgument(numIn);
  Value lseBuf = op.getLse() ? entry->getArgument(numIn + 1) : Value();

  KernelEmitter emitter(b, loc, op, chooseWarps(op, opts), opts.tileK,
                        opts.splits);
  emitter.fnName = fn.getName().str();
  emitter.emitHost(operands, outBuf, lseBuf);
  func::ReturnOp::create(b, loc);

  // Take over the name.
  fn->remove();
  gpuFn.setName(fn.getName());
  fn->destroy();
  return success();
}
