//===- VectorOps.cpp - vector ops on small per-thread vectors -------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// A vector value holds its elements row-major, one copy per thread. The
// ops here only rearrange elements (or reduce them); arithmetic on vectors
// is the elementwise arith/math code.
//
//===----------------------------------------------------------------------===//

#include "Interp.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn::gpuemu;

static SmallVector<int64_t> shapeOf(Type t) {
  if (auto v = dyn_cast<VectorType>(t))
    return SmallVector<int64_t>(v.getShape());
  return {};
}

static int64_t product(ArrayRef<int64_t> s, size_t from = 0) {
  int64_t p = 1;
  for (size_t i = from; i < s.size(); ++i)
    p *= s[i];
  return p;
}

/// Linear offset (in elements) of a position prefix in a vector of `shape`;
/// positions are static or thread values.
static LogicalResult positionOffset(Interp &in, Operation *op, Frame &f,
                                    unsigned lane, ArrayRef<int64_t> shape,
                                    ArrayRef<OpFoldResult> pos,
                                    int64_t &offset) {
  offset = 0;
  for (size_t i = 0; i < pos.size(); ++i) {
    int64_t p;
    if (auto a = dyn_cast<Attribute>(pos[i]))
      p = cast<IntegerAttr>(a).getInt();
    else
      p = in.get(f, cast<Value>(pos[i])).at(lane, 0).i;
    if (p < 0 || p >= shape[i])
      return in.failLane(op, f, lane,
                         "vector position " + Twine(p) +
                             " out of bounds (dimension of " + Twine(shape[i]) +
                             ")");
    offset += p * product(shape, i + 1);
  }
  return success();
}

static bool allStatic(ArrayRef<OpFoldResult> pos, Interp &in, Frame &f) {
  for (OpFoldResult p : pos)
    if (auto v = dyn_cast<Value>(p); v && !in.get(f, v).uniform)
      return false;
  return true;
}

static LogicalResult execExtract(Interp &in, Operation *op, Frame &f) {
  auto x = cast<vector::ExtractOp>(op);
  SmallVector<int64_t> shape = shapeOf(x.getSource().getType());
  SmallVector<OpFoldResult> pos = x.getMixedPosition();
  Val &src = in.get(f, x.getSource());
  unsigned n = numElems(x.getResult().getType());
  bool uniform = src.uniform && allStatic(pos, in, f);
  Val &r = in.def(f, x.getResult(), n, uniform);
  LogicalResult res = success();
  in.forResult(f, uniform, [&](unsigned l) {
    int64_t off;
    if (failed(res) ||
        failed(res = positionOffset(in, op, f, l, shape, pos, off)))
      return;
    for (unsigned e = 0; e < n; ++e)
      r.at(l, e) = src.at(l, off + e);
  });
  return res;
}

static LogicalResult execInsert(Interp &in, Operation *op, Frame &f) {
  auto x = cast<vector::InsertOp>(op);
  SmallVector<int64_t> shape = shapeOf(x.getDest().getType());
  SmallVector<OpFoldResult> pos = x.getMixedPosition();
  Val &src = in.get(f, x.getValueToStore());
  Val &dst = in.get(f, x.getDest());
  unsigned n = numElems(x.getResult().getType());
  unsigned m = numElems(x.getValueToStore().getType());
  bool uniform = src.uniform && dst.uniform && allStatic(pos, in, f);
  Val &r = in.def(f, x.getResult(), n, uniform);
  LogicalResult res = success();
  in.forResult(f, uniform, [&](unsigned l) {
    int64_t off;
    if (failed(res) ||
        failed(res = positionOffset(in, op, f, l, shape, pos, off)))
      return;
    for (unsigned e = 0; e < n; ++e)
      r.at(l, e) = dst.at(l, e);
    for (unsigned e = 0; e < m; ++e)
      r.at(l, off + e) = src.at(l, e);
  });
  return res;
}

static LogicalResult execBroadcast(Interp &in, Operation *op, Frame &f) {
  auto b = cast<vector::BroadcastOp>(op);
  SmallVector<int64_t> dstShape = shapeOf(b.getResult().getType());
  SmallVector<int64_t> srcShape = shapeOf(b.getSource().getType());
  Val &src = in.get(f, b.getSource());
  unsigned n = numElems(b.getResult().getType());
  // Source element of each result element (trailing dimensions aligned,
  // unit source dimensions stretched).
  SmallVector<unsigned> map(n);
  size_t lead = dstShape.size() - srcShape.size();
  for (unsigned e = 0; e < n; ++e) {
    int64_t rem = e, srcLin = 0;
    SmallVector<int64_t> idx(dstShape.size());
    for (int d = static_cast<int>(dstShape.size()) - 1; d >= 0; --d) {
      idx[d] = rem % dstShape[d];
      rem /= dstShape[d];
    }
    for (size_t d = 0; d < srcShape.size(); ++d)
      srcLin = srcLin * srcShape[d] + (srcShape[d] == 1 ? 0 : idx[lead + d]);
    map[e] = static_cast<unsigned>(srcLin);
  }
  Val &r = in.def(f, b.getResult(), n, src.uniform);
  in.forResult(f, src.uniform, [&](unsigned l) {
    for (unsigned e = 0; e < n; ++e)
      r.at(l, e) = src.at(l, map[e]);
  });
  return success();
}

static LogicalResult execShuffle(Interp &in, Operation *op, Frame &f) {
  auto s = cast<vector::ShuffleOp>(op);
  Val &a = in.get(f, s.getV1());
  Val &b = in.get(f, s.getV2());
  SmallVector<int64_t> aShape = shapeOf(s.getV1().getType());
  int64_t aLead = aShape.empty() ? 1 : aShape[0];
  int64_t slice = product(aShape, 1);
  ArrayRef<int64_t> mask = s.getMask();
  unsigned n = numElems(s.getResult().getType());
  bool uniform = a.uniform && b.uniform;
  Val &r = in.def(f, s.getResult(), n, uniform);
  in.forResult(f, uniform, [&](unsigned l) {
    for (size_t i = 0; i < mask.size(); ++i) {
      int64_t m = mask[i] < 0 ? 0 : mask[i]; // poison: any value
      for (int64_t e = 0; e < slice; ++e)
        r.at(l, i * slice + e) = m < aLead ? a.at(l, m * slice + e)
                                           : b.at(l, (m - aLead) * slice + e);
    }
  });
  return success();
}

static LogicalResult execFromElements(Interp &in, Operation *op, Frame &f) {
  bool uniform = true;
  SmallVector<Val *> args;
  for (Value v : op->getOperands()) {
    args.push_back(&in.get(f, v));
    uniform &= args.back()->uniform;
  }
  unsigned n = numElems(op->getResult(0).getType());
  Val &r = in.def(f, op->getResult(0), n, uniform);
  in.forResult(f, uniform, [&](unsigned l) {
    for (unsigned e = 0; e < n; ++e)
      r.at(l, e) = args[e]->at(l, 0);
  });
  return success();
}

static LogicalResult execToElements(Interp &in, Operation *op, Frame &f) {
  Val &src = in.get(f, op->getOperand(0));
  // (Not a structured binding: the lambda captures the index, which clang
  // 14 refuses for bindings.)
  for (unsigned e = 0, n = op->getNumResults(); e < n; ++e) {
    Val &r = in.def(f, op->getResult(e), 1, src.uniform);
    in.forResult(f, src.uniform,
                 [&](unsigned l) { r.at(l, 0) = src.at(l, e); });
  }
  return success();
}

/// Copies elements between a vector of `big` shape and a slice of `small`
/// shape at `offsets` with `strides`: fn(bigLinear, smallLinear).
template <typename F>
static void forSlice(ArrayRef<int64_t> big, ArrayRef<int64_t> small,
                     ArrayRef<int64_t> offsets, ArrayRef<int64_t> strides,
                     F fn) {
  int64_t n = product(small);
  size_t lead = big.size() - small.size();
  for (int64_t e = 0; e < n; ++e) {
    int64_t rem = e, bigLin = 0;
    SmallVector<int64_t> idx(small.size());
    for (int d = static_cast<int>(small.size()) - 1; d >= 0; --d) {
      idx[d] = rem % small[d];
      rem /= small[d];
    }
    for (size_t d = 0; d < big.size(); ++d) {
      int64_t i = 0;
      if (d < offsets.size())
        i = offsets[d];
      if (d >= lead)
        i += idx[d - lead] * (d < strides.size() ? strides[d] : 1);
      bigLin = bigLin * big[d] + i;
    }
    fn(bigLin, e);
  }
}

static SmallVector<int64_t> intArray(ArrayAttr a) {
  SmallVector<int64_t> out;
  for (Attribute x : a)
    out.push_back(cast<IntegerAttr>(x).getInt());
  return out;
}

static LogicalResult execExtractSlice(Interp &in, Operation *op, Frame &f) {
  auto x = cast<vector::ExtractStridedSliceOp>(op);
  SmallVector<int64_t> big = shapeOf(x.getSource().getType());
  SmallVector<int64_t> small = shapeOf(x.getResult().getType());
  SmallVector<int64_t> offsets = intArray(x.getOffsets());
  SmallVector<int64_t> strides = intArray(x.getStrides());
  Val &src = in.get(f, x.getSource());
  unsigned n = numElems(x.getResult().getType());
  Val &r = in.def(f, x.getResult(), n, src.uniform);
  // The slice keeps the source's rank: dimensions past `offsets` are whole.
  in.forResult(f, src.uniform, [&](unsigned l) {
    forSlice(big, small, offsets, strides,
             [&](int64_t b, int64_t s) { r.at(l, s) = src.at(l, b); });
  });
  return success();
}

static LogicalResult execInsertSlice(Interp &in, Operation *op, Frame &f) {
  auto x = cast<vector::InsertStridedSliceOp>(op);
  SmallVector<int64_t> big = shapeOf(x.getDest().getType());
  SmallVector<int64_t> small = shapeOf(x.getValueToStore().getType());
  SmallVector<int64_t> offsets = intArray(x.getOffsets());
  SmallVector<int64_t> strides = intArray(x.getStrides());
  Val &src = in.get(f, x.getValueToStore());
  Val &dst = in.get(f, x.getDest());
  unsigned n = numElems(x.getResult().getType());
  bool uniform = src.uniform && dst.uniform;
  Val &r = in.def(f, x.getResult(), n, uniform);
  // Offsets name every dimension of the destination; strides the source's.
  SmallVector<int64_t> fullStrides(big.size() - small.size(), 1);
  fullStrides.append(strides.begin(), strides.end());
  in.forResult(f, uniform, [&](unsigned l) {
    for (unsigned e = 0; e < n; ++e)
      r.at(l, e) = dst.at(l, e);
    forSlice(big, small, offsets, fullStrides,
             [&](int64_t b, int64_t s) { r.at(l, b) = src.at(l, s); });
  });
  return success();
}

static LogicalResult execShapeCast(Interp &in, Operation *op, Frame &f) {
  Val &src = in.get(f, op->getOperand(0));
  unsigned n = numElems(op->getResult(0).getType());
  Val &r = in.def(f, op->getResult(0), n, src.uniform);
  r.data = src.data;
  return success();
}

static LogicalResult execTranspose(Interp &in, Operation *op, Frame &f) {
  auto t = cast<vector::TransposeOp>(op);
  SmallVector<int64_t> srcShape = shapeOf(t.getVector().getType());
  SmallVector<int64_t> dstShape = shapeOf(t.getResult().getType());
  ArrayRef<int64_t> perm = t.getPermutation();
  Val &src = in.get(f, t.getVector());
  unsigned n = numElems(t.getResult().getType());
  SmallVector<unsigned> map(n);
  for (unsigned e = 0; e < n; ++e) {
    int64_t rem = e;
    SmallVector<int64_t> idx(dstShape.size()), sidx(srcShape.size());
    for (int d = static_cast<int>(dstShape.size()) - 1; d >= 0; --d) {
      idx[d] = rem % dstShape[d];
      rem /= dstShape[d];
    }
    for (size_t d = 0; d < perm.size(); ++d)
      sidx[perm[d]] = idx[d];
    int64_t lin = 0;
    for (size_t d = 0; d < srcShape.size(); ++d)
      lin = lin * srcShape[d] + sidx[d];
    map[e] = static_cast<unsigned>(lin);
  }
  Val &r = in.def(f, t.getResult(), n, src.uniform);
  in.forResult(f, src.uniform, [&](unsigned l) {
    for (unsigned e = 0; e < n; ++e)
      r.at(l, e) = src.at(l, map[e]);
  });
  return success();
}

static LogicalResult execBitCast(Interp &in, Operation *op, Frame &f) {
  auto b = cast<vector::BitCastOp>(op);
  EK sk, dk;
  if (failed(valueKind(in, op, b.getSource().getType(), sk)) ||
      failed(valueKind(in, op, b.getResult().getType(), dk)))
    return failure();
  Val &src = in.get(f, b.getSource());
  unsigned n = numElems(b.getResult().getType());
  unsigned m = numElems(b.getSource().getType());
  unsigned sw = bitWidth(sk), dw = bitWidth(dk);
  Val &r = in.def(f, b.getResult(), n, src.uniform);
  // Little-endian: element 0 in the low bits.
  in.forResult(f, src.uniform, [&](unsigned l) {
    SmallVector<uint8_t, 64> bytes(static_cast<size_t>(m) * sw / 8 + 8, 0);
    for (unsigned e = 0; e < m; ++e) {
      uint64_t bits = toBits(sk, src.at(l, e));
      for (unsigned i = 0; i < sw / 8; ++i)
        bytes[e * sw / 8 + i] = static_cast<uint8_t>(bits >> (8 * i));
    }
    for (unsigned e = 0; e < n; ++e) {
      uint64_t bits = 0;
      for (unsigned i = 0; i < dw / 8; ++i)
        bits |= static_cast<uint64_t>(bytes[e * dw / 8 + i]) << (8 * i);
      r.at(l, e) = fromBits(dk, bits);
    }
  });
  return success();
}

static LogicalResult execReduction(Interp &in, Operation *op, Frame &f) {
  auto red = cast<vector::ReductionOp>(op);
  EK k;
  if (failed(valueKind(in, op, red.getType(), k)))
    return failure();
  Val &src = in.get(f, red.getVector());
  Val *acc = red.getAcc() ? &in.get(f, red.getAcc()) : nullptr;
  unsigned m = src.n;
  bool uniform = src.uniform && (!acc || acc->uniform);
  vector::CombiningKind kind = red.getKind();
  Val &r = in.def(f, red.getResult(), 1, uniform);
  auto combine = [&](Slot a, Slot b) {
    Slot s;
    s.i = 0;
    using CK = vector::CombiningKind;
    double x = a.f, y = b.f;
    switch (kind) {
    case CK::ADD:
      if (isFloat(k))
        s.f = roundTo(k, x + y);
      else
        s.i = wrapInt(k, a.i + b.i);
      break;
    case CK::MUL:
      if (isFloat(k))
        s.f = roundTo(k, x * y);
      else
        s.i = wrapInt(k, a.i * b.i);
      break;
    case CK::MINSI:
      s.i = std::min(a.i, b.i);
      break;
    case CK::MAXSI:
      s.i = std::max(a.i, b.i);
      break;
    case CK::MINUI:
      s.i = static_cast<uint64_t>(a.i) < static_cast<uint64_t>(b.i) ? a.i : b.i;
      break;
    case CK::MAXUI:
      s.i = static_cast<uint64_t>(a.i) > static_cast<uint64_t>(b.i) ? a.i : b.i;
      break;
    case CK::AND:
      s.i = a.i & b.i;
      break;
    case CK::OR:
      s.i = a.i | b.i;
      break;
    case CK::XOR:
      s.i = a.i ^ b.i;
      break;
    case CK::MINNUMF:
      s.f = std::fmin(x, y);
      break;
    case CK::MAXNUMF:
      s.f = std::fmax(x, y);
      break;
    case CK::MINIMUMF:
      s.f = std::isnan(x) || std::isnan(y) ? NAN : std::min(x, y);
      break;
    case CK::MAXIMUMF:
      s.f = std::isnan(x) || std::isnan(y) ? NAN : std::max(x, y);
      break;
    }
    return s;
  };
  in.forResult(f, uniform, [&](unsigned l) {
    Slot s = src.at(l, 0);
    for (unsigned e = 1; e < m; ++e)
      s = combine(s, src.at(l, e));
    if (acc)
      s = combine(acc->at(l, 0), s);
    r.at(l, 0) = s;
  });
  return success();
}

static LogicalResult execVectorFma(Interp &in, Operation *op, Frame &f) {
  EK k;
  if (failed(valueKind(in, op, op->getResult(0).getType(), k)))
    return failure();
  Val &a = in.get(f, op->getOperand(0));
  Val &b = in.get(f, op->getOperand(1));
  Val &c = in.get(f, op->getOperand(2));
  bool uniform = a.uniform && b.uniform && c.uniform;
  unsigned n = numElems(op->getResult(0).getType());
  Val &r = in.def(f, op->getResult(0), n, uniform);
  in.forResult(f, uniform, [&](unsigned l) {
    for (unsigned e = 0; e < n; ++e) {
      double x = a.at(l, e).f, y = b.at(l, e).f, z = c.at(l, e).f;
      r.at(l, e).f = k == EK::F32
                         ? static_cast<double>(std::fmaf(static_cast<float>(x),
                                                         static_cast<float>(y),
                                                         static_cast<float>(z)))
                         : roundTo(k, std::fma(x, y, z));
    }
  });
  return success();
}

//===----------------------------------------------------------------------===//
// vector.load / vector.store
//===----------------------------------------------------------------------===//

/// Visits the rows of an n-D vector access: the innermost dimension is
/// contiguous, outer dimensions advance the matching memref indices.
template <typename F>
static LogicalResult forRows(ArrayRef<int64_t> vshape, ArrayRef<int64_t> base,
                             F fn) {
  int64_t rowLen = vshape.empty() ? 1 : vshape.back();
  int64_t rows = vshape.empty() ? 1 : product(vshape) / rowLen;
  size_t outer = vshape.empty() ? 0 : vshape.size() - 1;
  for (int64_t r = 0; r < rows; ++r) {
    SmallVector<int64_t> idx(base.begin(), base.end());
    int64_t rem = r;
    for (int d = static_cast<int>(outer) - 1; d >= 0; --d) {
      idx[idx.size() - vshape.size() + d] += rem % vshape[d];
      rem /= vshape[d];
    }
    if (failed(fn(idx, r * rowLen, rowLen)))
      return failure();
  }
  return success();
}

static LogicalResult execVectorLoad(Interp &in, Operation *op, Frame &f) {
  auto ld = cast<vector::LoadOp>(op);
  EK k;
  if (failed(valueKind(in, op, ld.getType(), k)))
    return failure();
  Val &mem = in.get(f, ld.getBase());
  unsigned n = numElems(ld.getType());
  SmallVector<int64_t> vshape = shapeOf(ld.getType());
  Val &r = in.def(f, ld.getResult(), n, false);
  LogicalResult res = success();
  SmallVector<int64_t> idx;
  in.forActive(f, [&](unsigned l) {
    if (failed(res))
      return;
    readIndices(in, f, ld.getIndices(), l, idx);
    const MemRefDesc &m = mem.ref(l);
    res = forRows(
        vshape, idx,
        [&](ArrayRef<int64_t> at, int64_t first, int64_t len) -> LogicalResult {
          int64_t off;
          if (failed(in.address(op, f, l, m, at, byteSize(k), len, off)) ||
              failed(in.noteRead(op, f, l, m.buf, off, len * byteSize(k))))
            return failure();
          const uint8_t *p = in.buffer(m.buf).data + off;
          for (int64_t e = 0; e < len; ++e)
            r.at(l, first + e) = loadElem(k, p + e * byteSize(k));
          return success();
        });
  });
  return res;
}

static LogicalResult execVectorStore(Interp &in, Operation *op, Frame &f) {
  auto st = cast<vector::StoreOp>(op);
  EK k;
  if (failed(valueKind(in, op, st.getValueToStore().getType(), k)))
    return failure();
  Val &mem = in.get(f, st.getBase());
  Val &v = in.get(f, st.getValueToStore());
  SmallVector<int64_t> vshape = shapeOf(st.getValueToStore().getType());
  LogicalResult res = success();
  SmallVector<int64_t> idx;
  in.forActive(f, [&](unsigned l) {
    if (failed(res))
      return;
    readIndices(in, f, st.getIndices(), l, idx);
    const MemRefDesc &m = mem.ref(l);
    res = forRows(
        vshape, idx,
        [&](ArrayRef<int64_t> at, int64_t first, int64_t len) -> LogicalResult {
          int64_t off;
          if (failed(in.address(op, f, l, m, at, byteSize(k), len, off)) ||
              failed(in.noteWrite(op, f, l, m.buf, off, len * byteSize(k))))
            return failure();
          uint8_t *p = in.buffer(m.buf).data + off;
          for (int64_t e = 0; e < len; ++e)
            storeElem(k, p + e * byteSize(k), v.at(l, first + e));
          return success();
        });
  });
  return res;
}

void mlir::attn::gpuemu::registerVectorHandlers(Interp &in) {
  in.registerHandler(TypeID::get<vector::ExtractOp>(), execExtract);
  in.registerHandler(TypeID::get<vector::InsertOp>(), execInsert);
  in.registerHandler(TypeID::get<vector::BroadcastOp>(), execBroadcast);
  in.registerHandler(TypeID::get<vector::ShuffleOp>(), execShuffle);
  in.registerHandler(TypeID::get<vector::FromElementsOp>(), execFromElements);
  in.registerHandler(TypeID::get<vector::ToElementsOp>(), execToElements);
  in.registerHandler(TypeID::get<vector::ExtractStridedSliceOp>(),
                     execExtractSlice);
  in.registerHandler(TypeID::get<vector::InsertStridedSliceOp>(),
                     execInsertSlice);
  in.registerHandler(TypeID::get<vector::ShapeCastOp>(), execShapeCast);
  in.registerHandler(TypeID::get<vector::TransposeOp>(), execTranspose);
  in.registerHandler(TypeID::get<vector::BitCastOp>(), execBitCast);
  in.registerHandler(TypeID::get<vector::ReductionOp>(), execReduction);
  in.registerHandler(TypeID::get<vector::FMAOp>(), execVectorFma);
  in.registerHandler(TypeID::get<vector::LoadOp>(), execVectorLoad);
  in.registerHandler(TypeID::get<vector::StoreOp>(), execVectorStore);
}
