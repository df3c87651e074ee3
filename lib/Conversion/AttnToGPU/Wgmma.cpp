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
// (KernelBuilder.cpp); and O += P V as m64nDvk16 with P stored to shared
// memory in the same swizzle and V read transposed (MN-major) from its
// swizzled tile, O's accumulator registers being its mma.sync C tiles.
//
//===----------------------------------------------------------------------===//

#include "KernelEmitter.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::gpu_codegen;
using namespace mlir::attn::gpu_codegen::detail;

/// A 128-byte swizzled operand's matrix descriptor (PTX ISA, "Matrix
/// Descriptor Format"): bits 0-13 the shared address >> 4, 16-29 LBO >> 4,
/// 32-45 SBO >> 4, 62-63 the layout (1: 128-byte swizzle). K-major: LBO
/// unused (16), SBO 1024 (the next 8 rows); MN-major: LBO the distance of
/// the 64-element column blocks along M / N, SBO 1024 (the next 8 rows of
/// K).
static Value swizzledDescriptor(OpBuilder &b, Location loc, Value addr,
                                int64_t lbo, int64_t sbo) {
  Type i64 = b.getI64Type();
  auto c64 = [&](int64_t v) {
    return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v));
  };
  Value x = arith::IndexCastOp::create(b, loc, i64, addr);
  x = arith::ShRUIOp::create(b, loc, x, c64(4));
  x = arith::AndIOp::create(b, loc, x, c64(0x3FFF));
  return arith::OrIOp::create(
             b, loc, x,
             c64(((lbo >> 4) << 16) | ((sbo >> 4) << 32) | (int64_t(1) << 62)))
      .getResult();
}

/// One warpgroup GEMM: wgmma.fence, `steps` m64nNk16 (the A and B
/// descriptors of step st from `descriptors`; layout B `col` is K-major,
/// `row` MN-major), commit and wait 0. The accumulator `acc` is read by the
/// first step unless `zeroFirst`.
static Value
runWgmma(OpBuilder &b, Location loc, Value acc, int64_t n, int64_t steps,
         NVVM::WGMMATypes type, NVVM::MMALayout layoutB, bool zeroFirst,
         function_ref<std::pair<Value, Value>(int64_t)> descriptors) {
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  for (int64_t st = 0; st < steps; ++st) {
    auto [da, db] = descriptors(st);
    acc = NVVM::WgmmaMmaAsyncOp::create(
        b, loc, acc.getType(), acc, da, db,
        NVVM::MMAShapeAttr::get(b.getContext(), 64, n, 16), type, type,
        NVVM::WGMMATypes::f32,
        st == 0 && zeroFirst ? NVVM::WGMMAScaleOut::zero
                             : NVVM::WGMMAScaleOut::one,
        NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one, NVVM::MMALayout::row,
        layoutB, NVVM::MMAIntOverflowAttr());
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
  return acc;
}

/// Register e of an m64nNk16 accumulator is element (l/4 + 8 ((e%4)/2),
/// 8 (e/4) + 2 (l%4) + e%2) of the warp's 16 rows: registers 4t .. 4t+3 are
/// the mma.sync C tile t, [r][c] row-major. The tiles of `acc`, into
/// `tiles`.
static void accumulatorToTiles(OpBuilder &b, Location loc, Value acc,
                               MutableArrayRef<Value> tiles) {
  auto cType = VectorType::get({2, 2}, b.getF32Type());
  for (auto [t, tile] : llvm::enumerate(tiles)) {
    SmallVector<Value, 4> e;
    for (int64_t j = 0; j < 4; ++j)
      e.push_back(LLVM::ExtractValueOp::create(b, loc, acc, 4 * t + j));
    tile = vector::FromElementsOp::create(b, loc, cType, e);
  }
}

void KernelEmitter::emitWgmmaQK(MutableArrayRef<Value> s, Value smemAddr,
                                Value kTileOff, int64_t qBlockBytes,
                                int64_t kBlockBytes) {
  MLIRContext *ctx = b.getContext();
  auto descriptor = [&](Value addr) {
    return swizzledDescriptor(b, loc, addr, 16, 1024);
  };
  auto structType =
      LLVM::LLVMStructType::getLiteral(ctx, SmallVector<Type>(tk / 2, f32));
  auto type = elem.isBF16() ? NVVM::WGMMATypes::bf16 : NVVM::WGMMATypes::f16;
  Value kAddr = a.add(smemAddr, kTileOff);
  // 16 dims a step: the step's 32 bytes in its 64-column block.
  Value acc =
      runWgmma(b, loc, LLVM::ZeroOp::create(b, loc, structType), tk, d / 16,
               type, NVVM::MMALayout::col, /*zeroFirst=*/true, [&](int64_t st) {
                 int64_t at = (st / 4), in = (st % 4) * 32;
                 return std::make_pair(
                     descriptor(a.add(smemAddr, ci(at * qBlockBytes + in))),
                     descriptor(a.add(kAddr, ci(at * kBlockBytes + in))));
               });
  accumulatorToTiles(b, loc, acc, s.take_front(tk / 8));
}

void KernelEmitter::emitWgmmaPV(MutableArrayRef<Value> o, ArrayRef<Value> p,
                                Value pView, Value pAddr, Value vAddr,
                                int64_t pBlockBytes, int64_t vBlockBytes) {
  MLIRContext *ctx = b.getContext();
  // P into shared memory: element (r, c) of the warp's C tile n is row
  // 16 w + l/4 + 8 r, key 8 n + 2 (l%4) + c; in the swizzled tile
  // [tk / 64][64][64] the key's 16-byte chunk n % 8 of the row moves to
  // (n % 8) ^ (row % 8), and row % 8 = l / 4.
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value lane = remu(tid, ci(kLanes)), warp = divu(tid, ci(kLanes));
  Value quad = divu(lane, ci(4));
  Value pair = a.mul(remu(lane, ci(4)), ci(2));
  auto half2 = VectorType::get({2}, elem);
  for (int64_t n = 0; n < tk / 8; ++n) {
    Value chunk = arith::XOrIOp::create(b, loc, ci(n % 8), quad);
    Value col = a.add(a.mul(chunk, ci(8)), pair);
    for (int64_t r = 0; r < 2; ++r) {
      Value row = a.add(a.mul(warp, ci(16)), a.add(quad, ci(8 * r)));
      Value x = vector::ExtractOp::create(b, loc, p[n], ArrayRef<int64_t>{r});
      x = arith::TruncFOp::create(b, loc, half2, x);
      vector::StoreOp::create(b, loc, x, pView,
                              ValueRange{ci(n / 8), row, col});
    }
  }
  // Every thread's stores, generic proxy, become visible to wgmma (async
  // proxy) before the barrier after which the warpgroup reads them.
  fenceForAsyncProxy();
  gpu::BarrierOp::create(b, loc);

  // O's accumulator: registers 4n .. 4n+3 are the mma.sync C tile n.
  auto structType =
      LLVM::LLVMStructType::getLiteral(ctx, SmallVector<Type>(dv / 2, f32));
  Value acc = LLVM::UndefOp::create(b, loc, structType);
  for (int64_t n = 0; n < dv / 8; ++n)
    for (int64_t j = 0; j < 4; ++j) {
      Value e = vector::ExtractOp::create(b, loc, o[n],
                                          ArrayRef<int64_t>{j / 2, j % 2});
      acc = LLVM::InsertValueOp::create(b, loc, acc, e, 4 * n + j);
    }
  auto type = elem.isBF16() ? NVVM::WGMMATypes::bf16 : NVVM::WGMMATypes::f16;
  // 16 keys a step: P's 32 bytes in its 64-key block (K-major), V's 16 rows
  // of 128 bytes (MN-major: Dv in 64-column blocks vBlockBytes apart).
  acc =
      runWgmma(b, loc, acc, dv, tk / 16, type, NVVM::MMALayout::row,
               /*zeroFirst=*/false, [&](int64_t st) {
                 return std::make_pair(
                     swizzledDescriptor(b, loc,
                                        a.add(pAddr, ci((st / 4) * pBlockBytes +
                                                        (st % 4) * 32)),
                                        16, 1024),
                     swizzledDescriptor(b, loc, a.add(vAddr, ci(st * 16 * 128)),
                                        vBlockBytes, 1024));
               });
  accumulatorToTiles(b, loc, acc, o.take_front(dv / 8));
}
