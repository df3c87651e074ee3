//===- Pipelines.cpp - named attn lowering pipelines ----------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Pipelines/Pipelines.h"

#include "attn/Conversion/Passes.h"
#include "attn/Target/CpuTarget.h"
#include "attn/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace mlir::attn;

std::optional<AttentionForm>
mlir::attn::parseAttentionForm(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<AttentionForm>>(name)
      .Case("naive", AttentionForm::Naive)
      .Case("fused", AttentionForm::Fused)
      .Case("decode", AttentionForm::Decode)
      .Case("auto", AttentionForm::Auto)
      .Default(std::nullopt);
}

llvm::StringRef mlir::attn::attentionFormName(AttentionForm form) {
  switch (form) {
  case AttentionForm::Naive:
    return "naive";
  case AttentionForm::Fused:
    return "fused";
  case AttentionForm::Decode:
    return "decode";
  case AttentionForm::Auto:
    return "auto";
  }
  llvm_unreachable("unknown attention form");
}

llvm::Error CpuCodegenOptions::setForm(llvm::StringRef name) {
  std::optional<AttentionForm> parsed = parseAttentionForm(name);
  if (!parsed)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "unknown form '" + name + "': expected naive, fused, decode or auto");
  form = *parsed;
  return llvm::Error::success();
}

void mlir::attn::setPipelineOptions(CpuPipelineOptions &opts,
                                    const CpuCodegenOptions &codegen) {
  opts.form = codegen.form;
  opts.tileQ = codegen.tileQ;
  opts.tileK = codegen.tileK;
  opts.splits = codegen.splits;
  opts.maxDecodeQueries = codegen.maxDecodeQueries;
  opts.parallel = codegen.parallel;
  opts.minParallelWork = codegen.minParallelWork;
  opts.stridedInputs = codegen.stridedInputs;
  opts.approximateMath = codegen.approximateMath;
  opts.instrumentTiles = codegen.instrumentTiles;
  opts.outParams = codegen.outParams;
  opts.targetCpu = codegen.targetCpu;
  opts.targetFeatures = codegen.targetFeatures;
  opts.targetTriple = codegen.targetTriple;
  opts.bf16DotProducts = codegen.bf16DotProducts;
}

void mlir::attn::addAttnFormPasses(OpPassManager &pm,
                                   const CpuPipelineOptions &opts) {
  // Elementwise arith/math on tensors around the attn ops (a user's own
  // pre- or post-processing) becomes linalg so that it bufferizes too.
  pm.addPass(createConvertElementwiseToLinalgPass());
  pm.addPass(createAttnExpandProjections());
  pm.addPass(createAttnExpandLatent());
  pm.addPass(createAttnExpandSinks());
  pm.addPass(createAttnExpandKeyPadding());
  pm.addPass(createConvertAttnStateOps());
  auto addFused = [&] {
    ConvertAttnToFusedLoopsOptions fused;
    if (opts.tileQ > 0)
      fused.tileQ = opts.tileQ;
    if (opts.tileK > 0)
      fused.tileK = opts.tileK;
    fused.instrumentTiles = opts.instrumentTiles;
    fused.targetCpu = opts.targetCpu;
    fused.targetFeatures = opts.targetFeatures;
    fused.targetTriple = opts.targetTriple;
    fused.bf16DotProducts = opts.bf16DotProducts;
    pm.addPass(createConvertAttnToFusedLoops(fused));
  };
  auto addDecode = [&] {
    ConvertAttnToSplitKvOptions decode;
    if (opts.tileQ > 0)
      decode.tileQ = opts.tileQ;
    if (opts.tileK > 0)
      decode.tileK = opts.tileK;
    decode.splits = opts.splits;
    decode.instrumentTiles = opts.instrumentTiles;
    decode.targetCpu = opts.targetCpu;
    decode.targetFeatures = opts.targetFeatures;
    decode.targetTriple = opts.targetTriple;
    decode.bf16DotProducts = opts.bf16DotProducts;
    pm.addPass(createConvertAttnToSplitKv(decode));
  };
  switch (opts.form) {
  case AttentionForm::Naive:
    pm.addPass(createConvertAttnToLinalgNaive());
    return;
  case AttentionForm::Fused:
    addFused();
    return;
  case AttentionForm::Decode:
    addDecode();
    return;
  case AttentionForm::Auto: {
    // Each op marked (or versioned) for its form; each lowering takes its
    // own.
    AttnSelectFormOptions select;
    select.maxDecodeQueries = opts.maxDecodeQueries;
    pm.addPass(createAttnSelectForm(select));
    addDecode();
    addFused();
    return;
  }
  }
}

void mlir::attn::buildAttnCpuPipeline(OpPassManager &pm,
                                      const CpuPipelineOptions &opts) {
  // Dynamically shaped attention results: the caller's buffers, written in
  // place (attn-results-to-destinations, then attn-write-destinations).
  if (opts.outParams)
    pm.addPass(createAttnResultsToDestinations());
  addAttnFormPasses(pm, opts);
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  if (opts.outParams)
    pm.addPass(createAttnWriteDestinations());

  // Tensors -> buffers. Arguments of a dynamic size are strided views (read
  // where the caller holds them) with a unit innermost stride, unless the
  // module reshapes an argument or calls a public function; static ones
  // keep the identity layout; results keep the layouts bufferization infers
  // (identity for the buffers the function allocates).
  AttnStridedArgumentsOptions strided;
  strided.strided = opts.stridedInputs;
  pm.addPass(createAttnStridedArguments(strided));
  pm.addPass(createCanonicalizerPass());
  if (opts.outParams)
    pm.addPass(createAttnResultsToOutParams());
  // Scratch tiles allocated once per query tile, not per key tile.
  pm.addPass(createAttnHoistLoopBuffers());
  // A failed allocation is a run-time error, before deallocation so that
  // buffers are freed on both paths.
  pm.addPass(createAttnCheckAllocations());
  bufferization::BufferDeallocationPipelineOptions deallocOpts;
  bufferization::buildBufferDeallocationPipeline(pm, deallocOpts);
  // Lowers what deallocation leaves behind (bufferization.clone of a
  // returned argument, for example) to memref alloc + copy.
  // The copies deallocation adds to return buffers it does not own, with
  // their allocations checked too.
  AttnCheckAllocationsOptions checkCopies;
  checkCopies.afterDeallocation = true;
  pm.addPass(createAttnCheckAllocations(checkCopies));
  pm.addPass(createConvertBufferizationToMemRefPass());

  if (opts.approximateMath) {
    // Polynomial exp/log/tanh, on buffers (the vscalefps intrinsic it calls
    // on AVX-512F targets has unknown memory effects, which bufferization
    // refuses); an unknown target was reported by the form passes already.
    AttnApproximateMathOptions approx;
    if (auto target = resolveCpuTarget(opts.targetCpu, opts.targetFeatures,
                                       opts.targetTriple))
      approx.avx512 = target->avx512f && target->f32Lanes() == 16;
    else
      llvm::consumeError(target.takeError());
    pm.addPass(createAttnApproximateMath(approx));
  }

  // Loops. The scf.forall over (batch, head group, query tile) becomes an
  // OpenMP parallel loop, or a sequential loop nest.
  // (attn.grid_threads, the threads a grid will get, goes with them.)
  AttnForallToParallelOrSequentialOptions grid;
  grid.minParallelWork = opts.minParallelWork;
  grid.parallel = opts.parallel;
  pm.addPass(createAttnForallToParallelOrSequential(grid));
  // bf16 tile products of the fused form on AMX tiles (the generics left
  // unmarked or on the fallback path become loops below).
  pm.addPass(createAttnLowerAmxTileMatmuls());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(createConvertVectorToSCFPass());
  if (opts.parallel) {
    pm.addPass(createConvertSCFToOpenMPPass());
    pm.addPass(createAttnInlineAllocaScopes());
    pm.addPass(createAttnOmpDynamicSchedule());
  }
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());

  // LLVM dialect.
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  // (The fused form's K packing transposes with explicit shuffles, so no
  // vector.transpose lowering is chosen here.)
  ConvertVectorToLLVMPassOptions vectorOpts;
  // bf16 dot products (x86vector.avx512.dot) and AMX tiles of the fused
  // form.
  vectorOpts.x86Vector = true;
  vectorOpts.amx = true;
  pm.addPass(createConvertVectorToLLVMPass(vectorOpts));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  if (opts.parallel)
    pm.addPass(createConvertOpenMPToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
  // The CPU the forms chose their register tiles for, on every function:
  // LLVM (JIT, llc, an ahead-of-time object) generates code for it.
  AttnSetCpuTargetOptions targetOpts;
  targetOpts.targetCpu = opts.targetCpu;
  targetOpts.targetFeatures = opts.targetFeatures;
  targetOpts.targetTriple = opts.targetTriple;
  pm.addPass(createAttnSetCpuTarget(targetOpts));
}

LogicalResult mlir::attn::lowerToLLVM(ModuleOp module,
                                      const CpuPipelineOptions &opts) {
  PassManager pm(module.getContext());
  buildAttnCpuPipeline(pm, opts);
  return pm.run(module);
}

void mlir::attn::registerAttnPipelines() {
  PassPipelineRegistration<CpuPipelineOptions>(
      "attn-to-llvm-cpu",
      "Lower attn specs to the LLVM dialect for the host CPU "
      "(form=naive|fused|decode, tile-q, tile-k, splits); "
      "results become out-params",
      buildAttnCpuPipeline);
}
