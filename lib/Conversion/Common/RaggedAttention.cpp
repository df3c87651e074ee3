//===- RaggedAttention.cpp - ragged batches as a loop over sequences ------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/RaggedAttention.h"
#include "attn/Conversion/RuntimeChecks.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

using namespace mlir;
using namespace mlir::attn;

/// `cu[i]` as an index.
static Value offsetAt(OpBuilder &b, Location loc, Value cu, Value i) {
  Value e = tensor::ExtractOp::create(b, loc, cu, i);
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), e);
}

/// Checks that the offsets are non-decreasing and within [0, tokens]: each
/// cu[i] against the one before it (0 for the first) and the packed tokens.
static void checkOffsets(OpBuilder &b, Location loc, AttentionOp op, Value cu,
                         Value tokens, RuntimeCheck check) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value n = tensor::DimOp::create(b, loc, cu, 0);
  scf::ForOp::create(
      b, loc, zero, n, one, ValueRange{zero},
      [&](OpBuilder &lb, Location ll, Value i, ValueRange prev) {
        Value at = offsetAt(lb, ll, cu, i);
        Value ok = arith::AndIOp::create(
            lb, ll,
            arith::CmpIOp::create(lb, ll, arith::CmpIPredicate::sle, prev[0],
                                  at),
            arith::CmpIOp::create(lb, ll, arith::CmpIPredicate::sle, at,
                                  tokens));
        emitRuntimeCheck(lb, ll, op, ok, check, {i, at, prev[0], tokens});
        // The next offset is compared with the largest valid bound so far.
        Value next = arith::MaxSIOp::create(lb, ll, prev[0], at);
        scf::YieldOp::create(lb, ll, next);
      });
}

/// `t` with logical dimension N (physical `nDim`) dynamic.
static RankedTensorType withDynamicN(Type t, int64_t nDim) {
  auto type = cast<RankedTensorType>(t);
  SmallVector<int64_t> shape(type.getShape());
  shape[nDim] = ShapedType::kDynamic;
  return RankedTensorType::get(shape, type.getElementType());
}

static Value filledLike(OpBuilder &b, Location loc, Value like,
                        ArrayRef<OpFoldResult> sizes, double v) {
  Type elt = cast<RankedTensorType>(like.getType()).getElementType();
  Value e = tensor::EmptyOp::create(b, loc, sizes, elt);
  Value c = arith::ConstantOp::create(b, loc, b.getFloatAttr(elt, v));
  return linalg::FillOp::create(b, loc, c, e).getResult(0);
}

void mlir::attn::rewriteRaggedAsLoop(PatternRewriter &rewriter,
                                     AttentionOp op) {
  Location loc = op.getLoc();
  OpBuilder &b = rewriter;
  int64_t nDim = op.getPhysicalDim(2);
  Value q = op.getQuery(), k = op.getKey(), v = op.getValue();
  Value cuQ = op.getCuSeqlensQ(), cuK = op.getCuSeqlensK();
  Value tq = tensor::DimOp::create(b, loc, q, nDim);
  Value tk = tensor::DimOp::create(b, loc, k, nDim);
  Value nQ = tensor::DimOp::create(b, loc, cuQ, 0);
  Value nK = tensor::DimOp::create(b, loc, cuK, 0);
  getErrorContext(b, op);
  auto cmp = [&](arith::CmpIPredicate p, Value x, Value y) -> Value {
    return arith::CmpIOp::create(b, loc, p, x, y);
  };
  emitRuntimeCheck(b, loc, op, cmp(arith::CmpIPredicate::eq, nQ, nK),
                   RuntimeCheck::RaggedLengths, {nQ, nK});
  emitRuntimeCheck(b, loc, op,
                   cmp(arith::CmpIPredicate::sge, nQ,
                       arith::ConstantIndexOp::create(b, loc, 1)),
                   RuntimeCheck::RaggedNoSequences, {nQ});
  Value kRows = tensor::DimOp::create(b, loc, v, nDim);
  emitRuntimeCheck(b, loc, op, cmp(arith::CmpIPredicate::eq, tk, kRows),
                   RuntimeCheck::LengthKV, {tk, kRows});
  checkOffsets(b, loc, op, cuQ, tq, RuntimeCheck::RaggedOffsetsQ);
  checkOffsets(b, loc, op, cuK, tk, RuntimeCheck::RaggedOffsetsK);

  // After a failed check the sequences are not visited (results are zeros).
  SmallVector<Value> replacements = buildGuardedOrZeros(
      b, loc, op, [&](OpBuilder &, Location) -> SmallVector<Value> {
        // Results start as out = 0, lse = -inf: rows outside every sequence.
        // out: q's physical sizes with Dv for Dqk.
        SmallVector<OpFoldResult> outSizes = tensor::getMixedSizes(b, loc, q);
        outSizes[3] = tensor::getMixedSize(b, loc, v, 3);
        SmallVector<Value> inits = {
            filledLike(b, loc, op.getOut(), outSizes, 0.0)};
        if (Value lse = op.getLse()) {
          SmallVector<OpFoldResult> lseSizes = {
              b.getIndexAttr(1),
              tensor::getMixedSize(b, loc, q, op.getPhysicalDim(1)), tq};
          inits.push_back(filledLike(b, loc, lse, lseSizes,
                                     -std::numeric_limits<double>::infinity()));
        }
        Value zero = arith::ConstantIndexOp::create(b, loc, 0);
        Value one = arith::ConstantIndexOp::create(b, loc, 1);
        Value seqs = arith::SubIOp::create(b, loc, nQ, one);
        auto loop = scf::ForOp::create(
            b, loc, zero, seqs, one, inits,
            [&](OpBuilder &lb, Location ll, Value s, ValueRange acc) {
              Value next = arith::AddIOp::create(lb, ll, s, one);
              Value q0 = offsetAt(lb, ll, cuQ, s);
              Value nq = arith::SubIOp::create(lb, ll,
                                               offsetAt(lb, ll, cuQ, next), q0);
              Value k0 = offsetAt(lb, ll, cuK, s);
              Value nk = arith::SubIOp::create(lb, ll,
                                               offsetAt(lb, ll, cuK, next), k0);
              // Rows [r0, r0 + n) of `t` along N.
              auto rows = [&](Value t, Value r0, Value n) -> Value {
                SmallVector<OpFoldResult> off(4, lb.getIndexAttr(0));
                SmallVector<OpFoldResult> sz = tensor::getMixedSizes(lb, ll, t);
                off[nDim] = r0;
                sz[nDim] = n;
                SmallVector<OpFoldResult> st(4, lb.getIndexAttr(1));
                auto type = withDynamicN(t.getType(), nDim);
                return tensor::ExtractSliceOp::create(lb, ll, type, t, off, sz,
                                                      st);
              };
              Value qs = rows(q, q0, nq), ks = rows(k, k0, nk),
                    vs = rows(v, k0, nk);
              Type outType = withDynamicN(op.getOut().getType(), nDim);
              Type lseType;
              if (Value lse = op.getLse())
                lseType = withDynamicN(lse.getType(), 2);
              auto inner = AttentionOp::create(
                  lb, ll, outType, lseType, qs, ks, vs, Value(), Value(),
                  Value(), Value(), Value(), Value(), op.getAlibiSlopes(),
                  op.getSink(), ValueRange{}, op.getLayoutAttr(),
                  op.getCausalAttr(), op.getAlignAttr(), op.getWindowLeftAttr(),
                  op.getWindowRightAttr(), op.getScaleAttr(),
                  op.getSoftcapAttr(), op.getNormalizationAttr());
              SmallVector<Value> results;
              {
                SmallVector<OpFoldResult> off(4, lb.getIndexAttr(0));
                SmallVector<OpFoldResult> sz =
                    tensor::getMixedSizes(lb, ll, inner.getOut());
                off[nDim] = q0;
                SmallVector<OpFoldResult> st(4, lb.getIndexAttr(1));
                results.push_back(tensor::InsertSliceOp::create(
                    lb, ll, inner.getOut(), acc[0], off, sz, st));
              }
              if (Value lse = inner.getLse()) {
                SmallVector<OpFoldResult> off = {lb.getIndexAttr(0),
                                                 lb.getIndexAttr(0), q0};
                SmallVector<OpFoldResult> sz =
                    tensor::getMixedSizes(lb, ll, lse);
                SmallVector<OpFoldResult> st(3, lb.getIndexAttr(1));
                results.push_back(tensor::InsertSliceOp::create(
                    lb, ll, lse, acc[1], off, sz, st));
              }
              scf::YieldOp::create(lb, ll, results);
            });
        SmallVector<Value> replacements;
        for (auto [r, want] : llvm::zip(loop.getResults(), op->getResults())) {
          Value x = r;
          if (x.getType() != want.getType())
            x = tensor::CastOp::create(b, loc, want.getType(), x);
          replacements.push_back(x);
        }
        return replacements;
      });
  rewriter.replaceOp(op, replacements);
}
