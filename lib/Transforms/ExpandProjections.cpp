//===- ExpandProjections.cpp - projected_attention -> linalg + attention --===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// Rewrites the projection-level op into the seed's pipeline. Head split and
// merge are pure reshapes: projecting [B*N, D] by [D, H*Dh] and expanding to
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

/// `x [M, K] * w [K, N]` with f32 accumulation, returned in x's element type.
static Value matmul(OpBuilder &b, Location loc, Value x, Value w) {
  Type elt = cast<RankedTensorType>(x.getType()).getElementType();
  SmallVector<OpFoldResult> sizes = {dimOf(b, loc, x, 0), dimOf(b, loc, w, 1)};
  Type acc = b.getF32Type();
  Value init = tensor::EmptyOp::create(b, loc, sizes, acc);
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(acc));
  init = linalg::FillOp::create(b, loc, zero, init).getResult(0);
  Value prod =
      linalg::MatmulOp::create(b, loc, ValueRange{x, w}, ValueRange{init})
          .getResult(0);
  if (elt == acc)
    return prod;
  // Round the f32 accumulator back to the storage type.
  Value out = tensor::EmptyOp::create(b, loc, sizes, elt);
  SmallVector<AffineMap> maps(2, b.getMultiDimIdentityMap(2));
  SmallVector<utils::IteratorType> iters(2, utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, out.getType(), prod, out, maps, iters,
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               Value t = arith::TruncFOp::create(nb, nloc, elt, args[0]);
               linalg::YieldOp::create(nb, nloc, t);
             })
      .getResult(0);
}

/// Collapses `src [B, N, D]` to the `[B*N, D]` rows the projections read.
static Value collapseRows(OpBuilder &b, Location loc, Value src) {
  SmallVector<ReassociationIndices> collapse = {{0, 1}, {2}};
  return tensor::CollapseShapeOp::create(b, loc, src, collapse);
}

/// Projects `rows [B*N, D]` by `w [D, H*Dh]` and splits heads:
/// `[B, N, H, Dh]` (the bnhd layout). `src` is the uncollapsed source.
static Value projectHeads(OpBuilder &b, Location loc, Value src, Value rows,
                          Value w, int64_t heads) {
  OpFoldResult batch = dimOf(b, loc, src, 0), len = dimOf(b, loc, src, 1);
  auto srcType = cast<RankedTensorType>(src.getType());
  Value proj = matmul(b, loc, rows, w);
  OpFoldResult headDim = divExact(b, loc, dimOf(b, loc, w, 1), heads);
  SmallVector<OpFoldResult> shape = {batch, len, b.getIndexAttr(heads),
                                     headDim};
  SmallVector<ReassociationIndices> expand = {{0, 1}, {2, 3}};
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
    Value qRows = collapseRows(rewriter, loc, op.getXq());
    Value kvRows =
        op.getXkv() ? collapseRows(rewriter, loc, op.getXkv()) : qRows;
    Value q = projectHeads(rewriter, loc, op.getXq(), qRows, op.getWq(), hq);
    Value k =
        projectHeads(rewriter, loc, op.getKvSource(), kvRows, op.getWk(), hkv);
    Value v =
        projectHeads(rewriter, loc, op.getKvSource(), kvRows, op.getWv(), hkv);

    // out: [B, Nq, Hq, Dv] in the bnhd layout.
    auto qType = cast<RankedTensorType>(q.getType());
    auto vType = cast<RankedTensorType>(v.getType());
    auto outType = RankedTensorType::get(
        {qType.getDimSize(0), qType.getDimSize(1), hq, vType.getDimSize(3)},
        qType.getElementType());
    auto attention = AttentionOp::create(
        rewriter, loc, outType, /*lse=*/Type(), q, k, v, op.getKvLen(),
        op.getMask(), op.getBias(), op.getAlibiSlopes(),
        LayoutAttr::get(rewriter.getContext(), Layout::bnhd),
        op.getCausalAttr(), op.getWindowLeftAttr(), op.getWindowRightAttr(),
        op.getScaleAttr(), op.getSoftcapAttr(), op.getNormalizationAttr());

    // Merge heads back: [B, Nq, Hq, Dv] -> [B*Nq, Hq*Dv], then project out.
    OpFoldResult batch = dimOf(rewriter, loc, op.getXq(), 0);
    OpFoldResult len = dimOf(rewriter, loc, op.getXq(), 1);
    SmallVector<ReassociationIndices> merge = {{0, 1}, {2, 3}};
    Value merged = tensor::CollapseShapeOp::create(rewriter, loc,
                                                   attention.getOut(), merge);
    Value projected = matmul(rewriter, loc, merged, op.getWo());
    SmallVector<OpFoldResult> shape = {batch, len,
                                       dimOf(rewriter, loc, op.getWo(), 1)};
    SmallVector<ReassociationIndices> split = {{0, 1}, {2}};
    Value result = tensor::ExpandShapeOp::create(
        rewriter, loc,
        tensorOf(shape, op.getResult().getType().getElementType()), projected,
        split, shape);
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
