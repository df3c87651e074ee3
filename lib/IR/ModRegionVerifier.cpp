//===- ModRegionVerifier.cpp - verifier of score/mask regions -------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// The checks of one user region (score_mod or mask_mod) of attn.attention and
// attn.projected_attention: block arguments, allowed ops, terminator.
//
//===----------------------------------------------------------------------===//

#include "ModRegionVerifier.h"

#include "attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace mlir::attn;

static constexpr int64_t kDyn = ShapedType::kDynamic;

LogicalResult mlir::attn::detail::verifyModRegion(Operation *op, Region &region,
                                                  StringRef name, bool isScore,
                                                  ValueRange modInputs) {
  if (region.empty())
    return success();
  Block &block = region.front();
  MLIRContext *ctx = op->getContext();
  SmallVector<Type> expected(4, IndexType::get(ctx));
  if (isScore)
    expected.push_back(Float32Type::get(ctx));
  llvm::append_range(expected, modInputs.getTypes());
  auto fmtTypes = [](TypeRange types) {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << "(";
    llvm::interleaveComma(types, os);
    os << ")";
    return s;
  };
  // The tensors may be more static on one side than on the other (a spec
  // specialized to concrete sizes keeps its regions).
  auto compatibleArgs = [&] {
    if (block.getNumArguments() != expected.size())
      return false;
    for (auto [got, want] : llvm::zip(block.getArgumentTypes(), expected)) {
      if (got == want)
        continue;
      // A dimension static in the region must be static (and the same) in
      // the operand: the region may be less static than the tensor it
      // reads (sizes specialized at run time), never more.
      auto g = dyn_cast<RankedTensorType>(got);
      auto w = dyn_cast<RankedTensorType>(want);
      if (!g || !w || g.getElementType() != w.getElementType() ||
          g.getRank() != w.getRank())
        return false;
      for (auto [gd, wd] : llvm::zip(g.getShape(), w.getShape()))
        if (gd != ShapedType::kDynamic && gd != wd)
          return false;
    }
    return true;
  };
  if (!compatibleArgs())
    return op->emitOpError()
           << name << " must have block arguments (b, h, i, j : index"
           << (isScore ? ", s : f32" : "")
           << (modInputs.empty() ? "" : ", then one per mod_inputs tensor")
           << ") = " << fmtTypes(expected) << "; got "
           << fmtTypes(block.getArgumentTypes());
  for (Operation &inner : block) {
    if (auto dim = dyn_cast<tensor::DimOp>(inner);
        dim && !dim.getConstantIndex())
      return op->emitOpError()
             << name << ": tensor.dim needs a constant dimension index";
    StringRef ns = inner.getDialect() ? inner.getDialect()->getNamespace() : "";
    bool allowed = ns == "arith" || ns == "math" ||
                   isa<tensor::ExtractOp, tensor::DimOp, YieldOp>(inner);
    if (!allowed || inner.getNumRegions() != 0) {
      InFlightDiagnostic diag =
          op->emitOpError()
          << name << " may contain only arith and math ops, tensor.extract "
          << "and tensor.dim; got '" << inner.getName() << "'";
      diag.attachNote(inner.getLoc()) << "this op";
      return diag;
    }
  }
  auto yield = block.empty() ? YieldOp() : dyn_cast<YieldOp>(block.back());
  if (!yield)
    return op->emitOpError() << name << " must end with attn.yield";
  Type want = isScore ? Type(Float32Type::get(ctx)) : IntegerType::get(ctx, 1);
  if (yield.getValue().getType() != want)
    return op->emitOpError() << name << " must yield "
                             << (isScore ? "the new logit (f32)"
                                         : "whether the key may be "
                                           "read (i1)")
                             << "; got " << yield.getValue().getType();
  return success();
}
