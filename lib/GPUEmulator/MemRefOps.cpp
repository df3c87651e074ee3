//===- MemRefOps.cpp - memref views, loads and stores ---------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// A memref is a view (buffer, aligned pointer, offset, sizes, strides); every
// access checks its indices against the sizes and its bytes against the
// buffer, and reports the first violation with the thread that made it.
//
//===----------------------------------------------------------------------===//

#include "Interp.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include <algorithm>
#include <cstring>

using namespace mlir;
using namespace mlir::attn::gpuemu;

void mlir::attn::gpuemu::readIndices(Interp &in, Frame &f, ValueRange values,
                                     unsigned lane,
                                     SmallVectorImpl<int64_t> &out) {
  out.clear();
  for (Value v : values)
    out.push_back(in.get(f, v).at(lane, 0).i);
}

static int64_t foldValue(Interp &in, Frame &f, OpFoldResult r, unsigned lane) {
  if (auto a = dyn_cast<Attribute>(r))
    return cast<IntegerAttr>(a).getInt();
  return in.get(f, cast<Value>(r)).at(lane, 0).i;
}

static bool foldUniform(Interp &in, Frame &f, ArrayRef<OpFoldResult> rs) {
  for (OpFoldResult r : rs)
    if (auto v = dyn_cast<Value>(r); v && !in.get(f, v).uniform)
      return false;
  return true;
}

static LogicalResult execLoad(Interp &in, Operation *op, Frame &f) {
  auto ld = cast<memref::LoadOp>(op);
  EK k;
  if (failed(valueKind(in, op, ld.getType(), k)))
    return failure();
  Val &mem = in.get(f, ld.getMemRef());
  Val &r = in.def(f, ld.getResult(), 1, false);
  LogicalResult res = success();
  SmallVector<int64_t> idx;
  in.forActive(f, [&](unsigned l) {
    if (failed(res))
      return;
    readIndices(in, f, ld.getIndices(), l, idx);
    const MemRefDesc &m = mem.ref(l);
    int64_t off;
    if (failed(res = in.address(op, f, l, m, idx, byteSize(k), 1, off)) ||
        failed(res = in.noteRead(op, f, l, m.buf, off, byteSize(k))))
      return;
    r.at(l, 0) = loadElem(k, in.buffer(m.buf).data + off);
  });
  return res;
}

static LogicalResult execStore(Interp &in, Operation *op, Frame &f) {
  auto st = cast<memref::StoreOp>(op);
  EK k;
  if (failed(valueKind(in, op, st.getValueToStore().getType(), k)))
    return failure();
  Val &mem = in.get(f, st.getMemRef());
  Val &v = in.get(f, st.getValueToStore());
  LogicalResult res = success();
  SmallVector<int64_t> idx;
  in.forActive(f, [&](unsigned l) {
    if (failed(res))
      return;
    readIndices(in, f, st.getIndices(), l, idx);
    const MemRefDesc &m = mem.ref(l);
    int64_t off;
    if (failed(res = in.address(op, f, l, m, idx, byteSize(k), 1, off)) ||
        failed(res = in.noteWrite(op, f, l, m.buf, off, byteSize(k))))
      return;
    storeElem(k, in.buffer(m.buf).data + off, v.at(l, 0));
  });
  return res;
}

static LogicalResult execDim(Interp &in, Operation *op, Frame &f) {
  auto d = cast<memref::DimOp>(op);
  Val &mem = in.get(f, d.getSource());
  Val &idx = in.get(f, d.getIndex());
  bool uniform = mem.uniform && idx.uniform;
  Val &r = in.def(f, d.getResult(), 1, uniform);
  LogicalResult res = success();
  in.forResult(f, uniform, [&](unsigned l) {
    int64_t i = idx.at(l, 0).i;
    const MemRefDesc &m = mem.ref(l);
    if (i < 0 || i >= m.rank) {
      res = in.failLane(op, f, l, "memref.dim index out of range");
      return;
    }
    r.at(l, 0).i = m.sizes[i];
  });
  return res;
}

/// memref.extract_aligned_pointer_as_index: the address of the aligned
/// pointer (host code compares buffers with it); of shared memory, its
/// address in the block's shared window (what wgmma descriptors hold).
static LogicalResult execAlignedPointer(Interp &in, Operation *op, Frame &f) {
  auto e = cast<memref::ExtractAlignedPointerAsIndexOp>(op);
  Val &mem = in.get(f, e.getSource());
  Val &r = in.def(f, e.getResult(), 1, mem.uniform);
  in.forResult(f, mem.uniform, [&](unsigned l) {
    const MemRefDesc &m = mem.ref(l);
    const Buffer &b = in.buffer(m.buf);
    r.at(l, 0).i =
        b.shared
            ? b.sharedBase + m.base
            : static_cast<int64_t>(reinterpret_cast<intptr_t>(b.data) + m.base);
  });
  return success();
}

/// Result descriptor = source descriptor (memref.cast, assume_alignment,
/// memory_space_cast).
static LogicalResult execSameView(Interp &in, Operation *op, Frame &f) {
  Val &src = in.get(f, op->getOperand(0));
  if (op->getNumResults() == 0)
    return success();
  Val &r = in.defRef(f, op->getResult(0), src.uniform);
  r.refs = src.refs;
  return success();
}

static LogicalResult execView(Interp &in, Operation *op, Frame &f) {
  auto v = cast<memref::ViewOp>(op);
  auto type = v.getType();
  EK k;
  if (failed(valueKind(in, op, type, k)))
    return failure();
  Val &src = in.get(f, v.getSource());
  Val &shift = in.get(f, v.getByteShift());
  bool uniform = src.uniform && shift.uniform;
  SmallVector<Val *> dyn;
  for (Value s : v.getSizes()) {
    dyn.push_back(&in.get(f, s));
    uniform &= dyn.back()->uniform;
  }
  Val &r = in.defRef(f, v.getResult(), uniform);
  LogicalResult res = success();
  in.forResult(f, uniform, [&](unsigned l) {
    const MemRefDesc &s = src.ref(l);
    MemRefDesc m;
    m.buf = s.buf;
    m.base = s.base + s.offset + shift.at(l, 0).i; // i8 source: bytes
    m.offset = 0;
    m.rank = static_cast<int32_t>(type.getRank());
    unsigned next = 0;
    int64_t stride = 1;
    for (int32_t d = 0; d < m.rank; ++d)
      m.sizes[d] =
          type.isDynamicDim(d) ? dyn[next++]->at(l, 0).i : type.getDimSize(d);
    for (int32_t d = m.rank - 1; d >= 0; --d) {
      m.strides[d] = stride;
      stride *= m.sizes[d];
    }
    if (m.base % byteSize(k) != 0)
      res = in.failLane(op, f, l,
                        "memref.view at byte " + Twine(m.base) +
                            ", not aligned to its element size");
    r.ref(l) = m;
  });
  return res;
}

static LogicalResult execSubView(Interp &in, Operation *op, Frame &f) {
  auto sv = cast<memref::SubViewOp>(op);
  SmallVector<OpFoldResult> offsets = sv.getMixedOffsets(),
                            sizes = sv.getMixedSizes(),
                            strides = sv.getMixedStrides();
  Val &src = in.get(f, sv.getSource());
  bool uniform = src.uniform && foldUniform(in, f, offsets) &&
                 foldUniform(in, f, sizes) && foldUniform(in, f, strides);
  llvm::SmallBitVector dropped = sv.getDroppedDims();
  Val &r = in.defRef(f, sv.getResult(), uniform);
  LogicalResult res = success();
  in.forResult(f, uniform, [&](unsigned l) {
    const MemRefDesc &s = src.ref(l);
    MemRefDesc m;
    m.buf = s.buf;
    m.base = s.base;
    m.offset = s.offset;
    int32_t out = 0;
    for (int32_t d = 0; d < s.rank; ++d) {
      int64_t o = foldValue(in, f, offsets[d], l);
      int64_t z = foldValue(in, f, sizes[d], l);
      int64_t st = foldValue(in, f, strides[d], l);
      if (succeeded(res) &&
          (o < 0 || z < 0 || (z > 0 && o + (z - 1) * st >= s.sizes[d])))
        res = in.failLane(op, f, l,
                          "memref.subview out of bounds in dimension " +
                              Twine(d) + ": offset " + Twine(o) + ", size " +
                              Twine(z) + ", stride " + Twine(st) +
                              " of a dimension of " + Twine(s.sizes[d]));
      m.offset += o * s.strides[d];
      if (dropped.test(d))
        continue;
      m.sizes[out] = z;
      m.strides[out] = s.strides[d] * st;
      ++out;
    }
    m.rank = out;
    r.ref(l) = m;
  });
  return res;
}

static LogicalResult execReinterpretCast(Interp &in, Operation *op, Frame &f) {
  auto rc = cast<memref::ReinterpretCastOp>(op);
  SmallVector<OpFoldResult> offsets = rc.getMixedOffsets(),
                            sizes = rc.getMixedSizes(),
                            strides = rc.getMixedStrides();
  Val &src = in.get(f, rc.getSource());
  bool uniform = src.uniform && foldUniform(in, f, offsets) &&
                 foldUniform(in, f, sizes) && foldUniform(in, f, strides);
  Val &r = in.defRef(f, rc.getResult(), uniform);
  in.forResult(f, uniform, [&](unsigned l) {
    const MemRefDesc &s = src.ref(l);
    MemRefDesc m;
    m.buf = s.buf;
    m.base = s.base;
    m.offset = foldValue(in, f, offsets[0], l);
    m.rank = static_cast<int32_t>(sizes.size());
    for (int32_t d = 0; d < m.rank; ++d) {
      m.sizes[d] = foldValue(in, f, sizes[d], l);
      m.strides[d] = foldValue(in, f, strides[d], l);
    }
    r.ref(l) = m;
  });
  return success();
}

static LogicalResult execCollapse(Interp &in, Operation *op, Frame &f) {
  auto c = cast<memref::CollapseShapeOp>(op);
  auto groups = c.getReassociationIndices();
  Val &src = in.get(f, c.getSrc());
  Val &r = in.defRef(f, c.getResult(), src.uniform);
  LogicalResult res = success();
  in.forResult(f, src.uniform, [&](unsigned l) {
    const MemRefDesc &s = src.ref(l);
    MemRefDesc m = s;
    m.rank = static_cast<int32_t>(groups.size());
    for (auto [g, dims] : llvm::enumerate(groups)) {
      int64_t size = 1;
      for (int64_t d : dims)
        size *= s.sizes[d];
      // Collapsed dimensions must be contiguous with each other.
      for (size_t i = 0; i + 1 < dims.size(); ++i)
        if (s.sizes[dims[i + 1]] > 1 &&
            s.strides[dims[i]] != s.strides[dims[i + 1]] * s.sizes[dims[i + 1]])
          res = in.failLane(op, f, l,
                            "memref.collapse_shape of non-contiguous "
                            "dimensions");
      m.sizes[g] = size;
      m.strides[g] = s.strides[dims.back()];
    }
    r.ref(l) = m;
  });
  return res;
}

static LogicalResult execExpand(Interp &in, Operation *op, Frame &f) {
  auto e = cast<memref::ExpandShapeOp>(op);
  auto groups = e.getReassociationIndices();
  SmallVector<OpFoldResult> outShape = e.getMixedOutputShape();
  Val &src = in.get(f, e.getSrc());
  bool uniform = src.uniform && foldUniform(in, f, outShape);
  Val &r = in.defRef(f, e.getResult(), uniform);
  in.forResult(f, uniform, [&](unsigned l) {
    const MemRefDesc &s = src.ref(l);
    MemRefDesc m = s;
    m.rank = static_cast<int32_t>(outShape.size());
    for (auto [g, dims] : llvm::enumerate(groups)) {
      int64_t stride = s.strides[g];
      for (int64_t i = static_cast<int64_t>(dims.size()) - 1; i >= 0; --i) {
        int64_t d = dims[i];
        m.sizes[d] = foldValue(in, f, outShape[d], l);
        m.strides[d] = stride;
        stride *= m.sizes[d];
      }
    }
    r.ref(l) = m;
  });
  return success();
}

static LogicalResult execAlloc(Interp &in, Operation *op, Frame &f) {
  if (f.isKernel)
    return in.fail(op, "memory allocation inside a kernel is not emulated "
                       "(use workgroup attributions or dynamic shared "
                       "memory)");
  auto type = cast<MemRefType>(op->getResult(0).getType());
  EK k;
  if (failed(valueKind(in, op, type, k)))
    return failure();
  MemRefDesc m;
  m.rank = static_cast<int32_t>(type.getRank());
  ValueRange dynSizes =
      isa<memref::AllocOp>(op)    ? cast<memref::AllocOp>(op).getDynamicSizes()
      : isa<memref::AllocaOp>(op) ? cast<memref::AllocaOp>(op).getDynamicSizes()
                                  : cast<gpu::AllocOp>(op).getDynamicSizes();
  unsigned next = 0;
  for (int32_t d = 0; d < m.rank; ++d)
    m.sizes[d] = type.isDynamicDim(d) ? in.get(f, dynSizes[next++]).at(0, 0).i
                                      : type.getDimSize(d);
  int64_t stride = 1;
  for (int32_t d = m.rank - 1; d >= 0; --d) {
    m.strides[d] = stride;
    stride *= m.sizes[d];
  }
  Buffer b;
  b.bytes = stride * byteSize(k);
  // Fresh allocations hold NaN bit patterns: reading them before writing
  // them shows.
  b.owned.assign(static_cast<size_t>(std::max<int64_t>(b.bytes, 1)), 0xff);
  b.name = "an allocation";
  m.buf = in.addBuffer(std::move(b));
  Val &r = in.defRef(f, op->getResult(0), true);
  r.refs[0] = m;
  // gpu.alloc async: the token is ready (host operations run in order).
  for (Value token : op->getResults().drop_front())
    in.defRef(f, token, true);
  return success();
}

/// Deallocation (the buffer stays: later accesses still resolve, and the
/// emulation is short); an async token result is ready.
static LogicalResult execDealloc(Interp &in, Operation *op, Frame &f) {
  for (Value token : op->getResults())
    in.defRef(f, token, true);
  return success();
}

/// The bytes of a whole memref whose elements are contiguous (row-major
/// strides): its start in its buffer and its length.
static LogicalResult wholeBytes(Interp &in, Operation *op, const MemRefDesc &m,
                                EK k, int64_t &start, int64_t &len) {
  int64_t count = 1;
  for (int32_t d = m.rank - 1; d >= 0; --d) {
    if (m.sizes[d] != 1 && m.strides[d] != count)
      return in.fail(op, "only contiguous memrefs are copied or filled");
    count *= m.sizes[d];
  }
  start = m.base + m.offset * static_cast<int64_t>(byteSize(k));
  len = count * static_cast<int64_t>(byteSize(k));
  const Buffer &buf = in.buffer(m.buf);
  if (start < 0 || start + len > buf.bytes)
    return in.fail(op, "copy or fill outside " + buf.name);
  return success();
}

/// gpu.memcpy on the host: host and device memory are both the CPU's.
static LogicalResult execMemcpy(Interp &in, Operation *op, Frame &f) {
  if (f.isKernel)
    return in.fail(op, "gpu.memcpy inside a kernel");
  auto cp = cast<gpu::MemcpyOp>(op);
  EK k;
  if (failed(valueKind(in, op, cp.getDst().getType(), k)))
    return failure();
  const MemRefDesc &dst = in.get(f, cp.getDst()).ref(0);
  const MemRefDesc &src = in.get(f, cp.getSrc()).ref(0);
  int64_t dOff, dLen, sOff, sLen;
  if (failed(wholeBytes(in, op, dst, k, dOff, dLen)) ||
      failed(wholeBytes(in, op, src, k, sOff, sLen)))
    return failure();
  if (dLen != sLen)
    return in.fail(op, "gpu.memcpy between memrefs of different sizes");
  std::memmove(in.buffer(dst.buf).data + dOff, in.buffer(src.buf).data + sOff,
               static_cast<size_t>(dLen));
  for (Value token : op->getResults())
    in.defRef(f, token, true);
  return success();
}

/// gpu.memset on the host.
static LogicalResult execMemset(Interp &in, Operation *op, Frame &f) {
  if (f.isKernel)
    return in.fail(op, "gpu.memset inside a kernel");
  auto ms = cast<gpu::MemsetOp>(op);
  EK k;
  if (failed(valueKind(in, op, ms.getValue().getType(), k)))
    return failure();
  const MemRefDesc &dst = in.get(f, ms.getDst()).ref(0);
  Slot value = in.get(f, ms.getValue()).at(0, 0);
  int64_t off, len;
  if (failed(wholeBytes(in, op, dst, k, off, len)))
    return failure();
  uint8_t *p = in.buffer(dst.buf).data + off;
  for (int64_t e = 0; e < len; e += byteSize(k))
    storeElem(k, p + e, value);
  for (Value token : op->getResults())
    in.defRef(f, token, true);
  return success();
}

/// memref.atomic_rmw: the active threads in lane order, each reading the
/// element, storing the combined value and receiving the old one.
static LogicalResult execAtomicRmw(Interp &in, Operation *op, Frame &f) {
  auto rmw = cast<memref::AtomicRMWOp>(op);
  EK k;
  if (failed(valueKind(in, op, rmw.getType(), k)))
    return failure();
  Val &mem = in.get(f, rmw.getMemref());
  Val &v = in.get(f, rmw.getValue());
  Val &r = in.def(f, rmw.getResult(), 1, false);
  LogicalResult res = success();
  SmallVector<int64_t> idx;
  in.forActive(f, [&](unsigned l) {
    if (failed(res))
      return;
    readIndices(in, f, rmw.getIndices(), l, idx);
    const MemRefDesc &m = mem.ref(l);
    int64_t off;
    if (failed(res = in.address(op, f, l, m, idx, byteSize(k), 1, off)))
      return;
    uint8_t *p = in.buffer(m.buf).data + off;
    Slot old = loadElem(k, p), x = v.at(l, 0), next;
    switch (rmw.getKind()) {
    case arith::AtomicRMWKind::addi:
      next.i = wrapInt(k, old.i + x.i);
      break;
    case arith::AtomicRMWKind::maxs:
      next.i = std::max(old.i, x.i);
      break;
    case arith::AtomicRMWKind::mins:
      next.i = std::min(old.i, x.i);
      break;
    case arith::AtomicRMWKind::assign:
      next = x;
      break;
    case arith::AtomicRMWKind::addf:
      next.f = roundTo(k, old.f + x.f);
      break;
    default:
      res = in.failLane(op, f, l,
                        "memref.atomic_rmw " +
                            arith::stringifyAtomicRMWKind(rmw.getKind()) +
                            " is not emulated");
      return;
    }
    storeElem(k, p, next);
    r.at(l, 0) = old;
  });
  return res;
}

void mlir::attn::gpuemu::registerMemRefHandlers(Interp &in) {
  in.registerHandler(TypeID::get<memref::AllocaOp>(), execAlloc);
  in.registerHandler(TypeID::get<memref::AtomicRMWOp>(), execAtomicRmw);
  in.registerHandler(TypeID::get<gpu::MemcpyOp>(), execMemcpy);
  in.registerHandler(TypeID::get<gpu::MemsetOp>(), execMemset);
  in.registerHandler(TypeID::get<memref::LoadOp>(), execLoad);
  in.registerHandler(TypeID::get<memref::StoreOp>(), execStore);
  in.registerHandler(TypeID::get<memref::DimOp>(), execDim);
  in.registerHandler(TypeID::get<memref::ExtractAlignedPointerAsIndexOp>(),
                     execAlignedPointer);
  in.registerHandler(TypeID::get<memref::CastOp>(), execSameView);
  in.registerHandler(TypeID::get<memref::AssumeAlignmentOp>(), execSameView);
  in.registerHandler(TypeID::get<memref::MemorySpaceCastOp>(), execSameView);
  in.registerHandler(TypeID::get<memref::ViewOp>(), execView);
  in.registerHandler(TypeID::get<memref::SubViewOp>(), execSubView);
  in.registerHandler(TypeID::get<memref::ReinterpretCastOp>(),
                     execReinterpretCast);
  in.registerHandler(TypeID::get<memref::CollapseShapeOp>(), execCollapse);
  in.registerHandler(TypeID::get<memref::ExpandShapeOp>(), execExpand);
  in.registerHandler(TypeID::get<memref::AllocOp>(), execAlloc);
  in.registerHandler(TypeID::get<gpu::AllocOp>(), execAlloc);
  in.registerHandler(TypeID::get<memref::DeallocOp>(), execDealloc);
  in.registerHandler(TypeID::get<gpu::DeallocOp>(), execDealloc);
}
