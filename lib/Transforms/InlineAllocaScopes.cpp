//===- InlineAllocaScopes.cpp - drop alloca scopes without allocas --------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNINLINEALLOCASCOPES
#include "attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

namespace {
struct AttnInlineAllocaScopesPass
    : public attn::impl::AttnInlineAllocaScopesBase<
          AttnInlineAllocaScopesPass> {
  void runOnOperation() override {
    SmallVector<memref::AllocaScopeOp> scopes;
    getOperation()->walk([&](memref::AllocaScopeOp scope) {
      bool hasAlloca =
          scope->walk([](memref::AllocaOp) { return WalkResult::interrupt(); })
              .wasInterrupted();
      if (!hasAlloca && scope.getBodyRegion().hasOneBlock())
        scopes.push_back(scope);
    });
    IRRewriter rewriter(&getContext());
    for (memref::AllocaScopeOp scope : scopes) {
      Block &body = scope.getBodyRegion().front();
      auto ret = cast<memref::AllocaScopeReturnOp>(body.getTerminator());
      SmallVector<Value> results(ret.getResults());
      rewriter.eraseOp(ret);
      rewriter.inlineBlockBefore(&body, scope);
      rewriter.replaceOp(scope, results);
    }
  }
};
} // namespace
