//===- GpuPipeline.cpp - the attn GPU (NVIDIA) pipeline -------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// The pass order follows what docs/GPU.md records as working with MLIR 22
// (and ../shared/docs/gpu.md's traps): index computations are sunk into the
// launch right before outlining; kernels are outlined with bare-pointer
// memrefs; nvgpu is converted before the GPU-to-NVVM conversion; libdevice
// is linked explicitly through nvvm-attach-target's `l=` option.
//
//===----------------------------------------------------------------------===//

#include "attn/Pipelines/GpuPipeline.h"

#include "attn/Conversion/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"

#include <optional>

using namespace mlir;
using namespace mlir::attn;

namespace {
/// Lets ptxas use the registers the kernels need: with only `.maxntid`
/// (from the launch's block size) ptxas caps a 128-thread kernel at 128
/// registers to fit four blocks per SM, and spills; the kernels' shared
/// memory allows one or two blocks per SM anyway, so `.minnctapersm 1`.
struct AnnotateGpuKernelsPass
    : public PassWrapper<AnnotateGpuKernelsPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(AnnotateGpuKernelsPass)
  StringRef getArgument() const override { return "attn-annotate-gpu-kernels"; }
  void runOnOperation() override {
    getOperation().walk([](gpu::GPUFuncOp fn) {
      if (fn.isKernel())
        fn->setAttr("nvvm.minctasm",
                    IntegerAttr::get(IntegerType::get(fn.getContext(), 32), 1));
    });
  }
};

/// The most dynamic shared memory one block may take on `chip` (the opt-in
/// limit, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN), or 0 for a
/// chip not in the table.
/// The compute capability of an NVIDIA chip name (`sm_90a` -> 90), or
/// nothing for another name.
std::optional<unsigned> computeCapability(StringRef chip) {
  unsigned cc = 0;
  if (!chip.consume_front("sm_") ||
      chip.take_while(llvm::isDigit).getAsInteger(10, cc))
    return std::nullopt;
  return cc;
}

int64_t sharedMemoryLimit(StringRef chip) {
  std::optional<unsigned> cc = computeCapability(chip);
  if (!cc)
    return 0;
  switch (*cc) {
  case 80:
  case 87:
    return 166912; // 163 KiB (A100, Orin)
  case 86:
  case 89:
  case 120:
  case 121:
    return 101376; // 99 KiB (consumer Ampere, Ada, Blackwell)
  case 90:
  case 100:
  case 101:
  case 103:
    return 232448; // 227 KiB (H100 / H200, B200 / B300)
  default:
    return 0;
  }
}

/// Refuses a host function whose kernels need more dynamic shared memory per
/// block than the chip has (convert-attn-to-gpu records the most a
/// function's kernels take as attn.gpu_shared_memory): the launch would
/// fail on the device, far from the spec.
struct CheckGpuSharedMemoryPass
    : public PassWrapper<CheckGpuSharedMemoryPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(CheckGpuSharedMemoryPass)
  explicit CheckGpuSharedMemoryPass(std::string chip) : chip(std::move(chip)) {}
  StringRef getArgument() const override {
    return "attn-check-gpu-shared-memory";
  }
  void runOnOperation() override {
    int64_t limit = sharedMemoryLimit(chip);
    if (!limit)
      return;
    getOperation().walk([&](func::FuncOp fn) {
      auto bytes = fn->getAttrOfType<IntegerAttr>("attn.gpu_shared_memory");
      if (!bytes || bytes.getInt() <= limit)
        return;
      fn.emitError("attn: the GPU kernel of @")
          << fn.getSymName() << " needs " << bytes.getInt()
          << " bytes of shared memory per block; " << chip << " allows at most "
          << limit
          << ": use a smaller tile of keys (--gpu-tile-k) or head dimension";
      signalPassFailure();
    });
  }
  std::string chip;
};

/// Reports a pipeline option error as a diagnostic on the module (a pass
/// pipeline registration cannot fail by itself).
struct PipelineErrorPass
    : public PassWrapper<PipelineErrorPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(PipelineErrorPass)
  explicit PipelineErrorPass(std::string message)
      : message(std::move(message)) {}
  StringRef getArgument() const override { return "attn-pipeline-error"; }
  void runOnOperation() override {
    getOperation().emitError("attn-to-nvvm: ") << message;
    signalPassFailure();
  }
  std::string message;
};
} // namespace

#ifndef ATTN_CUDA_TOOLKIT_DIR
#define ATTN_CUDA_TOOLKIT_DIR ""
#endif

static std::string libdeviceIn(llvm::StringRef dir) {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, "nvvm", "libdevice", "libdevice.10.bc");
  return llvm::sys::fs::exists(path) ? std::string(path) : std::string();
}

std::string mlir::attn::findCudaToolkit(llvm::StringRef preferred) {
  SmallVector<std::string> candidates;
  if (!preferred.empty())
    return libdeviceIn(preferred).empty() ? std::string() : preferred.str();
  for (const char *env : {"CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"})
    if (std::optional<std::string> v = llvm::sys::Process::GetEnv(env))
      candidates.push_back(*v);
  candidates.push_back(ATTN_CUDA_TOOLKIT_DIR);
  candidates.push_back("/usr/local/cuda");
  for (const std::string &c : candidates)
    if (!c.empty() && !libdeviceIn(c).empty())
      return c;
  return {};
}

void mlir::attn::setPipelineOptions(GpuPipelineOptions &opts,
                                    const GpuCodegenOptions &codegen) {
  opts.chip = codegen.chip;
  opts.format = codegen.format;
  opts.warps = codegen.warps;
  opts.tileK = codegen.tileK;
  opts.warpRows = codegen.warpRows;
  opts.splits = codegen.splits;
  opts.wgmma = codegen.wgmma;
  opts.cudaPath = codegen.cudaPath;
}

llvm::Error mlir::attn::buildAttnGpuPipeline(OpPassManager &pm,
                                             const GpuPipelineOptions &opts) {
  auto err = [](const llvm::Twine &msg) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
  };
  ConvertAttnToGpuOptions kernelOpts;
  kernelOpts.warps = opts.warps;
  kernelOpts.tileK = opts.tileK;
  kernelOpts.warpRows = opts.warpRows;
  kernelOpts.splits = opts.splits;
  kernelOpts.wgmma = opts.wgmma;
  if (opts.kernelsOnly) {
    pm.addPass(createConvertAttnToGpu(kernelOpts));
    return llvm::Error::success();
  }
  if (opts.format != "isa" && opts.format != "bin" && opts.format != "fatbin")
    return err("unknown GPU binary format '" + opts.format +
               "': expected isa, bin or fatbin");
  llvm::StringRef chip = opts.chip;
  std::optional<unsigned> cc = computeCapability(chip);
  if (!cc)
    return err("unknown chip '" + chip + "': expected sm_80, sm_90a, ...");
  if (*cc < 80)
    return err("chip '" + chip +
               "' is not supported: the kernels need mma.sync m16n8k16 and "
               "cp.async (sm_80 or newer)");
  if (opts.wgmma && chip != "sm_90a")
    return err("wgmma needs chip sm_90a (got '" + chip + "')");
  std::string toolkit = findCudaToolkit(opts.cudaPath);
  if (toolkit.empty()) {
    std::string looked = opts.cudaPath.empty()
                             ? std::string("$CUDA_HOME, ") +
                                   ATTN_CUDA_TOOLKIT_DIR + ", /usr/local/cuda"
                             : std::string(opts.cudaPath);
    return err("no CUDA toolkit with nvvm/libdevice/libdevice.10.bc found "
               "(looked in " +
               looked + "): pass cuda-path");
  }

  // Kernels, outlined with their index computations sunk into them (else
  // constants hoisted out of the launch become kernel parameters).
  pm.addPass(createConvertAttnToGpu(kernelOpts));
  pm.addPass(std::make_unique<CheckGpuSharedMemoryPass>(opts.chip));
  pm.addPass(createGpuLaunchSinkIndexComputationsPass());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(std::make_unique<AnnotateGpuKernelsPass>());
  // nvgpu before the GPU-to-NVVM conversion; host side to LLVM.
  pm.addPass(createAttnLowerBf16MmaSync());
  pm.addPass(createConvertNVGPUToNVVMPass());
  pm.addPass(createConvertVectorToSCFPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertNVVMToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  GpuNVVMAttachTargetOptions target;
  target.chip = opts.chip;
  target.features = opts.features;
  target.optLevel = 3;
  target.fastFlag = true;
  target.ftzFlag = true;
  target.linkLibs.push_back(libdeviceIn(toolkit));
  pm.addPass(createGpuNVVMAttachTarget(target));
  pm.addPass(createLowerAffinePass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  OpPassManager &kernelPm = pm.nest<gpu::GPUModuleOp>();
  ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.useBarePtrCallConv = false;
  kernelPm.addPass(createConvertGpuOpsToNVVMOps(nvvm));
  kernelPm.addPass(createCanonicalizerPass());
  kernelPm.addPass(createCSEPass());
  kernelPm.addPass(createReconcileUnrealizedCastsPass());
  GpuToLLVMConversionPassOptions host;
  host.kernelBarePtrCallConv = false;
  pm.addPass(createGpuToLLVMConversionPass(host));
  GpuModuleToBinaryPassOptions binary;
  binary.toolkitPath = toolkit;
  binary.compilationTarget = opts.format;
  pm.addPass(createGpuModuleToBinaryPass(binary));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  return llvm::Error::success();
}

LogicalResult mlir::attn::lowerToGpu(ModuleOp module,
                                     const GpuPipelineOptions &opts) {
  PassManager pm(module.getContext());
  if (llvm::Error e = buildAttnGpuPipeline(pm, opts))
    return module.emitError("attn: ") << llvm::toString(std::move(e));
  return pm.run(module);
}

void mlir::attn::registerGpuCodegen(DialectRegistry &registry) {
  registerAllDialects(registry);
  registerAllExtensions(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerAllToLLVMIRTranslations(registry);
}

void mlir::attn::registerAttnGpuPipeline() {
  PassPipelineRegistration<GpuPipelineOptions>(
      "attn-to-nvvm",
      "Lower attn specs to NVIDIA GPU kernels (tensor cores): host code in "
      "the LLVM dialect plus a gpu.binary (chip=sm_80|sm_90a|..., "
      "format=isa|bin|fatbin, warps, tile-k, warp-rows, cuda-path, "
      "kernels-only)",
      [](OpPassManager &pm, const GpuPipelineOptions &opts) {
        if (llvm::Error e = buildAttnGpuPipeline(pm, opts)) {
          pm.clear();
          pm.addPass(std::make_unique<PipelineErrorPass>(
              llvm::toString(std::move(e))));
        }
      });
}
