//===- ExpandKeyPadding.cpp - key padding as mask region bounds -----------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// `kv_start(%first)` (each batch entry's first valid key) and `key_mask(%m)`
// (a [B, Nk] key-padding mask) become the bounds `j >= first[b]` and
// `m[b, j]` of the op's mask_mod region, which every form and target
// classifies per tile: tiles before the start or wholly padding are skipped,
// wholly real ones need no mask arithmetic. The lowerings call the same
// rewrite themselves (expandKeyPadding); this pass shows it on its own.
//
//===----------------------------------------------------------------------===//

#include "attn/IR/AttnBuilders.h"
#include "attn/IR/AttnOps.h"
#include "attn/Transforms/Passes.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNEXPANDKEYPADDING
#include "attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

namespace {
struct AttnExpandKeyPadding
    : public attn::impl::AttnExpandKeyPaddingBase<AttnExpandKeyPadding> {
  void runOnOperation() override {
    getOperation()->walk([](Operation *op) { expandKeyPadding(op); });
  }
};
} // namespace
