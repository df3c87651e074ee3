//===- ControlFlowOps.cpp - scf, cf and func ops under thread masks -------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// Threads of a block run in lockstep under an active mask. scf.if with a
// condition that differs between threads runs both regions, each under its
// part of the mask; scf.for and scf.while keep iterating while any thread
// still does, threads that are done drop out of the mask.
//
//===----------------------------------------------------------------------===//

#include "Interp.h"

#include "attn-c/Kernel.h"
#include "attn/Conversion/RuntimeChecks.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cstdio>
#include <iterator>

using namespace mlir;
using namespace mlir::attn::gpuemu;

namespace {
/// Restores a frame's active mask when it goes out of scope.
struct MaskScope {
  Frame &f;
  std::vector<uint8_t> saved;
  bool savedAll;
  explicit MaskScope(Frame &f) : f(f), saved(f.active), savedAll(f.allActive) {}
  ~MaskScope() {
    f.active.swap(saved);
    f.allActive = savedAll;
  }
  /// Sets the mask to the saved mask restricted to `keep`.
  void set(const std::vector<uint8_t> &keep) {
    bool all = true;
    for (unsigned l = 0; l < f.lanes; ++l) {
      f.active[l] = (savedAll || saved[l]) && keep[l];
      all &= f.active[l] != 0;
    }
    f.allActive = all;
  }
};
} // namespace

static bool anyActive(Frame &f) {
  if (f.allActive)
    return true;
  for (uint8_t a : f.active)
    if (a)
      return true;
  return false;
}

static LogicalResult execFor(Interp &in, Operation *op, Frame &f) {
  auto forOp = cast<scf::ForOp>(op);
  Val &lb = in.get(f, forOp.getLowerBound());
  Val &ub = in.get(f, forOp.getUpperBound());
  Val &step = in.get(f, forOp.getStep());
  if (forOp.getUnsignedCmp())
    return in.fail(op, "unsigned scf.for is not emulated");
  SmallVector<Val> carry;
  for (Value v : forOp.getInitArgs())
    carry.push_back(in.get(f, v));
  Block &body = forOp.getRegion().front();
  Value ivArg = body.getArgument(0);
  Operation *yield = body.getTerminator();
  Val iv;
  iv.defined = true;

  auto bindArgs = [&](Val &ivVal) {
    Val &dst = in.def(f, ivArg, 1, ivVal.uniform);
    dst.data = ivVal.data;
    for (auto [arg, c] : llvm::zip(forOp.getRegionIterArgs(), carry)) {
      Val &a = in.def(f, arg, c.n, c.uniform);
      a.isRef = c.isRef;
      a.data = c.data;
      a.refs = c.refs;
    }
  };

  bool uniform = lb.uniform && ub.uniform && step.uniform;
  if (uniform) {
    int64_t s = step.at(0, 0).i;
    if (s <= 0)
      return in.fail(op, "scf.for with a non-positive step");
    iv.uniform = true;
    iv.data.resize(1);
    for (int64_t i = lb.at(0, 0).i, e = ub.at(0, 0).i; i < e; i += s) {
      iv.data[0].i = i;
      bindArgs(iv);
      if (failed(in.execBlock(body, f)))
        return failure();
      for (auto [i2, v] : llvm::enumerate(yield->getOperands())) {
        Val &src = in.get(f, v);
        carry[i2].isRef = src.isRef;
        carry[i2].uniform = src.uniform;
        carry[i2].n = src.n;
        carry[i2].data = src.data;
        carry[i2].refs = src.refs;
      }
    }
  } else {
    // Per-thread trip counts: threads leave the mask as they finish.
    MaskScope scope(f);
    iv.uniform = false;
    iv.data.resize(f.lanes);
    std::vector<uint8_t> running(f.lanes, 0);
    for (unsigned l = 0; l < f.lanes; ++l) {
      iv.data[l].i = lb.at(l, 0).i;
      if (step.at(l, 0).i <= 0 && (scope.savedAll || scope.saved[l]))
        return in.failLane(op, f, l, "scf.for with a non-positive step");
    }
    while (true) {
      for (unsigned l = 0; l < f.lanes; ++l)
        running[l] = iv.data[l].i < ub.at(l, 0).i;
      scope.set(running);
      if (!anyActive(f))
        break;
      bindArgs(iv);
      if (failed(in.execBlock(body, f)))
        return failure();
      for (auto [i2, v] : llvm::enumerate(yield->getOperands()))
        in.assignMasked(f, carry[i2], in.get(f, v));
      for (unsigned l = 0; l < f.lanes; ++l)
        if (f.active[l])
          iv.data[l].i += step.at(l, 0).i;
    }
  }
  for (auto [r, c] : llvm::zip(forOp.getResults(), carry)) {
    Val &dst = in.def(f, r, c.n, c.uniform);
    dst.isRef = c.isRef;
    dst.data = std::move(c.data);
    dst.refs = std::move(c.refs);
  }
  return success();
}

static LogicalResult execIf(Interp &in, Operation *op, Frame &f) {
  auto ifOp = cast<scf::IfOp>(op);
  Val &cond = in.get(f, ifOp.getCondition());
  SmallVector<Val *> yielded;
  if (in.isUniformOverActive(f, cond)) {
    int first = -1;
    in.forActive(f, [&](unsigned l) {
      if (first < 0)
        first = static_cast<int>(l);
    });
    if (first < 0)
      return success();
    bool taken = cond.at(first, 0).i != 0;
    Region &region = taken ? ifOp.getThenRegion() : ifOp.getElseRegion();
    if (region.empty())
      return success();
    if (failed(in.execRegion(region, f, {}, yielded)))
      return failure();
    for (auto [r, y] : llvm::zip(ifOp.getResults(), yielded)) {
      Val copy = *y;
      Val &dst = in.def(f, r, copy.n, copy.uniform);
      dst.isRef = copy.isRef;
      dst.data = std::move(copy.data);
      dst.refs = std::move(copy.refs);
    }
    return success();
  }
  // Divergent: each region under its part of the mask, results merged.
  SmallVector<Val> results(ifOp.getNumResults());
  MaskScope scope(f);
  std::vector<uint8_t> part(f.lanes);
  for (int branch = 0; branch < 2; ++branch) {
    for (unsigned l = 0; l < f.lanes; ++l)
      part[l] = (cond.at(l, 0).i != 0) == (branch == 0);
    scope.set(part);
    Region &region = branch == 0 ? ifOp.getThenRegion() : ifOp.getElseRegion();
    if (region.empty() || !anyActive(f))
      continue;
    if (failed(in.execRegion(region, f, {}, yielded)))
      return failure();
    for (auto [res, y] : llvm::zip(results, yielded))
      in.assignMasked(f, res, *y);
  }
  for (auto [r, c] : llvm::zip(ifOp.getResults(), results)) {
    Val &dst = in.def(f, r, c.n, c.uniform);
    dst.isRef = c.isRef;
    dst.data = std::move(c.data);
    dst.refs = std::move(c.refs);
  }
  return success();
}

static LogicalResult execWhile(Interp &in, Operation *op, Frame &f) {
  auto whileOp = cast<scf::WhileOp>(op);
  SmallVector<Val> carry;
  for (Value v : whileOp.getInits())
    carry.push_back(in.get(f, v));
  SmallVector<Val> results(whileOp.getNumResults());
  MaskScope scope(f);
  std::vector<uint8_t> running(f.lanes, 1);
  Block &before = whileOp.getBefore().front();
  Block &after = whileOp.getAfter().front();
  auto condOp = cast<scf::ConditionOp>(before.getTerminator());
  while (true) {
    scope.set(running);
    if (!anyActive(f))
      break;
    SmallVector<Val *> args, yielded;
    for (Val &c : carry)
      args.push_back(&c);
    if (failed(in.execRegion(whileOp.getBefore(), f, args, yielded)))
      return failure();
    Val &cond = in.get(f, condOp.getCondition());
    // Threads whose condition is false leave with the forwarded values.
    std::vector<uint8_t> leaving(f.lanes, 0);
    for (unsigned l = 0; l < f.lanes; ++l)
      if (f.active[l] && cond.at(l, 0).i == 0) {
        leaving[l] = 1;
        running[l] = 0;
      }
    {
      MaskScope inner(f);
      inner.set(leaving);
      if (anyActive(f))
        for (auto [res, v] : llvm::zip(results, condOp.getArgs()))
          in.assignMasked(f, res, in.get(f, v));
    }
    scope.set(running);
    if (!anyActive(f))
      break;
    SmallVector<Val> forwarded;
    for (Value v : condOp.getArgs())
      forwarded.push_back(in.get(f, v));
    args.clear();
    for (Val &c : forwarded)
      args.push_back(&c);
    if (failed(in.execRegion(whileOp.getAfter(), f, args, yielded)))
      return failure();
    for (auto [c, y] : llvm::zip(carry, yielded))
      in.assignMasked(f, c, *y);
    (void)after;
  }
  for (auto [r, c] : llvm::zip(whileOp.getResults(), results)) {
    Val &dst = in.def(f, r, c.n, c.uniform);
    dst.isRef = c.isRef;
    dst.data = std::move(c.data);
    dst.refs = std::move(c.refs);
  }
  return success();
}

static LogicalResult execAssert(Interp &in, Operation *op, Frame &f) {
  auto a = cast<cf::AssertOp>(op);
  Val &c = in.get(f, a.getArg());
  LogicalResult result = success();
  in.forActive(f, [&](unsigned l) {
    if (succeeded(result) && c.at(l, 0).i == 0)
      result = in.failLane(op, f, l, "assertion failed: " + a.getMsg());
  });
  return result;
}

/// The run-time check functions of the host code (attn_rt_*,
/// RuntimeChecks.h): the error record is the emulator's; a failed check is
/// formatted as libattn_runtime formats it and ends the emulation with that
/// message after the host function returns.
static LogicalResult execCall(Interp &in, Operation *op, Frame &f) {
  auto call = cast<func::CallOp>(op);
  StringRef callee = call.getCallee();
  auto scalar = [&](Value v) { return in.get(f, v).at(0, 0).i; };
  if (callee == mlir::attn::kErrorContextFn) {
    in.def(f, call.getResult(0), 1, true).data[0].i = 1;
    return success();
  }
  if (callee == mlir::attn::kGpuSmCountFn) {
    in.def(f, call.getResult(0), 1, true).data[0].i = in.options.smCount;
    return success();
  }
  if (callee == mlir::attn::kHasFailedFn) {
    in.def(f, call.getResult(0), 1, true).data[0].i =
        in.checkFailure.empty() ? 0 : 1;
    return success();
  }
  if (callee == mlir::attn::kCheckFailedFn) {
    if (!in.checkFailure.empty())
      return success();
    static const char *const formats[] = {
#define ATTN_RUNTIME_CHECK(Name, STATUS, FORMAT) FORMAT,
#include "attn/Runtime/RuntimeChecks.def"
    };
    static const int statuses[] = {
#define ATTN_RUNTIME_CHECK(Name, STATUS, FORMAT) STATUS,
#include "attn/Runtime/RuntimeChecks.def"
    };
    int64_t check = scalar(call.getOperand(1));
    if (check < 0 || check >= static_cast<int64_t>(std::size(formats)))
      return in.fail(op, "unknown run-time check " + Twine(check));
    long long a[4];
    for (unsigned i = 0; i < 4; ++i)
      a[i] = scalar(call.getOperand(2 + i));
    char buf[1024];
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    std::snprintf(buf, sizeof(buf), formats[check], a[0], a[1], a[2], a[3]);
#pragma GCC diagnostic pop
    in.checkFailure = buf;
    in.checkStatus = statuses[check];
    return success();
  }
  return in.fail(op, "call of " + callee +
                         " (only the attn_rt_* run-time "
                         "check functions are emulated)");
}

static LogicalResult execLaunch(Interp &in, Operation *op, Frame &f) {
  // The launch runs to completion: its async token (if any) is ready.
  for (Value r : op->getResults())
    in.defRef(f, r, true);
  return in.launch(op, f);
}

/// Tokens of asynchronous host operations: everything ran synchronously.
static LogicalResult execGpuWait(Interp &in, Operation *op, Frame &f) {
  for (Value r : op->getResults())
    in.defRef(f, r, true);
  return success();
}

void mlir::attn::gpuemu::registerControlFlowHandlers(Interp &in) {
  in.registerHandler(TypeID::get<scf::ForOp>(), execFor);
  in.registerHandler(TypeID::get<scf::IfOp>(), execIf);
  in.registerHandler(TypeID::get<scf::WhileOp>(), execWhile);
  in.registerHandler(TypeID::get<cf::AssertOp>(), execAssert);
  in.registerHandler(TypeID::get<func::CallOp>(), execCall);
  in.registerHandler(TypeID::get<gpu::LaunchOp>(), execLaunch);
  in.registerHandler(TypeID::get<gpu::WaitOp>(), execGpuWait);
}
