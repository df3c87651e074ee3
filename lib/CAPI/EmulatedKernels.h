//===- EmulatedKernels.h - C ABI kernels run by the GPU emulator -*- C++
//-*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// The C API's kernels for device "gpu-emulate": each kernel's body is a small
// JIT-compiled trampoline (`_mlir_ciface_<name>`, so that the kernel ABI
// layer of lib/Compile wraps it like generated code) that hands the memref
// descriptors attn_kernel_call passes to an emulator Runner. Host tensors in,
// host tensors out; what the emulator finds is reported through the run-time
// checks' channel (attn_rt_report_error) as ATTN_STATUS_DEVICE_ERROR.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CAPI_EMULATEDKERNELS_H
#define ATTN_LIB_CAPI_EMULATEDKERNELS_H

#include "attn/Compile/Compile.h"
#include "attn/Execution/Runner.h"

#include "mlir/IR/BuiltinOps.h"

#include <memory>
#include <mutex>
#include <vector>

namespace mlir {
class ExecutionEngine;
namespace attn {

/// One kernel on the emulator: its runner (one call at a time) and its C
/// signature.
struct EmulatedKernel {
  std::unique_ptr<Runner> runner;
  KernelSignature signature;
  std::mutex lock;
};

/// Lowers every kernel of `kernels` for the emulator (a runner each).
llvm::Expected<std::vector<std::unique_ptr<EmulatedKernel>>>
createEmulatedKernels(ModuleOp module, llvm::ArrayRef<KernelSignature> kernels,
                      const KernelCompileOptions &options);

/// A module in the LLVM dialect holding `_mlir_ciface_<name>(descriptors...)`
/// for each kernel: it calls the emulator with the kernel's address.
OwningOpRef<ModuleOp> buildEmulatorTrampolines(
    MLIRContext *context,
    llvm::ArrayRef<std::unique_ptr<EmulatedKernel>> kernels);

/// Makes the function the trampolines call known to a JIT `engine`.
void registerEmulatorSymbols(ExecutionEngine &engine);

} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_CAPI_EMULATEDKERNELS_H
