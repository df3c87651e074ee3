//===- Microkernels.cpp - Q K^T and P V register-tile kernels -------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// The packed kernels of prefill tiles (an outer-product register tile over
// a packed K^T or a V tile), the K transpose, the V finiteness check and
// the f32 conversions of query and key tiles. The row-wise kernels of
// decode tiles are in RowwiseKernels.cpp.
//
//===----------------------------------------------------------------------===//

#include "FusedLowering.h"

#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::cpu;

Value FusedLowering::microkernel(
    OpBuilder &b, Location loc, Value c, Value m, Value n, Value kEnd,
    function_ref<Value(OpBuilder &, Location, Value, Value, Value)> readA,
    function_ref<Value(OpBuilder &, Location, Value, Value)> readB,
    bool zeroInit, bool guard, bool pairs, const BlockKeys *keys) {
  assert(!(pairs && guard) && "no guarded bf16 pairs");
  IndexMath im{b, loc};
  // f32: one nw-wide accumulator per row (LLVM splits it into registers).
  // bf16 pairs: `vdpbf16ps` takes one register, so nw / lanes of them.
  int64_t width = pairs ? lanes : nw, parts = nw / width;
  auto vecTy = VectorType::get({width}, f32);
  auto i32VecTy = VectorType::get({width}, b.getI32Type());
  auto bf16VecTy = VectorType::get({2 * width}, b.getBF16Type());
  Value zero = im.c(0), one = im.c(1);
  // Block (rows [i0, i0 + rows), columns [j0, j0 + nw)) of head r over
  // k in [kLo, kHi): the updated C.
  auto block = [&](OpBuilder &b3, Location l3, Value r, Value i0, Value j0,
                   int64_t rows, Value kLo, Value kHi, Value cIn) -> Value {
    IndexMath m3{b3, l3};
    Value pad = arith::ConstantOp::create(b3, l3, b3.getF32FloatAttr(0.0));
    SmallVector<bool> inBounds = {true};
    SmallVector<Value> accs, cols;
    for (int64_t p = 0; p < parts; ++p)
      cols.push_back(m3.add(j0, m3.c(p * width)));
    Value zeros;
    if (zeroInit)
      zeros = splatConstant(b3, l3, vecTy, 0.0);
    for (int64_t ii = 0; ii < rows; ++ii)
      for (int64_t p = 0; p < parts; ++p)
        accs.push_back(zeroInit
                           ? zeros
                           : Value(vector::TransferReadOp::create(
                                 b3, l3, vecTy, cIn,
                                 ValueRange{r, m3.add(i0, m3.c(ii)), cols[p]},
                                 pad, inBounds)));
    auto kLoop = scf::ForOp::create(
        b3, l3, kLo, kHi, one, accs,
        [&](OpBuilder &b4, Location l4, Value k, ValueRange a4) {
          IndexMath m4{b4, l4};
          SmallVector<Value> bRows;
          for (int64_t p = 0; p < parts; ++p) {
            Value row = readB(b4, l4, k, m4.add(j0, m4.c(p * width)));
            if (pairs)
              row = vector::BitCastOp::create(b4, l4, bf16VecTy, row);
            bRows.push_back(row);
          }
          SmallVector<Value> next;
          for (int64_t ii = 0; ii < rows; ++ii) {
            Value a = readA(b4, l4, r, m4.add(i0, m4.c(ii)), k);
            if (pairs) {
              // The query's pair broadcast to every pair of lanes.
              Value words = vector::BroadcastOp::create(b4, l4, i32VecTy, a);
              Value splat = vector::BitCastOp::create(b4, l4, bf16VecTy, words);
              for (int64_t p = 0; p < parts; ++p)
                next.push_back(x86vector::DotBF16Op::create(
                    b4, l4, vecTy, a4[ii * parts + p], splat, bRows[p]));
              continue;
            }
            Value splat = vector::BroadcastOp::create(b4, l4, vecTy, a);
            Value fma = vector::FMAOp::create(b4, l4, splat, bRows[0], a4[ii]);
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
    Value out = cIn;
    for (int64_t ii = 0; ii < rows; ++ii)
      for (int64_t p = 0; p < parts; ++p)
        out = vector::TransferWriteOp::create(
                  b3, l3, kLoop.getResult(ii * parts + p), out,
                  ValueRange{r, m3.add(i0, m3.c(ii)), cols[p]}, inBounds)
                  .getResult();
    return out;
  };
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
          // The block's keys: along k, its k loop's bounds; along N,
          // whether it reads any of the panel's columns (else C stays).
          Value kLo = zero, kHi = kEnd, reads;
          if (keys) {
            auto [lo, hi] = keys->of(b3, l3, i0, m3.c(rows));
            if (keys->alongN) {
              reads = m3.andI(m3.slt(lo, m3.add(j0, m3.c(nw))), m3.slt(j0, hi));
            } else {
              Value per = m3.c(keys->keysPerStep);
              kLo = m3.max(zero, m3.floorDiv(m3.sub(lo, keys->offset), per));
              kHi = m3.min(kEnd, m3.ceilDiv(m3.sub(hi, keys->offset), per));
            }
          }
          if (reads) {
            auto ifOp = scf::IfOp::create(
                b3, l3, reads,
                [&](OpBuilder &tb, Location tl) {
                  scf::YieldOp::create(
                      tb, tl, block(tb, tl, r, i0, j0, rows, kLo, kHi, c3[0]));
                },
                [&](OpBuilder &eb, Location el) {
                  scf::YieldOp::create(eb, el, c3[0]);
                });
            scf::YieldOp::create(b3, l3, ifOp.getResult(0));
            return;
          }
          scf::YieldOp::create(b3, l3,
                               block(b3, l3, r, i0, j0, rows, kLo, kHi, c3[0]));
        });
    return jLoop.getResult(0);
  };
  // Rows in whole register blocks, then the rows left one by one. The
  // guarded kernel needs a compare mask per row next to the accumulators:
  // it takes half the rows, so that it does not spill either.
  int64_t blockRows = guard ? std::max<int64_t>(mr / 2, 1) : mr;
  Value whole = im.roundDown(m, blockRows);
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

Value FusedLowering::packPairsTransposed(OpBuilder &b, Location loc,
                                         Value kTile, Value kP, Value ks,
                                         Value *finite) {
  IndexMath im{b, loc};
  Value zero = im.c(0);
  auto rowTy = VectorType::get({2 * lanes}, b.getBF16Type());
  auto wordsTy = VectorType::get({lanes}, b.getI32Type());
  bool asBf16 = cast<RankedTensorType>(kP.getType()).getElementType().isBF16();
  // f16 rows split into hi and lo parts (f16Split), each transposed as the
  // bf16 rows are, into kSplitB's segments of Dqk / 2 pairs.
  bool split = cast<RankedTensorType>(kTile.getType()).getElementType().isF16();
  assert((!split || (asBf16 && finite)) && "f16 K packs split, as bf16");
  int64_t half = staticSize(dqk) / 2;
  SmallVector<Value> init = {kP};
  if (split)
    init.push_back(splatConstant(b, loc, rowTy.clone(f32), 0.0));
  SmallVector<bool> ib = {true};
  auto jLoop = scf::ForOp::create(
      b, loc, zero, ks, im.c(lanes), init,
      [&](OpBuilder &b1, Location l1, Value j0, ValueRange it1) {
        // Row chunks of 2 x lanes bf16 (lanes words): the lanes x lanes
        // word transpose of lanes keys gives, per pair p, the words of the
        // lanes keys.
        auto dLoop = scf::ForOp::create(
            b1, l1, zero, dqk, im.c(2 * lanes), it1,
            [&](OpBuilder &b2, Location l2, Value d0, ValueRange it2) {
              IndexMath m{b2, l2};
              Value pad = arith::ConstantOp::create(
                  b2, l2, b2.getZeroAttr(b2.getBF16Type()));
              SmallVector<Value> rows, loRows;
              Value bad = split ? it2[1] : Value();
              auto words = [&](Value x) -> Value {
                return vector::BitCastOp::create(b2, l2, wordsTy, x);
              };
              for (int64_t jj = 0; jj < lanes; ++jj) {
                Value j = m.add(j0, m.c(jj));
                if (split) {
                  SplitRow r =
                      splitRow(b2, l2,
                               readRow(b2, l2, kTile, kvIndex(zero, j, d0),
                                       2 * lanes, true));
                  rows.push_back(words(r.hi));
                  loRows.push_back(words(r.lo));
                  bad = arith::AddFOp::create(b2, l2, bad, r.bad);
                  continue;
                }
                Value x = vector::TransferReadOp::create(
                    b2, l2, rowTy, kTile, kvIndex(zero, j, d0), pad, ib);
                rows.push_back(words(x));
              }
              Value p0 = arith::DivUIOp::create(b2, l2, d0, m.c(2));
              Value out = it2[0];
              Value col = asBf16 ? m.mul(j0, m.c(2)) : j0;
              auto write = [&](ArrayRef<Value> from, ArrayRef<int64_t> segs) {
                SmallVector<Value> cols = transposeBlock(b2, l2, from);
                for (int64_t seg : segs)
                  for (int64_t pp = 0; pp < lanes; ++pp) {
                    Value w = cols[pp];
                    if (asBf16)
                      w = vector::BitCastOp::create(b2, l2, rowTy, w);
                    out = vector::TransferWriteOp::create(
                              b2, l2, w, out,
                              ValueRange{m.add(p0, m.c(seg * half + pp)), col},
                              ib)
                              .getResult();
                  }
              };
              if (!split) {
                write(rows, {0});
                scf::YieldOp::create(b2, l2, out);
                return;
              }
              write(rows, splitSegments(/*aSide=*/false, /*lo=*/false));
              write(loRows, splitSegments(/*aSide=*/false, /*lo=*/true));
              scf::YieldOp::create(b2, l2, ValueRange{out, bad});
            });
        scf::YieldOp::create(b1, l1, dLoop.getResults());
      });
  if (split)
    *finite = noneBad(b, loc, jLoop.getResult(1));
  return jLoop.getResult(0);
}

FusedLowering::SplitRow FusedLowering::splitRow(OpBuilder &b, Location loc,
                                                Value x) {
  auto xTy = cast<VectorType>(x.getType());
  auto bfTy = xTy.clone(b.getBF16Type());
  Value hi = arith::TruncFOp::create(b, loc, bfTy, x);
  // x - hi is exact and finite for finite x, NaN for an infinity or a NaN
  // (whose tiles take the f32 kernels: lo is not used there).
  Value d =
      arith::SubFOp::create(b, loc, x, arith::ExtFOp::create(b, loc, xTy, hi));
  return {hi, arith::TruncFOp::create(b, loc, bfTy, d), d};
}

Value FusedLowering::noneBad(OpBuilder &b, Location loc, Value bad) {
  Value sum =
      vector::ReductionOp::create(b, loc, vector::CombiningKind::ADD, bad);
  return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::ORD, sum, sum);
}

SmallVector<Value> FusedLowering::forEachQueryChunk(
    OpBuilder &b, Location loc, Value qs, int64_t step, ValueRange init,
    function_ref<SmallVector<Value>(OpBuilder &, Location, Value, Value, Value,
                                    ValueRange)>
        body) {
  IndexMath im{b, loc};
  Value zero = im.c(0), one = im.c(1);
  auto rLoop = scf::ForOp::create(
      b, loc, zero, groups, one, init,
      [&](OpBuilder &b1, Location l1, Value r, ValueRange it1) {
        auto iLoop = scf::ForOp::create(
            b1, l1, zero, qs, one, it1,
            [&](OpBuilder &b2, Location l2, Value i, ValueRange it2) {
              auto dLoop = scf::ForOp::create(
                  b2, l2, zero, dqk, im.c(step), it2,
                  [&](OpBuilder &b3, Location l3, Value d0, ValueRange it3) {
                    scf::YieldOp::create(b3, l3, body(b3, l3, r, i, d0, it3));
                  });
              scf::YieldOp::create(b2, l2, dLoop.getResults());
            });
        scf::YieldOp::create(b1, l1, iLoop.getResults());
      });
  return rLoop.getResults();
}

std::pair<Value, Value> FusedLowering::splitQueryTile(OpBuilder &b,
                                                      Location loc, Value qTile,
                                                      Value qs) {
  int64_t d = staticSize(dqk);
  assert(!ShapedType::isDynamic(d) && d % lanes == 0 && "static Dqk");
  SmallVector<OpFoldResult> shape = {groups, qs,
                                     b.getIndexAttr(kSplitSegments * d)};
  Value dest = tensor::EmptyOp::create(b, loc, shape, b.getBF16Type());
  Value bad0 = splatConstant(b, loc, VectorType::get({lanes}, f32), 0.0);
  SmallVector<bool> ib = {true};
  SmallVector<Value> r = forEachQueryChunk(
      b, loc, qs, lanes, {dest, bad0},
      [&](OpBuilder &b3, Location l3, Value r, Value i, Value d0,
          ValueRange it3) -> SmallVector<Value> {
        IndexMath m{b3, l3};
        SplitRow x =
            splitRow(b3, l3,
                     readRow(b3, l3, qTile, headRowIndex(m.c(0), r, i, d0),
                             lanes, true));
        Value out = it3[0];
        for (bool lo : {false, true})
          for (int64_t seg : splitSegments(/*aSide=*/true, lo))
            out = vector::TransferWriteOp::create(
                      b3, l3, lo ? x.lo : x.hi, out,
                      ValueRange{r, i, m.add(d0, m.c(seg * d))}, ib)
                      .getResult();
        return {out, arith::AddFOp::create(b3, l3, it3[1], x.bad)};
      });
  return {r[0], noneBad(b, loc, r[1])};
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
  int64_t d = staticSize(dqk);
  bool inBounds = !ShapedType::isDynamic(d) && d % lanes == 0;
  SmallVector<OpFoldResult> shape = {groups, qs, dqk};
  Value dest = tensor::EmptyOp::create(b, loc, shape, f32);
  return forEachQueryChunk(
      b, loc, qs, lanes, {dest},
      [&](OpBuilder &b3, Location l3, Value r, Value i, Value d0,
          ValueRange it3) -> SmallVector<Value> {
        Value zero = arith::ConstantIndexOp::create(b3, l3, 0);
        Value x = readRow(b3, l3, qTile, headRowIndex(zero, r, i, d0), lanes,
                          inBounds);
        return {vector::TransferWriteOp::create(b3, l3, x, it3[0],
                                                ValueRange{r, i, d0},
                                                ArrayRef<bool>{inBounds})
                    .getResult()};
      })[0];
}

Value FusedLowering::pairQueryTile(OpBuilder &b, Location loc, Value qTile,
                                   Value qs) {
  int64_t d = staticSize(dqk);
  assert(!ShapedType::isDynamic(d) && d % (2 * lanes) == 0);
  auto rowTy = VectorType::get({2 * lanes}, b.getBF16Type());
  auto wordsTy = VectorType::get({lanes}, b.getI32Type());
  SmallVector<OpFoldResult> shape = {groups, qs, b.getIndexAttr(d / 2)};
  Value dest = tensor::EmptyOp::create(b, loc, shape, b.getI32Type());
  SmallVector<bool> ib = {true};
  return forEachQueryChunk(
      b, loc, qs, 2 * lanes, {dest},
      [&](OpBuilder &b3, Location l3, Value r, Value i, Value d0,
          ValueRange it3) -> SmallVector<Value> {
        IndexMath m{b3, l3};
        Value pad =
            arith::ConstantOp::create(b3, l3, b3.getZeroAttr(b3.getBF16Type()));
        Value x = vector::TransferReadOp::create(
            b3, l3, rowTy, qTile, headRowIndex(m.c(0), r, i, d0), pad, ib);
        Value w = vector::BitCastOp::create(b3, l3, wordsTy, x);
        Value p0 = arith::DivUIOp::create(b3, l3, d0, m.c(2));
        return {vector::TransferWriteOp::create(b3, l3, w, it3[0],
                                                ValueRange{r, i, p0}, ib)
                    .getResult()};
      })[0];
}

Value FusedLowering::roundWeightPairs(OpBuilder &b, Location loc, Value p,
                                      Value qs, Value n, Value dest,
                                      bool split) {
  IndexMath im{b, loc};
  Value zero = im.c(0), one = im.c(1);
  bool words =
      cast<RankedTensorType>(dest.getType()).getElementType().isInteger(32);
  assert((!split || !words) && "split weights are bf16");
  auto pairTy = VectorType::get({2 * lanes}, b.getBF16Type());
  auto wordsTy = VectorType::get({lanes}, b.getI32Type());
  SmallVector<bool> ib = {true};
  return scf::ForOp::create(
             b, loc, zero, groups, one, ValueRange{dest},
             [&](OpBuilder &b1, Location l1, Value r, ValueRange it1) {
               auto iLoop = scf::ForOp::create(
                   b1, l1, zero, qs, one, it1,
                   [&](OpBuilder &b2, Location l2, Value i, ValueRange it2) {
                     auto kLoop = scf::ForOp::create(
                         b2, l2, zero, n, im.c(2 * lanes), it2,
                         [&](OpBuilder &b3, Location l3, Value k0,
                             ValueRange it3) {
                           IndexMath m{b3, l3};
                           Value pad = arith::ConstantOp::create(
                               b3, l3, b3.getF32FloatAttr(0.0));
                           Value x = vector::TransferReadOp::create(
                               b3, l3, pairTy.clone(f32), p,
                               ValueRange{r, i, k0}, pad, ib);
                           auto write = [&](Value y, Value to, Value col) {
                             return vector::TransferWriteOp::create(
                                        b3, l3, y, to, ValueRange{r, i, col},
                                        ib)
                                 .getResult();
                           };
                           if (split) {
                             SplitRow sr = splitRow(b3, l3, x);
                             Value out = it3[0];
                             for (bool lo : {false, true})
                               for (int64_t seg : splitSegments(true, lo))
                                 out = write(lo ? sr.lo : sr.hi, out,
                                             m.add(k0, m.mul(n, m.c(seg))));
                             scf::YieldOp::create(b3, l3, out);
                             return;
                           }
                           Value y = arith::TruncFOp::create(b3, l3, pairTy, x);
                           Value col = k0;
                           if (words) {
                             y = vector::BitCastOp::create(b3, l3, wordsTy, y);
                             col = arith::DivUIOp::create(b3, l3, k0, m.c(2));
                           }
                           scf::YieldOp::create(b3, l3, write(y, it3[0], col));
                         });
                     scf::YieldOp::create(b2, l2, kLoop.getResults());
                   });
               scf::YieldOp::create(b1, l1, iLoop.getResults());
             })
      .getResult(0);
}

Value FusedLowering::packValuePairs(OpBuilder &b, Location loc, Value vTile,
                                    Value pairs, Value dest, Value *finite) {
  IndexMath im{b, loc};
  Value zero = im.c(0), one = im.c(1);
  Type bf16 = b.getBF16Type();
  bool words =
      cast<RankedTensorType>(dest.getType()).getElementType().isInteger(32);
  // f16 rows split into hi and lo parts (f16Split), in kSplitB's segments
  // of `pairs` rows.
  bool split = cast<RankedTensorType>(vTile.getType()).getElementType().isF16();
  assert((!split || (!words && finite)) && "f16 V packs split, as bf16");
  auto wordsTy = VectorType::get({lanes}, b.getI32Type());
  SmallVector<bool> ib = {true};
  // Rows 2k and 2k + 1, `lanes` columns each, interleaved.
  SmallVector<int64_t> interleave;
  for (int64_t l = 0; l < lanes; ++l)
    interleave.append({l, lanes + l});
  SmallVector<Value> init = {dest};
  if (split)
    init.push_back(splatConstant(b, loc, VectorType::get({lanes}, f32), 0.0));
  auto kLoop = scf::ForOp::create(
      b, loc, zero, pairs, one, init,
      [&](OpBuilder &b1, Location l1, Value k, ValueRange it1) {
        auto eLoop = scf::ForOp::create(
            b1, l1, zero, dv, im.c(lanes), it1,
            [&](OpBuilder &b2, Location l2, Value e0, ValueRange it2) {
              IndexMath m{b2, l2};
              Value pad =
                  arith::ConstantOp::create(b2, l2, b2.getZeroAttr(bf16));
              Value j = m.mul(k, m.c(2));
              auto pair = [&](Value x, Value y) -> Value {
                return vector::ShuffleOp::create(b2, l2, x, y, interleave);
              };
              auto write = [&](Value z, Value to, Value row) {
                Value col = m.mul(e0, m.c(2));
                if (words) {
                  z = vector::BitCastOp::create(b2, l2, wordsTy, z);
                  col = e0;
                }
                return vector::TransferWriteOp::create(b2, l2, z, to,
                                                       ValueRange{row, col}, ib)
                    .getResult();
              };
              if (split) {
                auto row = [&](Value jj) {
                  return splitRow(b2, l2,
                                  readRow(b2, l2, vTile, kvIndex(zero, jj, e0),
                                          lanes, true));
                };
                SplitRow x = row(j), y = row(m.add(j, m.c(1)));
                Value out = it2[0];
                for (bool lo : {false, true})
                  for (int64_t seg : splitSegments(/*aSide=*/false, lo))
                    out = write(lo ? pair(x.lo, y.lo) : pair(x.hi, y.hi), out,
                                m.add(k, m.mul(pairs, m.c(seg))));
                Value bad = arith::AddFOp::create(
                    b2, l2, it2[1],
                    arith::AddFOp::create(b2, l2, x.bad, y.bad));
                scf::YieldOp::create(b2, l2, ValueRange{out, bad});
                return;
              }
              auto row = [&](Value jj) -> Value {
                return vector::TransferReadOp::create(
                    b2, l2, VectorType::get({lanes}, bf16), vTile,
                    kvIndex(zero, jj, e0), pad, ib);
              };
              scf::YieldOp::create(
                  b2, l2,
                  write(pair(row(j), row(m.add(j, m.c(1)))), it2[0], k));
            });
        scf::YieldOp::create(b1, l1, eLoop.getResults());
      });
  if (split)
    *finite = noneBad(b, loc, kLoop.getResult(1));
  return kLoop.getResult(0);
}

Value FusedLowering::pairedPVTile(OpBuilder &b, Location loc, Value acc,
                                  Value p, Value vTile, Value qs, Value n,
                                  const BlockKeys *keys) {
  Type i32 = b.getI32Type();
  Value half = arith::DivUIOp::create(b, loc, n, IndexMath{b, loc}.c(2));
  // The weights as bf16 pairs in words, pP[r, i, k] = (p[r, i, 2k],
  // p[r, i, 2k + 1]); V as pairs of rows, vP[k, e] = (V[2k, e], V[2k + 1, e]).
  Value pP = roundWeightPairs(b, loc, p, qs, n,
                              scratchTile(b, loc, {groups, qs, half}, i32, 2));
  Value vP = packValuePairs(b, loc, vTile, half,
                            scratchTile(b, loc, {half, dv}, i32, 0));
  return microkernel(
      b, loc, acc, qs, dv, half,
      [&](OpBuilder &ab, Location al, Value r, Value i, Value k) {
        return Value(
            tensor::ExtractOp::create(ab, al, pP, ValueRange{r, i, k}));
      },
      [&](OpBuilder &bb, Location bl, Value k, Value e) {
        Value pad =
            arith::ConstantOp::create(bb, bl, bb.getZeroAttr(bb.getI32Type()));
        SmallVector<bool> inBounds = {true};
        return Value(vector::TransferReadOp::create(
            bb, bl, VectorType::get({lanes}, bb.getI32Type()), vP,
            ValueRange{k, e}, pad, inBounds));
      },
      /*zeroInit=*/false, /*guard=*/false, /*pairs=*/true, keys);
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
