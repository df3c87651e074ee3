//===- RaggedAttention.cpp - ragged batches as a loop over sequences ------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/RaggedAttention.h"
#include "attn/Conversion/LogitBuilder.h"
#include "attn/Conversion/RuntimeChecks.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>
#include <tuple>

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

/// Dimension `d` of `t` ([lo, lo + n) when `slice`, else whole) as a slice.
static Value sliceDims(OpBuilder &b, Location loc, Value t,
                       ArrayRef<std::tuple<int64_t, Value, Value>> dims) {
  auto type = cast<RankedTensorType>(t.getType());
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> off(rank, b.getIndexAttr(0));
  SmallVector<OpFoldResult> sz = tensor::getMixedSizes(b, loc, t);
  SmallVector<OpFoldResult> st(rank, b.getIndexAttr(1));
  SmallVector<int64_t> shape(type.getShape());
  for (auto [d, lo, n] : dims) {
    off[d] = lo;
    sz[d] = n;
    shape[d] = ShapedType::kDynamic;
  }
  auto sliced = RankedTensorType::get(shape, type.getElementType());
  return tensor::ExtractSliceOp::create(b, loc, sliced, t, off, sz, st);
}

/// The part of a mask or bias (broadcast to [1, Hq, Tq, Nk]) one sequence
/// reads: rows [q0, q0 + nq), and keys [k0, k0 + nk) unless `allKeys`;
/// dimensions of static size 1 stay whole (broadcast).
static Value sliceMaskOrBias(OpBuilder &b, Location loc, Value t, Value q0,
                             Value nq, Value k0, Value nk, bool allKeys) {
  auto type = cast<RankedTensorType>(t.getType());
  int64_t rank = type.getRank();
  SmallVector<std::tuple<int64_t, Value, Value>> dims;
  if (rank >= 2 && type.getDimSize(rank - 2) != 1)
    dims.push_back({rank - 2, q0, nq});
  if (rank >= 1 && type.getDimSize(rank - 1) != 1 && !allKeys)
    dims.push_back({rank - 1, k0, nk});
  if (dims.empty())
    return t;
  return sliceDims(b, loc, t, dims);
}

/// Copies `op`'s score_mod and mask_mod regions into `inner` (a sequence's
/// dense op). The regions see the sequence as their batch index: when they
/// read it, `seqInput` (a tensor<1xi64> holding it, the last of `inner`'s
/// mod_inputs) replaces their first argument.
static void cloneRegions(PatternRewriter &rewriter, AttentionOp op,
                         AttentionOp inner, Value seqInput) {
  for (auto [from, to] : llvm::zip(op->getRegions(), inner->getRegions())) {
    if (from.empty())
      continue;
    rewriter.cloneRegionBefore(from, to, to.end());
    if (!seqInput)
      continue;
    Block &block = to.front();
    Location loc = op.getLoc();
    BlockArgument extra = block.addArgument(seqInput.getType(), loc);
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(&block);
    Value c0 = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value e = tensor::ExtractOp::create(rewriter, loc, extra, ValueRange{c0});
    Value seq =
        arith::IndexCastOp::create(rewriter, loc, rewriter.getIndexType(), e);
    rewriter.replaceAllUsesWith(block.getArgument(0), seq);
  }
}

/// Whether a region of `op` reads its batch index.
static bool regionsReadBatch(AttentionOp op) {
  for (Block *block : {op.getScoreModBlock(), op.getMaskModBlock()})
    if (block && !block->getArgument(0).use_empty())
      return true;
  return false;
}

void mlir::attn::emitRaggedChecks(OpBuilder &b, Location loc, AttentionOp op) {
  int64_t nDim = op.getPhysicalDim(2);
  Value cuQ = op.getCuSeqlensQ(), cuK = op.getCuSeqlensK();
  Value tq = tensor::DimOp::create(b, loc, op.getQuery(), nDim);
  Value nQ = tensor::DimOp::create(b, loc, cuQ, 0);
  getErrorContext(b, op);
  auto cmp = [&](arith::CmpIPredicate p, Value x, Value y) -> Value {
    return arith::CmpIOp::create(b, loc, p, x, y);
  };
  if (cuK) {
    Value nK = tensor::DimOp::create(b, loc, cuK, 0);
    emitRuntimeCheck(b, loc, op, cmp(arith::CmpIPredicate::eq, nQ, nK),
                     RuntimeCheck::RaggedLengths, {nQ, nK});
  }
  emitRuntimeCheck(b, loc, op,
                   cmp(arith::CmpIPredicate::sge, nQ,
                       arith::ConstantIndexOp::create(b, loc, 1)),
                   RuntimeCheck::RaggedNoSequences, {nQ});
  checkOffsets(b, loc, op, cuQ, tq, RuntimeCheck::RaggedOffsetsQ);
  if (cuK)
    checkOffsets(b, loc, op, cuK,
                 tensor::DimOp::create(b, loc, op.getKey(), nDim),
                 RuntimeCheck::RaggedOffsetsK);
  // The sizes the types leave open: k against v, masks against the packed
  // rows, kv_len and the page table against the sequences.
  emitRuntimeShapeChecks(b, loc, op);
}

/// Entries [cu[s], cu[s + 1]) of offsets `cu`: the start and the length.
static std::pair<Value, Value> offsetSpan(OpBuilder &b, Location loc, Value cu,
                                          Value s) {
  Value next = arith::AddIOp::create(b, loc, s,
                                     arith::ConstantIndexOp::create(b, loc, 1));
  Value start = offsetAt(b, loc, cu, s);
  return {start,
          arith::SubIOp::create(b, loc, offsetAt(b, loc, cu, next), start)};
}

std::pair<Value, Value> mlir::attn::sequenceRows(OpBuilder &b, Location loc,
                                                 AttentionOp op, Value s) {
  return offsetSpan(b, loc, op.getCuSeqlensQ(), s);
}

std::pair<Value, Value> mlir::attn::sequenceKeys(OpBuilder &b, Location loc,
                                                 AttentionOp op, Value s) {
  return offsetSpan(b, loc, op.getCuSeqlensK(), s);
}

AttentionOp mlir::attn::buildSequenceOp(PatternRewriter &rewriter, Location ll,
                                        AttentionOp op, Value s, Value q0,
                                        Value nq) {
  OpBuilder &lb = rewriter;
  int64_t nDim = op.getPhysicalDim(2);
  bool paged = op.isPaged();
  Value q = op.getQuery(), k = op.getKey(), v = op.getValue();
  Value zero = arith::ConstantIndexOp::create(lb, ll, 0);
  Value one = arith::ConstantIndexOp::create(lb, ll, 1);
  // Rows [r0, r0 + n) of `t` along N.
  auto rows = [&](Value t, Value r0, Value n) -> Value {
    return sliceDims(lb, ll, t, {{nDim, r0, n}});
  };
  // Entry s of a per-sequence tensor (kv_len, page_table rows).
  auto entry = [&](Value t) -> Value {
    return sliceDims(lb, ll, t, {{0, s, one}});
  };
  Value qs = rows(q, q0, nq), ks = k, vs = v, k0 = zero, nk;
  if (!paged) {
    std::tie(k0, nk) = sequenceKeys(lb, ll, op, s);
    ks = rows(k, k0, nk);
    vs = rows(v, k0, nk);
  }
  // Quantized K/V: per-token scales follow their keys' rows (the scale
  // tensor is K's shape without D); per-page (here per-batch-entry) scales
  // and a pool's scales stay whole.
  auto scaleRows = [&](Value t) -> Value {
    if (!t || paged || cast<RankedTensorType>(t.getType()).getRank() != 3)
      return t;
    return rows(t, k0, nk);
  };
  Value kScale = scaleRows(op.getKScale());
  Value vScale = scaleRows(op.getVScale());
  Value pageTable = paged ? entry(op.getPageTable()) : Value();
  Value kvLen = op.getKvLen() ? entry(op.getKvLen()) : Value();
  Value mask, bias;
  if (op.getMask())
    mask = sliceMaskOrBias(lb, ll, op.getMask(), q0, nq, k0, nk, paged);
  if (op.getBias())
    bias = sliceMaskOrBias(lb, ll, op.getBias(), q0, nq, k0, nk, paged);
  SmallVector<Value> modInputs(op.getModInputs());
  Value seqInput;
  if (regionsReadBatch(op)) {
    Value s64 = arith::IndexCastOp::create(lb, ll, lb.getI64Type(), s);
    seqInput = tensor::FromElementsOp::create(
        lb, ll, RankedTensorType::get({1}, lb.getI64Type()), ValueRange{s64});
    modInputs.push_back(seqInput);
  }
  Type outType = withDynamicN(op.getOut().getType(), nDim);
  Type lseType;
  if (Value lse = op.getLse())
    lseType = withDynamicN(lse.getType(), 2);
  auto inner = AttentionOp::create(
      lb, ll, outType, lseType, qs, ks, vs, pageTable, Value(), Value(), kScale,
      vScale, kvLen, /*kv_start=*/Value(),
      /*key_mask=*/Value(), mask, bias, op.getAlibiSlopes(), op.getSink(),
      op.getRuntimeScale(), modInputs, op.getLayoutAttr(), op.getVFromKAttr(),
      op.getCausalAttr(), op.getAlignAttr(), op.getWindowLeftAttr(),
      op.getWindowRightAttr(), op.getScaleAttr(), op.getSoftcapAttr(),
      op.getNormalizationAttr());
  cloneRegions(rewriter, op, inner, seqInput);
  return inner;
}

void mlir::attn::rewriteRaggedAsLoop(PatternRewriter &rewriter,
                                     AttentionOp op) {
  Location loc = op.getLoc();
  OpBuilder &b = rewriter;
  int64_t nDim = op.getPhysicalDim(2);
  Value q = op.getQuery(), v = op.getValue();
  Value cuQ = op.getCuSeqlensQ();
  Value tq = tensor::DimOp::create(b, loc, q, nDim);
  Value nQ = tensor::DimOp::create(b, loc, cuQ, 0);
  emitRaggedChecks(b, loc, op);

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
              auto [q0, nq] = sequenceRows(lb, ll, op, s);
              // A sequence without queries reads nothing (its page table
              // row and kv_len entry included).
              Value any = arith::CmpIOp::create(
                  lb, ll, arith::CmpIPredicate::sgt, nq, zero);
              auto visit = scf::IfOp::create(lb, ll, acc.getTypes(), any,
                                             /*withElseRegion=*/true);
              OpBuilder::InsertionGuard g(lb);
              lb.setInsertionPointToStart(&visit.getElseRegion().front());
              scf::YieldOp::create(lb, ll, acc);
              lb.setInsertionPointToStart(&visit.getThenRegion().front());
              AttentionOp inner = buildSequenceOp(rewriter, ll, op, s, q0, nq);
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
              lb.setInsertionPointAfter(visit);
              scf::YieldOp::create(lb, ll, visit.getResults());
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
