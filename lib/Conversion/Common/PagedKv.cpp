//===- PagedKv.cpp - reading paged K/V through a page table ---------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/PagedKv.h"
#include "attn/Conversion/RuntimeChecks.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::attn;

static Value dimOf(OpBuilder &b, Location loc, Value t, int64_t d) {
  return getValueOrCreateConstantIndexOp(b, loc,
                                         tensor::getMixedSize(b, loc, t, d));
}

static Value pageSize(OpBuilder &b, Location loc, AttentionOp op) {
  return dimOf(b, loc, op.getKey(), op.getPhysicalDim(2));
}

Value mlir::attn::buildKvSeqLen(OpBuilder &b, Location loc, AttentionOp op) {
  Value n = pageSize(b, loc, op);
  if (!op.isPaged())
    return n;
  Value pages = dimOf(b, loc, op.getPageTable(), 1);
  return arith::MulIOp::create(b, loc, pages, n);
}

/// kv_len[bIdx] clamped to [0, nk], as an index.
static Value clampedLen(OpBuilder &b, Location loc, AttentionOp op, Value bIdx,
                        Value nk) {
  Value e = tensor::ExtractOp::create(b, loc, op.getKvLen(), bIdx);
  Value len = arith::IndexCastOp::create(b, loc, b.getIndexType(), e);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  len = arith::MaxSIOp::create(b, loc, len, zero);
  return arith::MinSIOp::create(b, loc, len, nk);
}

void mlir::attn::emitPageTableChecks(OpBuilder &b, Location loc,
                                     AttentionOp op) {
  if (!op.isPaged())
    return;
  Value table = op.getPageTable();
  Value nk = buildKvSeqLen(b, loc, op);
  Value s = pageSize(b, loc, op);
  Value pool = dimOf(b, loc, op.getKey(), 0);
  Value batch = dimOf(b, loc, table, 0);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  scf::ForOp::create(
      b, loc, zero, batch, one, ValueRange{},
      [&](OpBuilder &ob, Location ol, Value bIdx, ValueRange) {
        Value len = clampedLen(ob, ol, op, bIdx, nk);
        Value pages = arith::CeilDivUIOp::create(ob, ol, len, s);
        scf::ForOp::create(
            ob, ol, zero, pages, one, ValueRange{},
            [&](OpBuilder &ib, Location il, Value p, ValueRange) {
              Value e =
                  tensor::ExtractOp::create(ib, il, table, ValueRange{bIdx, p});
              Value idx =
                  arith::IndexCastOp::create(ib, il, ib.getIndexType(), e);
              Value lo = arith::CmpIOp::create(
                  ib, il, arith::CmpIPredicate::sge, idx, zero);
              Value hi = arith::CmpIOp::create(
                  ib, il, arith::CmpIPredicate::slt, idx, pool);
              emitRuntimeCheck(
                  ib, il, op, arith::AndIOp::create(ib, il, lo, hi),
                  RuntimeCheck::PageTableEntry, {bIdx, p, idx, pool});
              scf::YieldOp::create(ib, il);
            });
        scf::YieldOp::create(ob, ol);
      });
}

Value mlir::attn::buildPageIndex(OpBuilder &b, Location loc, AttentionOp op,
                                 Value bIdx, Value j) {
  Value page = arith::DivUIOp::create(b, loc, j, pageSize(b, loc, op));
  Value e = tensor::ExtractOp::create(b, loc, op.getPageTable(),
                                      ValueRange{bIdx, page});
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), e);
}

Value mlir::attn::gatherPagedKv(OpBuilder &b, Location loc, AttentionOp op,
                                Value pool) {
  auto poolType = cast<RankedTensorType>(pool.getType());
  Value nk = buildKvSeqLen(b, loc, op);
  Value batch = dimOf(b, loc, op.getPageTable(), 0);
  Value s = pageSize(b, loc, op);
  // Physical sizes of the dense copy: the pool's, with B for P and Nk for S.
  int64_t bDim = op.getPhysicalDim(0), nDim = op.getPhysicalDim(2);
  int64_t hDim = op.getPhysicalDim(1);
  SmallVector<OpFoldResult> sizes =
      tensor::getMixedSizes(b, loc, pool); // [P, ., ., D] physical
  sizes[bDim] = batch;
  sizes[nDim] = nk;
  Value empty =
      tensor::EmptyOp::create(b, loc, sizes, poolType.getElementType());
  MLIRContext *ctx = b.getContext();
  auto id = AffineMap::getMultiDimIdentityMap(4, ctx);
  SmallVector<utils::IteratorType> iters(4, utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, empty.getType(), ValueRange{}, empty, {id}, iters,
             [&](OpBuilder &nb, Location nl, ValueRange) {
               Value bi = linalg::IndexOp::create(nb, nl, bDim);
               Value hi = linalg::IndexOp::create(nb, nl, hDim);
               Value j = linalg::IndexOp::create(nb, nl, nDim);
               Value d = linalg::IndexOp::create(nb, nl, 3);
               Value len = clampedLen(nb, nl, op, bi, nk);
               Value valid = arith::CmpIOp::create(
                   nb, nl, arith::CmpIPredicate::ult, j, len);
               Type elt = poolType.getElementType();
               auto ifOp = scf::IfOp::create(
                   nb, nl, valid,
                   [&](OpBuilder &tb, Location tl) {
                     Value page = buildPageIndex(tb, tl, op, bi, j);
                     Value row = arith::RemUIOp::create(tb, tl, j, s);
                     SmallVector<Value> idx(4);
                     idx[bDim] = page;
                     idx[hDim] = hi;
                     idx[nDim] = row;
                     idx[3] = d;
                     scf::YieldOp::create(
                         tb, tl,
                         Value(tensor::ExtractOp::create(tb, tl, pool, idx)));
                   },
                   [&](OpBuilder &eb, Location el) {
                     scf::YieldOp::create(
                         eb, el,
                         Value(arith::ConstantOp::create(
                             eb, el, eb.getFloatAttr(elt, 0.0))));
                   });
               linalg::YieldOp::create(nb, nl, ifOp.getResult(0));
             })
      .getResult(0);
}
