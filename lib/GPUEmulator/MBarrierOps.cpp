//===- MBarrierOps.cpp - nvgpu.mbarrier.* ---------------------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// Hopper's shared-memory barriers (PTX mbarrier objects), as MLIR 22's
// nvgpu ops state them: a group of barriers in shared memory, each with an
// expected arrival count, the arrivals still pending in its current phase,
// a transaction count (bytes that asynchronous copies such as TMA must still
// deliver) and a phase number. A phase completes when its pending arrivals
// and its transaction count are both zero; the barrier then starts the next
// phase with the expected count again.
//
// The block runs in lockstep (every active thread executes an op together),
// so a blocking wait (try_wait.parity) can only be satisfied by what already
// happened: a wait whose phase is still incomplete can never complete and is
// reported as a deadlock with what the phase still expects, never a hang.
// Arriving on a barrier that was not initialized, or more often than its
// phase expects, is an error too.
//
//===----------------------------------------------------------------------===//

#include "Interp.h"

#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::attn::gpuemu;

LogicalResult mlir::attn::gpuemu::barrierOf(Interp &in, Operation *op, Frame &f,
                                            unsigned lane, Value group,
                                            Value id, MBarrierState *&out) {
  const MemRefDesc &m = in.get(f, group).ref(lane);
  int64_t index = in.get(f, id).at(lane, 0).i;
  auto type = cast<nvgpu::MBarrierGroupType>(group.getType());
  if (index < 0 || index >= type.getNumBarriers())
    return in.failLane(op, f, lane,
                       "mbarrier index " + Twine(index) +
                           " out of the group's " +
                           Twine(type.getNumBarriers()));
  out = &in.mbarriers[{m.buf, index}];
  out->index = index;
  return success();
}

namespace {

std::string describe(const MBarrierState &s) {
  return "mbarrier " + std::to_string(s.index) + " (phase " +
         std::to_string(s.phase) + ", " + std::to_string(s.pending) + " of " +
         std::to_string(s.expected) + " arrivals pending, " +
         std::to_string(s.txBytes) + " transaction bytes pending)";
}

/// One arrival of `count` (and `tx` more expected transaction bytes); the
/// phase completes when nothing is pending. `mayComplete` false: the
/// arrival must not complete the phase (arrive.nocomplete).
LogicalResult arrive(Interp &in, Operation *op, Frame &f, unsigned lane,
                     MBarrierState &s, int64_t count, int64_t tx,
                     bool mayComplete) {
  if (!s.initialized)
    return in.failLane(op, f, lane,
                       "arrive on mbarrier " + Twine(s.index) +
                           " before nvgpu.mbarrier.init");
  if (count > s.pending)
    return in.failLane(op, f, lane,
                       "arrive on " + describe(s) +
                           ": more arrivals than the phase expects");
  s.txBytes += tx;
  s.pending -= count;
  if (s.pending == 0 && s.txBytes == 0) {
    if (!mayComplete)
      return in.failLane(op, f, lane,
                         "nvgpu.mbarrier.arrive.nocomplete would complete " +
                             describe(s));
    return in.completePhase(op, f, lane, s);
  }
  return success();
}

bool predicateHolds(Interp &in, Frame &f, Value pred, unsigned lane) {
  return !pred || in.get(f, pred).at(lane, 0).i != 0;
}

LogicalResult execCreate(Interp &in, Operation *op, Frame &f) {
  if (!f.isKernel)
    return in.fail(op, "used outside a gpu.launch");
  auto create = cast<nvgpu::MBarrierCreateOp>(op);
  auto type = cast<nvgpu::MBarrierGroupType>(create.getBarriers().getType());
  Buffer b;
  b.bytes = 8 * type.getNumBarriers();
  b.owned.assign(static_cast<size_t>(b.bytes), 0);
  b.name = "an mbarrier group";
  MemRefDesc m;
  m.rank = 1;
  m.sizes[0] = type.getNumBarriers();
  m.strides[0] = 1;
  m.buf = in.addBuffer(std::move(b));
  in.defRef(f, create.getBarriers(), true).refs[0] = m;
  return success();
}

LogicalResult execInit(Interp &in, Operation *op, Frame &f) {
  auto init = cast<nvgpu::MBarrierInitOp>(op);
  LogicalResult res = success();
  in.forActive(f, [&](unsigned l) {
    if (failed(res) || !predicateHolds(in, f, init.getPredicate(), l))
      return;
    MBarrierState *s;
    if (failed(res = barrierOf(in, op, f, l, init.getBarriers(),
                               init.getMbarId(), s)))
      return;
    int64_t count = in.get(f, init.getCount()).at(l, 0).i;
    if (count < 1 || count > (int64_t(1) << 20)) {
      res = in.failLane(op, f, l,
                        "mbarrier expected arrival count " + Twine(count) +
                            " outside [1, 2^20]");
      return;
    }
    if (!s->landing.empty()) {
      res = in.failLane(op, f, l,
                        "nvgpu.mbarrier.init of " + describe(*s) +
                            " while TMA loads still wait for it");
      return;
    }
    s->initialized = true;
    s->expected = s->pending = count;
    s->txBytes = 0;
    s->phase = 0;
    s->seen.assign(f.lanes, 0);
  });
  return res;
}

LogicalResult execArrive(Interp &in, Operation *op, Frame &f) {
  Value group, id, token, pred;
  Value countV, txV;
  bool mayComplete = true;
  if (auto a = dyn_cast<nvgpu::MBarrierArriveOp>(op)) {
    group = a.getBarriers();
    id = a.getMbarId();
    token = a.getToken();
  } else if (auto a = dyn_cast<nvgpu::MBarrierArriveNoCompleteOp>(op)) {
    group = a.getBarriers();
    id = a.getMbarId();
    token = a.getToken();
    countV = a.getCount();
    mayComplete = false;
  } else {
    auto e = cast<nvgpu::MBarrierArriveExpectTxOp>(op);
    group = e.getBarriers();
    id = e.getMbarId();
    txV = e.getTxcount();
    pred = e.getPredicate();
  }
  Val *tok = token ? &in.def(f, token, 1, false) : nullptr;
  LogicalResult res = success();
  in.forActive(f, [&](unsigned l) {
    if (failed(res) || !predicateHolds(in, f, pred, l))
      return;
    MBarrierState *s;
    if (failed(res = barrierOf(in, op, f, l, group, id, s)))
      return;
    // The token: the phase the arrival belongs to.
    if (tok)
      tok->at(l, 0).i = s->phase;
    int64_t count = countV ? in.get(f, countV).at(l, 0).i : 1;
    int64_t tx = txV ? in.get(f, txV).at(l, 0).i : 0;
    res = arrive(in, op, f, l, *s, count, tx, mayComplete);
  });
  return res;
}

LogicalResult execTestWait(Interp &in, Operation *op, Frame &f) {
  auto t = cast<nvgpu::MBarrierTestWaitOp>(op);
  Val &r = in.def(f, t.getWaitComplete(), 1, false);
  LogicalResult res = success();
  in.forActive(f, [&](unsigned l) {
    MBarrierState *s;
    if (failed(res) || failed(res = barrierOf(in, op, f, l, t.getBarriers(),
                                              t.getMbarId(), s)))
      return;
    int64_t token = in.get(f, t.getToken()).at(l, 0).i;
    r.at(l, 0).i = s->phase > token ? 1 : 0;
    if (s->phase > token && l < s->seen.size())
      s->seen[l] = std::max(s->seen[l], token + 1);
  });
  return res;
}

LogicalResult execTryWaitParity(Interp &in, Operation *op, Frame &f) {
  auto w = cast<nvgpu::MBarrierTryWaitParityOp>(op);
  LogicalResult res = success();
  in.forActive(f, [&](unsigned l) {
    MBarrierState *s;
    if (failed(res) || failed(res = barrierOf(in, op, f, l, w.getBarriers(),
                                              w.getMbarId(), s)))
      return;
    if (!s->initialized) {
      res = in.failLane(op, f, l,
                        "wait on mbarrier " + Twine(s->index) +
                            " before nvgpu.mbarrier.init");
      return;
    }
    // The phase of parity p is complete once the current phase's parity
    // differs (the current phase is never complete).
    int64_t parity = in.get(f, w.getPhaseParity()).at(l, 0).i & 1;
    if ((s->phase & 1) != parity) {
      // Phase - 1 (of this parity) and all before it have completed.
      if (l < s->seen.size())
        s->seen[l] = std::max(s->seen[l], s->phase);
      return;
    }
    std::string why =
        f.allActive
            ? "every thread of the block is waiting, so no arrival can come"
            : "the threads that could arrive are on another branch, which "
              "the emulator (one block in lockstep) runs only after this "
              "wait";
    res = in.failLane(op, f, l,
                      "deadlock: the wait for the phase of parity " +
                          Twine(parity) + " of " + describe(*s) +
                          " can never complete: " + why);
  });
  return res;
}

} // namespace

void mlir::attn::gpuemu::registerMBarrierHandlers(Interp &in) {
  in.registerHandler(TypeID::get<nvgpu::MBarrierCreateOp>(), execCreate);
  in.registerHandler(TypeID::get<nvgpu::MBarrierInitOp>(), execInit);
  in.registerHandler(TypeID::get<nvgpu::MBarrierArriveOp>(), execArrive);
  in.registerHandler(TypeID::get<nvgpu::MBarrierArriveNoCompleteOp>(),
                     execArrive);
  in.registerHandler(TypeID::get<nvgpu::MBarrierArriveExpectTxOp>(),
                     execArrive);
  in.registerHandler(TypeID::get<nvgpu::MBarrierTestWaitOp>(), execTestWait);
  in.registerHandler(TypeID::get<nvgpu::MBarrierTryWaitParityOp>(),
                     execTryWaitParity);
}
