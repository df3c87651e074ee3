//===- attn-compile.cpp - ahead-of-time compiler driver -------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// Compiles the entry functions of a spec into kernels with the C ABI of
// attn-c/Kernel.h: `--emit=obj|lib|shared` for linking, `header` for the C
// declarations, `mlir|llvm|asm` to look at the stages. A thin front end over
// lib/Compile (attn/Compile/Compile.h).
//
//===----------------------------------------------------------------------===//

#include "attn/Compile/Compile.h"
#include "attn/IR/AttnOps.h"
#include "attn/Pipelines/CodegenFlags.h"
#include "attn/Pipelines/GpuPipeline.h"
#include "attn/Support/ToolError.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

using namespace mlir;
using namespace mlir::attn;
namespace cl = llvm::cl;

static const ToolError fail("attn-compile");

namespace {
enum class Emit { Mlir, Llvm, Asm, Obj, Lib, Shared, Header, Ptx, Cubin };
} // namespace

static cl::OptionCategory category("attn-compile options");
static cl::list<std::string>
    inputFiles(cl::Positional, cl::desc("<spec.mlir>..."), cl::cat(category));
static cl::opt<std::string> outputFile("o", cl::desc("Output file"),
                                       cl::value_desc("path"), cl::init("-"),
                                       cl::cat(category));
static cl::opt<Emit> emit(
    "emit", cl::desc("What to write"), cl::init(Emit::Obj),
    cl::values(clEnumValN(Emit::Mlir, "mlir", "the LLVM-dialect module"),
               clEnumValN(Emit::Llvm, "llvm", "LLVM IR with the ABI layer"),
               clEnumValN(Emit::Asm, "asm", "assembly"),
               clEnumValN(Emit::Obj, "obj", "a relocatable object"),
               clEnumValN(Emit::Lib, "lib", "a static library (.a)"),
               clEnumValN(Emit::Shared, "shared",
                          "a shared library (links with the system C "
                          "compiler, --cc)"),
               clEnumValN(Emit::Header, "header", "the C header"),
               clEnumValN(Emit::Ptx, "ptx",
                          "the GPU kernels' PTX (with --gpu-chip)"),
               clEnumValN(Emit::Cubin, "cubin",
                          "the GPU kernels' cubin (with --gpu-chip; needs "
                          "ptxas)")),
    cl::cat(category));
static cl::opt<std::string>
    headerFile("header",
               cl::desc("Also write the C header to this path (with obj, lib "
                        "or shared)"),
               cl::value_desc("path"), cl::cat(category));
static cl::opt<std::string> prefix("prefix",
                                   cl::desc("Prefix of every exported symbol"),
                                   cl::init("attn_"), cl::cat(category));
static cl::list<std::string>
    entries("entry",
            cl::desc("Functions to compile (default: every public function "
                     "with a body)"),
            cl::CommaSeparated, cl::cat(category));
static CpuCodegenFlags cpuFlags(category);
static cl::opt<std::string>
    ccPath("cc", cl::desc("C compiler that links --emit=shared"),
           cl::init("cc"), cl::cat(category));
static cl::opt<std::string> runtimeDir(
    "runtime-dir",
    cl::desc("Directory of libattn_runtime for --emit=shared (default: "
             "../lib next to attn-compile)"),
    cl::cat(category));

static cl::opt<std::string> rpath(
    "rpath",
    cl::desc("RUNPATH of an --emit=shared library: 'runtime-dir' (the "
             "default: the absolute --runtime-dir), 'origin' ($ORIGIN: "
             "libattn_runtime next to the kernel library), 'none' (the "
             "loader's search path, or a libattn_runtime already loaded), or "
             "a path list, which may use $ORIGIN"),
    cl::init("runtime-dir"), cl::cat(category));

static GpuCodegenFlags
    gpuFlags(category,
             "Compile GPU kernels for this NVIDIA chip (sm_80, sm_90a, ...) "
             "instead of CPU kernels; they take CUDA tensors and need "
             "libattn_gpu_runtime",
             "bin");

static bool isIdentifierPrefix(llvm::StringRef s) {
  return s.empty() || (!llvm::isDigit(s.front()) && llvm::all_of(s, [](char c) {
           return llvm::isAlnum(c) || c == '_';
         }));
}

static int writeFile(llvm::StringRef path, llvm::StringRef bytes) {
  std::string err;
  auto out = openOutputFile(path, &err);
  if (!out)
    return fail(err);
  out->os() << bytes;
  out->keep();
  return 0;
}

static std::string headerGuard(llvm::StringRef path) {
  std::string guard = "ATTN_KERNELS_";
  for (char c : llvm::sys::path::filename(path))
    guard += llvm::isAlnum(c) ? llvm::toUpper(c) : '_';
  return guard;
}

/// Links `object` into a shared library with the system C compiler, against
/// libattn_runtime (and libomp for parallel kernels).
static int linkShared(llvm::StringRef object, const char *argv0,
                      const KernelCompileOptions &options) {
  auto cc = llvm::sys::findProgramByName(ccPath);
  if (!cc)
    return fail("cannot find the C compiler '" + ccPath +
                "' for --emit=shared: " + cc.getError().message());
  std::string rtDir = runtimeDir;
  if (rtDir.empty()) {
    std::string exe = llvm::sys::fs::getMainExecutable(
        argv0, reinterpret_cast<void *>(&linkShared));
    llvm::SmallString<256> dir(llvm::sys::path::parent_path(exe));
    llvm::sys::path::append(dir, "..", "lib");
    rtDir = dir.str().str();
  }
  llvm::SmallString<128> objPath;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("attn-kernels", "o", objPath))
    return fail("cannot create a temporary object: " + ec.message());
  llvm::FileRemover remover(objPath);
  if (int rc = writeFile(objPath, object))
    return rc;
  std::vector<std::string> args = {
      *cc, "-shared", "-o", outputFile, objPath.str().str(), "-L" + rtDir};
  std::string runpath = rpath == "runtime-dir" ? rtDir
                        : rpath == "origin"    ? std::string("$ORIGIN")
                        : rpath == "none"      ? std::string()
                                               : rpath.getValue();
  if (!runpath.empty())
    args.push_back("-Wl,-rpath," + runpath);
  args.push_back("-lattn_runtime");
  if (options.isGpu())
    args.push_back("-lattn_gpu_runtime");
  else if (options.parallel)
    args.push_back(ATTN_OPENMP_RUNTIME);
  args.push_back("-lm");
  llvm::SmallVector<llvm::StringRef> refs(args.begin(), args.end());
  std::string err;
  int rc = llvm::sys::ExecuteAndWait(*cc, refs, std::nullopt, {}, 0, 0, &err);
  if (rc != 0)
    return fail("linking " + outputFile + " with " + *cc + " failed" +
                (err.empty() ? "" : ": " + err));
  return 0;
}

static int compileMain(MLIRContext &context, const char *argv0) {
  if (!isIdentifierPrefix(prefix))
    return fail("--prefix='" + prefix + "' is not the start of a C identifier");
  if (emit == Emit::Lib || emit == Emit::Shared || emit == Emit::Obj)
    if (outputFile == "-")
      return fail("--emit=obj, lib and shared need an output file (-o)");
  KernelCompileOptions options;
  if (llvm::Error err = cpuFlags.apply(options))
    return fail(std::move(err));
  if (llvm::Error err = gpuFlags.apply(options.gpu))
    return fail(std::move(err));
  // --tile-k also sizes the GPU kernel's key tiles unless --gpu-tile-k does.
  if (cpuFlags.tileKeys() > 0 && !gpuFlags.tileKeysGiven())
    options.gpu.tileK = cpuFlags.tileKeys();
  options.prefix = prefix;
  options.entries.assign(entries.begin(), entries.end());
  // A shared library for another architecture links with that
  // architecture's C compiler against its own build of libattn_runtime.
  if (emit == Emit::Shared && !options.isGpu() &&
      !options.targetTriple.empty() &&
      llvm::Triple(llvm::Triple::normalize(options.targetTriple)).getArch() !=
          llvm::Triple(llvm::sys::getProcessTriple()).getArch() &&
      (ccPath.getNumOccurrences() == 0 || runtimeDir.getNumOccurrences() == 0))
    return fail("--emit=shared for " + options.targetTriple +
                " links with that architecture's C compiler and "
                "libattn_runtime: give --cc (e.g. aarch64-linux-gnu-gcc) and "
                "--runtime-dir, or write --emit=obj or lib and link with "
                "the target's toolchain");

  // Every spec file's functions go into one module: one library.
  if (inputFiles.empty())
    inputFiles.push_back("-");
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);
  OwningOpRef<ModuleOp> module;
  for (const std::string &path : inputFiles) {
    std::string errorMessage;
    auto file = openInputFile(path, &errorMessage);
    if (!file)
      return fail(errorMessage);
    llvm::StringRef text = file->getBuffer();
    std::string name = file->getBufferIdentifier().str();
    sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
    ParserConfig config(&context);
    OwningOpRef<ModuleOp> part =
        parseSourceString<ModuleOp>(text, config, name);
    if (!part)
      return fail("could not parse " + path);
    if (failed(mlir::verify(*part)))
      return fail(path + " does not verify");
    if (!module) {
      module = std::move(part);
      continue;
    }
    SymbolTable symbols(*module);
    for (Operation &op :
         llvm::make_early_inc_range(part->getBody()->getOperations())) {
      if (auto sym = dyn_cast<SymbolOpInterface>(op))
        if (symbols.lookup(sym.getName())) {
          op.emitError() << "@" << sym.getName()
                         << " is defined in an earlier spec file too";
          return fail("duplicate function @" + sym.getName().str());
        }
      op.moveBefore(module->getBody(), module->getBody()->end());
      if (isa<SymbolOpInterface>(op))
        symbols.insert(&op);
    }
  }

  auto sigs = kernelSignatures(*module, options);
  if (!sigs)
    return fail(sigs.takeError());
  std::string header =
      kernelHeader(*sigs, options,
                   headerGuard(emit == Emit::Header ? outputFile : headerFile));
  if (emit == Emit::Header)
    return writeFile(outputFile, header);
  if (!headerFile.empty())
    if (int rc = writeFile(headerFile, header))
      return rc;

  if (emit == Emit::Ptx || emit == Emit::Cubin) {
    if (!options.isGpu())
      return fail("--emit=ptx and --emit=cubin need --gpu-chip");
    options.gpu.format = emit == Emit::Ptx ? "isa" : "bin";
    auto lowered = lowerKernels(*module, options);
    if (!lowered)
      return fail(lowered.takeError());
    std::string bytes;
    unsigned count = 0;
    (*lowered)->walk([&](gpu::BinaryOp binary) {
      for (Attribute object : binary.getObjects()) {
        bytes += cast<gpu::ObjectAttr>(object).getObject().getValue().str();
        ++count;
      }
    });
    if (count != 1)
      return fail(
          "expected one GPU binary, found " + llvm::Twine(count) +
          (count > 1 ? " (compile one kernel at a time with --entry)" : ""));
    return writeFile(outputFile, bytes);
  }
  auto tm = createKernelTargetMachine(options);
  if (!tm)
    return fail(tm.takeError());
  auto lowered = lowerKernels(*module, options);
  if (!lowered)
    return fail(lowered.takeError());
  if (emit == Emit::Mlir) {
    std::string s;
    llvm::raw_string_ostream os(s);
    (*lowered)->print(os);
    return writeFile(outputFile, s);
  }
  llvm::LLVMContext llvmCtx;
  auto m = buildKernelModule(**lowered, *sigs, options, **tm, llvmCtx);
  if (!m)
    return fail(m.takeError());
  if (emit == Emit::Llvm) {
    std::string s;
    llvm::raw_string_ostream os(s);
    (*m)->print(os, nullptr);
    return writeFile(outputFile, s);
  }
  llvm::SmallString<0> code;
  llvm::raw_svector_ostream os(code);
  if (llvm::Error err = emitMachineCode(**m, **tm, emit == Emit::Asm, os))
    return fail(std::move(err));
  switch (emit) {
  case Emit::Asm:
  case Emit::Obj:
    return writeFile(outputFile, code);
  case Emit::Lib: {
    std::string member = llvm::sys::path::stem(outputFile).str() + ".o";
    auto archive = makeStaticArchive(code, member);
    if (!archive)
      return fail(archive.takeError());
    return writeFile(outputFile, *archive);
  }
  case Emit::Shared:
    return linkShared(code, argv0, options);
  default:
    return 0;
  }
}

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "attn-compile: compile an attn spec ahead of time into kernels with "
      "the C ABI of attn-c/Kernel.h\n");
  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registry.insert<AttnDialect>();
  registerGpuCodegen(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  return compileMain(context, argv[0]);
}
