//===- GpuEmulate.cpp - attn-run --device=gpu-emulate ---------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// Lowers the spec with convert-attn-to-gpu, runs the emitted kernels on the
// warp-level emulator (lib/GPUEmulator) on the same inputs as the CPU path,
// and compares the outputs with the f64 reference.
//
//===----------------------------------------------------------------------===//

#include "GpuEmulate.h"

#include "attn/Execution/ReferenceBridge.h"
#include "attn/GPUEmulator/SpecEmulation.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <random>

using namespace mlir;
using namespace mlir::attn;
namespace cl = llvm::cl;

cl::OptionCategory
    mlir::attn::gpuEmulateCategory("attn-run options of --device=gpu-emulate");
cl::opt<int64_t> mlir::attn::gpuWarps(
    "gpu-warps",
    cl::desc("Warps per block of the GPU kernel (0: the lowering's choice)"),
    cl::init(0), cl::cat(gpuEmulateCategory));
cl::opt<int64_t>
    mlir::attn::gpuTileK("gpu-tile-k",
                         cl::desc("Keys per tile of the GPU kernel"),
                         cl::init(64), cl::cat(gpuEmulateCategory));
static cl::opt<bool> noRaceCheck(
    "emulate-no-race-check",
    cl::desc("Do not report shared-memory accesses between barriers that "
             "race between threads"),
    cl::cat(gpuEmulateCategory));
static cl::opt<bool> printGpuIR(
    "print-gpu-ir",
    cl::desc("Print the GPU form (convert-attn-to-gpu's output) emulated"),
    cl::cat(gpuEmulateCategory));

static int fail(const llvm::Twine &msg) {
  llvm::errs() << "attn-run: error: " << msg << "\n";
  return 1;
}

static void printStats(const EmulatorStats &stats, double seconds);

int mlir::attn::runGpuEmulated(ModuleOp module, const SpecInfo &spec,
                               const SpecBinding &binding,
                               const ReportOptions &reportOpts,
                               llvm::StringRef specPath,
                               llvm::StringRef reportFile) {
  Operation *attnOp = spec.attnOp;
  if (!attnOp)
    return fail("--device=gpu-emulate needs a function with an attn op");
  // The reference first: it gives the result shapes (and costs less than
  // the emulation).
  std::vector<const HostTensor *> argPtrs;
  for (const HostTensor &t : binding.args)
    argPtrs.push_back(&t);
  std::vector<::attn::ref::Tensor> expected;
  if (llvm::Error e = runReference(attnOp, argPtrs, expected, nullptr))
    return fail("reference: " + llvm::toString(std::move(e)));
  std::vector<std::vector<int64_t>> shapes;
  for (const auto &t : expected)
    shapes.push_back(t.shape);

  GpuEmulationOptions opts;
  opts.gpu.warps = gpuWarps;
  opts.gpu.tileK = gpuTileK;
  opts.emulator.detectSharedRaces = !noRaceCheck;
  EmulatorStats stats;
  opts.emulator.stats = &stats;
  std::string ir;
  if (printGpuIR)
    opts.loweredIR = &ir;
  llvm::SmallVector<LoweringChoice> choices;
  opts.choices = &choices;
  std::vector<HostTensor> results;
  auto start = std::chrono::steady_clock::now();
  func::FuncOp entry = spec.entry;
  llvm::Error err = emulateSpecOnGpu(module, entry.getSymName(), binding.args,
                                     shapes, results, opts);
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (printGpuIR)
    llvm::outs() << ir << "\n";
  if (err)
    return fail("gpu emulation: " + llvm::toString(std::move(err)));
  printStats(stats, seconds);

  RunReport report(reportOpts, spec);
  std::optional<ElementKind> computeKind =
      binding.args.empty() ? std::nullopt
                           : gpuComputeKind(binding.args[0].kind);
  report.printResults(llvm::outs(), results, &expected, computeKind);
  if (llvm::Error err = report.writeFiles(results, &expected, binding.args))
    return fail(llvm::toString(std::move(err)));
  if (!reportFile.empty()) {
    llvm::Error err = writeJSONReport(reportFile, [&](llvm::json::OStream &j) {
      j.attribute("spec", specPath);
      j.attribute("device", "gpu-emulate");
      j.attributeArray("lowering", [&] {
        for (const LoweringChoice &c : choices)
          j.object([&] { c.writeJSON(j); });
      });
      j.attribute("emulate_s", seconds);
      j.attributeObject("emulator", [&] {
        j.attribute("launches", stats.launches);
        j.attribute("blocks", stats.blocks);
        j.attribute("threads", stats.threads);
        j.attribute("mma_sync", stats.mmaSyncs);
        j.attribute("ldmatrix", stats.ldmatrices);
        j.attribute("cp_async", stats.asyncCopies);
        j.attribute("shuffles", stats.shuffles);
        j.attribute("barriers", stats.barriers);
      });
      report.writeJSON(j);
    });
    if (err)
      return fail(llvm::toString(std::move(err)));
  }
  if (llvm::Error err = report.verificationError())
    return fail(llvm::toString(std::move(err)));
  return 0;
}

bool mlir::attn::hasGpuLaunch(ModuleOp module) {
  bool found = false;
  module.walk([&](gpu::LaunchOp) {
    found = true;
    return WalkResult::interrupt();
  });
  return found;
}

/// Prints the emulator's counters.
static void printStats(const EmulatorStats &stats, double seconds) {
  llvm::outs()
      << llvm::format("emulate: %.3f s", seconds) << " (" << stats.launches
      << (stats.launches == 1 ? " launch, " : " launches, ") << stats.blocks
      << " blocks, " << stats.threads << " threads; " << stats.mmaSyncs
      << " mma.sync, " << stats.ldmatrices << " ldmatrix, " << stats.asyncCopies
      << " cp.async, " << stats.shuffles << " shuffles, " << stats.barriers
      << " barriers; warp-level ops counted per warp, barriers per block)\n";
}

int mlir::attn::runGpuKernelModule(ModuleOp module, llvm::StringRef entry,
                                   unsigned seed, bool print) {
  func::FuncOp fn;
  for (auto f : module.getOps<func::FuncOp>()) {
    if (f.isExternal() || (entry.empty() && f.isPrivate()))
      continue;
    if (!entry.empty() && f.getSymName() != entry)
      continue;
    if (fn)
      return fail("more than one public function: pass --entry");
    fn = f;
  }
  if (!fn)
    return fail(entry.empty() ? llvm::Twine("no public function with a body")
                              : "no function '" + entry + "' with a body");
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(-1, 1);
  std::vector<HostTensor> tensors(fn.getNumArguments());
  std::vector<EmulatedBuffer> bufs;
  for (auto [i, arg] : llvm::enumerate(fn.getArguments())) {
    auto type = dyn_cast<MemRefType>(arg.getType());
    ElementKind kind;
    Type et = type ? type.getElementType() : Type();
    if (!type || !type.hasStaticShape())
      return fail("argument " + llvm::Twine(i) +
                  ": hand-written kernels take memrefs of static shape");
    if (et && et.isIndex())
      kind = ElementKind::I64;
    else if (!getElementKind(et, kind))
      return fail("argument " + llvm::Twine(i) + ": unsupported element type");
    HostTensor &t = tensors[i];
    t.resize(kind, std::vector<int64_t>(type.getShape()));
    bool isInt = kind == ElementKind::I1 || kind == ElementKind::I8 ||
                 kind == ElementKind::I32 || kind == ElementKind::I64;
    for (int64_t e = 0, n = t.numElements(); e < n; ++e)
      t.set(e, kind == ElementKind::I1 ? double(rng() % 2)
               : isInt                 ? double(rng() % 8)
                                       : uniform(rng));
    bufs.push_back(EmulatedBuffer::memref(
        t.bytes.data(), static_cast<int64_t>(t.bytes.size()), t.shape));
  }
  EmulatorOptions opts;
  opts.detectSharedRaces = !noRaceCheck;
  EmulatorStats stats;
  opts.stats = &stats;
  auto start = std::chrono::steady_clock::now();
  llvm::Error err = emulate(module, fn.getSymName(), bufs, opts);
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (err)
    return fail("gpu emulation: " + llvm::toString(std::move(err)));
  printStats(stats, seconds);
  for (auto [i, t] : llvm::enumerate(tensors)) {
    double sum = 0;
    for (int64_t e = 0, n = t.numElements(); e < n; ++e)
      sum += t.get(e);
    llvm::outs() << "arg" << i << ": " << elementName(t.kind) << " "
                 << shapeStr(t.shape) << llvm::format(" sum %.6g", sum) << "\n";
    if (print)
      for (int64_t e = 0, n = t.numElements(); e < n; ++e)
        llvm::outs() << llvm::format("%.6g", t.get(e))
                     << ((e + 1) % 8 == 0 || e + 1 == n ? "\n" : " ");
  }
  return 0;
}
