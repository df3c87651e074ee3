//===- TileCopy.cpp - staging tiles in shared memory ----------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// The copies of the attention kernel's Q, K and V tiles into shared memory
// (KernelEmitter::emitTileCopy): 16-byte cp.async chunks zero-filled where
// a row is invalid, or converting copies (f32 inputs, quantized K/V), into
// rows padded by 16 bytes (ldmatrix) or into the 128-byte swizzled layout
// wgmma reads (Wgmma.cpp).
//
//===----------------------------------------------------------------------===//

#include "KernelEmitter.h"

#include "attn/Conversion/Dequant.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::gpu_codegen;
using namespace mlir::attn::gpu_codegen::detail;

void KernelEmitter::emitTileCopy(
    Value dst, ArrayRef<Value> dstPrefix, TileLayout layout, int64_t rows,
    int64_t cols, Value src,
    function_ref<std::pair<SmallVector<Value>, Value>(Value)> srcRow,
    SmallVectorImpl<Value> &tokens, Value colLimit, Value scale) {
  int64_t chunksPerRow = cols / 8;
  int64_t chunks = rows * chunksPerRow;
  int64_t threads = kLanes * warps;
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  auto tokenType = nvgpu::DeviceAsyncTokenType::get(b.getContext());
  // When the threads outnumber the last round's chunks, the extra threads
  // copy nothing (zero bytes read) into scratch rows past the tile, one
  // 16-byte slot each (see scratchRows), so that no two copies in flight
  // write the same bytes.
  for (int64_t it = 0; it < (chunks + threads - 1) / threads; ++it) {
    Value c = a.add(ci(it * threads), tid);
    Value inRange;
    if ((it + 1) * threads > chunks) {
      inRange = a.slt(c, ci(chunks));
      c = a.min(c, ci(chunks - 1));
    }
    Value row = divu(c, ci(chunksPerRow));
    Value col = a.mul(remu(c, ci(chunksPerRow)), ci(8));
    auto [srcIdx, valid] = srcRow(row);
    // The row's last index is where column 0 of the tile starts; chunks at
    // or past `colLimit` are invalid (zero-filled, read at column 0).
    Value srcCol = a.add(srcIdx.back(), col);
    if (colLimit) {
      Value colOk = a.slt(srcCol, colLimit);
      valid = a.both(valid, colOk);
      srcCol = a.select(colOk, srcCol, ci(0));
    }
    srcIdx.back() = srcCol;
    SmallVector<Value> dstIdx(dstPrefix);
    const bool swizzled = layout == TileLayout::Swizzled;
    if (inRange) {
      int64_t pitch = swizzled ? 64 : cols + kPad;
      Value slot = a.mul(tid, ci(8));
      valid = a.both(valid, inRange);
      row = a.select(inRange, row, a.add(ci(rows), divu(slot, ci(pitch))));
      col = a.select(inRange, col, remu(slot, ci(pitch)));
    }
    if (swizzled) {
      Value chunk = arith::XOrIOp::create(
          b, loc, divu(remu(col, ci(64)), ci(8)), remu(row, ci(8)));
      dstIdx.push_back(divu(col, ci(64)));
      dstIdx.push_back(row);
      dstIdx.push_back(a.mul(chunk, ci(8)));
    } else {
      dstIdx.push_back(row);
      dstIdx.push_back(col);
    }
    Type from = cast<MemRefType>(src.getType()).getElementType();
    if (from != elem) {
      // Converting copy (f32 inputs, quantized K/V): a plain load of the
      // (clamped, always in-bounds) row, zero where invalid, rounded,
      // stored.
      auto srcType = VectorType::get({8}, from);
      Value x = vector::LoadOp::create(b, loc, srcType, src, srcIdx);
      if (scale) {
        // Quantized: decoded and multiplied by the row's scale, then zeroed
        // where invalid (the rows past kv_len may hold any bits, their
        // scales too).
        x = decodeQuantized(b, loc, x);
        auto f32x8 = VectorType::get({8}, f32);
        SmallVector<Value> at = scaleIndex(
            scale, op.getLayout(), srcIdx[op.getPhysicalDim(0)],
            srcIdx[op.getPhysicalDim(1)], srcIdx[op.getPhysicalDim(2)]);
        Value sc = memref::LoadOp::create(b, loc, scale, at);
        x = arith::MulFOp::create(
            b, loc, x, vector::BroadcastOp::create(b, loc, f32x8, sc));
        srcType = f32x8;
      }
      Value zero = arith::ConstantOp::create(
          b, loc,
          DenseElementsAttr::get(srcType,
                                 b.getZeroAttr(srcType.getElementType())));
      x = arith::SelectOp::create(b, loc, valid, x, zero);
      x = arith::TruncFOp::create(b, loc, VectorType::get({8}, elem), x);
      vector::StoreOp::create(b, loc, x, dst, dstIdx);
      continue;
    }
    Value elems = a.select(valid, ci(8), ci(0));
    tokens.push_back(nvgpu::DeviceAsyncCopyOp::create(
        b, loc, tokenType, dst, dstIdx, src, srcIdx, b.getIndexAttr(8), elems,
        b.getUnitAttr()));
  }
}
