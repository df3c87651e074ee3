//===- Passes.cpp - fused and split-KV lowering passes --------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "FusedLowering.h"

#include "attn/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_CONVERTATTNTOFUSEDLOOPS
#define GEN_PASS_DEF_CONVERTATTNTOSPLITKV
#include "attn/Conversion/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::cpu;

namespace {

/// Declares attn_tile_visit in the module if an instrumented kernel needs it.
static void declareTileVisit(ModuleOp module) {
  if (module.lookupSymbol(kTileVisitFn))
    return;
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  auto i64 = b.getI64Type();
  auto type = b.getFunctionType({i64, i64, i64, i64, b.getI1Type()}, {});
  auto fn = func::FuncOp::create(b, module.getLoc(), kTileVisitFn, type);
  fn.setPrivate();
}

struct LowerAttentionFused : public OpRewritePattern<AttentionOp> {
  LowerAttentionFused(MLIRContext *ctx, int64_t tq, int64_t tk, bool instrument,
                      int64_t splits)
      : OpRewritePattern(ctx), tq(tq), tk(tk), instrument(instrument),
        splits(splits) {}

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    emitRuntimeShapeChecks(rewriter, op.getLoc(), op);
    TileSizes tiles = chooseTileSizes(op, splits > 0, tq, tk);
    FusedLowering lowering(op, rewriter, tiles.q, tiles.k, instrument);
    SmallVector<Value> results =
        splits > 0 ? lowering.buildSplitKv(rewriter, op.getLoc(), splits)
                   : lowering.buildFused(rewriter, op.getLoc());
    rewriter.replaceOp(op, results);
    return success();
  }

  int64_t tq, tk;
  bool instrument;
  int64_t splits;
};

static LogicalResult runFused(Operation *root, int64_t tq, int64_t tk,
                              bool instrument, int64_t splits) {
  if (tq < 0 || tk < 0)
    return root->emitError("attn: tile sizes must be positive (or 0 for the "
                           "default); got tile-q = ")
           << tq << ", tile-k = " << tk;
  if (instrument) {
    auto module = dyn_cast<ModuleOp>(root);
    if (!module)
      module = root->getParentOfType<ModuleOp>();
    if (!module)
      return root->emitError("attn: instrumentation needs a module");
    declareTileVisit(module);
  }
  RewritePatternSet patterns(root->getContext());
  patterns.add<LowerAttentionFused>(root->getContext(), tq, tk, instrument,
                                    splits);
  return applyPatternsGreedily(root, std::move(patterns));
}

struct ConvertAttnToFusedLoopsPass
    : public attn::impl::ConvertAttnToFusedLoopsBase<
          ConvertAttnToFusedLoopsPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(runFused(getOperation(), tileQ, tileK, instrumentTiles, 0)))
      signalPassFailure();
  }
};

struct ConvertAttnToSplitKvPass
    : public attn::impl::ConvertAttnToSplitKvBase<ConvertAttnToSplitKvPass> {
  using Base::Base;
  void runOnOperation() override {
    if (splits <= 0) {
      getOperation()->emitError("attn: splits must be positive; got ")
          << static_cast<int64_t>(splits);
      return signalPassFailure();
    }
    if (failed(runFused(getOperation(), tileQ, tileK, instrumentTiles, splits)))
      signalPassFailure();
  }
};

} // namespace

TileSizes mlir::attn::chooseTileSizes(AttentionOp op, bool decode,
                                      int64_t tileQ, int64_t tileK) {
  TileSizes t;
  if (decode) {
    // Few query rows against a long cache: small query tiles, long key
    // tiles; the parallelism comes from the splits.
    t = {16, 128};
  } else {
    // Without structural masks: about 256 score rows per tile (R query
    // heads share each K/V tile) so that the [R, Tq, Tk] score tile, the
    // accumulator and the K/V tiles stay in L2, and 128 keys per tile.
    // With causal or a window: square tiles (Tq = Tk), so that the diagonal
    // cuts one key tile per query tile and few masked pairs are computed;
    // 128, or 64 from R = 8 on.
    auto q = op.getQuery().getType();
    auto k = op.getKey().getType();
    int64_t hq = q.getDimSize(op.getPhysicalDim(1));
    int64_t hkv = k.getDimSize(op.getPhysicalDim(1));
    int64_t group = 1;
    if (!ShapedType::isDynamic(hq) && !ShapedType::isDynamic(hkv) && hkv > 0)
      group = std::max<int64_t>(hq / hkv, 1);
    bool banded = op.getCausal() || op.getEffectiveWindowLeft() ||
                  op.getEffectiveWindowRight();
    int64_t rows = std::clamp<int64_t>(256 / group, 32, 256);
    int64_t keys = 128;
    if (banded)
      rows = keys = std::clamp<int64_t>(512 / group, 64, 128);
    // Keep enough parallel iterations (batch x K/V heads x query tiles) for
    // the cores when the sizes are known.
    int64_t batch = q.getDimSize(op.getPhysicalDim(0));
    int64_t nq = q.getDimSize(op.getPhysicalDim(2));
    if (!ShapedType::isDynamic(batch) && !ShapedType::isDynamic(hkv) &&
        !ShapedType::isDynamic(nq)) {
      // Saturating: static sizes may be as large as INT64_MAX.
      auto iterations = [&](int64_t tq) {
        uint64_t n = llvm::SaturatingMultiply<uint64_t>(batch, hkv);
        return llvm::SaturatingMultiply<uint64_t>(n, llvm::divideCeil(nq, tq));
      };
      while (rows > 32 && iterations(rows) < 16)
        rows /= 2;
    }
    t = {rows, keys};
  }
  if (tileQ > 0)
    t.q = tileQ;
  if (tileK > 0)
    t.k = tileK;
  return t;
}
