//===- Bf16MmaSync.cpp - bf16 nvgpu.mma.sync to nvvm.mma.sync -------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// MLIR 22's convert-nvgpu-to-nvvm lowers f16 nvgpu.mma.sync but rejects bf16
// ("failed to deduce operand PTX types"): nvvm.mma.sync takes bf16 pairs as
// i32 registers with the PTX type stated. This rewrite does exactly that,
// keeping the fragment layout (each row of the nvgpu vector is one
// register), so the kernel builder and the emulator see one op for both
// types.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNLOWERBF16MMASYNC
#include "attn/Conversion/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

namespace {

struct LowerBf16MmaSync : public OpRewritePattern<nvgpu::MmaSyncOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(nvgpu::MmaSyncOp op,
                                PatternRewriter &rewriter) const override {
    auto aType = cast<VectorType>(op.getMatrixA().getType());
    auto cType = cast<VectorType>(op.getMatrixC().getType());
    if (!aType.getElementType().isBF16() || !cType.getElementType().isF32())
      return rewriter.notifyMatchFailure(op, "not bf16 x bf16 -> f32");
    SmallVector<int64_t> shape =
        llvm::to_vector(llvm::map_range(op.getMmaShape(), [](Attribute a) {
          return cast<IntegerAttr>(a).getInt();
        }));
    if (shape != SmallVector<int64_t>{16, 8, 16})
      return rewriter.notifyMatchFailure(op, "not m16n8k16");
    Location loc = op.getLoc();
    Type i32 = rewriter.getI32Type();
    Type f32 = rewriter.getF32Type();
    // One i32 register per row of a bf16 fragment.
    auto registers = [&](Value frag) {
      auto type = cast<VectorType>(frag.getType());
      SmallVector<Value> regs;
      for (int64_t r = 0; r < type.getDimSize(0); ++r) {
        Value pair = vector::ExtractOp::create(rewriter, loc, frag, r);
        Value word = vector::BitCastOp::create(rewriter, loc,
                                               VectorType::get({1}, i32), pair);
        regs.push_back(vector::ExtractOp::create(rewriter, loc, word, 0));
      }
      return regs;
    };
    SmallVector<Value> a = registers(op.getMatrixA());
    SmallVector<Value> b = registers(op.getMatrixB());
    SmallVector<Value> c;
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t col = 0; col < 2; ++col)
        c.push_back(vector::ExtractOp::create(rewriter, loc, op.getMatrixC(),
                                              ArrayRef<int64_t>{r, col}));
    auto structType = LLVM::LLVMStructType::getLiteral(
        rewriter.getContext(), SmallVector<Type>(4, f32));
    Value d = NVVM::MmaOp::create(
        rewriter, loc, structType, a, b, c, shape, std::nullopt, std::nullopt,
        std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16,
                                      NVVM::MMATypes::bf16},
        std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                       NVVM::MMALayout::col});
    SmallVector<Value> elems;
    for (int64_t i = 0; i < 4; ++i)
      elems.push_back(LLVM::ExtractValueOp::create(rewriter, loc, d, i));
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(op, cType, elems);
    return success();
  }
};

struct AttnLowerBf16MmaSyncPass
    : public attn::impl::AttnLowerBf16MmaSyncBase<AttnLowerBf16MmaSyncPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<LowerBf16MmaSync>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
