//===- GpuEmulate.cpp - attn-run --device=gpu-emulate on kernel modules ---===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// Runs a module of hand-written GPU kernels (a gpu.launch) on the warp-level
// emulator, on seeded random buffers. Specs go through the Runner
// (lib/Execution/Runner/EmulatorRunner.cpp) like on every other device.
//
//===----------------------------------------------------------------------===//

#include "GpuEmulate.h"

#include "attn/Execution/SpecBinding.h"
#include "attn/GPUEmulator/Emulator.h"
#include "attn/Support/ToolError.h"

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

static const ToolError fail("attn-run");

void mlir::attn::printEmulatorStats(const EmulatorStats &stats,
                                    double seconds) {
  llvm::outs() << llvm::format("emulate: %.3f s", seconds) << " ("
               << stats.launches
               << (stats.launches == 1 ? " launch, " : " launches, ")
               << stats.blocks << " blocks, " << stats.threads << " threads; "
               << stats.mmaSyncs << " mma.sync, ";
  if (stats.wgmmas)
    llvm::outs() << stats.wgmmas << " wgmma, ";
  llvm::outs()
      << stats.ldmatrices << " ldmatrix, " << stats.asyncCopies << " cp.async, "
      << stats.shuffles << " shuffles, " << stats.barriers
      << " barriers; warp-level ops counted per warp (wgmma per warpgroup), "
         "barriers per block)\n";
}

bool mlir::attn::hasGpuLaunch(ModuleOp module) {
  bool found = false;
  module.walk([&](gpu::LaunchOp) {
    found = true;
    return WalkResult::interrupt();
  });
  return found;
}

int mlir::attn::runGpuKernelModule(ModuleOp module, llvm::StringRef entry,
                                   unsigned seed, bool print,
                                   bool detectRaces) {
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
  opts.detectSharedRaces = detectRaces;
  EmulatorStats stats;
  opts.stats = &stats;
  auto start = std::chrono::steady_clock::now();
  llvm::Error err = emulate(module, fn.getSymName(), bufs, opts);
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (err)
    return fail("gpu emulation: " + llvm::toString(std::move(err)));
  printEmulatorStats(stats, seconds);
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
