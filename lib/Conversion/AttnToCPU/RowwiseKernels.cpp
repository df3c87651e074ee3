//===- RowwiseKernels.cpp - Q K^T and P V row by row (decode) -------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// The kernels of tiles with few rows per head (decode's one query per head)
// and of tails: Q K^T key rows against blocks of query rows (f32 rows one
// at a time, narrower rows several a step sharing the query chunks), P V
// with each V row chunk shared by a block of rows. K/V rows are read where
// they are: in the tile, in their page of the pool, or raw in a quantized
// cache (decoded in registers, scaled once per key). Rows ahead are
// prefetched into L2: rows of pages shorter than 128 keys from the next
// page, contiguous rows (and longer pages) 8 KiB ahead.
// Narrow P V passes over unquantized rows go over the keys in chunks.
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
  return ext(b, loc, x);
}

FusedLowering::RowRef FusedLowering::rowRef(OpBuilder &b, Location loc,
                                            Value tile, const TileRows *rows,
                                            Value j) {
  if (!rows || rows->tile)
    return {tile, Value(), j, Value()};
  IndexMath m{b, loc};
  auto [page, row] = cacheRow(b, loc, rows->bIdx, m.add(rows->k0, j));
  return {rows->pool, page, row, rows->gIdx};
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

bool FusedLowering::hintsNextPage() const {
  // (The verifier makes paged pools' page size static.)
  return pageSize && staticSize(pageSize) < kLongPageKeys;
}

int64_t FusedLowering::prefetchDistance(const TileRows &rows) {
  auto type = cast<RankedTensorType>(rows.pool.getType());
  int64_t d = staticSize(rows.d);
  // A dynamic D: rows of 128 elements.
  int64_t bits =
      (ShapedType::isDynamic(d) ? 128 : d) * type.getElementTypeBitWidth();
  return std::max<int64_t>(1, kPrefetchBytes * 8 / std::max<int64_t>(bits, 1));
}

/// Elements of `type` in a 64-byte line.
static int64_t elementsPerLine(RankedTensorType type) {
  return std::max<int64_t>(1, 512 / type.getElementTypeBitWidth());
}

void FusedLowering::prefetchRow(OpBuilder &b, Location loc,
                                const TileRows &rows, Value j, Value ahead,
                                Value col0, int64_t lines) {
  IndexMath m{b, loc};
  Value key = m.min(m.add(m.add(rows.k0, j), ahead), m.sub(rows.kvLen, m.c(1)));
  auto [page, row] = cacheRow(b, loc, rows.bIdx, key);
  auto type = cast<RankedTensorType>(rows.pool.getType());
  int64_t perLine = elementsPerLine(type);
  auto layoutAttr = StridedLayoutAttr::get(
      b.getContext(), ShapedType::kDynamic,
      SmallVector<int64_t>(type.getRank(), ShapedType::kDynamic));
  auto bufType =
      MemRefType::get(type.getShape(), type.getElementType(), layoutAttr);
  Value buf = bufferization::ToBufferOp::create(b, loc, bufType, rows.pool,
                                                /*readOnly=*/true);
  for (int64_t c = 0; c < lines; ++c) {
    RowRef ref{buf, page, row, rows.gIdx};
    memref::PrefetchOp::create(
        b, loc, buf, rowIndex(ref, Value(), m.add(col0, m.c(c * perLine))),
        /*isWrite=*/false, /*localityHint=*/1, /*isDataCache=*/true);
  }
}

void FusedLowering::prefetchAhead(OpBuilder &b, Location loc, const TileRows &k,
                                  const TileRows *v, Value j) {
  if (!k.kvLen)
    return;
  IndexMath m{b, loc};
  // One hint per 64-byte line of the row, at most kPrefetchLines (the first
  // line only when D is dynamic).
  auto lines = [&](const TileRows &rows) {
    int64_t d = staticSize(rows.d);
    int64_t perLine =
        elementsPerLine(cast<RankedTensorType>(rows.pool.getType()));
    return ShapedType::isDynamic(d)
               ? int64_t(1)
               : std::min<int64_t>(kPrefetchLines,
                                   llvm::divideCeil(d, perLine));
  };
  // Short pages (hintsNextPage): K and V of the next page's row; long
  // pages or contiguous rows: K only (rowwisePV hints the V rows it reads).
  bool nextPage = hintsNextPage();
  Value ahead = nextPage ? pageSize : m.c(prefetchDistance(k));
  for (const TileRows *rows : {&k, nextPage ? v : nullptr})
    if (rows)
      prefetchRow(b, loc, *rows, j, ahead, m.c(0), lines(*rows));
}

int64_t FusedLowering::keysPerQKStep(Type kElem) const {
  // f32 rows: one key a step. Interleaving several rows' lines defeats the
  // hardware prefetchers, and an f32 stream of rows is bound by memory: a
  // 1-thread f32 decode took 11% (2 keys) and 21% (4 keys) more time, 50%
  // more without the software hints. Narrower rows are decoded or widened
  // in registers, which bounds them by instructions: 4 keys took 26% less
  // time for bf16, 28% for f16, 13% for a paged int8 cache (AVX2 bf16, 2
  // keys: 17%).
  if (kElem.getIntOrFloatBitWidth() >= 32)
    return 1;
  // The block's one-register accumulators (one chain each), a register per
  // key row chunk, the query chunk and a spare; the logits no more than the
  // lanes of one vector (one tree).
  int64_t kb = kQKKeys;
  while (kb > 1 && (kQKRows * kb > lanes || kQKRows * kb + kb + 2 > registers))
    kb /= 2;
  return kb;
}

Value FusedLowering::rowwiseQK(OpBuilder &b, Location loc, Value qTile,
                               Value kTile, Value sInit, Value qs, Value ks,
                               const TileRows *rows,
                               const TileRows *prefetchV) {
  IndexMath im{b, loc};
  auto vecTy = VectorType::get({lanes}, f32);
  Value zero = im.c(0);
  int64_t d = staticSize(dqk);
  bool dInBounds = !ShapedType::isDynamic(d) && d % lanes == 0;
  auto zeros = [&](OpBuilder &nb, Location nl) -> Value {
    return splatConstant(nb, nl, vecTy, 0.0);
  };
  auto qIdx = [&](Value r, Value i, Value d0) {
    return headRowIndex(zero, r, i, d0);
  };
  // Static Dqk up to 16 registers is unrolled; otherwise a loop over
  // one-register chunks.
  bool unrolled = !ShapedType::isDynamic(d) && d <= 16 * lanes;
  int64_t chunks = unrolled ? llvm::divideCeil(d, lanes) : 1;
  assert((kTile || rows) && "rowwiseQK: neither a K tile nor K rows");
  int64_t kb = keysPerQKStep(
      cast<RankedTensorType>((kTile ? kTile : rows->pool).getType())
          .getElementType());
  // The keys `js` (rows `kRows`, scales `kScales` when quantized) against
  // the R x qs rows n = r * qs + i of the tile, in blocks of `block` rows:
  // each chunk of a key row is read (and decoded) once and multiplied into
  // every row of the block, each chunk of a query row once for all the
  // keys; one shuffle-and-add tree sums all the block's logits, a row's
  // logits of consecutive keys are written as one vector, times the keys'
  // scales when the cache is quantized.
  auto rowBlocks = [&](OpBuilder &b1, Location l1, ArrayRef<Value> js,
                       ArrayRef<RowRef> kRows, ArrayRef<Value> kScales,
                       Value lo, Value hi, int64_t block, Value init) -> Value {
    int64_t nk = static_cast<int64_t>(js.size());
    // Independent accumulator chains per logit: enough for the FMA latency.
    int64_t chains =
        block * nk >= 8 ? int64_t(1) : std::min<int64_t>(chunks, 2);
    auto nLoop = scf::ForOp::create(
        b1, l1, lo, hi, im.c(block), ValueRange{init},
        [&](OpBuilder &b2, Location l2, Value n0, ValueRange it2) {
          SmallVector<Value> rs, is;
          std::tie(rs, is) = blockRows(b2, l2, n0, block, qs);
          // accs[(rb * nk + kk) * chains + c]: row rb's chain c of key kk.
          auto step = [&](OpBuilder &cb, Location cl, Value d0, int64_t chain,
                          SmallVector<Value> &accs) {
            SmallVector<Value> kv;
            for (const RowRef &kRow : kRows)
              kv.push_back(readRow(cb, cl, kRow.src, rowIndex(kRow, zero, d0),
                                   lanes, dInBounds));
            for (int64_t rb = 0; rb < block; ++rb) {
              Value qv = readRow(cb, cl, qTile, qIdx(rs[rb], is[rb], d0), lanes,
                                 dInBounds);
              for (int64_t kk = 0; kk < nk; ++kk) {
                Value &acc = accs[(rb * nk + kk) * chains + chain];
                acc = vector::FMAOp::create(cb, cl, qv, kv[kk], acc);
              }
            }
          };
          SmallVector<Value> accs(block * nk * chains, zeros(b2, l2));
          if (unrolled) {
            IndexMath m2{b2, l2};
            for (int64_t c = 0; c < chunks; ++c)
              step(b2, l2, m2.c(c * lanes), c % chains, accs);
          } else {
            auto loop = scf::ForOp::create(
                b2, l2, zero, dqk, im.c(lanes), accs,
                [&](OpBuilder &lb, Location ll, Value d0, ValueRange it) {
                  SmallVector<Value> a(it.begin(), it.end());
                  step(lb, ll, d0, 0, a);
                  scf::YieldOp::create(lb, ll, a);
                });
            accs.assign(loop.getResults().begin(), loop.getResults().end());
          }
          SmallVector<Value> dots;
          for (int64_t n = 0; n < block * nk; ++n) {
            Value v = accs[n * chains];
            for (int64_t c = 1; c < chains; ++c)
              v = arith::AddFOp::create(b2, l2, v, accs[n * chains + c], kFast);
            dots.push_back(v);
          }
          SmallVector<Value> sums = horizontalSums(b2, l2, dots);
          Value out = it2[0];
          for (int64_t rb = 0; rb < block; ++rb) {
            ArrayRef<Value> row = ArrayRef<Value>(sums).slice(rb * nk, nk);
            if (nk == 1) {
              Value sum = row[0];
              if (!kScales.empty())
                sum = arith::MulFOp::create(b2, l2, sum, kScales[0]);
              out = tensor::InsertOp::create(b2, l2, sum, out,
                                             ValueRange{rs[rb], is[rb], js[0]});
              continue;
            }
            auto rowTy = VectorType::get({nk}, f32);
            Value v = vector::FromElementsOp::create(b2, l2, rowTy, row);
            if (!kScales.empty())
              v = arith::MulFOp::create(
                  b2, l2, v,
                  vector::FromElementsOp::create(b2, l2, rowTy, kScales));
            out = vector::TransferWriteOp::create(
                      b2, l2, v, out, ValueRange{rs[rb], is[rb], js[0]},
                      ArrayRef<bool>{true})
                      .getResult();
          }
          scf::YieldOp::create(b2, l2, out);
        });
    return nLoop.getResult(0);
  };
  // Keys j0 .. j0 + nk - 1 against every row of the tile: the rows in
  // whole blocks of kQKRows, then the rows left one by one.
  Value all = im.mul(groups, qs);
  Value blocked = im.roundDown(all, kQKRows);
  auto keyStep = [&](OpBuilder &b1, Location l1, Value j0, int64_t nk,
                     Value s) -> Value {
    IndexMath m1{b1, l1};
    SmallVector<Value> js, kScales;
    SmallVector<RowRef> kRows;
    for (int64_t kk = 0; kk < nk; ++kk) {
      Value j = kk ? m1.add(j0, m1.c(kk)) : j0;
      js.push_back(j);
      kRows.push_back(rowRef(b1, l1, kTile, rows, j));
      if (rows && rows->scale)
        kScales.push_back(rowScale(b1, l1, *rows, j));
      if (rows)
        prefetchAhead(b1, l1, *rows, prefetchV, j);
    }
    Value out =
        rowBlocks(b1, l1, js, kRows, kScales, zero, blocked, kQKRows, s);
    return rowBlocks(b1, l1, js, kRows, kScales, blocked, all, 1, out);
  };
  auto keyLoop = [&](Value lo, Value hi, int64_t nk, Value s) -> Value {
    return scf::ForOp::create(
               b, loc, lo, hi, im.c(nk), ValueRange{s},
               [&](OpBuilder &b1, Location l1, Value j0, ValueRange it1) {
                 scf::YieldOp::create(b1, l1, keyStep(b1, l1, j0, nk, it1[0]));
               })
        .getResult(0);
  };
  if (kb == 1)
    return keyLoop(zero, ks, 1, sInit);
  Value keysBlocked = im.roundDown(ks, kb);
  return keyLoop(keysBlocked, ks, 1, keyLoop(zero, keysBlocked, kb, sInit));
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
  int64_t vAhead = paged && paged->kvLen ? prefetchDistance(*paged) : 0;
  // Passes that read less than 256 bytes of each V row (AVX2's two
  // registers of f32, one 64-byte line) go over the keys in chunks of about
  // 4 KiB of V rows, so that each pass after the first finds the chunk's
  // rows in L1: a pass over the whole tile would fetch one line of each
  // 512-byte row from memory, then the next line in the next pass (a
  // 1-thread decode step took 2x as long). Wider passes (AVX-512's four
  // registers) read the tile once per pass: the second pass finds it in L2,
  // and chunks only added accumulator loads and stores (7% slower).
  // Quantized rows, decoded in registers, are bound by instructions, not by
  // reading a row again: no chunks. With them LLVM kept the accumulator tile
  // in registers across the chunk loop and spilled the key loop's
  // accumulators (AVX-512, paged int8 cache: 13.8 ms a decode step against
  // 10.9 without; contiguous int8 and AVX2 the same either way).
  Type vElt =
      cast<RankedTensorType>(vTile ? vTile.getType() : paged->pool.getType())
          .getElementType();
  int64_t eltBits = std::max<int64_t>(vElt.getIntOrFloatBitWidth(), 8);
  int64_t rowBits = (ShapedType::isDynamic(e) ? 128 : e) * eltBits;
  bool severalPasses = ShapedType::isDynamic(e) || e > width * lanes;
  int64_t chunk = 0;
  if (severalPasses && width * lanes * eltBits < 256 * 8 &&
      !isQuantizedKvType(vElt))
    chunk = std::max<int64_t>(4, 4096 * 8 / rowBits);
  // The first line only when a pass's columns may run past the row's end.
  int64_t vLines = 1;
  if (paged && paged->kvLen && eInBounds) {
    auto type = cast<RankedTensorType>(paged->pool.getType());
    vLines = llvm::divideCeil(width * lanes * type.getElementTypeBitWidth(),
                              int64_t(512));
  }
  // A quantized row's scale goes on the weights, once per tile (a weight of
  // 0 stays 0 whatever the scale): pw[r, i, j] = p[r, i, j] * scale[j], read
  // by every pass over Dv. (Per pass, the scale's lookup and the multiply
  // cost each key 4 scalar operations per row and pass.)
  Value pw = p;
  if (paged && paged->scale) {
    Value dest = scratchTile(b, loc, {groups, qs, ks}, f32, 2);
    Value fzero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0));
    pw = scf::ForOp::create(
             b, loc, zero, ks, one, ValueRange{dest},
             [&](OpBuilder &b1, Location l1, Value j, ValueRange it1) {
               Value scale = rowScale(b1, l1, *paged, j);
               auto rLoop = scf::ForOp::create(
                   b1, l1, zero, groups, one, it1,
                   [&](OpBuilder &b2, Location l2, Value r, ValueRange it2) {
                     auto iLoop = scf::ForOp::create(
                         b2, l2, zero, qs, one, it2,
                         [&](OpBuilder &b3, Location l3, Value i,
                             ValueRange it3) {
                           Value w = tensor::ExtractOp::create(
                               b3, l3, p, ValueRange{r, i, j});
                           Value zw = arith::CmpFOp::create(
                               b3, l3, arith::CmpFPredicate::OEQ, w, fzero);
                           w = arith::SelectOp::create(
                               b3, l3, zw, w,
                               arith::MulFOp::create(b3, l3, w, scale));
                           scf::YieldOp::create(
                               b3, l3,
                               Value(tensor::InsertOp::create(
                                   b3, l3, w, it3[0], ValueRange{r, i, j})));
                         });
                     scf::YieldOp::create(b2, l2, iLoop.getResults());
                   });
               scf::YieldOp::create(b1, l1, rLoop.getResults());
             })
             .getResult(0);
  }
  // Rows [lo, hi) in blocks of `block`; row n is (r, i) = (n / qs, n % qs).
  auto rowBlocks = [&](OpBuilder &b0, Location l0, Value lo, Value hi,
                       int64_t block, Value init) -> Value {
    IndexMath m0{b0, l0};
    auto nLoop = scf::ForOp::create(
        b0, l0, lo, hi, m0.c(block), ValueRange{init},
        [&](OpBuilder &b1, Location l1, Value n0, ValueRange it1) {
          SmallVector<Value> rs, is;
          std::tie(rs, is) = blockRows(b1, l1, n0, block, qs);
          // The passes over Dv for keys [jLo, jHi).
          auto passes = [&](OpBuilder &b2, Location l2, Value jLo, Value jHi,
                            Value init2) -> Value {
            auto eLoop = scf::ForOp::create(
                b2, l2, zero, dv, im.c(width * lanes), ValueRange{init2},
                [&](OpBuilder &b3, Location l3, Value e0, ValueRange it3) {
                  IndexMath m3{b3, l3};
                  Value pad = arith::ConstantOp::create(
                      b3, l3, b3.getF32FloatAttr(0.0));
                  SmallVector<Value> accs, cols;
                  for (int64_t c = 0; c < width; ++c)
                    cols.push_back(m3.add(e0, m3.c(c * lanes)));
                  for (int64_t rb = 0; rb < block; ++rb)
                    for (int64_t c = 0; c < width; ++c)
                      accs.push_back(vector::TransferReadOp::create(
                          b3, l3, vecTy, it3[0],
                          ValueRange{rs[rb], is[rb], cols[c]}, pad, ib));
                  auto kLoop = scf::ForOp::create(
                      b3, l3, jLo, jHi, one, accs,
                      [&](OpBuilder &b4, Location l4, Value j, ValueRange a4) {
                        Value z = arith::ConstantIndexOp::create(b4, l4, 0);
                        // Contiguous V (or long pages): this pass's
                        // columns of the row kPrefetchBytes ahead, into L2
                        // (prefetchAhead).
                        if (paged && paged->kvLen && !hintsNextPage())
                          prefetchRow(b4, l4, *paged, j,
                                      IndexMath{b4, l4}.c(vAhead), e0, vLines);
                        RowRef vRow = rowRef(b4, l4, vTile, paged, j);
                        SmallVector<Value> vv;
                        for (int64_t c = 0; c < width; ++c)
                          vv.push_back(readRow(b4, l4, vRow.src,
                                               rowIndex(vRow, z, cols[c]),
                                               lanes, eInBounds));
                        SmallVector<Value> next;
                        for (int64_t rb = 0; rb < block; ++rb) {
                          Value w = tensor::ExtractOp::create(
                              b4, l4, p, ValueRange{rs[rb], is[rb], j});
                          // The guard tests the softmax's weight: a scaled
                          // weight may be 0 where it is not (a 0 scale).
                          Value isZero;
                          if (guard)
                            isZero = arith::CmpFOp::create(
                                b4, l4, arith::CmpFPredicate::OEQ,
                                vector::BroadcastOp::create(b4, l4, vecTy, w),
                                splatConstant(b4, l4, vecTy, 0.0));
                          if (pw != p)
                            w = tensor::ExtractOp::create(
                                b4, l4, pw, ValueRange{rs[rb], is[rb], j});
                          Value splat =
                              vector::BroadcastOp::create(b4, l4, vecTy, w);
                          for (int64_t c = 0; c < width; ++c) {
                            Value prev = a4[rb * width + c];
                            Value f = vector::FMAOp::create(b4, l4, splat,
                                                            vv[c], prev);
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
            return eLoop.getResult(0);
          };
          Value out;
          if (chunk) {
            auto cLoop = scf::ForOp::create(
                b1, l1, zero, ks, im.c(chunk), it1,
                [&](OpBuilder &b2, Location l2, Value c0, ValueRange it2) {
                  IndexMath m2{b2, l2};
                  Value jHi = m2.min(m2.add(c0, m2.c(chunk)), ks);
                  scf::YieldOp::create(b2, l2, passes(b2, l2, c0, jHi, it2[0]));
                });
            out = cLoop.getResult(0);
          } else {
            out = passes(b1, l1, zero, ks, it1[0]);
          }
          scf::YieldOp::create(b1, l1, out);
        });
    return nLoop.getResult(0);
  };
  Value rows = im.mul(groups, qs);
  Value blocked = im.roundDown(rows, kPVRows);
  Value out = rowBlocks(b, loc, zero, blocked, kPVRows, acc);
  return rowBlocks(b, loc, blocked, rows, 1, out);
}
