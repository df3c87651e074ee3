//===- LogitBuilder.cpp - shared logit and mask arithmetic ----------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/LogitBuilder.h"
#include "attn/Conversion/PagedKv.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

#include <limits>

using namespace mlir;
using namespace mlir::attn;

static Value f32Const(OpBuilder &b, Location loc, double v) {
  return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
}

LogitContext mlir::attn::buildLogitContext(OpBuilder &b, Location loc,
                                           AttentionOp op) {
  LogitContext ctx;
  ctx.op = op;
  Value k = op.getKey();
  auto toValue = [&](OpFoldResult r) -> Value {
    if (auto v = dyn_cast<Value>(r))
      return v;
    return arith::ConstantIndexOp::create(
        b, loc, cast<IntegerAttr>(cast<Attribute>(r)).getInt());
  };
  (void)k;
  ctx.nk = buildKvSeqLen(b, loc, op);
  ctx.nq = toValue(
      tensor::getMixedSize(b, loc, op.getQuery(), op.getPhysicalDim(2)));
  if (std::optional<double> scale = op.getEffectiveScale()) {
    ctx.scale = f32Const(b, loc, *scale);
  } else {
    // Dqk is dynamic: scale = 1 / sqrt(Dqk) at run time.
    Value d = toValue(
        tensor::getMixedSize(b, loc, op.getQuery(), op.getPhysicalDim(3)));
    Value di = arith::IndexCastOp::create(b, loc, b.getI64Type(), d);
    Value df = arith::SIToFPOp::create(b, loc, b.getF32Type(), di);
    Value root = math::SqrtOp::create(b, loc, df);
    ctx.scale = arith::DivFOp::create(b, loc, f32Const(b, loc, 1.0), root);
  }
  if (auto cap = op.getSoftcapAttr())
    ctx.softcap = f32Const(b, loc, cap.getValueAsDouble());
  return ctx;
}

void mlir::attn::emitRuntimeShapeChecks(OpBuilder &b, Location loc,
                                        AttentionOp op) {
  auto typeOf = [](Value v) { return cast<RankedTensorType>(v.getType()); };
  auto dim = [&](Value v, int64_t physical) -> Value {
    return tensor::DimOp::create(b, loc, v, physical);
  };
  // Asserts a == b when either side is dynamic.
  auto checkEq = [&](Value x, int64_t dx, Value y, int64_t dy,
                     const Twine &msg) {
    if (!typeOf(x).isDynamicDim(dx) && !typeOf(y).isDynamicDim(dy))
      return;
    Value eq = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                     dim(x, dx), dim(y, dy));
    cf::AssertOp::create(b, loc, eq, ("attn: " + msg).str());
  };
  Value q = op.getQuery(), k = op.getKey(), v = op.getValue();
  auto qd = [&](int64_t l) { return op.getPhysicalDim(l); };
  bool paged = op.isPaged();
  if (paged) {
    checkEq(k, qd(0), v, qd(0), "k and v page pools differ in pages");
    checkEq(op.getPageTable(), 0, q, qd(0),
            "page_table does not have one row per batch entry");
  } else {
    checkEq(q, qd(0), k, qd(0), "batch sizes of q and k differ");
    checkEq(q, qd(0), v, qd(0), "batch sizes of q and v differ");
  }
  checkEq(k, qd(1), v, qd(1), "k and v have different numbers of heads");
  checkEq(q, qd(3), k, qd(3), "q and k have different head dimensions");
  checkEq(k, qd(2), v, qd(2), "k and v have different lengths");
  if (typeOf(q).isDynamicDim(qd(1)) || typeOf(k).isDynamicDim(qd(1))) {
    Value hq = dim(q, qd(1)), hkv = dim(k, qd(1));
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value pos =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, hkv, zero);
    cf::AssertOp::create(b, loc, pos, "attn: k and v have no heads");
    // Divide by max(hkv, 1) so the check itself cannot trap.
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    Value safe = arith::MaxSIOp::create(b, loc, hkv, one);
    Value rem = arith::RemUIOp::create(b, loc, hq, safe);
    Value div =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rem, zero);
    cf::AssertOp::create(b, loc, div,
                         "attn: query heads are not a multiple of K/V heads");
  }
  // Logical [B, Hq, Nq, Nk] sizes that masks and bias broadcast to.
  struct Source {
    Value tensor;
    int64_t dim;
  };
  Source target[4] = {{q, qd(0)}, {q, qd(1)}, {q, qd(2)}, {k, qd(2)}};
  for (Value t : {op.getMask(), op.getBias()}) {
    if (!t)
      continue;
    auto type = typeOf(t);
    int64_t offset = 4 - type.getRank();
    for (int64_t d = 0; d < type.getRank(); ++d) {
      if (type.getDimSize(d) == 1)
        continue;
      const Source &s = target[offset + d];
      if (paged && offset + d == 3) {
        // Nk = max_pages * S: compared as a value.
        if (!type.isDynamicDim(d) && op.getKvSeqLen() != ShapedType::kDynamic)
          continue;
        Value eq = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                         dim(t, d), buildKvSeqLen(b, loc, op));
        cf::AssertOp::create(
            b, loc, eq,
            "attn: a mask or bias dimension does not match [B, Hq, Nq, Nk] "
            "(a dynamic dimension is read at full size)");
        continue;
      }
      checkEq(t, d, s.tensor, s.dim,
              "a mask or bias dimension does not match [B, Hq, Nq, Nk] "
              "(a dynamic dimension is read at full size)");
    }
  }
  if (Value kvLen = op.getKvLen())
    checkEq(kvLen, 0, q, qd(0), "kv_len does not have one entry per batch");
  // A static result size must match the dynamic input size it comes from.
  auto checkResult = [&](int64_t resultDim, Value src, int64_t srcDim,
                         const Twine &what) {
    auto rt = typeOf(op.getOut());
    if (rt.isDynamicDim(resultDim) || !typeOf(src).isDynamicDim(srcDim))
      return;
    Value c = arith::ConstantIndexOp::create(b, loc, rt.getDimSize(resultDim));
    Value eq = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                     dim(src, srcDim), c);
    cf::AssertOp::create(
        b, loc, eq,
        ("attn: the result type's " + what + " does not match the inputs")
            .str());
  };
  checkResult(qd(0), q, qd(0), "B");
  checkResult(qd(1), q, qd(1), "Hq");
  checkResult(qd(2), q, qd(2), "Nq");
  checkResult(qd(3), v, qd(3), "Dv");
  if (Value lse = op.getLse()) {
    auto lt = typeOf(lse);
    Source lseSrc[3] = {{q, qd(0)}, {q, qd(1)}, {q, qd(2)}};
    for (int64_t d = 0; d < 3; ++d) {
      if (lt.isDynamicDim(d) ||
          !typeOf(lseSrc[d].tensor).isDynamicDim(lseSrc[d].dim))
        continue;
      Value c = arith::ConstantIndexOp::create(b, loc, lt.getDimSize(d));
      Value eq = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                       dim(lseSrc[d].tensor, lseSrc[d].dim), c);
      cf::AssertOp::create(b, loc, eq,
                           "attn: the lse type does not match the inputs");
    }
  }
  if (Value slopes = op.getAlibiSlopes())
    checkEq(slopes, 0, q, qd(1),
            "alibi slopes do not have one entry per query head");
  // The per-tile classification of a mask_mod bounds its arithmetic with
  // indices below kIndexBound (2^40); static sizes are checked by the
  // verifier.
  if (op.getMaskModBlock()) {
    for (auto [t, d] : {std::pair<Value, int64_t>{q, qd(0)},
                        {q, qd(1)},
                        {q, qd(2)},
                        {k, qd(2)}}) {
      if (!typeOf(t).isDynamicDim(d))
        continue;
      Value small = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::ult, dim(t, d),
          arith::ConstantIndexOp::create(b, loc, int64_t(1) << 40));
      cf::AssertOp::create(b, loc, small,
                           "attn: mask_mod needs B, Hq, Nq and Nk below 2^40");
    }
    if (paged) {
      Value small = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::ult, buildKvSeqLen(b, loc, op),
          arith::ConstantIndexOp::create(b, loc, int64_t(1) << 40));
      cf::AssertOp::create(b, loc, small,
                           "attn: mask_mod needs B, Hq, Nq and Nk below 2^40");
    }
  }
  emitPageTableChecks(b, loc, op);
}

Value mlir::attn::buildClampedKvLen(OpBuilder &b, Location loc,
                                    const LogitContext &ctx, Value element) {
  Value len = arith::IndexCastOp::create(b, loc, b.getIndexType(), element);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  len = arith::MaxSIOp::create(b, loc, len, zero);
  return arith::MinSIOp::create(b, loc, len, ctx.nk);
}

Value mlir::attn::buildQueryPosition(OpBuilder &b, Location loc,
                                     const LogitContext &ctx, Value i,
                                     Value kvLen) {
  if (!AttentionOp(ctx.op).isBottomRightAligned())
    return i;
  // p(i) = i + kv_len - Nq: the queries are the newest kv_len positions.
  Value shifted = arith::AddIOp::create(b, loc, i, kvLen);
  return arith::SubIOp::create(b, loc, shifted, ctx.nq);
}

Value mlir::attn::buildStructuralAllowed(OpBuilder &b, Location loc,
                                         const LogitContext &ctx, Value i,
                                         Value j, Value kvLen) {
  AttentionOp op = ctx.op;
  Value allowed =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, j, kvLen);
  auto andWith = [&](Value cond) {
    allowed = arith::AndIOp::create(b, loc, allowed, cond);
  };
  bool needsPosition = op.getCausal() || op.getEffectiveWindowLeft() ||
                       op.getEffectiveWindowRight();
  if (!needsPosition)
    return allowed;
  Value p = buildQueryPosition(b, loc, ctx, i, kvLen);
  if (op.getCausal())
    andWith(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, j, p));
  if (auto left = op.getEffectiveWindowLeft()) {
    Value dist = arith::SubIOp::create(b, loc, p, j);
    Value bound = arith::ConstantIndexOp::create(b, loc, *left);
    andWith(
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, dist, bound));
  }
  if (auto right = op.getEffectiveWindowRight()) {
    Value dist = arith::SubIOp::create(b, loc, j, p);
    Value bound = arith::ConstantIndexOp::create(b, loc, *right);
    andWith(
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, dist, bound));
  }
  return allowed;
}

/// Steps 1-3 of the contract: scale, soft cap, additive terms.
static Value buildModifiedScore(OpBuilder &b, Location loc,
                                const LogitContext &ctx,
                                const LogitOperands &in) {
  Type f32 = b.getF32Type();
  // 1. scale * dot.
  Value s = arith::MulFOp::create(b, loc, in.raw, ctx.scale);
  // 2. soft cap: cap * tanh(s / cap).
  if (ctx.softcap) {
    Value t = arith::DivFOp::create(b, loc, s, ctx.softcap);
    t = math::TanhOp::create(b, loc, t);
    s = arith::MulFOp::create(b, loc, t, ctx.softcap);
  }
  // 3. additive terms: bias, then ALiBi's -slope * |j - p(i)|.
  if (in.bias) {
    Value bias = in.bias;
    if (bias.getType() != f32)
      bias = arith::ExtFOp::create(b, loc, f32, bias);
    s = arith::AddFOp::create(b, loc, s, bias);
  }
  if (in.slope) {
    Value p = buildQueryPosition(b, loc, ctx, in.i, in.kvLen);
    Value diff = arith::SubIOp::create(b, loc, in.j, p);
    Value neg = arith::SubIOp::create(
        b, loc, arith::ConstantIndexOp::create(b, loc, 0), diff);
    Value dist = arith::MaxSIOp::create(b, loc, diff, neg);
    Value di = arith::IndexCastOp::create(b, loc, b.getI64Type(), dist);
    Value df = arith::SIToFPOp::create(b, loc, f32, di);
    Value penalty = arith::MulFOp::create(b, loc, in.slope, df);
    s = arith::SubFOp::create(b, loc, s, penalty);
  }
  // 3b. the user's score_mod, after the additive terms.
  if (Block *mod = AttentionOp(ctx.op).getScoreModBlock())
    s = inlineModRegion(b, loc, ctx.op, *mod, "score_mod",
                        {in.b, in.h, in.i, in.j, s});
  return s;
}

Value mlir::attn::inlineModRegion(OpBuilder &b, Location loc, Operation *op,
                                  Block &region, StringRef name,
                                  ValueRange args) {
  IRMapping map;
  unsigned n = args.size();
  for (auto [arg, v] : llvm::zip(region.getArguments().take_front(n), args))
    map.map(arg, v);
  ValueRange inputs = cast<AttentionOp>(op).getModInputs();
  for (auto [arg, v] : llvm::zip(region.getArguments().drop_front(n), inputs))
    map.map(arg, v);
  for (Operation &inner : region.without_terminator()) {
    if (auto extract = dyn_cast<tensor::ExtractOp>(inner)) {
      // An index outside the tensor stops the program instead of reading
      // out of bounds.
      Value t = map.lookup(extract.getTensor());
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      for (auto [d, idx] : llvm::enumerate(extract.getIndices())) {
        Value x = map.lookup(idx);
        Value dim = tensor::DimOp::create(b, loc, t, d);
        Value ok = arith::AndIOp::create(
            b, loc,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, zero, x),
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x, dim));
        cf::AssertOp::create(
            b, loc, ok,
            ("attn: " + name + " reads a mod_inputs tensor out of bounds")
                .str());
      }
    }
    b.clone(inner, map);
  }
  return map.lookup(region.getTerminator()->getOperand(0));
}

static Value maskWithNegInf(OpBuilder &b, Location loc, Value allowed,
                            Value s) {
  Value ninf = f32Const(b, loc, -std::numeric_limits<double>::infinity());
  return arith::SelectOp::create(b, loc, allowed, s, ninf);
}

Value mlir::attn::buildLogit(OpBuilder &b, Location loc,
                             const LogitContext &ctx, const LogitOperands &in) {
  Value s = buildModifiedScore(b, loc, ctx, in);
  // 4. masking with -inf, before normalization.
  Value allowed = buildStructuralAllowed(b, loc, ctx, in.i, in.j, in.kvLen);
  if (in.maskBit)
    allowed = arith::AndIOp::create(b, loc, allowed, in.maskBit);
  if (Block *mod = AttentionOp(ctx.op).getMaskModBlock())
    allowed =
        arith::AndIOp::create(b, loc, allowed,
                              inlineModRegion(b, loc, ctx.op, *mod, "mask_mod",
                                              {in.b, in.h, in.i, in.j}));
  return maskWithNegInf(b, loc, allowed, s);
}

Value mlir::attn::buildUnmaskedLogit(OpBuilder &b, Location loc,
                                     const LogitContext &ctx,
                                     const LogitOperands &in) {
  Value s = buildModifiedScore(b, loc, ctx, in);
  if (!in.maskBit)
    return s;
  return maskWithNegInf(b, loc, in.maskBit, s);
}

//===----------------------------------------------------------------------===//
// Softmax edge cases
//===----------------------------------------------------------------------===//

Value mlir::attn::buildSafeMax(OpBuilder &b, Location loc, Value m) {
  Value empty = arith::CmpFOp::create(
      b, loc, arith::CmpFPredicate::OEQ, m,
      f32Const(b, loc, -std::numeric_limits<double>::infinity()));
  return arith::SelectOp::create(b, loc, empty, f32Const(b, loc, 0.0), m);
}

Value mlir::attn::buildMergeWeight(OpBuilder &b, Location loc, Value ms,
                                   Value bigM) {
  Value ninf = f32Const(b, loc, -std::numeric_limits<double>::infinity());
  Value empty =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, ms, ninf);
  Value w = math::ExpOp::create(
      b, loc, arith::SubFOp::create(b, loc, ms, buildSafeMax(b, loc, bigM)));
  return arith::SelectOp::create(b, loc, empty, f32Const(b, loc, 0.0), w);
}

Value mlir::attn::buildNormalizedOutput(OpBuilder &b, Location loc, Value acc,
                                        Value l) {
  Value zero = f32Const(b, loc, 0.0);
  Value empty =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, l, zero);
  Value div = arith::DivFOp::create(b, loc, acc, l);
  return arith::SelectOp::create(b, loc, empty, zero, div);
}

Value mlir::attn::buildLogSumExp(OpBuilder &b, Location loc, Value m, Value l) {
  Value empty = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, l,
                                      f32Const(b, loc, 0.0));
  Value lse = arith::AddFOp::create(b, loc, m, math::LogOp::create(b, loc, l));
  return arith::SelectOp::create(
      b, loc, empty, f32Const(b, loc, -std::numeric_limits<double>::infinity()),
      lse);
}

Value mlir::attn::buildRowSumScale(OpBuilder &b, Location loc, Value l) {
  // Biased exponent e of l (l >= 0); s = 2^-(e - 126) has biased exponent
  // 253 - e, clamped to [1, 253] so that s is a normal power of two.
  Type i32 = b.getI32Type();
  auto c = [&](int64_t v) -> Value {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v));
  };
  Value bits = arith::BitcastOp::create(b, loc, i32, l);
  Value e = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, bits, c(23)), c(0xff));
  Value se = arith::SubIOp::create(b, loc, c(253), e);
  se = arith::MaxSIOp::create(b, loc,
                              arith::MinSIOp::create(b, loc, se, c(253)), c(1));
  return arith::BitcastOp::create(b, loc, b.getF32Type(),
                                  arith::ShLIOp::create(b, loc, se, c(23)));
}
