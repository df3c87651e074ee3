//===- FusedLowering.h - CPU code of the fused and decode forms -*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// The CPU code generation of the fused form (FlashAttention style) and the
// split-KV decode form. For every (batch b, K/V head g, query tile) one
// parallel iteration keeps a running row max m, row sum l and f32
// accumulator for the R query heads that share K/V head g, and walks the key
// tiles that the structural masks (kv_len, causal, window) leave readable:
//
//   [lo, hi) = readable key range of the tile's rows   (from run-time sizes)
//   for kt in [lo / Tk, ceil(hi / Tk)):
//     S    = Q_tile K_tile^T                           [R, Tq, Tk]
//     S    = logits(S), mask arithmetic only if the tile is a boundary tile
//     m'   = max(m, rowmax S);  P = exp(S - m');  a = exp(m - m')
//     l    = a l + rowsum P;    acc = a acc + P V_tile
//   out = acc / l  (0 where l = 0),  lse = m + log l  (-inf where l = 0)
//
// K/V tiles are read once per group of R query heads. No [Nq, Nk] buffer
// exists: the largest temporary is one [R, Tq, Tk] score tile.
//
// The decode form splits each row's readable key range into `splits` chunks
// processed in parallel, each leaving a partial (acc, m, l); a final merge
// combines them exactly: M = max m_s, L = sum exp(m_s - M) l_s,
// out = sum exp(m_s - M) acc_s / L.
//
// The code is split along its seams:
//   FusedLowering.cpp   the op's sizes, state, finalization, the fused grid
//   TileWalk.cpp        the key-tile loop of one query tile, logits
//   Microkernels.cpp    Q K^T and P V register-tile kernels, K packing
//   SoftmaxStep.cpp     the online-softmax bookkeeping of one score tile
//   SplitKv.cpp         the decode form's grid and exact merge
//   Passes.cpp          the patterns and passes
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_ATTNTOCPU_FUSEDLOWERING_H
#define ATTN_LIB_CONVERSION_ATTNTOCPU_FUSEDLOWERING_H

#include "attn/Conversion/LogitBuilder.h"
#include "attn/IR/AttnOps.h"
#include "attn/Schedule/MaskBounds.h"
#include "attn/Schedule/Schedule.h"
#include "attn/Target/CpuTarget.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"

#include <functional>
#include <limits>

namespace mlir {
namespace attn {
namespace cpu {

using utils::IteratorType;

inline constexpr double kNegInf = -std::numeric_limits<double>::infinity();

/// Fast-math flags for the contractions: reassociation (vectorized
/// reductions) and contraction into FMAs. Masking, max and the softmax
/// bookkeeping keep strict semantics.
inline constexpr arith::FastMathFlags kFast =
    arith::FastMathFlags::reassoc | arith::FastMathFlags::contract;

/// Name of the external function instrumented kernels call once per
/// computed key tile: attn_tile_visit(i64 batch, i64 kvHead, i64 queryTile,
/// i64 keyTile, i1 boundary).
inline constexpr StringLiteral kTileVisitFn = "attn_tile_visit";

/// Small arithmetic helpers on index values: the schedule's IR arithmetic.
using IndexMath = IRArith;

/// The vector shape of the CPU code, read from the target description: the
/// f32 lanes of one vector register, and the microkernel's register tile of
/// `mr` rows by `nw` = 2 vectors, as many rows as the register file holds
/// next to the two B vectors and the broadcast A scalar (8 x 32 in 16 of
/// the 32 zmm registers on AVX-512, 6 x 16 in 12 of the 16 ymm registers on
/// AVX2, 6 x 8 in xmm registers on SSE2 or anything else).
struct VectorShape {
  int64_t lanes, mr, nw, registers;
  /// bf16 takes AVX-512 BF16 dot products (`vdpbf16ps`) on registers of 16
  /// f32 lanes: the target has them and `bf16-dot-products` (by default the
  /// target description: usesBf16DotProducts) takes them.
  bool bf16Dot = false;
  /// bf16 takes AMX tile products (`tdpbf16ps`): the target has amx-tile and
  /// amx-bf16 (and AVX-512 for the packing).
  bool amx = false;
  static VectorShape
  forTarget(const CpuTarget &target,
            Bf16DotProducts bf16DotProducts = Bf16DotProducts::Auto);
};

/// Everything a tile of one attention op needs, built once per op.
class FusedLowering {
public:
  FusedLowering(AttentionOp op, OpBuilder &b, const ScheduleSpec &schedule,
                const VectorShape &shape, bool instrument);

  /// What the bf16 products of whole tiles run on, for the lowering choice
  /// (LoweringChoice::bf16Products): "amx" (f16 split in bf16 pairs:
  /// "amx-f16-split") or "vdpbf16ps" when Q K^T and P V take the same
  /// route, "<Q K^T's> for Q K^T, <P V's> for P V" when they differ ("f32"
  /// for a product on f32 FMAs), empty when both are f32 FMAs (f32 and
  /// quantized specs, f16 without AMX, targets without either).
  std::string bf16Products() const;

  AttentionOp op;

  /// Tiles, key-tile rules and split partition (shared with every target).
  ScheduleSpec schedule;
  int64_t tileQ, tileK;

  /// f32 lanes of a vector register; rows and columns of the register
  /// tile; vector registers.
  int64_t lanes, mr, nw, registers;

  bool instrument;

  /// The schedule's rules, emitted as IR at the builder's insertion point.
  struct Rules {
    IRArith arith;
    TileRules<IRArith> rules;
    Rules(OpBuilder &b, Location loc, const ScheduleSpec &spec)
        : arith{b, loc}, rules(spec, arith) {}
    // `rules` refers to `arith`: never copied (C++17 elides the return).
    Rules(const Rules &) = delete;
    TileRules<IRArith> *operator->() { return &rules; }
  };
  Rules rulesAt(OpBuilder &b, Location loc) { return Rules(b, loc, schedule); }

  Layout layout;

  Type elt, f32;

  /// bf16 Q K^T on AVX-512 BF16: the packed kernel reads the query tile
  /// and a packed K tile as pairs of bf16 along Dqk (one i32 word each)
  /// and accumulates `vdpbf16ps` dot products in f32. Chosen when the
  /// target has them, Q and K are bf16 (not quantized), Dqk is a static
  /// multiple of 2 x lanes, and pages (if K spans several) hold whole
  /// vectors of rows.
  bool pairedQK = false;

  /// bf16 P V on AVX-512 BF16: the weights of a key tile (or page) with an
  /// even multiple of lanes keys are rounded to bf16 pairs, V is packed
  /// as pairs of rows, and the packed kernel accumulates `vdpbf16ps` dot
  /// products in f32 (docs/Semantics.md, Precision). Chosen when the
  /// target has them and V is bf16 (not quantized); tiles with masked
  /// keys whose V rows are not finite keep the guarded f32 kernel.
  bool pairedPV = false;

  /// bf16 Q K^T on AMX: query tiles of whole 16-row blocks against key
  /// tiles of whole 16-key blocks multiply on tiles (amxMatmul), K packed in
  /// pairs as for pairedQK. Chosen when the target has AMX BF16, Q and K
  /// are bf16 (not quantized), Dqk is a static multiple of 32 and pages (if
  /// K spans several) hold whole vectors of rows; other tiles keep the f32
  /// kernel.
  bool amxQK = false;

  /// bf16 P V on AMX: full key tiles (tileK a multiple of 32) of a V read
  /// in place, with the weights rounded to bf16 as for pairedPV. Chosen when
  /// the target has AMX BF16, V is bf16 (not quantized) and Dv a static
  /// multiple of 16.
  bool amxPV = false;

  /// f16 specs on AMX (amxQK and amxPV then take f16 tiles too): each f16
  /// value is split exactly into two bf16, x = hi + lo (an f16 has 11
  /// significant bits, a bf16 8), and a product a . b is computed as
  /// ah . bh + ah . bl + al . bh in one tile product over three times the
  /// reduction: the A operand holds [hi, hi, lo] along k, the B operand
  /// [hi, lo, hi] (kSplitA / kSplitB). The weights p, f32, are split the
  /// same way (p - hi rounded to bf16). Dropping al . bl and rounding
  /// p's low part leave a relative error of at most 2^-16 per product,
  /// far below f16's 2^-11. A tile whose Q, K or V holds an infinity or a
  /// NaN (whose low part would multiply an infinity by 0) takes the f32
  /// kernels instead.
  bool f16Split = false;

  bool softmax;

  Value batch, hq, hkv, groups, nq, nk, dqk, dv;

  /// Paged K/V: tokens per page (null otherwise). Key tiles divide it, so a
  /// tile is a slice of one page (chooseTileSizes).
  Value pageSize;

  LogitContext lctx;

  /// Running state of one query tile: row max, row sum, accumulator.
  struct State {
    Value m, l, acc;
  };

  /// One parallel work item's query tile: batch entry `b`, K/V head `g`,
  /// query tile `qt` with rows [q0, q0 + qs), and the batch entry's valid
  /// key count (kv_len clamped to [0, Nk], or Nk).
  struct QueryTile {
    Value b, g, qt, q0, qs, kvLen;
  };
  /// The query tile prepared once for its key tiles: `f32`, its f32 copy
  /// [R, qs, Dqk] (f16 / bf16 queries) or i32 words of bf16 pairs
  /// [R, qs, Dqk / 2] (pairedQK), null for f32 queries read in place;
  /// `split` / `splitFinite`: f16 queries on AMX, [R, qs, 3 Dqk] bf16 in
  /// kSplitA's segments and whether every value is finite (f16Split).
  struct QueryOperands {
    Value f32, split, splitFinite;
  };
  /// The query tile of the work item at the forall's induction variables
  /// (b, g, qt, ...).
  QueryTile queryTileAt(OpBuilder &b, Location loc, ValueRange ivs);

  /// A tensor of `shape` filled with `v`, f32 unless `type` says otherwise.
  Value filled(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> shape,
               double v, Type type = {}) {
    if (!type)
      type = f32;
    Value e = tensor::EmptyOp::create(b, loc, shape, type);
    Value c = arith::ConstantOp::create(b, loc, b.getFloatAttr(type, v));
    return linalg::FillOp::create(b, loc, c, e).getResult(0);
  }

  AffineMap map(OpBuilder &b, unsigned n, ArrayRef<int64_t> dims) {
    SmallVector<AffineExpr> e;
    for (int64_t d : dims)
      e.push_back(d < 0 ? getAffineConstantExpr(0, b.getContext())
                        : getAffineDimExpr(d, b.getContext()));
    return AffineMap::get(n, 0, e, b.getContext());
  }

  static SmallVector<IteratorType> iters(unsigned par, unsigned red) {
    SmallVector<IteratorType> it(par, IteratorType::parallel);
    it.append(red, IteratorType::reduction);
    return it;
  }

  Value ext(OpBuilder &b, Location loc, Value x) {
    Type to = f32;
    if (auto vt = dyn_cast<VectorType>(x.getType()))
      to = vt.clone(f32);
    return x.getType() == to ? x : arith::ExtFOp::create(b, loc, to, x);
  }

  /// Slice of q (or out) holding heads [g*R, g*R+R) and rows [q0, q0+qs):
  /// [1, R, qs, D] (bhnd) or [1, qs, R, D] (bnhd).
  SmallVector<OpFoldResult> headRowOffsets(Value bIdx, Value h0, Value q0) {
    if (layout == Layout::bhnd)
      return {bIdx, h0, q0, OpFoldResult(OpBuilder(op).getIndexAttr(0))};
    return {bIdx, q0, h0, OpFoldResult(OpBuilder(op).getIndexAttr(0))};
  }

  SmallVector<OpFoldResult> headRowSizes(OpBuilder &b, OpFoldResult r, Value qs,
                                         Value d) {
    if (layout == Layout::bhnd)
      return {b.getIndexAttr(1), r, qs, d};
    return {b.getIndexAttr(1), qs, r, d};
  }

  /// The K or V rows of one key tile [k0, k0 + ks): `tile`, one slice
  /// ([1, 1, ks, D] or [1, ks, 1, D] in the op's layout: contiguous K/V, or
  /// a key tile within one page), or, for paged K/V whose key tiles span
  /// several whole pages, null and the pool with the tile's place.
  /// `readable`: the tile's leading keys below kv_len; only the pages that
  /// hold them are read (entries past a sequence's last page are not page
  /// indices).
  /// `scale` (quantized caches only): the k_scale / v_scale tensor; the rows
  /// then hold raw i8 / fp8 values, which readRow decodes (unscaled) and the
  /// row-wise kernels multiply by rowScale once per key: on the finished dot
  /// product (Q K^T) and on the weight (P V).
  /// `kvLen`: the sequence's kv_len (the bound of the prefetch hints).
  struct TileRows {
    Value tile;
    Value pool, bIdx, gIdx, k0, ks, d, readable;
    Value scale = {};
    Value kvLen = {};
  };

  /// K/V read row by row (decode), while key j is computed; only hints
  /// (memref.prefetch) into L2 (locality 1: `prefetcht2` on x86), capped at
  /// the sequence's last key:
  ///  - pages shorter than kLongPageKeys (hintsNextPage): the K and V rows
  ///    of key k0 + j + S (the same row of the next page, which the
  ///    hardware prefetchers cannot guess: pages lie anywhere in the pool);
  ///  - contiguous K/V, or longer pages: the K row kPrefetchBytes ahead
  ///    (`v` is prefetched by rowwisePV, which reads it).
  /// One core's stream of rows otherwise leaves the memory idle between the
  /// hardware prefetcher's requests: 21% less time for a 1-thread f32 decode
  /// step, 40% for a paged one; hints into L1 gained nothing for contiguous
  /// rows (Benchmarks.md).
  void prefetchAhead(OpBuilder &b, Location loc, const TileRows &k,
                     const TileRows *v, Value j);

  /// Whether the row-wise kernels hint paged rows one page ahead, K and V
  /// both while Q K^T runs: pages shorter than kLongPageKeys (page sizes
  /// are static: the verifier says so). Longer pages are hinted as
  /// contiguous rows are (K by Q K^T, V by P V; prefetchRow finds each
  /// key's page, so any tile size works), which the hardware prefetchers help
  /// within a page. A 1-thread f32 decode step (d 128) over pages of 256 keys
  /// took 8.2-8.8 ms that way against 9.5-10.4 ms with next-page hints
  /// (contiguous: 7.8-8.1), pages of 128 8.7-9.8 against 9.7-10.4; pages of 64
  /// gained nothing (9.7-12.0 against 9.6-10.6), and pages of 16 lost (V hinted
  /// by P V: 12-15 ms against 10-11; Benchmarks.md). Measured on f32 rows only.
  bool hintsNextPage() const;
  static constexpr int64_t kLongPageKeys = 128;

  /// How far ahead the row-wise kernels prefetch contiguous K/V rows, and
  /// how many 64-byte lines of a row they hint at most (rows of 1 KiB: an
  /// f32 row of D = 256).
  static constexpr int64_t kPrefetchBytes = 8192;
  static constexpr int64_t kPrefetchLines = 16;

  /// Hints `lines` 64-byte lines of the row of key k0 + j + `ahead`
  /// (capped at kvLen - 1) of `rows`, from column `col0`, into L2
  /// (memref.prefetch's locality 1).
  void prefetchRow(OpBuilder &b, Location loc, const TileRows &rows, Value j,
                   Value ahead, Value col0, int64_t lines);

  /// Rows of `rows` in kPrefetchBytes (at least one).
  int64_t prefetchDistance(const TileRows &rows);

  /// Where key `key` of batch entry `bIdx` lies in a K/V tensor: (batch
  /// entry, row), or (pool page, row in the page) for paged K/V.
  std::pair<Value, Value> cacheRow(OpBuilder &b, Location loc, Value bIdx,
                                   Value key);

  /// Rows n0 .. n0 + block - 1 of a tile's R x qs rows as (r, i) = (n / qs,
  /// n % qs): the r and the i of each.
  std::pair<SmallVector<Value>, SmallVector<Value>>
  blockRows(OpBuilder &b, Location loc, Value n0, int64_t block, Value qs);

  /// The factor that turns row j's decoded values (decodeQuantizedUnscaled)
  /// into the values the spec reads: its scale times the decoding's constant
  /// (2^8 for e4m3), an f32 scalar.
  Value rowScale(OpBuilder &b, Location loc, const TileRows &rows, Value j);

  /// `rows` with an f32 tile when they are quantized (`contiguous`), for the
  /// packed kernels; other rows as they are.
  TileRows dequantized(OpBuilder &b, Location loc, const TileRows &rows) {
    return rows.scale ? contiguous(b, loc, rows) : rows;
  }

  /// `rows` as one f32 tile: a quantized tile dequantized, a tile of several
  /// pages gathered (and converted to f32) into scratch (dequantizeTile),
  /// so that the packed P V runs once per key tile rather than once per
  /// page; one unquantized slice as it is.
  TileRows contiguous(OpBuilder &b, Location loc, const TileRows &rows);

  /// Where row j of a K or V tile is: in `src` (the tile) at row `row`, or,
  /// when `page` is set, in `src` (the pool) at row `row` of page `page`,
  /// K/V head `gIdx`.
  struct RowRef {
    Value src, page, row, gIdx;
  };
  RowRef rowRef(OpBuilder &b, Location loc, Value tile, const TileRows *rows,
                Value j);
  /// Indices of column `col` of the row `ref` locates.
  SmallVector<Value> rowIndex(const RowRef &ref, Value zero, Value col);

  /// C[r, i, j] += sum_k A(r, i, k) * Brow(k)[j] on an f32 tensor C of shape
  /// [R, M, N] with N % nw == 0 (checked by the caller; rows past the last
  /// whole block of mr run one by one):
  /// an outer-product microkernel that keeps a mr x nw block of C in
  /// vector registers over the whole k loop, broadcasting one A scalar per
  /// row and reading one contiguous nw-wide row of B per k.
  ///
  /// `zeroInit`: the block starts from 0 instead of C's values (C may be
  /// uninitialized). `guard`: a zero A scalar contributes nothing, whatever
  /// B holds (0 * NaN would be NaN): the FMA is masked by A != 0, which is
  /// how masked keys (weight exactly 0) stay out of P V.
  ///
  /// `pairs`: k runs over pairs of bf16 (AVX-512 BF16). readA returns the
  /// pair as one i32 word, readB(k, j) a vector of `lanes` i32 words (the
  /// pairs of columns j .. j + lanes), and each step is one `vdpbf16ps` per
  /// `lanes` columns (products exact in f32, sums rounded to f32, denormal
  /// inputs and results flushed to zero).
  ///
  /// `keys`: which keys a register block's rows read (causal diagonals,
  /// windows, kv_len), so that the kernel does no work for keys they
  /// cannot read. Along N (Q K^T: B's columns are keys) a block none of
  /// whose rows reads a column of the block is skipped, and its entries of
  /// C are left as they were (the logits' masks read them as -inf); along
  /// k (P V: k runs over keys, `keysPerStep` per step, the first at
  /// `offset` from the tile's) a block's k loop is cut to its keys (the
  /// weights of the others are 0).
  struct BlockKeys {
    /// The keys [lo, hi), relative to the key tile, that rows
    /// [i0, i0 + rows) read (lo may be negative, hi past the tile).
    std::function<std::pair<Value, Value>(OpBuilder &, Location, Value i0,
                                          Value rows)>
        of;
    bool alongN = true;
    Value offset;
    int64_t keysPerStep = 1;
  };
  Value microkernel(
      OpBuilder &b, Location loc, Value c, Value m, Value n, Value kEnd,
      function_ref<Value(OpBuilder &, Location, Value, Value, Value)> readA,
      function_ref<Value(OpBuilder &, Location, Value, Value)> readB,
      bool zeroInit = false, bool guard = false, bool pairs = false,
      const BlockKeys *keys = nullptr);

  /// Indices of row j, column `col` of a K or V tile ([1, 1, ks, D] or
  /// [1, ks, 1, D]); `zero` is an index constant 0.
  SmallVector<Value> kvIndex(Value zero, Value j, Value col) {
    if (layout == Layout::bhnd)
      return {zero, zero, j, col};
    return {zero, j, zero, col};
  }

  /// Indices of head r, row i, column `col` of a query or out tile
  /// ([1, R, qs, D] or [1, qs, R, D]).
  SmallVector<Value> headRowIndex(Value zero, Value r, Value i, Value col) {
    if (layout == Layout::bhnd)
      return {zero, r, i, col};
    return {zero, i, r, col};
  }

  /// A vector constant with every lane `v`.
  static Value splatConstant(OpBuilder &b, Location loc, VectorType type,
                             double v) {
    return arith::ConstantOp::create(
        b, loc, type,
        DenseElementsAttr::get(type, b.getFloatAttr(type.getElementType(), v)));
  }

  /// A static size, or kDynamic.
  static int64_t staticSize(Value v) {
    if (auto c = getConstantIntValue(v))
      return *c;
    return ShapedType::kDynamic;
  }

  /// Reads `width` lanes of a K, V or Q tile row (any element type) at
  /// `idx`, extended to f32 (quantized elements decoded without their scale,
  /// see rowScale); lanes past the row's end read 0.
  Value readRow(OpBuilder &b, Location loc, Value tile, ValueRange idx,
                int64_t width, bool inBounds);

  /// S[r, i, j] = q[r, i, :] . k[j, :] for any tile shape and element type,
  /// as vector code: keysPerQKStep() key rows at a time (then one by one)
  /// against the R x qs query rows of the tile in blocks of kQKRows (then
  /// one by one), the d loop in one-register chunks (unrolled when Dqk is
  /// static, with two independent chains per logit when a block has fewer
  /// than 8 logits), each chunk of a key row read once per block and each
  /// chunk of a query row once per step, one shuffle-and-add tree for all
  /// the block's logits (a step of 4 keys loads 8 vectors for 16 FMAs, one
  /// key 5 for 4). This is what decode tiles (R x 1 rows) and tails run.
  /// `rows` (optional): paged K rows of several pages, read in place with
  /// `kTile` null (key j is row (k0 + j) % S of its page); quantized rows
  /// (`rows->scale`), decoded as they are read, each logit times its key's
  /// rowScale.
  static constexpr int64_t kQKRows = 4;
  static constexpr int64_t kQKKeys = 4;

  /// Keys per rowwiseQK step for K rows of element type `kElem`: one for
  /// f32 rows (streamed from memory, see the definition); otherwise kQKKeys,
  /// halved until a block's logits fit one vector (kQKRows x keys <= lanes)
  /// and its accumulators, key chunks and query chunk fit the registers
  /// (AVX-512: 4, AVX2: 2, 4-lane targets: 1).
  int64_t keysPerQKStep(Type kElem) const;

  /// The sums of the lanes of each of `vs` (vectors of one type): for a
  /// power-of-two count up to the lanes, one shuffle-and-add tree shared by
  /// all of them (the rows' halves interleaved into one vector, then summed
  /// within segments); otherwise one reduction each.
  SmallVector<Value> horizontalSums(OpBuilder &b, Location loc,
                                    ArrayRef<Value> vs);

  /// `prefetchV`: the tile's V rows, for prefetchAhead.
  Value rowwiseQK(OpBuilder &b, Location loc, Value qTile, Value kTile,
                  Value sInit, Value qs, Value ks,
                  const TileRows *rows = nullptr,
                  const TileRows *prefetchV = nullptr);

  /// acc[r, i, :] += sum_j P[r, i, j] v[j, :] for any tile shape and element
  /// type, as vector code. The R x qs rows of the tile go in blocks of
  /// kPVRows (then one by one for the rest); per block, up to four one-register
  /// accumulators of Dv per row stay in registers across the key loop, and
  /// each V row chunk is read once for the whole block (decode's R x 1 rows
  /// read the V tile once per Dv chunk instead of once per row). Passes that
  /// read less than 256 bytes of a row go over the keys in chunks of about
  /// 4 KiB of V rows, all passes of a chunk in turn, unless the rows are
  /// quantized (decoded in registers). `guard`: a
  /// weight of exactly 0 (a masked key) adds nothing, even against NaN or inf
  /// in v.
  static constexpr int64_t kPVRows = 4;

  Value rowwisePV(OpBuilder &b, Location loc, Value acc, Value p, Value vTile,
                  Value qs, Value ks, bool guard,
                  const TileRows *rows = nullptr);

  /// The transpose of a square block of `rows` (4, 8 or 16 vectors of as
  /// many f32 lanes) as a network of two-source shuffles.
  SmallVector<Value> transposeBlock(OpBuilder &b, Location loc,
                                    ArrayRef<Value> rows);

  /// kT[d, j] = K[j, d] (f32) for a K tile of any element type with Dqk and
  /// `ks` multiples of the lanes: lanes x lanes blocks read as row vectors,
  /// transposed in registers (transposeBlock) and written as rows.
  Value packTransposed(OpBuilder &b, Location loc, Value kTile, Value kT,
                       Value ks);

  /// kP[p, j] = the i32 word of K[j, 2p .. 2p + 1] (bf16 pairs, packed for
  /// `vdpbf16ps`) for a bf16 K tile with Dqk a multiple of 2 x lanes and
  /// `ks` of lanes: the same register transpose on words of two bf16. A bf16
  /// `kP` [Dqk / 2, 2 ks] gets the same pairs as bf16 (AMX's B layout). An
  /// f16 K tile (f16Split) fills a bf16 `kP` [3 Dqk / 2, 2 ks] with the
  /// pairs of its hi and lo parts in kSplitB's segments and sets `*finite`
  /// (i1) to whether every value read is finite.
  Value packPairsTransposed(OpBuilder &b, Location loc, Value kTile, Value kP,
                            Value ks, Value *finite = nullptr);

  /// f16Split: x (a vector of f32 holding f16 values, or weights) as
  /// `hi` = bf16(x) and `lo` = bf16(x - hi), and `bad` = x - hi: NaN exactly
  /// where x is not finite (then lo is NaN too; such tiles take the f32
  /// kernels, and a NaN weight makes its row NaN either way). Summed over a
  /// tile, a NaN survives and nothing else overflows (|x - hi| <= 2^-9 |x|,
  /// at most 128 for f16).
  struct SplitRow {
    Value hi, lo, bad;
  };
  SplitRow splitRow(OpBuilder &b, Location loc, Value x);

  /// f16Split: the hi and lo parts' segments along the reduction of the A
  /// operand ([hi, hi, lo]) and of the B operand ([hi, lo, hi]).
  static constexpr int64_t kSplitSegments = 3;
  static ArrayRef<int64_t> splitSegments(bool aSide, bool lo) {
    static constexpr int64_t aHi[] = {0, 1}, aLo[] = {2}, bHi[] = {0, 2},
                             bLo[] = {1};
    if (aSide)
      return lo ? ArrayRef<int64_t>(aLo) : ArrayRef<int64_t>(aHi);
    return lo ? ArrayRef<int64_t>(bLo) : ArrayRef<int64_t>(bHi);
  }

  /// Whether no lane of `bad` (SplitRow::bad summed) is NaN (an i1).
  Value noneBad(OpBuilder &b, Location loc, Value bad);

  /// The loop nest of the query-tile copies (convertQueryTile,
  /// pairQueryTile, splitQueryTile): head r < R, row i < qs, column chunk d0
  /// of Dqk in steps of `step`, `body` yielding the loop-carried values.
  SmallVector<Value> forEachQueryChunk(
      OpBuilder &b, Location loc, Value qs, int64_t step, ValueRange init,
      function_ref<SmallVector<Value>(OpBuilder &, Location, Value r, Value i,
                                      Value d0, ValueRange)>
          body);

  /// f16Split: the f16 query tile as bf16 [R, qs, 3 Dqk] in kSplitA's
  /// segments, and whether every value is finite.
  std::pair<Value, Value> splitQueryTile(OpBuilder &b, Location loc,
                                         Value qTile, Value qs);

  /// Whether every value of a V tile [ks, Dv] (in the op's layout) is
  /// finite: the sum of v * 0 over the tile is 0 exactly when no element is
  /// a NaN or an infinity (strict float semantics, no fast-math flags).
  Value allFinite(OpBuilder &b, Location loc, Value vTile, Value ks);

  /// Whether `x` is a multiple of `n` (an i1 value).
  Value divisible(OpBuilder &b, Location loc, Value x, int64_t n) {
    IndexMath m{b, loc};
    Value rem = arith::RemSIOp::create(b, loc, x, m.c(n));
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rem, m.c(0));
  }

  /// Runs `fast` when `cond` holds and `slow` otherwise; both produce a
  /// tensor of `c`'s type.
  Value branch(OpBuilder &b, Location loc, Value cond, Value c,
               function_ref<Value(OpBuilder &, Location)> fast,
               function_ref<Value(OpBuilder &, Location)> slow);

  /// q[r, i, d] of a query tile in the op's layout.
  Value readQ(OpBuilder &b, Location loc, Value qTile, Value r, Value i,
              Value d);

  /// Paged K/V with tiles of several pages: whether key tiles span pages.
  bool multiPageTiles() const;

  /// Runs `body` on each page of `rows` in order: the page's rows as a slice
  /// of the pool, the page's first key relative to the tile (`j0`) and its
  /// key count (`n`), threading `init` through; on `rows.tile` (j0 = 0,
  /// n = ks) when the tile is one slice. No rows are copied.
  SmallVector<Value>
  forEachPage(OpBuilder &b, Location loc, const TileRows &rows, ValueRange init,
              function_ref<SmallVector<Value>(OpBuilder &, Location, Value,
                                              Value, Value, ValueRange)>
                  body);

  /// `src` written into `dest` at `offsets` (sizes from `src`, unit
  /// strides), `src` cast to the slice's type first where it differs.
  Value insertTile(OpBuilder &b, Location loc, Value src, Value dest,
                   ArrayRef<OpFoldResult> offsets);

  /// Processes key tiles [ktLo, ktHi) of one query tile and returns the
  /// updated running state.
  State walkKeyTiles(OpBuilder &b, Location loc, const QueryTile &tile,
                     Value ktLo, Value ktHi, State init);

  /// One key tile [k0, k0 + ks) of a query tile: scores, logits, and the
  /// online-softmax update of `st`. `regionFull` (i1, or null without a
  /// mask_mod): the mask region allows every pair of the tile.
  State computeKeyTile(OpBuilder &b, Location loc, const QueryTile &tile,
                       Value qTile, const QueryOperands &q, Value kt, Value k0,
                       Value ks, State st, Value regionFull);

  /// The mask_mod region's bounds over the tile of `tile`'s rows and keys
  /// [k0, k0 + ks) (MaskBounds over IRArith).
  MaskBounds<IRArith>::Truth classifyMaskRegion(OpBuilder &b, Location loc,
                                                Block &region,
                                                const QueryTile &tile, Value k0,
                                                Value ks);

  /// The range of an integer tensor's values over an index box (inclusive
  /// ranges, clamped to the tensor), computed by a loop nest; the element
  /// type's whole range for boxes outside the tensor or too large to scan.
  std::optional<std::pair<Value, Value>>
  tensorRange(OpBuilder &b, Location loc, Value t,
              ArrayRef<std::pair<Value, Value>> box);

  /// A scratch tile of `sizes` whose dimension `keyDim` runs over the keys
  /// of one key tile: allocated at the static tile width and sliced, so
  /// that --attn-hoist-loop-buffers allocates it once per query tile.
  Value scratchTile(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes,
                    Type type, unsigned keyDim);

  /// An f32 copy [R, qs, Dqk] of a query tile in the op's layout and
  /// element type (vector code, one row chunk at a time).
  Value convertQueryTile(OpBuilder &b, Location loc, Value qTile, Value qs);

  /// C[r, i, j] += sum_k A[r, i, k] B[k, j] on AMX tiles: a linalg.generic
  /// over (r, i, j, p, e), k = 2p + e, marked `attn.amx_tile_matmul`, that
  /// attn-lower-amx-tile-matmuls turns into tile loads, `tdpbf16ps` and tile
  /// stores after bufferization. `a`: bf16 pairs [.., .., K / 2, 2] with
  /// `aMap` from the loops; `bPairs`: bf16 [K / 2, N, 2] (B in AMX's pair
  /// layout); `c`: f32 [R, M, N]. M and N must be multiples of 16 and K a
  /// static multiple of 32.
  Value amxMatmul(OpBuilder &b, Location loc, Value a, AffineMap aMap,
                  Value bPairs, Value c);

  /// The query tile [1, R, qs, Dqk] (or [1, qs, R, Dqk]) as bf16 pairs
  /// [R, qs, Dqk / 2, 2] (or [qs, R, ...]) for amxMatmul, and its map; or,
  /// given the split f16 query (QueryOperands::split), its pairs
  /// [R, qs, 3 Dqk / 2, 2].
  std::pair<Value, AffineMap> amxQueryPairs(OpBuilder &b, Location loc,
                                            Value qTile, Value split = {});

  /// acc[r, i, :] += sum_j p[r, i, j] V[j, :] on AMX over a full key tile
  /// (tileK keys, bf16 V in place), with p rounded to bf16 (amxPV). An f16
  /// V tile (f16Split) takes p and V split in three segments, or
  /// `fallback` where the V tile holds a value that is not finite.
  Value amxPVTile(OpBuilder &b, Location loc, Value acc, Value p, Value vTile,
                  Value qs,
                  function_ref<Value(OpBuilder &, Location)> fallback);

  /// The query tile as i32 words of bf16 pairs [R, qs, Dqk / 2] (pairedQK).
  Value pairQueryTile(OpBuilder &b, Location loc, Value qTile, Value qs);

  /// The weights p [R, qs, n] rounded to bf16 (nearest even) into `dest`:
  /// bf16 [R, qs, n], or i32 words of pairs [R, qs, n / 2] for an i32 `dest`
  /// (n a multiple of 2 x lanes). `split` (f16Split's P V): a bf16 `dest`
  /// [R, qs, 3 n] gets p's hi and lo parts in kSplitA's segments.
  Value roundWeightPairs(OpBuilder &b, Location loc, Value p, Value qs, Value n,
                         Value dest, bool split = false);

  /// The first 2 x `pairs` rows of a bf16 V tile (the op's layout) as pairs
  /// of rows into `dest`: bf16 [pairs, 2 Dv] with dest[k, 2e + t] =
  /// V[2k + t, e] (AMX's B layout), or i32 words [pairs, Dv] for an i32
  /// `dest` (Dv a multiple of lanes). An f16 V tile (f16Split) fills a bf16
  /// `dest` [3 pairs, 2 Dv] with its hi and lo parts' pairs in kSplitB's
  /// segments and sets `*finite` (i1) to whether every value is finite.
  Value packValuePairs(OpBuilder &b, Location loc, Value vTile, Value pairs,
                       Value dest, Value *finite = nullptr);

  /// acc[r, i, :] += sum_j p[r, i, j] * V[j, :] over the `n` keys of a V
  /// tile or page (bf16, the op's layout; n a multiple of 2 x lanes, Dv of
  /// nw), with p rounded to bf16 and both sides in pairs of keys
  /// (pairedPV).
  Value pairedPVTile(OpBuilder &b, Location loc, Value acc, Value p,
                     Value vTile, Value qs, Value n,
                     const BlockKeys *keys = nullptr);

  /// An f32 copy [ks, D] of a K or V tile in the op's layout and element
  /// type, written into `dest`.
  Value convertKeyTile(OpBuilder &b, Location loc, Value tile, Value ks,
                       Value d, Value dest);

  /// The f32 tile [1, 1, ks, D] ([1, ks, 1, D] in bnhd) of the rows `rows`
  /// locates (in the cache or its pages): quantized rows each decoded and
  /// multiplied by its scale from `rows.scale`, others converted to f32
  /// (Dequantize.cpp). Rows of pages past the sequence's last are zeros.
  Value dequantizeTile(OpBuilder &b, Location loc, const TileRows &rows);

  /// The logit generic over one [R, qs, ks] score tile. Mask, bias, kv_len
  /// and ALiBi operands are read with tensor.extract at absolute indices.
  Value logits(OpBuilder &b, Location loc, Value s, Value bIdx, Value h0,
               Value q0, Value k0, Value kvLen, bool structural);

  /// Reads a tensor broadcastable to [B, Hq, Nq, Nk] at logical indices.
  Value extractBroadcast(OpBuilder &b, Location loc, Value t,
                         ArrayRef<Value> logical);

  /// How the softmax step turns raw scores into logits: x = scale * s on
  /// the keys [lo, hi) (relative to the tile) that row i may read, -inf on
  /// the others. Null members: s already holds the logits.
  struct RowLogits {
    Value scale;
    std::function<std::pair<Value, Value>(OpBuilder &, Location, Value)> keys;
  };

  /// The online-softmax bookkeeping of one score tile as explicit vector
  /// code, in blocks of `lanes` rows (a block's rows of P stay in L1): the
  /// max sweeps row by row and the block's row maxima at once (a
  /// transpose-and-reduce of the rows' lane-wise maxima), the exp sweeps row
  /// by row and the row sums at once, the row statistics (a, l', the
  /// accumulator's scales) for the block's rows at once, one lane per row,
  /// then the rescaling row by row:
  ///   x    = s[r, i, :], or the logits of `rowLogits` from raw scores
  ///   m'   = max(m, max_j x);  safe = (m' == -inf ? 0 : m')
  ///   a    = exp(m - safe)
  ///   P    = exp(x - safe), written over s;  l' = a l + sum_j P
  ///   s'   = buildRowSumScale(l');  P *= s';  acc[r, i, :] *= a s' / s
  ///   (the accumulator is kept scaled by the power of two s of its l)
  /// Lanes past the tile's end are masked. A NaN logit does not enter the
  /// row max (compare-and-select) but makes its weight, the row sum and so the
  /// row's out and lse NaN, as the contract says.
  std::pair<State, Value> softmaxStep(OpBuilder &b, Location loc, State st,
                                      Value s, Value qs,
                                      const RowLogits &rowLogits);

  /// One online-softmax step with score tile `s` (logits, or raw scores
  /// that `rowLogits` turns into logits) and V tile. `full` says the tile has
  /// no masked key (so every weight is a real one): only then may the
  /// microkernel multiply weights by V unguarded. `blockKeys` (may be
  /// null): the keys each register block's rows read, for P V's k loops.
  State update(OpBuilder &b, Location loc, State st, Value s,
               const TileRows &vRows, Value qs, Value full,
               const RowLogits &rowLogits, const BlockKeys *blockKeys);

  State initState(OpBuilder &b, Location loc, Value qs);

  /// out tile (in the op's layout, element type) and lse tile [1, R, qs].
  /// `outDest` / `lseDest`: the slices of the forall's shared outputs the
  /// tiles go to (so that bufferization writes them in place, without a
  /// temporary tile and a copy), or null for fresh tiles.
  std::pair<Value, Value> finalize(OpBuilder &b, Location loc, State st,
                                   Value qs, Value outDest = {},
                                   Value lseDest = {});

  Value kvLenOf(OpBuilder &b, Location loc, Value bIdx);

  /// Empty destinations for out and (if present) lse.
  SmallVector<Value> destinations(OpBuilder &b, Location loc);

  SmallVector<OpFoldResult> outSizes(OpBuilder &b, Location loc);

  /// Writes an out tile and an lse tile into the forall's shared outputs.
  void insertTiles(OpBuilder &b, Location loc, scf::ForallOp forall, Value bIdx,
                   Value gIdx, Value q0, Value qs, Value outTile,
                   Value lseTile);

  SmallVector<Value> castResults(OpBuilder &b, Location loc,
                                 ValueRange results);

  /// The grid's work for the thread choice: Hq (Dqk + Dv) multiply-adds
  /// per (query, key) pair of one head, `pairs` of them.
  Value gridWork(OpBuilder &b, Location loc, Value pairs);
  /// States `work` (gridWork, defined before `grid`) at the start of
  /// `grid`'s body (attn.grid_work).
  void markGridWork(OpBuilder &b, Location loc, scf::ForallOp grid, Value work);
  /// The decode form's number of split-KV chunks for a grid of `items`
  /// (batch, K/V head, query tile) work items and `work` multiply-adds:
  /// `schedule.splits` where it is positive; otherwise (-1) chosen at run
  /// time from the threads the grid gets (attn.grid_threads): 1 on one
  /// thread (the splits would only add merges), else enough chunks for
  /// kSplitItemsPerThread items per thread (at least 1, at most one per
  /// key tile of the cache, and only as many as the cache's key tiles fill
  /// in chunks of splitTiles's size).
  Value numSplitsFor(OpBuilder &b, Location loc, Value items, Value work);
  static constexpr int64_t kSplitItemsPerThread = 2;
  /// The (query, key) pairs of one head over the batch: Nq times each
  /// entry's keys (Nk, or its kv_len), an upper bound (masks ignored).
  Value densePairs(OpBuilder &b, Location loc);

  /// The fused form: forall (b, g, query tile) { walk readable key tiles }.
  SmallVector<Value> buildFused(OpBuilder &b, Location loc);

  /// The decode form: forall (b, g, query tile, split) computes partial
  /// states over a chunk of the readable key tiles; a merge combines them.
  SmallVector<Value> buildSplitKv(OpBuilder &b, Location loc);

  /// The decode form's exact merge of the partial states m, l
  /// [B, Hkv, S, R, Nq] and acc [B, Hkv, S, R, Nq, Dv] into out (in the op's
  /// layout and element type) and lse.
  SmallVector<Value> mergeSplits(OpBuilder &b, Location loc, Value pm, Value pl,
                                 Value pacc);

  /// The part of one work item both forms share: the key tiles that `tile`'s
  /// rows read (chunk `split` of `numSplits` in the decode form, or all
  /// when `split` is null), walked from a fresh state; none when the tile
  /// has no rows.
  State computeQueryTile(OpBuilder &b, Location loc, const QueryTile &tile,
                         Value split = Value(), Value numSplits = Value());
};

/// A ragged `op` in the fused form (`schedule.splits` == 0) or the decode
/// form as one work list: a forall over (sequence, K/V head, query tile
/// [, key split]) whose items each build their sequence's dense op
/// (buildSequenceOp) and lower one query tile of it, writing into the
/// packed results (or the packed partial states, merged once afterwards).
/// Sequences with fewer query tiles than the longest leave their extra items
/// empty. The caller emits the run-time checks (emitRaggedChecks) and
/// guards the work.
/// `bf16Products` receives the packed op's FusedLowering::bf16Products().
SmallVector<Value>
buildRaggedWorkList(PatternRewriter &rewriter, AttentionOp op,
                    const ScheduleSpec &schedule, const VectorShape &shape,
                    bool instrument, std::string &bf16Products);

} // namespace cpu
} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_CONVERSION_ATTNTOCPU_FUSEDLOWERING_H
