//===- Compiler.cpp - C API of the attn compiler --------------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// attn-c/Compiler.h over lib/Compile and MLIR's ExecutionEngine. Every
// failure becomes a diagnostic through the context's callback; nothing is
// printed and nothing aborts.
//
//===----------------------------------------------------------------------===//

#include "attn-c/Compiler.h"

#include "EmulatedKernels.h"

#include "attn/Compile/Compile.h"
#include "attn/Conversion/Passes.h"
#include "attn/Execution/Jit.h"
#include "attn/Execution/Runner.h"
#include "attn/IR/AttnOps.h"
#include "attn/Pipelines/GpuPipeline.h"
#include "attn/Pipelines/Pipelines.h"
#include "attn/Transforms/Passes.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

#include <mutex>

#define ATTN_CAPI_EXPORT __attribute__((visibility("default")))

using namespace mlir;
using namespace mlir::attn;

extern "C" void attn_rt_memref_copy(int64_t, void *, void *);

namespace {
struct Context {
  MLIRContext mlir;
  AttnDiagnosticCallback callback = nullptr;
  void *userData = nullptr;
  std::string lastError;
  DiagnosticEngine::HandlerID handler;

  explicit Context(const DialectRegistry &registry) : mlir(registry) {
    mlir.loadAllAvailableDialects();
    // Diagnostics name the spec's op; a dump of the lowered op in its
    // generic form tells an API user nothing.
    mlir.printOpOnDiagnostic(false);
    handler = mlir.getDiagEngine().registerHandler([this](Diagnostic &d) {
      std::string loc, msg = d.str();
      if (auto fl = dyn_cast<FileLineColLoc>(d.getLocation()))
        loc = (fl.getFilename().str() + ":" + std::to_string(fl.getLine()) +
               ":" + std::to_string(fl.getColumn()));
      for (const Diagnostic &note : d.getNotes())
        msg += "\nnote: " + note.str();
      report(static_cast<AttnDiagnosticSeverity>(
                 d.getSeverity() == DiagnosticSeverity::Error     ? 0
                 : d.getSeverity() == DiagnosticSeverity::Warning ? 1
                 : d.getSeverity() == DiagnosticSeverity::Note    ? 2
                                                                  : 3),
             loc, msg);
      return success();
    });
  }

  void report(AttnDiagnosticSeverity severity, const std::string &loc,
              const std::string &msg) {
    // The first error of a call is the informative one: later ones say
    // which step failed because of it.
    if (severity == AttnDiagnosticError && lastError.empty())
      lastError = loc.empty() ? msg : loc + ": " + msg;
    if (callback)
      callback(severity, AttnStringRef{loc.data(), loc.size()},
               AttnStringRef{msg.data(), msg.size()}, userData);
  }
  void error(const llvm::Twine &msg) {
    report(AttnDiagnosticError, "", msg.str());
  }
  void error(llvm::Error err) { error(llvm::toString(std::move(err))); }
};

struct Module {
  Context *context;
  OwningOpRef<ModuleOp> module;
};

struct JitLibrary {
  std::unique_ptr<ExecutionEngine> engine;
  std::vector<KernelSignature> kernels;
  std::string prefix;
  /// The kernels' runners on the GPU emulator (device "gpu-emulate").
  std::vector<std::unique_ptr<EmulatedKernel>> emulated;
};

Context *unwrap(AttnContext c) { return static_cast<Context *>(c.ptr); }
Module *unwrap(AttnModule m) { return static_cast<Module *>(m.ptr); }
JitLibrary *unwrap(AttnJitLibrary j) {
  return static_cast<JitLibrary *>(j.ptr);
}
llvm::StringRef unwrap(AttnStringRef s) {
  return s.data ? llvm::StringRef(s.data, s.length) : llvm::StringRef();
}
AttnLogicalResult result(bool ok) {
  return AttnLogicalResult{ok ? int8_t(1) : int8_t(0)};
}

/// AttnCompileOptions -> KernelCompileOptions; false (and a diagnostic) when
/// an option is out of range.
bool convert(Context &ctx, const AttnCompileOptions *in,
             KernelCompileOptions &out, bool jit) {
  if (!in)
    return true;
  llvm::StringRef device = in->device ? in->device : "";
  if (!device.empty() && device != "cpu") {
    auto dev = parseRunDevice(device);
    if (!dev) {
      ctx.error(dev.takeError());
      return false;
    }
    if (*dev == RunDevice::GpuEmulator && !jit) {
      ctx.error("device gpu-emulate: kernels on the GPU emulator can only be "
                "JIT-compiled");
      return false;
    }
    if (in->gpu_warps < 0 || in->gpu_tile_k < 1 || in->gpu_splits < -1) {
      ctx.error("gpu_warps must be >= 0, gpu_tile_k >= 1 and gpu_splits >= "
                "-1");
      return false;
    }
    out.gpu.format = in->gpu_format && *in->gpu_format ? in->gpu_format
                     : jit                             ? "isa"
                                                       : "bin";
    out.gpu.warps = in->gpu_warps;
    out.gpu.tileK = in->gpu_tile_k;
    out.gpu.splits = in->gpu_splits;
    out.emulate = *dev == RunDevice::GpuEmulator;
    if (in->gpu_chip && *in->gpu_chip) {
      out.gpu.chip = in->gpu_chip;
    } else if (out.emulate) {
      out.gpu.chip = "sm_80"; // the emulator runs the gpu.launch form
    } else {
      auto chip = chipOfGpuDevice(0);
      if (!chip) {
        ctx.error("device gpu without gpu_chip: " +
                  llvm::toString(chip.takeError()));
        return false;
      }
      out.gpu.chip = *chip;
    }
  }
  if (in->form)
    if (llvm::Error err = out.setForm(in->form)) {
      ctx.error(llvm::toString(std::move(err)));
      return false;
    }
  out.tileQ = in->tile_q;
  out.tileK = in->tile_k;
  out.splits = in->splits;
  out.maxDecodeQueries = in->max_decode_queries;
  out.parallel = in->parallel;
  out.targetCpu = in->target_cpu ? in->target_cpu : "";
  out.targetFeatures = in->target_features ? in->target_features : "";
  out.targetTriple = in->target_triple ? in->target_triple : "";
  if (in->prefix)
    out.prefix = in->prefix;
  if (in->entries)
    for (llvm::StringRef e : llvm::split(in->entries, ','))
      if (!e.trim().empty())
        out.entries.push_back(e.trim().str());
  if (in->opt_level < 0 || in->opt_level > 3) {
    ctx.error("opt_level " + llvm::Twine(in->opt_level) + ": expected 0 to 3");
    return false;
  }
  out.optLevel = in->opt_level;
  if (in->tile_q < 0 || in->tile_k < 0 || in->splits == 0 || in->splits < -1 ||
      in->max_decode_queries < 0) {
    ctx.error("tile_q, tile_k and max_decode_queries must be >= 0 and "
              "splits >= 1 or -1 (chosen at run time)");
    return false;
  }
  return true;
}

/// Why the option string of attn-to-llvm-cpu is invalid ("" if it is not).
std::string checkCpuPipelineOptions(llvm::StringRef options) {
  static const llvm::StringSet<> ints = {
      "tile-q", "tile-k", "splits", "max-decode-queries", "min-parallel-work"};
  static const llvm::StringSet<> bools = {"instrument-tiles", "parallel",
                                          "approximate-math", "out-params",
                                          "strided-inputs"};
  static const llvm::StringSet<> strings = {"target-cpu", "target-features",
                                            "target-triple"};
  llvm::SmallVector<llvm::StringRef> words;
  options.split(words, ' ', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef word : words) {
    auto [key, value] = word.split('=');
    int64_t n;
    if (key == "form") {
      if (!parseAttentionForm(value))
        return "form=" + value.str() +
               ": expected naive, fused, decode or auto";
    } else if (ints.contains(key)) {
      if (value.getAsInteger(10, n))
        return key.str() + "=" + value.str() + ": expected an integer";
    } else if (key == "bf16-dot-products") {
      // The words of the pass option (one list, CpuTarget.h).
      static const llvm::cl::OptionEnumValue known[] = {
          ATTN_BF16_DOT_PRODUCTS_VALUES};
      if (llvm::none_of(known, [&](const llvm::cl::OptionEnumValue &v) {
            return v.Name == value;
          }))
        return key.str() + "=" + value.str() +
               ": expected auto, true (1, on) or false (0, off)";
    } else if (bools.contains(key)) {
      if (!llvm::is_contained({"true", "false", "1", "0"}, value))
        return key.str() + "=" + value.str() + ": expected true or false";
    } else if (!strings.contains(key)) {
      return "unknown option '" + key.str() + "'";
    }
  }
  return "";
}

/// Compiles `module` into the output `kind`, as a string.
llvm::Expected<std::string> compileOutput(ModuleOp module,
                                          const KernelCompileOptions &opts,
                                          AttnOutputKind kind) {
  auto sigs = kernelSignatures(module, opts);
  if (!sigs)
    return sigs.takeError();
  if (kind == AttnOutputHeader)
    return kernelHeader(*sigs, opts, "ATTN_KERNELS_H");
  auto tm = createKernelTargetMachine(opts);
  if (!tm)
    return tm.takeError();
  auto lowered = lowerKernels(module, opts);
  if (!lowered)
    return lowered.takeError();
  llvm::LLVMContext llvmCtx;
  auto m = buildKernelModule(**lowered, *sigs, opts, **tm, llvmCtx);
  if (!m)
    return m.takeError();
  std::string s;
  if (kind == AttnOutputLLVMIR) {
    llvm::raw_string_ostream os(s);
    (*m)->print(os, nullptr);
    return s;
  }
  if (kind != AttnOutputObject && kind != AttnOutputStaticLibrary &&
      kind != AttnOutputAssembly)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "unknown output kind %d", int(kind));
  llvm::SmallString<0> code;
  llvm::raw_svector_ostream os(code);
  if (llvm::Error err =
          emitMachineCode(**m, **tm, kind == AttnOutputAssembly, os))
    return std::move(err);
  if (kind == AttnOutputStaticLibrary)
    return makeStaticArchive(code, "attn_kernels.o");
  return std::string(code.str());
}
} // namespace

extern "C" {

ATTN_CAPI_EXPORT uint32_t attnGetKernelAbiVersion(void) {
  return ATTN_KERNEL_ABI_VERSION;
}

ATTN_CAPI_EXPORT void attnRegisterAllPasses(void) {
  static std::once_flag once;
  std::call_once(once, [] {
    registerAllPasses();
    registerAttnPasses();
    registerAttnConversionPasses();
    registerAttnPipelines();
  });
}

ATTN_CAPI_EXPORT AttnContext attnContextCreate(void) {
  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registry.insert<AttnDialect>();
  // GPU kernels (options.device "gpu"): the NVVM target and translations.
  registerGpuCodegen(registry);
  return AttnContext{new Context(registry)};
}

ATTN_CAPI_EXPORT void attnContextDestroy(AttnContext context) {
  delete unwrap(context);
}

ATTN_CAPI_EXPORT void attnContextSetDiagnosticCallback(
    AttnContext context, AttnDiagnosticCallback callback, void *userData) {
  if (Context *ctx = unwrap(context)) {
    ctx->callback = callback;
    ctx->userData = userData;
  }
}

ATTN_CAPI_EXPORT AttnStringRef attnContextGetLastError(AttnContext context) {
  Context *ctx = unwrap(context);
  if (!ctx)
    return AttnStringRef{"", 0};
  return AttnStringRef{ctx->lastError.c_str(), ctx->lastError.size()};
}

ATTN_CAPI_EXPORT AttnModule attnModuleCreateParse(AttnContext context,
                                                  AttnStringRef source,
                                                  AttnStringRef name) {
  Context *ctx = unwrap(context);
  if (!ctx)
    return AttnModule{nullptr};
  ctx->lastError.clear();
  ParserConfig config(&ctx->mlir);
  llvm::StringRef fileName = unwrap(name);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(
      unwrap(source), config, fileName.empty() ? "<string>" : fileName);
  if (!module)
    return AttnModule{nullptr};
  if (failed(verify(*module)))
    return AttnModule{nullptr};
  return AttnModule{new Module{ctx, std::move(module)}};
}

ATTN_CAPI_EXPORT AttnModule attnModuleCreateParseFile(AttnContext context,
                                                      AttnStringRef path) {
  Context *ctx = unwrap(context);
  if (!ctx)
    return AttnModule{nullptr};
  ctx->lastError.clear();
  auto buf = llvm::MemoryBuffer::getFile(unwrap(path));
  if (!buf) {
    ctx->error("cannot read " + unwrap(path) + ": " + buf.getError().message());
    return AttnModule{nullptr};
  }
  std::string text = (*buf)->getBuffer().str();
  return attnModuleCreateParse(context, AttnStringRef{text.data(), text.size()},
                               path);
}

ATTN_CAPI_EXPORT void attnModuleDestroy(AttnModule module) {
  delete unwrap(module);
}

ATTN_CAPI_EXPORT void attnModulePrint(AttnModule module,
                                      AttnStringCallback callback,
                                      void *userData) {
  Module *m = unwrap(module);
  if (!m || !callback)
    return;
  std::string s;
  llvm::raw_string_ostream os(s);
  m->module->print(os);
  callback(AttnStringRef{s.data(), s.size()}, userData);
}

ATTN_CAPI_EXPORT AttnLogicalResult attnModuleRunPipeline(
    AttnModule module, AttnStringRef name, AttnStringRef options) {
  Module *m = unwrap(module);
  if (!m)
    return result(false);
  Context &ctx = *m->context;
  ctx.lastError.clear();
  attnRegisterAllPasses();
  std::string text = unwrap(name).str();
  if (!unwrap(options).empty())
    text += "{" + unwrap(options).str() + "}";
  // The registry parses pipeline options with llvm::cl, which prints a bad
  // value's error to stderr: check the attn pipeline's options here first,
  // so that their errors come back as diagnostics instead.
  if (unwrap(name) == "attn-to-llvm-cpu") {
    std::string err = checkCpuPipelineOptions(unwrap(options));
    if (!err.empty()) {
      ctx.error("invalid options of attn-to-llvm-cpu: " + err);
      return result(false);
    }
  }
  PassManager pm(&ctx.mlir, ModuleOp::getOperationName());
  std::string err;
  llvm::raw_string_ostream errOs(err);
  if (failed(parsePassPipeline(text, pm, errOs))) {
    ctx.error("invalid pipeline '" + text +
              "': " + llvm::StringRef(err).trim());
    return result(false);
  }
  if (failed(pm.run(*m->module))) {
    if (ctx.lastError.empty())
      ctx.error("pipeline '" + text + "' failed");
    return result(false);
  }
  return result(true);
}

ATTN_CAPI_EXPORT size_t attnCompileOptionsSize(void) {
  return sizeof(AttnCompileOptions);
}

ATTN_CAPI_EXPORT void attnCompileOptionsInit(AttnCompileOptions *options) {
  if (!options)
    return;
  // The defaults of KernelCompileOptions (CpuCodegenOptions'), not a copy.
  static const KernelCompileOptions defaults;
  *options = AttnCompileOptions{};
  options->form = attentionFormName(defaults.form).data();
  options->tile_q = defaults.tileQ;
  options->tile_k = defaults.tileK;
  options->splits = defaults.splits;
  options->parallel = defaults.parallel;
  options->prefix = defaults.prefix.c_str();
  options->opt_level = static_cast<int32_t>(defaults.optLevel);
  options->device = "cpu";
  options->gpu_warps = defaults.gpu.warps;
  options->gpu_tile_k = defaults.gpu.tileK;
  options->gpu_splits = defaults.gpu.splits;
  options->max_decode_queries = defaults.maxDecodeQueries;
}

ATTN_CAPI_EXPORT AttnLogicalResult
attnCompile(AttnModule module, const AttnCompileOptions *options,
            AttnOutputKind kind, AttnStringCallback callback, void *userData) {
  Module *m = unwrap(module);
  if (!m)
    return result(false);
  Context &ctx = *m->context;
  ctx.lastError.clear();
  if (!callback) {
    ctx.error("attnCompile: null callback");
    return result(false);
  }
  KernelCompileOptions opts;
  if (!convert(ctx, options, opts, /*jit=*/false))
    return result(false);
  auto out = compileOutput(*m->module, opts, kind);
  if (!out) {
    ctx.error(out.takeError());
    return result(false);
  }
  callback(AttnStringRef{out->data(), out->size()}, userData);
  return result(true);
}

ATTN_CAPI_EXPORT AttnLogicalResult
attnCompileToFile(AttnModule module, const AttnCompileOptions *options,
                  AttnOutputKind kind, AttnStringRef path) {
  Module *m = unwrap(module);
  if (!m)
    return result(false);
  Context &ctx = *m->context;
  ctx.lastError.clear();
  KernelCompileOptions opts;
  if (!convert(ctx, options, opts, /*jit=*/false))
    return result(false);
  auto out = compileOutput(*m->module, opts, kind);
  if (!out) {
    ctx.error(out.takeError());
    return result(false);
  }
  std::error_code ec;
  llvm::raw_fd_ostream os(unwrap(path), ec);
  if (ec) {
    ctx.error("cannot write " + unwrap(path) + ": " + ec.message());
    return result(false);
  }
  os << *out;
  os.close();
  if (os.has_error()) {
    ctx.error("cannot write " + unwrap(path) + ": " + os.error().message());
    os.clear_error();
    return result(false);
  }
  return result(true);
}

ATTN_CAPI_EXPORT AttnJitLibrary
attnJitLibraryCreate(AttnModule module, const AttnCompileOptions *options) {
  Module *m = unwrap(module);
  if (!m)
    return AttnJitLibrary{nullptr};
  Context &ctx = *m->context;
  ctx.lastError.clear();
  KernelCompileOptions opts;
  if (!convert(ctx, options, opts, /*jit=*/true))
    return AttnJitLibrary{nullptr};
  auto sigs = kernelSignatures(*m->module, opts);
  if (!sigs) {
    ctx.error(sigs.takeError());
    return AttnJitLibrary{nullptr};
  }
  auto fail = [&](llvm::Error err) {
    ctx.error(std::move(err));
    return AttnJitLibrary{nullptr};
  };
  // One target machine builds the module, the engine owns another.
  auto builderTm = createKernelTargetMachine(opts);
  if (!builderTm)
    return fail(builderTm.takeError());
  auto engineTm = createKernelTargetMachine(opts);
  if (!engineTm)
    return fail(engineTm.takeError());
  if ((*builderTm)->getTargetTriple().str() != llvm::sys::getProcessTriple()) {
    ctx.error("cannot JIT-compile for " +
              (*builderTm)->getTargetTriple().str() + " on this host");
    return AttnJitLibrary{nullptr};
  }
  // GPU emulator kernels: a runner each, called by JIT'd trampolines.
  std::vector<std::unique_ptr<EmulatedKernel>> emulated;
  OwningOpRef<ModuleOp> loweredModule;
  if (opts.emulate) {
    auto kernels = createEmulatedKernels(*m->module, *sigs, opts);
    if (!kernels)
      return fail(kernels.takeError());
    emulated = std::move(*kernels);
    loweredModule = buildEmulatorTrampolines(&ctx.mlir, emulated);
  } else {
    auto lowered = lowerKernels(*m->module, opts);
    if (!lowered)
      return fail(lowered.takeError());
    loweredModule = std::move(*lowered);
  }

  std::string buildError;
  auto builder =
      [&](Operation *op,
          llvm::LLVMContext &llvmCtx) -> std::unique_ptr<llvm::Module> {
    auto llvmModule = buildKernelModule(cast<ModuleOp>(op), *sigs, opts,
                                        **builderTm, llvmCtx);
    if (!llvmModule) {
      buildError = llvm::toString(llvmModule.takeError());
      return nullptr;
    }
    return std::move(*llvmModule);
  };
  ExecutionEngineOptions engineOpts;
  engineOpts.llvmModuleBuilder = builder;
  std::string ompPath = openMPRuntimePath().str();
  llvm::SmallVector<llvm::StringRef, 1> libs;
  if (opts.parallel)
    libs.push_back(ompPath);
  engineOpts.sharedLibPaths = libs;
  engineOpts.jitCodeGenOptLevel =
      static_cast<llvm::CodeGenOptLevel>(std::min(opts.optLevel, 3u));
  auto engine =
      ExecutionEngine::create(*loweredModule, engineOpts, std::move(*engineTm));
  if (!engine) {
    std::string msg = llvm::toString(engine.takeError());
    ctx.error(buildError.empty() ? msg : buildError);
    return AttnJitLibrary{nullptr};
  }
  (*engine)->registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap map;
    auto add = [&](const char *name, auto *fn) {
      map[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(fn),
                             llvm::JITSymbolFlags::Exported};
    };
    add("attn_kernel_call", &attn_kernel_call);
    add("attn_kernel_workspace_size", &attn_kernel_workspace_size);
    add("attn_kernel_dispatch", &attn_kernel_dispatch);
    add("attn_rt_memref_copy", &attn_rt_memref_copy);
    add("attn_rt_error_context", &attn_rt_error_context);
    add("attn_rt_check_failed", &attn_rt_check_failed);
    add("attn_rt_has_failed", &attn_rt_has_failed);
    return map;
  });
  if (opts.isGpu())
    registerGpuHostSymbols(**engine);
  if (opts.emulate)
    registerEmulatorSymbols(**engine);
  // Global constructors: a GPU module's image is recorded (no driver call
  // until the first launch).
  (*engine)->initialize();
  auto *lib = new JitLibrary{std::move(*engine), std::move(*sigs), opts.prefix,
                             std::move(emulated)};
  return AttnJitLibrary{lib};
}

ATTN_CAPI_EXPORT void attnJitLibraryDestroy(AttnJitLibrary library) {
  delete unwrap(library);
}

ATTN_CAPI_EXPORT void *attnJitLibraryLookupSymbol(AttnJitLibrary library,
                                                  AttnStringRef symbol) {
  JitLibrary *lib = unwrap(library);
  if (!lib)
    return nullptr;
  auto addr = lib->engine->lookup(unwrap(symbol));
  if (!addr) {
    llvm::consumeError(addr.takeError());
    return nullptr;
  }
  return *addr;
}

ATTN_CAPI_EXPORT const attn_kernel_info_t *
attnJitLibraryLookupKernel(AttnJitLibrary library, AttnStringRef name) {
  JitLibrary *lib = unwrap(library);
  if (!lib)
    return nullptr;
  bool known = llvm::any_of(lib->kernels, [&](const KernelSignature &k) {
    return k.name == unwrap(name);
  });
  if (!known)
    return nullptr;
  std::string sym = lib->prefix + unwrap(name).str() + "_info";
  auto *infoFn = reinterpret_cast<const attn_kernel_info_t *(*)(void)>(
      attnJitLibraryLookupSymbol(library,
                                 AttnStringRef{sym.data(), sym.size()}));
  return infoFn ? infoFn() : nullptr;
}

} // extern "C"
