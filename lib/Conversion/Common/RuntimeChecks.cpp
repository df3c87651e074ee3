//===- RuntimeChecks.cpp - run-time checks of generated code -------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/RuntimeChecks.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::attn;

/// Declares `name` with `type` in the symbol table `table`.
static void declare(OpBuilder &b, Operation *table, Location loc,
                    StringRef name, FunctionType type) {
  if (!table || SymbolTable::lookupSymbolIn(table, name))
    return;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&table->getRegion(0).front());
  auto fn = func::FuncOp::create(b, loc, name, type);
  fn.setPrivate();
}

/// Declares the three runtime functions in `table`.
static void declareAll(OpBuilder &b, Operation *table, Location loc) {
  auto i32 = b.getI32Type(), i64 = b.getI64Type(), ptr = i64;
  declare(b, table, loc, kErrorContextFn, b.getFunctionType({}, {ptr}));
  declare(b, table, loc, kCheckFailedFn,
          b.getFunctionType({ptr, i32, i64, i64, i64, i64}, {}));
  declare(b, table, loc, kHasFailedFn, b.getFunctionType({ptr}, {i32}));
}

Value mlir::attn::buildErrorContext(OpBuilder &b, Location loc,
                                    Operation *symbolTable) {
  declareAll(b, symbolTable, loc);
  return func::CallOp::create(b, loc, kErrorContextFn,
                              TypeRange{b.getI64Type()}, ValueRange{})
      .getResult(0);
}

/// The call of attn_rt_error_context at the start of `anchor`'s block, if
/// any.
static Value findErrorContext(Operation *anchor) {
  for (Operation &op : *anchor->getBlock())
    if (auto call = dyn_cast<func::CallOp>(op))
      if (call.getCallee() == kErrorContextFn)
        return call.getResult(0);
  return Value();
}

Value mlir::attn::getErrorContext(OpBuilder &b, Operation *anchor) {
  if (Value ctx = findErrorContext(anchor))
    return ctx;
  // At the start of the block, so that it dominates whatever a lowering has
  // already emitted before `anchor` (loops whose bodies then check).
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(anchor->getBlock());
  return buildErrorContext(
      b, anchor->getLoc(),
      SymbolTable::getNearestSymbolTable(anchor->getParentOp()));
}

static Value toI64(OpBuilder &b, Location loc, Value v) {
  Type i64 = b.getI64Type();
  if (v.getType() == i64)
    return v;
  if (v.getType().isIndex())
    return arith::IndexCastOp::create(b, loc, i64, v);
  auto it = cast<IntegerType>(v.getType());
  if (it.getWidth() < 64)
    return arith::ExtSIOp::create(b, loc, i64, v);
  return arith::TruncIOp::create(b, loc, i64, v);
}

void mlir::attn::emitRuntimeCheck(OpBuilder &b, Location loc, Operation *anchor,
                                  Value ok, RuntimeCheck check,
                                  ArrayRef<Value> args) {
  emitRuntimeCheckInto(b, loc, getErrorContext(b, anchor), ok, check, args);
}

void mlir::attn::emitRuntimeCheckInto(OpBuilder &b, Location loc, Value ctx,
                                      Value ok, RuntimeCheck check,
                                      ArrayRef<Value> args) {
  Value trueV = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1);
  Value bad = arith::XOrIOp::create(b, loc, ok, trueV);
  Value code = arith::ConstantIntOp::create(b, loc, b.getI32Type(),
                                            static_cast<int32_t>(check));
  emitRecordedCheckInto(b, loc, ctx, bad, code, args);
}

void mlir::attn::emitRecordedCheckInto(OpBuilder &b, Location loc, Value ctx,
                                       Value failed, Value check,
                                       ArrayRef<Value> args) {
  assert(args.size() <= 4 && "at most four operands");
  auto ifOp = scf::IfOp::create(b, loc, failed, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  SmallVector<Value, 6> operands = {ctx, check};
  if (check.getType() != b.getI32Type())
    operands[1] = arith::TruncIOp::create(b, loc, b.getI32Type(), check);
  for (Value a : args)
    operands.push_back(toI64(b, loc, a));
  while (operands.size() < 6)
    operands.push_back(arith::ConstantIntOp::create(b, loc, b.getI64Type(), 0));
  func::CallOp::create(b, loc, kCheckFailedFn, TypeRange{}, operands);
}

Value mlir::attn::buildHasFailed(OpBuilder &b, Location loc,
                                 Operation *anchor) {
  return buildHasFailedIn(b, loc, getErrorContext(b, anchor));
}

Value mlir::attn::buildHasFailedIn(OpBuilder &b, Location loc, Value ctx) {
  Value r = func::CallOp::create(b, loc, kHasFailedFn,
                                 TypeRange{b.getI32Type()}, ValueRange{ctx})
                .getResult(0);
  Value zero = arith::ConstantIntOp::create(b, loc, b.getI32Type(), 0);
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, r, zero);
}

SmallVector<Value> mlir::attn::buildGuarded(
    OpBuilder &b, Location loc, Operation *anchor, TypeRange types,
    function_ref<SmallVector<Value>(OpBuilder &, Location)> onFailure,
    function_ref<SmallVector<Value>(OpBuilder &, Location)> body) {
  // Nothing checked before the work: nothing to guard.
  if (!findErrorContext(anchor))
    return body(b, loc);
  Value failed = buildHasFailed(b, loc, anchor);
  auto ifOp = scf::IfOp::create(b, loc, types, failed, /*withElse=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    scf::YieldOp::create(b, loc, onFailure(b, loc));
    b.setInsertionPointToStart(&ifOp.getElseRegion().front());
    scf::YieldOp::create(b, loc, body(b, loc));
  }
  return SmallVector<Value>(ifOp.getResults());
}

SmallVector<Value> mlir::attn::buildGuardedOrZeros(
    OpBuilder &b, Location loc, Operation *op,
    function_ref<SmallVector<Value>(OpBuilder &, Location)> body) {
  TypeRange types = op->getResultTypes();
  return buildGuarded(
      b, loc, op, types,
      [&](OpBuilder &fb, Location fl) {
        return buildZeroResults(fb, fl, types);
      },
      body);
}

SmallVector<Value> mlir::attn::buildZeroResults(OpBuilder &b, Location loc,
                                                TypeRange types) {
  SmallVector<Value> out;
  for (Type t : types) {
    auto type = cast<RankedTensorType>(t);
    SmallVector<Value> dynamic(type.getNumDynamicDims(),
                               arith::ConstantIndexOp::create(b, loc, 0));
    Value e = tensor::EmptyOp::create(b, loc, type, dynamic);
    Value zero =
        arith::ConstantOp::create(b, loc, b.getZeroAttr(type.getElementType()));
    auto fill = linalg::FillOp::create(b, loc, zero, e);
    fill->setAttr(kZerosAfterFailureAttr, b.getUnitAttr());
    out.push_back(fill.getResult(0));
  }
  return out;
}
