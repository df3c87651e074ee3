//===- Pipelines.h - named attn lowering pipelines --------------*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// Named pipelines shared by attn-opt, attn-run, the C++ API and the tests.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_PIPELINES_PIPELINES_H
#define ATTN_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassOptions.h"

namespace mlir {
class ModuleOp;
class OpPassManager;
namespace attn {

struct CpuPipelineOptions : public PassPipelineOptions<CpuPipelineOptions> {
  PassOptions::Option<std::string> form{
      *this, "form",
      llvm::cl::desc("Attention form to lower to: naive"),
      llvm::cl::init("naive")};
  PassOptions::Option<bool> outParams{
      *this, "out-params",
      llvm::cl::desc("Return results through caller-allocated memref "
                     "arguments appended after the inputs"),
      llvm::cl::init(true)};
};

/// attn (tensors) -> linalg -> bufferized loops -> LLVM dialect, for the
/// host CPU. Results become out-params (when `outParams`), so every entry
/// function takes only memref arguments: inputs, then outputs.
void buildAttnCpuPipeline(OpPassManager &pm, const CpuPipelineOptions &opts);

/// Runs the CPU pipeline on `module` in place.
LogicalResult lowerToLLVM(ModuleOp module, const CpuPipelineOptions &opts);

/// Registers the named pipelines (`attn-to-llvm-cpu`) with the global
/// registry used by attn-opt.
void registerAttnPipelines();

} // namespace attn
} // namespace mlir

#endif // ATTN_PIPELINES_PIPELINES_H
