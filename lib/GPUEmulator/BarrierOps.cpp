//===- BarrierOps.cpp - named barriers and setmaxnreg ---------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// The synchronization a warp-specialized Hopper kernel adds to gpu.barrier,
// as the PTX ISA defines it:
// - `nvvm.barrier id = %i number_of_threads = %n` (bar.sync / barrier.sync
//   .aligned) and `nvvm.barrier.arrive id = %i number_of_threads = %n`
//   (bar.arrive): 16 barriers per block; each warp that executes one adds
//   32 arrivals (whole warps: the threads of a warp must execute it
//   together); the use completes when `n` threads (a multiple of 32) have
//   arrived, which releases the threads waiting in bar.sync. Without an id
//   it is barrier 0 for every thread of the block (as gpu.barrier).
//   The block runs in lockstep, so a bar.sync whose use is not complete
//   when it executes can never be released: a deadlock, reported with the
//   counts. Arrivals beyond `n` are an error. A completed use orders shared
//   memory for the whole block (the race detector's epoch advances): races
//   between the threads of a named barrier and threads outside it are not
//   detected across it.
// - `nvvm.setmaxregister increase|decrease N` (setmaxnreg.inc/.dec.sync
//   .aligned.u32): executed by all 128 threads of a warpgroup together; N in
//   [24, 256], a multiple of 8; an increase must not lower the warpgroup's
//   count nor a decrease raise it. When every warpgroup of the block has set
//   its count, their sum times 128 threads must fit the SM's 65536
//   registers, or the increase waits forever (reported as a deadlock).
//
//===----------------------------------------------------------------------===//

#include "Interp.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace mlir::attn::gpuemu;

namespace {

constexpr int64_t kRegistersPerSM = 65536;

/// The first active lane of the frame (there is one: ops run only then).
unsigned firstActive(Frame &f) {
  unsigned l = 0;
  while (l < f.lanes && !f.active[l])
    ++l;
  return l;
}

/// Reads an operand that must be the same in every active thread.
LogicalResult uniformOperand(Interp &in, Operation *op, Frame &f, Value v,
                             StringRef what, int64_t &out) {
  Val &val = in.get(f, v);
  unsigned l0 = firstActive(f);
  out = val.at(l0, 0).i;
  LogicalResult res = success();
  in.forActive(f, [&](unsigned l) {
    if (succeeded(res) && val.at(l, 0).i != out)
      res = in.failLane(op, f, l,
                        "the " + what + " differs across the threads (" +
                            Twine(val.at(l, 0).i) + " here, " + Twine(out) +
                            " in thread " + Twine(l0) + ")");
  });
  return res;
}

/// One use of a named barrier by the active warps; `wait`: bar.sync.
LogicalResult namedBarrier(Interp &in, Operation *op, Frame &f, Value idV,
                           Value countV, bool wait) {
  if (!f.isKernel)
    return in.fail(op, "used outside a gpu.launch");
  if (failed(in.checkWarpsConverged(op, f)))
    return failure();
  int64_t id = 0, count = f.lanes;
  if (idV && failed(uniformOperand(in, op, f, idV, "barrier id", id)))
    return failure();
  if (countV &&
      failed(uniformOperand(in, op, f, countV, "thread count", count)))
    return failure();
  unsigned l0 = firstActive(f);
  if (id < 0 || id > 15)
    return in.failLane(op, f, l0,
                       "named barrier id " + Twine(id) + " outside [0, 15]");
  if (count <= 0 || count % 32 != 0 || count > f.lanes)
    return in.failLane(op, f, l0,
                       "named barrier " + Twine(id) + " for " + Twine(count) +
                           " threads: the count must be a positive multiple "
                           "of 32 (whole warps) and at most the block's " +
                           Twine(f.lanes));
  int64_t arriving = 0;
  for (unsigned l = 0; l < f.lanes; l += 32)
    arriving += f.active[l] ? 32 : 0;
  int64_t &arrived = in.namedArrivals[id];
  arrived += arriving;
  if (arrived > count)
    return in.failLane(op, f, l0,
                       "named barrier " + Twine(id) + " for " + Twine(count) +
                           " threads: " + Twine(arrived) +
                           " threads have arrived at this use");
  if (arrived == count) {
    arrived = 0;
    ++in.stats.barriers;
    in.barrier();
    return success();
  }
  if (!wait)
    return success();
  std::string why =
      f.allActive
          ? "every thread of the block is here, so no arrival can come"
          : "the threads that could arrive are on another branch, which "
            "the emulator (one block in lockstep) runs only after this "
            "wait";
  return in.failLane(op, f, l0,
                     "deadlock: named barrier " + Twine(id) + " waits for " +
                         Twine(count) + " threads and " + Twine(arrived) +
                         " have arrived: " + why);
}

LogicalResult execBarrier(Interp &in, Operation *op, Frame &f) {
  auto b = cast<NVVM::BarrierOp>(op);
  if (b.getReductionPredicate())
    return in.fail(op, "barrier reductions (bar.red) are not emulated");
  if (!b.getBarrierId() && !b.getNumberOfThreads() && !f.allActive)
    return in.failLane(op, f, firstActive(f),
                       "nvvm.barrier not reached by every thread of the "
                       "block");
  return namedBarrier(in, op, f, b.getBarrierId(), b.getNumberOfThreads(),
                      /*wait=*/true);
}

LogicalResult execBarrierArrive(Interp &in, Operation *op, Frame &f) {
  auto b = cast<NVVM::BarrierArriveOp>(op);
  return namedBarrier(in, op, f, b.getBarrierId(), b.getNumberOfThreads(),
                      /*wait=*/false);
}

/// fence.proxy.async (all state spaces, or shared::cta): the thread's
/// earlier generic-proxy writes become visible to the async proxy.
LogicalResult execFenceProxy(Interp &in, Operation *op, Frame &f) {
  auto fp = cast<NVVM::FenceProxyOp>(op);
  if (!f.isKernel)
    return in.fail(op, "used outside a gpu.launch");
  NVVM::ProxyKind k = fp.getKind();
  if (k != NVVM::ProxyKind::async && k != NVVM::ProxyKind::async_shared)
    return success(); // other proxies order nothing the emulator models
  int64_t stamp = ++in.proxyClock;
  in.forActive(f, [&](unsigned l) { in.proxyFence[l] = stamp; });
  return success();
}

LogicalResult execSetMaxRegister(Interp &in, Operation *op, Frame &f) {
  auto s = cast<NVVM::SetMaxRegisterOp>(op);
  if (!f.isKernel)
    return in.fail(op, "used outside a gpu.launch");
  int64_t n = s.getRegCount();
  bool inc = s.getAction() == NVVM::SetMaxRegisterAction::increase;
  if (f.lanes % 128 != 0)
    return in.fail(op, "setmaxnreg in a block of " + Twine(f.lanes) +
                           " threads (not whole warpgroups)");
  if (n < 24 || n > 256 || n % 8 != 0)
    return in.fail(op, "setmaxnreg count " + Twine(n) +
                           " (must be a multiple of 8 in [24, 256])");
  for (unsigned w = 0; w < f.lanes / 128; ++w) {
    unsigned active = 0;
    for (unsigned l = w * 128; l < w * 128 + 128; ++l)
      active += f.active[l] ? 1 : 0;
    if (active == 0)
      continue;
    if (active != 128)
      return in.failLane(op, f, w * 128,
                         "setmaxnreg executed by " + Twine(active) +
                             " of the 128 threads of warpgroup " + Twine(w) +
                             " (it is warpgroup-aligned)");
    WarpgroupState &wg = in.warpgroups[w];
    if (wg.maxRegisters != 0 &&
        (inc ? n < wg.maxRegisters : n > wg.maxRegisters))
      return in.failLane(op, f, w * 128,
                         Twine("setmaxnreg.") + (inc ? "inc" : "dec") + " to " +
                             Twine(n) + " registers from " +
                             Twine(wg.maxRegisters) + " in warpgroup " +
                             Twine(w));
    wg.maxRegisters = n;
  }
  int64_t total = 0;
  std::string parts;
  for (const WarpgroupState &wg : in.warpgroups) {
    if (wg.maxRegisters == 0)
      return success(); // some warpgroup keeps the launch's count
    total += wg.maxRegisters * 128;
    parts += (parts.empty() ? "" : " + ") + std::to_string(wg.maxRegisters);
  }
  if (total > kRegistersPerSM)
    return in.failLane(op, f, firstActive(f),
                       "deadlock: the warpgroups' register counts (" + parts +
                           ") x 128 threads = " + Twine(total) +
                           " exceed the SM's " + Twine(kRegistersPerSM) +
                           " registers; setmaxnreg.inc waits for registers "
                           "that are never freed");
  return success();
}

} // namespace

void mlir::attn::gpuemu::registerBarrierHandlers(Interp &in) {
  in.registerHandler(TypeID::get<NVVM::BarrierOp>(), execBarrier);
  in.registerHandler(TypeID::get<NVVM::BarrierArriveOp>(), execBarrierArrive);
  in.registerHandler(TypeID::get<NVVM::SetMaxRegisterOp>(), execSetMaxRegister);
  in.registerHandler(TypeID::get<NVVM::FenceProxyOp>(), execFenceProxy);
}
