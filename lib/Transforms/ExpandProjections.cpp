//===- ExpandProjections.cpp - projected_attention -> linalg + attention --===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// Rewrites the projection-level op into the seed's pipeline. Head split and
// merge are pure reshapes: projecting [B, N, D] by [D, H*Dh] and expanding to
// [B, N, H, Dh] is exactly the `bnhd` layout, so the core op reads heads in
// place and nothing is transposed or copied per head.
//
//===----------------------------------------------------------------------===//

#include "attn/IR/AttnOps.h"
#include "attn/Transforms/Passes.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNEXPANDPROJECTIONS
#include "attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Size `i` of `v` as a static attribute or a `tensor.dim`.
static OpFoldResult dimOf(OpBuilder &b, Location loc, Value v, int64_t i) {
  auto type = cast<RankedTensorType>(v.getType());
  if (!type.isDynamicDim(i))
    return b.getIndexAttr(type.getDimSize(i));
  return tensor::DimOp::create(b, loc, v, i).getResult();
}

static OpFoldResult divExact(OpBuilder &b, Location loc, OpFoldResult x,
                             int64_t y) {
  if (auto cx = getConstantIntValue(x))
    return b.getIndexAttr(*cx / y);
  Value c = arith::ConstantIndexOp::create(b, loc, y);
  return arith::DivUIOp::create(b, loc,
                                getValueOrCreateConstantIndexOp(b, loc, x), c)
      .getResult();
}

static RankedTensorType tensorOf(ArrayRef<OpFoldResult> sizes, Type elt) {
  SmallVector<int64_t> shape;
  for (OpFoldResult s : sizes)
    shape.push_back(getConstantIntValue(s).value_or(ShapedType::kDynamic));
  return RankedTensorType::get(shape, elt);
}

/// `x [B, N, K] * w [K, C] -> [B, N, C]`, accumulated in f32 and returned in
/// x's element type. B and N stay separate dimensions: the rows are never
/// flattened to B*N, so no reshape has to split a product of two run-time
/// sizes back apart.
static Value project(OpBuilder &b, Location loc, Value x, Value w) {
  Type elt = cast<RankedTensorType>(x.getType()).getElementType();
  Type acc = b.getF32Type();
  SmallVector<OpFoldResult> sizes = {dimOf(b, loc, x, 0), dimOf(b, loc, x, 1),
                                     dimOf(b, loc, w, 1)};
  Value init = tensor::EmptyOp::create(b, loc, sizes, acc);
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(acc));
  init = linalg::FillOp::create(b, loc, zero, init).getResult(0);
  MLIRContext *ctx = b.getContext();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  // Loops (b, n, c, k).
  SmallVector<AffineMap> maps = {AffineMap::get(4, 0, {d(0), d(1), d(3)}, ctx),
                                 AffineMap::get(4, 0, {d(3), d(2)}, ctx),
                                 AffineMap::get(4, 0, {d(0), d(1), d(2)}, ctx)};
  SmallVector<utils::IteratorType> iters(3, utils::IteratorType::parallel);
  iters.push_back(utils::IteratorType::reduction);
  Value prod = linalg::GenericOp::create(
                   b, loc, init.getType(), ValueRange{x, w}, init, maps, iters,
                   [&](OpBuilder &nb, Location nl, ValueRange a) {
                     Value l = a[0], r = a[1];
                     if (l.getType() != acc)
                       l = arith::ExtFOp::create(nb, nl, acc, l);
                     if (r.getType() != acc)
                       r = arith::ExtFOp::create(nb, nl, acc, r);
                     Value p = arith::MulFOp::create(nb, nl, l, r);
                     linalg::YieldOp::create(
                         nb, nl, Value(arith::AddFOp::create(nb, nl, a[2], p)));
                   })
                   .getResult(0);
  if (elt == acc)
    return prod;
  // Round the f32 accumulator back to the storage type.
  Value out = tensor::EmptyOp::create(b, loc, sizes, elt);
  SmallVector<AffineMap> ids(2, b.getMultiDimIdentityMap(3));
  return linalg::GenericOp::create(
             b, loc, out.getType(), prod, out, ids,
             SmallVector<utils::IteratorType>(3, utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value t = arith::TruncFOp::create(nb, nl, elt, args[0]);
               linalg::YieldOp::create(nb, nl, t);
             })
      .getResult(0);
}

/// Projects `src [B, N, D]` by `w [D, H*Dh]` and splits heads:
/// `[B, N, H, Dh]` (the bnhd layout); H is a static attribute, so the split
/// group has at most one run-time size.
static Value projectHeads(OpBuilder &b, Location loc, Value src, Value w,
                          int64_t heads) {
  auto srcType = cast<RankedTensorType>(src.getType());
  Value proj = project(b, loc, src, w);
  OpFoldResult headDim = divExact(b, loc, dimOf(b, loc, w, 1), heads);
  SmallVector<OpFoldResult> shape = {dimOf(b, loc, proj, 0),
                                     dimOf(b, loc, proj, 1),
                                     b.getIndexAttr(heads), headDim};
  SmallVector<ReassociationIndices> expand = {{0}, {1}, {2, 3}};
  return tensor::ExpandShapeOp::create(
      b, loc, tensorOf(shape, srcType.getElementType()), proj, expand, shape);
}

struct ExpandProjectedAttention
    : public OpRewritePattern<ProjectedAttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ProjectedAttentionOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int64_t hq = op.getNumQueryHeads(), hkv = op.getNumKvHeads();
    Value q = projectHeads(rewriter, loc, op.getXq(), op.getWq(), hq);
    Value k = projectHeads(rewriter, loc, op.getKvSource(), op.getWk(), hkv);
    Value v = projectHeads(rewriter, loc, op.getKvSource(), op.getWv(), hkv);

    // out: [B, Nq, Hq, Dv] in the bnhd layout.
    auto qType = cast<RankedTensorType>(q.getType());
    auto vType = cast<RankedTensorType>(v.getType());
    auto outType = RankedTensorType::get(
        {qType.getDimSize(0), qType.getDimSize(1), hq, vType.getDimSize(3)},
        qType.getElementType());
    auto attention = AttentionOp::create(
        rewriter, loc, outType, /*lse=*/Type(), q, k, v, /*page_table=*/Value(),
        /*cu_seqlens_q=*/Value(), /*cu_seqlens_k=*/Value(),
        /*k_scale=*/Value(), /*v_scale=*/Value(), op.getKvLen(),
        op.getKvStart(), op.getKeyMask(), op.getMask(), op.getBias(),
        op.getAlibiSlopes(), op.getSink(), op.getRuntimeScale(),
        op.getModInputs(), LayoutAttr::get(rewriter.getContext(), Layout::bnhd),
        /*v_from_k=*/IntegerAttr(), op.getCausalAttr(), op.getAlignAttr(),
        op.getWindowLeftAttr(), op.getWindowRightAttr(), op.getScaleAttr(),
        op.getSoftcapAttr(), op.getNormalizationAttr());
    // The user's regions mean the same on the expanded op (b, query head h,
    // row i, key j).
    rewriter.inlineRegionBefore(op.getScoreMod(), attention.getScoreMod(),
                                attention.getScoreMod().end());
    rewriter.inlineRegionBefore(op.getMaskMod(), attention.getMaskMod(),
                                attention.getMaskMod().end());

    // Merge heads back: [B, Nq, Hq, Dv] -> [B, Nq, Hq*Dv], then project out.
    SmallVector<ReassociationIndices> merge = {{0}, {1}, {2, 3}};
    Value merged = tensor::CollapseShapeOp::create(rewriter, loc,
                                                   attention.getOut(), merge);
    Value result = project(rewriter, loc, merged, op.getWo());
    if (result.getType() != op.getResult().getType())
      result = tensor::CastOp::create(rewriter, loc, op.getResult().getType(),
                                      result);
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct AttnExpandProjectionsPass
    : public attn::impl::AttnExpandProjectionsBase<AttnExpandProjectionsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateExpandProjectionsPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void mlir::attn::populateExpandProjectionsPatterns(
    RewritePatternSet &patterns) {
  patterns.add<ExpandProjectedAttention>(patterns.getContext());
}
