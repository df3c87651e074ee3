//===- Dequant.cpp - reading quantized K/V caches -------------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/Dequant.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>
#include <limits>
#include <utility>

using namespace mlir;
using namespace mlir::attn;

/// `type` with its element type replaced by `elt` (scalars and vectors).
static Type withElement(Type type, Type elt) {
  if (auto v = dyn_cast<VectorType>(type))
    return v.clone(elt);
  return elt;
}

static Value splat(OpBuilder &b, Location loc, Type type, TypedAttr value) {
  if (auto v = dyn_cast<VectorType>(type))
    return arith::ConstantOp::create(b, loc, DenseElementsAttr::get(v, value));
  return arith::ConstantOp::create(b, loc, value);
}

Value mlir::attn::decodeQuantized(OpBuilder &b, Location loc, Value raw) {
  auto [x, factor] = decodeQuantizedUnscaled(b, loc, raw);
  if (factor == 1.0)
    return x;
  return arith::MulFOp::create(
      b, loc, x, splat(b, loc, x.getType(), b.getF32FloatAttr(factor)));
}

std::pair<Value, double>
mlir::attn::decodeQuantizedUnscaled(OpBuilder &b, Location loc, Value raw) {
  Type type = raw.getType();
  Type elt = getElementTypeOrSelf(type);
  Type f32 = b.getF32Type(), f16 = b.getF16Type();
  Type i8 = b.getI8Type(), i16 = b.getI16Type();
  if (elt.isInteger(8))
    return {arith::SIToFPOp::create(b, loc, withElement(type, f32), raw), 1.0};
  auto i16Const = [&](int64_t c) {
    return splat(b, loc, withElement(type, i16), b.getI16IntegerAttr(c));
  };
  Value bits = arith::BitcastOp::create(b, loc, withElement(type, i8), raw);
  if (isa<Float8E5M2Type>(elt)) {
    // e5m2 is the upper byte of an f16 (same exponent bias, inf and NaN).
    Value wide = arith::ExtUIOp::create(b, loc, withElement(type, i16), bits);
    Value h = arith::ShLIOp::create(b, loc, wide, i16Const(8));
    h = arith::BitcastOp::create(b, loc, withElement(type, f16), h);
    return {arith::ExtFOp::create(b, loc, withElement(type, f32), h), 1.0};
  }
  // e4m3fn: sign to f16's sign bit, the 4 exponent and 3 mantissa bits to
  // the low exponent and high mantissa bits; the f16 value is the e4m3 value
  // times 2^(7 - 15), subnormals included. The byte sign-extended to 16 bits
  // and shifted left by 7 puts the sign in bits 15 and 14 and the rest in
  // bits 13..7: clearing bit 14 leaves the f16 (with the NaN test, five
  // vector operations per vector on x86; masking sign and magnitude apart
  // took seven). 0x7f / 0xff are NaN (no inf).
  Value wide = arith::ExtSIOp::create(b, loc, withElement(type, i16), bits);
  Value h = arith::AndIOp::create(
      b, loc, arith::ShLIOp::create(b, loc, wide, i16Const(7)),
      splat(b, loc, withElement(type, i16),
            b.getIntegerAttr(i16, APInt(16, 0xBFFF))));
  h = arith::BitcastOp::create(b, loc, withElement(type, f16), h);
  Value f = arith::ExtFOp::create(b, loc, withElement(type, f32), h);
  auto i8Const = [&](int64_t c) {
    return splat(b, loc, withElement(type, i8), b.getI8IntegerAttr(c));
  };
  Value nan = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq,
      arith::AndIOp::create(b, loc, bits, i8Const(0x7f)), i8Const(0x7f));
  return {arith::SelectOp::create(
              b, loc, nan,
              splat(b, loc, withElement(type, f32),
                    b.getF32FloatAttr(std::numeric_limits<float>::quiet_NaN())),
              f),
          256.0};
}

double mlir::attn::quantizedMax(Type t) {
  if (isa<Float8E4M3FNType>(t))
    return 448.0;
  if (isa<Float8E5M2Type>(t))
    return 57344.0;
  return 127.0;
}

Value mlir::attn::encodeQuantized(OpBuilder &b, Location loc, Value y, Type t) {
  Type i32 = b.getI32Type(), i8 = b.getI8Type();
  auto f = [&](double v) -> Value {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  };
  auto i = [&](int64_t v) -> Value {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v));
  };
  double qmax = quantizedMax(t);
  Value isNan = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, y, y);
  if (t.isInteger(8)) {
    Value r = math::RoundEvenOp::create(b, loc, y);
    r = arith::MinimumFOp::create(
        b, loc, arith::MaximumFOp::create(b, loc, r, f(-qmax)), f(qmax));
    r = arith::SelectOp::create(b, loc, isNan, f(0.0), r);
    return arith::FPToSIOp::create(b, loc, i8, r);
  }
  // fp8 with `m` mantissa bits and exponent bias `bias`, rounded to nearest
  // even from the f32 bits: subnormals (below 2^(1 - bias)) as an integer
  // multiple of their spacing, normals by rounding off 23 - m mantissa bits
  // (a carry moves into the exponent) and rebiasing.
  bool e4m3 = isa<Float8E4M3FNType>(t);
  int64_t m = e4m3 ? 3 : 2, bias = e4m3 ? 7 : 15;
  Value a = arith::MinimumFOp::create(b, loc, math::AbsFOp::create(b, loc, y),
                                      f(qmax));
  Value bits = arith::BitcastOp::create(b, loc, i32, a);
  Value sub = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, a,
                                    f(std::ldexp(1.0, 1 - bias)));
  Value qs = arith::FPToSIOp::create(
      b, loc, i32,
      math::RoundEvenOp::create(
          b, loc,
          arith::MulFOp::create(b, loc, a, f(std::ldexp(1.0, bias - 1 + m)))));
  int64_t shift = 23 - m;
  Value lsb = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, bits, i(shift)), i(1));
  Value r = arith::AddIOp::create(
      b, loc, arith::AddIOp::create(b, loc, bits, i((1 << (shift - 1)) - 1)),
      lsb);
  r = arith::ShRUIOp::create(b, loc, r, i(shift));
  Value qn = arith::SubIOp::create(b, loc, r, i((127 - bias) << m));
  Value mag = arith::SelectOp::create(b, loc, sub, qs, qn);
  Value yBits = arith::BitcastOp::create(b, loc, i32, y);
  Value sign = arith::ShLIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, yBits, i(31)), i(7));
  Value out = arith::OrIOp::create(b, loc, sign, mag);
  out = arith::SelectOp::create(b, loc, isNan, i(0x7f), out);
  out = arith::TruncIOp::create(b, loc, i8, out);
  return arith::BitcastOp::create(b, loc, t, out);
}

SmallVector<Value> mlir::attn::scaleIndex(Value scale, Layout layout,
                                          Value block, Value head, Value row) {
  if (cast<ShapedType>(scale.getType()).getRank() == 2)
    return {block, head};
  if (layout == Layout::bhnd)
    return {block, head, row};
  return {block, row, head};
}

Value mlir::attn::dequantizeTensor(OpBuilder &b, Location loc, Value kv,
                                   Value scale, Layout layout) {
  MLIRContext *ctx = b.getContext();
  auto type = cast<RankedTensorType>(kv.getType());
  Value empty = tensor::EmptyOp::create(
      b, loc, tensor::getMixedSizes(b, loc, kv), b.getF32Type());
  // Physical dims: block 0, token and head per layout, D 3.
  int64_t hDim = layout == Layout::bhnd ? 1 : 2;
  auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineExpr> scaleExprs;
  if (cast<RankedTensorType>(scale.getType()).getRank() == 2)
    scaleExprs = {d(0), d(hDim)};
  else
    scaleExprs = {d(0), d(1), d(2)};
  auto id = AffineMap::getMultiDimIdentityMap(type.getRank(), ctx);
  SmallVector<AffineMap> maps = {
      id, AffineMap::get(type.getRank(), 0, scaleExprs, ctx), id};
  SmallVector<utils::IteratorType> iters(type.getRank(),
                                         utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, empty.getType(), ValueRange{kv, scale}, empty, maps, iters,
             [&](OpBuilder &nb, Location nl, ValueRange a) {
               Value x = decodeQuantized(nb, nl, a[0]);
               linalg::YieldOp::create(
                   nb, nl, Value(arith::MulFOp::create(nb, nl, x, a[1])));
             })
      .getResult(0);
}
