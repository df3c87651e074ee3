//===- AmxTiles.cpp - bf16 tile products on AMX ---------------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// bf16 Q K^T and P V on Intel AMX (amx-tile, amx-bf16), in two steps:
//
//  - On tensors (FusedLowering::amxMatmul and its operands): the product is a
//    linalg.generic C[r, i, j] += A[r, i, p, e] B[p, j, e] (k = 2p + e) over
//    bf16 pairs, marked `attn.amx_tile_matmul`. A is the query tile or the
//    weights rounded to bf16, viewed as pairs; B is K packed transposed in
//    pairs or V packed as pairs of rows: AMX's B layout (a row of B holds,
//    for 16 columns, the two values of one pair of k).
//  - On buffers (attn-lower-amx-tile-matmuls, after bufferization): each
//    marked generic becomes loops of 16 x 16 output tiles, each accumulated
//    over the static k in steps of 32 with `amx.tile_load`,
//    `amx.tile_mulf` (`tdpbf16ps`) and one `amx.tile_store`; four output
//    tiles of a row block at a time share each A tile load and keep four
//    products in flight (the columns past the last whole block one tile at
//    a time). LLVM inserts the tile configuration (`ldtilecfg`) in each
//    function that uses tiles.
//
// Linux hands out the AMX register state only to processes that ask for it
// (arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA), since 5.16). The
// kernels ask once per process, from the generated code itself (a `syscall`
// through llvm.inline_asm, so no runtime library is needed), and keep the
// answer in a private global; a product whose rows or columns are not
// whole tiles, or a process whose kernel refuses AMX, runs the generic's
// own loops instead: slow, but the same result, never an illegal
// instruction.
//
//===----------------------------------------------------------------------===//

#include "FusedLowering.h"

#include "attn/Conversion/Passes.h"

#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNLOWERAMXTILEMATMULS
#include "attn/Conversion/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::cpu;

static constexpr llvm::StringLiteral kAmxTileMatmulAttr =
    "attn.amx_tile_matmul";

/// Output tiles computed side by side (accumulators in flight at once; with
/// one A and one B tile register that is 6 of AMX's 8).
static constexpr int64_t kBlock = 4;

//===----------------------------------------------------------------------===//
// On tensors
//===----------------------------------------------------------------------===//

/// `t` [.., .., K] viewed as pairs [.., .., K / 2, 2] (K static and even).
static Value asPairs(OpBuilder &b, Location loc, Value t) {
  auto ty = cast<RankedTensorType>(t.getType());
  int64_t rank = ty.getRank();
  int64_t k = ty.getDimSize(rank - 1);
  assert(!ShapedType::isDynamic(k) && k % 2 == 0 && "static, even k");
  SmallVector<int64_t> shape(ty.getShape());
  shape.back() = k / 2;
  shape.push_back(2);
  SmallVector<OpFoldResult> sizes;
  for (int64_t d = 0; d + 1 < rank; ++d)
    sizes.push_back(tensor::getMixedSize(b, loc, t, d));
  sizes.push_back(b.getIndexAttr(k / 2));
  sizes.push_back(b.getIndexAttr(2));
  SmallVector<ReassociationIndices> groups;
  for (int64_t d = 0; d + 1 < rank; ++d)
    groups.push_back({d});
  groups.push_back({rank - 1, rank});
  return tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(shape, ty.getElementType()), t, groups,
      sizes);
}

/// `t` with static sizes where `sizes` holds them (a cast, no copy).
static Value withStaticSizes(OpBuilder &b, Location loc, Value t,
                             ArrayRef<int64_t> sizes) {
  auto ty = cast<RankedTensorType>(t.getType());
  SmallVector<int64_t> shape(ty.getShape());
  for (auto [i, s] : llvm::enumerate(sizes))
    if (!ShapedType::isDynamic(s))
      shape[i] = s;
  auto to = RankedTensorType::get(shape, ty.getElementType());
  return to == ty ? t : tensor::CastOp::create(b, loc, to, t).getResult();
}

Value FusedLowering::amxMatmul(OpBuilder &b, Location loc, Value a,
                               AffineMap aMap, Value bPairs, Value c) {
  MLIRContext *ctx = b.getContext();
  AffineExpr r, i, j, p, e;
  bindDims(ctx, r, i, j, p, e);
  AffineMap bMap = AffineMap::get(5, 0, {p, j, e}, ctx);
  AffineMap cMap = AffineMap::get(5, 0, {r, i, j}, ctx);
  SmallVector<utils::IteratorType> its(3, utils::IteratorType::parallel);
  its.append(2, utils::IteratorType::reduction);
  auto g = linalg::GenericOp::create(
      b, loc, c.getType(), ValueRange{a, bPairs}, ValueRange{c},
      {aMap, bMap, cMap}, its,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value x = arith::ExtFOp::create(nb, nl, f32, args[0]);
        Value y = arith::ExtFOp::create(nb, nl, f32, args[1]);
        Value xy = arith::MulFOp::create(nb, nl, x, y);
        linalg::YieldOp::create(
            nb, nl, Value(arith::AddFOp::create(nb, nl, args[2], xy)));
      });
  g->setAttr(kAmxTileMatmulAttr, b.getUnitAttr());
  return g.getResult(0);
}

std::pair<Value, AffineMap> FusedLowering::amxQueryPairs(OpBuilder &b,
                                                         Location loc,
                                                         Value qTile,
                                                         Value split) {
  MLIRContext *ctx = b.getContext();
  AffineExpr r, i, j, p, e;
  bindDims(ctx, r, i, j, p, e);
  if (split)
    return {asPairs(b, loc, split), AffineMap::get(5, 0, {r, i, p, e}, ctx)};
  // [1, R, qs, D] -> [R, qs, D] (or [1, qs, R, D] -> [qs, R, D]) -> pairs.
  Value q3 = tensor::CollapseShapeOp::create(
      b, loc, qTile, SmallVector<ReassociationIndices>{{0, 1}, {2}, {3}});
  q3 = withStaticSizes(
      b, loc, q3,
      {ShapedType::kDynamic, ShapedType::kDynamic, staticSize(dqk)});
  AffineMap m = layout == Layout::bhnd
                    ? AffineMap::get(5, 0, {r, i, p, e}, ctx)
                    : AffineMap::get(5, 0, {i, r, p, e}, ctx);
  return {asPairs(b, loc, q3), m};
}

Value FusedLowering::amxPVTile(
    OpBuilder &b, Location loc, Value acc, Value p, Value vTile, Value qs,
    function_ref<Value(OpBuilder &, Location)> fallback) {
  IndexMath im{b, loc};
  Type bf16 = b.getBF16Type();
  int64_t e = staticSize(dv);
  // f16 V: p and V split in kSplitSegments segments of tileK keys.
  int64_t segs =
      cast<RankedTensorType>(vTile.getType()).getElementType().isF16()
          ? kSplitSegments
          : 1;
  int64_t keys = segs * tileK;
  // The weights rounded to bf16 (nearest even), pB[r, i, j], tileK keys;
  // V as pairs of rows, vB[k, 2 e + t] = V[2k + t, e].
  Value pB = roundWeightPairs(
      b, loc, p, qs, im.c(tileK),
      segs == 1
          ? scratchTile(b, loc, {groups, qs, b.getIndexAttr(tileK)}, bf16, 2)
          : tensor::EmptyOp::create(
                b, loc,
                SmallVector<OpFoldResult>{groups, qs, b.getIndexAttr(keys)},
                bf16)
                .getResult(),
      /*split=*/segs != 1);
  Value finite;
  Value vB = packValuePairs(
      b, loc, vTile, im.c(tileK / 2),
      segs == 1
          ? scratchTile(b, loc,
                        {b.getIndexAttr(tileK / 2), b.getIndexAttr(2 * e)},
                        bf16, 0)
          : tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{keys / 2, 2 * e},
                                    bf16)
                .getResult(),
      segs == 1 ? nullptr : &finite);
  MLIRContext *ctx = b.getContext();
  AffineExpr r, i, j, pp, ee;
  bindDims(ctx, r, i, j, pp, ee);
  Value vPairs = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get({keys / 2, e, 2}, bf16), vB,
      SmallVector<ReassociationIndices>{{0}, {1, 2}},
      SmallVector<OpFoldResult>{b.getIndexAttr(keys / 2), b.getIndexAttr(e),
                                b.getIndexAttr(2)});
  auto tiles = [&](OpBuilder &tb, Location tl) -> Value {
    return amxMatmul(tb, tl, asPairs(tb, tl, pB),
                     AffineMap::get(5, 0, {r, i, pp, ee}, ctx), vPairs, acc);
  };
  if (!finite)
    return tiles(b, loc);
  return branch(b, loc, finite, acc, tiles, fallback);
}

//===----------------------------------------------------------------------===//
// On buffers: attn-lower-amx-tile-matmuls
//===----------------------------------------------------------------------===//

namespace {

constexpr llvm::StringLiteral kReadyFunc = "__attn_amx_ready";
constexpr llvm::StringLiteral kStateGlobal = "__attn_amx_state";

/// func.func private @__attn_amx_ready() -> i1: whether this process may use
/// the AMX tiles, asking Linux once (the answer is kept in a private global:
/// 0 not asked yet, 1 granted, 2 refused; racing threads ask twice, which is
/// harmless).
FlatSymbolRefAttr getOrCreateReadyFunc(ModuleOp module) {
  MLIRContext *ctx = module.getContext();
  if (module.lookupSymbol(kReadyFunc))
    return FlatSymbolRefAttr::get(ctx, kReadyFunc);
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  Location loc = module.getLoc();
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  auto stateTy = MemRefType::get({}, i32);
  memref::GlobalOp::create(
      b, loc, kStateGlobal, b.getStringAttr("private"), stateTy,
      DenseElementsAttr::get(RankedTensorType::get({}, i32),
                             b.getI32IntegerAttr(0)),
      /*constant=*/false, /*alignment=*/nullptr);
  auto fn = func::FuncOp::create(b, loc, kReadyFunc,
                                 b.getFunctionType({}, {b.getI1Type()}));
  fn.setPrivate();
  OpBuilder fb = OpBuilder::atBlockBegin(fn.addEntryBlock());
  Value g = memref::GetGlobalOp::create(fb, loc, stateTy, kStateGlobal);
  Value state = memref::LoadOp::create(fb, loc, g, ValueRange{});
  auto c32 = [&](OpBuilder &ob, int64_t v) -> Value {
    return arith::ConstantOp::create(ob, loc, ob.getI32IntegerAttr(v));
  };
  Value unknown = arith::CmpIOp::create(fb, loc, arith::CmpIPredicate::eq,
                                        state, c32(fb, 0));
  auto ask = scf::IfOp::create(
      fb, loc, unknown,
      [&](OpBuilder &tb, Location tl) {
        // arch_prctl(ARCH_REQ_XCOMP_PERM = 0x1023, XFEATURE_XTILEDATA = 18),
        // system call 158 on x86-64 Linux; 0 on success.
        auto c64 = [&](int64_t v) -> Value {
          return arith::ConstantOp::create(tb, tl, tb.getI64IntegerAttr(v));
        };
        Value rc = LLVM::InlineAsmOp::create(
                       tb, tl, i64, ValueRange{c64(158), c64(0x1023), c64(18)},
                       tb.getStringAttr("syscall"),
                       tb.getStringAttr(
                           "={rax},{rax},{rdi},{rsi},~{rcx},~{r11},~{memory}"),
                       tb.getUnitAttr(), UnitAttr(),
                       LLVM::TailCallKindAttr::get(
                           ctx, LLVM::tailcallkind::TailCallKind::None),
                       LLVM::AsmDialectAttr(), ArrayAttr())
                       .getResult(0);
        Value granted =
            arith::CmpIOp::create(tb, tl, arith::CmpIPredicate::eq, rc, c64(0));
        Value next =
            arith::SelectOp::create(tb, tl, granted, c32(tb, 1), c32(tb, 2));
        memref::StoreOp::create(tb, tl, next, g, ValueRange{});
        scf::YieldOp::create(tb, tl, next);
      },
      [&](OpBuilder &eb, Location el) { scf::YieldOp::create(eb, el, state); });
  Value ok = arith::CmpIOp::create(fb, loc, arith::CmpIPredicate::eq,
                                   ask.getResult(0), c32(fb, 1));
  func::ReturnOp::create(fb, loc, ok);
  return FlatSymbolRefAttr::get(ctx, kReadyFunc);
}

/// The position of loop dimension `dim` among the results of `map`.
int64_t resultOf(AffineMap map, unsigned dim) {
  for (auto [i, expr] : llvm::enumerate(map.getResults()))
    if (auto d = dyn_cast<AffineDimExpr>(expr); d && d.getPosition() == dim)
      return static_cast<int64_t>(i);
  return -1;
}

/// Whether `type`'s innermost dimensions are contiguous: strides 2, 1 for a
/// pairs operand (`pairs`), 1 for the output.
bool innerContiguous(MemRefType type, bool pairs) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return false;
  int64_t n = static_cast<int64_t>(strides.size());
  if (strides[n - 1] != 1)
    return false;
  return !pairs || strides[n - 2] == 2;
}

/// Replaces one marked generic (on buffers) by AMX tile loops, under a
/// run-time check that falls back to the generic's own loops.
void lowerToTiles(linalg::GenericOp g, FlatSymbolRefAttr ready) {
  g->removeAttr(kAmxTileMatmulAttr);
  if (!g.hasPureBufferSemantics())
    return;
  Value a = g.getDpsInputs()[0], bp = g.getDpsInputs()[1],
        c = g.getDpsInits()[0];
  auto aTy = cast<MemRefType>(a.getType());
  auto bTy = cast<MemRefType>(bp.getType());
  auto cTy = cast<MemRefType>(c.getType());
  AffineMap aMap = g.getIndexingMapsArray()[0];
  int64_t aR = resultOf(aMap, 0), aI = resultOf(aMap, 1);
  bool pairsInner = resultOf(aMap, 3) == 2 && resultOf(aMap, 4) == 3;
  int64_t pairs = bTy.getDimSize(0);
  if (aTy.getRank() != 4 || bTy.getRank() != 3 || cTy.getRank() != 3 ||
      aR < 0 || aI < 0 || !pairsInner || ShapedType::isDynamic(pairs) ||
      pairs % 16 != 0 || !innerContiguous(aTy, true) ||
      !innerContiguous(bTy, true) || !innerContiguous(cTy, false))
    return;

  // C zeroed just before (Q K^T's S): the tiles start from `tilezero`
  // instead of memory, and only the fallback zeroes C.
  auto zeroFill = dyn_cast_or_null<linalg::FillOp>(g->getPrevNode());
  if (zeroFill) {
    Attribute v;
    if (!zeroFill.hasPureBufferSemantics() || zeroFill.getOutputs()[0] != c ||
        !matchPattern(zeroFill.getInputs()[0], m_Constant(&v)) ||
        !isa<FloatAttr>(v) || !cast<FloatAttr>(v).getValue().isPosZero())
      zeroFill = nullptr;
  }

  OpBuilder b(g);
  Location loc = g.getLoc();
  auto idx = [&](OpBuilder &ob, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(ob, loc, v);
  };
  Value zero = idx(b, 0), one = idx(b, 1), c16 = idx(b, 16);
  Value heads = memref::DimOp::create(b, loc, a, aR);
  Value rows = memref::DimOp::create(b, loc, a, aI);
  Value cols = memref::DimOp::create(b, loc, bp, 1);
  auto whole = [&](Value n) -> Value {
    Value rem = arith::RemUIOp::create(b, loc, n, c16);
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rem, zero);
  };
  Value granted = func::CallOp::create(b, loc, ready, TypeRange{b.getI1Type()})
                      .getResult(0);
  Value cond = arith::AndIOp::create(
      b, loc, granted, arith::AndIOp::create(b, loc, whole(rows), whole(cols)));
  auto strides = [&](OpBuilder &ob, Value m) {
    return memref::ExtractStridedMetadataOp::create(ob, loc, m).getStrides();
  };
  Type bf16 = b.getBF16Type(), f32 = b.getF32Type();
  auto abTile = amx::TileType::get({16, 32}, bf16);
  auto cTile = amx::TileType::get({16, 16}, f32);

  auto ifOp = scf::IfOp::create(b, loc, cond, /*withElseRegion=*/true);
  {
    OpBuilder tb = ifOp.getThenBodyBuilder();
    Value aRowStride = strides(tb, a)[aI];
    Value bRowStride = strides(tb, bp)[0];
    Value cRowStride = strides(tb, c)[1];
    // Output tiles [r, i0:i0+16, j0:j0+16 n] for j0 in [from, to) step 16 n:
    // n accumulators side by side, each A tile loaded once for all n (the
    // tile registers are not renamed, so a single accumulator would chain
    // every product behind the previous tile's store).
    auto columns = [&](OpBuilder &b2, Location l2, Value r, Value i0,
                       Value from, Value to, int64_t n) {
      scf::ForOp::create(
          b2, l2, from, to, idx(b2, 16 * n), ValueRange{},
          [&](OpBuilder &b3, Location l3, Value j0, ValueRange) {
            SmallVector<SmallVector<Value>> cIdx;
            SmallVector<Value> acc;
            for (int64_t u = 0; u < n; ++u) {
              Value j = u == 0
                            ? j0
                            : arith::AddIOp::create(b3, l3, j0, idx(b3, 16 * u))
                                  .getResult();
              cIdx.push_back({r, i0, j});
              acc.push_back(
                  zeroFill ? Value(amx::TileZeroOp::create(b3, l3, cTile))
                           : Value(amx::TileLoadOp::create(
                                 b3, l3, cTile, c, cIdx.back(), cRowStride)));
            }
            // k in steps of 32 (16 pairs), unrolled: the accumulators stay
            // in their tile registers.
            for (int64_t p0 = 0; p0 < pairs; p0 += 16) {
              Value pv = idx(b3, p0);
              SmallVector<Value> aIdx(4, idx(b3, 0));
              aIdx[aR] = r;
              aIdx[aI] = i0;
              aIdx[2] = pv;
              Value x =
                  amx::TileLoadOp::create(b3, l3, abTile, a, aIdx, aRowStride);
              for (int64_t u = 0; u < n; ++u) {
                Value y = amx::TileLoadOp::create(
                    b3, l3, abTile, bp, ValueRange{pv, cIdx[u][2], idx(b3, 0)},
                    bRowStride);
                acc[u] = amx::TileMulFOp::create(b3, l3, cTile, x, y, acc[u]);
              }
            }
            for (int64_t u = 0; u < n; ++u)
              amx::TileStoreOp::create(b3, l3, c, cIdx[u], acc[u], cRowStride);
            scf::YieldOp::create(b3, l3);
          });
    };
    // Columns in blocks of kBlock tiles, then the remaining tiles one by one.
    Value blockCols = idx(tb, 16 * kBlock);
    Value mainCols = arith::SubIOp::create(
        tb, loc, cols, arith::RemUIOp::create(tb, loc, cols, blockCols));
    scf::ForOp::create(
        tb, loc, zero, heads, one, ValueRange{},
        [&](OpBuilder &b1, Location l1, Value r, ValueRange) {
          scf::ForOp::create(
              b1, l1, zero, rows, c16, ValueRange{},
              [&](OpBuilder &b2, Location l2, Value i0, ValueRange) {
                columns(b2, l2, r, i0, zero, mainCols, kBlock);
                columns(b2, l2, r, i0, mainCols, cols, 1);
                scf::YieldOp::create(b2, l2);
              });
          scf::YieldOp::create(b1, l1);
        });
  }
  {
    OpBuilder eb = ifOp.getElseBodyBuilder();
    if (zeroFill)
      eb.clone(*zeroFill);
    eb.clone(*g);
  }
  g.erase();
  if (zeroFill)
    zeroFill.erase();
}

struct AttnLowerAmxTileMatmulsPass
    : public attn::impl::AttnLowerAmxTileMatmulsBase<
          AttnLowerAmxTileMatmulsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<linalg::GenericOp> marked;
    module.walk([&](linalg::GenericOp g) {
      if (g->hasAttr(kAmxTileMatmulAttr))
        marked.push_back(g);
    });
    if (marked.empty())
      return;
    FlatSymbolRefAttr ready = getOrCreateReadyFunc(module);
    for (linalg::GenericOp g : marked)
      lowerToTiles(g, ready);
  }
};

} // namespace
