//===- Dequantize.cpp - K/V tiles of a quantized cache as f32 -------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// A quantized cache (i8 / fp8 with k_scale and v_scale) is read in one of
// two ways. The row-wise kernels (decode's few rows per head) read the raw
// rows in place, decode them in registers and apply each key's scale once,
// to its dot product and to its weight (rowScale). The packed kernels
// (prefill tiles) read an f32 scratch tile (allocated once per query tile)
// into which each row of D values is decoded and multiplied by its scale
// (dequantizeTile). Either way the cache is read once, at a quarter of f32's
// bytes.
//
//===----------------------------------------------------------------------===//

#include "FusedLowering.h"

#include "attn/Conversion/Dequant.h"
#include "attn/Conversion/PagedKv.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::cpu;

namespace {
/// The scale of the row at (`block`, `row`) of head `head` times the
/// decoding's constant of `raw` (decodeQuantizedUnscaled).
Value scaleAt(OpBuilder &b, Location loc, Value scale, Layout layout, Type raw,
              Value block, Value head, Value row) {
  Value s = tensor::ExtractOp::create(
      b, loc, scale, scaleIndex(scale, layout, block, head, row));
  // e4m3's 2^8 folds into the scale: one multiplication per element.
  if (isa<Float8E4M3FNType>(raw))
    s = arith::MulFOp::create(
        b, loc, s, arith::ConstantOp::create(b, loc, b.getF32FloatAttr(256)));
  return s;
}
} // namespace

std::pair<Value, Value> FusedLowering::cacheRow(OpBuilder &b, Location loc,
                                                Value bIdx, Value key) {
  if (!pageSize)
    return {bIdx, key};
  return {buildPageIndex(b, loc, op, bIdx, key),
          arith::RemUIOp::create(b, loc, key, pageSize)};
}

Value FusedLowering::rowScale(OpBuilder &b, Location loc, const TileRows &rows,
                              Value j) {
  IndexMath m{b, loc};
  auto [block, row] = cacheRow(b, loc, rows.bIdx, m.add(rows.k0, j));
  Type raw = cast<RankedTensorType>(rows.pool.getType()).getElementType();
  return scaleAt(b, loc, rows.scale, layout, raw, block, rows.gIdx, row);
}

FusedLowering::TileRows FusedLowering::contiguous(OpBuilder &b, Location loc,
                                                  const TileRows &rows) {
  if (rows.tile && !rows.scale)
    return rows;
  TileRows f = rows;
  f.tile = dequantizeTile(b, loc, rows);
  f.scale = Value();
  return f;
}

Value FusedLowering::dequantizeTile(OpBuilder &b, Location loc,
                                    const TileRows &rows) {
  IndexMath im{b, loc};
  bool bhnd = layout == Layout::bhnd;
  OpFoldResult one = b.getIndexAttr(1);
  SmallVector<OpFoldResult> sizes =
      bhnd ? SmallVector<OpFoldResult>{one, one, rows.ks, rows.d}
           : SmallVector<OpFoldResult>{one, rows.ks, one, rows.d};
  Value dest = scratchTile(b, loc, sizes, f32, bhnd ? 2 : 1);
  // The rows that exist: all of a dense or single-page tile; in a tile of
  // several pages, the pages up to the sequence's last (later table entries
  // are never read; their rows are zeros, masked keys whose weights are 0).
  Value present = rows.ks;
  if (multiPageTiles())
    present = im.max(
        im.c(0),
        im.min(rows.ks, im.mul(im.ceilDiv(rows.readable, pageSize), pageSize)));
  Type raw = cast<RankedTensorType>(rows.pool.getType()).getElementType();
  int64_t ds = staticSize(rows.d);
  bool vectorRows = !ShapedType::isDynamic(ds) && ds % lanes == 0;
  Value zero = im.c(0), step = im.c(vectorRows ? lanes : 1);
  auto vecTy = VectorType::get({lanes}, f32);

  auto decoded = scf::ForOp::create(
      b, loc, zero, present, im.c(1), ValueRange{dest},
      [&](OpBuilder &b1, Location l1, Value j, ValueRange it1) {
        IndexMath m1{b1, l1};
        Value block, row;
        std::tie(block, row) = cacheRow(b1, l1, rows.bIdx, m1.add(rows.k0, j));
        // The rows of an unquantized pool are only gathered (and converted
        // to f32).
        Value s, sv;
        if (rows.scale) {
          s = scaleAt(b1, l1, rows.scale, layout, raw, block, rows.gIdx, row);
          sv = vector::BroadcastOp::create(b1, l1, vecTy, s);
        }
        auto decode = [&](OpBuilder &db, Location dl, Value x,
                          Value by) -> Value {
          if (!by)
            return ext(db, dl, x);
          return arith::MulFOp::create(
              db, dl, decodeQuantizedUnscaled(db, dl, x).first, by);
        };
        auto eLoop = scf::ForOp::create(
            b1, l1, zero, rows.d, step, it1,
            [&](OpBuilder &b2, Location l2, Value e0, ValueRange it2) {
              SmallVector<Value> src =
                  bhnd ? SmallVector<Value>{block, rows.gIdx, row, e0}
                       : SmallVector<Value>{block, row, rows.gIdx, e0};
              SmallVector<Value> dst = kvIndex(zero, j, e0);
              Value out;
              if (vectorRows) {
                // In bounds: the pad value is never read (and fp8 constants
                // need not lower).
                Value pad =
                    arith::ConstantOp::create(b2, l2, raw, b2.getZeroAttr(raw));
                Value x = vector::TransferReadOp::create(
                    b2, l2, VectorType::get({lanes}, raw), rows.pool, src, pad,
                    ArrayRef<bool>{true});
                Value y = decode(b2, l2, x, sv);
                out = vector::TransferWriteOp::create(b2, l2, y, it2[0], dst,
                                                      ArrayRef<bool>{true})
                          .getResult();
              } else {
                Value x = tensor::ExtractOp::create(b2, l2, rows.pool, src);
                Value y = decode(b2, l2, x, s);
                out = tensor::InsertOp::create(b2, l2, y, it2[0], dst);
              }
              scf::YieldOp::create(b2, l2, out);
            });
        scf::YieldOp::create(b1, l1, eLoop.getResults());
      });
  // Rows past the present ones: zeros.
  auto zeros = scf::ForOp::create(
      b, loc, present, rows.ks, im.c(1), decoded.getResults(),
      [&](OpBuilder &b1, Location l1, Value j, ValueRange it1) {
        Value z = arith::ConstantOp::create(b1, l1, b1.getF32FloatAttr(0.0));
        auto eLoop = scf::ForOp::create(
            b1, l1, zero, rows.d, im.c(1), it1,
            [&](OpBuilder &b2, Location l2, Value e, ValueRange it2) {
              scf::YieldOp::create(
                  b2, l2,
                  Value(tensor::InsertOp::create(b2, l2, z, it2[0],
                                                 kvIndex(zero, j, e))));
            });
        scf::YieldOp::create(b1, l1, eLoop.getResults());
      });
  return zeros.getResult(0);
}
