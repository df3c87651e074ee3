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

#include "attn/Target/CpuTarget.h"

#include "mlir/Pass/PassOptions.h"
#include "llvm/Support/Error.h"

#include <optional>

namespace mlir {
class ModuleOp;
class OpPassManager;
namespace attn {

/// The implementation an attention op lowers to. Auto: per call, split-KV
/// for at most `maxDecodeQueries` query rows and fused beyond
/// (attn-select-form).
enum class AttentionForm { Naive, Fused, Decode, Auto };

/// Parses "naive", "fused", "decode" or "auto".
std::optional<AttentionForm> parseAttentionForm(llvm::StringRef name);

struct CpuPipelineOptions : public PassPipelineOptions<CpuPipelineOptions> {
  PassOptions::Option<AttentionForm> form{
      *this, "form", llvm::cl::desc("Attention form"),
      llvm::cl::init(AttentionForm::Fused),
      llvm::cl::values(
          clEnumValN(AttentionForm::Naive, "naive", "materialized scores"),
          clEnumValN(AttentionForm::Fused, "fused",
                     "tiled online softmax (FlashAttention style)"),
          clEnumValN(AttentionForm::Decode, "decode",
                     "split-KV (flash decoding)"),
          clEnumValN(AttentionForm::Auto, "auto",
                     "split-KV or fused per call, from the query length"))};
  PassOptions::Option<int64_t> maxDecodeQueries{
      *this, "max-decode-queries",
      llvm::cl::desc("Form auto: the longest query length that takes the "
                     "split-KV form"),
      llvm::cl::init(16)};
  PassOptions::Option<int64_t> tileQ{
      *this, "tile-q",
      llvm::cl::desc("Query rows per tile (fused, decode; 0 = default)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> tileK{
      *this, "tile-k",
      llvm::cl::desc("Keys per tile (fused, decode; 0 = default)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> splits{
      *this, "splits",
      llvm::cl::desc("KV chunks of the decode form (-1: chosen at run "
                     "time, from the threads the grid gets)"),
      llvm::cl::init(-1)};
  PassOptions::Option<std::string> targetCpu{
      *this, "target-cpu",
      llvm::cl::desc("LLVM CPU name to generate code for (znver3, haswell, "
                     "sapphirerapids, ...; empty: the host). Chooses the "
                     "register tile and vector width, and is stamped on the "
                     "generated functions"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> targetFeatures{
      *this, "target-features",
      llvm::cl::desc("LLVM target features over the CPU's own, e.g. "
                     "+avx2,+fma,-avx512f"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> targetTriple{
      *this, "target-triple",
      llvm::cl::desc("LLVM target triple (empty: this machine's), e.g. "
                     "aarch64-linux-gnu with target-cpu=neoverse-v1"),
      llvm::cl::init("")};
  PassOptions::Option<Bf16DotProducts> bf16DotProducts{
      *this, "bf16-dot-products",
      llvm::cl::desc("bf16 Q K^T and P V as AVX-512 BF16 dot products: auto "
                     "(where the target runs them faster than the f32 FMA "
                     "kernels: AMD Zen 4), true or false"),
      llvm::cl::init(Bf16DotProducts::Auto),
      llvm::cl::values(ATTN_BF16_DOT_PRODUCTS_VALUES)};
  PassOptions::Option<bool> instrumentTiles{
      *this, "instrument-tiles",
      llvm::cl::desc("Fused form: call attn_tile_visit per visited key tile"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> parallel{
      *this, "parallel",
      llvm::cl::desc("Run the (batch, head group, query tile) iterations on "
                     "OpenMP threads (needs libomp at run time)"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> minParallelWork{
      *this, "min-parallel-work",
      llvm::cl::desc("With parallel: the multiply-adds a call's grid needs "
                     "for OpenMP threads; smaller calls run on the calling "
                     "thread (0: every call with several threads)"),
      llvm::cl::init(int64_t(1) << 19)};
  PassOptions::Option<bool> stridedInputs{
      *this, "strided-inputs",
      llvm::cl::desc("Kernel arguments as strided views (unit innermost "
                     "stride): strided inputs read in place instead of "
                     "gathered by the runtime"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> approximateMath{
      *this, "approximate-math",
      llvm::cl::desc("Polynomial f32 exp/log/tanh (vectorizable) instead of "
                     "libm calls"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> outParams{
      *this, "out-params",
      llvm::cl::desc("Return statically shaped results through "
                     "caller-allocated memref arguments appended after the "
                     "inputs (dynamically shaped results stay results)"),
      llvm::cl::init(true)};
};

/// "naive", "fused", "decode" or "auto".
llvm::StringRef attentionFormName(AttentionForm form);

/// What every driver of the CPU pipeline chooses: the JIT (JitOptions),
/// attn-compile and the C API (KernelCompileOptions), Python through the C
/// API. The pipeline's options are made from it (setPipelineOptions), so
/// each choice has one default.
struct CpuCodegenOptions {
  AttentionForm form = AttentionForm::Fused;
  /// Query rows and keys per tile (0: the lowering chooses; what it chose
  /// is recorded on the function, attn/Schedule/LoweringChoice.h), and the
  /// key splits of the decode form.
  int64_t tileQ = 0, tileK = 0, splits = -1;
  /// Form auto: calls with at most this many query rows run the split-KV
  /// form, longer ones the fused form.
  int64_t maxDecodeQueries = 16;
  /// Run the parallel iterations on OpenMP threads.
  bool parallel = true;
  /// ... for calls whose grid does at least this many multiply-adds
  /// (attn.grid_work); smaller ones run on the calling thread, as starting
  /// threads would cost more than they save.
  int64_t minParallelWork = int64_t(1) << 19;
  /// Arguments as strided views: the runtime passes strided inputs with a
  /// unit innermost stride in place instead of gathering them.
  bool stridedInputs = true;
  /// Polynomial exp/log/tanh instead of libm calls.
  bool approximateMath = true;
  /// Fused and decode forms: call attn_tile_visit per computed key tile.
  bool instrumentTiles = false;
  /// Statically shaped results through caller-allocated out-params (the
  /// caller's buffers are written in place; no copy).
  bool outParams = true;
  /// LLVM CPU name and features over its own (empty: the host's), and the
  /// target triple (empty: this machine's; another architecture's only
  /// ahead of time).
  std::string targetCpu, targetFeatures, targetTriple;
  /// bf16 Q K^T and P V as AVX-512 BF16 dot products: where the target
  /// description says they are faster (Auto), or as asked (docs/Targets.md).
  Bf16DotProducts bf16DotProducts = Bf16DotProducts::Auto;
  /// LLVM optimization level of the generated code.
  unsigned optLevel = 3;

  /// Sets `form` from its name; an unknown name is an error naming the
  /// choices.
  llvm::Error setForm(llvm::StringRef name);
};

/// The pipeline's options for `codegen`.
void setPipelineOptions(CpuPipelineOptions &opts,
                        const CpuCodegenOptions &codegen);

/// Adds the passes that lower attn ops to linalg/scf on tensors in the
/// chosen form.
void addAttnFormPasses(OpPassManager &pm, const CpuPipelineOptions &opts);

/// attn (tensors) -> linalg -> bufferized loops -> LLVM dialect, for the
/// host CPU. Statically shaped results become out-params (when
/// `outParams`), so such an entry function takes only memref arguments:
/// inputs, then outputs.
void buildAttnCpuPipeline(OpPassManager &pm, const CpuPipelineOptions &opts);

/// Runs the CPU pipeline on `module` in place.
LogicalResult lowerToLLVM(ModuleOp module, const CpuPipelineOptions &opts);

/// Registers the named pipelines (`attn-to-llvm-cpu`) with the global
/// registry used by attn-opt.
void registerAttnPipelines();

} // namespace attn
} // namespace mlir

#endif // ATTN_PIPELINES_PIPELINES_H
