//===- TmaOps.cpp - nvgpu.tma.* (the tensor memory accelerator) -----------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// Hopper's tensor memory accelerator as MLIR 22's nvgpu ops state it, read
// from the CUDA driver's cuTensorMapEncodeTiled and the PTX ISA's
// cp.async.bulk.tensor:
// - `nvgpu.tma.create.descriptor %t box[b...]` (host code) describes the
//   global tensor `%t` and a box of `b...` elements, outermost dimension
//   first as in the memref (MLIR's runtime reverses both for the driver).
//   The swizzle, the out-of-bounds fill and the interleave come from the
//   descriptor type. The driver's rules are checked here: rank 1 to 5, box
//   sizes 1 to 256, the innermost box row a multiple of 16 bytes and, when
//   swizzled, at most the swizzle width; a 16-byte aligned base, a unit
//   innermost stride and the other strides multiples of 16 bytes.
// - `nvgpu.tma.async.load %d[c...], %bars[i] to %dst` (one per issuing
//   thread): coordinates are in PTX order, INNERMOST DIMENSION FIRST (the
//   op's lowering passes them to cp.async.bulk.tensor unchanged), so c0
//   indexes the memref's last dimension. Elements of the box outside the
//   tensor (before 0 or past its size in any dimension) are filled with
//   zeros (NaN with oob = nan); nothing outside the tensor is read. The box
//   is stored densely in shared memory, row-major, at `%dst` (128-byte
//   aligned), with the 16-byte chunks of the swizzle width XORed with
//   address bits [7, 7 + b) (Swizzle<b,4,3> on the shared address, the
//   pattern wgmma's descriptors read; WgmmaOps.cpp).
// - The load reads global memory when issued and signals its bytes to the
//   mbarrier as completed transactions; the bytes land in shared memory
//   when the barrier's phase completes (the moment a wait on it can
//   return). Until then, reading or writing them is an error (a missing
//   wait), as is landing on bytes a wgmma in flight reads.
// `nvgpu.tma.prefetch.descriptor` and `nvgpu.tma.fence.descriptor` have no
// effect here. Not emulated: multicast, interleaved layouts, stores.
//
//===----------------------------------------------------------------------===//

#include "Interp.h"

#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace mlir;
using namespace mlir::attn::gpuemu;

LogicalResult Interp::completePhase(Operation *op, Frame &f, unsigned lane,
                                    MBarrierState &s) {
  int32_t record = -1;
  if (!s.landing.empty()) {
    record = static_cast<int32_t>(landings.size());
    landings.push_back({&s, s.phase});
  }
  for (TmaLanding &t : s.landing) {
    Buffer &b = buffers[t.buf];
    for (int64_t i = 0; i < static_cast<int64_t>(t.bytes.size()); ++i) {
      int64_t at = t.off + i;
      --b.tmaPending[at];
      if (b.asyncReads[at])
        return failLane(op, f, lane,
                        "a TMA load lands on shared memory (" + b.name +
                            ", byte " + Twine(at) +
                            ") that a wgmma.mma_async still in flight "
                            "reads");
      if (b.pending[at])
        return failLane(op, f, lane,
                        "a TMA load lands on shared memory (" + b.name +
                            ", byte " + Twine(at) +
                            ") that an asynchronous copy still in flight "
                            "will write");
      // Written by the async proxy: not a thread's write (no race with the
      // threads that wait for the barrier), but initialized.
      b.writer[at] = -3;
      b.writeEpoch[at] = 0;
      b.landedBy[at] = record;
    }
    std::memcpy(b.data + t.off, t.bytes.data(), t.bytes.size());
  }
  s.landing.clear();
  ++s.phase;
  s.pending = s.expected;
  return success();
}

namespace {

unsigned swizzleWidth(nvgpu::TensorMapSwizzleKind k) {
  switch (k) {
  case nvgpu::TensorMapSwizzleKind::SWIZZLE_NONE:
    return 0;
  case nvgpu::TensorMapSwizzleKind::SWIZZLE_32B:
    return 32;
  case nvgpu::TensorMapSwizzleKind::SWIZZLE_64B:
    return 64;
  case nvgpu::TensorMapSwizzleKind::SWIZZLE_128B:
    return 128;
  }
  return 0;
}

LogicalResult execCreateDescriptor(Interp &in, Operation *op, Frame &f) {
  auto c = cast<nvgpu::TmaCreateDescriptorOp>(op);
  if (f.isKernel)
    return in.fail(op, "tensor maps are created by host code");
  auto type = c.getTensorMap().getType();
  if (type.getInterleave() != nvgpu::TensorMapInterleaveKind::INTERLEAVE_NONE)
    return in.fail(op, "interleaved tensor maps are not emulated");
  EK k;
  if (failed(valueKind(in, op, c.getTensor().getType(), k)))
    return failure();
  const MemRefDesc &g = in.get(f, c.getTensor()).ref(0);
  TensorMap t;
  t.global = g;
  t.kind = static_cast<int32_t>(k);
  t.swizzleBytes = swizzleWidth(type.getSwizzle());
  t.nanFill = type.getOob() == nvgpu::TensorMapOOBKind::OOB_NAN;
  int64_t rank = g.rank;
  if (rank < 1 || rank > 5 ||
      static_cast<int64_t>(c.getBoxDimensions().size()) != rank)
    return in.fail(op, "a tensor map needs rank 1 to 5 and one box size per "
                       "dimension (rank " +
                           Twine(rank) + ", " +
                           Twine(c.getBoxDimensions().size()) + " box sizes)");
  unsigned eb = byteSize(k);
  for (int64_t d = 0; d < rank; ++d) {
    t.box[d] = in.get(f, c.getBoxDimensions()[d]).at(0, 0).i;
    if (t.box[d] < 1 || t.box[d] > 256)
      return in.fail(op, "tensor map box size " + Twine(t.box[d]) +
                             " in dimension " + Twine(d) + " outside [1, 256]");
  }
  int64_t rowBytes = t.box[rank - 1] * eb;
  if (rowBytes % 16 != 0)
    return in.fail(op, "the innermost box dimension (" + Twine(rowBytes) +
                           " bytes) must be a multiple of 16 bytes");
  if (t.swizzleBytes != 0 && rowBytes > t.swizzleBytes)
    return in.fail(op, "the innermost box dimension (" + Twine(rowBytes) +
                           " bytes) exceeds the swizzle width (" +
                           Twine(t.swizzleBytes) + " bytes)");
  const Buffer &b = in.buffer(g.buf);
  int64_t addr = static_cast<int64_t>(reinterpret_cast<intptr_t>(b.data)) +
                 g.base + g.offset * eb;
  if (addr % 16 != 0)
    return in.fail(op, "a tensor map's global address must be 16-byte "
                       "aligned");
  if (g.strides[rank - 1] != 1)
    return in.fail(op, "a tensor map's innermost dimension must be "
                       "contiguous (stride 1)");
  for (int64_t d = 0; d + 1 < rank; ++d)
    if ((g.strides[d] * eb) % 16 != 0)
      return in.fail(op, "tensor map stride " + Twine(g.strides[d] * eb) +
                             " bytes (dimension " + Twine(d) +
                             ") is not a multiple of 16");
  in.tensorMaps.push_back(t);
  Val &r = in.def(f, c.getTensorMap(), 1, true);
  r.at(0, 0).i = static_cast<int64_t>(in.tensorMaps.size() - 1);
  return success();
}

LogicalResult execNothing(Interp &, Operation *, Frame &) { return success(); }

LogicalResult execAsyncLoad(Interp &in, Operation *op, Frame &f) {
  auto ld = cast<nvgpu::TmaAsyncLoadOp>(op);
  if (!f.isKernel)
    return in.fail(op, "used outside a gpu.launch");
  if (ld.getMulticastMask())
    return in.fail(op, "TMA multicast is not emulated");
  Val &desc = in.get(f, ld.getTensorMapDescriptor());
  Val &dst = in.get(f, ld.getDst());
  auto group = ld.getBarriers();
  LogicalResult res = success();
  SmallVector<int64_t> coords;
  in.forActive(f, [&](unsigned l) {
    if (failed(res))
      return;
    if (Value p = ld.getPredicate())
      if (in.get(f, p).at(l, 0).i == 0)
        return;
    int64_t ti = desc.at(l, 0).i;
    if (ti < 0 || ti >= static_cast<int64_t>(in.tensorMaps.size())) {
      res = in.failLane(op, f, l, "not a tensor map");
      return;
    }
    const TensorMap &t = in.tensorMaps[ti];
    const MemRefDesc &g = t.global;
    EK k = static_cast<EK>(t.kind);
    unsigned eb = byteSize(k);
    int64_t rank = g.rank;
    readIndices(in, f, ld.getCoordinates(), l, coords);
    if (static_cast<int64_t>(coords.size()) != rank) {
      res =
          in.failLane(op, f, l,
                      "a TMA load of a rank-" + Twine(rank) +
                          " tensor map needs " + Twine(rank) + " coordinates");
      return;
    }
    // The destination: a shared buffer, 128-byte aligned, holding the box.
    const MemRefDesc &m = dst.ref(l);
    Buffer &sb = in.buffer(m.buf);
    int64_t boxElems = 1;
    for (int64_t d = 0; d < rank; ++d)
      boxElems *= t.box[d];
    int64_t bytes = boxElems * eb;
    int64_t off = m.base + m.offset * eb;
    if (!sb.shared) {
      res = in.failLane(op, f, l,
                        "a TMA load's destination must be shared "
                        "memory");
      return;
    }
    if ((sb.sharedBase + off) % 128 != 0) {
      res = in.failLane(op, f, l,
                        "a TMA load's shared-memory destination (address " +
                            Twine(sb.sharedBase + off) +
                            ") must be 128-byte aligned");
      return;
    }
    if (off < 0 || off + bytes > sb.bytes) {
      res = in.failLane(op, f, l,
                        "a TMA load's box (" + Twine(bytes) +
                            " bytes) does not fit its destination at byte " +
                            Twine(off) + " of " + sb.name);
      return;
    }
    MBarrierState *bar;
    if (failed(res = barrierOf(in, op, f, l, group, ld.getMbarId(), bar)))
      return;
    if (!bar->initialized) {
      res = in.failLane(op, f, l,
                        "a TMA load signals mbarrier " + Twine(bar->index) +
                            " before nvgpu.mbarrier.init");
      return;
    }
    // Read the box (zero or NaN outside the tensor), lay it out densely,
    // swizzle on the shared address.
    TmaLanding land;
    land.buf = m.buf;
    land.off = off;
    land.bytes.assign(static_cast<size_t>(bytes), 0);
    const Buffer &gb = in.buffer(g.buf);
    int64_t idx[kMaxRank] = {};
    for (int64_t e = 0; e < boxElems; ++e) {
      int64_t rem = e;
      for (int64_t d = rank - 1; d >= 0; --d) {
        idx[d] = rem % t.box[d];
        rem /= t.box[d];
      }
      bool inside = true;
      int64_t elem = g.offset;
      for (int64_t d = 0; d < rank; ++d) {
        int64_t gi = coords[rank - 1 - d] + idx[d];
        if (gi < 0 || gi >= g.sizes[d])
          inside = false;
        elem += gi * g.strides[d];
      }
      Slot v;
      if (!inside) {
        if (isFloat(k) && t.nanFill)
          v.f = std::numeric_limits<double>::quiet_NaN();
        else if (isFloat(k))
          v.f = 0.0;
        else
          v.i = 0;
      } else {
        int64_t at = g.base + elem * eb;
        if (at < 0 || at + eb > gb.bytes) {
          res = in.failLane(op, f, l,
                            "a TMA load reads byte " + Twine(at) + " outside " +
                                gb.name);
          return;
        }
        v = loadElem(k, gb.data + at);
      }
      int64_t a = sb.sharedBase + off + e * eb;
      if (t.swizzleBytes != 0) {
        int64_t mask = t.swizzleBytes / 16 - 1;
        a ^= ((a >> 7) & mask) << 4;
      }
      int64_t pos = a - sb.sharedBase - off;
      if (pos < 0 || pos + eb > bytes) {
        res = in.failLane(op, f, l,
                          "a swizzled TMA box must span whole 128-byte "
                          "rows of the swizzle pattern");
        return;
      }
      storeElem(k, land.bytes.data() + pos, v);
    }
    for (int64_t i = off; i < off + bytes; ++i) {
      if (sb.tmaPending[i]) {
        res = in.failLane(op, f, l,
                          "a TMA load writes shared memory (" + sb.name +
                              ", byte " + Twine(i) +
                              ") that another TMA load in flight writes");
        return;
      }
      ++sb.tmaPending[i];
    }
    bar->landing.push_back(std::move(land));
    bar->txBytes -= bytes;
    if (bar->pending == 0 && bar->txBytes == 0)
      res = in.completePhase(op, f, l, *bar);
  });
  return res;
}

} // namespace

void mlir::attn::gpuemu::registerTmaHandlers(Interp &in) {
  in.registerHandler(TypeID::get<nvgpu::TmaCreateDescriptorOp>(),
                     execCreateDescriptor);
  in.registerHandler(TypeID::get<nvgpu::TmaAsyncLoadOp>(), execAsyncLoad);
  in.registerHandler(TypeID::get<nvgpu::TmaPrefetchOp>(), execNothing);
  in.registerHandler(TypeID::get<nvgpu::TmaFenceOp>(), execNothing);
}
