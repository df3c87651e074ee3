//===- GPUOps.cpp - gpu dialect ops: ids, shuffles, barriers --------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// gpu.shuffle follows `shfl.sync` with a full mask (what the NVVM lowering
// of a width-32 shuffle emits): lane l reads from lane l ^ offset (xor),
// l + offset (down), l - offset (up) or offset (idx) of its warp; when that
// lane is outside the warp the result is the thread's own value and `valid`
// is false.
//
//===----------------------------------------------------------------------===//

#include "Interp.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

using namespace mlir;
using namespace mlir::attn::gpuemu;

static int dimIndex(gpu::Dimension d) {
  return d == gpu::Dimension::x ? 0 : d == gpu::Dimension::y ? 1 : 2;
}

static LogicalResult needKernel(Interp &in, Operation *op, Frame &f) {
  if (!f.isKernel)
    return in.fail(op, "used outside a gpu.launch");
  return success();
}

template <typename OpT>
static LogicalResult execUniformDim(Interp &in, Operation *op, Frame &f) {
  if (failed(needKernel(in, op, f)))
    return failure();
  int d = dimIndex(cast<OpT>(op).getDimension());
  Val &r = in.def(f, op->getResult(0), 1, true);
  if constexpr (std::is_same_v<OpT, gpu::BlockIdOp>)
    r.data[0].i = f.blockId[d];
  else if constexpr (std::is_same_v<OpT, gpu::GridDimOp>)
    r.data[0].i = f.gridDim[d];
  else
    r.data[0].i = f.blockDim[d];
  return success();
}

static LogicalResult execThreadId(Interp &in, Operation *op, Frame &f) {
  if (failed(needKernel(in, op, f)))
    return failure();
  int d = dimIndex(cast<gpu::ThreadIdOp>(op).getDimension());
  Val &r = in.def(f, op->getResult(0), 1, false);
  int64_t bx = f.blockDim[0], by = f.blockDim[1];
  for (unsigned l = 0; l < f.lanes; ++l)
    r.at(l, 0).i = d == 0 ? l % bx : d == 1 ? (l / bx) % by : l / (bx * by);
  return success();
}

static LogicalResult execLaneId(Interp &in, Operation *op, Frame &f) {
  if (failed(needKernel(in, op, f)))
    return failure();
  Val &r = in.def(f, op->getResult(0), 1, false);
  for (unsigned l = 0; l < f.lanes; ++l)
    r.at(l, 0).i = l % 32;
  return success();
}

static LogicalResult execSubgroupId(Interp &in, Operation *op, Frame &f) {
  if (failed(needKernel(in, op, f)))
    return failure();
  Val &r = in.def(f, op->getResult(0), 1, f.lanes <= 32);
  for (unsigned l = 0; l < f.lanes; ++l)
    r.at(l, 0).i = l / 32;
  return success();
}

static LogicalResult execNumSubgroups(Interp &in, Operation *op, Frame &f) {
  if (failed(needKernel(in, op, f)))
    return failure();
  Val &r = in.def(f, op->getResult(0), 1, true);
  r.data[0].i = (f.lanes + 31) / 32;
  return success();
}

static LogicalResult execSubgroupSize(Interp &in, Operation *op, Frame &f) {
  Val &r = in.def(f, op->getResult(0), 1, true);
  r.data[0].i = 32;
  return success();
}

static LogicalResult execBarrier(Interp &in, Operation *op, Frame &f) {
  if (failed(needKernel(in, op, f)))
    return failure();
  if (!f.allActive) {
    unsigned l = 0;
    while (l < f.lanes && f.active[l])
      ++l;
    return in.failLane(op, f, l,
                       "gpu.barrier not reached by every thread of the "
                       "block (this thread skips it)");
  }
  ++in.stats.barriers;
  in.barrier();
  return success();
}

static LogicalResult execShuffle(Interp &in, Operation *op, Frame &f) {
  auto sh = cast<gpu::ShuffleOp>(op);
  if (failed(needKernel(in, op, f)) || failed(in.checkWarpsConverged(op, f)))
    return failure();
  ++in.stats.shuffles;
  Val &val = in.get(f, sh.getValue());
  Val &offset = in.get(f, sh.getOffset());
  Val &width = in.get(f, sh.getWidth());
  unsigned n = numElems(sh.getValue().getType());
  LogicalResult res = success();
  in.forActive(f, [&](unsigned l) {
    if (succeeded(res) && width.at(l, 0).i != 32)
      res = in.failLane(op, f, l,
                        "gpu.shuffle width " + Twine(width.at(l, 0).i) +
                            " (the emulator supports width 32)");
  });
  if (failed(res))
    return failure();
  // Read every source before writing: results may not alias the operands,
  // but a shuffle's sources are the values before the shuffle.
  Val &r = in.def(f, sh.getShuffleResult(), n, false);
  Val &valid = in.def(f, sh.getValid(), 1, false);
  gpu::ShuffleMode mode = sh.getMode();
  in.forActive(f, [&](unsigned l) {
    int64_t lane = l % 32, base = l - lane;
    int64_t off = offset.at(l, 0).i, src = 0;
    switch (mode) {
    case gpu::ShuffleMode::XOR:
      src = lane ^ off;
      break;
    case gpu::ShuffleMode::DOWN:
      src = lane + off;
      break;
    case gpu::ShuffleMode::UP:
      src = lane - off;
      break;
    case gpu::ShuffleMode::IDX:
      src = off;
      break;
    }
    bool ok = src >= 0 && src < 32;
    valid.at(l, 0).i = ok ? 1 : 0;
    unsigned from = ok ? static_cast<unsigned>(base + src) : l;
    for (unsigned e = 0; e < n; ++e)
      r.at(l, e) = val.at(from, e);
  });
  return success();
}

static LogicalResult execDynamicShared(Interp &in, Operation *op, Frame &f) {
  if (failed(needKernel(in, op, f)))
    return failure();
  Val &r = in.defRef(f, op->getResult(0), true);
  MemRefDesc &m = r.refs[0];
  m = MemRefDesc();
  m.buf = f.dynamicSharedBuf;
  m.rank = 1;
  m.sizes[0] = in.buffer(f.dynamicSharedBuf).bytes;
  m.strides[0] = 1;
  return success();
}

void mlir::attn::gpuemu::registerGPUHandlers(Interp &in) {
  in.registerHandler(TypeID::get<gpu::ThreadIdOp>(), execThreadId);
  in.registerHandler(TypeID::get<gpu::BlockIdOp>(),
                     execUniformDim<gpu::BlockIdOp>);
  in.registerHandler(TypeID::get<gpu::BlockDimOp>(),
                     execUniformDim<gpu::BlockDimOp>);
  in.registerHandler(TypeID::get<gpu::GridDimOp>(),
                     execUniformDim<gpu::GridDimOp>);
  in.registerHandler(TypeID::get<gpu::LaneIdOp>(), execLaneId);
  in.registerHandler(TypeID::get<gpu::SubgroupIdOp>(), execSubgroupId);
  in.registerHandler(TypeID::get<gpu::NumSubgroupsOp>(), execNumSubgroups);
  in.registerHandler(TypeID::get<gpu::SubgroupSizeOp>(), execSubgroupSize);
  in.registerHandler(TypeID::get<gpu::BarrierOp>(), execBarrier);
  in.registerHandler(TypeID::get<gpu::ShuffleOp>(), execShuffle);
  in.registerHandler(TypeID::get<gpu::DynamicSharedMemoryOp>(),
                     execDynamicShared);
}
