//===- ApproximateMath.cpp - polynomial exp/log/tanh ----------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Transforms/Passes.h"

#include "mlir/Dialect/Math/Transforms/Approximation.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNAPPROXIMATEMATH
#include "attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

namespace {
struct AttnApproximateMathPass
    : public attn::impl::AttnApproximateMathBase<AttnApproximateMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    auto wanted = [](StringRef name) {
      return name == math::ExpOp::getOperationName() ||
             name == math::LogOp::getOperationName() ||
             name == math::TanhOp::getOperationName();
    };
    populateMathPolynomialApproximationPatterns(patterns, wanted);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
