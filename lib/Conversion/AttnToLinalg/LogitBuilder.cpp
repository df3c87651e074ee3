//===- LogitBuilder.cpp - shared logit and mask arithmetic ----------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "LogitBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

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
  ctx.nk = toValue(tensor::getMixedSize(b, loc, k, op.getPhysicalDim(2)));
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
  AttentionOp op = ctx.op;
  auto causal = op.getCausal();
  if (!causal || *causal != CausalAlign::bottom_right)
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
  bool needsPosition =
      op.getCausal() || op.getWindowLeft() || op.getWindowRight();
  if (!needsPosition)
    return allowed;
  Value p = buildQueryPosition(b, loc, ctx, i, kvLen);
  if (op.getCausal())
    andWith(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, j, p));
  if (auto left = op.getWindowLeft()) {
    Value dist = arith::SubIOp::create(b, loc, p, j);
    Value bound = arith::ConstantIndexOp::create(b, loc, *left);
    andWith(
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, dist, bound));
  }
  if (auto right = op.getWindowRight()) {
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
  return s;
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
