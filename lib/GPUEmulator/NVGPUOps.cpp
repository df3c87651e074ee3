//===- NVGPUOps.cpp - ldmatrix, mma.sync and asynchronous copies ----------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// Fragment layouts as the PTX ISA states them ("Warp-level matrix load
// instruction: ldmatrix" and "Matrix fragments for mma.m16n8k16 / m16n8k8"),
// with groupID = laneid / 4 and threadID_in_group = laneid % 4. The vector
// of an nvgpu operand holds the thread's registers in order: row j of a
// vector<Rx2xf16> is register j (a .f16x2 pair, element 0 in the low half).
//
// Asynchronous copies (cp.async) read their source when issued and write
// shared memory only when a cp.async.wait_group retires their group, so a
// read of the destination before the wait sees the old bytes (or, by
// default, is reported).
//
//===----------------------------------------------------------------------===//

#include "Interp.h"

#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"

#include <cstring>

using namespace mlir;
using namespace mlir::attn::gpuemu;

//===----------------------------------------------------------------------===//
// ldmatrix
//===----------------------------------------------------------------------===//

static LogicalResult execLdMatrix(Interp &in, Operation *op, Frame &f) {
  auto ld = cast<nvgpu::LdMatrixOp>(op);
  EK k;
  if (failed(valueKind(in, op, ld.getRes().getType(), k)))
    return failure();
  if (byteSize(k) != 2)
    return in.fail(op, "ldmatrix of other than 16-bit elements is not "
                       "emulated");
  if (failed(in.checkWarpsConverged(op, f)))
    return failure();
  unsigned tiles = ld.getNumTiles();
  bool trans = ld.getTranspose();
  if (tiles != 1 && tiles != 2 && tiles != 4)
    return in.fail(op, "numTiles must be 1, 2 or 4");
  if (numElems(ld.getRes().getType()) != tiles * 2)
    return in.fail(op, "result must hold 2 elements per tile");
  Val &mem = in.get(f, ld.getSrcMemref());
  Val &r = in.def(f, ld.getRes(), tiles * 2, false);
  SmallVector<int64_t> idx;
  // rows[t][c]: element c of the row whose address lane t of the warp gave.
  Slot rows[32][8];
  for (unsigned w = 0; w < f.lanes / 32; ++w) {
    if (!f.allActive && !f.active[w * 32])
      continue;
    ++in.stats.ldmatrices;
    for (unsigned t = 0; t < 8 * tiles; ++t) {
      unsigned l = w * 32 + t;
      readIndices(in, f, ld.getIndices(), l, idx);
      const MemRefDesc &m = mem.ref(l);
      int64_t off;
      if (failed(in.address(op, f, l, m, idx, 2, 8, off)))
        return failure();
      if (off % 16 != 0)
        return in.failLane(op, f, l,
                           "ldmatrix row address not 16-byte aligned (byte " +
                               Twine(off) + " of " + in.buffer(m.buf).name +
                               ")");
      if (failed(in.noteRead(op, f, l, m.buf, off, 16)))
        return failure();
      const uint8_t *p = in.buffer(m.buf).data + off;
      for (unsigned c = 0; c < 8; ++c)
        rows[t][c] = loadElem(k, p + 2 * c);
    }
    for (unsigned lane = 0; lane < 32; ++lane) {
      unsigned l = w * 32 + lane;
      for (unsigned i = 0; i < tiles; ++i)
        for (unsigned j = 0; j < 2; ++j) {
          unsigned row = lane / 4, col = 2 * (lane % 4) + j;
          // Transposed: the thread gets element (col, row) of the stored
          // matrix, i.e. column `row` of stored row `col`.
          r.at(l, 2 * i + j) =
              trans ? rows[8 * i + col][row] : rows[8 * i + row][col];
        }
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// mma.sync
//===----------------------------------------------------------------------===//

namespace {
/// Position (row, column) in the warp-wide matrix of element `i` of the
/// fragment of lane `lane`.
using FragMap = void (*)(unsigned lane, unsigned i, unsigned &row,
                         unsigned &col);
} // namespace

// m16n8k16, .f16/.bf16: A is 16x16 in four .f16x2 registers a0..a7.
static void aF16K16(unsigned lane, unsigned i, unsigned &row, unsigned &col) {
  unsigned g = lane / 4, t = lane % 4;
  row = g + 8 * ((i / 2) % 2);
  col = 2 * t + (i % 2) + 8 * (i / 4);
}
// m16n8k16: B is 16x8 (k x n) in two registers b0..b3.
static void bF16K16(unsigned lane, unsigned i, unsigned &row, unsigned &col) {
  unsigned g = lane / 4, t = lane % 4;
  row = 2 * t + (i % 2) + 8 * (i / 2);
  col = g;
}
// m16n8k8, .f16/.bf16: A 16x8 in two registers a0..a3, B 8x8 in b0..b1.
static void aF16K8(unsigned lane, unsigned i, unsigned &row, unsigned &col) {
  unsigned g = lane / 4, t = lane % 4;
  row = g + 8 * (i / 2);
  col = 2 * t + (i % 2);
}
static void bF16K8(unsigned lane, unsigned i, unsigned &row, unsigned &col) {
  unsigned g = lane / 4, t = lane % 4;
  row = 2 * t + i;
  col = g;
}
// m16n8k8, .tf32: A 16x8 in a0..a3, B 8x8 in b0..b1.
static void aTF32K8(unsigned lane, unsigned i, unsigned &row, unsigned &col) {
  unsigned g = lane / 4, t = lane % 4;
  row = g + 8 * (i % 2);
  col = t + 4 * (i / 2);
}
static void bTF32K8(unsigned lane, unsigned i, unsigned &row, unsigned &col) {
  unsigned g = lane / 4, t = lane % 4;
  row = t + 4 * i;
  col = g;
}
// C and D (16x8) for every shape here: c0..c3.
static void cD(unsigned lane, unsigned i, unsigned &row, unsigned &col) {
  unsigned g = lane / 4, t = lane % 4;
  row = g + 8 * (i / 2);
  col = 2 * t + (i % 2);
}

/// The value a tensor core reads from an f32 register as tf32: the 10
/// leading fraction bits, the rest ignored (truncated).
static double tf32(double x) {
  float v = static_cast<float>(x);
  uint32_t b;
  std::memcpy(&b, &v, 4);
  if ((b & 0x7f800000u) != 0x7f800000u)
    b &= 0xffffe000u;
  std::memcpy(&v, &b, 4);
  return v;
}

static LogicalResult execMmaSync(Interp &in, Operation *op, Frame &f) {
  auto mma = cast<nvgpu::MmaSyncOp>(op);
  SmallVector<int64_t> shape;
  for (Attribute a : mma.getMmaShape())
    shape.push_back(cast<IntegerAttr>(a).getInt());
  EK ka, kb, kc, kd;
  if (failed(valueKind(in, op, mma.getMatrixA().getType(), ka)) ||
      failed(valueKind(in, op, mma.getMatrixB().getType(), kb)) ||
      failed(valueKind(in, op, mma.getMatrixC().getType(), kc)) ||
      failed(valueKind(in, op, mma.getRes().getType(), kd)))
    return failure();
  if (shape.size() != 3 || shape[0] != 16 || shape[1] != 8 ||
      (shape[2] != 16 && shape[2] != 8))
    return in.fail(op, "only mma.sync shapes [16, 8, 16] and [16, 8, 8] are "
                       "emulated");
  unsigned kDim = static_cast<unsigned>(shape[2]);
  FragMap mapA, mapB;
  unsigned nA, nB;
  if ((ka == EK::F16 || ka == EK::BF16) && kb == ka) {
    mapA = kDim == 16 ? aF16K16 : aF16K8;
    mapB = kDim == 16 ? bF16K16 : bF16K8;
    nA = kDim == 16 ? 8 : 4;
    nB = kDim == 16 ? 4 : 2;
  } else if (ka == EK::F32 && kb == EK::F32 && kDim == 8) {
    mapA = aTF32K8;
    mapB = bTF32K8;
    nA = 4;
    nB = 2;
  } else {
    return in.fail(op, Twine("mma.sync with ") + kindName(ka) + " x " +
                           kindName(kb) + " operands and k = " + Twine(kDim) +
                           " is not emulated");
  }
  if ((kc != EK::F32 && kc != EK::F16) || kd != kc ||
      (kc == EK::F16 && ka != EK::F16))
    return in.fail(op, "mma.sync accumulates in f32 (or f16 for f16 "
                       "operands) only");
  if (numElems(mma.getMatrixA().getType()) != nA ||
      numElems(mma.getMatrixB().getType()) != nB ||
      numElems(mma.getMatrixC().getType()) != 4 ||
      numElems(mma.getRes().getType()) != 4)
    return in.fail(op, "mma.sync fragment sizes do not match the shape");
  if (failed(in.checkWarpsConverged(op, f)))
    return failure();
  bool isTf32 = ka == EK::F32;
  Val &a = in.get(f, mma.getMatrixA());
  Val &b = in.get(f, mma.getMatrixB());
  Val &c = in.get(f, mma.getMatrixC());
  Val &d = in.def(f, mma.getRes(), 4, false);
  // Fragment positions of every (lane, element), from the maps above.
  unsigned posA[32][8][2], posB[32][4][2], posC[32][4][2];
  for (unsigned lane = 0; lane < 32; ++lane) {
    for (unsigned i = 0; i < nA; ++i)
      mapA(lane, i, posA[lane][i][0], posA[lane][i][1]);
    for (unsigned i = 0; i < nB; ++i)
      mapB(lane, i, posB[lane][i][0], posB[lane][i][1]);
    for (unsigned i = 0; i < 4; ++i)
      cD(lane, i, posC[lane][i][0], posC[lane][i][1]);
  }
  // f16, bf16 and tf32 values are exact in float, and so are their
  // products (at most 22 significant bits).
  float A[16][16], Bt[8][16], C[16][8];
  for (unsigned w = 0; w < f.lanes / 32; ++w) {
    if (!f.allActive && !f.active[w * 32])
      continue;
    ++in.stats.mmaSyncs;
    for (unsigned lane = 0; lane < 32; ++lane) {
      unsigned l = w * 32 + lane;
      for (unsigned i = 0; i < nA; ++i) {
        double x = a.at(l, i).f;
        A[posA[lane][i][0]][posA[lane][i][1]] =
            static_cast<float>(isTf32 ? tf32(x) : x);
      }
      for (unsigned i = 0; i < nB; ++i) {
        double x = b.at(l, i).f;
        Bt[posB[lane][i][1]][posB[lane][i][0]] =
            static_cast<float>(isTf32 ? tf32(x) : x);
      }
      for (unsigned i = 0; i < 4; ++i)
        C[posC[lane][i][0]][posC[lane][i][1]] =
            static_cast<float>(c.at(l, i).f);
    }
    // The sum is accumulated in f32, k in order, starting from C.
    for (unsigned lane = 0; lane < 32; ++lane) {
      unsigned l = w * 32 + lane;
      for (unsigned i = 0; i < 4; ++i) {
        unsigned row = posC[lane][i][0], col = posC[lane][i][1];
        float acc = C[row][col];
        for (unsigned kk = 0; kk < kDim; ++kk)
          acc += A[row][kk] * Bt[col][kk];
        d.at(l, i).f = roundTo(kd, acc);
      }
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Asynchronous copies
//===----------------------------------------------------------------------===//

static LogicalResult execAsyncCopy(Interp &in, Operation *op, Frame &f) {
  auto cp = cast<nvgpu::DeviceAsyncCopyOp>(op);
  if (!f.isKernel)
    return in.fail(op, "used outside a gpu.launch");
  EK k;
  if (failed(valueKind(in, op, cp.getDst().getType(), k)))
    return failure();
  int64_t eb = byteSize(k);
  int64_t dstElems = cp.getDstElements().getSExtValue();
  int64_t bytes = dstElems * eb;
  if (bytes != 4 && bytes != 8 && bytes != 16)
    return in.fail(op, "cp.async copies 4, 8 or 16 bytes, not " + Twine(bytes));
  Val &src = in.get(f, cp.getSrc());
  Val &dst = in.get(f, cp.getDst());
  Val *srcElems =
      cp.getSrcElements() ? &in.get(f, cp.getSrcElements()) : nullptr;
  in.defRef(f, cp.getAsyncToken(), true); // a token: no contents
  LogicalResult res = success();
  SmallVector<int64_t> sidx, didx;
  in.forActive(f, [&](unsigned l) {
    if (failed(res))
      return;
    ++in.stats.asyncCopies;
    int64_t n = srcElems ? srcElems->at(l, 0).i : dstElems;
    if (n < 0 || n > dstElems) {
      res = in.failLane(op, f, l,
                        "srcElements " + Twine(n) + " outside [0, " +
                            Twine(dstElems) + "]");
      return;
    }
    readIndices(in, f, cp.getDstIndices(), l, didx);
    const MemRefDesc &dm = dst.ref(l);
    int64_t doff;
    if (failed(res = in.address(op, f, l, dm, didx, eb, dstElems, doff)))
      return;
    Buffer &db = in.buffer(dm.buf);
    if (!db.shared) {
      res = in.failLane(op, f, l, "cp.async destination is not shared memory");
      return;
    }
    if (doff % bytes != 0) {
      res = in.failLane(op, f, l,
                        "cp.async destination not aligned to " + Twine(bytes) +
                            " bytes");
      return;
    }
    AsyncCopy c;
    c.buf = dm.buf;
    c.dst = doff;
    c.len = static_cast<uint32_t>(bytes);
    c.op = op;
    std::memset(c.bytes, 0, sizeof(c.bytes)); // zero fill past srcElements
    if (n > 0) {
      readIndices(in, f, cp.getSrcIndices(), l, sidx);
      const MemRefDesc &sm = src.ref(l);
      int64_t soff;
      if (failed(res = in.address(op, f, l, sm, sidx, eb, n, soff)))
        return;
      if (soff % bytes != 0 && !srcElems) {
        res = in.failLane(op, f, l,
                          "cp.async source not aligned to " + Twine(bytes) +
                              " bytes");
        return;
      }
      std::memcpy(c.bytes, in.buffer(sm.buf).data + soff, n * eb);
    }
    // Writing bytes other threads read since the barrier is a race now
    // already (the copy may land at any time).
    if (failed(res = in.noteWrite(op, f, l, c.buf, c.dst, c.len)))
      return;
    for (uint32_t i = 0; i < c.len; ++i)
      ++db.pending[c.dst + i];
    f.async[l].open.push_back(c);
  });
  return res;
}

static LogicalResult execCreateGroup(Interp &in, Operation *op, Frame &f) {
  if (!f.isKernel)
    return in.fail(op, "used outside a gpu.launch");
  in.defRef(f, op->getResult(0), true);
  in.forActive(f, [&](unsigned l) {
    LaneAsyncState &st = f.async[l];
    st.committed.emplace_back(std::move(st.open));
    st.open.clear();
  });
  return success();
}

static LogicalResult execAsyncWait(Interp &in, Operation *op, Frame &f) {
  auto wait = cast<nvgpu::DeviceAsyncWaitOp>(op);
  if (!f.isKernel)
    return in.fail(op, "used outside a gpu.launch");
  // As lowered to PTX: cp.async.wait_group N, N = numGroups (default 0);
  // the token operand does not select a group.
  size_t keep = wait.getNumGroups().value_or(0);
  LogicalResult res = success();
  in.forActive(f, [&](unsigned l) {
    if (succeeded(res))
      res = in.retireAsync(op, f, l, keep);
  });
  return res;
}

void mlir::attn::gpuemu::registerNVGPUHandlers(Interp &in) {
  in.registerHandler(TypeID::get<nvgpu::LdMatrixOp>(), execLdMatrix);
  in.registerHandler(TypeID::get<nvgpu::MmaSyncOp>(), execMmaSync);
  in.registerHandler(TypeID::get<nvgpu::DeviceAsyncCopyOp>(), execAsyncCopy);
  in.registerHandler(TypeID::get<nvgpu::DeviceAsyncCreateGroupOp>(),
                     execCreateGroup);
  in.registerHandler(TypeID::get<nvgpu::DeviceAsyncWaitOp>(), execAsyncWait);
}
