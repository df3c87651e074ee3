//===- Interp.cpp - the emulator's driver: frames, dispatch, memory -------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "Interp.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::gpuemu;

Interp::Interp(ModuleOp module, const EmulatorOptions &options)
    : options(options), module(module) {
  registerArithHandlers(*this);
  registerVectorHandlers(*this);
  registerMemRefHandlers(*this);
  registerGPUHandlers(*this);
  registerNVGPUHandlers(*this);
  registerMBarrierHandlers(*this);
  registerWgmmaHandlers(*this);
  registerTmaHandlers(*this);
  registerBarrierHandlers(*this);
  registerControlFlowHandlers(*this);
}

void Interp::numberValues(Operation *root) {
  root->walk([&](Operation *op) {
    for (Value r : op->getResults())
      ids.try_emplace(r, ids.size());
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (Value a : block.getArguments())
          ids.try_emplace(a, ids.size());
  });
}

unsigned Interp::id(Value v) {
  auto it = ids.find(v);
  assert(it != ids.end() && "value not numbered");
  return it->second;
}

Val &Interp::get(Frame &f, Value v) {
  unsigned i = id(v);
  for (Frame *fr = &f; fr; fr = fr->parent) {
    Val &x = fr->vals[i];
    if (x.defined)
      return x;
  }
  // Verified IR defines values before their uses: a handler left a result
  // undefined. Report it (execOp stops at the error) and hand out zeros.
  Operation *def = v.getDefiningOp();
  if (!def)
    def = v.getParentBlock()->getParentOp();
  (void)fail(def, "the GPU emulator left a value of this op undefined "
                  "(an emulator bug)");
  static Val dummy = [] {
    Val d;
    d.defined = true;
    d.data.assign(4096, Slot{0});
    d.refs.assign(1, MemRefDesc());
    return d;
  }();
  return dummy;
}

Val &Interp::def(Frame &f, Value v, unsigned n, bool uniform) {
  Val &x = f.vals[id(v)];
  x.defined = true;
  x.isRef = false;
  x.uniform = uniform || f.lanes == 1;
  x.n = n;
  x.stamp = stats.ops;
  x.data.resize(static_cast<size_t>(x.uniform ? 1 : f.lanes) * n);
  return x;
}

Val &Interp::defRef(Frame &f, Value v, bool uniform) {
  Val &x = f.vals[id(v)];
  x.defined = true;
  x.isRef = true;
  x.uniform = uniform || f.lanes == 1;
  x.n = 0;
  x.refs.resize(x.uniform ? 1 : f.lanes);
  return x;
}

void Interp::assignMasked(Frame &f, Val &dst, const Val &src) {
  if (f.allActive || !dst.defined || f.lanes == 1) {
    dst.defined = true;
    dst.isRef = src.isRef;
    dst.uniform = src.uniform;
    dst.n = src.n;
    dst.data = src.data;
    dst.refs = src.refs;
    return;
  }
  // Expand `dst` to one value per thread, then overwrite the active ones.
  if (dst.uniform) {
    if (dst.isRef) {
      MemRefDesc d = dst.refs[0];
      dst.refs.assign(f.lanes, d);
    } else {
      std::vector<Slot> one(dst.data.begin(), dst.data.begin() + dst.n);
      dst.data.resize(static_cast<size_t>(f.lanes) * dst.n);
      for (unsigned l = 0; l < f.lanes; ++l)
        std::copy(one.begin(), one.end(), dst.data.begin() + l * dst.n);
    }
    dst.uniform = false;
  }
  forActive(f, [&](unsigned l) {
    if (dst.isRef)
      dst.refs[l] = src.refs[src.uniform ? 0 : l];
    else
      for (unsigned e = 0; e < dst.n; ++e)
        dst.data[l * dst.n + e] = src.at(l, e);
  });
}

bool Interp::isUniformOverActive(Frame &f, const Val &v) {
  if (v.uniform)
    return true;
  int first = -1;
  bool same = true;
  forActive(f, [&](unsigned l) {
    if (!same)
      return;
    if (first < 0) {
      first = static_cast<int>(l);
      return;
    }
    for (unsigned e = 0; e < v.n; ++e)
      if (v.at(l, e).i != v.at(first, e).i)
        same = false;
  });
  return same;
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

std::string Interp::threadName(Frame &f, unsigned lane) {
  if (!f.isKernel)
    return "host";
  int64_t bx = f.blockDim[0], by = f.blockDim[1];
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "block (" << f.blockId[0] << ", " << f.blockId[1] << ", "
     << f.blockId[2] << "), thread (" << lane % bx << ", " << (lane / bx) % by
     << ", " << lane / (bx * by) << ") [warp " << lane / 32 << ", lane "
     << lane % 32 << "]";
  return s;
}

/// `file:line:col` of the first file location in `loc`, or its printed
/// form.
static void printLocation(Location loc, llvm::raw_ostream &os) {
  FileLineColLoc file;
  loc->walk([&](Location l) {
    if (auto f = dyn_cast<FileLineColLoc>(l)) {
      file = f;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (file)
    os << file.getFilename().getValue() << ":" << file.getLine() << ":"
       << file.getColumn();
  else
    loc.print(os);
}

LogicalResult Interp::fail(Operation *op, const Twine &msg) {
  if (!error.empty())
    return failure();
  llvm::raw_string_ostream os(error);
  if (op) {
    printLocation(op->getLoc(), os);
    os << ": '" << op->getName() << "': ";
  }
  os << msg;
  return failure();
}

LogicalResult Interp::failLane(Operation *op, Frame &f, unsigned lane,
                               const Twine &msg) {
  return fail(op, msg + " (" + threadName(f, lane) + ")");
}

//===----------------------------------------------------------------------===//
// Execution
//===----------------------------------------------------------------------===//

LogicalResult Interp::execOp(Operation *op, Frame &f) {
  if (++stats.ops > options.maxOps)
    return fail(op, "more than " + Twine(options.maxOps) +
                        " operations interpreted: the kernel does not "
                        "terminate? (EmulatorOptions::maxOps)");
  auto it = handlers.find(op->getName().getTypeID());
  if (it == handlers.end())
    return fail(op, "the GPU emulator does not support this op");
  if (!inflight.empty() && failed(checkInflightOperands(op, f)))
    return failure();
  if (failed(it->second(*this, op, f)) || !error.empty())
    return failure();
  return success();
}

LogicalResult Interp::execBlock(Block &block, Frame &f) {
  for (Operation &op : block.without_terminator())
    if (failed(execOp(&op, f)))
      return failure();
  return success();
}

LogicalResult Interp::execRegion(Region &region, Frame &f, ArrayRef<Val *> args,
                                 SmallVectorImpl<Val *> &yielded) {
  if (!region.hasOneBlock())
    return fail(region.getParentOp(),
                "the GPU emulator supports single-block regions only");
  Block &block = region.front();
  for (auto [arg, v] : llvm::zip(block.getArguments(), args)) {
    Val &dst = f.vals[id(arg)];
    dst.defined = true;
    dst.stamp = stats.ops;
    dst.isRef = v->isRef;
    dst.uniform = v->uniform;
    dst.n = v->n;
    dst.data = v->data;
    dst.refs = v->refs;
  }
  if (failed(execBlock(block, f)))
    return failure();
  yielded.clear();
  for (Value v : block.getTerminator()->getOperands())
    yielded.push_back(&get(f, v));
  return success();
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

int32_t Interp::addBuffer(Buffer b) {
  buffers.push_back(std::move(b));
  Buffer &nb = buffers.back();
  if (!nb.owned.empty())
    nb.data = nb.owned.data();
  if (nb.shared) {
    size_t n = static_cast<size_t>(nb.bytes);
    nb.writer.assign(n, -1);
    nb.reader.assign(n, -1);
    nb.writeEpoch.assign(n, 0);
    nb.readEpoch.assign(n, 0);
    nb.pending.assign(n, 0);
    nb.asyncReads.assign(n, 0);
    nb.tmaPending.assign(n, 0);
    nb.landedBy.assign(n, -1);
    nb.genericStamp.assign(n, 0);
  }
  return static_cast<int32_t>(buffers.size() - 1);
}

LogicalResult Interp::address(Operation *op, Frame &f, unsigned lane,
                              const MemRefDesc &m, ArrayRef<int64_t> indices,
                              unsigned elemBytes, int64_t count,
                              int64_t &byteOff) {
  if (m.buf < 0)
    return failLane(op, f, lane, "access through a memref with no buffer");
  if (static_cast<int32_t>(indices.size()) != m.rank)
    return failLane(op, f, lane, "index count differs from the memref rank");
  int64_t lin = m.offset;
  bool inBounds = true;
  for (int32_t d = 0; d < m.rank; ++d) {
    int64_t hi = d == m.rank - 1 ? indices[d] + count : indices[d] + 1;
    if (indices[d] < 0 || hi > m.sizes[d])
      inBounds = false;
    lin += indices[d] * m.strides[d];
  }
  Buffer &b = buffers[m.buf];
  byteOff = m.base + lin * static_cast<int64_t>(elemBytes);
  int64_t len = count * elemBytes;
  if (m.rank > 0 && count > 1 && m.strides[m.rank - 1] != 1)
    return failLane(op, f, lane,
                    "vector access along a non-unit innermost stride");
  if (!inBounds || byteOff < 0 || byteOff + len > b.bytes) {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << "out-of-bounds access of " << b.name << ": index [";
    llvm::interleaveComma(indices, os);
    os << "]";
    if (count > 1)
      os << " (" << count << " elements)";
    os << " in a memref of shape [";
    llvm::interleaveComma(ArrayRef<int64_t>(m.sizes, m.rank), os);
    os << "]";
    if (inBounds)
      os << ", bytes [" << byteOff << ", " << byteOff + len
         << ") outside the buffer's " << b.bytes;
    return failLane(op, f, lane, s);
  }
  return success();
}

LogicalResult Interp::noteRead(Operation *op, Frame &f, unsigned lane,
                               int32_t buf, int64_t off, int64_t len) {
  Buffer &b = buffers[buf];
  if (!b.shared)
    return success();
  for (int64_t i = off; i < off + len; ++i) {
    if (options.reportAsyncHazards && b.pending[i])
      return failLane(op, f, lane,
                      "reads shared memory (" + b.name + ", byte " + Twine(i) +
                          ") that an asynchronous copy still in flight will "
                          "write: a missing nvgpu.device_async_wait");
    if (b.tmaPending[i])
      return failLane(op, f, lane,
                      "reads shared memory (" + b.name + ", byte " + Twine(i) +
                          ") that a TMA load still in flight will write: a "
                          "missing wait on its mbarrier");
    if (b.landedBy[i] >= 0) {
      const TmaLanded &t = landings[b.landedBy[i]];
      const std::vector<int64_t> &seen = t.barrier->seen;
      if (lane >= seen.size() || seen[lane] <= t.phase)
        return failLane(op, f, lane,
                        "reads shared memory (" + b.name + ", byte " +
                            Twine(i) + ") that a TMA load wrote, without a " +
                            "wait that saw phase " + Twine(t.phase) +
                            " of mbarrier " + Twine(t.barrier->index) +
                            " complete: a missing wait on its mbarrier");
    }
    if (options.detectUninitializedReads && b.writer[i] == -1)
      return failLane(op, f, lane,
                      "reads shared memory (" + b.name + ", byte " + Twine(i) +
                          ") that no thread of the block has written");
    if (options.detectSharedRaces && b.writeEpoch[i] == epoch &&
        b.writer[i] != static_cast<int32_t>(lane))
      return failLane(op, f, lane,
                      "reads shared memory (" + b.name + ", byte " + Twine(i) +
                          ") that thread " + Twine(b.writer[i]) +
                          " wrote since the last barrier: a missing "
                          "gpu.barrier");
    if (b.readEpoch[i] == epoch && b.reader[i] != static_cast<int32_t>(lane))
      b.reader[i] = -2;
    else
      b.reader[i] = static_cast<int32_t>(lane);
    b.readEpoch[i] = epoch;
  }
  return success();
}

LogicalResult Interp::checkAsyncProxyRead(Operation *op, Frame &f,
                                          unsigned lane, int32_t buf,
                                          int64_t off, int64_t len) {
  Buffer &b = buffers[buf];
  if (!b.shared)
    return success();
  for (int64_t i = off; i < off + len; ++i) {
    int32_t w = b.writer[i];
    if (w < 0 || w >= static_cast<int32_t>(proxyFence.size()) ||
        proxyFence[w] > b.genericStamp[i])
      continue;
    return failLane(op, f, lane,
                    "the async proxy reads shared memory (" + b.name +
                        ", byte " + Twine(i) + ") that thread " + Twine(w) +
                        " wrote through the generic proxy (a store or "
                        "cp.async) with no fence.proxy.async after the "
                        "write: a missing nvvm.fence.proxy "
                        "<async.shared> before the barrier");
  }
  return success();
}

LogicalResult Interp::noteWrite(Operation *op, Frame &f, unsigned lane,
                                int32_t buf, int64_t off, int64_t len) {
  Buffer &b = buffers[buf];
  if (!b.shared)
    return success();
  for (int64_t i = off; i < off + len; ++i) {
    if (options.reportAsyncHazards && b.pending[i])
      return failLane(op, f, lane,
                      "writes shared memory (" + b.name + ", byte " + Twine(i) +
                          ") that an asynchronous copy still in flight will "
                          "write");
    if (b.tmaPending[i])
      return failLane(op, f, lane,
                      "writes shared memory (" + b.name + ", byte " + Twine(i) +
                          ") that a TMA load still in flight will write");
    if (b.asyncReads[i])
      return failLane(op, f, lane,
                      "writes shared memory (" + b.name + ", byte " + Twine(i) +
                          ") that a wgmma.mma_async still in flight reads: a "
                          "missing nvvm.wgmma.wait.group.sync.aligned");
    if (options.detectSharedRaces && b.readEpoch[i] == epoch &&
        b.reader[i] != static_cast<int32_t>(lane))
      return failLane(
          op, f, lane,
          "writes shared memory (" + b.name + ", byte " + Twine(i) + ") that " +
              (b.reader[i] == -2 ? Twine("other threads")
                                 : Twine("thread ") + Twine(b.reader[i])) +
              " read since the last barrier: a missing "
              "gpu.barrier");
    b.writer[i] = static_cast<int32_t>(lane);
    b.writeEpoch[i] = epoch;
    b.landedBy[i] = -1;
    b.genericStamp[i] = proxyClock;
  }
  return success();
}

LogicalResult Interp::retireAsync(Operation *op, Frame &f, unsigned lane,
                                  size_t keep) {
  LaneAsyncState &st = f.async[lane];
  while (st.committed.size() > keep) {
    for (AsyncCopy &c : st.committed.front()) {
      Buffer &b = buffers[c.buf];
      for (uint32_t i = 0; i < c.len; ++i)
        --b.pending[c.dst + i];
      if (failed(noteWrite(c.op, f, lane, c.buf, c.dst, c.len)))
        return failure();
      std::memcpy(b.data + c.dst, c.bytes, c.len);
    }
    st.committed.pop_front();
  }
  return success();
}

LogicalResult Interp::checkWarpsConverged(Operation *op, Frame &f) {
  if (f.lanes % 32 != 0)
    return fail(op, "a warp-level op in a block of " + Twine(f.lanes) +
                        " threads (not a multiple of 32)");
  if (f.allActive)
    return success();
  for (unsigned w = 0; w < f.lanes / 32; ++w) {
    unsigned n = 0;
    for (unsigned l = w * 32; l < w * 32 + 32; ++l)
      n += f.active[l] ? 1 : 0;
    if (n != 0 && n != 32)
      return failLane(op, f, w * 32,
                      "a warp-level op executed by " + Twine(n) +
                          " of the 32 threads of a warp (divergent "
                          "control flow)");
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Launch
//===----------------------------------------------------------------------===//

LogicalResult Interp::launch(Operation *op, Frame &host) {
  auto launchOp = cast<gpu::LaunchOp>(op);
  if (!host.allActive || host.isKernel)
    return fail(op, "nested or conditional gpu.launch");
  auto scalar = [&](Value v) { return get(host, v).at(0, 0).i; };
  int64_t grid[3] = {scalar(launchOp.getGridSizeX()),
                     scalar(launchOp.getGridSizeY()),
                     scalar(launchOp.getGridSizeZ())};
  int64_t block[3] = {scalar(launchOp.getBlockSizeX()),
                      scalar(launchOp.getBlockSizeY()),
                      scalar(launchOp.getBlockSizeZ())};
  if (launchOp.hasClusterSize())
    return fail(op, "thread block clusters are not emulated");
  int64_t threads = block[0] * block[1] * block[2];
  if (threads <= 0 || threads > 1024 || grid[0] <= 0 || grid[1] <= 0 ||
      grid[2] <= 0)
    return fail(op, "bad launch configuration: grid (" + Twine(grid[0]) + ", " +
                        Twine(grid[1]) + ", " + Twine(grid[2]) + "), block (" +
                        Twine(block[0]) + ", " + Twine(block[1]) + ", " +
                        Twine(block[2]) + ")");
  int64_t dynBytes = 0;
  if (Value d = launchOp.getDynamicSharedMemorySize())
    dynBytes = scalar(d);
  ++stats.launches;

  // Shared memory: the dynamic buffer and the workgroup attributions, one
  // set per launch, refilled for each block.
  Frame &f = kernelFrame;
  f.lanes = static_cast<unsigned>(threads);
  f.parent = &host;
  f.isKernel = true;
  f.allActive = true;
  f.active.assign(f.lanes, 1);
  f.vals.resize(ids.size());
  std::vector<int32_t> sharedBufs;
  // Addresses in the shared window: the dynamic buffer at 0, each
  // attribution after it at the next 1024-byte boundary (the alignment of
  // 128-byte swizzle atoms).
  int64_t sharedTop = 0;
  auto makeShared = [&](int64_t bytes, std::string name) {
    Buffer b;
    b.shared = true;
    b.bytes = bytes;
    b.sharedBase = sharedTop;
    sharedTop += (std::max<int64_t>(bytes, 1) + 1023) / 1024 * 1024;
    b.owned.assign(static_cast<size_t>(std::max<int64_t>(bytes, 1)), 0xff);
    b.name = std::move(name);
    int32_t id = addBuffer(std::move(b));
    sharedBufs.push_back(id);
    return id;
  };
  f.dynamicSharedBuf = makeShared(dynBytes, "dynamic shared memory");
  SmallVector<std::pair<BlockArgument, int32_t>> attribs;
  for (auto [n, a] : llvm::enumerate(launchOp.getWorkgroupAttributions())) {
    auto type = cast<MemRefType>(a.getType());
    EK k;
    if (!type.hasStaticShape() || !kindOf(type, k))
      return fail(op, "unsupported workgroup attribution type");
    attribs.push_back(
        {a, makeShared(type.getNumElements() * byteSize(k),
                       "workgroup attribution " + std::to_string(n))});
  }
  if (!launchOp.getPrivateAttributions().empty())
    return fail(op, "private attributions are not emulated");
  f.sharedBufs = sharedBufs;

  Region &body = launchOp.getBody();
  if (!body.hasOneBlock())
    return fail(op, "the GPU emulator supports single-block launch bodies");
  int64_t numBlocks = grid[0] * grid[1] * grid[2];
  for (int64_t lin = 0; lin < numBlocks; ++lin) {
    if (!options.onlyBlocks.empty() &&
        !llvm::is_contained(options.onlyBlocks, lin))
      continue;
    ++stats.blocks;
    stats.threads += threads;
    for (Val &v : f.vals)
      v.defined = false;
    f.allActive = true;
    f.async.assign(f.lanes, LaneAsyncState());
    warpgroups.assign((f.lanes + 127) / 128, WarpgroupState());
    namedArrivals.fill(0);
    inflight.clear();
    f.blockId[0] = lin % grid[0];
    f.blockId[1] = (lin / grid[0]) % grid[1];
    f.blockId[2] = lin / (grid[0] * grid[1]);
    for (int d = 0; d < 3; ++d) {
      f.gridDim[d] = grid[d];
      f.blockDim[d] = block[d];
    }
    ++epoch;
    for (int32_t id : sharedBufs) {
      Buffer &b = buffers[id];
      std::fill(b.owned.begin(), b.owned.end(), 0xff);
      std::fill(b.pending.begin(), b.pending.end(), 0);
      std::fill(b.asyncReads.begin(), b.asyncReads.end(), 0);
      std::fill(b.tmaPending.begin(), b.tmaPending.end(), 0);
      std::fill(b.landedBy.begin(), b.landedBy.end(), -1);
      std::fill(b.genericStamp.begin(), b.genericStamp.end(), 0);
      std::fill(b.writer.begin(), b.writer.end(), -1);
    }
    landings.clear();
    proxyFence.assign(f.lanes, 0);
    // Block arguments: ids and sizes.
    auto bindUniform = [&](Value v, int64_t x) {
      Val &r = def(f, v, 1, true);
      r.data[0].i = x;
    };
    gpu::KernelDim3 bids = launchOp.getBlockIds(),
                    tids = launchOp.getThreadIds(),
                    gsz = launchOp.getGridSize(), bsz = launchOp.getBlockSize();
    bindUniform(bids.x, f.blockId[0]);
    bindUniform(bids.y, f.blockId[1]);
    bindUniform(bids.z, f.blockId[2]);
    bindUniform(gsz.x, grid[0]);
    bindUniform(gsz.y, grid[1]);
    bindUniform(gsz.z, grid[2]);
    bindUniform(bsz.x, block[0]);
    bindUniform(bsz.y, block[1]);
    bindUniform(bsz.z, block[2]);
    Value tidVals[3] = {tids.x, tids.y, tids.z};
    for (int d = 0; d < 3; ++d) {
      Val &r = def(f, tidVals[d], 1, block[d] == 1);
      for (unsigned l = 0; l < f.lanes; ++l) {
        int64_t t = d == 0   ? l % block[0]
                    : d == 1 ? (l / block[0]) % block[1]
                             : l / (block[0] * block[1]);
        r.at(l, 0).i = t;
      }
    }
    for (auto [arg, bufId] : attribs) {
      auto type = cast<MemRefType>(arg.getType());
      Val &r = defRef(f, arg, true);
      MemRefDesc &m = r.refs[0];
      m = MemRefDesc();
      m.buf = bufId;
      m.rank = static_cast<int32_t>(type.getRank());
      int64_t stride = 1;
      for (int32_t d = m.rank - 1; d >= 0; --d) {
        m.sizes[d] = type.getDimSize(d);
        m.strides[d] = stride;
        stride *= m.sizes[d];
      }
    }
    if (failed(execBlock(body.front(), f)))
      return failure();
    for (auto [w, wg] : llvm::enumerate(warpgroups))
      if (!wg.open.results.empty() || !wg.committed.empty())
        return failLane(op, f, static_cast<unsigned>(w * 128),
                        "the block ends with wgmma.mma_async operations in "
                        "flight: a missing "
                        "nvvm.wgmma.wait.group.sync.aligned");
  }
  f.isKernel = false;
  f.parent = nullptr;
  return success();
}

//===----------------------------------------------------------------------===//
// Entry
//===----------------------------------------------------------------------===//

llvm::Error Interp::run(StringRef funcName, ArrayRef<EmulatedBuffer> args) {
  auto fn = module.lookupSymbol<func::FuncOp>(funcName);
  auto err = [&](const Twine &msg) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), msg.str());
  };
  if (!fn || fn.isExternal())
    return err("gpu emulator: no function '" + funcName + "' with a body");
  if (fn.getNumArguments() != args.size())
    return err("gpu emulator: '" + funcName + "' takes " +
               Twine(fn.getNumArguments()) + " arguments, " +
               Twine(args.size()) + " given");
  numberValues(fn);
  Frame host;
  host.vals.resize(ids.size());
  host.active.assign(1, 1);
  for (auto [i, arg] : llvm::enumerate(fn.getArguments())) {
    const EmulatedBuffer &a = args[i];
    Type t = arg.getType();
    if (auto mt = dyn_cast<MemRefType>(t)) {
      EK k;
      if (a.isScalar || !kindOf(mt, k))
        return err("gpu emulator: argument " + Twine(i) +
                   " needs a buffer of a supported element type");
      if (static_cast<int64_t>(a.shape.size()) != mt.getRank())
        return err("gpu emulator: argument " + Twine(i) + " has rank " +
                   Twine(a.shape.size()) + ", the function expects " +
                   Twine(mt.getRank()));
      if (mt.getRank() > kMaxRank)
        return err("gpu emulator: rank above 8");
      Buffer b;
      b.data = static_cast<uint8_t *>(a.data);
      b.bytes = a.bytes;
      b.name = "argument #" + std::to_string(i);
      int32_t bufId = addBuffer(std::move(b));
      Val &v = defRef(host, arg, true);
      MemRefDesc &m = v.refs[0];
      m.buf = bufId;
      m.offset = a.offset;
      m.rank = static_cast<int32_t>(mt.getRank());
      int64_t stride = 1;
      for (int32_t d = m.rank - 1; d >= 0; --d) {
        if (!mt.isDynamicDim(d) && mt.getDimSize(d) != a.shape[d])
          return err("gpu emulator: argument " + Twine(i) + " dimension " +
                     Twine(d) + " is " + Twine(a.shape[d]) +
                     ", the function expects " + Twine(mt.getDimSize(d)));
        m.sizes[d] = a.shape[d];
        m.strides[d] = a.strides.empty() ? stride : a.strides[d];
        stride *= a.shape[d];
      }
      continue;
    }
    EK k;
    if (!a.isScalar || !kindOf(t, k) || isa<ShapedType>(t))
      return err("gpu emulator: argument " + Twine(i) +
                 " needs a scalar of a supported type");
    Val &v = def(host, arg, 1, true);
    if (isFloat(k))
      v.data[0].f = roundTo(k, a.floatValue);
    else
      v.data[0].i = wrapInt(k, a.intValue);
  }
  if (failed(execBlock(fn.front(), host)) && error.empty())
    error = "gpu emulator: failed";
  if (options.stats)
    *options.stats = stats;
  if (options.checkStatus)
    *options.checkStatus = error.empty() ? checkStatus : 0;
  if (!error.empty())
    return err(error);
  if (!checkFailure.empty())
    return err(checkFailure);
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Public entry points
//===----------------------------------------------------------------------===//

llvm::Error mlir::attn::emulate(ModuleOp module, StringRef funcName,
                                ArrayRef<EmulatedBuffer> args,
                                const EmulatorOptions &options) {
  Interp interp(module, options);
  return interp.run(funcName, args);
}

void mlir::attn::registerEmulatorDialects(DialectRegistry &registry) {
  registry
      .insert<arith::ArithDialect, cf::ControlFlowDialect, func::FuncDialect,
              gpu::GPUDialect, index::IndexDialect, LLVM::LLVMDialect,
              math::MathDialect, memref::MemRefDialect, NVVM::NVVMDialect,
              nvgpu::NVGPUDialect, scf::SCFDialect, vector::VectorDialect>();
}
