//===- CodegenFlags.h - code generation options as flags --------*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// The options of CpuCodegenOptions and GpuCodegenOptions as llvm::cl flags,
// defined once for every tool that takes them (attn-run, attn-compile): one
// name and one meaning per option. Constructing an object registers its
// flags (in the given category); apply() fills the options struct.
//
//   static cl::OptionCategory category("attn-run options");
//   static CpuCodegenFlags cpuFlags(category);
//   ...
//   JitOptions options;
//   if (llvm::Error err = cpuFlags.apply(options)) ...
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_PIPELINES_CODEGENFLAGS_H
#define ATTN_PIPELINES_CODEGENFLAGS_H

#include "attn/Pipelines/GpuPipeline.h"
#include "attn/Pipelines/Pipelines.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"

#include <string>

namespace mlir {
namespace attn {

/// --form, --tile-q, --tile-k, --splits, --max-decode-queries, --parallel,
/// --min-parallel-work, --strided-inputs, --approximate-math,
/// --target-cpu, --target-features, --bf16-dot-products, -O.
class CpuCodegenFlags {
public:
  explicit CpuCodegenFlags(llvm::cl::OptionCategory &category);

  /// Sets the options the flags give; an unknown form or an optimization
  /// level above 3 is an error.
  llvm::Error apply(CpuCodegenOptions &options) const;
  /// The --form name as given.
  llvm::StringRef formName() const { return form; }
  /// --tile-k (0: not given).
  int64_t tileKeys() const { return tileK; }

private:
  llvm::cl::opt<std::string> form;
  llvm::cl::opt<int64_t> tileQ, tileK, splits, maxDecodeQueries;
  llvm::cl::opt<bool> parallel;
  llvm::cl::opt<int64_t> minParallelWork;
  llvm::cl::opt<bool> stridedInputs, approximateMath;
  llvm::cl::opt<std::string> targetCpu, targetFeatures, targetTriple;
  llvm::cl::opt<Bf16DotProducts> bf16DotProducts;
  llvm::cl::opt<unsigned> optLevel;
};

/// --gpu-chip, --gpu-format, --gpu-warps, --gpu-tile-k, --gpu-warp-rows,
/// --gpu-splits, --cuda-path.
class GpuCodegenFlags {
public:
  /// `chipHelp` says what the chip means to the tool (and its default);
  /// `defaultFormat` is the tool's binary format.
  GpuCodegenFlags(llvm::cl::OptionCategory &category, const char *chipHelp,
                  const char *defaultFormat);

  /// Sets the options the flags give; an unknown binary format is an error.
  llvm::Error apply(GpuCodegenOptions &options) const;
  llvm::StringRef chip() const { return gpuChip; }
  llvm::StringRef format() const { return gpuFormat; }
  /// Whether --gpu-tile-k was given.
  bool tileKeysGiven() const { return gpuTileK.getNumOccurrences() > 0; }

private:
  llvm::cl::opt<std::string> gpuChip, gpuFormat, cudaPath;
  llvm::cl::opt<int64_t> gpuWarps, gpuTileK, gpuWarpRows, gpuSplits;
  llvm::cl::opt<bool> gpuWgmma;
};

} // namespace attn
} // namespace mlir

#endif // ATTN_PIPELINES_CODEGENFLAGS_H
