//===- GemmKernel.cpp - the tensor-core GEMM of the projections ----------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// C[M, N] = A[M, K] B[K, N], all row-major, for the projections of
// attn.projected_attention on the GPU (ProjectedHost.cpp):
//
//   grid  = (ceil(M / TM), ceil(N / 64)), block = 32 * W threads, TM = 16 W
//   for each step of 32 along K:
//     A [TM][32] and B [32][64] -> shared (cp.async, zero-filled past M, N
//     and K), barrier
//     two m16n8k16 steps: A by ldmatrix x4, B by ldmatrix.trans x4 (as V in
//     the attention kernel's P V), f32 accumulators, barrier
//   C = the accumulators rounded to C's type, stored where in range
//
// The same emitter, fragment layouts and copies as the attention kernel
// (KernelBuilder.cpp); f32 operands are staged as bf16 like its inputs.
//
//===----------------------------------------------------------------------===//

#include "KernelEmitter.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::gpu_codegen;
using namespace mlir::attn::gpu_codegen::detail;

int64_t KernelEmitter::gemmSharedBytes() {
  int64_t tm = 16 * warps;
  return (stagedRows(tm, kGemmTileK) * (kGemmTileK + kPad) +
          stagedRows(kGemmTileK, kGemmTileN) * (kGemmTileN + kPad)) *
         (elem.getIntOrFloatBitWidth() / 8);
}

void KernelEmitter::emitGemm(gpu::LaunchOp launch, Value lhs, Value rhs,
                             Value result, Value m, Value n, Value kDim) {
  MLIRContext *ctx = b.getContext();
  int64_t tm = 16 * warps;
  Value m0 = a.mul(launch.getBlockIds().x, ci(tm));
  Value n0 = a.mul(launch.getBlockIds().y, ci(kGemmTileN));
  Value tid = launch.getThreadIds().x;
  Value warp = divu(tid, ci(kLanes));
  Value lane = remu(tid, ci(kLanes));

  // Shared memory: A [TM][32+8], B [32][64+8].
  auto wg = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  auto raw = gpu::DynamicSharedMemoryOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                      MemRefLayoutAttrInterface{}, wg));
  int64_t aRows = stagedRows(tm, kGemmTileK);
  int64_t bRows = stagedRows(kGemmTileK, kGemmTileN);
  auto aType = MemRefType::get({aRows, kGemmTileK + kPad}, elem,
                               MemRefLayoutAttrInterface{}, wg);
  auto bType = MemRefType::get({bRows, kGemmTileN + kPad}, elem,
                               MemRefLayoutAttrInterface{}, wg);
  Value as = memref::ViewOp::create(b, loc, aType, raw, ci(0), ValueRange{});
  int64_t bOff =
      aRows * (kGemmTileK + kPad) * (elem.getIntOrFloatBitWidth() / 8);
  Value bs = memref::ViewOp::create(b, loc, bType, raw, ci(bOff), ValueRange{});

  auto fragType = VectorType::get({4, 2}, elem);
  auto cType = VectorType::get({2, 2}, f32);
  Value zeroC = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(cType, b.getF32FloatAttr(0.0)));
  constexpr int64_t nTiles = kGemmTileN / 8;
  SmallVector<Value> init(nTiles, zeroC);
  Value mLast = a.max(a.sub(m, ci(1)), ci(0));
  Value kLast = a.max(a.sub(kDim, ci(1)), ci(0));
  Value wrow = a.mul(warp, ci(16));
  auto loop = scf::ForOp::create(b, loc, ci(0), kDim, ci(kGemmTileK), init);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    Value k0 = loop.getInductionVar();
    SmallVector<Value> tokens;
    emitTileCopy(
        as, {}, TileLayout::Padded, tm, kGemmTileK, lhs,
        [&](Value r) {
          Value row = a.add(m0, r);
          return std::make_pair(SmallVector<Value>{a.min(row, mLast), k0},
                                a.slt(row, m));
        },
        tokens, kDim);
    emitTileCopy(
        bs, {}, TileLayout::Padded, kGemmTileK, kGemmTileN, rhs,
        [&](Value r) {
          Value row = a.add(k0, r);
          return std::make_pair(SmallVector<Value>{a.min(row, kLast), n0},
                                a.slt(row, kDim));
        },
        tokens, n);
    waitForCopies(tokens, 0);
    gpu::BarrierOp::create(b, loc);
    SmallVector<Value> acc(loop.getRegionIterArgs());
    for (int64_t kk = 0; kk < kGemmTileK / 16; ++kk) {
      Value ar = a.add(wrow, remu(lane, ci(16)));
      Value ac = a.add(ci(kk * 16), a.mul(divu(lane, ci(16)), ci(8)));
      Value aFrag = nvgpu::LdMatrixOp::create(b, loc, fragType, as,
                                              ValueRange{ar, ac}, false, 4);
      for (int64_t nd = 0; nd < nTiles; nd += 2) {
        // x4 transposed: the B fragments of two 8-column blocks (lanes
        // 16..31 address the second).
        Value br = a.add(ci(kk * 16), remu(lane, ci(16)));
        Value bc = a.add(ci(nd * 8), a.mul(divu(lane, ci(16)), ci(8)));
        Value both = nvgpu::LdMatrixOp::create(b, loc, fragType, bs,
                                               ValueRange{br, bc}, true, 4);
        for (int64_t h = 0; h < 2; ++h)
          acc[nd + h] = nvgpu::MmaSyncOp::create(b, loc, aFrag, halfOf(both, h),
                                                 acc[nd + h],
                                                 ArrayRef<int64_t>{16, 8, 16});
      }
    }
    gpu::BarrierOp::create(b, loc);
    scf::YieldOp::create(b, loc, acc);
  }

  // Lane l holds rows l/4 + 8 r and columns 2 (l%4) + c of each 16 x 8 tile.
  Type outElem = cast<MemRefType>(result.getType()).getElementType();
  Value quad = divu(lane, ci(4));
  Value pair = a.mul(remu(lane, ci(4)), ci(2));
  for (int64_t nd = 0; nd < nTiles; ++nd)
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t c = 0; c < 2; ++c) {
        Value row = a.add(a.add(m0, wrow), a.add(quad, ci(8 * r)));
        Value col = a.add(a.add(n0, ci(nd * 8 + c)), pair);
        Value val = vector::ExtractOp::create(b, loc, loop.getResult(nd),
                                              ArrayRef<int64_t>{r, c});
        if (outElem != f32)
          val = arith::TruncFOp::create(b, loc, outElem, val);
        auto store = scf::IfOp::create(
            b, loc, a.both(a.slt(row, m), a.slt(col, n)), false);
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPointToStart(&store.getThenRegion().front());
        memref::StoreOp::create(b, loc, val, result, ValueRange{row, col});
      }
}
