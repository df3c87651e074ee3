//===- Passes.cpp - fused and split-KV lowering passes --------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "FusedLowering.h"

#include "attn/Conversion/RaggedAttention.h"
#include "attn/Conversion/RuntimeChecks.h"
#include "attn/Schedule/LoweringChoice.h"

#include "attn/Conversion/Passes.h"
#include "attn/IR/AttnBuilders.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
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

/// What one run of the fused or split-KV lowering needs: tile overrides,
/// the decode form's splits, instrumentation and the target description.
struct FusedOptions {
  int64_t tileQ = 0, tileK = 0, splits = 0;
  bool instrument = false;
  Bf16DotProducts bf16DotProducts = Bf16DotProducts::Auto;
  CpuTarget target;
};

struct LowerAttentionFused : public OpRewritePattern<AttentionOp> {
  LowerAttentionFused(MLIRContext *ctx, const FusedOptions &opts)
      : OpRewritePattern(ctx), opts(opts) {}

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    // An op attn-select-form meant for the other form is left to it.
    StringRef form = opts.splits != 0 ? "decode" : "fused";
    auto mark = op->getAttrOfType<DictionaryAttr>(kFormAttr);
    auto markedForm = mark ? mark.getAs<StringAttr>("form") : StringAttr();
    if (markedForm && markedForm.getValue() != form)
      return rewriter.notifyMatchFailure(op, "meant for another form");
    // The work runs only when every run-time check passed.
    if (op.isRagged())
      emitRaggedChecks(rewriter, op.getLoc(), op);
    else
      emitRuntimeShapeChecks(rewriter, op.getLoc(), op);
    SmallVector<Value> results = buildGuardedOrZeros(
        rewriter, op.getLoc(), op, [&](OpBuilder &, Location) {
          TileSizes tiles = chooseTileSizes(op, opts.target, opts.splits != 0,
                                            opts.tileQ, opts.tileK);
          ScheduleSpec schedule = ScheduleSpec::forOp(op, tiles, opts.splits);
          VectorShape shape =
              VectorShape::forTarget(opts.target, opts.bf16DotProducts);
          LoweringChoice choice;
          choice.form = form.str();
          if (mark) {
            if (auto lo = mark.getAs<IntegerAttr>("min_queries"))
              choice.minQueries = lo.getInt();
            if (auto hi = mark.getAs<IntegerAttr>("max_queries"))
              choice.maxQueries = hi.getInt();
          }
          choice.tileQ = tiles.q;
          choice.tileK = tiles.k;
          choice.splits = opts.splits;
          choice.registerRows = shape.mr;
          choice.registerCols = shape.nw;
          choice.vectorBits = shape.lanes * 32;
          // Ragged batches: one work list over the sequences' tiles. The
          // choice is recorded once the lowering knows its bf16 products
          // (the op is replaced only after this function returns).
          if (op.isRagged()) {
            SmallVector<Value> results =
                buildRaggedWorkList(rewriter, op, schedule, shape,
                                    opts.instrument, choice.bf16Products);
            recordLoweringChoice(op, choice);
            return results;
          }
          FusedLowering lowering(op, rewriter, schedule, shape,
                                 opts.instrument);
          choice.bf16Products = lowering.bf16Products();
          recordLoweringChoice(op, choice);
          return opts.splits != 0 ? lowering.buildSplitKv(rewriter, op.getLoc())
                                  : lowering.buildFused(rewriter, op.getLoc());
        });
    rewriter.replaceOp(op, results);
    return success();
  }

  FusedOptions opts;
};

static LogicalResult runFused(Operation *root, int64_t tq, int64_t tk,
                              bool instrument, int64_t splits,
                              StringRef targetCpu, StringRef targetFeatures,
                              StringRef targetTriple,
                              Bf16DotProducts bf16DotProducts) {
  if (tq < 0 || tk < 0)
    return root->emitError("attn: tile sizes must be positive (or 0 for the "
                           "default); got tile-q = ")
           << tq << ", tile-k = " << tk;
  auto target = resolveCpuTarget(targetCpu, targetFeatures, targetTriple);
  if (!target)
    return root->emitError("attn: ") << llvm::toString(target.takeError());
  if (instrument) {
    auto module = dyn_cast<ModuleOp>(root);
    if (!module)
      module = root->getParentOfType<ModuleOp>();
    if (!module)
      return root->emitError("attn: instrumentation needs a module");
    declareTileVisit(module);
  }
  FusedOptions opts;
  opts.tileQ = tq;
  opts.tileK = tk;
  opts.splits = splits;
  opts.instrument = instrument;
  opts.bf16DotProducts = bf16DotProducts;
  opts.target = *target;
  // Key padding (kv_start, key_mask) becomes bounds of the mask region (the
  // forms' tiles come from it); the mask regions are classified in their
  // canonical form, the one the host's tile map classifies too.
  root->walk([](AttentionOp op) {
    expandKeyPadding(op);
    canonicalizeModRegions(op);
  });
  RewritePatternSet patterns(root->getContext());
  patterns.add<LowerAttentionFused>(root->getContext(), opts);
  return applyPatternsGreedily(root, std::move(patterns));
}

struct ConvertAttnToFusedLoopsPass
    : public attn::impl::ConvertAttnToFusedLoopsBase<
          ConvertAttnToFusedLoopsPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(runFused(getOperation(), tileQ, tileK, instrumentTiles, 0,
                        targetCpu, targetFeatures, targetTriple,
                        bf16DotProducts)))
      signalPassFailure();
  }
};

struct ConvertAttnToSplitKvPass
    : public attn::impl::ConvertAttnToSplitKvBase<ConvertAttnToSplitKvPass> {
  using Base::Base;
  void runOnOperation() override {
    if (splits == 0 || splits < -1) {
      getOperation()->emitError(
          "attn: splits must be positive, or -1 (chosen at run time); got ")
          << static_cast<int64_t>(splits);
      return signalPassFailure();
    }
    if (failed(runFused(getOperation(), tileQ, tileK, instrumentTiles, splits,
                        targetCpu, targetFeatures, targetTriple,
                        bf16DotProducts)))
      signalPassFailure();
  }
};

} // namespace
