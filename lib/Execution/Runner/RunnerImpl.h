//===- RunnerImpl.h - what the runners share --------------------*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_EXECUTION_RUNNERIMPL_H
#define ATTN_LIB_EXECUTION_RUNNERIMPL_H

#include "attn/Execution/Runner.h"
#include "attn/IR/AttnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir {
namespace attn {

llvm::Error runnerError(const llvm::Twine &msg);

/// The attn.attention of `fn` when `fn` returns its results directly, in
/// order (what the GPU lowering and its out-parameters need).
llvm::Expected<AttentionOp> directAttentionEntry(func::FuncOp fn);

llvm::Expected<std::unique_ptr<Runner>>
createGpuRunner(ModuleOp module, llvm::StringRef entry,
                const RunnerOptions &options);
llvm::Expected<std::unique_ptr<Runner>>
createEmulatorRunner(ModuleOp module, llvm::StringRef entry,
                     const RunnerOptions &options);

} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_EXECUTION_RUNNERIMPL_H
