//===- Compile.h - ahead-of-time compilation of attn specs ------*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// Compiles the entry functions of a spec into kernels with the C ABI of
// attn-c/Kernel.h: lowers them with the CPU pipeline, translates to LLVM IR,
// adds per kernel a descriptor (attn_kernel_info_t) and the public entry
// points `<prefix><name>`, `<prefix><name>_workspace_size`,
// `<prefix><name>_info`, plus `<prefix>kernels` and `<prefix>dispatch`,
// internalizes everything else, optimizes, and emits an object, assembly, a
// static archive or a C header. Shared by attn-compile, the C API (ahead of
// time and JIT) and the tests.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_COMPILE_COMPILE_H
#define ATTN_COMPILE_COMPILE_H

#include "attn/Execution/HostTensor.h"
#include "attn/Pipelines/GpuPipeline.h"
#include "attn/Pipelines/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace llvm {
class LLVMContext;
class Module;
class TargetMachine;
class raw_pwrite_stream;
} // namespace llvm

namespace mlir {
namespace attn {

/// The CPU code generation options (CpuCodegenOptions: the JIT's too, with
/// the same defaults; a kernel library's results are always out-params),
/// and what a kernel library adds.
struct KernelCompileOptions : CpuCodegenOptions {
  /// Prepended to every public symbol.
  std::string prefix = "attn_";
  /// The functions to compile (empty: every public function with a body).
  std::vector<std::string> entries;
  /// GPU kernels instead of CPU kernels when `gpu.chip` is set (empty by
  /// default here): they take device (kDLCUDA) tensors, return every result
  /// through a caller-allocated tensor, and need libattn_gpu_runtime. A
  /// kernel library embeds a cubin unless `gpu.format` says otherwise.
  GpuCodegenOptions gpu = [] {
    GpuCodegenOptions g;
    g.chip = "";
    g.format = "bin";
    return g;
  }();

  /// GPU kernels run on the warp-level GPU emulator over host memory
  /// (kDLCPU tensors; JIT only: the C API builds the kernels' bodies, see
  /// lib/CAPI/EmulatedKernels.cpp). `gpu` gives their warps, tiles and
  /// splits; the chip does not matter.
  bool emulate = false;

  bool isGpu() const { return !gpu.chip.empty() && !emulate; }
  /// Whether every result is an out-parameter (GPU and emulated kernels).
  bool allOutParams() const { return isGpu() || emulate; }
};

/// One tensor of a kernel's C signature.
struct KernelTensor {
  std::string name;
  ElementKind kind = ElementKind::F32;
  std::vector<int64_t> shape; ///< -1: dynamic
  std::vector<std::string> dimNames;
  bool isOutput = false;
};

/// The C signature of one compiled kernel: inputs, then outputs.
struct KernelSignature {
  std::string name;
  std::vector<KernelTensor> tensors;
  unsigned numInputs = 0, numOutputs = 0;
  /// Dynamically shaped outputs: the kernel allocates them.
  bool returnsOutputs = false;
};

/// The signatures of the kernels `options` selects from `module`. Unsupported
/// argument or result types are reported at their location through the
/// context's diagnostic handler.
llvm::Expected<std::vector<KernelSignature>>
kernelSignatures(ModuleOp module, const KernelCompileOptions &options);

/// A target machine for `options`' CPU (position-independent code).
llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createKernelTargetMachine(const KernelCompileOptions &options);

/// Lowers a clone of `module` with the CPU pipeline to the LLVM dialect
/// (what --emit=mlir prints).
llvm::Expected<OwningOpRef<ModuleOp>>
lowerKernels(ModuleOp module, const KernelCompileOptions &options);

/// The optimized LLVM module of the kernels: translation of the lowered
/// module, ABI entry points and descriptors, internalization.
llvm::Expected<std::unique_ptr<llvm::Module>>
buildKernelModule(ModuleOp lowered, llvm::ArrayRef<KernelSignature> kernels,
                  const KernelCompileOptions &options,
                  llvm::TargetMachine &machine, llvm::LLVMContext &llvmCtx);

/// Object code (or assembly when `assembly`) of `module`.
llvm::Error emitMachineCode(llvm::Module &module, llvm::TargetMachine &machine,
                            bool assembly, llvm::raw_pwrite_stream &os);

/// Spec -> object file bytes, all of the above in one call.
llvm::Expected<std::string>
compileToObject(ModuleOp module, const KernelCompileOptions &options);

/// A static archive (GNU format, with a symbol table) holding `object`.
llvm::Expected<std::string> makeStaticArchive(llvm::StringRef object,
                                              llvm::StringRef memberName);

/// The C header declaring the public symbols of `kernels`.
std::string kernelHeader(llvm::ArrayRef<KernelSignature> kernels,
                         const KernelCompileOptions &options,
                         llvm::StringRef guard);

/// Public symbol names of `kernels` (what `nm` shows as exported).
std::vector<std::string> publicSymbols(llvm::ArrayRef<KernelSignature> kernels,
                                       const KernelCompileOptions &options);

} // namespace attn
} // namespace mlir

#endif // ATTN_COMPILE_COMPILE_H
