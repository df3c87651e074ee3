//===- SplitKv.cpp - the split-KV decode form and its merge ---------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "FusedLowering.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::cpu;

SmallVector<Value> FusedLowering::buildSplitKv(OpBuilder &b, Location loc) {
  IndexMath im{b, loc};
  Value numQTiles = rulesAt(b, loc)->numQueryTiles(nq);
  Value work = gridWork(b, loc, densePairs(b, loc));
  Value numSplits =
      numSplitsFor(b, loc, im.mul(im.mul(batch, hkv), numQTiles), work);
  // Partial states, one slot per split: m, l [B, Hkv, S, R, Nq] and
  // acc [B, Hkv, S, R, Nq, Dv] (f32).
  SmallVector<OpFoldResult> rowShape = {batch, hkv, numSplits, groups, nq};
  SmallVector<OpFoldResult> accShape = {batch, hkv, numSplits, groups, nq, dv};
  SmallVector<Value> dests = {tensor::EmptyOp::create(b, loc, rowShape, f32),
                              tensor::EmptyOp::create(b, loc, rowShape, f32),
                              tensor::EmptyOp::create(b, loc, accShape, f32)};
  // The grid: (batch, K/V head, query tile, split).
  SmallVector<OpFoldResult> ubs = {batch, hkv, numQTiles, numSplits};
  auto forall = scf::ForallOp::create(b, loc, ubs, dests, std::nullopt);
  markGridWork(b, loc, forall, work);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(forall.getTerminator());
    QueryTile tile = queryTileAt(b, loc, forall.getInductionVars());
    Value bIdx = tile.b, gIdx = tile.g, q0 = tile.q0, qs = tile.qs;
    Value sIdx = forall.getInductionVar(3);
    State st = computeQueryTile(b, loc, tile, sIdx, numSplits);
    b.setInsertionPointToStart(forall.getTerminator().getBody());
    auto one = b.getIndexAttr(1), zero = b.getIndexAttr(0);
    SmallVector<OpFoldResult> off = {bIdx, gIdx, sIdx, zero, q0};
    SmallVector<OpFoldResult> sz = {one, one, one, groups, qs};
    SmallVector<OpFoldResult> str(5, one);
    tensor::ParallelInsertSliceOp::create(
        b, loc, st.m, forall.getRegionIterArgs()[0], off, sz, str);
    tensor::ParallelInsertSliceOp::create(
        b, loc, st.l, forall.getRegionIterArgs()[1], off, sz, str);
    SmallVector<OpFoldResult> aoff = {bIdx, gIdx, sIdx, zero, q0, zero};
    SmallVector<OpFoldResult> asz = {one, one, one, groups, qs, dv};
    SmallVector<OpFoldResult> astr(6, one);
    tensor::ParallelInsertSliceOp::create(
        b, loc, st.acc, forall.getRegionIterArgs()[2], aoff, asz, astr);
  }
  return mergeSplits(b, loc, forall.getResult(0), forall.getResult(1),
                     forall.getResult(2));
}

SmallVector<Value> FusedLowering::mergeSplits(OpBuilder &b, Location loc,
                                              Value pm, Value pl, Value pacc) {
  // Merge. Loops (b, g, r, i) over splits s: M = max_s m_s.
  SmallVector<OpFoldResult> mergedRows = {batch, hkv, groups, nq};
  AffineMap part5 = map(b, 5, {0, 1, 4, 2, 3});
  AffineMap rows5 = map(b, 5, {0, 1, 2, 3});
  Value bigM = filled(b, loc, mergedRows, kNegInf);
  bigM =
      linalg::GenericOp::create(
          b, loc, bigM.getType(), pm, bigM, {part5, rows5}, iters(4, 1),
          [&](OpBuilder &nb, Location nl, ValueRange a) {
            linalg::YieldOp::create(
                nb, nl, Value(arith::MaximumFOp::create(nb, nl, a[0], a[1])));
          })
          .getResult(0);
  Value bigL = softmax ? filled(b, loc, mergedRows, 0.0) : Value();
  if (softmax)
    bigL = linalg::GenericOp::create(
               b, loc, bigL.getType(), ValueRange{pm, pl, bigM}, bigL,
               {part5, part5, rows5, rows5}, iters(4, 1),
               [&](OpBuilder &nb, Location nl, ValueRange a) {
                 linalg::YieldOp::create(
                     nb, nl, buildMergeRowSum(nb, nl, a[3], a[0], a[1], a[2]));
               })
               .getResult(0);
  // softmax: the shared merge (LogitBuilder.h) of the splits' outputs
  // acc_s / (l_s s_s); sigmoid: acc = sum_s acc_s.
  // Loops (b, g, r, i, e, s).
  SmallVector<OpFoldResult> mergedAcc = {batch, hkv, groups, nq, dv};
  Value acc = filled(b, loc, mergedAcc, 0.0);
  SmallVector<Value> accIns = {pm, pacc, bigM};
  SmallVector<AffineMap> accMaps = {map(b, 6, {0, 1, 5, 2, 3}),
                                    map(b, 6, {0, 1, 5, 2, 3, 4}),
                                    map(b, 6, {0, 1, 2, 3})};
  if (softmax) {
    accIns.append({pl, bigL});
    accMaps.append({map(b, 6, {0, 1, 5, 2, 3}), map(b, 6, {0, 1, 2, 3})});
  }
  accMaps.push_back(map(b, 6, {0, 1, 2, 3, 4}));
  acc =
      linalg::GenericOp::create(
          b, loc, acc.getType(), accIns, acc, accMaps, iters(5, 1),
          [&](OpBuilder &nb, Location nl, ValueRange a) {
            if (!softmax) {
              linalg::YieldOp::create(
                  nb, nl, Value(arith::AddFOp::create(nb, nl, a.back(), a[1])));
              return;
            }
            // acc_s / (l_s s_s): split s's own normalized output.
            Value ls = arith::MulFOp::create(nb, nl, a[3],
                                             buildRowSumScale(nb, nl, a[3]));
            Value os = buildNormalizedOutput(nb, nl, a[1], ls);
            linalg::YieldOp::create(nb, nl,
                                    buildMergeOutputStep(nb, nl, a.back(), a[0],
                                                         a[3], os, a[2], a[4]));
          })
          .getResult(0);
  // Final: out in the op's layout, lse.
  bool bhnd = layout == Layout::bhnd;
  SmallVector<OpFoldResult> out5Shape =
      bhnd ? SmallVector<OpFoldResult>{batch, hkv, groups, nq, dv}
           : SmallVector<OpFoldResult>{batch, nq, hkv, groups, dv};
  Value out5 = tensor::EmptyOp::create(b, loc, out5Shape, elt);
  SmallVector<Value> ins = {acc};
  SmallVector<AffineMap> maps = {map(b, 5, {0, 1, 2, 3, 4})};
  maps.push_back(bhnd ? map(b, 5, {0, 1, 2, 3, 4})
                      : map(b, 5, {0, 3, 1, 2, 4}));
  out5 = linalg::GenericOp::create(
             b, loc, out5.getType(), ins, out5, maps, iters(5, 0),
             [&](OpBuilder &nb, Location nl, ValueRange a) {
               Value o = a[0];
               if (elt != f32)
                 o = arith::TruncFOp::create(nb, nl, elt, o);
               linalg::YieldOp::create(nb, nl, o);
             })
             .getResult(0);
  SmallVector<ReassociationIndices> merge =
      bhnd ? SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}, {4}}
           : SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}, {4}};
  SmallVector<Value> results = {
      tensor::CollapseShapeOp::create(b, loc, out5, merge)};
  if (op.getLse()) {
    Value lse4 = tensor::EmptyOp::create(b, loc, mergedRows, f32);
    AffineMap id4 = map(b, 4, {0, 1, 2, 3});
    lse4 = linalg::GenericOp::create(
               b, loc, lse4.getType(), ValueRange{bigM, bigL}, lse4,
               {id4, id4, id4}, iters(4, 0),
               [&](OpBuilder &nb, Location nl, ValueRange a) {
                 linalg::YieldOp::create(nb, nl,
                                         buildLogSumExp(nb, nl, a[0], a[1]));
               })
               .getResult(0);
    SmallVector<ReassociationIndices> lm = {{0}, {1, 2}, {3}};
    results.push_back(tensor::CollapseShapeOp::create(b, loc, lse4, lm));
  }
  return castResults(b, loc, results);
}
