//===- CodegenFlags.cpp - code generation options as flags ----------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Pipelines/CodegenFlags.h"

using namespace mlir;
using namespace mlir::attn;
namespace cl = llvm::cl;

static llvm::Error flagError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg.str());
}

CpuCodegenFlags::CpuCodegenFlags(cl::OptionCategory &category)
    : form("form",
           cl::desc("Attention form: naive (materialized scores), fused "
                    "(tiled online softmax), decode (split-KV) or auto "
                    "(split-KV or fused per call, from the query length)"),
           cl::init("fused"), cl::cat(category)),
      tileQ("tile-q", cl::desc("Query rows per tile (0: the form's choice)"),
            cl::init(0), cl::cat(category)),
      tileK("tile-k", cl::desc("Keys per tile (0: the form's choice)"),
            cl::init(0), cl::cat(category)),
      splits("splits",
             cl::desc("KV chunks of the decode form (-1: chosen at run "
                      "time, from the threads the grid gets)"),
             cl::init(-1), cl::cat(category)),
      maxDecodeQueries("max-decode-queries",
                       cl::desc("--form=auto: the longest query length that "
                                "runs the split-KV form"),
                       cl::init(16), cl::cat(category)),
      parallel("parallel",
               cl::desc("Run on OpenMP threads (OMP_NUM_THREADS; compiled "
                        "kernels then need libomp)"),
               cl::init(true), cl::cat(category)),
      minParallelWork(
          "min-parallel-work",
          cl::desc("With --parallel: the multiply-adds a call needs before "
                   "it runs on OpenMP threads; smaller calls run on the "
                   "calling thread (0: every call)"),
          cl::init(CpuCodegenOptions().minParallelWork), cl::cat(category)),
      stridedInputs("strided-inputs",
                    cl::desc("Read strided inputs (innermost stride 1) in "
                             "place instead of gathering them into a dense "
                             "copy per call"),
                    cl::init(CpuCodegenOptions().stridedInputs),
                    cl::cat(category)),
      approximateMath("approximate-math",
                      cl::desc("Polynomial f32 exp/log/tanh instead of libm"),
                      cl::init(true), cl::cat(category)),
      targetCpu("target-cpu",
                cl::desc("LLVM CPU to generate code for (haswell, znver4, "
                         "x86-64, ...; empty: the host)"),
                cl::cat(category)),
      targetFeatures("target-features",
                     cl::desc("LLVM target features over the CPU's own, e.g. "
                              "+avx2,-avx512f (empty: none)"),
                     cl::cat(category)),
      targetTriple("target-triple",
                   cl::desc("LLVM target triple to generate code for, e.g. "
                            "aarch64-linux-gnu with --target-cpu=neoverse-v1 "
                            "(empty: this machine's; another architecture's "
                            "kernels are compiled ahead of time only)"),
                   cl::cat(category)),
      bf16DotProducts(
          "bf16-dot-products",
          cl::desc("bf16 Q K^T and P V as AVX-512 BF16 dot products: auto "
                   "(the default: where the target runs them faster than "
                   "the f32 FMA kernels, AMD Zen 4; docs/Targets.md), true "
                   "(the flag alone) or false"),
          cl::values(ATTN_BF16_DOT_PRODUCTS_VALUES,
                     // The flag without a value.
                     clEnumValN(Bf16DotProducts::On, "", "")),
          cl::ValueOptional, cl::init(Bf16DotProducts::Auto),
          cl::cat(category)),
      optLevel("O", cl::desc("LLVM optimization level (0-3)"), cl::init(3),
               cl::Prefix, cl::cat(category)) {}

llvm::Error CpuCodegenFlags::apply(CpuCodegenOptions &options) const {
  if (llvm::Error err = options.setForm(form))
    return err;
  if (optLevel > 3)
    return flagError("-O" + llvm::Twine(optLevel) + ": expected 0 to 3");
  options.tileQ = tileQ;
  options.tileK = tileK;
  if (splits == 0 || splits < -1)
    return flagError("--splits=" + llvm::Twine(splits) +
                     ": expected a positive count or -1 (chosen at run time)");
  options.splits = splits;
  if (maxDecodeQueries < 0)
    return flagError("--max-decode-queries=" + llvm::Twine(maxDecodeQueries) +
                     ": expected 0 or more");
  options.maxDecodeQueries = maxDecodeQueries;
  options.parallel = parallel;
  if (minParallelWork < 0)
    return flagError("--min-parallel-work=" + llvm::Twine(minParallelWork) +
                     ": expected 0 or more");
  options.minParallelWork = minParallelWork;
  options.stridedInputs = stridedInputs;
  options.approximateMath = approximateMath;
  options.targetCpu = targetCpu;
  options.targetFeatures = targetFeatures;
  options.targetTriple = targetTriple;
  options.bf16DotProducts = bf16DotProducts;
  options.optLevel = optLevel;
  return llvm::Error::success();
}

GpuCodegenFlags::GpuCodegenFlags(cl::OptionCategory &category,
                                 const char *chipHelp,
                                 const char *defaultFormat)
    : gpuChip("gpu-chip", cl::desc(chipHelp), cl::cat(category)),
      gpuFormat("gpu-format",
                cl::desc("GPU binary: isa (PTX, compiled by the driver when "
                         "loaded), bin (cubin, needs ptxas) or fatbin"),
                cl::init(defaultFormat), cl::cat(category)),
      cudaPath("cuda-path",
               cl::desc("CUDA toolkit (libdevice, ptxas); default: "
                        "$CUDA_HOME, the one found at build time, "
                        "/usr/local/cuda"),
               cl::cat(category)),
      gpuWarps("gpu-warps",
               cl::desc("Warps per block of the GPU kernel (0: the "
                        "lowering's choice)"),
               cl::init(0), cl::cat(category)),
      gpuTileK("gpu-tile-k", cl::desc("Keys per tile of the GPU kernel"),
               cl::init(64), cl::cat(category)),
      gpuWarpRows("gpu-warp-rows",
                  cl::desc("Query rows per warp of the GPU kernel, 16 or 32 "
                           "(0: the lowering's choice)"),
                  cl::init(0), cl::cat(category)),
      gpuSplits("gpu-splits",
                cl::desc("Split-KV chunks of the GPU decode kernel (-1: "
                         "chosen at run time, 0: off)"),
                cl::init(-1), cl::cat(category)),
      gpuWgmma("gpu-wgmma",
               cl::desc("S = Q K^T on Hopper's wgmma (needs "
                        "--gpu-chip=sm_90a; the emulator runs it too)"),
               cl::init(false), cl::cat(category)) {}

llvm::Error GpuCodegenFlags::apply(GpuCodegenOptions &options) const {
  if (gpuFormat != "isa" && gpuFormat != "bin" && gpuFormat != "fatbin")
    return flagError("unknown --gpu-format '" + gpuFormat +
                     "': expected isa, bin or fatbin");
  options.chip = gpuChip;
  options.format = gpuFormat;
  options.cudaPath = cudaPath;
  options.warps = gpuWarps;
  options.tileK = gpuTileK;
  options.warpRows = gpuWarpRows;
  options.splits = gpuSplits;
  options.wgmma = gpuWgmma;
  return llvm::Error::success();
}
