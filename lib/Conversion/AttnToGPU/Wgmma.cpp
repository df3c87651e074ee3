//===- Wgmma.cpp - S = Q K^T on Hopper's warpgroup MMA --------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// The sm_90a pieces of the attention kernel (--gpu-wgmma): S = Q K^T for
// the warpgroup's 64 rows as nvvm.wgmma.mma_async m64nNk16 over Q and K
// tiles staged in 128-byte swizzled shared memory (TileCopy.cpp), the
// accumulators handed back as the mma.sync C tiles the softmax reads
// (KernelBuilder.cpp).
//
//===----------------------------------------------------------------------===//

#include "KernelEmitter.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::gpu_codegen;
using namespace mlir::attn::gpu_codegen::detail;

void KernelEmitter::emitWgmmaQK(MutableArrayRef<Value> s, Value smemAddr,
                                Value kTileOff, int64_t qBlockBytes,
                                int64_t kBlockBytes) {
  MLIRContext *ctx = b.getContext();
  Type i64 = b.getI64Type();
  auto c64 = [&](int64_t v) {
    return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v));
  };
  // A K-major, 128-byte swizzled operand's descriptor (PTX ISA, "Matrix
  // Descriptor Format"): bits 0-13 the address >> 4, 16-29 LBO >> 4 (16,
  // unused by swizzled K-major layouts), 32-45 SBO >> 4 (1024: the next 8
  // rows), 62-63 the layout (1: 128-byte swizzle).
  Value fields =
      c64((int64_t(1) << 16) | (int64_t(1024 >> 4) << 32) | (int64_t(1) << 62));
  auto descriptor = [&](Value addr) {
    Value x = arith::IndexCastOp::create(b, loc, i64, addr);
    x = arith::ShRUIOp::create(b, loc, x, c64(4));
    x = arith::AndIOp::create(b, loc, x, c64(0x3FFF));
    return arith::OrIOp::create(b, loc, x, fields).getResult();
  };
  auto structType =
      LLVM::LLVMStructType::getLiteral(ctx, SmallVector<Type>(tk / 2, f32));
  auto type = elem.isBF16() ? NVVM::WGMMATypes::bf16 : NVVM::WGMMATypes::f16;
  Value acc = LLVM::ZeroOp::create(b, loc, structType);
  Value kAddr = a.add(smemAddr, kTileOff);
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  // 16 dims a step: the step's 32 bytes in its 64-column block.
  for (int64_t st = 0; st < d / 16; ++st) {
    int64_t at = (st / 4), in = (st % 4) * 32;
    Value da = descriptor(a.add(smemAddr, ci(at * qBlockBytes + in)));
    Value db = descriptor(a.add(kAddr, ci(at * kBlockBytes + in)));
    acc = NVVM::WgmmaMmaAsyncOp::create(
        b, loc, structType, acc, da, db,
        NVVM::MMAShapeAttr::get(ctx, 64, tk, 16), type, type,
        NVVM::WGMMATypes::f32,
        st == 0 ? NVVM::WGMMAScaleOut::zero : NVVM::WGMMAScaleOut::one,
        NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one, NVVM::MMALayout::row,
        NVVM::MMALayout::col, NVVM::MMAIntOverflowAttr());
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
  // Register e of the m64nNk16 accumulator is element (l/4 + 8 ((e%4)/2),
  // 8 (e/4) + 2 (l%4) + e%2) of the warp's 16 rows: registers 4n .. 4n+3
  // are the mma.sync C tile n, [r][c] row-major.
  auto cType = VectorType::get({2, 2}, f32);
  for (int64_t n = 0; n < tk / 8; ++n) {
    SmallVector<Value, 4> e;
    for (int64_t j = 0; j < 4; ++j)
      e.push_back(LLVM::ExtractValueOp::create(b, loc, acc, 4 * n + j));
    s[n] = vector::FromElementsOp::create(b, loc, cType, e);
  }
}
