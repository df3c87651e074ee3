//===- Dequant.cpp - reading quantized K/V caches -------------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/Dequant.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>
#include <utility>

using namespace mlir;
using namespace mlir::attn;

bool mlir::attn::isQuantizedElementType(Type t) {
  return t.isInteger(8) || isa<Float8E4M3FNType, Float8E5M2Type>(t);
}

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
  Value wide = arith::ExtUIOp::create(b, loc, withElement(type, i16), bits);
  if (isa<Float8E5M2Type>(elt)) {
    // e5m2 is the upper byte of an f16 (same exponent bias, inf and NaN).
    Value h = arith::ShLIOp::create(b, loc, wide, i16Const(8));
    h = arith::BitcastOp::create(b, loc, withElement(type, f16), h);
    return {arith::ExtFOp::create(b, loc, withElement(type, f32), h), 1.0};
  }
  // e4m3fn: sign to f16's sign bit, the 4 exponent and 3 mantissa bits to
  // the low exponent and high mantissa bits; the f16 value is the e4m3 value
  // times 2^(7 - 15), subnormals included. 0x7f / 0xff are NaN (no inf).
  Value sign = arith::ShLIOp::create(
      b, loc, arith::AndIOp::create(b, loc, wide, i16Const(0x80)),
      i16Const(8));
  Value mag = arith::AndIOp::create(b, loc, wide, i16Const(0x7f));
  Value h = arith::OrIOp::create(
      b, loc, sign, arith::ShLIOp::create(b, loc, mag, i16Const(7)));
  h = arith::BitcastOp::create(b, loc, withElement(type, f16), h);
  Value f = arith::ExtFOp::create(b, loc, withElement(type, f32), h);
  Value nan = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, mag,
                                    i16Const(0x7f));
  return {arith::SelectOp::create(
              b, loc, nan,
              splat(b, loc, withElement(type, f32),
                    b.getF32FloatAttr(std::numeric_limits<float>::quiet_NaN())),
              f),
          256.0};
}

SmallVector<Value> mlir::attn::scaleIndex(Value scale, Layout layout,
                                          Value block, Value head, Value row) {
  if (cast<RankedTensorType>(scale.getType()).getRank() == 2)
    return {block, head};
  if (layout == Layout::bhnd)
    return {block, head, row};
  return {block, row, head};
}

Value mlir::attn::dequantizeTensor(OpBuilder &b, Location loc, Value kv,
                                   Value scale, Layout layout) {
  MLIRContext *ctx = b.getContext();
  auto type = cast<RankedTensorType>(kv.getType());
  Value empty =
      tensor::EmptyOp::create(b, loc, tensor::getMixedSizes(b, loc, kv),
                              b.getF32Type());
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
             b, loc, empty.getType(), ValueRange{kv, scale}, empty, maps,
             iters,
             [&](OpBuilder &nb, Location nl, ValueRange a) {
               Value x = decodeQuantized(nb, nl, a[0]);
               linalg::YieldOp::create(
                   nb, nl, Value(arith::MulFOp::create(nb, nl, x, a[1])));
             })
      .getResult(0);
}
