//===- KernelEpilogue.cpp - the attention kernel's epilogue ---------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// After the key loop of the attention kernel (KernelBuilder.cpp): each row's
// l summed over its quad, then out = O / l and lse = m + log l (attention
// sinks joining the denominator), or, in the split-KV kernel, the partial
// state (O unnormalized, m, l) in the workspace for the merge kernel
// (KernelHost.cpp).
//
//===----------------------------------------------------------------------===//

#include "KernelEmitter.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::gpu_codegen;
using namespace mlir::attn::gpu_codegen::detail;

void KernelEmitter::emitEpilogue(const BlockState &blk, ValueRange results) {
  const int64_t nRows = 2 * rowFrags, nOut = dv / 8, oBase = keyLoopOBase();
  // The row max in the units of the logits (foldScale keeps it raw).
  auto rowMax = [&](int64_t fr) -> Value {
    Value m = results[fr];
    return blk.foldScale ? arith::MulFOp::create(b, loc, m, cf(blk.scaleValue))
                         : m;
  };
  Type outElem = cast<MemRefType>(out.getType()).getElementType();
  if (splitMode) {
    Value mBase = a.mul(wsRows(), ci(dv));
    Value lBase = a.add(mBase, wsRows());
    for (int64_t fr = 0; fr < nRows; ++fr) {
      int64_t f = fr / 2, r = fr % 2;
      Value l = results[nRows + fr];
      l = arith::AddFOp::create(b, loc, l, shuffleXor(l, 1));
      l = arith::AddFOp::create(b, loc, l, shuffleXor(l, 2));
      Value rowInTile = rowInWarpTile(blk, fr);
      Value wr = wsRow(blk.bb, blk.hk, blk.split, rowInTile);
      SmallVector<Value> vals;
      for (int64_t nd = 0; nd < nOut; ++nd)
        for (int64_t c = 0; c < 2; ++c)
          vals.push_back(vector::ExtractOp::create(
              b, loc, results[oBase + f * nOut + nd], ArrayRef<int64_t>{r, c}));
      auto store =
          scf::IfOp::create(b, loc, a.slt(rowInTile, a.mul(nq, groups)), false);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(&store.getThenRegion().front());
      for (int64_t nd = 0; nd < nOut; ++nd)
        for (int64_t c = 0; c < 2; ++c)
          memref::StoreOp::create(
              b, loc, vals[nd * 2 + c], ws,
              ValueRange{
                  a.add(a.mul(wr, ci(dv)), a.add(ci(nd * 8 + c), blk.pair))});
      auto first = scf::IfOp::create(b, loc, a.eq(blk.pair, ci(0)), false);
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
    Value l = results[nRows + fr];
    l = arith::AddFOp::create(b, loc, l, shuffleXor(l, 1));
    l = arith::AddFOp::create(b, loc, l, shuffleXor(l, 2));
    // Attention sinks: the row's sink logit joins the denominator.
    Value accScale;
    if (sinkBuf) {
      Value h = a.min(blk.rowH[fr], a.sub(hq, ci(1)));
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
            b, loc, results[oBase + f * nOut + nd], ArrayRef<int64_t>{r, c});
        if (accScale)
          acc = arith::MulFOp::create(b, loc, acc, accScale);
        Value val = sigmoid ? acc : buildNormalizedOutput(b, loc, acc, l);
        if (outElem != f32)
          val = arith::TruncFOp::create(b, loc, outElem, val);
        vals.push_back(val);
      }
    Value lseVal = lse ? buildLogSumExp(b, loc, m, l) : Value();
    auto store = scf::IfOp::create(b, loc, a.slt(blk.rowI[fr], nq), false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&store.getThenRegion().front());
    for (int64_t nd = 0; nd < nOut; ++nd)
      for (int64_t c = 0; c < 2; ++c) {
        Value col = a.add(ci(nd * 8 + c), blk.pair);
        memref::StoreOp::create(
            b, loc, vals[nd * 2 + c], out,
            phys(blk.bb, blk.rowH[fr], qRow(blk, blk.rowI[fr]), col));
      }
    if (lse) {
      auto first = scf::IfOp::create(b, loc, a.eq(blk.pair, ci(0)), false);
      b.setInsertionPointToStart(&first.getThenRegion().front());
      memref::StoreOp::create(
          b, loc, lseVal, lse,
          ValueRange{blk.bb, blk.rowH[fr], qRow(blk, blk.rowI[fr])});
    }
  }
}
