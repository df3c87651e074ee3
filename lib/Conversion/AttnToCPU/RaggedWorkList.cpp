//===- RaggedWorkList.cpp - a ragged batch as one parallel work list ------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// A ragged batch on the CPU runs as one forall over every (sequence s, K/V
// head g, query tile qt [, key split]) of the batch, so that many short
// sequences (decode: one query each) spread over the threads like a dense
// batch does, instead of a loop over sequences parallel only inside each.
//
// An item builds the dense attn.attention of its sequence (buildSequenceOp:
// the sequence's slices, page table row, kv_len entry, masks and regions),
// lowers one query tile of it with that op's own FusedLowering (so causal
// alignment, windows, ALiBi, masks and regions stay on the sequence's own
// diagonal and indices) and writes the tile at the sequence's packed rows of
// the shared results. The forall's query-tile extent is that of the longest
// sequence; the extra items of shorter sequences have no rows and read no
// keys (their kv_len is taken as 0). Rows outside every sequence keep the
// results' initial values: out = 0, lse = -inf.
//
// The decode form writes each item's partial state (m, l, acc) at the
// packed rows of per-split buffers and merges them once for the whole batch
// (mergeSplits with B = 1 and Nq = the packed tokens). Its items are
// versioned on a tile of one row (qs == 1, a decode batch's usual case),
// lowered with qs a constant so that the row loops fold; without that the
// dynamic row count made a batch of 64 one-query sequences about 12% slower
// than the dense batch on two threads.
//
//===----------------------------------------------------------------------===//

#include "FusedLowering.h"

#include "attn/Conversion/RaggedAttention.h"

#include <limits>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::cpu;

/// The most query rows of any of the `seqs` sequences of a ragged `op`.
static Value longestSequence(OpBuilder &b, Location loc, AttentionOp op,
                             Value seqs) {
  IndexMath im{b, loc};
  auto loop = scf::ForOp::create(
      b, loc, im.c(0), seqs, im.c(1), ValueRange{im.c(0)},
      [&](OpBuilder &lb, Location ll, Value s, ValueRange acc) {
        Value rows = sequenceRows(lb, ll, op, s).second;
        scf::YieldOp::create(
            lb, ll, Value(arith::MaxSIOp::create(lb, ll, acc[0], rows)));
      });
  return loop.getResult(0);
}

/// The (query, key) pairs of one head over the `seqs` sequences of a ragged
/// `op`: each sequence's rows times its keys (its span of cu_seqlens_k, or
/// `pagedKeys` when paged, cut to its kv_len), for the grid's work.
static Value raggedPairs(OpBuilder &b, Location loc, AttentionOp op, Value seqs,
                         Value pagedKeys) {
  IndexMath im{b, loc};
  auto loop = scf::ForOp::create(
      b, loc, im.c(0), seqs, im.c(1), ValueRange{im.c(0)},
      [&](OpBuilder &lb, Location ll, Value s, ValueRange acc) {
        IndexMath m{lb, ll};
        Value rows = sequenceRows(lb, ll, op, s).second;
        Value keys =
            op.isPaged() ? pagedKeys : sequenceKeys(lb, ll, op, s).second;
        if (Value kvLen = op.getKvLen()) {
          Value len = tensor::ExtractOp::create(lb, ll, kvLen, s);
          len = arith::IndexCastOp::create(lb, ll, lb.getIndexType(), len);
          keys = m.min(keys, m.max(len, m.c(0)));
        }
        scf::YieldOp::create(lb, ll,
                             ValueRange{m.add(acc[0], m.mul(rows, keys))});
      });
  return loop.getResult(0);
}

SmallVector<Value> mlir::attn::cpu::buildRaggedWorkList(
    PatternRewriter &rewriter, AttentionOp op, const ScheduleSpec &schedule,
    const VectorShape &shape, bool instrument, std::string &bf16Products) {
  OpBuilder &b = rewriter;
  Location loc = op.getLoc();
  bool decode = schedule.splits != 0;
  // The packed op's sizes: B = 1, Nq = the packed query tokens.
  FusedLowering packed(op, b, schedule, shape, instrument);
  bf16Products = packed.bf16Products();
  IndexMath im{b, loc};
  Value seqs =
      im.sub(tensor::DimOp::create(b, loc, op.getCuSeqlensQ(), 0).getResult(),
             im.c(1));
  Value tiles =
      packed.rulesAt(b, loc)->numQueryTiles(longestSequence(b, loc, op, seqs));
  Value work =
      packed.gridWork(b, loc, raggedPairs(b, loc, op, seqs, packed.nk));
  Value numSplits =
      decode ? packed.numSplitsFor(
                   b, loc, im.mul(im.mul(seqs, packed.hkv), tiles), work)
             : Value();
  double negInf = -std::numeric_limits<double>::infinity();

  // The shared results: out and lse of the packed rows, or the decode
  // form's partial states m, l [1, Hkv, S, R, T] and acc [.., Dv].
  SmallVector<Value> dests;
  if (decode) {
    SmallVector<OpFoldResult> rows = {packed.batch, packed.hkv, numSplits,
                                      packed.groups, packed.nq};
    SmallVector<OpFoldResult> acc = rows;
    acc.push_back(packed.dv);
    dests = {packed.filled(b, loc, rows, negInf),
             packed.filled(b, loc, rows, 0.0), packed.filled(b, loc, acc, 0.0)};
  } else {
    dests.push_back(
        packed.filled(b, loc, packed.outSizes(b, loc), 0.0, packed.elt));
    if (op.getLse()) {
      SmallVector<OpFoldResult> s = {packed.batch, packed.hq, packed.nq};
      dests.push_back(packed.filled(b, loc, s, negInf));
    }
  }
  SmallVector<OpFoldResult> ubs = {seqs, packed.hkv, tiles};
  if (decode)
    ubs.push_back(numSplits);
  auto forall = scf::ForallOp::create(b, loc, ubs, dests, std::nullopt);
  packed.markGridWork(b, loc, forall, work);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(forall.getTerminator());
    ValueRange ivs = forall.getInductionVars();
    Value s = ivs[0], g = ivs[1], qt = ivs[2];
    IndexMath m{b, loc};
    auto [seqRow, seqRows] = sequenceRows(b, loc, op, s);
    AttentionOp inner = buildSequenceOp(rewriter, loc, op, s, seqRow, seqRows);
    FusedLowering seq(inner, b, schedule, shape, instrument);
    FusedLowering::QueryTile tile;
    tile.b = m.c(0);
    tile.g = g;
    tile.qt = qt;
    std::tie(tile.q0, tile.qs) = seq.rulesAt(b, loc)->queryTile(qt, seq.nq);
    // Items past the sequence's last query tile: no rows, no keys.
    Value any = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                                      tile.qs, m.c(0));
    tile.qs = m.max(tile.qs, m.c(0));
    tile.kvLen = arith::SelectOp::create(b, loc, any,
                                         seq.kvLenOf(b, loc, tile.b), m.c(0));
    Value split = decode ? ivs[3] : Value();
    FusedLowering::State st;
    if (decode) {
      // Decode batches mostly hold one query per sequence: that case is
      // lowered with qs a constant 1 (the row loops fold away), the general
      // one beside it.
      Value single = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                           tile.qs, m.c(1));
      // Both branches yield fully dynamic state types.
      auto yieldState = [&](OpBuilder &yb, Location yl,
                            const FusedLowering::State &x) {
        SmallVector<Value> r;
        for (Value t : {x.m, x.l, x.acc}) {
          auto type = cast<RankedTensorType>(t.getType());
          SmallVector<int64_t> shape(type.getRank(), ShapedType::kDynamic);
          r.push_back(tensor::CastOp::create(
              yb, yl, RankedTensorType::get(shape, type.getElementType()), t));
        }
        scf::YieldOp::create(yb, yl, r);
      };
      auto ifOp = scf::IfOp::create(
          b, loc, single,
          [&](OpBuilder &tb, Location tl) {
            FusedLowering::QueryTile one = tile;
            one.qs = arith::ConstantIndexOp::create(tb, tl, 1);
            yieldState(tb, tl,
                       seq.computeQueryTile(tb, tl, one, split, numSplits));
          },
          [&](OpBuilder &eb, Location el) {
            yieldState(eb, el,
                       seq.computeQueryTile(eb, el, tile, split, numSplits));
          });
      st = {ifOp.getResult(0), ifOp.getResult(1), ifOp.getResult(2)};
    } else {
      st = seq.computeQueryTile(b, loc, tile, split, numSplits);
    }
    // The tile's place in the packed rows.
    Value row = m.add(seqRow, tile.q0);
    Value h0 = m.mul(g, packed.groups);
    auto ones = [&](size_t n) {
      return SmallVector<OpFoldResult>(n, b.getIndexAttr(1));
    };
    ValueRange shared = forall.getRegionIterArgs();
    if (decode) {
      b.setInsertionPointToStart(forall.getTerminator().getBody());
      OpFoldResult one = b.getIndexAttr(1), c0 = b.getIndexAttr(0);
      SmallVector<OpFoldResult> off = {c0, g, ivs[3], c0, row};
      SmallVector<OpFoldResult> sz = {one, one, one, packed.groups, tile.qs};
      tensor::ParallelInsertSliceOp::create(b, loc, st.m, shared[0], off, sz,
                                            ones(5));
      tensor::ParallelInsertSliceOp::create(b, loc, st.l, shared[1], off, sz,
                                            ones(5));
      off.push_back(c0);
      sz.push_back(packed.dv);
      tensor::ParallelInsertSliceOp::create(b, loc, st.acc, shared[2], off, sz,
                                            ones(6));
    } else {
      // Finalized into slices of the shared results, inserted back at the
      // same place (in place after bufferization).
      Value outDest = tensor::ExtractSliceOp::create(
          b, loc, shared[0], packed.headRowOffsets(m.c(0), h0, row),
          packed.headRowSizes(b, packed.groups, tile.qs, packed.dv), ones(4));
      Value lseDest;
      if (op.getLse()) {
        SmallVector<OpFoldResult> lo = {b.getIndexAttr(0), h0, row};
        SmallVector<OpFoldResult> ls = {b.getIndexAttr(1), packed.groups,
                                        tile.qs};
        lseDest =
            tensor::ExtractSliceOp::create(b, loc, shared[1], lo, ls, ones(3));
      }
      auto [outTile, lseTile] =
          seq.finalize(b, loc, st, tile.qs, outDest, lseDest);
      packed.insertTiles(b, loc, forall, m.c(0), g, row, tile.qs, outTile,
                         lseTile);
    }
    // The sequence's op only carried its operands to `seq`.
    rewriter.eraseOp(inner);
  }
  if (decode)
    return packed.mergeSplits(b, loc, forall.getResult(0), forall.getResult(1),
                              forall.getResult(2));
  return packed.castResults(b, loc, forall.getResults());
}
