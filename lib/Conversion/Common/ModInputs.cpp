//===- ModInputs.cpp - how generated code reads the regions' tensors ------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/ModInputs.h"

#include "attn/Schedule/MaskBounds.h"
#include "attn/Schedule/Schedule.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

using namespace mlir;
using namespace mlir::attn;

ModInputAccess ModInputAccess::ofTensors(AttentionOp op) {
  ModInputAccess access;
  access.inputs.assign(op.getModInputs().begin(), op.getModInputs().end());
  access.dim = [](OpBuilder &b, Location loc, Value t, int64_t d) -> Value {
    return tensor::DimOp::create(b, loc, t, d);
  };
  access.read = [](OpBuilder &b, Location loc, Value t,
                   ValueRange idx) -> Value {
    return tensor::ExtractOp::create(b, loc, t, idx);
  };
  Operation *anchor = op.getOperation();
  access.report = [anchor](OpBuilder &b, Location loc, Value ok,
                           RuntimeCheck check, ArrayRef<Value> args) {
    emitRuntimeCheck(b, loc, anchor, ok, check, args);
  };
  return access;
}

std::optional<std::pair<Value, Value>> mlir::attn::buildTensorRange(
    OpBuilder &b, Location loc, const ModInputAccess &access, unsigned input,
    ArrayRef<std::pair<Value, Value>> box, int64_t maxElements) {
  Value t = access.inputs[input];
  auto type = cast<ShapedType>(t.getType());
  auto intType = dyn_cast<IntegerType>(type.getElementType());
  if (!intType || intType.getWidth() > 64)
    return std::nullopt;
  IRArith a{b, loc};
  // The box clamped to the input; a box larger than maxElements elements,
  // or one entirely outside the input, gives the element type's whole range.
  SmallVector<Value> lo, hi;
  Value volume = a.c(1), ok = a.cb(true);
  for (auto [d, r] : llvm::enumerate(box)) {
    Value dim = access.dim(b, loc, t, d);
    Value l = a.max(r.first, a.c(0));
    Value h = a.min(r.second, a.sub(dim, a.c(1)));
    ok = a.both(ok, a.sle(l, h));
    // Extents are clamped to maxElements + 1 so the product cannot overflow.
    Value extent =
        a.min(a.max(a.sub(a.add(h, a.c(1)), l), a.c(0)), a.c(maxElements + 1));
    volume = a.min(a.mul(volume, extent), a.c(maxElements + 1));
    lo.push_back(l);
    hi.push_back(h);
  }
  ok = a.both(ok, a.sle(volume, a.c(maxElements)));
  unsigned w = intType.getWidth();
  auto [typeMin, typeMax] = summaryTypeRange(w);
  // Nested loops over the box (no iteration unless `ok`), keeping the
  // smallest and largest value.
  std::function<std::pair<Value, Value>(OpBuilder &, Location, unsigned,
                                        SmallVector<Value>, Value, Value)>
      nest = [&](OpBuilder &nb, Location nl, unsigned d, SmallVector<Value> idx,
                 Value mn, Value mx) -> std::pair<Value, Value> {
    IRArith m{nb, nl};
    if (d == box.size()) {
      Value x = access.read(nb, nl, t, idx);
      if (w == 1)
        x = arith::ExtUIOp::create(nb, nl, nb.getI64Type(), x);
      Value xi = arith::IndexCastOp::create(nb, nl, nb.getIndexType(), x);
      return {m.min(mn, xi), m.max(mx, xi)};
    }
    Value ub = m.select(ok, m.add(hi[d], m.c(1)), lo[d]);
    auto loop = scf::ForOp::create(
        nb, nl, lo[d], ub, m.c(1), ValueRange{mn, mx},
        [&](OpBuilder &lb, Location ll, Value iv, ValueRange it) {
          SmallVector<Value> next = idx;
          next.push_back(iv);
          auto [a2, b2] = nest(lb, ll, d + 1, next, it[0], it[1]);
          scf::YieldOp::create(lb, ll, ValueRange{a2, b2});
        });
    return {loop.getResult(0), loop.getResult(1)};
  };
  auto [mn, mx] = nest(b, loc, 0, {}, a.c(typeMax), a.c(typeMin));
  return std::make_pair(a.select(ok, mn, a.c(typeMin)),
                        a.select(ok, mx, a.c(typeMax)));
}
