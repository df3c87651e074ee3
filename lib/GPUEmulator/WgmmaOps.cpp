//===- WgmmaOps.cpp - nvvm.wgmma.* and the LLVM structs they use ----------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// Hopper's warpgroup matrix multiply (PTX "Asynchronous Warpgroup Level
// Matrix Multiply-Accumulate Instructions"), as MLIR 22's NVVM ops state it:
// `nvvm.wgmma.mma_async` with both multiplicands in shared memory, named by
// 64-bit matrix descriptors, and the accumulator an `!llvm.struct` of N/2
// f32 registers per thread.
//
// Written from the PTX ISA:
// - Descriptor: bits 0-13 start address >> 4, 16-29 leading dimension byte
//   offset (LBO) >> 4, 32-45 stride dimension byte offset (SBO) >> 4, 49-51
//   matrix base offset, 62-63 swizzle (0 none, 1 128B, 2 64B, 3 32B).
// - Canonical layouts (CuTe notation, T elements per 16 bytes, W the swizzle
//   width in bytes), element (mn, k) of an MN x K operand:
//     K-major, none:      (mn%8)*16 + (mn/8)*SBO + (k%T)*e + (k/T)*LBO
//     K-major, swizzled:  (mn%8)*W + (mn/8)*SBO + k*e
//     MN-major, none:     (mn%T)*e + (mn/T)*SBO + (k%8)*16 + (k/8)*LBO
//     MN-major, swizzled: (mn%(W/e))*e + (mn/(W/e))*LBO + (k%8)*W + (k/8)*SBO
//   then the swizzle XORs address bits [4, 4+b) with bits [7, 7+b), b = 3, 2,
//   1 for 128, 64, 32 bytes (Swizzle<b,4,3> on the shared address).
//   layoutA `row` and layoutB `col` are K-major (imm-trans 0).
// - Accumulator fragment of m64nNk16: warp w of the warpgroup holds rows
//   16w..16w+15; lane l holds, for i < N/8, d[4i+j] at row
//   16w + l/4 + 8 (j/2), column 8i + 2 (l%4) + j%2.
// - Ordering: wgmma.fence.aligned must separate other accesses of the
//   accumulator registers from a wgmma.mma_async that uses them (here: an
//   accumulator operand defined by anything but a wgmma.mma_async must be
//   older than the warpgroup's last fence); the results may be read only
//   after wgmma.commit_group and a wgmma.wait_group that retires their group
//   (reading one earlier is an error, as is writing shared memory an
//   operation in flight reads, or ending the block with one in flight).
//
// The multiplicands are read when the operation is issued; products of f16
// and bf16 values are exact in f32 and the sum is accumulated in f32, k in
// order, starting from the accumulator (or zero with scale-d 0), as for
// mma.sync. Not modelled: the async proxy (a generic-proxy write of shared
// memory must be followed by fence.proxy.async before wgmma reads it), A in
// registers, f16 accumulators, k other than 16, a non-zero base offset.
//
//===----------------------------------------------------------------------===//

#include "Interp.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::attn::gpuemu;

//===----------------------------------------------------------------------===//
// Interp helpers: in-flight accumulators, shared-window addresses
//===----------------------------------------------------------------------===//

LogicalResult Interp::checkInflightOperands(Operation *op, Frame &f) {
  auto mma = dyn_cast<NVVM::WgmmaMmaAsyncOp>(op);
  for (OpOperand &use : op->getOpOperands()) {
    if (mma && use.get() == mma.getInouts())
      continue;
    auto it = inflight.find(use.get());
    if (it == inflight.end())
      continue;
    for (unsigned w = 0; w < warpgroups.size() && w < 8; ++w) {
      if (!it->second[w])
        continue;
      for (unsigned l = w * 128; l < std::min(f.lanes, w * 128 + 128); ++l)
        if (f.allActive || f.active[l])
          return failLane(op, f, l,
                          "reads the result of a wgmma.mma_async still in "
                          "flight (operand " +
                              Twine(use.getOperandNumber()) +
                              "): a missing wgmma.commit_group and "
                              "wgmma.wait_group before it");
    }
  }
  return success();
}

LogicalResult Interp::sharedAddress(Operation *op, Frame &f, unsigned lane,
                                    int64_t addr, int64_t len, int32_t &buf,
                                    int64_t &off) {
  for (int32_t id : f.sharedBufs) {
    const Buffer &b = buffers[id];
    if (addr >= b.sharedBase && addr + len <= b.sharedBase + b.bytes) {
      buf = id;
      off = addr - b.sharedBase;
      return success();
    }
  }
  return failLane(op, f, lane,
                  "shared-memory address " + Twine(addr) + " (" + Twine(len) +
                      " bytes) is not inside a shared buffer of the block");
}

namespace {

//===----------------------------------------------------------------------===//
// LLVM structs
//===----------------------------------------------------------------------===//

/// llvm.mlir.zero (zeros), llvm.mlir.undef and llvm.mlir.poison (NaN bit
/// patterns, as fresh shared memory, so that a use shows).
LogicalResult execStructConst(Interp &in, Operation *op, Frame &f) {
  Type t = op->getResult(0).getType();
  EK k;
  if (failed(valueKind(in, op, t, k)))
    return failure();
  unsigned n = numElems(t);
  Val &r = in.def(f, op->getResult(0), n, true);
  bool zero = isa<LLVM::ZeroOp>(op);
  for (unsigned e = 0; e < n; ++e) {
    if (zero && isFloat(k))
      r.at(0, e).f = 0.0;
    else if (zero)
      r.at(0, e).i = 0;
    else if (isFloat(k))
      r.at(0, e).f = std::numeric_limits<double>::quiet_NaN();
    else
      r.at(0, e).i = wrapInt(k, -1);
  }
  return success();
}

LogicalResult structPosition(Interp &in, Operation *op, ArrayRef<int64_t> pos,
                             unsigned n, unsigned &e) {
  if (pos.size() != 1 || pos[0] < 0 || pos[0] >= n)
    return in.fail(op, "only one position inside a struct of scalars is "
                       "emulated");
  e = static_cast<unsigned>(pos[0]);
  return success();
}

LogicalResult execExtractValue(Interp &in, Operation *op, Frame &f) {
  auto ex = cast<LLVM::ExtractValueOp>(op);
  EK k;
  if (failed(valueKind(in, op, ex.getContainer().getType(), k)))
    return failure();
  Val &src = in.get(f, ex.getContainer());
  unsigned e = 0;
  if (failed(structPosition(in, op, ex.getPosition(), src.n, e)))
    return failure();
  Val &r = in.def(f, ex.getResult(), 1, src.uniform);
  in.forResult(f, src.uniform, [&](unsigned l) { r.at(l, 0) = src.at(l, e); });
  return success();
}

LogicalResult execInsertValue(Interp &in, Operation *op, Frame &f) {
  auto ins = cast<LLVM::InsertValueOp>(op);
  EK k;
  if (failed(valueKind(in, op, ins.getContainer().getType(), k)))
    return failure();
  Val &src = in.get(f, ins.getContainer());
  Val &x = in.get(f, ins.getValue());
  unsigned e = 0;
  if (failed(structPosition(in, op, ins.getPosition(), src.n, e)))
    return failure();
  bool uniform = src.uniform && x.uniform;
  unsigned n = src.n;
  // Copy first: the result may share storage with nothing, but src and x
  // are read per lane below.
  Val tmp;
  tmp.uniform = uniform;
  tmp.n = n;
  tmp.data.resize(static_cast<size_t>(uniform ? 1 : f.lanes) * n);
  in.forResult(f, uniform, [&](unsigned l) {
    for (unsigned i = 0; i < n; ++i)
      tmp.at(l, i) = src.at(l, i);
    tmp.at(l, e) = x.at(l, 0);
  });
  Val &r = in.def(f, ins.getResult(), n, uniform);
  r.data = std::move(tmp.data);
  return success();
}

//===----------------------------------------------------------------------===//
// wgmma
//===----------------------------------------------------------------------===//

/// Checks that every warpgroup of the block is entirely active or entirely
/// inactive and that the block is made of whole warpgroups.
LogicalResult checkWarpgroupsConverged(Interp &in, Operation *op, Frame &f) {
  if (f.lanes % 128 != 0)
    return in.fail(op, "a warpgroup-level op in a block of " + Twine(f.lanes) +
                           " threads (not a multiple of 128)");
  if (f.allActive)
    return success();
  for (unsigned w = 0; w < f.lanes / 128; ++w) {
    unsigned n = 0;
    for (unsigned l = w * 128; l < w * 128 + 128; ++l)
      n += f.active[l] ? 1 : 0;
    if (n != 0 && n != 128)
      return in.failLane(op, f, w * 128,
                         "a warpgroup-level op executed by " + Twine(n) +
                             " of the 128 threads of a warpgroup (divergent "
                             "control flow)");
  }
  return success();
}

template <typename F> void forActiveWarpgroups(Frame &f, F fn) {
  for (unsigned w = 0; w < f.lanes / 128; ++w)
    if (f.allActive || f.active[w * 128])
      fn(w);
}

LogicalResult execFence(Interp &in, Operation *op, Frame &f) {
  if (failed(checkWarpgroupsConverged(in, op, f)))
    return failure();
  forActiveWarpgroups(
      f, [&](unsigned w) { in.warpgroups[w].fenceStamp = in.stats.ops; });
  return success();
}

LogicalResult execCommit(Interp &in, Operation *op, Frame &f) {
  if (failed(checkWarpgroupsConverged(in, op, f)))
    return failure();
  forActiveWarpgroups(f, [&](unsigned w) {
    WarpgroupState &s = in.warpgroups[w];
    s.committed.push_back(std::move(s.open));
    s.open = WgmmaGroup();
  });
  return success();
}

void retireGroup(Interp &in, unsigned w, WgmmaGroup &g) {
  for (Value v : g.results) {
    auto it = in.inflight.find(v);
    if (it == in.inflight.end())
      continue;
    --it->second[w];
    if (llvm::all_of(it->second, [](uint16_t c) { return c == 0; }))
      in.inflight.erase(it);
  }
  for (auto [buf, off, len] : g.reads) {
    Buffer &b = in.buffer(buf);
    for (int64_t i = off; i < off + len; ++i)
      --b.asyncReads[i];
  }
}

LogicalResult execWait(Interp &in, Operation *op, Frame &f) {
  auto wait = cast<NVVM::WgmmaWaitGroupSyncOp>(op);
  if (failed(checkWarpgroupsConverged(in, op, f)))
    return failure();
  size_t keep = static_cast<size_t>(wait.getGroup());
  forActiveWarpgroups(f, [&](unsigned w) {
    WarpgroupState &s = in.warpgroups[w];
    while (s.committed.size() > keep) {
      retireGroup(in, w, s.committed.front());
      s.committed.pop_front();
    }
  });
  return success();
}

/// A shared-memory multiplicand named by a matrix descriptor.
struct Operand {
  int64_t start, lbo, sbo;
  unsigned swizzleBytes; // 0 (none), 32, 64 or 128
  bool kMajor;
  unsigned elemBytes;

  /// The shared-window address of element (mn, k).
  int64_t address(int64_t mn, int64_t k) const {
    int64_t e = elemBytes, t = 16 / e, off;
    if (kMajor) {
      off = swizzleBytes == 0
                ? (mn % 8) * 16 + (mn / 8) * sbo + (k % t) * e + (k / t) * lbo
                : (mn % 8) * swizzleBytes + (mn / 8) * sbo + k * e;
    } else {
      int64_t w = swizzleBytes / e;
      off = swizzleBytes == 0
                ? (mn % t) * e + (mn / t) * sbo + (k % 8) * 16 + (k / 8) * lbo
                : (mn % w) * e + (mn / w) * lbo + (k % 8) * swizzleBytes +
                      (k / 8) * sbo;
    }
    int64_t a = start + off;
    if (swizzleBytes != 0) {
      int64_t mask = swizzleBytes / 16 - 1;
      a ^= ((a >> 7) & mask) << 4;
    }
    return a;
  }
};

LogicalResult decodeDescriptor(Interp &in, Operation *op, Frame &f,
                               unsigned lane, uint64_t d, bool kMajor,
                               unsigned elemBytes, Operand &out) {
  out.start = static_cast<int64_t>(d & 0x3FFF) << 4;
  out.lbo = static_cast<int64_t>((d >> 16) & 0x3FFF) << 4;
  out.sbo = static_cast<int64_t>((d >> 32) & 0x3FFF) << 4;
  unsigned base = static_cast<unsigned>((d >> 49) & 7);
  static const unsigned widths[4] = {0, 128, 64, 32};
  out.swizzleBytes = widths[d >> 62];
  out.kMajor = kMajor;
  out.elemBytes = elemBytes;
  if (base != 0)
    return in.failLane(op, f, lane,
                       "a matrix descriptor with a non-zero base offset is "
                       "not emulated");
  return success();
}

LogicalResult execMmaAsync(Interp &in, Operation *op, Frame &f) {
  auto mma = cast<NVVM::WgmmaMmaAsyncOp>(op);
  NVVM::MMAShapeAttr shape = mma.getShape();
  int64_t m = shape.getM(), n = shape.getN(), kDim = shape.getK();
  NVVM::WGMMATypes ta = mma.getTypeA(), tb = mma.getTypeB(),
                   td = mma.getTypeD();
  bool f16In = ta == NVVM::WGMMATypes::f16 || ta == NVVM::WGMMATypes::bf16;
  if (m != 64 || kDim != 16 || n % 8 != 0 || n < 8 || n > 256 || !f16In ||
      tb != ta || td != NVVM::WGMMATypes::f32)
    return in.fail(op, "only wgmma.mma_async m64nNk16 with f16 or bf16 "
                       "multiplicands and f32 accumulators is emulated");
  Type accType = mma.getInouts().getType();
  EK kd;
  if (failed(valueKind(in, op, accType, kd)))
    return failure();
  if (kd != EK::F32 || numElems(accType) != static_cast<unsigned>(n / 2))
    return in.fail(op, "the accumulator must be a struct of N/2 = " +
                           Twine(n / 2) + " f32");
  if (failed(checkWarpgroupsConverged(in, op, f)))
    return failure();
  EK ke = ta == NVVM::WGMMATypes::f16 ? EK::F16 : EK::BF16;
  bool aK = mma.getLayoutA() == NVVM::MMALayout::row;
  bool bK = mma.getLayoutB() == NVVM::MMALayout::col;
  double signA = mma.getScaleA() == NVVM::WGMMAScaleIn::neg ? -1.0 : 1.0;
  double signB = mma.getScaleB() == NVVM::WGMMAScaleIn::neg ? -1.0 : 1.0;
  bool accumulate = mma.getScaleD() == NVVM::WGMMAScaleOut::one;

  Val &descA = in.get(f, mma.getDescriptorA());
  Val &descB = in.get(f, mma.getDescriptorB());
  Val &c = in.get(f, mma.getInouts());
  Val &d = in.def(f, mma.getResults(), static_cast<unsigned>(n / 2), false);
  LogicalResult res = success();
  std::vector<float> A(64 * 16), B(static_cast<size_t>(n) * 16);
  std::vector<float> C(64 * static_cast<size_t>(n));
  forActiveWarpgroups(f, [&](unsigned w) {
    if (failed(res))
      return;
    unsigned l0 = w * 128;
    WarpgroupState &s = in.warpgroups[w];
    // The fence rule, and descriptors the same in the whole warpgroup.
    if (!mma.getInouts().getDefiningOp<NVVM::WgmmaMmaAsyncOp>() &&
        (s.fenceStamp == 0 || c.stamp >= s.fenceStamp)) {
      res = in.failLane(op, f, l0,
                        "the accumulator was written after the warpgroup's "
                        "last wgmma.fence.aligned (or there is none): a "
                        "missing wgmma.fence before wgmma.mma_async");
      return;
    }
    for (unsigned l = l0; l < l0 + 128; ++l)
      if (descA.at(l, 0).i != descA.at(l0, 0).i ||
          descB.at(l, 0).i != descB.at(l0, 0).i) {
        res = in.failLane(op, f, l,
                          "the matrix descriptors differ between the threads "
                          "of a warpgroup");
        return;
      }
    Operand opA, opB;
    if (failed(
            decodeDescriptor(in, op, f, l0, descA.at(l0, 0).i, aK, 2, opA)) ||
        failed(
            decodeDescriptor(in, op, f, l0, descB.at(l0, 0).i, bK, 2, opB))) {
      res = failure();
      return;
    }
    // Read the multiplicands (bounds, races and copies in flight checked as
    // the warpgroup's first thread), recording the bytes in flight.
    auto readElem = [&](const Operand &o, int64_t mn, int64_t k,
                        float &out) -> LogicalResult {
      int64_t addr = o.address(mn, k);
      int32_t buf;
      int64_t off;
      if (failed(in.sharedAddress(op, f, l0, addr, 2, buf, off)) ||
          failed(in.noteRead(op, f, l0, buf, off, 2)) ||
          failed(in.checkAsyncProxyRead(op, f, l0, buf, off, 2)))
        return failure();
      out = static_cast<float>(loadElem(ke, in.buffer(buf).data + off).f);
      s.open.reads.emplace_back(buf, off, 2);
      ++in.buffer(buf).asyncReads[off];
      ++in.buffer(buf).asyncReads[off + 1];
      return success();
    };
    for (int64_t i = 0; i < 64 && succeeded(res); ++i)
      for (int64_t k = 0; k < 16 && succeeded(res); ++k)
        res = readElem(opA, i, k, A[i * 16 + k]);
    for (int64_t j = 0; j < n && succeeded(res); ++j)
      for (int64_t k = 0; k < 16 && succeeded(res); ++k)
        res = readElem(opB, j, k, B[j * 16 + k]);
    if (failed(res))
      return;
    // The accumulator fragments in, the products, the fragments out.
    auto pos = [](unsigned lane, unsigned e, int64_t &row, int64_t &col) {
      unsigned warp = lane / 32, ln = lane % 32, i = e / 4, j = e % 4;
      row = 16 * warp + ln / 4 + 8 * (j / 2);
      col = 8 * i + 2 * (ln % 4) + j % 2;
    };
    for (unsigned t = 0; t < 128; ++t)
      for (unsigned e = 0; e < n / 2; ++e) {
        int64_t row, col;
        pos(t, e, row, col);
        C[row * n + col] =
            accumulate ? static_cast<float>(c.at(l0 + t, e).f) : 0.0f;
      }
    for (unsigned t = 0; t < 128; ++t)
      for (unsigned e = 0; e < n / 2; ++e) {
        int64_t row, col;
        pos(t, e, row, col);
        float acc = C[row * n + col];
        for (int64_t k = 0; k < 16; ++k)
          acc += static_cast<float>(signA * A[row * 16 + k]) *
                 static_cast<float>(signB * B[col * 16 + k]);
        d.at(l0 + t, e).f = acc;
      }
    ++in.stats.wgmmas;
    s.open.results.push_back(mma.getResults());
    ++in.inflight[mma.getResults()][w];
  });
  return res;
}

} // namespace

void mlir::attn::gpuemu::registerWgmmaHandlers(Interp &in) {
  in.registerHandler(TypeID::get<LLVM::ZeroOp>(), execStructConst);
  in.registerHandler(TypeID::get<LLVM::UndefOp>(), execStructConst);
  in.registerHandler(TypeID::get<LLVM::PoisonOp>(), execStructConst);
  in.registerHandler(TypeID::get<LLVM::ExtractValueOp>(), execExtractValue);
  in.registerHandler(TypeID::get<LLVM::InsertValueOp>(), execInsertValue);
  in.registerHandler(TypeID::get<NVVM::WgmmaFenceAlignedOp>(), execFence);
  in.registerHandler(TypeID::get<NVVM::WgmmaGroupSyncAlignedOp>(), execCommit);
  in.registerHandler(TypeID::get<NVVM::WgmmaWaitGroupSyncOp>(), execWait);
  in.registerHandler(TypeID::get<NVVM::WgmmaMmaAsyncOp>(), execMmaAsync);
}
