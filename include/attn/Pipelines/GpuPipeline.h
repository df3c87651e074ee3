//===- GpuPipeline.h - the attn GPU (NVIDIA) pipeline -----------*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// attn specs -> tensor-core kernels for NVIDIA GPUs: convert-attn-to-gpu,
// kernel outlining, NVVM, and the GPU module serialized as PTX (or cubin /
// fatbin through the CUDA toolkit's ptxas), with host code (LLVM dialect)
// that calls the mgpu* functions of libattn_gpu_runtime. See docs/GPU.md.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_PIPELINES_GPUPIPELINE_H
#define ATTN_PIPELINES_GPUPIPELINE_H

#include "mlir/Pass/PassOptions.h"
#include "llvm/Support/Error.h"

#include <string>

namespace mlir {
class DialectRegistry;
class ModuleOp;
class OpPassManager;
namespace attn {

struct GpuPipelineOptions : public PassPipelineOptions<GpuPipelineOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip",
      llvm::cl::desc("NVIDIA chip: sm_80, sm_86, sm_89, sm_90, sm_90a, ..."),
      llvm::cl::init("sm_80")};
  PassOptions::Option<std::string> features{
      *this, "features", llvm::cl::desc("PTX features (default +ptx80)"),
      llvm::cl::init("+ptx80")};
  PassOptions::Option<std::string> format{
      *this, "format",
      llvm::cl::desc("GPU binary: isa (PTX, loaded by the driver's JIT), bin "
                     "(cubin, needs ptxas) or fatbin"),
      llvm::cl::init("isa")};
  PassOptions::Option<int64_t> warps{
      *this, "warps",
      llvm::cl::desc("Warps per block, 16 query rows each (0: from the rows)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> tileK{
      *this, "tile-k", llvm::cl::desc("Keys per shared-memory tile"),
      llvm::cl::init(64)};
  PassOptions::Option<int64_t> warpRows{
      *this, "warp-rows",
      llvm::cl::desc("Query rows per warp, 16 or 32 (0: the lowering's "
                     "choice)"),
      llvm::cl::init(0)};
  PassOptions::Option<bool> wgmma{
      *this, "wgmma", llvm::cl::desc("S = Q K^T on wgmma (needs chip=sm_90a)"),
      llvm::cl::init(false)};
  PassOptions::Option<int64_t> splits{
      *this, "splits",
      llvm::cl::desc("Split-KV chunks for decode (-1: chosen at run time, "
                     "0: off)"),
      llvm::cl::init(-1)};
  PassOptions::Option<std::string> cudaPath{
      *this, "cuda-path",
      llvm::cl::desc("CUDA toolkit (libdevice, ptxas); empty: $CUDA_HOME, "
                     "then the toolkit found at configure time, then "
                     "/usr/local/cuda"),
      llvm::cl::init("")};
  PassOptions::Option<bool> kernelsOnly{
      *this, "kernels-only",
      llvm::cl::desc("Stop after convert-attn-to-gpu (the gpu.launch form the "
                     "warp-level emulator runs)"),
      llvm::cl::init(false)};
};

/// The CUDA toolkit directory to use (see GpuPipelineOptions::cudaPath);
/// empty when none is found.
std::string findCudaToolkit(llvm::StringRef preferred = "");

/// What every driver of the GPU pipeline chooses: attn-run (--device=gpu
/// and gpu-emulate), attn-compile and the C API (KernelCompileOptions::gpu),
/// the emulator (GpuEmulationOptions). The pipeline's options are made from
/// it (setPipelineOptions), so each choice has one default.
struct GpuCodegenOptions {
  /// NVIDIA chip (sm_80, sm_90a, ...).
  std::string chip = "sm_80";
  /// GPU binary: isa (PTX, compiled by the driver when loaded), bin (cubin,
  /// needs ptxas) or fatbin.
  std::string format = "isa";
  /// Warps per block (0: the lowering's choice, recorded in attn.lowering),
  /// keys per shared-memory tile, split-KV chunks of decode (-1: chosen at
  /// run time, 0: off).
  int64_t warps = 0, tileK = 64, splits = -1;
  /// Query rows per warp of the row-tiled kernel, 16 or 32 (0: the
  /// lowering's choice).
  int64_t warpRows = 0;
  /// S = Q K^T on wgmma (sm_90a).
  bool wgmma = false;
  /// The CUDA toolkit (see GpuPipelineOptions::cudaPath).
  std::string cudaPath;
};

/// The pipeline's options for `codegen`.
void setPipelineOptions(GpuPipelineOptions &opts,
                        const GpuCodegenOptions &codegen);

/// Adds the whole GPU pipeline. Fails when libdevice cannot be found.
llvm::Error buildAttnGpuPipeline(OpPassManager &pm,
                                 const GpuPipelineOptions &opts);

/// Runs the GPU pipeline on `module`.
LogicalResult lowerToGpu(ModuleOp module, const GpuPipelineOptions &opts);

/// What a context needs to run the GPU pipeline and translate its result:
/// the GPU, NVGPU, NVVM dialects, the NVVM target and LLVM IR translations.
void registerGpuCodegen(DialectRegistry &registry);

/// Registers `attn-to-nvvm`.
void registerAttnGpuPipeline();

} // namespace attn
} // namespace mlir

#endif // ATTN_PIPELINES_GPUPIPELINE_H
