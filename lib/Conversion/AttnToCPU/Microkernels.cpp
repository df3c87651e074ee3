//===- Microkernels.cpp - Q K^T and P V register-tile kernels -------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "FusedLowering.h"

#include "attn/Conversion/Dequant.h"
#include "attn/Conversion/PagedKv.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::cpu;

Value FusedLowering::microkernel(
    OpBuilder &b, Location loc, Value c, Value m, Value n, Value kEnd,
    function_ref<Value(OpBuilder &, Location, Value, Value, Value)> readA,
    function_ref<Value(OpBuilder &, Location, Value, Value)> readB,
    bool zeroInit, bool guard) {
  IndexMath im{b, loc};
  auto vecTy = VectorType::get({nw}, f32);
  Value zero = im.c(0), one = im.c(1);
  // Rows [lo, hi) of head r in register blocks of `rows` x nw at columns
  // [j0, j0 + nw): the block's accumulators stay in registers over the
  // whole k loop, which broadcasts one A scalar per row and reads one
  // nw-wide row of B per step.
  auto rowBlocks = [&](OpBuilder &b2, Location l2, Value r, Value j0, Value lo,
                       Value hi, int64_t rows, Value cIn) -> Value {
    auto jLoop = scf::ForOp::create(
        b2, l2, lo, hi, im.c(rows), ValueRange{cIn},
        [&](OpBuilder &b3, Location l3, Value i0, ValueRange c3) {
          IndexMath m3{b3, l3};
          Value pad =
              arith::ConstantOp::create(b3, l3, b3.getF32FloatAttr(0.0));
          SmallVector<bool> inBounds = {true};
          SmallVector<Value> accs;
          Value zeros;
          if (zeroInit)
            zeros = splatConstant(b3, l3, vecTy, 0.0);
          for (int64_t ii = 0; ii < rows; ++ii)
            accs.push_back(zeroInit
                               ? zeros
                               : Value(vector::TransferReadOp::create(
                                     b3, l3, vecTy, c3[0],
                                     ValueRange{r, m3.add(i0, m3.c(ii)), j0},
                                     pad, inBounds)));
          auto kLoop = scf::ForOp::create(
              b3, l3, zero, kEnd, one, accs,
              [&](OpBuilder &b4, Location l4, Value k, ValueRange a4) {
                IndexMath m4{b4, l4};
                Value row = readB(b4, l4, k, j0);
                SmallVector<Value> next;
                for (int64_t ii = 0; ii < rows; ++ii) {
                  Value a = readA(b4, l4, r, m4.add(i0, m4.c(ii)), k);
                  Value splat = vector::BroadcastOp::create(b4, l4, vecTy, a);
                  Value fma = vector::FMAOp::create(b4, l4, splat, row, a4[ii]);
                  if (guard) {
                    // A lane-wise condition (not a scalar one, which LLVM
                    // turns into a branch per row): a masked FMA.
                    Value zero = splatConstant(b4, l4, vecTy, 0.0);
                    Value isZero = arith::CmpFOp::create(
                        b4, l4, arith::CmpFPredicate::OEQ, splat, zero);
                    fma = arith::SelectOp::create(b4, l4, isZero, a4[ii], fma);
                  }
                  next.push_back(fma);
                }
                scf::YieldOp::create(b4, l4, next);
              });
          Value out = c3[0];
          for (int64_t ii = 0; ii < rows; ++ii)
            out = vector::TransferWriteOp::create(
                      b3, l3, kLoop.getResult(ii), out,
                      ValueRange{r, m3.add(i0, m3.c(ii)), j0}, inBounds)
                      .getResult();
          scf::YieldOp::create(b3, l3, out);
        });
    return jLoop.getResult(0);
  };
  // Rows in whole register blocks, then the rows left one by one. The
  // guarded kernel needs a compare mask per row next to the accumulators:
  // it takes half the rows, so that it does not spill either.
  int64_t blockRows = guard ? std::max<int64_t>(mr / 2, 1) : mr;
  Value whole = im.sub(m, arith::RemUIOp::create(b, loc, m, im.c(blockRows)));
  auto rLoop = scf::ForOp::create(
      b, loc, zero, groups, one, ValueRange{c},
      [&](OpBuilder &b1, Location l1, Value r, ValueRange c1) {
        // Column panels outside, row blocks inside: the nw-wide panel of B
        // stays in L1 while every row block of A passes over it.
        auto iLoop = scf::ForOp::create(
            b1, l1, zero, n, im.c(nw), c1,
            [&](OpBuilder &b2, Location l2, Value j0, ValueRange c2) {
              Value out =
                  rowBlocks(b2, l2, r, j0, zero, whole, blockRows, c2[0]);
              if (blockRows > 1)
                out = rowBlocks(b2, l2, r, j0, whole, m, 1, out);
              scf::YieldOp::create(b2, l2, out);
            });
        scf::YieldOp::create(b1, l1, iLoop.getResult(0));
      });
  return rLoop.getResult(0);
}

Value FusedLowering::readRow(OpBuilder &b, Location loc, Value tile,
                             ValueRange idx, int64_t width, bool inBounds) {
  auto tileTy = cast<RankedTensorType>(tile.getType());
  Type e = tileTy.getElementType();
  Value pad = arith::ConstantOp::create(b, loc, b.getZeroAttr(e));
  SmallVector<bool> ib = {inBounds};
  Value x = vector::TransferReadOp::create(b, loc, VectorType::get({width}, e),
                                           tile, idx, pad, ib);
  if (isQuantizedKvType(e))
    return decodeQuantizedUnscaled(b, loc, x).first;
  if (e != f32)
    x = arith::ExtFOp::create(b, loc, VectorType::get({width}, f32), x);
  return x;
}

FusedLowering::RowRef FusedLowering::rowRef(OpBuilder &b, Location loc,
                                            Value tile, const TileRows *rows,
                                            Value j) {
  if (!rows || rows->tile)
    return {tile, Value(), j, Value()};
  IndexMath m{b, loc};
  Value key = m.add(rows->k0, j);
  return {rows->pool, buildPageIndex(b, loc, op, rows->bIdx, key),
          arith::RemUIOp::create(b, loc, key, pageSize), rows->gIdx};
}

SmallVector<Value> FusedLowering::rowIndex(const RowRef &ref, Value zero,
                                           Value col) {
  if (!ref.page)
    return kvIndex(zero, ref.row, col);
  if (layout == Layout::bhnd)
    return {ref.page, ref.gIdx, ref.row, col};
  return {ref.page, ref.row, ref.gIdx, col};
}

std::pair<SmallVector<Value>, SmallVector<Value>>
FusedLowering::blockRows(OpBuilder &b, Location loc, Value n0, int64_t block,
                         Value qs) {
  IndexMath m{b, loc};
  SmallVector<Value> rs, is;
  for (int64_t rb = 0; rb < block; ++rb) {
    Value n = m.add(n0, m.c(rb));
    rs.push_back(arith::DivUIOp::create(b, loc, n, qs));
    is.push_back(arith::RemUIOp::create(b, loc, n, qs));
  }
  return {rs, is};
}

SmallVector<Value> FusedLowering::horizontalSums(OpBuilder &b, Location loc,
                                                 ArrayRef<Value> vs) {
  int64_t n = static_cast<int64_t>(vs.size());
  int64_t width = cast<VectorType>(vs[0].getType()).getNumElements();
  SmallVector<Value> sums;
  if (n == 1 || !llvm::isPowerOf2_64(n) || n > width) {
    for (Value v : vs)
      sums.push_back(vector::ReductionOp::create(
          b, loc, vector::CombiningKind::ADD, v, /*acc=*/Value(), kFast));
    return sums;
  }
  // Pairs (x, y) of vectors whose lanes hold segments of `seg` lanes (one
  // per row) become one vector of segments of seg / 2: the first halves of
  // every segment of x then of y, plus the second halves.
  SmallVector<Value> level(vs.begin(), vs.end());
  int64_t seg = width;
  while (level.size() > 1) {
    SmallVector<int64_t> lo, hi;
    int64_t half = seg / 2;
    for (int64_t src = 0; src < 2; ++src)
      for (int64_t s0 = 0; s0 < width; s0 += seg)
        for (int64_t l = 0; l < half; ++l) {
          lo.push_back(src * width + s0 + l);
          hi.push_back(src * width + s0 + half + l);
        }
    SmallVector<Value> next;
    for (size_t p = 0; p + 1 < level.size(); p += 2) {
      Value a = vector::ShuffleOp::create(b, loc, level[p], level[p + 1], lo);
      Value c = vector::ShuffleOp::create(b, loc, level[p], level[p + 1], hi);
      next.push_back(arith::AddFOp::create(b, loc, a, c, kFast));
    }
    level = std::move(next);
    seg = half;
  }
  // One vector of n segments of `seg` lanes, in row order: sum within each.
  Value w = level[0];
  for (int64_t half = seg / 2; half >= 1; half /= 2) {
    SmallVector<int64_t> swap;
    for (int64_t l = 0; l < width; ++l)
      swap.push_back(l % (2 * half) < half ? l + half : l - half);
    w = arith::AddFOp::create(
        b, loc, w, vector::ShuffleOp::create(b, loc, w, w, swap), kFast);
  }
  for (int64_t r = 0; r < n; ++r)
    sums.push_back(vector::ExtractOp::create(b, loc, w, r * seg));
  return sums;
}

void FusedLowering::prefetchAhead(OpBuilder &b, Location loc, const TileRows &k,
                                  const TileRows *v, Value j) {
  if (!pageSize || !k.kvLen)
    return;
  IndexMath m{b, loc};
  Value key = m.min(m.add(m.add(k.k0, j), pageSize), m.sub(k.kvLen, m.c(1)));
  auto [page, row] = cacheRow(b, loc, k.bIdx, key);
  for (const TileRows *rows : {&k, v}) {
    if (!rows)
      continue;
    auto type = cast<RankedTensorType>(rows->pool.getType());
    // One hint per 64-byte line of the row (the first line only when D is
    // dynamic).
    int64_t d = staticSize(rows->d);
    int64_t perLine = std::max<int64_t>(1, 512 / type.getElementTypeBitWidth());
    int64_t lines = ShapedType::isDynamic(d) ? 1 : llvm::divideCeil(d, perLine);
    auto layoutAttr = StridedLayoutAttr::get(
        b.getContext(), ShapedType::kDynamic,
        SmallVector<int64_t>(type.getRank(), ShapedType::kDynamic));
    auto bufType =
        MemRefType::get(type.getShape(), type.getElementType(), layoutAttr);
    Value buf = bufferization::ToBufferOp::create(b, loc, bufType, rows->pool,
                                                  /*readOnly=*/true);
    for (int64_t c = 0; c < lines; ++c) {
      RowRef ref{buf, page, row, rows->gIdx};
      memref::PrefetchOp::create(b, loc, buf,
                                 rowIndex(ref, Value(), m.c(c * perLine)),
                                 /*isWrite=*/false, /*localityHint=*/3,
                                 /*isDataCache=*/true);
    }
  }
}

Value FusedLowering::rowwiseQK(OpBuilder &b, Location loc, Value qTile,
                               Value kTile, Value sInit, Value qs, Value ks,
                               const TileRows *rows,
                               const TileRows *prefetchV) {
  IndexMath im{b, loc};
  auto vecTy = VectorType::get({lanes}, f32);
  Value zero = im.c(0), one = im.c(1);
  int64_t d = staticSize(dqk);
  bool dInBounds = !ShapedType::isDynamic(d) && d % lanes == 0;
  auto zeros = [&](OpBuilder &nb, Location nl) -> Value {
    return splatConstant(nb, nl, vecTy, 0.0);
  };
  auto qIdx = [&](Value r, Value i, Value d0) {
    return headRowIndex(zero, r, i, d0);
  };
  // Static Dqk up to 16 registers is unrolled, with two independent chains
  // per row; otherwise a loop over one-register chunks.
  bool unrolled = !ShapedType::isDynamic(d) && d <= 16 * lanes;
  int64_t chunks = unrolled ? llvm::divideCeil(d, lanes) : 1;
  int64_t chains = std::min<int64_t>(chunks, 2);
  // The R x qs rows n = r * qs + i of the tile against key j, in blocks of
  // `block` rows: each chunk of the key row is read (and decoded) once and
  // multiplied into every row of the block; one horizontal sum per logit,
  // times the key's scale when the cache is quantized.
  auto rowBlocks = [&](OpBuilder &b1, Location l1, Value j, const RowRef &kRow,
                       Value kScale, Value lo, Value hi, int64_t block,
                       Value init) -> Value {
    auto nLoop = scf::ForOp::create(
        b1, l1, lo, hi, im.c(block), ValueRange{init},
        [&](OpBuilder &b2, Location l2, Value n0, ValueRange it2) {
          IndexMath m2{b2, l2};
          SmallVector<Value> rs, is;
          std::tie(rs, is) = blockRows(b2, l2, n0, block, qs);
          // accs[rb * chains + c]: row rb's chain c.
          auto step = [&](OpBuilder &cb, Location cl, Value d0, int64_t chain,
                          SmallVector<Value> &accs) {
            Value kv = readRow(cb, cl, kRow.src, rowIndex(kRow, zero, d0),
                               lanes, dInBounds);
            for (int64_t rb = 0; rb < block; ++rb) {
              Value qv = readRow(cb, cl, qTile, qIdx(rs[rb], is[rb], d0), lanes,
                                 dInBounds);
              Value &acc = accs[rb * chains + chain];
              acc = vector::FMAOp::create(cb, cl, qv, kv, acc);
            }
          };
          SmallVector<Value> accs(block * chains, zeros(b2, l2));
          if (unrolled) {
            for (int64_t c = 0; c < chunks; ++c)
              step(b2, l2, m2.c(c * lanes), c % chains, accs);
          } else {
            auto loop = scf::ForOp::create(
                b2, l2, zero, dqk, m2.c(lanes), accs,
                [&](OpBuilder &lb, Location ll, Value d0, ValueRange it) {
                  SmallVector<Value> a(it.begin(), it.end());
                  step(lb, ll, d0, 0, a);
                  scf::YieldOp::create(lb, ll, a);
                });
            accs.assign(loop.getResults().begin(), loop.getResults().end());
          }
          SmallVector<Value> rowSums;
          for (int64_t rb = 0; rb < block; ++rb) {
            Value v = accs[rb * chains];
            for (int64_t c = 1; c < chains; ++c)
              v = arith::AddFOp::create(b2, l2, v, accs[rb * chains + c],
                                        kFast);
            rowSums.push_back(v);
          }
          SmallVector<Value> sums = horizontalSums(b2, l2, rowSums);
          Value out = it2[0];
          for (int64_t rb = 0; rb < block; ++rb) {
            Value sum = sums[rb];
            if (kScale)
              sum = arith::MulFOp::create(b2, l2, sum, kScale);
            out = tensor::InsertOp::create(b2, l2, sum, out,
                                           ValueRange{rs[rb], is[rb], j});
          }
          scf::YieldOp::create(b2, l2, out);
        });
    return nLoop.getResult(0);
  };
  auto jLoop = scf::ForOp::create(
      b, loc, zero, ks, one, ValueRange{sInit},
      [&](OpBuilder &b1, Location l1, Value j, ValueRange it1) {
        IndexMath m1{b1, l1};
        RowRef kRow = rowRef(b1, l1, kTile, rows, j);
        Value kScale =
            rows && rows->scale ? rowScale(b1, l1, *rows, j) : Value();
        if (rows)
          prefetchAhead(b1, l1, *rows, prefetchV, j);
        Value all = m1.mul(groups, qs);
        Value blocked =
            m1.sub(all, arith::RemUIOp::create(b1, l1, all, m1.c(kQKRows)));
        Value out =
            rowBlocks(b1, l1, j, kRow, kScale, zero, blocked, kQKRows, it1[0]);
        out = rowBlocks(b1, l1, j, kRow, kScale, blocked, all, 1, out);
        scf::YieldOp::create(b1, l1, out);
      });
  return jLoop.getResult(0);
}

Value FusedLowering::rowwisePV(OpBuilder &b, Location loc, Value acc, Value p,
                               Value vTile, Value qs, Value ks, bool guard,
                               const TileRows *paged) {
  IndexMath im{b, loc};
  auto vecTy = VectorType::get({lanes}, f32);
  Value zero = im.c(0), one = im.c(1);
  int64_t e = staticSize(dv);
  int64_t width = 4;
  if (!ShapedType::isDynamic(e))
    width = std::clamp<int64_t>(llvm::divideCeil(e, lanes), 1, 4);
  // kPVRows x width accumulators, the V row chunks and a broadcast weight
  // must fit in the register file (16 ymm on AVX2: 4 x 2).
  while (width > 1 && kPVRows * width + width + 1 > registers)
    width /= 2;
  bool eInBounds = !ShapedType::isDynamic(e) && e % (width * lanes) == 0;
  SmallVector<bool> ib = {eInBounds};
  // Rows [lo, hi) in blocks of `block`; row n is (r, i) = (n / qs, n % qs).
  auto rowBlocks = [&](OpBuilder &b0, Location l0, Value lo, Value hi,
                       int64_t block, Value init) -> Value {
    IndexMath m0{b0, l0};
    auto nLoop = scf::ForOp::create(
        b0, l0, lo, hi, m0.c(block), ValueRange{init},
        [&](OpBuilder &b1, Location l1, Value n0, ValueRange it1) {
          SmallVector<Value> rs, is;
          std::tie(rs, is) = blockRows(b1, l1, n0, block, qs);
          auto eLoop = scf::ForOp::create(
              b1, l1, zero, dv, im.c(width * lanes), it1,
              [&](OpBuilder &b3, Location l3, Value e0, ValueRange it3) {
                IndexMath m3{b3, l3};
                Value pad =
                    arith::ConstantOp::create(b3, l3, b3.getF32FloatAttr(0.0));
                SmallVector<Value> accs, cols;
                for (int64_t c = 0; c < width; ++c)
                  cols.push_back(m3.add(e0, m3.c(c * lanes)));
                for (int64_t rb = 0; rb < block; ++rb)
                  for (int64_t c = 0; c < width; ++c)
                    accs.push_back(vector::TransferReadOp::create(
                        b3, l3, vecTy, it3[0],
                        ValueRange{rs[rb], is[rb], cols[c]}, pad, ib));
                auto kLoop = scf::ForOp::create(
                    b3, l3, zero, ks, one, accs,
                    [&](OpBuilder &b4, Location l4, Value j, ValueRange a4) {
                      Value z = arith::ConstantIndexOp::create(b4, l4, 0);
                      RowRef vRow = rowRef(b4, l4, vTile, paged, j);
                      // A quantized row's scale goes on the weights; a
                      // weight of 0 stays 0 whatever the scale.
                      Value vScale = paged && paged->scale
                                         ? rowScale(b4, l4, *paged, j)
                                         : Value();
                      SmallVector<Value> vv;
                      for (int64_t c = 0; c < width; ++c)
                        vv.push_back(readRow(b4, l4, vRow.src,
                                             rowIndex(vRow, z, cols[c]), lanes,
                                             eInBounds));
                      SmallVector<Value> next;
                      for (int64_t rb = 0; rb < block; ++rb) {
                        Value w = tensor::ExtractOp::create(
                            b4, l4, p, ValueRange{rs[rb], is[rb], j});
                        Value isZero;
                        if (guard)
                          isZero = arith::CmpFOp::create(
                              b4, l4, arith::CmpFPredicate::OEQ,
                              vector::BroadcastOp::create(b4, l4, vecTy, w),
                              splatConstant(b4, l4, vecTy, 0.0));
                        if (vScale) {
                          Value zw = arith::CmpFOp::create(
                              b4, l4, arith::CmpFPredicate::OEQ, w,
                              arith::ConstantOp::create(
                                  b4, l4, b4.getF32FloatAttr(0.0)));
                          w = arith::SelectOp::create(
                              b4, l4, zw, w,
                              arith::MulFOp::create(b4, l4, w, vScale));
                        }
                        Value splat =
                            vector::BroadcastOp::create(b4, l4, vecTy, w);
                        for (int64_t c = 0; c < width; ++c) {
                          Value prev = a4[rb * width + c];
                          Value f =
                              vector::FMAOp::create(b4, l4, splat, vv[c], prev);
                          if (guard)
                            f = arith::SelectOp::create(b4, l4, isZero, prev,
                                                        f);
                          next.push_back(f);
                        }
                      }
                      scf::YieldOp::create(b4, l4, next);
                    });
                Value out = it3[0];
                for (int64_t rb = 0; rb < block; ++rb)
                  for (int64_t c = 0; c < width; ++c)
                    out = vector::TransferWriteOp::create(
                              b3, l3, kLoop.getResult(rb * width + c), out,
                              ValueRange{rs[rb], is[rb], cols[c]}, ib)
                              .getResult();
                scf::YieldOp::create(b3, l3, out);
              });
          scf::YieldOp::create(b1, l1, eLoop.getResults());
        });
    return nLoop.getResult(0);
  };
  Value rows = im.mul(groups, qs);
  Value blocked =
      im.sub(rows, arith::RemUIOp::create(b, loc, rows, im.c(kPVRows)));
  Value out = rowBlocks(b, loc, zero, blocked, kPVRows, acc);
  return rowBlocks(b, loc, blocked, rows, 1, out);
}

SmallVector<Value> FusedLowering::transposeBlock(OpBuilder &b, Location loc,
                                                 ArrayRef<Value> rows) {
  // The classic shuffle network of x86 transposes, as vector.shuffle ops
  // whose masks each match one instruction (the canonicalizer folds a
  // vector.transpose of inserted rows into per-element permutations, which
  // LLVM lowers through the stack): unpack 32-bit pairs and 64-bit pairs
  // within 128-bit blocks, then interleave 128-bit blocks.
  int64_t n = static_cast<int64_t>(rows.size());
  int64_t blocks = n / 4;
  assert(n % 4 == 0 && (blocks == 1 || blocks == 2 || blocks == 4) &&
         "4, 8 or 16 lanes");
  SmallVector<int64_t> loPs, hiPs, loPd, hiPd, even, odd;
  for (int64_t l = 0; l < blocks; ++l) {
    loPs.append({4 * l, n + 4 * l, 4 * l + 1, n + 4 * l + 1});
    hiPs.append({4 * l + 2, n + 4 * l + 2, 4 * l + 3, n + 4 * l + 3});
    loPd.append({4 * l, 4 * l + 1, n + 4 * l, n + 4 * l + 1});
    hiPd.append({4 * l + 2, 4 * l + 3, n + 4 * l + 2, n + 4 * l + 3});
  }
  for (int64_t k = 0; k < 2 * blocks; ++k)
    for (int64_t x = 4 * k; x < 4 * k + 4; ++x)
      (k % 2 ? odd : even).push_back(x);
  auto shuffle = [&](Value x, Value y, ArrayRef<int64_t> mask) -> Value {
    return vector::ShuffleOp::create(b, loc, x, y, mask);
  };
  // t[2i], t[2i + 1]: rows 2i and 2i + 1 interleaved (low and high pairs).
  SmallVector<Value> t;
  for (int64_t i = 0; i < n; i += 2) {
    t.push_back(shuffle(rows[i], rows[i + 1], loPs));
    t.push_back(shuffle(rows[i], rows[i + 1], hiPs));
  }
  // s[4g + c]: column c + 4k of rows 4g .. 4g + 3 in 128-bit block k.
  SmallVector<Value> s;
  for (int64_t g = 0; g < n / 2; g += 2) {
    s.push_back(shuffle(t[2 * g], t[2 * g + 2], loPd));
    s.push_back(shuffle(t[2 * g], t[2 * g + 2], hiPd));
    s.push_back(shuffle(t[2 * g + 1], t[2 * g + 3], loPd));
    s.push_back(shuffle(t[2 * g + 1], t[2 * g + 3], hiPd));
  }
  if (blocks == 1)
    return s;
  SmallVector<Value> out(n);
  for (int64_t c = 0; c < 4; ++c) {
    if (blocks == 2) {
      out[c] = shuffle(s[c], s[4 + c], even);
      out[c + 4] = shuffle(s[c], s[4 + c], odd);
      continue;
    }
    Value u0 = shuffle(s[c], s[4 + c], even), u1 = shuffle(s[c], s[4 + c], odd);
    Value u2 = shuffle(s[8 + c], s[12 + c], even);
    Value u3 = shuffle(s[8 + c], s[12 + c], odd);
    out[c] = shuffle(u0, u2, even);
    out[c + 8] = shuffle(u0, u2, odd);
    out[c + 4] = shuffle(u1, u3, even);
    out[c + 12] = shuffle(u1, u3, odd);
  }
  return out;
}

Value FusedLowering::packTransposed(OpBuilder &b, Location loc, Value kTile,
                                    Value kT, Value ks) {
  IndexMath im{b, loc};
  Value zero = im.c(0), step = im.c(lanes);
  SmallVector<bool> ib = {true};
  auto jLoop = scf::ForOp::create(
      b, loc, zero, ks, step, ValueRange{kT},
      [&](OpBuilder &b1, Location l1, Value j0, ValueRange it1) {
        auto dLoop = scf::ForOp::create(
            b1, l1, zero, dqk, step, it1,
            [&](OpBuilder &b2, Location l2, Value d0, ValueRange it2) {
              IndexMath m{b2, l2};
              SmallVector<Value> rows;
              for (int64_t jj = 0; jj < lanes; ++jj) {
                Value j = m.add(j0, m.c(jj));
                SmallVector<Value> idx = kvIndex(zero, j, d0);
                // f16 / bf16 rows are converted as they are read.
                rows.push_back(readRow(b2, l2, kTile, idx, lanes, true));
              }
              SmallVector<Value> cols = transposeBlock(b2, l2, rows);
              Value out = it2[0];
              for (int64_t dd = 0; dd < lanes; ++dd)
                out = vector::TransferWriteOp::create(
                          b2, l2, cols[dd], out,
                          ValueRange{m.add(d0, m.c(dd)), j0}, ib)
                          .getResult();
              scf::YieldOp::create(b2, l2, out);
            });
        scf::YieldOp::create(b1, l1, dLoop.getResults());
      });
  return jLoop.getResult(0);
}

Value FusedLowering::allFinite(OpBuilder &b, Location loc, Value vTile,
                               Value ks) {
  IndexMath im{b, loc};
  auto vecTy = VectorType::get({lanes}, f32);
  Value zero = im.c(0), one = im.c(1);
  int64_t e = staticSize(dv);
  bool eInBounds = !ShapedType::isDynamic(e) && e % lanes == 0;
  Value zeros = splatConstant(b, loc, vecTy, 0.0);
  auto jLoop = scf::ForOp::create(
      b, loc, zero, ks, one, ValueRange{zeros},
      [&](OpBuilder &b1, Location l1, Value j, ValueRange it1) {
        auto eLoop = scf::ForOp::create(
            b1, l1, zero, dv, im.c(lanes), it1,
            [&](OpBuilder &b2, Location l2, Value e0, ValueRange it2) {
              SmallVector<Value> idx = kvIndex(zero, j, e0);
              Value v = readRow(b2, l2, vTile, idx, lanes, eInBounds);
              Value z = arith::MulFOp::create(b2, l2, v, zeros);
              scf::YieldOp::create(
                  b2, l2, Value(arith::AddFOp::create(b2, l2, it2[0], z)));
            });
        scf::YieldOp::create(b1, l1, eLoop.getResults());
      });
  Value sum = vector::ReductionOp::create(b, loc, vector::CombiningKind::ADD,
                                          jLoop.getResult(0));
  return arith::CmpFOp::create(
      b, loc, arith::CmpFPredicate::OEQ, sum,
      arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0)));
}

Value FusedLowering::convertQueryTile(OpBuilder &b, Location loc, Value qTile,
                                      Value qs) {
  IndexMath im{b, loc};
  Value zero = im.c(0), one = im.c(1);
  int64_t d = staticSize(dqk);
  bool inBounds = !ShapedType::isDynamic(d) && d % lanes == 0;
  SmallVector<OpFoldResult> shape = {groups, qs, dqk};
  Value dest = tensor::EmptyOp::create(b, loc, shape, f32);
  auto rLoop = scf::ForOp::create(
      b, loc, zero, groups, one, ValueRange{dest},
      [&](OpBuilder &b1, Location l1, Value r, ValueRange it1) {
        auto iLoop = scf::ForOp::create(
            b1, l1, zero, qs, one, it1,
            [&](OpBuilder &b2, Location l2, Value i, ValueRange it2) {
              auto dLoop = scf::ForOp::create(
                  b2, l2, zero, dqk, im.c(lanes), it2,
                  [&](OpBuilder &b3, Location l3, Value d0, ValueRange it3) {
                    Value x =
                        readRow(b3, l3, qTile, headRowIndex(zero, r, i, d0),
                                lanes, inBounds);
                    scf::YieldOp::create(b3, l3,
                                         vector::TransferWriteOp::create(
                                             b3, l3, x, it3[0],
                                             ValueRange{r, i, d0},
                                             ArrayRef<bool>{inBounds})
                                             .getResult());
                  });
              scf::YieldOp::create(b2, l2, dLoop.getResults());
            });
        scf::YieldOp::create(b1, l1, iLoop.getResults());
      });
  return rLoop.getResult(0);
}

Value FusedLowering::convertKeyTile(OpBuilder &b, Location loc, Value tile,
                                    Value ks, Value d, Value dest) {
  IndexMath im{b, loc};
  Value zero = im.c(0), one = im.c(1);
  int64_t ds = staticSize(d);
  bool inBounds = !ShapedType::isDynamic(ds) && ds % lanes == 0;
  auto jLoop = scf::ForOp::create(
      b, loc, zero, ks, one, ValueRange{dest},
      [&](OpBuilder &b1, Location l1, Value j, ValueRange it1) {
        auto eLoop = scf::ForOp::create(
            b1, l1, zero, d, im.c(lanes), it1,
            [&](OpBuilder &b2, Location l2, Value e0, ValueRange it2) {
              Value x =
                  readRow(b2, l2, tile, kvIndex(zero, j, e0), lanes, inBounds);
              scf::YieldOp::create(b2, l2,
                                   vector::TransferWriteOp::create(
                                       b2, l2, x, it2[0], ValueRange{j, e0},
                                       ArrayRef<bool>{inBounds})
                                       .getResult());
            });
        scf::YieldOp::create(b1, l1, eLoop.getResults());
      });
  return jLoop.getResult(0);
}
