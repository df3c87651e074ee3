//===- SelectForm.cpp - the form per call: fused or split-KV --------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// The CPU pipeline's form `auto`: each attention op takes the split-KV form
// when its query length is at most `max-decode-queries`, the fused form
// otherwise. A static query length decides at compile time; a dynamic one
// versions the op (scf.if on the query's length over two marked copies), so
// one entry function serves prefill and decode. The lowerings read the mark
// (kFormAttr) and lower only the ops meant for them.
//
//===----------------------------------------------------------------------===//

#include "attn/IR/AttnOps.h"
#include "attn/Schedule/LoweringChoice.h"
#include "attn/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNSELECTFORM
#include "attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

/// Marks `op` with `form` and the query lengths it runs for (a bound of -1
/// is left out).
static void markForm(Operation *op, StringRef form, int64_t minQueries,
                     int64_t maxQueries) {
  Builder b(op->getContext());
  SmallVector<NamedAttribute> fields = {
      b.getNamedAttr("form", b.getStringAttr(form))};
  if (minQueries >= 0)
    fields.push_back(
        b.getNamedAttr("min_queries", b.getI64IntegerAttr(minQueries)));
  if (maxQueries >= 0)
    fields.push_back(
        b.getNamedAttr("max_queries", b.getI64IntegerAttr(maxQueries)));
  op->setAttr(kFormAttr, b.getDictionaryAttr(fields));
}

/// Versions `op` on its dynamic query length: decode up to `maxDecode`
/// queries, fused beyond.
static void versionOnQueryLength(AttentionOp op, int64_t maxDecode) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value nq = tensor::DimOp::create(b, loc, op.getQuery(),
                                   op.getPhysicalDim(/*logical=*/2));
  Value limit = arith::ConstantIndexOp::create(b, loc, maxDecode);
  Value isShort =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, nq, limit);
  auto ifOp = scf::IfOp::create(b, loc, op->getResultTypes(), isShort,
                                /*withElseRegion=*/true);
  auto emitVersion = [&](Block *block, StringRef form, int64_t lo, int64_t hi) {
    OpBuilder inner = OpBuilder::atBlockBegin(block);
    Operation *copy = inner.clone(*op);
    markForm(copy, form, lo, hi);
    scf::YieldOp::create(inner, loc, copy->getResults());
  };
  // scf.if's builder with result types leaves both blocks empty.
  emitVersion(ifOp.thenBlock(), "decode", -1, maxDecode);
  emitVersion(ifOp.elseBlock(), "fused", maxDecode + 1, -1);
  op->replaceAllUsesWith(ifOp.getResults());
  op->erase();
}

namespace {
struct AttnSelectForm : public attn::impl::AttnSelectFormBase<AttnSelectForm> {
  using Base::Base;
  void runOnOperation() override {
    if (maxDecodeQueries < 0) {
      getOperation()->emitError(
          "attn: max-decode-queries must be 0 or more; got ")
          << static_cast<int64_t>(maxDecodeQueries);
      return signalPassFailure();
    }
    SmallVector<AttentionOp> ops;
    getOperation()->walk([&](AttentionOp op) {
      if (!op->hasAttr(kFormAttr))
        ops.push_back(op);
    });
    for (AttentionOp op : ops) {
      // Ragged batches' query lengths are per sequence: the fused form's
      // work list serves them.
      if (op.isRagged()) {
        markForm(op, "fused", -1, -1);
        continue;
      }
      int64_t nq = op.getQuerySeqLen();
      if (nq != ShapedType::kDynamic) {
        markForm(op, nq <= maxDecodeQueries ? "decode" : "fused", -1, -1);
        continue;
      }
      versionOnQueryLength(op, maxDecodeQueries);
    }
  }
};
} // namespace
