//===- KernelBuilder.cpp - the tensor-core attention kernel ---------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// The GPU form of attn.attention (FlashAttention-2 style, sm_80 and later):
//
//   grid  = (ceil(G * Nq / TQ), Hkv, B), block = 32 * W threads, TQ = R W
//   (R = 16 or 32 rows per warp: one or two 16-row fragments, each K and
//   V fragment read from shared memory feeding both)
//   rows of a block: r = i * G + g (query i, head g of the K/V head's group)
//   Q tile -> shared (cp.async) -> A fragments in registers (ldmatrix x4)
//   for each key tile t the schedule says the rows may read:
//     prefetch tile t + 1 into the other buffer (cp.async, zero-filled
//     beyond kv_len), wait for tile t, barrier
//     S = Q K^T        ldmatrix x2 + mma.sync m16n8k16, f32 accumulators
//     logits           LogitBuilder, score_mod and mask_mod regions inlined
//                      (full tiles, by the shared tile rules and MaskBounds,
//                      skip the masks)
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
// The tile copies are in TileCopy.cpp, S = Q K^T on sm_90a's wgmma in
// Wgmma.cpp, the host side of the launches in KernelHost.cpp.
//
//===----------------------------------------------------------------------===//

#include "KernelEmitter.h"

#include "attn/Schedule/MaskBounds.h"

#include "llvm/ADT/ScopeExit.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::gpu_codegen;
using namespace mlir::attn::gpu_codegen::detail;

std::pair<Value, Value> KernelEmitter::rowTileQueries(Value rt) {
  Value row0 = a.mul(rt, ci(tq));
  Value rowEnd = a.min(a.add(row0, ci(tq)), a.mul(nq, groups));
  return {divu(row0, groups), divu(a.sub(rowEnd, ci(1)), groups)};
}

MaskBounds<IRArith>::Truth KernelEmitter::classifyKeyTile(
    Value bb, Value hLo, Value hHi, Value q0, Value qLast, Value t,
    const ModInputAccess &access, int64_t maxElements) {
  Value k0 = a.mul(t, ci(tk));
  TileBox<IRArith> box{bb, bb, hLo, hHi, q0, qLast, k0, a.add(k0, ci(tk - 1))};
  auto tensors = [&](unsigned input, ArrayRef<std::pair<Value, Value>> box)
      -> std::optional<std::pair<Value, Value>> {
    return buildTensorRange(b, loc, access, input, box, maxElements);
  };
  MaskBounds<IRArith> bounds(*op.getMaskModBlock(), a, tensors);
  return bounds.classify(box);
}

void KernelEmitter::emitTileMapKernel(gpu::LaunchOp launch) {
  Value rt = launch.getBlockIds().x;
  Value hIdx = launch.getBlockIds().y;
  Value bb = launch.getBlockIds().z;
  Value tid = launch.getThreadIds().x;
  ModInputAccess access = kernelModInputAccess();
  auto [q0, qLast] = rowTileQueries(rt);
  Value hLo = maskIgnoresHead() ? ci(0) : a.mul(hIdx, groups);
  Value hHi =
      maskIgnoresHead() ? a.sub(hq, ci(1)) : a.sub(a.add(hLo, groups), ci(1));
  auto loop = scf::ForOp::create(b, loc, tid, numKeyTiles, ci(kLanes * warps));
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(loop.getBody());
  Value t = loop.getInductionVar();
  MaskBounds<IRArith>::Truth cls =
      classifyKeyTile(bb, hLo, hHi, q0, qLast, t, access, kMaxSummaryElements);
  auto i8 = b.getI8Type();
  Value byte = arith::OrIOp::create(
      b, loc, arith::ExtUIOp::create(b, loc, i8, cls.mayTrue),
      arith::ShLIOp::create(b, loc,
                            arith::ExtUIOp::create(b, loc, i8, cls.mayFalse),
                            arith::ConstantIntOp::create(b, loc, i8, 1)));
  Value at = tileMapIndex(bb, hIdx, rt, t);
  memref::StoreOp::create(b, loc, byte, tileMap, ValueRange{at});
}

KernelEmitter::SharedLayout KernelEmitter::sharedLayout() {
  SharedLayout l;
  auto wg =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  int64_t bytes = elem.getIntOrFloatBitWidth() / 8;
  // A tile of `rows` x `cols` staged `buffers` times (0: no buffer
  // dimension): its view, the bytes of one buffer and (swizzled) of one
  // 64-column block.
  struct Staged {
    MemRefType type;
    int64_t bufBytes, blockBytes = 0;
  };
  auto stage = [&](int64_t rows, int64_t cols, int64_t buffers, bool swizzled) {
    SmallVector<int64_t, 4> shape;
    if (buffers)
      shape.push_back(buffers);
    Staged t;
    if (swizzled) {
      int64_t r = swizzledRows(rows, cols);
      shape.append({cols / 64, r, 64});
      t.blockBytes = r * 64 * bytes;
      t.bufBytes = (cols / 64) * t.blockBytes;
    } else {
      int64_t r = stagedRows(rows, cols);
      shape.append({r, cols + kPad});
      t.bufBytes = r * (cols + kPad) * bytes;
    }
    t.type = MemRefType::get(shape, elem, MemRefLayoutAttrInterface{}, wg);
    return t;
  };
  l.swizzled = usesWgmma();
  l.pvSwizzled = usesWgmmaPV();
  l.align = l.swizzled ? 1024 : 0;
  Staged q = stage(tq, d, 0, l.swizzled), k = stage(tk, d, 2, l.swizzled),
         v = stage(tk, dv, 2, l.pvSwizzled);
  l.q = q.type;
  l.k = k.type;
  l.v = v.type;
  l.qBlockBytes = q.blockBytes;
  l.kBlockBytes = k.blockBytes;
  l.vBlockBytes = v.blockBytes;
  l.kBufBytes = k.bufBytes;
  l.vBufBytes = v.bufBytes;
  l.kOff = q.bufBytes;
  l.vOff = l.kOff + 2 * l.kBufBytes;
  l.pOff = l.vOff + 2 * l.vBufBytes;
  if (l.pvSwizzled) {
    // P for the warpgroup: [tk / 64][64 rows][64], after V.
    l.p = MemRefType::get({tk / 64, 64, 64}, elem, MemRefLayoutAttrInterface{},
                          wg);
    l.pBlockBytes = 64 * 64 * bytes;
  }
  l.bytes = l.pOff + (l.pvSwizzled ? (tk / 64) * l.pBlockBytes : 0) + l.align;
  return l;
}

void KernelEmitter::emitKernel(gpu::LaunchOp launch) {
  MLIRContext *ctx = b.getContext();
  // The row tile, or (split-KV: one row tile) the chunk of key tiles.
  Value rt = splitMode ? ci(0) : launch.getBlockIds().x;
  // Under a causal mask later row tiles read more key tiles: the blocks
  // the hardware dispatches first (low x) take the last, longest row tiles,
  // so that the short ones fill the tail (FlashAttention-2's order; the
  // grid's x is the row tile count, except for ragged batches, whose block
  // x finds its tile below).
  if (!splitMode && !cuQBuf && op.getCausal())
    rt = a.sub(a.sub(launch.getGridSize().x, ci(1)), launch.getBlockIds().x);
  Value split = splitMode ? launch.getBlockIds().x : Value();
  Value hk = launch.getBlockIds().y;
  Value bb = launch.getBlockIds().z;
  Value tid = launch.getThreadIds().x;
  Value warp = divu(tid, ci(kLanes));
  Value lane = remu(tid, ci(kLanes));
  ModInputAccess modAccess = kernelModInputAccess();

  // Ragged batches: block x is the (sequence, row tile) pair it finds by
  // walking the sequences' row tiles in the offsets; the sequence's rows
  // and keys start at qBase and kBase, and nq and nk are its own lengths
  // for the rest of the kernel. A block past the last tile does nothing.
  // `seq` indexes the per-sequence operands (kv_len, page table rows) and
  // is the regions' batch index: the batch entry, or the ragged sequence.
  Value qBase = ci(0), kBase = ci(0), seq = bb;
  // The first block of a sequence (its page table checks).
  Value firstOfSeq =
      a.both(a.eq(launch.getBlockIds().x, ci(0)), a.eq(hk, ci(0)));
  Value totalQ = nq, totalK = nk;
  Value savedNq = nq, savedNk = nk;
  llvm::scope_exit restoreSizes([&] {
    nq = savedNq;
    nk = savedNk;
  });
  OpBuilder::InsertionGuard raggedGuard(b);
  if (cuQBuf) {
    emitRaggedOffsetChecks(modAccess,
                           a.both(a.eq(launch.getBlockIds().x, ci(0)),
                                  a.eq(launch.getBlockIds().y, ci(0))));
    Value x = launch.getBlockIds().x;
    auto walk =
        scf::ForOp::create(b, loc, ci(0), numSeqs, ci(1),
                           ValueRange{ci(0), ci(0), ci(0), a.cb(false)});
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(walk.getBody());
      Value sIdx = walk.getInductionVar();
      ValueRange it = walk.getRegionIterArgs();
      Value q0 = clampedOffset(cuQBuf, sIdx, ci(0), totalQ);
      Value q1 = clampedOffset(cuQBuf, a.add(sIdx, ci(1)), q0, totalQ);
      Value tiles = a.ceilDiv(a.mul(a.sub(q1, q0), groups), ci(tq));
      Value end = a.add(it[0], tiles);
      Value here = a.both(a.negate(it[3]), a.slt(x, end));
      scf::YieldOp::create(b, loc,
                           ValueRange{end, a.select(here, sIdx, it[1]),
                                      a.select(here, a.sub(x, it[0]), it[2]),
                                      a.either(it[3], here)});
    }
    Value sIdx = walk.getResult(1);
    rt = walk.getResult(2);
    seq = sIdx;
    firstOfSeq = a.both(a.eq(rt, ci(0)), a.eq(hk, ci(0)));
    qBase = clampedOffset(cuQBuf, sIdx, ci(0), totalQ);
    nq = a.sub(clampedOffset(cuQBuf, a.add(sIdx, ci(1)), qBase, totalQ), qBase);
    // Paged: every sequence's keys are its own [0, max_pages * S), read
    // through its page table row.
    if (cuKBuf) {
      kBase = clampedOffset(cuKBuf, sIdx, ci(0), totalK);
      nk = a.sub(clampedOffset(cuKBuf, a.add(sIdx, ci(1)), kBase, totalK),
                 kBase);
    }
    auto active = scf::IfOp::create(b, loc, walk.getResult(3),
                                    /*withElse=*/false);
    b.setInsertionPointToStart(&active.getThenRegion().front());
  }
  // Packed rows of the sequence's query row i and key j (in bounds of the
  // tensors whatever the sizes).
  Value lastQ = a.max(a.sub(totalQ, ci(1)), ci(0));
  Value lastK = a.max(a.sub(totalK, ci(1)), ci(0));
  auto qRow = [&](Value i) {
    return cuQBuf ? a.min(a.add(qBase, i), lastQ) : i;
  };
  auto kRow = [&](Value j) {
    return cuKBuf ? a.min(a.add(kBase, j), lastK) : j;
  };

  // Shared memory: Q [TQ][D+8], K [2][TK][D+8], V [2][TK][Dv+8].
  auto wg = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  auto raw = gpu::DynamicSharedMemoryOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                      MemRefLayoutAttrInterface{}, wg));
  // wgmma: Q and K swizzled from a 1024-byte boundary of the window, whose
  // address the descriptors hold.
  const SharedLayout layout = sharedLayout();
  const bool useWgmma = layout.swizzled, useWgmmaPV = layout.pvSwizzled;
  // Q and K alike; V padded (ldmatrix.trans for P V on mma.sync) unless
  // P V runs on wgmma.
  const TileLayout qLayout =
      useWgmma ? TileLayout::Swizzled : TileLayout::Padded;
  const TileLayout vLayout =
      useWgmmaPV ? TileLayout::Swizzled : TileLayout::Padded;
  const int64_t kOff = layout.kOff, kBufBytes = layout.kBufBytes;
  emittedWgmma = std::max<int64_t>(emittedWgmma, useWgmmaPV ? 2 : useWgmma);
  Value tilesAt = ci(0), smemAddr;
  if (layout.align) {
    Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, raw);
    tilesAt = remu(a.sub(ci(layout.align), remu(base, ci(layout.align))),
                   ci(layout.align));
    smemAddr = a.add(base, tilesAt);
  }
  Value qs =
      memref::ViewOp::create(b, loc, layout.q, raw, tilesAt, ValueRange{});
  Value ks = memref::ViewOp::create(b, loc, layout.k, raw,
                                    a.add(tilesAt, ci(kOff)), ValueRange{});
  Value vs = memref::ViewOp::create(
      b, loc, layout.v, raw, a.add(tilesAt, ci(layout.vOff)), ValueRange{});
  Value ps;
  if (useWgmmaPV)
    ps = memref::ViewOp::create(b, loc, layout.p, raw,
                                a.add(tilesAt, ci(layout.pOff)), ValueRange{});

  // Per-block facts: kv_len, the rows' queries, the key tiles to visit.
  LogitContext lctx;
  lctx.op = op;
  lctx.nq = nq;
  lctx.nk = nk;
  // The scale folded into the exponential's FMA when nothing between the
  // dot product and the softmax needs the scaled logit (no soft cap, bias,
  // ALiBi or score_mod; masks give -inf either way) and it is positive (so
  // the row max of the raw logits is that of the scaled ones): the logits
  // stay raw, the running max m is in raw units, and exp2(x * c - m * c),
  // c = scale * log2(e), is one FMA per element. m is scaled back for the
  // epilogue (lse, sinks, the split-KV state). A scale read at run time
  // (`scale(%s : tensor<f32>)`, sign unknown here) is not folded.
  std::optional<double> constScale = op.getEffectiveScale();
  double scaleValue = constScale.value_or(1.0);
  const bool foldScale = constScale && !sigmoid && scaleValue > 0 &&
                         !op.getSoftcapAttr() && !biasBuf && !alibiBuf &&
                         !op.getScoreModBlock();
  if (scaleBuf)
    lctx.scale = memref::LoadOp::create(b, loc, scaleBuf, ValueRange{});
  else
    lctx.scale = cf(foldScale ? 1.0 : scaleValue);
  if (auto cap = op.getSoftcapAttr())
    lctx.softcap = cf(cap.getValueAsDouble());
  lctx.modInputs = &modAccess;
  Value kvLen = nk;
  if (kvLenBuf) {
    Value len = memref::LoadOp::create(b, loc, kvLenBuf,
                                       ValueRange{bcast(kvLenBuf, 0, seq)});
    kvLen = buildClampedKvLen(b, loc, lctx, len);
  }
  if (ptBuf)
    emitPageTableChecks(seq, kvLen, modAccess, firstOfSeq);
  Value row0 = a.mul(rt, ci(tq));
  // (Not a structured binding: lambdas below capture them.)
  Value q0, qLast;
  std::tie(q0, qLast) = rowTileQueries(rt);
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
      qs, {}, qLayout, tq, d, q,
      [&](Value r) {
        Value row = a.add(row0, r);
        Value i = divu(row, groups);
        Value h = a.add(a.mul(hk, groups), remu(row, groups));
        Value valid = a.slt(i, nq);
        return std::make_pair(phys(bb, h, qRow(a.min(i, nqLast)), ci(0)),
                              valid);
      },
      tokens);
  // A mask_mod region classified over key tile `t` by the shared MaskBounds
  // rules (as the CPU forms do; the same for every thread of the block): may
  // it allow a pair of the tile, may it deny one? A region that reads
  // integer mod_inputs is classified by the tile map kernel before this one
  // (one byte per tile); others here, by every thread (no tensor reads).
  Block *maskMod = op.getMaskModBlock();
  auto classifyTile = [&](Value t) -> MaskBounds<IRArith>::Truth {
    if (!tileMap) {
      Value h0 = a.mul(hk, groups);
      return classifyKeyTile(seq, h0, a.sub(a.add(h0, groups), ci(1)), q0,
                             qLast, t, modAccess, 0);
    }
    Value hIdx = maskIgnoresHead() ? ci(0) : hk;
    Value tt = a.min(t, a.sub(numKeyTiles, ci(1)));
    Value at = tileMapIndex(bb, hIdx, rt, tt);
    Value byte = memref::LoadOp::create(b, loc, tileMap, ValueRange{at});
    auto bit = [&](int64_t i) -> Value {
      Value m = arith::ConstantIntOp::create(b, loc, b.getI8Type(), 1 << i);
      Value zero = arith::ConstantIntOp::create(b, loc, b.getI8Type(), 0);
      return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                   arith::AndIOp::create(b, loc, byte, m),
                                   zero);
    };
    return {bit(0), bit(1)};
  };
  // Key tile `t` is read (loaded and computed) when it is in range and the
  // mask_mod region may allow a pair of it; a tile it denies entirely is
  // neither loaded (its copies read nothing) nor computed. Each tile is
  // classified once, when its copies are issued, and the classification is
  // carried to the iteration that computes it.
  using Truth = MaskBounds<IRArith>::Truth;
  auto classifyIfMasked = [&](Value t) -> Truth {
    return maskMod ? classifyTile(t) : Truth{a.cb(true), a.cb(false)};
  };
  auto readTile = [&](Value t, const Truth &cls) {
    return a.both(a.slt(t, ktHi), cls.mayTrue);
  };
  auto copyKv = [&](Value tile, Value buf, Value inRange) {
    Value k0 = a.mul(tile, ci(tk));
    auto rowOf = [&](Value r) {
      Value key = a.add(k0, r);
      Value valid = a.both(inRange, a.slt(key, kvLen));
      if (ptBuf)
        return pagedRow(seq, hk, a.min(key, nkLast), valid);
      return std::make_pair(phys(bb, hk, kRow(a.min(key, nkLast)), ci(0)),
                            valid);
    };
    emitTileCopy(ks, {buf}, qLayout, tk, d, k, rowOf, tokens, Value(),
                 kScaleBuf);
    emitTileCopy(vs, {buf}, vLayout, tk, dv, v, rowOf, tokens, Value(),
                 vScaleBuf);
  };
  Truth firstCls = classifyIfMasked(ktLo);
  copyKv(ktLo, ci(0), readTile(ktLo, firstCls));
  waitForCopies(tokens, 0);
  if (useWgmma)
    fenceForAsyncProxy();
  gpu::BarrierOp::create(b, loc);

  // Q's A fragments, once.
  auto aType = VectorType::get({4, 2}, elem);
  auto bType = VectorType::get({2, 2}, elem);
  auto cType = VectorType::get({2, 2}, f32);
  // The warp's rows: rowFrags fragments of 16 (fragment f: rows wrow +
  // 16 f ...).
  const int64_t nf = rowFrags;
  Value wrow = a.mul(warp, ci(16 * nf));
  // Q's A fragments ([f][kk]): held in registers across the key loop when
  // they fit next to S and O, else loaded from shared memory (where Q
  // stays) per key tile, which keeps large head dims with modifiers from
  // spilling.
  auto loadQ = [&](int64_t f, int64_t kk) -> Value {
    Value r = a.add(wrow, a.add(ci(16 * f), remu(lane, ci(16))));
    Value c = a.add(ci(kk * 16), a.mul(divu(lane, ci(16)), ci(8)));
    return nvgpu::LdMatrixOp::create(b, loc, aType, qs, ValueRange{r, c}, false,
                                     4);
  };
  SmallVector<Value> qFrag;
  if (!useWgmma && holdQInRegisters())
    for (int64_t f = 0; f < nf; ++f)
      for (int64_t kk = 0; kk < d / 16; ++kk)
        qFrag.push_back(loadQ(f, kk));

  // The two rows a lane holds of each fragment (index f * 2 + r): query,
  // head, ALiBi slope.
  Value quad = divu(lane, ci(4));
  Value pair = a.mul(remu(lane, ci(4)), ci(2));
  SmallVector<Value> rowI(2 * nf), rowH(2 * nf), rowSlope(2 * nf);
  auto rowInWarpTile = [&](int64_t fr) {
    return a.add(wrow, a.add(quad, ci(16 * (fr / 2) + 8 * (fr % 2))));
  };
  for (int64_t fr = 0; fr < 2 * nf; ++fr) {
    Value row = a.add(row0, rowInWarpTile(fr));
    rowI[fr] = divu(row, groups);
    rowH[fr] = a.add(a.mul(hk, groups), remu(row, groups));
    if (alibiBuf) {
      Value h = a.min(rowH[fr], a.sub(hq, ci(1)));
      rowSlope[fr] = memref::LoadOp::create(b, loc, alibiBuf, ValueRange{h});
    }
  }

  // The key loop: state m[2 nf], l[2 nf] (per-lane partial sums), O
  // fragments [f][nd].
  Value ninf = cf(-std::numeric_limits<double>::infinity());
  Value zeroC = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(cType, b.getF32FloatAttr(0.0)));
  const int64_t nRows = 2 * nf, nOut = dv / 8;
  const int64_t oBase = 2 * nRows, nState = oBase + nf * nOut;
  SmallVector<Value> init(nRows, ninf);
  init.append(nRows, cf(0.0));
  for (int64_t i = 0; i < nf * nOut; ++i)
    init.push_back(zeroC);
  // After the state: the classification of the tile the iteration computes.
  if (maskMod) {
    init.push_back(firstCls.mayTrue);
    init.push_back(firstCls.mayFalse);
  }
  auto loop = scf::ForOp::create(b, loc, ktLo, ktHi, ci(1), init);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    Value t = loop.getInductionVar();
    ValueRange state = loop.getRegionIterArgs().take_front(nState);
    Truth curCls = maskMod ? Truth{loop.getRegionIterArgs()[nState],
                                   loop.getRegionIterArgs()[nState + 1]}
                           : Truth{a.cb(true), a.cb(false)};
    Value cur = remu(a.sub(t, ktLo), ci(2));
    Value nextBuf = a.sub(ci(1), cur);
    Value tNext = a.add(t, ci(1));
    tokens.clear();
    Truth nextCls = classifyIfMasked(tNext);
    copyKv(tNext, nextBuf, readTile(tNext, nextCls));
    waitForCopies(tokens, 1);
    if (useWgmma)
      fenceForAsyncProxy();
    gpu::BarrierOp::create(b, loc);

    // A tile the mask_mod region denies entirely keeps the state.
    scf::IfOp visit;
    if (maskMod) {
      visit = scf::IfOp::create(b, loc, TypeRange(ValueRange(state)),
                                curCls.mayTrue, /*withElseRegion=*/true);
      b.setInsertionPointToStart(&visit.getThenRegion().front());
    }

    // S = Q K^T, tk/8 accumulator tiles of 16 x 8 per fragment ([f][n]),
    // in steps of 32 dims (the last may be 16): each K fragment feeds the
    // nf fragments' mma.sync; Q's fragments not held in registers are
    // loaded per step (only the step's are live).
    int64_t nS = tk / 8, dSteps = d / 16;
    SmallVector<Value> s(nf * nS, zeroC);
    if (useWgmma)
      emitWgmmaQK(s, smemAddr, a.add(ci(kOff), a.mul(cur, ci(kBufBytes))),
                  layout.qBlockBytes, layout.kBlockBytes);
    for (int64_t kk = 0; kk < (useWgmma ? 0 : dSteps); kk += 2) {
      int64_t steps = std::min<int64_t>(2, dSteps - kk);
      SmallVector<Value> qStep;
      for (int64_t f = 0; f < nf; ++f)
        for (int64_t e = 0; e < steps; ++e)
          qStep.push_back(qFrag.empty() ? loadQ(f, kk + e)
                                        : qFrag[f * dSteps + kk + e]);
      for (int64_t n = 0; n < nS; ++n) {
        Value r = a.add(ci(n * 8), remu(lane, ci(8)));
        SmallVector<Value, 2> kf;
        if (steps == 2) {
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
        for (int64_t e = 0; e < steps; ++e)
          for (int64_t f = 0; f < nf; ++f)
            s[f * nS + n] = nvgpu::MmaSyncOp::create(
                b, loc, qStep[f * steps + e], kf[e], s[f * nS + n],
                ArrayRef<int64_t>{16, 8, 16});
      }
    }

    // Logits: full tiles skip the masks.
    Value k0 = a.mul(t, ci(tk));
    // The tile computes all tk columns (those past Nk are zero-filled), so
    // it is full only when all tk keys are readable: a tail tile cut short
    // by Nk is a boundary tile (found by the warp-level emulator).
    Value full = rules.isFull(q0, qCount, k0, ci(tk), kvLen, nq);
    // The mask_mod region: the tile is full only when it allows every pair.
    if (maskMod)
      full = a.both(full, a.negate(curCls.mayFalse));
    SmallVector<Type> logitTypes(nf * nS * 4, f32);
    auto ifFull = scf::IfOp::create(b, loc, logitTypes, full, true);
    for (int branch = 0; branch < 2; ++branch) {
      OpBuilder::InsertionGuard g3(b);
      b.setInsertionPointToStart(branch == 0 ? &ifFull.getThenRegion().front()
                                             : &ifFull.getElseRegion().front());
      SmallVector<Value> xs;
      for (int64_t f = 0; f < nf; ++f)
        for (int64_t n = 0; n < nS; ++n)
          for (int64_t r = 0; r < 2; ++r)
            for (int64_t c = 0; c < 2; ++c) {
              int64_t fr = 2 * f + r;
              Value j = a.add(a.add(k0, ci(n * 8 + c)), pair);
              LogitOperands in;
              in.raw = vector::ExtractOp::create(b, loc, s[f * nS + n],
                                                 ArrayRef<int64_t>{r, c});
              in.b = seq;
              in.h = rowH[fr];
              in.i = rowI[fr];
              in.j = j;
              in.kvLen = kvLen;
              in.slope = rowSlope[fr];
              Value ic = a.min(rowI[fr], nqLast);
              Value jc = a.min(j, nkLast);
              Value hc = a.min(rowH[fr], a.sub(hq, ci(1)));
              in.regionI = ic;
              in.regionJ = jc;
              // Masks and biases broadcast by numpy rules: a rank-r tensor
              // is indexed by the last r of (b, h, i, j), a ragged batch's by
              // packed rows (and, paged, key positions).
              auto tensorIdx = [&](Value buf) {
                Value logical[4] = {bb, hc, qRow(ic), kRow(jc)};
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
    auto x = [&](int64_t f, int64_t n, int64_t r, int64_t c) {
      return ifFull.getResult((f * nS + n) * 4 + r * 2 + c);
    };

    // Online softmax per row (sigmoid: a_ij = sigmoid(s_ij), no row max, no
    // row sum, no rescaling).
    // (log2(e), times the scale when it is folded here.)
    Value l2e = cf(foldScale ? kLog2E * scaleValue : kLog2E);
    SmallVector<Value> newState(state.begin(), state.end());
    SmallVector<Value> alpha(nRows), mScaled(nRows);
    for (int64_t fr = 0; fr < nRows && !sigmoid; ++fr) {
      int64_t f = fr / 2, r = fr % 2;
      Value mx = x(f, 0, r, 0);
      for (int64_t n = 0; n < nS; ++n)
        for (int64_t c = 0; c < 2; ++c)
          if (n || c)
            mx = arith::MaximumFOp::create(b, loc, mx, x(f, n, r, c));
      mx = arith::MaximumFOp::create(b, loc, mx, shuffleXor(mx, 1));
      mx = arith::MaximumFOp::create(b, loc, mx, shuffleXor(mx, 2));
      Value mOld = state[fr];
      Value mNew = arith::MaximumFOp::create(b, loc, mOld, mx);
      Value mSafe = buildSafeMax(b, loc, mNew);
      mScaled[fr] = arith::MulFOp::create(b, loc, mSafe, l2e);
      alpha[fr] = math::Exp2Op::create(
          b, loc,
          arith::SubFOp::create(
              b, loc, arith::MulFOp::create(b, loc, mOld, l2e), mScaled[fr]));
      newState[fr] = mNew;
    }
    SmallVector<Value> p(nf * nS);
    SmallVector<Value> sum(nRows, cf(0.0));
    for (int64_t f = 0; f < nf; ++f)
      for (int64_t n = 0; n < nS; ++n) {
        Value pv = zeroC;
        for (int64_t r = 0; r < 2; ++r)
          for (int64_t c = 0; c < 2; ++c) {
            int64_t fr = 2 * f + r;
            Value pe;
            if (sigmoid) {
              // 1 / (1 + 2^(-x log2 e)): 0 for a masked key (x = -inf).
              Value e = math::Exp2Op::create(
                  b, loc,
                  arith::MulFOp::create(
                      b, loc, arith::NegFOp::create(b, loc, x(f, n, r, c)),
                      l2e));
              pe = arith::DivFOp::create(
                  b, loc, cf(1.0), arith::AddFOp::create(b, loc, cf(1.0), e));
            } else {
              Value e = math::FmaOp::create(
                  b, loc, x(f, n, r, c), l2e,
                  arith::NegFOp::create(b, loc, mScaled[fr]));
              pe = math::Exp2Op::create(b, loc, e);
              sum[fr] = arith::AddFOp::create(b, loc, sum[fr], pe);
            }
            pv = vector::InsertOp::create(b, loc, pe, pv,
                                          ArrayRef<int64_t>{r, c});
          }
        p[f * nS + n] = pv;
      }
    SmallVector<Value> o(state.begin() + oBase, state.end());
    if (!sigmoid) {
      for (int64_t fr = 0; fr < nRows; ++fr)
        newState[nRows + fr] =
            math::FmaOp::create(b, loc, state[nRows + fr], alpha[fr], sum[fr]);
      // O *= alpha (per row), then O += P V.
      for (int64_t f = 0; f < nf; ++f) {
        Value a0 = alpha[2 * f], a1 = alpha[2 * f + 1];
        Value alphaVec = vector::FromElementsOp::create(
            b, loc, cType, ValueRange{a0, a0, a1, a1});
        for (int64_t nd = 0; nd < nOut; ++nd)
          o[f * nOut + nd] =
              arith::MulFOp::create(b, loc, o[f * nOut + nd], alphaVec);
      }
    }
    auto aHalf = VectorType::get({2, 2}, elem);
    if (useWgmmaPV)
      emitWgmmaPV(o, p, ps, a.add(smemAddr, ci(layout.pOff)),
                  a.add(smemAddr, a.add(ci(layout.vOff),
                                        a.mul(cur, ci(layout.vBufBytes)))),
                  layout.pBlockBytes, layout.vBlockBytes);
    for (int64_t kc = 0; kc < (useWgmmaPV ? 0 : tk / 16); ++kc) {
      // P's A operands of the nf fragments for keys [16 kc, 16 kc + 16).
      SmallVector<Value> pa(nf);
      for (int64_t f = 0; f < nf; ++f) {
        Value lo = arith::TruncFOp::create(b, loc, aHalf, p[f * nS + 2 * kc]);
        Value hi =
            arith::TruncFOp::create(b, loc, aHalf, p[f * nS + 2 * kc + 1]);
        pa[f] = vector::ShuffleOp::create(b, loc, lo, hi,
                                          ArrayRef<int64_t>{0, 1, 2, 3});
      }
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
        for (Value vFrag : vf) {
          for (int64_t f = 0; f < nf; ++f)
            o[f * nOut + nd] =
                nvgpu::MmaSyncOp::create(b, loc, pa[f], vFrag, o[f * nOut + nd],
                                         ArrayRef<int64_t>{16, 8, 16});
          ++nd;
        }
        --nd;
      }
    }
    for (int64_t i = 0; i < nf * nOut; ++i)
      newState[oBase + i] = o[i];
    if (visit) {
      scf::YieldOp::create(b, loc, newState);
      b.setInsertionPointToStart(&visit.getElseRegion().front());
      scf::YieldOp::create(b, loc, ValueRange(state));
      b.setInsertionPointAfter(visit);
      newState.assign(visit.getResults().begin(), visit.getResults().end());
    }
    gpu::BarrierOp::create(b, loc);
    if (maskMod) {
      newState.push_back(nextCls.mayTrue);
      newState.push_back(nextCls.mayFalse);
    }
    scf::YieldOp::create(b, loc, newState);
  }

  // The row max in the units of the logits (foldScale keeps it raw).
  auto rowMax = [&](int64_t fr) -> Value {
    Value m = loop.getResult(fr);
    return foldScale ? arith::MulFOp::create(b, loc, m, cf(scaleValue)) : m;
  };
  // Epilogue: l over the quad, out = O / l, lse = m + log l; split-KV
  // stores the partial state (acc = O unnormalized, m, l) instead.
  Type outElem = cast<MemRefType>(out.getType()).getElementType();
  if (splitMode) {
    Value mBase = a.mul(wsRows(), ci(dv));
    Value lBase = a.add(mBase, wsRows());
    for (int64_t fr = 0; fr < nRows; ++fr) {
      int64_t f = fr / 2, r = fr % 2;
      Value l = loop.getResult(nRows + fr);
      l = arith::AddFOp::create(b, loc, l, shuffleXor(l, 1));
      l = arith::AddFOp::create(b, loc, l, shuffleXor(l, 2));
      Value rowInTile = rowInWarpTile(fr);
      Value wr = wsRow(bb, hk, split, rowInTile);
      SmallVector<Value> vals;
      for (int64_t nd = 0; nd < nOut; ++nd)
        for (int64_t c = 0; c < 2; ++c)
          vals.push_back(vector::ExtractOp::create(
              b, loc, loop.getResult(oBase + f * nOut + nd),
              ArrayRef<int64_t>{r, c}));
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
      memref::StoreOp::create(b, loc, rowMax(fr), ws,
                              ValueRange{a.add(mBase, wr)});
      memref::StoreOp::create(b, loc, l, ws, ValueRange{a.add(lBase, wr)});
    }
    return;
  }
  for (int64_t fr = 0; fr < nRows; ++fr) {
    int64_t f = fr / 2, r = fr % 2;
    Value m = rowMax(fr);
    Value l = loop.getResult(nRows + fr);
    l = arith::AddFOp::create(b, loc, l, shuffleXor(l, 1));
    l = arith::AddFOp::create(b, loc, l, shuffleXor(l, 2));
    // Attention sinks: the row's sink logit joins the denominator.
    Value accScale;
    if (sinkBuf) {
      Value h = a.min(rowH[fr], a.sub(hq, ci(1)));
      Value sink = memref::LoadOp::create(b, loc, sinkBuf, ValueRange{h});
      SinkMerge merged = buildSinkMerge(b, loc, m, l, sink);
      m = merged.m;
      l = merged.l;
      accScale = merged.accScale;
    }
    SmallVector<Value> vals;
    for (int64_t nd = 0; nd < nOut; ++nd)
      for (int64_t c = 0; c < 2; ++c) {
        Value acc = vector::ExtractOp::create(
            b, loc, loop.getResult(oBase + f * nOut + nd),
            ArrayRef<int64_t>{r, c});
        if (accScale)
          acc = arith::MulFOp::create(b, loc, acc, accScale);
        Value val = sigmoid ? acc : buildNormalizedOutput(b, loc, acc, l);
        if (outElem != f32)
          val = arith::TruncFOp::create(b, loc, outElem, val);
        vals.push_back(val);
      }
    Value lseVal = lse ? buildLogSumExp(b, loc, m, l) : Value();
    auto store = scf::IfOp::create(b, loc, a.slt(rowI[fr], nq), false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&store.getThenRegion().front());
    for (int64_t nd = 0; nd < nOut; ++nd)
      for (int64_t c = 0; c < 2; ++c) {
        Value col = a.add(ci(nd * 8 + c), pair);
        memref::StoreOp::create(b, loc, vals[nd * 2 + c], out,
                                phys(bb, rowH[fr], qRow(rowI[fr]), col));
      }
    if (lse) {
      auto first = scf::IfOp::create(b, loc, a.eq(pair, ci(0)), false);
      b.setInsertionPointToStart(&first.getThenRegion().front());
      memref::StoreOp::create(b, loc, lseVal, lse,
                              ValueRange{bb, rowH[fr], qRow(rowI[fr])});
    }
  }
}
