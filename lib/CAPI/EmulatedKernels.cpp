//===- EmulatedKernels.cpp - C ABI kernels run by the GPU emulator --------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "EmulatedKernels.h"

#include "attn-c/Kernel.h"
#include "attn/Execution/SpecBinding.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/Builders.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"

#include <cstring>

using namespace mlir;
using namespace mlir::attn;

static constexpr const char *kInvokeName = "__attn_emulated_kernel_invoke";

/// What the trampoline of `handle` calls with its descriptors: copies the
/// inputs into host tensors, runs the emulator, copies the results into the
/// out-parameters. attn_kernel_call has checked the tensors against the
/// signature and made them dense.
static void invokeEmulatedKernel(int64_t handle, void **args) {
  auto *kernel = reinterpret_cast<EmulatedKernel *>(handle);
  const KernelSignature &sig = kernel->signature;
  intptr_t context = attn_rt_error_context();
  auto fail = [&](attn_status_t status, const std::string &msg) {
    attn_rt_report_error(context, status,
                         ("kernel " + sig.name + ": " + msg).c_str());
  };
  // A ranked descriptor: {allocated, aligned, offset, sizes[r], strides[r]}.
  auto view = [&](unsigned i, std::vector<int64_t> &shape) {
    const auto *desc = static_cast<const int64_t *>(args[i]);
    size_t rank = sig.tensors[i].shape.size();
    shape.assign(desc + 3, desc + 3 + rank);
    return reinterpret_cast<uint8_t *>(desc[1]) +
           desc[2] * elementBytes(sig.tensors[i].kind);
  };
  std::lock_guard<std::mutex> guard(kernel->lock);
  std::vector<HostTensor> inputs(sig.numInputs);
  std::vector<const HostTensor *> inputPtrs;
  for (unsigned i = 0; i < sig.numInputs; ++i) {
    std::vector<int64_t> shape;
    const uint8_t *data = view(i, shape);
    inputs[i].resize(sig.tensors[i].kind, shape);
    if (!inputs[i].bytes.empty())
      std::memcpy(inputs[i].bytes.data(), data, inputs[i].bytes.size());
    inputPtrs.push_back(&inputs[i]);
  }
  std::vector<HostTensor> results;
  Runner &runner = *kernel->runner;
  llvm::Error err = runner.bind(inputPtrs);
  if (!err)
    err = runner.run();
  if (!err)
    err = runner.fetch(results);
  if (err) {
    int status = runner.lastStatus();
    fail(status ? static_cast<attn_status_t>(status) : ATTN_STATUS_DEVICE_ERROR,
         llvm::toString(std::move(err)));
    return;
  }
  if (results.size() != sig.numOutputs) {
    fail(ATTN_STATUS_DEVICE_ERROR, "the emulator returned " +
                                       std::to_string(results.size()) +
                                       " results");
    return;
  }
  for (unsigned o = 0; o < sig.numOutputs; ++o) {
    std::vector<int64_t> shape;
    uint8_t *data = view(sig.numInputs + o, shape);
    if (shape != results[o].shape) {
      fail(ATTN_STATUS_SHAPE_MISMATCH,
           "output " + sig.tensors[sig.numInputs + o].name + ": shape " +
               shapeStr(shape) + ", the kernel computed " +
               shapeStr(results[o].shape));
      return;
    }
    if (!results[o].bytes.empty())
      std::memcpy(data, results[o].bytes.data(), results[o].bytes.size());
  }
}

llvm::Expected<std::vector<std::unique_ptr<EmulatedKernel>>>
mlir::attn::createEmulatedKernels(ModuleOp module,
                                  llvm::ArrayRef<KernelSignature> kernels,
                                  const KernelCompileOptions &options) {
  std::vector<std::unique_ptr<EmulatedKernel>> result;
  RunnerOptions runnerOpts;
  runnerOpts.device = RunDevice::GpuEmulator;
  runnerOpts.gpu = options.gpu;
  for (const KernelSignature &sig : kernels) {
    auto runner = Runner::create(module, sig.name, runnerOpts);
    if (!runner)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "@" + sig.name + " on the GPU emulator: " +
                                         llvm::toString(runner.takeError()));
    auto kernel = std::make_unique<EmulatedKernel>();
    kernel->runner = std::move(*runner);
    kernel->signature = sig;
    result.push_back(std::move(kernel));
  }
  return result;
}

OwningOpRef<ModuleOp> mlir::attn::buildEmulatorTrampolines(
    MLIRContext *context,
    llvm::ArrayRef<std::unique_ptr<EmulatedKernel>> kernels) {
  context->getOrLoadDialect<LLVM::LLVMDialect>();
  OpBuilder b(context);
  Location loc = b.getUnknownLoc();
  OwningOpRef<ModuleOp> module(ModuleOp::create(loc));
  b.setInsertionPointToEnd(module->getBody());
  Type ptr = LLVM::LLVMPointerType::get(context);
  Type i64 = b.getI64Type();
  Type voidTy = LLVM::LLVMVoidType::get(context);
  auto invoke = LLVM::LLVMFuncOp::create(
      b, loc, kInvokeName, LLVM::LLVMFunctionType::get(voidTy, {i64, ptr}));
  for (const auto &kernel : kernels) {
    size_t n = kernel->signature.tensors.size();
    llvm::SmallVector<Type> params(n, ptr);
    OpBuilder::InsertionGuard guard(b);
    auto fn = LLVM::LLVMFuncOp::create(
        b, loc, "_mlir_ciface_" + kernel->signature.name,
        LLVM::LLVMFunctionType::get(voidTy, params));
    Block *entry = fn.addEntryBlock(b);
    b.setInsertionPointToStart(entry);
    Value count =
        LLVM::ConstantOp::create(b, loc, i64, static_cast<int64_t>(n ? n : 1));
    Value array = LLVM::AllocaOp::create(b, loc, ptr, ptr, count);
    for (size_t i = 0; i < n; ++i) {
      Value slot = LLVM::GEPOp::create(
          b, loc, ptr, ptr, array,
          llvm::ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i)});
      LLVM::StoreOp::create(b, loc, entry->getArgument(i), slot);
    }
    Value handle = LLVM::ConstantOp::create(
        b, loc, i64, reinterpret_cast<int64_t>(kernel.get()));
    LLVM::CallOp::create(b, loc, invoke, ValueRange{handle, array});
    LLVM::ReturnOp::create(b, loc, ValueRange{});
  }
  return module;
}

void mlir::attn::registerEmulatorSymbols(ExecutionEngine &engine) {
  engine.registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap map;
    map[interner(kInvokeName)] = {
        llvm::orc::ExecutorAddr::fromPtr(&invokeEmulatedKernel),
        llvm::JITSymbolFlags::Exported};
    return map;
  });
}
