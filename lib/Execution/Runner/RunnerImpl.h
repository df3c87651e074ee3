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

/// What the result shapes of a dense attn.attention depend on, taken from
/// the op when a runner is created: a runner outlives the caller's module.
struct DenseResultRule {
  /// q and v (attn.attention), or x and wo (attn.projected_attention: the
  /// result is [B, Nq, D] with D wo's columns).
  unsigned qArg = 0, vArg = 0;
  bool lse = false, bnhd = false, projected = false;
  /// Each result's element kind and static sizes (kDynamic where dynamic).
  std::vector<ElementKind> kinds;
  std::vector<std::vector<int64_t>> staticShapes;

  /// The rule of `attention`, whose q and v must be arguments of its
  /// function, and whose function returns its results.
  static llvm::Expected<DenseResultRule> of(Operation *attention);
  /// The result shapes for `inputs` (checked against the static sizes).
  llvm::Expected<std::vector<std::vector<int64_t>>>
  shapes(llvm::ArrayRef<const HostTensor *> inputs) const;
};

/// The attn.attention (or attn.projected_attention) of `fn` when `fn`
/// returns its results directly, in order (what the GPU lowering and its
/// out-parameters need).
llvm::Expected<Operation *> directAttentionEntry(func::FuncOp fn);

/// The GPU devices' runners, for the entry `fn` of `module` whose results
/// follow `rule`.
llvm::Expected<std::unique_ptr<Runner>>
createGpuRunner(ModuleOp module, func::FuncOp fn, DenseResultRule rule,
                const RunnerOptions &options);
llvm::Expected<std::unique_ptr<Runner>>
createEmulatorRunner(ModuleOp module, func::FuncOp fn, DenseResultRule rule,
                     const RunnerOptions &options);

} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_EXECUTION_RUNNERIMPL_H
