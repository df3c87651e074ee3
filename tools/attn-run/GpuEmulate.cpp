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
#include "attn/Support/Npy.h"

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
                               const GpuEmulateRun &run) {
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
  opts.warps = gpuWarps;
  opts.tileK = gpuTileK;
  opts.emulator.detectSharedRaces = !noRaceCheck;
  EmulatorStats stats;
  opts.emulator.stats = &stats;
  std::string ir;
  if (printGpuIR)
    opts.loweredIR = &ir;
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

  bool verified = true;
  for (size_t i = 0; i < results.size(); ++i) {
    const HostTensor &t = results[i];
    std::string name = i == 0 ? "out" : "lse";
    double sum = 0, absSum = 0;
    for (int64_t e = 0, n = t.numElements(); e < n; ++e) {
      double v = t.get(e);
      if (std::isfinite(v)) {
        sum += v;
        absSum += std::fabs(v);
      }
    }
    double atol, rtol;
    defaultTolerance(t.kind, atol, rtol);
    if (run.atol >= 0)
      atol = run.atol;
    if (run.rtol >= 0)
      rtol = run.rtol;
    Comparison c = compare(t, expected[i], atol, rtol);
    llvm::outs() << name << ": " << elementName(t.kind) << " "
                 << shapeStr(t.shape)
                 << llvm::format(" sum %.6g abs-sum %.6g", sum, absSum)
                 << llvm::format(" | vs reference: max abs err %.3g, max rel "
                                 "err %.3g",
                                 c.maxAbsError, c.maxRelError);
    if (run.verify) {
      bool ok = c.mismatches == 0;
      verified &= ok;
      llvm::outs() << (ok ? " [ok" : " [FAIL")
                   << llvm::format(" atol %g rtol %g", atol, rtol);
      if (!ok)
        llvm::outs() << ", " << c.mismatches << " mismatches, first at "
                     << c.firstMismatch << ": got " << t.get(c.firstMismatch)
                     << ", expected " << expected[i].data[c.firstMismatch];
      llvm::outs() << "]";
    }
    llvm::outs() << "\n";
    if (run.print)
      for (int64_t e = 0, n = t.numElements(); e < n; ++e)
        llvm::outs() << llvm::format("%.6g", t.get(e))
                     << ((e + 1) % 8 == 0 || e + 1 == n ? "\n" : " ");
  }
  auto resultIndex = [&](llvm::StringRef key) {
    return key == "out" || key == "0" ? 0 : key == "lse" || key == "1" ? 1 : -1;
  };
  auto writeNpy = [&](llvm::StringRef path, const std::vector<double> &values,
                      const std::vector<int64_t> &shape,
                      const std::string &dtype) {
    ::attn::npy::Array arr;
    std::string e = ::attn::npy::fromDoubles(values, shape, dtype, arr);
    if (e.empty())
      e = ::attn::npy::write(path.str(), arr);
    return e;
  };
  auto values = [](const HostTensor &t) {
    std::vector<double> v(t.numElements());
    for (size_t e = 0; e < v.size(); ++e)
      v[e] = t.get(static_cast<int64_t>(e));
    return v;
  };
  for (const std::string &s : run.outputs) {
    auto [key, path] = llvm::StringRef(s).split('=');
    int idx = resultIndex(key);
    if (idx < 0 || idx >= static_cast<int>(results.size()) || path.empty())
      return fail("bad --output '" + s + "'");
    const HostTensor &t = results[idx];
    std::string e = writeNpy(path, values(t), t.shape, npyDtype(t.kind));
    if (!e.empty())
      return fail("output " + key + ": " + e);
  }
  for (const std::string &s : run.referenceOutputs) {
    auto [key, path] = llvm::StringRef(s).split('=');
    int idx = resultIndex(key);
    if (idx < 0 || idx >= static_cast<int>(expected.size()) || path.empty())
      return fail("bad --reference-output '" + s + "'");
    std::string e =
        writeNpy(path, expected[idx].data, expected[idx].shape, "<f8");
    if (!e.empty())
      return fail("reference output " + key + ": " + e);
  }
  for (const std::string &s : run.saveInputs) {
    auto [key, path] = llvm::StringRef(s).split('=');
    int a = spec.findArg(key);
    if (a < 0 || path.empty())
      return fail("bad --save-input '" + s + "'");
    const HostTensor &t = binding.args[a];
    std::string e = writeNpy(path, values(t), t.shape, npyDtype(t.kind));
    if (!e.empty())
      return fail("input " + key + ": " + e);
  }
  if (run.verify && !verified)
    return fail("outputs differ from the reference beyond tolerance");
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
