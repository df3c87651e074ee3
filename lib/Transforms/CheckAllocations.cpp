//===- CheckAllocations.cpp - failed allocations as run-time errors -------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// Every memref.alloc of a function is followed by a check of its pointer
// (and of its size in bytes, computed without overflow), and whatever may
// touch memory after it runs only when the check and every check before it
// held: the rest of the allocation's block under the allocation's own
// condition, the rest of each enclosing block under attn_rt_has_failed.
// A failure is recorded through the one error channel of generated code
// (attn/Conversion/RuntimeChecks.h) with ATTN_STATUS_OUT_OF_MEMORY.
//
//===----------------------------------------------------------------------===//

#include "attn/Transforms/Passes.h"

#include "attn/Conversion/RuntimeChecks.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

#include <limits>

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNCHECKALLOCATIONS
#include "attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

namespace {

constexpr int64_t kMaxBytes = std::numeric_limits<int64_t>::max();

/// True when buildSkippedValue can make a value of `type`.
bool canSkip(Type type) {
  if (isa<IndexType, IntegerType, FloatType, VectorType>(type))
    return true;
  auto memref = dyn_cast<MemRefType>(type);
  return memref && memref.isStrided();
}

/// What a guarded block yields when its work is skipped: zeros for scalars
/// and vectors; for a memref, a view of an empty allocation with the
/// type's static sizes and strides and 0 for the dynamic ones (never read:
/// every use that could read it is skipped as well; the caller frees it).
FailureOr<Value> buildSkippedValue(OpBuilder &b, Location loc, Type type) {
  if (isa<IndexType, IntegerType, FloatType>(type))
    return Value(arith::ConstantOp::create(b, loc, b.getZeroAttr(type)));
  if (auto vec = dyn_cast<VectorType>(type))
    return Value(arith::ConstantOp::create(b, loc, b.getZeroAttr(vec)));
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref)
    return failure();
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(memref.getStridesAndOffset(strides, offset)))
    return failure();
  auto empty = memref::AllocOp::create(
      b, loc,
      MemRefType::get({0}, memref.getElementType(), MemRefLayoutAttrInterface(),
                      memref.getMemorySpace()));
  auto orZero = [](int64_t v) {
    return ShapedType::isDynamic(v) ? int64_t(0) : v;
  };
  SmallVector<OpFoldResult> sizes, strideValues;
  for (int64_t s : memref.getShape())
    sizes.push_back(b.getIndexAttr(orZero(s)));
  for (int64_t s : strides)
    strideValues.push_back(b.getIndexAttr(orZero(s)));
  return Value(memref::ReinterpretCastOp::create(b, loc, memref, empty,
                                                 b.getIndexAttr(orZero(offset)),
                                                 sizes, strideValues));
}

/// True when an op of `after`'s block after it (its terminator aside) may
/// touch memory.
bool restTouchesMemory(Operation *after) {
  Operation *terminator = after->getBlock()->getTerminator();
  for (Operation *op = after->getNextNode(); op != terminator;
       op = op->getNextNode())
    if (!isMemoryEffectFree(op))
      return true;
  return false;
}

/// Moves the ops of `after`'s block after it (up to its terminator) into an
/// `scf.if ok` whose results replace their uses by the terminator; the
/// else branch yields buildSkippedValue. Returns the if (null when
/// nothing after `after` touches memory).
FailureOr<scf::IfOp> guardRest(OpBuilder &b, Operation *after, Value ok) {
  if (!restTouchesMemory(after))
    return scf::IfOp();
  Block *block = after->getBlock();
  Operation *terminator = block->getTerminator();
  SmallVector<Operation *> rest;
  for (Operation *op = after->getNextNode(); op != terminator;
       op = op->getNextNode())
    rest.push_back(op);
  // Values of the moved ops that the terminator uses become the if's
  // results; ops outside the block cannot use one (the ops end the block).
  llvm::SetVector<Value> escaping;
  for (Operation *op : rest)
    for (OpOperand &use : op->getUses()) {
      Operation *user = block->findAncestorOpInBlock(*use.getOwner());
      if (!user)
        return op->emitOpError("is used outside the block that a failed "
                               "allocation would skip");
      if (user == terminator)
        escaping.insert(use.get());
    }
  SmallVector<Type> types;
  for (Value v : escaping) {
    if (!canSkip(v.getType()))
      return terminator->emitOpError()
             << "yields a value of type " << v.getType()
             << " that attn-check-allocations cannot make when it skips the "
                "work after a failed allocation";
    types.push_back(v.getType());
  }
  Location loc = after->getLoc();
  b.setInsertionPointAfter(after);
  auto ifOp = scf::IfOp::create(b, loc, types, ok, /*withElse=*/true);
  // (Without results the builder has added empty yields: rebuilt below.)
  for (Region *r : {&ifOp.getThenRegion(), &ifOp.getElseRegion()})
    if (!r->front().empty())
      r->front().getTerminator()->erase();
  Block *thenBlock = &ifOp.getThenRegion().front();
  for (Operation *op : rest)
    op->moveBefore(thenBlock, thenBlock->end());
  b.setInsertionPointToEnd(thenBlock);
  scf::YieldOp::create(b, loc, escaping.getArrayRef());
  b.setInsertionPointToStart(&ifOp.getElseRegion().front());
  SmallVector<Value> skipped;
  for (Type t : types)
    skipped.push_back(*buildSkippedValue(b, loc, t));
  scf::YieldOp::create(b, loc, skipped);
  for (auto [v, r] : llvm::zip(escaping, ifOp.getResults()))
    terminator->replaceUsesOfWith(v, r);
  return ifOp;
}

/// Checks a group of allocations that follow each other in one block
/// (pure ops between them allowed) and returns the last op of the checks;
/// `ok` is set to the condition that all of them succeeded.
Operation *buildChecks(OpBuilder &b, Value ctx, ArrayRef<memref::AllocOp> group,
                       Value &ok) {
  memref::AllocOp last = group.back();
  Location loc = last.getLoc();
  b.setInsertionPointAfter(last);
  DataLayout layout = DataLayout::closest(last);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value maxBytes = arith::ConstantIndexOp::create(b, loc, kMaxBytes);
  Value falseV = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 0);
  ok = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1);
  for (memref::AllocOp alloc : group) {
    MemRefType type = alloc.getType();
    // The static part of the size, in bytes (saturated).
    llvm::TypeSize elementBytes = layout.getTypeSize(type.getElementType());
    int64_t staticBytes =
        elementBytes.isScalable() ? 1 : int64_t(elementBytes.getFixedValue());
    bool staticOverflow = false;
    for (int64_t s : type.getShape())
      if (!ShapedType::isDynamic(s)) {
        if (s != 0 && staticBytes > kMaxBytes / s)
          staticOverflow = true;
        staticBytes = staticOverflow ? kMaxBytes : staticBytes * s;
      }
    // Nothing is allocated: nothing can fail.
    if (staticBytes == 0)
      continue;
    // bytes = staticBytes * dynamic sizes; overflow when a factor exceeds
    // what is left below 2^63 (unsigned: a negative size overflows too).
    Value bytes = arith::ConstantIndexOp::create(b, loc, staticBytes);
    Value overflow =
        arith::ConstantIntOp::create(b, loc, b.getI1Type(), staticOverflow);
    for (Value size : alloc.getDynamicSizes()) {
      Value divisor = arith::MaxUIOp::create(b, loc, bytes, one);
      Value room = arith::DivUIOp::create(b, loc, maxBytes, divisor);
      Value over =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, size, room);
      overflow = arith::OrIOp::create(b, loc, overflow, over);
      bytes = arith::MulIOp::create(b, loc, bytes, size);
    }
    Value pointer =
        memref::ExtractAlignedPointerAsIndexOp::create(b, loc, alloc);
    Value isNull =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, pointer, zero);
    Value nonEmpty =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, bytes, zero);
    Value failedAlloc = arith::AndIOp::create(b, loc, isNull, nonEmpty);
    Value notOverflow = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                              overflow, falseV);
    emitRuntimeCheckInto(b, loc, ctx, notOverflow,
                         RuntimeCheck::AllocSizeOverflow);
    Value noFailure = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq,
        arith::AndIOp::create(b, loc, failedAlloc, notOverflow), falseV);
    emitRuntimeCheckInto(b, loc, ctx, noFailure, RuntimeCheck::AllocFailed,
                         {bytes});
    Value good = arith::AndIOp::create(b, loc, noFailure, notOverflow);
    ok = arith::AndIOp::create(b, loc, ok, good);
  }
  return ok.getDefiningOp();
}

/// True when nothing reads `buffer` outside `guard`: its other uses are
/// frees, pointer comparisons (free(null) does nothing), views of it, and
/// yields and returns that pass it on to such uses or to the caller (which
/// reads no output of a call that failed).
LogicalResult checkNotRead(Value buffer, scf::IfOp guard) {
  SmallVector<Value> worklist = {buffer};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (guard->isAncestor(user) ||
          isa<memref::DeallocOp, memref::ExtractAlignedPointerAsIndexOp,
              func::ReturnOp>(user))
        continue;
      if (isa<ViewLikeOpInterface>(user)) {
        llvm::append_range(worklist, user->getResults());
        continue;
      }
      if (isa<scf::YieldOp>(user) &&
          isa<scf::IfOp, scf::ForOp>(user->getParentOp())) {
        worklist.push_back(
            user->getParentOp()->getResult(use.getOperandNumber()));
        continue;
      }
      return user->emitOpError("reads a copy that deallocation made to "
                               "return a buffer; attn-check-allocations "
                               "cannot skip this read when the copy's "
                               "allocation fails");
    }
  }
  return success();
}

/// Lowers `clone` (what the deallocation pipeline adds to return a buffer
/// it does not own) to an allocation and a copy, as
/// convert-bufferization-to-memref does, with the allocation checked and the
/// copy skipped when it failed. The clone's uses read nothing then: they are
/// frees, pointer comparisons (free(null) does nothing) and the function's
/// results, which the caller does not read after a failed call.
LogicalResult lowerClone(OpBuilder &b, Value ctx,
                         bufferization::CloneOp clone) {
  auto type = dyn_cast<MemRefType>(clone.getType());
  // A clone of a strided view (a function returning its strided argument)
  // is a dense copy, cast to the clone's layout.
  auto dense =
      type ? MemRefType::get(type.getShape(), type.getElementType(),
                             MemRefLayoutAttrInterface(), type.getMemorySpace())
           : MemRefType();
  if (!type || (!type.getLayout().isIdentity() &&
                !memref::CastOp::areCastCompatible(dense, type)))
    return clone.emitOpError("clones a buffer with a layout that a dense "
                             "copy cannot be cast to; attn-check-allocations "
                             "cannot lower it");
  Location loc = clone.getLoc();
  b.setInsertionPoint(clone);
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      sizes.push_back(memref::DimOp::create(b, loc, clone.getInput(), d));
  auto alloc = memref::AllocOp::create(b, loc, dense, sizes);
  Value ok;
  Operation *checks = buildChecks(b, ctx, {alloc}, ok);
  b.setInsertionPointAfter(checks);
  auto ifOp = scf::IfOp::create(b, loc, ok);
  b.setInsertionPoint(ifOp.getThenRegion().front().getTerminator());
  memref::CopyOp::create(b, loc, clone.getInput(), alloc);
  Value result = alloc.getResult();
  if (dense != type) {
    b.setInsertionPointAfter(ifOp);
    result = memref::CastOp::create(b, loc, type, result);
  }
  clone.replaceAllUsesWith(result);
  clone.erase();
  return checkNotRead(alloc, ifOp);
}

struct AttnCheckAllocationsPass
    : public attn::impl::AttnCheckAllocationsBase<AttnCheckAllocationsPass> {
  using Base::Base;
  void runOnOperation() override {
    OpBuilder b(&getContext());
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      if (afterDeallocation) {
        SmallVector<bufferization::CloneOp> clones;
        func.walk([&](bufferization::CloneOp c) { clones.push_back(c); });
        if (clones.empty())
          continue;
        Value ctx = getErrorContext(b, &func.front().front());
        for (bufferization::CloneOp clone : clones)
          if (failed(lowerClone(b, ctx, clone)))
            return signalPassFailure();
        continue;
      }
      SmallVector<memref::AllocOp> allocs;
      func.walk([&](memref::AllocOp alloc) { allocs.push_back(alloc); });
      if (allocs.empty())
        continue;
      Value ctx = getErrorContext(b, &func.front().front());
      // Groups of allocations with only pure ops between them share one
      // guard.
      SmallVector<SmallVector<memref::AllocOp>> groups;
      for (memref::AllocOp alloc : allocs) {
        if (!groups.empty()) {
          memref::AllocOp prev = groups.back().back();
          bool adjacent = prev->getBlock() == alloc->getBlock();
          for (Operation *op = prev->getNextNode(); adjacent && op != alloc;
               op = op->getNextNode())
            adjacent = op->getNumRegions() == 0 && isMemoryEffectFree(op);
          if (adjacent) {
            groups.back().push_back(alloc);
            continue;
          }
        }
        groups.push_back({alloc});
      }
      // The rest of each allocation's block, under its own checks.
      llvm::SetVector<Operation *> enclosing;
      for (ArrayRef<memref::AllocOp> group : groups) {
        Value ok;
        Operation *checks = buildChecks(b, ctx, group, ok);
        if (failed(guardRest(b, checks, ok)))
          return signalPassFailure();
        for (Operation *p = group.front()->getParentOp(); p != func;
             p = p->getParentOp())
          enclosing.insert(p);
      }
      // The rest of each enclosing block, under every check so far
      // (recorded by any thread of the call: the call's error record).
      for (Operation *op : enclosing) {
        if (!restTouchesMemory(op))
          continue;
        b.setInsertionPointAfter(op);
        Value failedV = buildHasFailedIn(b, op->getLoc(), ctx);
        Value trueV =
            arith::ConstantIntOp::create(b, op->getLoc(), b.getI1Type(), 1);
        Value ok = arith::XOrIOp::create(b, op->getLoc(), failedV, trueV);
        if (failed(guardRest(b, ok.getDefiningOp(), ok)))
          return signalPassFailure();
      }
    }
  }
};

} // namespace
