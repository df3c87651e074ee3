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
// This file builds the block's prologue (its place in the grid, ragged
// sequences, shared memory, staging, the rows' facts) and the key loop;
// the loop's mma.sync steps (S = Q K^T, logits, online softmax, P V) are in
// KeyTile.cpp, the epilogue in KernelEpilogue.cpp, the tile copies in
// TileCopy.cpp, both GEMMs on sm_90a's wgmma in Wgmma.cpp, the host side of
// the launches in KernelHost.cpp.
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

void KernelEmitter::placeRaggedBlock(gpu::LaunchOp launch,
                                     ModInputAccess &modAccess, Value totalQ,
                                     Value totalK, Value &rt, Value &firstOfSeq,
                                     BlockState &blk) {
  emitRaggedOffsetChecks(modAccess,
                         a.both(a.eq(launch.getBlockIds().x, ci(0)),
                                a.eq(launch.getBlockIds().y, ci(0))));
  Value x = launch.getBlockIds().x;
  auto walk = scf::ForOp::create(b, loc, ci(0), numSeqs, ci(1),
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
  blk.seq = sIdx;
  firstOfSeq = a.both(a.eq(rt, ci(0)), a.eq(launch.getBlockIds().y, ci(0)));
  blk.qBase = clampedOffset(cuQBuf, sIdx, ci(0), totalQ);
  nq = a.sub(clampedOffset(cuQBuf, a.add(sIdx, ci(1)), blk.qBase, totalQ),
             blk.qBase);
  // Paged: every sequence's keys are its own [0, max_pages * S), read
  // through its page table row.
  if (cuKBuf) {
    blk.kBase = clampedOffset(cuKBuf, sIdx, ci(0), totalK);
    nk = a.sub(clampedOffset(cuKBuf, a.add(sIdx, ci(1)), blk.kBase, totalK),
               blk.kBase);
  }
  auto active = scf::IfOp::create(b, loc, walk.getResult(3),
                                  /*withElse=*/false);
  b.setInsertionPointToStart(&active.getThenRegion().front());
}

void KernelEmitter::emitRowFacts(BlockState &blk, Value row0) {
  const int64_t nf = rowFrags;
  Value lane = blk.lane, hk = blk.hk;
  // The two rows a lane holds of each fragment (index f * 2 + r): query,
  // head, ALiBi slope.
  Value quad = divu(lane, ci(4));
  Value pair = a.mul(remu(lane, ci(4)), ci(2));
  blk.quad = quad;
  blk.pair = pair;
  SmallVector<Value> &rowI = blk.rowI, &rowH = blk.rowH,
                     &rowSlope = blk.rowSlope;
  rowI.resize(2 * nf);
  rowH.resize(2 * nf);
  rowSlope.resize(2 * nf);
  for (int64_t fr = 0; fr < 2 * nf; ++fr) {
    Value row = a.add(row0, rowInWarpTile(blk, fr));
    rowI[fr] = divu(row, groups);
    rowH[fr] = a.add(a.mul(hk, groups), remu(row, groups));
    if (alibiBuf) {
      Value h = a.min(rowH[fr], a.sub(hq, ci(1)));
      rowSlope[fr] = memref::LoadOp::create(b, loc, alibiBuf, ValueRange{h});
    }
  }
}

MaskBounds<IRArith>::Truth
KernelEmitter::classifyBlockKeyTile(const BlockState &blk, Value rt, Value q0,
                                    Value qLast, Value t,
                                    const ModInputAccess &modAccess) {
  if (!tileMap) {
    Value h0 = a.mul(blk.hk, groups);
    return classifyKeyTile(blk.seq, h0, a.sub(a.add(h0, groups), ci(1)), q0,
                           qLast, t, modAccess, 0);
  }
  Value hIdx = maskIgnoresHead() ? ci(0) : blk.hk;
  Value tt = a.min(t, a.sub(numKeyTiles, ci(1)));
  Value at = tileMapIndex(blk.bb, hIdx, rt, tt);
  Value byte = memref::LoadOp::create(b, loc, tileMap, ValueRange{at});
  auto bit = [&](int64_t i) -> Value {
    Value m = arith::ConstantIntOp::create(b, loc, b.getI8Type(), 1 << i);
    Value zero = arith::ConstantIntOp::create(b, loc, b.getI8Type(), 0);
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                 arith::AndIOp::create(b, loc, byte, m), zero);
  };
  return {bit(0), bit(1)};
}

Value KernelEmitter::emitBlockLogitContext(BlockState &blk,
                                           ModInputAccess &modAccess,
                                           Value firstOfSeq) {
  LogitContext &lctx = blk.lctx;
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
  blk.foldScale = foldScale;
  blk.scaleValue = scaleValue;
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
                                       ValueRange{bcast(kvLenBuf, 0, blk.seq)});
    kvLen = buildClampedKvLen(b, loc, lctx, len);
  }
  if (ptBuf)
    emitPageTableChecks(blk.seq, kvLen, modAccess, firstOfSeq);
  return kvLen;
}

KernelEmitter::SharedTiles KernelEmitter::emitSharedTiles() {
  SharedTiles sh;
  auto wg =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  auto raw = gpu::DynamicSharedMemoryOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                      MemRefLayoutAttrInterface{}, wg));
  // wgmma: Q and K swizzled from a 1024-byte boundary of the window, whose
  // address the descriptors hold.
  sh.layout = sharedLayout();
  const SharedLayout &layout = sh.layout;
  // Q and K alike; V padded (ldmatrix.trans for P V on mma.sync) unless
  // P V runs on wgmma.
  sh.qLayout = layout.swizzled ? TileLayout::Swizzled : TileLayout::Padded;
  sh.vLayout = layout.pvSwizzled ? TileLayout::Swizzled : TileLayout::Padded;
  emittedWgmma =
      std::max<int64_t>(emittedWgmma, layout.pvSwizzled ? 2 : layout.swizzled);
  Value tilesAt = ci(0);
  if (layout.align) {
    Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, raw);
    tilesAt = remu(a.sub(ci(layout.align), remu(base, ci(layout.align))),
                   ci(layout.align));
    sh.addr = a.add(base, tilesAt);
  }
  sh.q = memref::ViewOp::create(b, loc, layout.q, raw, tilesAt, ValueRange{});
  sh.k = memref::ViewOp::create(b, loc, layout.k, raw,
                                a.add(tilesAt, ci(layout.kOff)), ValueRange{});
  sh.v = memref::ViewOp::create(b, loc, layout.v, raw,
                                a.add(tilesAt, ci(layout.vOff)), ValueRange{});
  if (layout.pvSwizzled)
    sh.p = memref::ViewOp::create(
        b, loc, layout.p, raw, a.add(tilesAt, ci(layout.pOff)), ValueRange{});
  return sh;
}

SmallVector<Value>
KernelEmitter::emitKeyTileStep(const BlockState &blk, const SharedTiles &sh,
                               ArrayRef<Value> qFrag, ValueRange state, Value t,
                               Value cur, function_ref<Value(Value)> isFull) {
  const SharedLayout &layout = sh.layout;
  const int64_t nf = rowFrags, nOut = dv / 8, oBase = keyLoopOBase();
  // S = Q K^T, tk/8 accumulator tiles of 16 x 8 per fragment ([f][n]).
  int64_t nS = tk / 8;
  SmallVector<Value> s(nf * nS, blk.zeroC);
  if (layout.swizzled)
    emitWgmmaQK(s, sh.addr,
                a.add(ci(layout.kOff), a.mul(cur, ci(layout.kBufBytes))),
                layout.qBlockBytes, layout.kBlockBytes);
  else
    emitMmaSyncQK(blk, s, sh.q, sh.k, cur, qFrag);

  // Logits: full tiles skip the masks.
  Value k0 = a.mul(t, ci(tk));
  SmallVector<Value> logits = emitTileLogits(blk, s, k0, isFull(k0));

  SmallVector<Value> newState(state.begin(), state.end());
  SmallVector<Value> o(state.begin() + oBase, state.end());
  SmallVector<Value> p = emitOnlineSoftmax(blk, state, logits, newState, o);
  if (layout.pvSwizzled)
    emitWgmmaPV(o, p, sh.p, a.add(sh.addr, ci(layout.pOff)),
                a.add(sh.addr,
                      a.add(ci(layout.vOff), a.mul(cur, ci(layout.vBufBytes)))),
                layout.pBlockBytes, layout.vBlockBytes);
  else
    emitMmaSyncPV(blk, o, p, sh.v, cur);
  for (int64_t i = 0; i < nf * nOut; ++i)
    newState[oBase + i] = o[i];
  return newState;
}

void KernelEmitter::emitKernel(gpu::LaunchOp launch) {
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
  BlockState blk;

  // Ragged batches: placeRaggedBlock finds the block's sequence and row
  // tile; nq and nk are the sequence's own lengths for the rest of the
  // kernel, and a block past the last tile does nothing. `seq` indexes the
  // per-sequence operands (kv_len, page table rows) and is the regions'
  // batch index: the batch entry, or the ragged sequence.
  Value seq = bb;
  blk.qBase = ci(0);
  blk.kBase = ci(0);
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
  if (cuQBuf)
    placeRaggedBlock(launch, modAccess, totalQ, totalK, rt, firstOfSeq, blk);
  else
    blk.seq = seq;
  // Packed rows of the sequence's query row i and key j (in bounds of the
  // tensors whatever the sizes).
  Value lastQ = a.max(a.sub(totalQ, ci(1)), ci(0));
  Value lastK = a.max(a.sub(totalK, ci(1)), ci(0));
  seq = blk.seq;
  blk.bb = bb;
  blk.hk = hk;
  blk.split = split;
  blk.lastQ = lastQ;
  blk.lastK = lastK;
  blk.lane = lane;

  // Shared memory: Q [TQ][D+8], K [2][TK][D+8], V [2][TK][Dv+8].
  const SharedTiles sh = emitSharedTiles();
  const bool useWgmma = sh.layout.swizzled;
  const TileLayout qLayout = sh.qLayout;
  Value qs = sh.q;

  // Per-block facts: kv_len, the rows' queries, the key tiles to visit.
  Value kvLen = emitBlockLogitContext(blk, modAccess, firstOfSeq);
  Value row0 = a.mul(rt, ci(tq));
  auto [q0, qLast] = rowTileQueries(rt);
  Value qCount = a.add(a.sub(qLast, q0), ci(1));
  ScheduleSpec spec = ScheduleSpec::forOp(op, TileSizes{tq, tk});
  TileRules<IRArith> rules(spec, a);
  std::pair<Value, Value> readable = rules.readableKeys(q0, qCount, kvLen, nq);
  std::pair<Value, Value> tiles =
      rules.keyTiles(readable.first, readable.second);
  if (splitMode)
    tiles = rules.splitTiles(tiles.first, tiles.second, split, numSplits);
  Value ktLo = tiles.first, ktHi = tiles.second;

  // Stage Q and the first K/V tile.
  SmallVector<Value> tokens;
  Value nqLast = a.max(a.sub(nq, ci(1)), ci(0));
  Value nkLast = a.max(a.sub(nk, ci(1)), ci(0));
  blk.kvLen = kvLen;
  blk.nqLast = nqLast;
  blk.nkLast = nkLast;
  emitTileCopy(
      qs, {}, qLayout, tq, d, q,
      [&](Value r) {
        Value row = a.add(row0, r);
        Value i = divu(row, groups);
        Value h = a.add(a.mul(hk, groups), remu(row, groups));
        Value valid = a.slt(i, nq);
        return std::make_pair(phys(bb, h, qRow(blk, a.min(i, nqLast)), ci(0)),
                              valid);
      },
      tokens);
  const BlockKeys keys{rt, q0, qLast, qCount, ktLo, ktHi};
  using Truth = MaskBounds<IRArith>::Truth;
  Truth firstCls = classifyKeyTileIfMasked(blk, keys, ktLo, modAccess);
  emitKeyValueTileCopy(blk, sh, ktLo, ci(0), readsKeyTile(keys, ktLo, firstCls),
                       tokens);
  waitForCopies(tokens, 0);
  if (useWgmma)
    fenceForAsyncProxy();
  gpu::BarrierOp::create(b, loc);

  // The warp's rows: rowFrags fragments of 16 (fragment f: rows wrow +
  // 16 f ...).
  const int64_t nf = rowFrags;
  Value wrow = a.mul(warp, ci(16 * nf));
  blk.wrow = wrow;
  // Q's A fragments ([f][kk]): held in registers across the key loop when
  // they fit next to S and O, else loaded from shared memory (where Q
  // stays) per key tile, which keeps large head dims with modifiers from
  // spilling.
  SmallVector<Value> qFrag;
  if (!useWgmma && holdQInRegisters())
    for (int64_t f = 0; f < nf; ++f)
      for (int64_t kk = 0; kk < d / 16; ++kk)
        qFrag.push_back(loadQFragment(blk, qs, f, kk));

  emitRowFacts(blk, row0);

  emitEpilogue(blk, emitKeyLoop(blk, sh, qFrag, rules, keys, modAccess,
                                firstCls, tokens));
}
