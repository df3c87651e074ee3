//===- FusedLowering.cpp - the fused form on the CPU ----------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "FusedLowering.h"

#include "attn/Conversion/PagedKv.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"

#include <algorithm>
#include <tuple>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::cpu;

VectorShape VectorShape::forTarget(const CpuTarget &target,
                                   Bf16DotProducts bf16DotProducts) {
  VectorShape v;
  v.lanes = std::max<int64_t>(target.f32Lanes(), 4);
  v.nw = 2 * v.lanes;
  // Accumulators: mr rows x 2 vectors; plus the two B vectors and the
  // broadcast A scalar.
  int64_t regs = std::max<int64_t>(target.vectorRegisters, 16);
  v.mr = std::clamp<int64_t>((regs - 3) / 2, 1, 8);
  v.registers = regs;
  // 512-bit registers only (usesBf16DotProducts), so 16 f32 lanes.
  v.bf16Dot = usesBf16DotProducts(target, bf16DotProducts);
  v.amx = target.amxBf16 && v.lanes == 16;
  return v;
}

FusedLowering::FusedLowering(AttentionOp op, OpBuilder &b,
                             const ScheduleSpec &schedule,
                             const VectorShape &shape, bool instrument)
    : op(op), schedule(schedule), tileQ(schedule.tiles.q),
      tileK(schedule.tiles.k), lanes(shape.lanes), mr(shape.mr), nw(shape.nw),
      registers(shape.registers), instrument(instrument) {
  Location loc = op.getLoc();
  layout = op.getLayout();
  elt = op.getQuery().getType().getElementType();
  f32 = b.getF32Type();
  softmax = op.getNormalization() == Normalization::softmax;
  auto size = [&](Value t, int64_t logical) {
    return getValueOrCreateConstantIndexOp(
        b, loc, tensor::getMixedSize(b, loc, t, op.getPhysicalDim(logical)));
  };
  batch = size(op.getQuery(), 0);
  pageSize = op.isPaged() ? size(op.getKey(), 2) : Value();
  hq = size(op.getQuery(), 1);
  hkv = size(op.getKey(), 1);
  nq = size(op.getQuery(), 2);
  nk = buildKvSeqLen(b, loc, op);
  dqk = size(op.getQuery(), 3);
  dv = size(op.getValue(), 3);
  groups = arith::DivUIOp::create(b, loc, hq, hkv);
  lctx = buildLogitContext(b, loc, op);
  // bf16 Q K^T in pairs (K packed page by page in whole vectors of keys)
  // and bf16 P V: AMX tiles where the target has them, else the AVX-512 BF16
  // dot products where asked for.
  // f16 takes AMX too, each value split into two bf16 (f16Split).
  int64_t d = staticSize(dqk), e = staticSize(dv);
  bool pagesOfLanes = !multiPageTiles() || staticSize(pageSize) % lanes == 0;
  Type kElt = op.getKey().getType().getElementType();
  Type vElt = op.getValue().getType().getElementType();
  bool pairsQK = !op.isQuantized() && !ShapedType::isDynamic(d) &&
                 d % (2 * lanes) == 0 && pagesOfLanes;
  bool bf16QK = pairsQK && elt.isBF16() && kElt.isBF16();
  bool bf16V = !op.isQuantized() && vElt.isBF16();
  f16Split = shape.amx && elt.isF16() && !op.isQuantized();
  bool amxV = bf16V || (f16Split && vElt.isF16());
  amxQK = shape.amx && (bf16QK || (f16Split && pairsQK && kElt.isF16()));
  amxPV = shape.amx && amxV && !ShapedType::isDynamic(e) && e % 16 == 0 &&
          tileK % 32 == 0;
  pairedQK = shape.bf16Dot && bf16QK && !amxQK;
  pairedPV = shape.bf16Dot && bf16V;
}

std::string FusedLowering::bf16Products() const {
  auto route = [&](bool amx, bool dot) -> std::string {
    return amx   ? (f16Split ? "amx-f16-split" : "amx")
           : dot ? "vdpbf16ps"
                 : "f32";
  };
  std::string qk = route(amxQK, pairedQK), pv = route(amxPV, pairedPV);
  if (qk == pv)
    return qk == "f32" ? "" : qk;
  return qk + " for Q K^T, " + pv + " for P V";
}

Value FusedLowering::branch(OpBuilder &b, Location loc, Value cond, Value c,
                            function_ref<Value(OpBuilder &, Location)> fast,
                            function_ref<Value(OpBuilder &, Location)> slow) {
  auto ifOp = scf::IfOp::create(
      b, loc, cond,
      [&](OpBuilder &tb, Location tl) {
        Value v = fast(tb, tl);
        if (v.getType() != c.getType())
          v = tensor::CastOp::create(tb, tl, c.getType(), v);
        scf::YieldOp::create(tb, tl, v);
      },
      [&](OpBuilder &eb, Location el) {
        Value v = slow(eb, el);
        if (v.getType() != c.getType())
          v = tensor::CastOp::create(eb, el, c.getType(), v);
        scf::YieldOp::create(eb, el, v);
      });
  return ifOp.getResult(0);
}

FusedLowering::State FusedLowering::initState(OpBuilder &b, Location loc,
                                              Value qs) {
  SmallVector<OpFoldResult> rows = {groups, qs};
  SmallVector<OpFoldResult> accShape = {groups, qs, dv};
  return {filled(b, loc, rows, kNegInf), filled(b, loc, rows, 0.0),
          filled(b, loc, accShape, 0.0)};
}

std::pair<Value, Value> FusedLowering::finalize(OpBuilder &b, Location loc,
                                                State st, Value qs,
                                                Value outDest, Value lseDest) {
  SmallVector<OpFoldResult> outShape = headRowSizes(b, groups, qs, dv);
  Value out =
      outDest ? outDest : Value(tensor::EmptyOp::create(b, loc, outShape, elt));
  // Vector code, row by row: out[r, i, :] = acc[r, i, :] / (l s), with the
  // accumulator's scale s (softmaxStep; l s is exact), 0 for a row without
  // keys (l = 0; its acc is 0).
  IndexMath im{b, loc};
  Value zero = im.c(0), one = im.c(1), step = im.c(lanes);
  auto vecTy = VectorType::get({lanes}, f32);
  int64_t e = staticSize(dv);
  SmallVector<bool> ib = {!ShapedType::isDynamic(e) && e % lanes == 0};
  auto rLoop = scf::ForOp::create(
      b, loc, zero, groups, one, ValueRange{out},
      [&](OpBuilder &b1, Location l1, Value r, ValueRange it1) {
        auto iLoop = scf::ForOp::create(
            b1, l1, zero, qs, one, it1,
            [&](OpBuilder &b2, Location l2, Value i, ValueRange it2) {
              Value inv;
              if (softmax) {
                Value l =
                    tensor::ExtractOp::create(b2, l2, st.l, ValueRange{r, i});
                Value ls = arith::MulFOp::create(b2, l2, l,
                                                 buildRowSumScale(b2, l2, l));
                Value oneF =
                    arith::ConstantOp::create(b2, l2, b2.getF32FloatAttr(1));
                inv = vector::BroadcastOp::create(
                    b2, l2, vecTy, buildNormalizedOutput(b2, l2, oneF, ls));
              }
              auto eLoop = scf::ForOp::create(
                  b2, l2, zero, dv, step, it2,
                  [&](OpBuilder &b3, Location l3, Value e0, ValueRange it3) {
                    Value pad = arith::ConstantOp::create(
                        b3, l3, b3.getF32FloatAttr(0.0));
                    Value o = vector::TransferReadOp::create(
                        b3, l3, vecTy, st.acc, ValueRange{r, i, e0}, pad, ib);
                    if (inv)
                      o = arith::MulFOp::create(b3, l3, o, inv);
                    if (elt != f32)
                      o = arith::TruncFOp::create(
                          b3, l3, VectorType::get({lanes}, elt), o);
                    SmallVector<Value> idx = headRowIndex(zero, r, i, e0);
                    scf::YieldOp::create(b3, l3,
                                         vector::TransferWriteOp::create(
                                             b3, l3, o, it3[0], idx, ib)
                                             .getResult());
                  });
              scf::YieldOp::create(b2, l2, eLoop.getResults());
            });
        scf::YieldOp::create(b1, l1, iLoop.getResults());
      });
  out = rLoop.getResult(0);
  Value lse;
  if (op.getLse()) {
    SmallVector<OpFoldResult> lseShape = {b.getIndexAttr(1), groups, qs};
    lse = lseDest ? lseDest
                  : Value(tensor::EmptyOp::create(b, loc, lseShape, f32));
    lse = linalg::GenericOp::create(
              b, loc, lse.getType(), ValueRange{st.m, st.l}, lse,
              {map(b, 2, {0, 1}), map(b, 2, {0, 1}), map(b, 2, {-1, 0, 1})},
              iters(2, 0),
              [&](OpBuilder &nb, Location nl, ValueRange a) {
                linalg::YieldOp::create(nb, nl,
                                        buildLogSumExp(nb, nl, a[0], a[1]));
              })
              .getResult(0);
  }
  return {out, lse};
}

Value FusedLowering::kvLenOf(OpBuilder &b, Location loc, Value bIdx) {
  Value kvLen = op.getKvLen();
  if (!kvLen)
    return nk;
  Value e = tensor::ExtractOp::create(b, loc, kvLen, bIdx);
  return buildClampedKvLen(b, loc, lctx, e);
}

SmallVector<Value> FusedLowering::destinations(OpBuilder &b, Location loc) {
  SmallVector<Value> dests;
  dests.push_back(tensor::EmptyOp::create(
      b, loc,
      tensor::getMixedSizes(b, loc, op.getQuery()).size() == 4
          ? outSizes(b, loc)
          : SmallVector<OpFoldResult>{},
      elt));
  if (op.getLse()) {
    SmallVector<OpFoldResult> s = {batch, hq, nq};
    dests.push_back(tensor::EmptyOp::create(b, loc, s, f32));
  }
  return dests;
}

SmallVector<OpFoldResult> FusedLowering::outSizes(OpBuilder &b, Location loc) {
  if (layout == Layout::bhnd)
    return {batch, hq, nq, dv};
  return {batch, nq, hq, dv};
}

void FusedLowering::insertTiles(OpBuilder &b, Location loc,
                                scf::ForallOp forall, Value bIdx, Value gIdx,
                                Value q0, Value qs, Value outTile,
                                Value lseTile) {
  IndexMath im{b, loc};
  Value h0 = im.mul(gIdx, groups);
  auto ones = [&](size_t n) {
    return SmallVector<OpFoldResult>(n, b.getIndexAttr(1));
  };
  b.setInsertionPointToStart(forall.getTerminator().getBody());
  SmallVector<OpFoldResult> off = headRowOffsets(bIdx, h0, q0);
  SmallVector<OpFoldResult> sz = headRowSizes(b, groups, qs, dv);
  tensor::ParallelInsertSliceOp::create(
      b, loc, outTile, forall.getRegionIterArgs()[0], off, sz, ones(4));
  if (lseTile) {
    SmallVector<OpFoldResult> lo = {bIdx, h0, q0};
    SmallVector<OpFoldResult> ls = {b.getIndexAttr(1), groups, qs};
    tensor::ParallelInsertSliceOp::create(
        b, loc, lseTile, forall.getRegionIterArgs()[1], lo, ls, ones(3));
  }
}

SmallVector<Value> FusedLowering::castResults(OpBuilder &b, Location loc,
                                              ValueRange results) {
  SmallVector<Value> out;
  for (auto [v, want] : llvm::zip(results, op->getResults())) {
    Value r = v;
    if (r.getType() != want.getType())
      r = tensor::CastOp::create(b, loc, want.getType(), r);
    out.push_back(r);
  }
  return out;
}

FusedLowering::QueryTile FusedLowering::queryTileAt(OpBuilder &b, Location loc,
                                                    ValueRange ivs) {
  QueryTile t;
  t.b = ivs[0];
  t.g = ivs[1];
  t.qt = ivs[2];
  std::tie(t.q0, t.qs) = rulesAt(b, loc)->queryTile(t.qt, nq);
  t.kvLen = kvLenOf(b, loc, t.b);
  return t;
}

FusedLowering::State FusedLowering::computeQueryTile(OpBuilder &b, Location loc,
                                                     const QueryTile &tile,
                                                     Value split,
                                                     Value numSplits) {
  // The key tiles this query tile reads, and this split's even chunk of
  // them.
  auto rules = rulesAt(b, loc);
  auto [lo, hi] = rules->readableKeys(tile.q0, tile.qs, tile.kvLen, nq);
  auto [ktLo, ktHi] = rules->keyTiles(lo, hi);
  assert(!split == !numSplits && "a split needs the number of splits");
  if (split)
    std::tie(ktLo, ktHi) = rules->splitTiles(ktLo, ktHi, split, numSplits);
  State st = initState(b, loc, tile.qs);
  return walkKeyTiles(b, loc, tile, ktLo, ktHi, st);
}

Value FusedLowering::densePairs(OpBuilder &b, Location loc) {
  IndexMath m{b, loc};
  // The keys of every batch entry: Nk each, or its kv_len (a serving cache
  // is mostly empty).
  Value keys = m.mul(batch, nk);
  if (op.getKvLen()) {
    auto sum = scf::ForOp::create(
        b, loc, m.c(0), batch, m.c(1), ValueRange{m.c(0)},
        [&](OpBuilder &lb, Location l, Value bIdx, ValueRange acc) {
          Value len = kvLenOf(lb, l, bIdx);
          scf::YieldOp::create(
              lb, l, ValueRange{arith::AddIOp::create(lb, l, acc[0], len)});
        });
    keys = sum.getResult(0);
  }
  return m.mul(nq, keys);
}

Value FusedLowering::gridWork(OpBuilder &b, Location loc, Value pairs) {
  IndexMath m{b, loc};
  return m.mul(pairs, m.mul(hq, m.add(dqk, dv)));
}

void FusedLowering::markGridWork(OpBuilder &b, Location loc, scf::ForallOp grid,
                                 Value work) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(grid.getBody());
  GridWorkOp::create(b, loc, work);
}

Value FusedLowering::numSplitsFor(OpBuilder &b, Location loc, Value items,
                                  Value work) {
  IndexMath m{b, loc};
  if (schedule.splits > 0)
    return m.c(schedule.splits);
  Value threads = GridThreadsOp::create(b, loc, b.getIndexType(), work);
  Value one = m.c(1);
  Value want =
      m.ceilDiv(m.mul(threads, m.c(kSplitItemsPerThread)), m.max(items, one));
  Value keyTiles = m.max(m.ceilDiv(nk, m.c(schedule.tiles.k)), one);
  // Only the chunks the cache's key tiles fill.
  Value n = rulesAt(b, loc)->filledSplits(keyTiles, m.min(want, keyTiles));
  return m.select(m.slt(one, threads), n, one);
}

SmallVector<Value> FusedLowering::buildFused(OpBuilder &b, Location loc) {
  // The grid: one work item per (batch, K/V head, query tile).
  SmallVector<OpFoldResult> ubs = {batch, hkv,
                                   rulesAt(b, loc)->numQueryTiles(nq)};
  Value work = gridWork(b, loc, densePairs(b, loc));
  auto forall =
      scf::ForallOp::create(b, loc, ubs, destinations(b, loc), std::nullopt);
  markGridWork(b, loc, forall, work);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(forall.getTerminator());
  IndexMath m{b, loc};
  QueryTile tile = queryTileAt(b, loc, forall.getInductionVars());
  Value bIdx = tile.b, gIdx = tile.g, q0 = tile.q0, qs = tile.qs;
  State st = computeQueryTile(b, loc, tile, Value());
  // The out and lse tiles are computed into slices of the shared outputs
  // and inserted back at the same place: in place after bufferization.
  Value h0 = m.mul(gIdx, groups);
  auto ones = [&](size_t n) {
    return SmallVector<OpFoldResult>(n, b.getIndexAttr(1));
  };
  SmallVector<OpFoldResult> outSz = headRowSizes(b, groups, qs, dv);
  Value outDest = tensor::ExtractSliceOp::create(
      b, loc, forall.getRegionIterArgs()[0], headRowOffsets(bIdx, h0, q0),
      outSz, ones(4));
  Value lseDest;
  if (op.getLse()) {
    SmallVector<OpFoldResult> lo = {bIdx, h0, q0};
    SmallVector<OpFoldResult> ls = {b.getIndexAttr(1), groups, qs};
    lseDest = tensor::ExtractSliceOp::create(
        b, loc, forall.getRegionIterArgs()[1], lo, ls, ones(3));
  }
  auto [outTile, lseTile] = finalize(b, loc, st, qs, outDest, lseDest);
  insertTiles(b, loc, forall, bIdx, gIdx, q0, qs, outTile, lseTile);
  b.setInsertionPointAfter(forall);
  return castResults(b, loc, forall.getResults());
}
