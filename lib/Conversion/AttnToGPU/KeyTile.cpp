//===- KeyTile.cpp - one key tile of the tensor-core attention kernel -----===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// The steps of the attention kernel's key loop on mma.sync: S = Q K^T, the
// logits (full tiles skip the masks), the online softmax, O += P V.
// KernelBuilder.cpp builds the loop and stages the tiles; the wgmma variants
// of the two GEMMs are in Wgmma.cpp. Fragment layouts as KernelBuilder.cpp's
// header states them.
//
//===----------------------------------------------------------------------===//

#include "KernelEmitter.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::gpu_codegen;
using namespace mlir::attn::gpu_codegen::detail;

Value KernelEmitter::loadQFragment(const BlockState &blk, Value qs, int64_t f,
                                   int64_t kk) {
  auto aType = VectorType::get({4, 2}, elem);
  Value r = a.add(blk.wrow, a.add(ci(16 * f), remu(blk.lane, ci(16))));
  Value c = a.add(ci(kk * 16), a.mul(divu(blk.lane, ci(16)), ci(8)));
  return nvgpu::LdMatrixOp::create(b, loc, aType, qs, ValueRange{r, c}, false,
                                   4);
}

void KernelEmitter::emitMmaSyncQK(const BlockState &blk,
                                  MutableArrayRef<Value> s, Value qs, Value ks,
                                  Value cur, ArrayRef<Value> qFrag) {
  auto aType = VectorType::get({4, 2}, elem);
  auto bType = VectorType::get({2, 2}, elem);
  const int64_t nf = rowFrags, nS = tk / 8, dSteps = d / 16;
  Value lane = blk.lane;
  for (int64_t kk = 0; kk < dSteps; kk += 2) {
    int64_t steps = std::min<int64_t>(2, dSteps - kk);
    SmallVector<Value> qStep;
    for (int64_t f = 0; f < nf; ++f)
      for (int64_t e = 0; e < steps; ++e)
        qStep.push_back(qFrag.empty() ? loadQFragment(blk, qs, f, kk + e)
                                      : qFrag[f * dSteps + kk + e]);
    for (int64_t n = 0; n < nS; ++n) {
      Value r = a.add(ci(n * 8), remu(lane, ci(8)));
      SmallVector<Value, 2> kf;
      if (steps == 2) {
        // x4: the B fragments of two steps of 16 dims at once (lanes
        // 8 q .. 8 q + 7 address matrix q: dims kk * 16 + 8 q).
        Value c = a.add(ci(kk * 16), a.mul(divu(lane, ci(8)), ci(8)));
        Value both = nvgpu::LdMatrixOp::create(b, loc, aType, ks,
                                               ValueRange{cur, r, c}, false, 4);
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
}

SmallVector<Value> KernelEmitter::emitTileLogits(const BlockState &blk,
                                                 ArrayRef<Value> s, Value k0,
                                                 Value full) {
  const int64_t nf = rowFrags, nS = tk / 8;
  SmallVector<Type> logitTypes(nf * nS * 4, f32);
  auto ifFull = scf::IfOp::create(b, loc, logitTypes, full, true);
  for (int branch = 0; branch < 2; ++branch) {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(branch == 0 ? &ifFull.getThenRegion().front()
                                           : &ifFull.getElseRegion().front());
    SmallVector<Value> xs;
    for (int64_t f = 0; f < nf; ++f)
      for (int64_t n = 0; n < nS; ++n)
        for (int64_t r = 0; r < 2; ++r)
          for (int64_t c = 0; c < 2; ++c) {
            int64_t fr = 2 * f + r;
            Value j = a.add(a.add(k0, ci(n * 8 + c)), blk.pair);
            LogitOperands in;
            in.raw = vector::ExtractOp::create(b, loc, s[f * nS + n],
                                               ArrayRef<int64_t>{r, c});
            in.b = blk.seq;
            in.h = blk.rowH[fr];
            in.i = blk.rowI[fr];
            in.j = j;
            in.kvLen = blk.kvLen;
            in.slope = blk.rowSlope[fr];
            Value ic = a.min(blk.rowI[fr], blk.nqLast);
            Value jc = a.min(j, blk.nkLast);
            Value hc = a.min(blk.rowH[fr], a.sub(hq, ci(1)));
            in.regionI = ic;
            in.regionJ = jc;
            // Masks and biases broadcast by numpy rules: a rank-r tensor is
            // indexed by the last r of (b, h, i, j), a ragged batch's by
            // packed rows (and, paged, key positions).
            auto tensorIdx = [&](Value buf) {
              Value logical[4] = {blk.bb, hc, qRow(blk, ic), kRow(blk, jc)};
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
            xs.push_back(branch == 0 ? buildUnmaskedLogit(b, loc, blk.lctx, in)
                                     : buildLogit(b, loc, blk.lctx, in));
          }
    scf::YieldOp::create(b, loc, xs);
  }
  return SmallVector<Value>(ifFull.getResults());
}

SmallVector<Value> KernelEmitter::emitOnlineSoftmax(
    const BlockState &blk, ValueRange state, ValueRange logits,
    MutableArrayRef<Value> newState, MutableArrayRef<Value> o) {
  const int64_t nf = rowFrags, nS = tk / 8, nRows = 2 * nf, nOut = dv / 8;
  auto cType = VectorType::get({2, 2}, f32);
  auto x = [&](int64_t f, int64_t n, int64_t r, int64_t c) {
    return logits[(f * nS + n) * 4 + r * 2 + c];
  };
  // Online softmax per row (sigmoid: a_ij = sigmoid(s_ij), no row max, no
  // row sum, no rescaling).
  // (log2(e), times the scale when it is folded here.)
  Value l2e = cf(blk.foldScale ? kLog2E * blk.scaleValue : kLog2E);
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
        arith::SubFOp::create(b, loc, arith::MulFOp::create(b, loc, mOld, l2e),
                              mScaled[fr]));
    newState[fr] = mNew;
  }
  SmallVector<Value> p(nf * nS);
  SmallVector<Value> sum(nRows, cf(0.0));
  for (int64_t f = 0; f < nf; ++f)
    for (int64_t n = 0; n < nS; ++n) {
      Value pv = blk.zeroC;
      for (int64_t r = 0; r < 2; ++r)
        for (int64_t c = 0; c < 2; ++c) {
          int64_t fr = 2 * f + r;
          Value pe;
          if (sigmoid) {
            // 1 / (1 + 2^(-x log2 e)): 0 for a masked key (x = -inf).
            Value e = math::Exp2Op::create(
                b, loc,
                arith::MulFOp::create(
                    b, loc, arith::NegFOp::create(b, loc, x(f, n, r, c)), l2e));
            pe = arith::DivFOp::create(
                b, loc, cf(1.0), arith::AddFOp::create(b, loc, cf(1.0), e));
          } else {
            Value e =
                math::FmaOp::create(b, loc, x(f, n, r, c), l2e,
                                    arith::NegFOp::create(b, loc, mScaled[fr]));
            pe = math::Exp2Op::create(b, loc, e);
            sum[fr] = arith::AddFOp::create(b, loc, sum[fr], pe);
          }
          pv =
              vector::InsertOp::create(b, loc, pe, pv, ArrayRef<int64_t>{r, c});
        }
      p[f * nS + n] = pv;
    }
  if (!sigmoid) {
    for (int64_t fr = 0; fr < nRows; ++fr)
      newState[nRows + fr] =
          math::FmaOp::create(b, loc, state[nRows + fr], alpha[fr], sum[fr]);
    // O *= alpha (per row); O += P V follows.
    for (int64_t f = 0; f < nf; ++f) {
      Value a0 = alpha[2 * f], a1 = alpha[2 * f + 1];
      Value alphaVec = vector::FromElementsOp::create(
          b, loc, cType, ValueRange{a0, a0, a1, a1});
      for (int64_t nd = 0; nd < nOut; ++nd)
        o[f * nOut + nd] =
            arith::MulFOp::create(b, loc, o[f * nOut + nd], alphaVec);
    }
  }
  return p;
}

void KernelEmitter::emitMmaSyncPV(const BlockState &blk,
                                  MutableArrayRef<Value> o, ArrayRef<Value> p,
                                  Value vs, Value cur) {
  auto aType = VectorType::get({4, 2}, elem);
  auto bType = VectorType::get({2, 2}, elem);
  auto aHalf = VectorType::get({2, 2}, elem);
  const int64_t nf = rowFrags, nS = tk / 8, nOut = dv / 8;
  Value lane = blk.lane;
  for (int64_t kc = 0; kc < tk / 16; ++kc) {
    // P's A operands of the nf fragments for keys [16 kc, 16 kc + 16).
    SmallVector<Value> pa(nf);
    for (int64_t f = 0; f < nf; ++f) {
      Value lo = arith::TruncFOp::create(b, loc, aHalf, p[f * nS + 2 * kc]);
      Value hi = arith::TruncFOp::create(b, loc, aHalf, p[f * nS + 2 * kc + 1]);
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
        Value both = nvgpu::LdMatrixOp::create(b, loc, aType, vs,
                                               ValueRange{cur, r, c}, true, 4);
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
}

MaskBounds<IRArith>::Truth
KernelEmitter::classifyKeyTileIfMasked(const BlockState &blk,
                                       const BlockKeys &keys, Value t,
                                       const ModInputAccess &modAccess) {
  if (!op.getMaskModBlock())
    return {a.cb(true), a.cb(false)};
  return classifyBlockKeyTile(blk, keys.rt, keys.q0, keys.qLast, t, modAccess);
}

Value KernelEmitter::readsKeyTile(const BlockKeys &keys, Value t,
                                  const MaskBounds<IRArith>::Truth &cls) {
  return a.both(a.slt(t, keys.ktHi), cls.mayTrue);
}

void KernelEmitter::emitKeyValueTileCopy(const BlockState &blk,
                                         const SharedTiles &sh, Value tile,
                                         Value buf, Value inRange,
                                         SmallVectorImpl<Value> &tokens) {
  Value k0 = a.mul(tile, ci(tk));
  auto rowOf = [&](Value r) {
    Value key = a.add(k0, r);
    Value valid = a.both(inRange, a.slt(key, blk.kvLen));
    if (ptBuf)
      return pagedRow(blk.seq, blk.hk, a.min(key, blk.nkLast), valid);
    return std::make_pair(
        phys(blk.bb, blk.hk, kRow(blk, a.min(key, blk.nkLast)), ci(0)), valid);
  };
  emitTileCopy(sh.k, {buf}, sh.qLayout, tk, d, k, rowOf, tokens, Value(),
               kScaleBuf);
  emitTileCopy(sh.v, {buf}, sh.vLayout, tk, dv, v, rowOf, tokens, Value(),
               vScaleBuf);
}

SmallVector<Value> KernelEmitter::emitKeyLoop(
    BlockState &blk, const SharedTiles &sh, ArrayRef<Value> qFrag,
    TileRules<IRArith> &rules, const BlockKeys &keys,
    const ModInputAccess &modAccess, MaskBounds<IRArith>::Truth firstCls,
    SmallVectorImpl<Value> &tokens) {
  using Truth = MaskBounds<IRArith>::Truth;
  Block *maskMod = op.getMaskModBlock();
  const bool useWgmma = sh.layout.swizzled;
  const int64_t nf = rowFrags;
  auto cType = VectorType::get({2, 2}, f32);
  // State m[2 nf], l[2 nf] (per-lane partial sums), O fragments [f][nd].
  Value ninf = cf(-std::numeric_limits<double>::infinity());
  Value zeroC = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(cType, b.getF32FloatAttr(0.0)));
  blk.zeroC = zeroC;
  const int64_t nRows = 2 * nf, nOut = dv / 8;
  const int64_t oBase = keyLoopOBase(), nState = oBase + nf * nOut;
  SmallVector<Value> init(nRows, ninf);
  init.append(nRows, cf(0.0));
  for (int64_t i = 0; i < nf * nOut; ++i)
    init.push_back(zeroC);
  // After the state: the classification of the tile the iteration computes.
  if (maskMod) {
    init.push_back(firstCls.mayTrue);
    init.push_back(firstCls.mayFalse);
  }
  auto loop = scf::ForOp::create(b, loc, keys.ktLo, keys.ktHi, ci(1), init);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    Value t = loop.getInductionVar();
    ValueRange state = loop.getRegionIterArgs().take_front(nState);
    Truth curCls = maskMod ? Truth{loop.getRegionIterArgs()[nState],
                                   loop.getRegionIterArgs()[nState + 1]}
                           : Truth{a.cb(true), a.cb(false)};
    Value cur = remu(a.sub(t, keys.ktLo), ci(2));
    Value nextBuf = a.sub(ci(1), cur);
    Value tNext = a.add(t, ci(1));
    tokens.clear();
    Truth nextCls = classifyKeyTileIfMasked(blk, keys, tNext, modAccess);
    emitKeyValueTileCopy(blk, sh, tNext, nextBuf,
                         readsKeyTile(keys, tNext, nextCls), tokens);
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

    SmallVector<Value> newState =
        emitKeyTileStep(blk, sh, qFrag, state, t, cur, [&](Value k0) {
          // The tile computes all tk columns (those past Nk are
          // zero-filled), so it is full only when all tk keys are readable:
          // a tail tile cut short by Nk is a boundary tile (found by the
          // warp-level emulator).
          Value full =
              rules.isFull(keys.q0, keys.qCount, k0, ci(tk), blk.kvLen, nq);
          // The mask_mod region: the tile is full only when it allows
          // every pair.
          if (maskMod)
            full = a.both(full, a.negate(curCls.mayFalse));
          return full;
        });
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

  return loop.getResults();
}
