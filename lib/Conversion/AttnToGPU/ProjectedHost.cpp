//===- ProjectedHost.cpp - attn.projected_attention on the GPU -----------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// The GPU form of attn.projected_attention: the projections as tensor-core
// GEMMs (GemmKernel.cpp) feeding the attention kernel, in the order
// --attn-expand-projections states them:
//
//   Q = xq Wq, K = xkv Wk, V = xkv Wv      [B*N, D] x [D, H*Dh]: row-major
//                                          [B*N, H*Dh] is Q in the bnhd layout
//   Z = attention(Q, K, V), layout(bnhd)    the attention kernel (KernelHost)
//   result = Z Wo                           [B*Nq, Hq*Dv] x [Hq*Dv, D]
//
// Q, K, V and Z live in device buffers of the spec's element type that the
// host code allocates and frees in stream order; nothing is transposed.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "KernelEmitter.h"

#include "attn/Schedule/LoweringChoice.h"

#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::gpu_codegen;
using namespace mlir::attn::gpu_codegen::detail;

LogicalResult gpu_codegen::checkGpuProjectedSupported(
    func::FuncOp fn, ProjectedAttentionOp op, const GpuKernelOptions &opts) {
  auto fail = [&](const Twine &msg) {
    return op.emitOpError("cannot be lowered to the GPU: ") << msg;
  };
  if (failed(checkGpuFunctionShape(fn, op)))
    return failure();
  Type elem = cast<ShapedType>(op.getXq().getType()).getElementType();
  if (!elem.isF16() && !elem.isBF16() && !elem.isF32())
    return fail("x and the weights must be f16, bf16 or f32 (got ")
           << elem << ")";
  // The GEMMs stage 8-element chunks of rows: the model dimension and the
  // projected widths are static multiples of 8.
  for (Value w : {op.getWq(), op.getWk(), op.getWv(), op.getWo()})
    if (!cast<ShapedType>(w.getType()).hasStaticShape())
      return fail("the projection weights must have static shapes");
  for (Value x : {Value(op.getXq()), op.getKvSource()})
    if (cast<ShapedType>(x.getType()).isDynamicDim(2))
      return fail("the model dimension of x (and kv_source) must be static");
  for (Value w : {op.getWq(), op.getWk(), op.getWv(), op.getWo()}) {
    auto shape = cast<ShapedType>(w.getType()).getShape();
    if (shape[0] % 8 || shape[1] % 8)
      return fail("the projection weights' sizes must be multiples of 8 "
                  "(got ")
             << shape[0] << "x" << shape[1] << ")";
  }
  int64_t hq = op.getNumQueryHeads(), hkv = op.getNumKvHeads();
  int64_t dqk = cast<ShapedType>(op.getWq().getType()).getDimSize(1) / hq;
  int64_t dv = cast<ShapedType>(op.getWv().getType()).getDimSize(1) / hkv;
  for (int64_t x : {dqk, dv})
    if (x % 16 != 0 || x > 256 || x == 0)
      return fail("head dimensions must be multiples of 16 up to 256 (got "
                  "Dqk = ")
             << dqk << ", Dv = " << dv << ")";
  return checkGpuKernelOptions(op, opts);
}

LogicalResult gpu_codegen::buildGpuProjectedFunction(
    func::FuncOp fn, ProjectedAttentionOp pop, const GpuKernelOptions &opts) {
  Location loc = pop.getLoc();
  MLIRContext *ctx = fn.getContext();
  OpBuilder b(fn);

  // The attention the kernels compute: q, k, v in the bnhd layout, built in
  // a scratch function (erased below) whose arguments stand for them and
  // for the modifiers' operands.
  auto xqType = cast<RankedTensorType>(pop.getXq().getType());
  auto xkvType = cast<RankedTensorType>(pop.getKvSource().getType());
  int64_t hq = pop.getNumQueryHeads(), hkv = pop.getNumKvHeads();
  int64_t dqk = cast<ShapedType>(pop.getWq().getType()).getDimSize(1) / hq;
  int64_t dv = cast<ShapedType>(pop.getWv().getType()).getDimSize(1) / hkv;
  Type elt = xqType.getElementType();
  auto headsOf = [&](RankedTensorType x, int64_t h, int64_t d) {
    return RankedTensorType::get({x.getDimSize(0), x.getDimSize(1), h, d}, elt);
  };
  RankedTensorType qType = headsOf(xqType, hq, dqk),
                   kType = headsOf(xkvType, hkv, dqk),
                   vType = headsOf(xkvType, hkv, dv),
                   zType = headsOf(xqType, hq, dv);
  SmallVector<Value> modifiers;
  for (Value v : {pop.getKvLen(), pop.getKvStart(), pop.getKeyMask(),
                  pop.getMask(), pop.getBias(), pop.getAlibiSlopes(),
                  pop.getSink(), pop.getRuntimeScale()})
    if (v)
      modifiers.push_back(v);
  llvm::append_range(modifiers, pop.getModInputs());
  SmallVector<Type> scratchTypes = {qType, kType, vType};
  for (Value v : modifiers)
    scratchTypes.push_back(v.getType());
  auto scratch =
      func::FuncOp::create(b, loc, (fn.getName() + "__gpu_scratch").str(),
                           b.getFunctionType(scratchTypes, {zType}));
  Block *sblock = scratch.addEntryBlock();
  OpBuilder sb = OpBuilder::atBlockBegin(sblock);
  IRMapping modArgs;
  for (auto [i, v] : llvm::enumerate(modifiers))
    modArgs.map(v, sblock->getArgument(3 + i));
  auto mapped = [&](Value v) { return v ? modArgs.lookup(v) : Value(); };
  SmallVector<Value> modInputs;
  for (Value v : pop.getModInputs())
    modInputs.push_back(modArgs.lookup(v));
  auto att = AttentionOp::create(
      sb, loc, zType, /*lse=*/Type(), sblock->getArgument(0),
      sblock->getArgument(1), sblock->getArgument(2), /*page_table=*/Value(),
      /*cu_seqlens_q=*/Value(), /*cu_seqlens_k=*/Value(),
      /*k_scale=*/Value(), /*v_scale=*/Value(), mapped(pop.getKvLen()),
      mapped(pop.getKvStart()), mapped(pop.getKeyMask()), mapped(pop.getMask()),
      mapped(pop.getBias()), mapped(pop.getAlibiSlopes()),
      mapped(pop.getSink()), mapped(pop.getRuntimeScale()), modInputs,
      LayoutAttr::get(ctx, Layout::bnhd),
      /*v_from_k=*/IntegerAttr(), pop.getCausalAttr(), pop.getAlignAttr(),
      pop.getWindowLeftAttr(), pop.getWindowRightAttr(), pop.getScaleAttr(),
      pop.getSoftcapAttr(), pop.getNormalizationAttr());
  IRMapping regions;
  pop.getScoreMod().cloneInto(&att.getScoreMod(), regions);
  pop.getMaskMod().cloneInto(&att.getMaskMod(), regions);
  func::ReturnOp::create(sb, loc, att.getOut());
  canonicalizeModRegions(att);

  // The host function: memref arguments (inputs, then the result).
  int64_t warps = chooseWarps(att, opts);
  int64_t warpRows = chooseWarpRows(att, opts);
  func::FuncOp gpuFn =
      createHostFunction(b, fn, TypeRange{pop.getResult().getType()}, warps,
                         warps * warpRows, opts);
  Block *entry = &gpuFn.front();
  auto argOf = [&](Value v) {
    return entry->getArgument(cast<BlockArgument>(v).getArgNumber());
  };
  Value outBuf = entry->getArgument(fn.getNumArguments());
  KernelEmitter emitter(b, loc, att, warps, opts.tileK, opts.splits, warpRows);
  emitter.fnName = fn.getName().str();
  emitter.wgmmaOpt = opts.wgmma;
  IRArith a{b, loc};

  Value xq = argOf(pop.getXq()), xkv = argOf(pop.getKvSource());
  auto rows2d = [&](Value x) -> Value { // [B, N, D] -> [B*N, D]
    return memref::CollapseShapeOp::create(
        b, loc, x, ArrayRef<ReassociationIndices>{{0, 1}, {2}});
  };
  auto heads2d = [&](Value x) -> Value { // [B, N, H, Dh] -> [B*N, H*Dh]
    return memref::CollapseShapeOp::create(
        b, loc, x, ArrayRef<ReassociationIndices>{{0, 1}, {2, 3}});
  };
  auto tokenType = gpu::AsyncTokenType::get(ctx);
  Value token =
      gpu::WaitOp::create(b, loc, tokenType, ValueRange{}).getAsyncToken();
  auto alloc = [&](RankedTensorType t, Value x) {
    SmallVector<Value> dyn;
    for (int64_t d = 0; d < 2; ++d)
      if (t.isDynamicDim(d))
        dyn.push_back(memref::DimOp::create(b, loc, x, d));
    auto op =
        gpu::AllocOp::create(b, loc, toMemRef(t), tokenType, ValueRange{token},
                             dyn, ValueRange{}, UnitAttr());
    token = op.getAsyncToken();
    return op.getMemref();
  };
  Value qBuf = alloc(qType, xq), kBuf = alloc(kType, xkv),
        vBuf = alloc(vType, xkv), zBuf = alloc(zType, xq);
  int64_t smem = emitter.gemmSharedBytes();
  auto gemm = [&](Value lhs, Value rhs, Value result, StringRef what) {
    Value m = memref::DimOp::create(b, loc, lhs, 0);
    Value n = memref::DimOp::create(b, loc, rhs, 1);
    Value k = memref::DimOp::create(b, loc, rhs, 0);
    // At least one block: blocks past the rows store nothing.
    Value gx = a.max(a.ceilDiv(m, a.c(16 * warps)), a.c(1));
    Value gy = a.ceilDiv(n, a.c(kGemmTileN));
    OpBuilder::InsertionGuard g(b);
    auto launch = gpu::LaunchOp::create(
        b, loc, gx, gy, a.c(1), a.c(kLanes * warps), a.c(1), a.c(1),
        arith::ConstantIntOp::create(b, loc, b.getI32Type(), smem), tokenType,
        ValueRange{token}, TypeRange{}, TypeRange{}, Value(), Value(), Value(),
        emitter.gpuModule(), emitter.kernel(what));
    token = launch.getAsyncToken();
    b.setInsertionPointToStart(&launch.getBody().front());
    emitter.emitGemm(launch, lhs, rhs, result, m, n, k);
    gpu::TerminatorOp::create(b, loc);
  };
  gemm(rows2d(xq), argOf(pop.getWq()), heads2d(qBuf), "proj_q");
  gemm(rows2d(xkv), argOf(pop.getWk()), heads2d(kBuf), "proj_k");
  gemm(rows2d(xkv), argOf(pop.getWv()), heads2d(vBuf), "proj_v");
  gpu::WaitOp::create(b, loc, Type(), ValueRange{token});

  // The attention kernel on them: its own checks, launches and waits.
  SmallVector<Value> attInputs = {qBuf, kBuf, vBuf};
  for (Value v : modifiers)
    attInputs.push_back(argOf(v));
  emitter.emitHost(attInputs, zBuf, Value());
  emitter.recordWgmma(gpuFn);

  // result = Z Wo, then the buffers are freed.
  token = gpu::WaitOp::create(b, loc, tokenType, ValueRange{}).getAsyncToken();
  gemm(heads2d(zBuf), argOf(pop.getWo()), rows2d(outBuf), "proj_out");
  for (Value buf : {qBuf, kBuf, vBuf, zBuf})
    token = gpu::DeallocOp::create(b, loc, tokenType, ValueRange{token}, buf)
                .getAsyncToken();
  gpu::WaitOp::create(b, loc, Type(), ValueRange{token});
  func::ReturnOp::create(b, loc);

  scratch->erase();
  replaceWithHostFunction(fn, gpuFn);
  return success();
}
