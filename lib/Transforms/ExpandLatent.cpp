//===- ExpandLatent.cpp - latent attention's V as a slice of K ------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// `v_from_k(Dv)` states that V is the first Dv columns of the one latent
// cache K. For the CPU forms the op gets an explicit V operand, a slice of
// K (a strided view after bufferization), and loses the attribute.
//
//===----------------------------------------------------------------------===//

#include "attn/IR/AttnOps.h"
#include "attn/Transforms/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNEXPANDLATENT
#include "attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

namespace {

struct ExpandLatent : public OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &b) const override {
    std::optional<int64_t> dv = op.getVFromK();
    if (!dv)
      return failure();
    Location loc = op.getLoc();
    Value k = op.getKey();
    auto type = cast<RankedTensorType>(k.getType());
    // The last physical dimension is D in both layouts.
    SmallVector<OpFoldResult> offsets(4, b.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, k);
    SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
    sizes[3] = b.getIndexAttr(*dv);
    SmallVector<int64_t> shape(type.getShape());
    shape[3] = *dv;
    auto vType = RankedTensorType::get(shape, type.getElementType());
    Value v = tensor::ExtractSliceOp::create(b, loc, vType, k, offsets, sizes,
                                             strides);
    b.modifyOpInPlace(op, [&] {
      op.getValueMutable().assign(v);
      // A quantized latent cache: V's rows carry K's scales.
      if (Value scale = op.getKScale())
        op.getVScaleMutable().assign(scale);
      op.removeVFromKAttr();
    });
    return success();
  }
};

struct AttnExpandLatentPass
    : public attn::impl::AttnExpandLatentBase<AttnExpandLatentPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ExpandLatent>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
