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

/// What the result shapes of a function the GPU takes depend on, taken
/// from the function when a runner is created: a runner outlives the
/// caller's module. Each result is the attention's out or lse (from q and v;
/// attn.projected_attention: from x and wo), or has the shape of an argument
/// (the cache an attn.kv_cache_append writes, an elementwise op's operand).
struct DenseResultRule {
  /// q and v (attn.attention), or x and wo (attn.projected_attention: the
  /// result is [B, Nq, D] with D wo's columns); the arguments they come from.
  unsigned qArg = 0, vArg = 0;
  bool bnhd = false, projected = false;
  /// Latent attention: out has this many columns (v is k).
  std::optional<int64_t> vFromK;
  /// Per result: kOut, kLse, or the number of the argument whose shape it
  /// has.
  static constexpr int64_t kOut = -1, kLse = -2;
  std::vector<int64_t> sources;
  /// Each result's element kind and static sizes (kDynamic where dynamic).
  std::vector<ElementKind> kinds;
  std::vector<std::vector<int64_t>> staticShapes;

  /// The rule of `fn`, whose results must be results of its attn ops (or
  /// of elementwise ops), with q and v (x and wo) coming from arguments.
  static llvm::Expected<DenseResultRule> of(func::FuncOp fn);
  /// The result shapes for `inputs` (checked against the static sizes).
  llvm::Expected<std::vector<std::vector<int64_t>>>
  shapes(llvm::ArrayRef<const HostTensor *> inputs) const;
};

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
