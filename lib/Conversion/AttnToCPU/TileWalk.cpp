//===- TileWalk.cpp - the key-tile loop of one query tile -----------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "FusedLowering.h"

#include "attn/Conversion/ModInputs.h"
#include "attn/Conversion/PagedKv.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <functional>
#include <limits>
#include <tuple>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::cpu;

Value FusedLowering::readQ(OpBuilder &b, Location loc, Value qTile, Value r,
                           Value i, Value d) {
  Value z = arith::ConstantIndexOp::create(b, loc, 0);
  if (layout == Layout::bhnd)
    return tensor::ExtractOp::create(b, loc, qTile, ValueRange{z, r, i, d});
  return tensor::ExtractOp::create(b, loc, qTile, ValueRange{z, i, r, d});
}

Value FusedLowering::scratchTile(OpBuilder &b, Location loc,
                                 ArrayRef<OpFoldResult> sizes, Type type,
                                 unsigned keyDim) {
  SmallVector<OpFoldResult> full(sizes);
  full[keyDim] = b.getIndexAttr(tileK);
  Value e = tensor::EmptyOp::create(b, loc, full, type);
  SmallVector<OpFoldResult> zeros(sizes.size(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> ones(sizes.size(), b.getIndexAttr(1));
  return tensor::ExtractSliceOp::create(b, loc, e, zeros, sizes, ones);
}

FusedLowering::State FusedLowering::walkKeyTiles(OpBuilder &b, Location loc,
                                                 const QueryTile &tile,
                                                 Value ktLo, Value ktHi,
                                                 State init) {
  IndexMath im{b, loc};
  Value h0 = im.mul(tile.g, groups);
  SmallVector<OpFoldResult> qOff = headRowOffsets(tile.b, h0, tile.q0);
  SmallVector<OpFoldResult> qSz = headRowSizes(b, groups, tile.qs, dqk);
  Value qTile = tensor::ExtractSliceOp::create(
      b, loc, op.getQuery(), qOff, qSz,
      SmallVector<OpFoldResult>(qSz.size(), b.getIndexAttr(1)));
  // f16 / bf16 queries: converted to f32 once per query tile ([R, qs, Dqk])
  // for the microkernel, which reads one scalar per row and step; with
  // AVX-512 BF16, bf16 pairs as i32 words ([R, qs, Dqk / 2]); f16 on AMX
  // also split into bf16 parts (the f32 copy serves the tiles that do not
  // take AMX).
  QueryOperands qOps;
  if (pairedQK)
    qOps.f32 = pairQueryTile(b, loc, qTile, tile.qs);
  else if (elt != f32)
    qOps.f32 = convertQueryTile(b, loc, qTile, tile.qs);
  if (amxQK && f16Split)
    std::tie(qOps.split, qOps.splitFinite) =
        splitQueryTile(b, loc, qTile, tile.qs);

  Block *maskMod = op.getMaskModBlock();
  auto loop = scf::ForOp::create(
      b, loc, ktLo, ktHi, im.c(1), ValueRange{init.m, init.l, init.acc},
      [&](OpBuilder &ob, Location ol, Value kt, ValueRange iter) {
        // Plain values, not structured bindings: the lambdas below capture
        // them (C++17, clang before 16).
        Value k0, ks;
        std::tie(k0, ks) = rulesAt(ob, ol)->keyTile(kt, nk);
        State st{iter[0], iter[1], iter[2]};
        if (!maskMod) {
          State next = computeKeyTile(ob, ol, tile, qTile, qOps, kt, k0, ks, st,
                                      Value());
          scf::YieldOp::create(ob, ol, ValueRange{next.m, next.l, next.acc});
          return;
        }
        // The mask_mod region over this tile: skipped when it allows no
        // pair, full (no mask arithmetic) when it allows every pair and the
        // structural masks do too.
        MaskBounds<IRArith>::Truth truth =
            classifyMaskRegion(ob, ol, *maskMod, tile, k0, ks);
        auto ifOp = scf::IfOp::create(
            ob, ol, truth.mayTrue,
            [&](OpBuilder &tb, Location tl) {
              IndexMath m{tb, tl};
              State next = computeKeyTile(tb, tl, tile, qTile, qOps, kt, k0, ks,
                                          st, m.negate(truth.mayFalse));
              scf::YieldOp::create(tb, tl,
                                   ValueRange{next.m, next.l, next.acc});
            },
            [&](OpBuilder &eb, Location el) {
              scf::YieldOp::create(eb, el, ValueRange{st.m, st.l, st.acc});
            });
        scf::YieldOp::create(ob, ol, ifOp.getResults());
      });
  return {loop.getResult(0), loop.getResult(1), loop.getResult(2)};
}

MaskBounds<IRArith>::Truth
FusedLowering::classifyMaskRegion(OpBuilder &b, Location loc, Block &region,
                                  const QueryTile &tile, Value k0, Value ks) {
  IndexMath a{b, loc};
  Value h0 = a.mul(tile.g, groups);
  TileBox<IRArith> box{tile.b,  tile.b,
                       h0,      a.sub(a.add(h0, groups), a.c(1)),
                       tile.q0, a.sub(a.add(tile.q0, tile.qs), a.c(1)),
                       k0,      a.sub(a.add(k0, ks), a.c(1))};
  auto range = [&](unsigned input, ArrayRef<std::pair<Value, Value>> idx)
      -> std::optional<std::pair<Value, Value>> {
    return tensorRange(b, loc, op.getModInputs()[input], idx);
  };
  MaskBounds<IRArith> bounds(region, a, range);
  return bounds.classify(box);
}

std::optional<std::pair<Value, Value>>
FusedLowering::tensorRange(OpBuilder &b, Location loc, Value t,
                           ArrayRef<std::pair<Value, Value>> box) {
  ModInputAccess access = ModInputAccess::ofTensors(op);
  access.inputs = {t};
  return buildTensorRange(b, loc, access, 0, box, kMaxSummaryElements);
}

bool FusedLowering::multiPageTiles() const {
  if (!pageSize)
    return false;
  int64_t s = staticSize(pageSize);
  return !ShapedType::isDynamic(s) && tileK > s;
}

Value FusedLowering::insertTile(OpBuilder &b, Location loc, Value src,
                                Value dest, ArrayRef<OpFoldResult> offsets) {
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, src);
  SmallVector<OpFoldResult> strides(sizes.size(), b.getIndexAttr(1));
  auto sliceType = tensor::ExtractSliceOp::inferResultType(
      cast<RankedTensorType>(dest.getType()), sizes);
  if (src.getType() != sliceType)
    src = tensor::CastOp::create(b, loc, sliceType, src);
  return tensor::InsertSliceOp::create(b, loc, src, dest, offsets, sizes,
                                       strides);
}

SmallVector<Value> FusedLowering::forEachPage(
    OpBuilder &b, Location loc, const TileRows &rows, ValueRange init,
    function_ref<SmallVector<Value>(OpBuilder &, Location, Value, Value, Value,
                                    ValueRange)>
        body) {
  IndexMath m{b, loc};
  if (rows.tile)
    return body(b, loc, rows.tile, m.c(0), rows.ks, init);
  // Key tiles start on page boundaries (their size is a multiple of S); the
  // pages past the sequence's last one are not read (their keys are masked
  // and their weights never used).
  Value pages = m.ceilDiv(rows.readable, pageSize);
  auto loop = scf::ForOp::create(
      b, loc, m.c(0), pages, m.c(1), init,
      [&](OpBuilder &lb, Location ll, Value p, ValueRange it) {
        IndexMath lm{lb, ll};
        Value j0 = lm.mul(p, pageSize);
        Value n = lm.min(pageSize, lm.sub(rows.ks, j0));
        Value page = buildPageIndex(lb, ll, op, rows.bIdx, lm.add(rows.k0, j0));
        OpFoldResult z = lb.getIndexAttr(0), o = lb.getIndexAttr(1);
        bool bhnd = layout == Layout::bhnd;
        SmallVector<OpFoldResult> off =
            bhnd ? SmallVector<OpFoldResult>{page, rows.gIdx, z, z}
                 : SmallVector<OpFoldResult>{page, z, rows.gIdx, z};
        SmallVector<OpFoldResult> sz =
            bhnd ? SmallVector<OpFoldResult>{o, o, n, rows.d}
                 : SmallVector<OpFoldResult>{o, n, o, rows.d};
        Value slice = tensor::ExtractSliceOp::create(
            lb, ll, rows.pool, off, sz, SmallVector<OpFoldResult>(4, o));
        SmallVector<Value> next = body(lb, ll, slice, j0, n, it);
        for (auto [v, want] : llvm::zip(next, it))
          if (v.getType() != want.getType())
            v = tensor::CastOp::create(lb, ll, want.getType(), v);
        scf::YieldOp::create(lb, ll, next);
      });
  return loop.getResults();
}

FusedLowering::State
FusedLowering::computeKeyTile(OpBuilder &lb, Location l, const QueryTile &tile,
                              Value qTile, const QueryOperands &qOps, Value kt,
                              Value k0, Value ks, State st, Value regionFull) {
  Value qF32 = qOps.f32;
  IndexMath im{lb, l};
  Value bIdx = tile.b, gIdx = tile.g, q0 = tile.q0, qs = tile.qs,
        kvLen = tile.kvLen;
  Value h0 = im.mul(gIdx, groups);
  auto sizes1 = [&](ArrayRef<OpFoldResult> s) {
    return SmallVector<OpFoldResult>(s.size(), lb.getIndexAttr(1));
  };
  auto rules = rulesAt(lb, l);
  // With softmax and logits that are just `scale * q.k` plus the
  // structural masks (no soft cap, bias, ALiBi or mask tensor), the
  // score tile keeps its raw dot products: the vector softmax step
  // applies the scale and, per row, the readable key interval as it
  // reads them. Otherwise a logit generic writes the final logits
  // (full tiles skip the structural mask arithmetic).
  bool vectorLogits = softmax && !lctx.softcap && !op.getBias() &&
                      !op.getAlibiSlopes() && !op.getMask() &&
                      !op.getScoreModBlock() && !op.getMaskModBlock();
  // Where a causal diagonal or a window cuts into tiles, which keys each
  // register block of the packed kernels reads: P V's k loops skip the
  // others (weight 0). Q K^T skips the blocks none of whose rows reads one
  // of its keys (about half of a diagonal tile) where only the vector
  // softmax reads the scores, each row only its own keys; a logit generic
  // (which reads every score) gets them all.
  // The keys [lo, hi) relative to this key tile (lo may be negative, hi
  // past the tile) that the tile's query rows [i0, i0 + rows) may read: for
  // a register block here, for one row in the vector softmax below.
  auto tileKeys = [this, q0, k0, kvLen](OpBuilder &rb, Location rl, Value i0,
                                        Value rows) {
    IndexMath rm{rb, rl};
    auto [lo, hi] =
        rulesAt(rb, rl)->readableKeys(rm.add(q0, i0), rows, kvLen, nq);
    return std::make_pair(rm.sub(lo, k0), rm.sub(hi, k0));
  };
  std::optional<BlockKeys> blockKeys;
  if (schedule.causal || schedule.windowLeft || schedule.windowRight) {
    blockKeys.emplace();
    blockKeys->of = tileKeys;
  }
  const BlockKeys *pvKeys = blockKeys ? &*blockKeys : nullptr;
  const BlockKeys *qkKeys = vectorLogits ? pvKeys : nullptr;
  // Paged K/V: the tile is rows [k0 % S, k0 % S + ks) of one page (key
  // tiles divide the page size), read in place from the pool; or whole pages
  // read one by one (key tiles a multiple of the page size).
  bool multiPage = multiPageTiles();
  Value kvBatch = bIdx, kvRow = k0;
  if (pageSize && !multiPage) {
    kvBatch = buildPageIndex(lb, l, op, bIdx, k0);
    kvRow = arith::RemUIOp::create(lb, l, k0, pageSize);
  }
  SmallVector<OpFoldResult> kOff =
      layout == Layout::bhnd
          ? SmallVector<OpFoldResult>{kvBatch, gIdx, kvRow, lb.getIndexAttr(0)}
          : SmallVector<OpFoldResult>{kvBatch, kvRow, gIdx, lb.getIndexAttr(0)};
  auto kvSizes = [&](Value d) {
    return layout == Layout::bhnd
               ? SmallVector<OpFoldResult>{lb.getIndexAttr(1),
                                           lb.getIndexAttr(1), ks, d}
               : SmallVector<OpFoldResult>{lb.getIndexAttr(1), ks,
                                           lb.getIndexAttr(1), d};
  };
  SmallVector<OpFoldResult> kSz = kvSizes(dqk), vSz = kvSizes(dv);
  Value readable = im.min(ks, im.sub(kvLen, k0));
  TileRows kRows{Value(), op.getKey(), bIdx, gIdx, k0, ks, dqk, readable};
  TileRows vRows{Value(), op.getValue(), bIdx, gIdx, k0, ks, dv, readable};
  kRows.kvLen = vRows.kvLen = kvLen;
  if (op.isQuantized()) {
    // A quantized cache: the row-wise kernels read its raw rows and scales;
    // the packed ones an f32 tile of them (`dequantized`).
    kRows.scale = op.getKScale();
    vRows.scale = op.getValueScale();
  }
  if (!multiPage) {
    kRows.tile = tensor::ExtractSliceOp::create(lb, l, op.getKey(), kOff, kSz,
                                                sizes1(kSz));
    vRows.tile = tensor::ExtractSliceOp::create(lb, l, op.getValue(), kOff, vSz,
                                                sizes1(vSz));
  }

  bool bhnd = layout == Layout::bhnd;
  // Scratch tiles are sized by loop-invariant values (the query
  // tile's rows, the static tile width) and sliced to this tile, so
  // that --attn-hoist-loop-buffers allocates them once per query
  // tile instead of once per key tile.
  SmallVector<OpFoldResult> sShape = {groups, qs, ks};
  Value sTile = scratchTile(lb, l, sShape, f32, 2);
  // Tiles narrower than the register tile and few rows (decode): dot
  // products over d on the K tile as it is, no packing.
  // Paged tiles of several pages: key j is read from its page in place (the
  // keys of pages past the sequence's last one are not computed; they are
  // masked).
  // Only the readable keys' logits are computed (the others are masked).
  auto dotQK = [&](OpBuilder &nb0, Location nl0) -> Value {
    return rowwiseQK(nb0, nl0, qTile, kRows.tile, sTile, qs, readable, &kRows,
                     &vRows);
  };

  // Whole register-tile columns: pack the K tile transposed (and
  // converted to f32), kT[d, j], once (it is shared by the R query
  // heads and every row of the query tile), then the vector
  // microkernel broadcasts q[r, i, d] against contiguous rows of kT.
  // K packed as bf16 pairs, page by page: i32 words [Dqk / 2, ks]
  // (`vdpbf16ps`) or bf16 [Dqk / 2, 2 ks] (AMX), `perKey` columns per key;
  // f16 K split (f16Split): bf16 [3 Dqk / 2, 2 ks] and whether every value
  // is finite (an i1, true for bf16).
  int64_t dStatic = staticSize(dqk);
  int64_t kPairRows = ShapedType::isDynamic(dStatic)
                          ? ShapedType::kDynamic
                          : (f16Split ? kSplitSegments : 1) * (dStatic / 2);
  auto packPairs = [&](OpBuilder &fb, Location fl, Value kP,
                       int64_t perKey) -> std::pair<Value, Value> {
    Value rowsP = IndexMath{fb, fl}.c(kPairRows);
    Value yes = arith::ConstantOp::create(fb, fl, fb.getBoolAttr(true));
    SmallVector<Value> r = forEachPage(
        fb, fl, kRows, {kP, yes},
        [&](OpBuilder &pb, Location pl, Value kPage, Value j0, Value n,
            ValueRange it) -> SmallVector<Value> {
          Value finite;
          auto pack = [&](Value dst) {
            return packPairsTransposed(pb, pl, kPage, dst, n,
                                       f16Split ? &finite : nullptr);
          };
          auto andFinite = [&]() -> Value {
            return finite ? arith::AndIOp::create(pb, pl, it[1], finite)
                                .getResult()
                          : it[1];
          };
          if (kRows.tile) {
            Value packed = pack(it[0]);
            return {packed, andFinite()};
          }
          IndexMath pm{pb, pl};
          SmallVector<OpFoldResult> off = {pb.getIndexAttr(0),
                                           pm.mul(j0, pm.c(perKey))};
          Value dst = tensor::ExtractSliceOp::create(
              pb, pl, it[0], off,
              SmallVector<OpFoldResult>{rowsP, pm.mul(n, pm.c(perKey))},
              SmallVector<OpFoldResult>(2, pb.getIndexAttr(1)));
          Value packed = pack(dst);
          return {insertTile(pb, pl, packed, it[0], off), andFinite()};
        });
    return {r[0], r[1]};
  };
  // bf16 on AMX: S = Q K^T on tiles (the query tile read in place as
  // pairs, K packed in pairs: AMX's B layout).
  // f16 (f16Split): Q and K split in three segments, on the f32 kernel
  // where either holds a value that is not finite.
  std::function<Value(OpBuilder &, Location)> f32PackedQK;
  auto amxPackedQK = [&](OpBuilder &fb, Location fl) -> Value {
    IndexMath fm{fb, fl};
    int64_t half = kPairRows;
    Type bf16 = fb.getBF16Type();
    // Two columns per key ([Dqk / 2, 2 ks] of a [Dqk / 2, 2 tileK] buffer
    // with a static size, which attn-hoist-loop-buffers hoists):
    // scratchTile sizes the key dimension by tileK, one column per key.
    Value full = tensor::EmptyOp::create(
        fb, fl, ArrayRef<int64_t>{half, 2 * tileK}, bf16);
    Value kP = tensor::ExtractSliceOp::create(
        fb, fl, full, SmallVector<OpFoldResult>(2, fb.getIndexAttr(0)),
        SmallVector<OpFoldResult>{fb.getIndexAttr(half), fm.mul(ks, fm.c(2))},
        SmallVector<OpFoldResult>(2, fb.getIndexAttr(1)));
    Value kFinite;
    std::tie(kP, kFinite) = packPairs(fb, fl, kP, 2);
    Value kPairs = tensor::ExpandShapeOp::create(
        fb, fl, RankedTensorType::get({half, ShapedType::kDynamic, 2}, bf16),
        kP, SmallVector<ReassociationIndices>{{0}, {1, 2}},
        SmallVector<OpFoldResult>{fb.getIndexAttr(half), ks,
                                  fb.getIndexAttr(2)});
    auto tiles = [&](OpBuilder &tb, Location tl) -> Value {
      std::pair<Value, AffineMap> q = amxQueryPairs(tb, tl, qTile, qOps.split);
      Value zeroF = arith::ConstantOp::create(tb, tl, tb.getF32FloatAttr(0.0));
      Value s0 = linalg::FillOp::create(tb, tl, zeroF, sTile).getResult(0);
      return amxMatmul(tb, tl, q.first, q.second, kPairs, s0);
    };
    if (!qOps.split)
      return tiles(fb, fl);
    return branch(fb, fl, fm.andI(qOps.splitFinite, kFinite), sTile, tiles,
                  f32PackedQK);
  };
  // bf16 with AVX-512 BF16: K packed as i32 words of bf16 pairs,
  // kP[p, j], and one vdpbf16ps per pair and register of keys.
  auto pairedPackedQK = [&](OpBuilder &fb, Location fl) -> Value {
    IndexMath fm{fb, fl};
    Value half = fm.c(staticSize(dqk) / 2);
    Value kP = scratchTile(fb, fl, {half, ks}, fb.getI32Type(), 1);
    kP = packPairs(fb, fl, kP, 1).first;
    return microkernel(
        fb, fl, sTile, qs, ks, half,
        [&](OpBuilder &ab, Location al, Value r, Value i, Value p) {
          return Value(
              tensor::ExtractOp::create(ab, al, qF32, ValueRange{r, i, p}));
        },
        [&](OpBuilder &bb, Location bl, Value p, Value j) {
          Value pad = arith::ConstantOp::create(
              bb, bl, bb.getZeroAttr(bb.getI32Type()));
          SmallVector<bool> inBounds = {true};
          return Value(vector::TransferReadOp::create(
              bb, bl, VectorType::get({lanes}, bb.getI32Type()), kP,
              ValueRange{p, j}, pad, inBounds));
        },
        /*zeroInit=*/true, /*guard=*/false, /*pairs=*/true, qkKeys);
  };
  f32PackedQK = [&](OpBuilder &fb, Location fl) -> Value {
    Value kT = scratchTile(fb, fl, {dqk, ks}, f32, 1);
    int64_t d = staticSize(dqk);
    TileRows kSrc = dequantized(fb, fl, kRows);
    // Pages of whole vectors of rows (or one slice) take the register
    // transpose; others the generic copy.
    bool pagesOfLanes = kSrc.tile || staticSize(pageSize) % lanes == 0;
    kT = forEachPage(
        fb, fl, kSrc, {kT},
        [&](OpBuilder &pb, Location pl, Value kPage, Value j0, Value n,
            ValueRange it) -> SmallVector<Value> {
          OpFoldResult z = pb.getIndexAttr(0);
          SmallVector<OpFoldResult> off = {z, j0};
          Value dst = it[0];
          if (!kSrc.tile)
            dst = tensor::ExtractSliceOp::create(
                pb, pl, it[0], off, SmallVector<OpFoldResult>{dqk, n},
                SmallVector<OpFoldResult>(2, pb.getIndexAttr(1)));
          Value r;
          if (!ShapedType::isDynamic(d) && d % lanes == 0 && pagesOfLanes) {
            r = packTransposed(pb, pl, kPage, dst, n);
          } else {
            AffineMap kMap =
                bhnd ? map(pb, 2, {-1, -1, 1, 0}) : map(pb, 2, {-1, 1, -1, 0});
            r = linalg::GenericOp::create(
                    pb, pl, dst.getType(), kPage, dst,
                    {kMap, map(pb, 2, {0, 1})}, iters(2, 0),
                    [&](OpBuilder &nb, Location nl, ValueRange a) {
                      linalg::YieldOp::create(nb, nl, ext(nb, nl, a[0]));
                    })
                    .getResult(0);
          }
          if (kSrc.tile)
            return {r};
          return {insertTile(pb, pl, r, it[0], off)};
        })[0];
    return microkernel(
        fb, fl, sTile, qs, ks, dqk,
        [&](OpBuilder &ab, Location al, Value r, Value i, Value d) {
          if (qF32)
            return Value(
                tensor::ExtractOp::create(ab, al, qF32, ValueRange{r, i, d}));
          return readQ(ab, al, qTile, r, i, d);
        },
        [&](OpBuilder &bb, Location bl, Value d, Value j0) {
          Value pad =
              arith::ConstantOp::create(bb, bl, bb.getF32FloatAttr(0.0));
          SmallVector<bool> inBounds = {true};
          return Value(vector::TransferReadOp::create(
              bb, bl, VectorType::get({nw}, f32), kT, ValueRange{d, j0}, pad,
              inBounds));
        },
        /*zeroInit=*/true, /*guard=*/false, /*pairs=*/false, qkKeys);
  };
  auto packedQK = [&](OpBuilder &fb, Location fl) -> Value {
    if (amxQK) {
      // Whole 16 x 16 tiles of S on AMX, the others on the f32 kernel.
      IndexMath fm{fb, fl};
      Value whole =
          fm.andI(divisible(fb, fl, qs, 16), divisible(fb, fl, ks, 16));
      return branch(fb, fl, whole, sTile, amxPackedQK, f32PackedQK);
    }
    if (pairedQK)
      return pairedPackedQK(fb, fl);
    return f32PackedQK(fb, fl);
  };
  auto sType = RankedTensorType::get(
      {ShapedType::kDynamic, ShapedType::kDynamic, ShapedType::kDynamic}, f32);
  // The microkernel needs whole register-tile columns, and enough
  // rows per head to fill a register tile: a few rows (decode's one
  // query per head) share each K row better in the row-wise kernel.
  IndexMath m{lb, l};
  Value fitsQK = m.andI(divisible(lb, l, ks, nw), m.sle(m.c(mr), qs));
  Value s = branch(lb, l, fitsQK,
                   tensor::EmptyOp::create(lb, l, sType.getShape(), f32,
                                           ValueRange{groups, qs, ks}),
                   packedQK, dotQK);

  // Logits: full tiles skip the structural mask arithmetic.
  Value full = rules->isFull(q0, qs, k0, ks, kvLen, nq);
  if (regionFull)
    full = arith::AndIOp::create(lb, l, full, regionFull);
  if (instrument) {
    auto i64 = lb.getI64Type();
    auto cast = [&](Value v) -> Value {
      return arith::IndexCastOp::create(lb, l, i64, v);
    };
    Value boundary = arith::XOrIOp::create(
        lb, l, full, arith::ConstantOp::create(lb, l, lb.getBoolAttr(true)));
    func::CallOp::create(
        lb, l, kTileVisitFn, TypeRange{},
        ValueRange{cast(bIdx), cast(gIdx), cast(tile.qt), cast(kt), boundary});
  }
  RowLogits rowLogits;
  if (vectorLogits) {
    rowLogits.scale = lctx.scale;
    rowLogits.keys = [tileKeys, ks](OpBuilder &rb, Location rl, Value i) {
      IndexMath rm{rb, rl};
      auto [lo, hi] = tileKeys(rb, rl, i, rm.c(1));
      return std::make_pair(lo, rm.min(hi, ks));
    };
  } else {
    auto ifOp = scf::IfOp::create(
        lb, l, full,
        [&](OpBuilder &tb, Location tl) {
          scf::YieldOp::create(
              tb, tl, logits(tb, tl, s, bIdx, h0, q0, k0, kvLen, false));
        },
        [&](OpBuilder &eb, Location el) {
          scf::YieldOp::create(
              eb, el, logits(eb, el, s, bIdx, h0, q0, k0, kvLen, true));
        });
    s = ifOp.getResult(0);
  }

  return update(lb, l, st, s, vRows, qs, full, rowLogits, pvKeys);
}

Value FusedLowering::logits(OpBuilder &b, Location loc, Value s, Value bIdx,
                            Value h0, Value q0, Value k0, Value kvLen,
                            bool structural) {
  auto ty = cast<RankedTensorType>(s.getType());
  return linalg::GenericOp::create(
             b, loc, ty, ValueRange{}, s, {map(b, 3, {0, 1, 2})}, iters(3, 0),
             [&](OpBuilder &nb, Location nl, ValueRange a) {
               IndexMath m{nb, nl};
               Value r = linalg::IndexOp::create(nb, nl, 0);
               Value h = m.add(h0, r);
               Value i = m.add(q0, linalg::IndexOp::create(nb, nl, 1));
               Value j = m.add(k0, linalg::IndexOp::create(nb, nl, 2));
               LogitOperands in;
               in.raw = a[0];
               in.b = bIdx;
               in.h = h;
               in.i = i;
               in.j = j;
               in.kvLen = kvLen;
               SmallVector<Value, 4> logical = {bIdx, h, i, j};
               if (Value mask = op.getMask())
                 in.maskBit = extractBroadcast(nb, nl, mask, logical);
               if (Value bias = op.getBias())
                 in.bias = extractBroadcast(nb, nl, bias, logical);
               if (Value slopes = op.getAlibiSlopes())
                 in.slope = tensor::ExtractOp::create(nb, nl, slopes, h);
               Value out = structural ? buildLogit(nb, nl, lctx, in)
                                      : buildUnmaskedLogit(nb, nl, lctx, in);
               linalg::YieldOp::create(nb, nl, out);
             })
      .getResult(0);
}

Value FusedLowering::extractBroadcast(OpBuilder &b, Location loc, Value t,
                                      ArrayRef<Value> logical) {
  auto type = cast<RankedTensorType>(t.getType());
  int64_t offset = 4 - type.getRank();
  SmallVector<Value> idx;
  for (int64_t d = 0; d < type.getRank(); ++d)
    idx.push_back(type.getDimSize(d) == 1
                      ? arith::ConstantIndexOp::create(b, loc, 0)
                      : logical[offset + d]);
  return tensor::ExtractOp::create(b, loc, t, idx);
}
