//===- SpecEmulation.cpp - run an attn spec's GPU kernel on the emulator --===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/GPUEmulator/SpecEmulation.h"

#include "attn/Execution/SpecBinding.h"
#include "attn/Pipelines/GpuPipeline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::attn;

static llvm::Error error(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg.str());
}

llvm::Expected<std::unique_ptr<EmulatedSpec>>
EmulatedSpec::lower(ModuleOp spec, llvm::StringRef entry,
                    const GpuEmulationOptions &options) {
  auto result = std::make_unique<EmulatedSpec>();
  result->lowered = OwningOpRef<ModuleOp>(spec.clone());
  result->entry = entry.str();
  ModuleOp module = *result->lowered;
  // Only the entry and what it reaches, as on the CPU and the GPU.
  eraseOtherFunctions(module, entry);
  MLIRContext *ctx = module->getContext();
  // Collect the lowering's diagnostics into the error.
  std::string diags;
  {
    ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &d) {
      llvm::raw_string_ostream os(diags);
      if (auto fl = dyn_cast<FileLineColLoc>(d.getLocation()))
        os << fl.getFilename().getValue() << ":" << fl.getLine() << ":"
           << fl.getColumn() << ": ";
      else
        os << d.getLocation() << ": ";
      os << "error: " << d << "\n";
      return success();
    });
    // The GPU pipeline up to the gpu.launch form (kernels-only).
    PassManager pm(ctx);
    GpuPipelineOptions pipelineOpts;
    setPipelineOptions(pipelineOpts, options.gpu);
    pipelineOpts.kernelsOnly = true;
    if (llvm::Error e = buildAttnGpuPipeline(pm, pipelineOpts))
      return std::move(e);
    if (failed(pm.run(module)))
      return error("convert-attn-to-gpu failed: " + diags);
  }
  if (options.loweredIR) {
    llvm::raw_string_ostream os(*options.loweredIR);
    module->print(os);
  }
  auto fn = module.lookupSymbol<func::FuncOp>(entry);
  if (!fn)
    return error("the GPU form has no function '" + entry + "'");
  result->loweringChoices = readLoweringChoices(fn);
  if (options.choices)
    *options.choices = result->loweringChoices;
  return result;
}

llvm::Error
EmulatedSpec::run(llvm::ArrayRef<const HostTensor *> args,
                  const std::vector<std::vector<int64_t>> &resultShapes,
                  std::vector<HostTensor> &results,
                  const EmulatorOptions &emulator) const {
  ModuleOp module = *lowered;
  auto fn = module.lookupSymbol<func::FuncOp>(entry);
  size_t numOut = fn.getNumArguments() - args.size();
  if (fn.getNumArguments() < args.size() || numOut != resultShapes.size())
    return error("the GPU form of '" + entry + "' takes " +
                 llvm::Twine(fn.getNumArguments()) + " arguments; expected " +
                 llvm::Twine(args.size()) + " inputs and " +
                 llvm::Twine(resultShapes.size()) + " out-parameters");
  results.assign(numOut, HostTensor());
  std::vector<EmulatedBuffer> bufs;
  for (const HostTensor *t : args)
    bufs.push_back(EmulatedBuffer::memref(
        const_cast<uint8_t *>(t->bytes.data()),
        static_cast<int64_t>(t->bytes.size()), t->shape));
  for (size_t i = 0; i < numOut; ++i) {
    auto type = dyn_cast<MemRefType>(fn.getArgument(args.size() + i).getType());
    ElementKind kind;
    if (!type || !getElementKind(type.getElementType(), kind))
      return error("out-parameter " + llvm::Twine(i) +
                   " of the GPU form is not a memref of a known type");
    results[i].resize(kind, resultShapes[i]);
    // NaN bit patterns: elements the kernel never writes show.
    std::fill(results[i].bytes.begin(), results[i].bytes.end(), 0xff);
    bufs.push_back(EmulatedBuffer::memref(
        results[i].bytes.data(), static_cast<int64_t>(results[i].bytes.size()),
        resultShapes[i]));
  }
  return emulate(module, entry, bufs, emulator);
}

llvm::Error mlir::attn::emulateSpecOnGpu(
    ModuleOp spec, llvm::StringRef entry, const std::vector<HostTensor> &args,
    const std::vector<std::vector<int64_t>> &resultShapes,
    std::vector<HostTensor> &results, const GpuEmulationOptions &options) {
  auto lowered = EmulatedSpec::lower(spec, entry, options);
  if (!lowered)
    return lowered.takeError();
  std::vector<const HostTensor *> argPtrs;
  for (const HostTensor &t : args)
    argPtrs.push_back(&t);
  return (*lowered)->run(argPtrs, resultShapes, results, options.emulator);
}
