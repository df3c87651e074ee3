//===- attn-run.cpp - compile an attn spec for the host and run it --------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// attn-run SPEC.mlir [--entry=F] [--size Nq=128 ...] [--input q=q.npy ...]
//                    [--output out=out.npy ...] [--verify] [--reps=N]
//
// Compiles the entry function of a spec for the host CPU (or another CPU this
// host can run: --target-cpu, --target-features) with the ExecutionEngine,
// feeds it seeded random tensors or .npy files, and prints compile time, run
// time (median over repetitions), GFLOP/s and a summary of each output.
// --verify compares every output with the independent f64 reference and exits
// non-zero beyond tolerance.
//
//===----------------------------------------------------------------------===//

#include "GpuEmulate.h"

#include "attn/Conversion/Passes.h"
#include "attn/Execution/Jit.h"
#include "attn/Execution/ReferenceBridge.h"
#include "attn/Execution/RunReport.h"
#include "attn/Execution/Runner.h"
#include "attn/Execution/SpecBinding.h"
#include "attn/Execution/TileMap.h"
#include "attn/IR/AttnOps.h"
#include "attn/Pipelines/CodegenFlags.h"
#include "attn/Support/ToolError.h"
#include "attn/Target/CpuTarget.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

using namespace mlir;
using namespace mlir::attn;
namespace cl = llvm::cl;

static const ToolError fail("attn-run");

static cl::OptionCategory category("attn-run options");
static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<spec.mlir>"),
                                      cl::Required, cl::cat(category));
static cl::opt<std::string>
    entryName("entry",
              cl::desc("Function to run (default: the only public "
                       "function with a body)"),
              cl::cat(category));
static cl::list<std::string>
    sizes("size",
          cl::desc("Value of a dynamic size: NAME=N with NAME one of "
                   "B, Hq, Hkv, Nq, Nk, Dqk, Dv, D (repeatable, or "
                   "comma-separated)"),
          cl::CommaSeparated, cl::cat(category));
static cl::list<std::string>
    shapes("shape",
           cl::desc("Shape of an argument: ARG=AxBxC where ARG is a "
                    "name (q, k, v, page_table, kv_len, mask, bias, alibi, x, "
                    "kv_source, wq, wk, wv, wo, mod_input0, mod_input1, "
                    "...) or an argument number"),
           cl::cat(category));
static cl::list<std::string>
    inputs("input", cl::desc("Read an argument from a .npy file: ARG=path"),
           cl::cat(category));
static cl::list<std::string>
    outputs("output",
            cl::desc("Write a result to a .npy file: RES=path, RES "
                     "one of out, lse, result or a result number"),
            cl::cat(category));
static cl::list<std::string> referenceOutputs(
    "reference-output",
    cl::desc("Write the f64 reference's value of a result to a .npy file "
             "(float64): RES=path"),
    cl::cat(category));
static cl::opt<std::string>
    reportFile("report",
               cl::desc("Write a JSON summary (what the lowering chose, "
                        "times, GFLOP/s, memory, errors; on every device) to "
                        "this file"),
               cl::cat(category));
static cl::list<std::string> inputOutputs(
    "save-input",
    cl::desc("Write an argument (random or loaded) to a .npy file: ARG=path"),
    cl::cat(category));
static cl::opt<unsigned> seed("seed", cl::desc("Seed of the random inputs"),
                              cl::init(1), cl::cat(category));
static cl::opt<bool> verifyOpt("verify",
                               cl::desc("Compare every output with the f64 "
                                        "reference; exit 1 beyond tolerance"),
                               cl::cat(category));
static cl::opt<double> atolOpt("atol", cl::desc("Absolute tolerance override"),
                               cl::init(-1), cl::cat(category));
static cl::opt<double> rtolOpt("rtol", cl::desc("Relative tolerance override"),
                               cl::init(-1), cl::cat(category));
static cl::opt<unsigned> reps("reps",
                              cl::desc("Timed repetitions after one warm-up "
                                       "run"),
                              cl::init(3), cl::cat(category));
static cl::opt<bool> printTileMap(
    "tile-map",
    cl::desc("Print the key-tile map of the tiles the fused or decode "
             "lowering chose, for the given sizes: full ('#'), boundary "
             "('+') and skipped ('.') tiles"),
    cl::cat(category));
static cl::opt<bool> countTiles(
    "count-tiles",
    cl::desc("Instrument the fused kernel, count the key tiles it computes "
             "and compare with the tile map"),
    cl::cat(category));
static cl::opt<bool> printValues("print", cl::desc("Print every output value"),
                                 cl::cat(category));
static cl::opt<int64_t> maxAllocation(
    "max-allocation",
    cl::desc("Make every allocation of the compiled code larger than this "
             "many bytes fail, as when memory runs out (0: no limit; CPU)"),
    cl::init(0), cl::cat(category));
static cl::opt<std::string>
    device("device",
           cl::desc("Where the spec runs: cpu (JIT for this host), gpu (an "
                    "NVIDIA GPU, through libattn_gpu_runtime) or gpu-emulate "
                    "(the GPU kernel on the warp-level emulator)"),
           cl::init("cpu"), cl::cat(category));

static cl::OptionCategory
    gpuCategory("attn-run options of --device=gpu and --device=gpu-emulate");
static CpuCodegenFlags cpuFlags(category);
static GpuCodegenFlags
    gpuFlags(gpuCategory,
             "NVIDIA chip to generate code for: sm_80, sm_86, sm_89, sm_90a, "
             "... (default: the device's, sm_90a on sm_90)",
             "isa");
static cl::opt<int> gpuDeviceIndex("gpu-device",
                                   cl::desc("CUDA device to run on"),
                                   cl::init(0), cl::cat(gpuCategory));
static cl::opt<bool> noRaceCheck(
    "emulate-no-race-check",
    cl::desc("Do not report shared-memory accesses between barriers that "
             "race between threads (--device=gpu-emulate)"),
    cl::cat(gpuCategory));
static cl::opt<bool> printGpuIR(
    "print-gpu-ir",
    cl::desc("Print the GPU form (convert-attn-to-gpu's output) emulated"),
    cl::cat(gpuCategory));

/// How the results are reported, whatever the device.
static ReportOptions reportOptions() {
  ReportOptions r;
  r.verify = verifyOpt;
  r.atol = atolOpt;
  r.rtol = rtolOpt;
  r.print = printValues;
  r.outputs.assign(outputs.begin(), outputs.end());
  r.referenceOutputs.assign(referenceOutputs.begin(), referenceOutputs.end());
  r.saveInputs.assign(inputOutputs.begin(), inputOutputs.end());
  return r;
}

/// The runner's options from the command line.
static llvm::Expected<RunnerOptions> runnerOptions(RunDevice dev,
                                                   std::string *gpuIR) {
  RunnerOptions opts;
  opts.device = dev;
  if (llvm::Error err = cpuFlags.apply(opts.cpu))
    return std::move(err);
  opts.cpu.instrumentTiles = countTiles;
  if (llvm::Error err = gpuFlags.apply(opts.gpu))
    return std::move(err);
  opts.gpuDevice = gpuDeviceIndex;
  opts.detectSharedRaces = !noRaceCheck;
  opts.loweredIR = printGpuIR ? gpuIR : nullptr;
  return opts;
}

/// What a device's failures start with.
static std::string errorPrefix(RunDevice dev, bool running) {
  switch (dev) {
  case RunDevice::Cpu:
    return running ? "run failed: " : "compilation failed: ";
  case RunDevice::Gpu:
    return "--device=gpu: ";
  case RunDevice::GpuEmulator:
    return running ? "run failed: " : "gpu emulation: ";
  }
  llvm_unreachable("unknown device");
}

/// The tile map of the tiles the lowering chose, for these sizes (printed
/// with --tile-map).
static TileCounts predictTiles(AttentionOp attention, const SpecBinding &b,
                               const LoweringChoice &choice) {
  const llvm::StringMap<int64_t> &known = b.sizes;
  // A named size, else the operand's static size (the binding does not
  // name sizes of 1: they may be broadcasts elsewhere), else 1.
  auto size = [&](StringRef name, Value operand, int64_t logical) {
    if (known.count(name))
      return known.lookup(name);
    if (attention.isPaged() && operand == attention.getKey())
      return int64_t(0); // a page pool: Nk is named when it is known
    int64_t s = cast<ShapedType>(operand.getType())
                    .getDimSize(attention.getPhysicalDim(logical));
    return ShapedType::isDynamic(s) ? int64_t(1) : s;
  };
  int64_t nq = size("Nq", attention.getQuery(), 2),
          nk = size("Nk", attention.getKey(), 2),
          batch = size("B", attention.getQuery(), 0);
  std::vector<int64_t> kvLens;
  if (Value kv = attention.getKvLen()) {
    const HostTensor &t = b.args[cast<BlockArgument>(kv).getArgNumber()];
    for (int64_t i = 0; i < t.numElements(); ++i)
      kvLens.push_back(t.getInt(i));
  }
  int64_t hkv = attention.getNumKvHeads();
  if (hkv == ShapedType::kDynamic)
    hkv = known.lookup("Hkv");
  return tileMap(attention, b.args, batch, hkv, nq, nk, kvLens, choice.tileQ,
                 choice.tileK, printTileMap ? &llvm::outs() : nullptr);
}

/// The lines that say what was compiled, for where.
static void printCompiled(Runner &runner) {
  if (const GpuDeviceDescription *d = runner.gpuDevice()) {
    const LoweringChoice &choice = runner.loweringChoices().front();
    llvm::outs() << "device: " << d->index << ": " << d->name << ", " << d->arch
                 << ", " << d->smCount << " SMs"
                 << llvm::format(", %.1f GiB", d->memoryGiB) << "\n"
                 << llvm::format("compile: %.3f s", runner.compileSeconds())
                 << " (chip " << d->chip << ", "
                 << (gpuFlags.format() == "isa"
                         ? "PTX compiled by the driver at the first launch"
                     : gpuFlags.format() == "bin" ? "cubin"
                                                  : "fatbin")
                 << ", warps " << choice.warps << ", tile-k " << choice.tileK
                 << (choice.wgmma > 1 ? ", S = Q K^T and O += P V on wgmma"
                     : choice.wgmma   ? ", S = Q K^T on wgmma"
                                      : "")
                 << ")\n";
  } else if (JitFunction *jit = runner.cpuFunction()) {
    llvm::outs() << llvm::format("compile: %.3f s (form %s)\n",
                                 runner.compileSeconds(),
                                 cpuFlags.formName().str().c_str())
                 << "target: " << jit->target().describe() << "\n";
    // What the lowering chose per attention op ("lowering: ..."), or the
    // versions chosen per call (--form=auto), each with its query lengths.
    for (const LoweringChoice &c : runner.loweringChoices()) {
      llvm::outs() << (c.isVersion() ? "version: " : "lowering: ");
      c.print(llvm::outs());
      llvm::outs() << "\n";
    }
  }
}

static int runMain(MLIRContext &context) {
  // Parse and verify the spec.
  std::string errorMessage;
  auto file = openInputFile(inputFile, &errorMessage);
  if (!file)
    return fail(errorMessage);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return fail("could not parse " + inputFile);
  if (failed(mlir::verify(*module)))
    return fail(inputFile + " does not verify");
  auto dev = parseRunDevice(device);
  if (!dev)
    return fail("unknown --device '" + device + "': cpu, gpu or gpu-emulate");
  if (*dev == RunDevice::GpuEmulator && hasGpuLaunch(*module))
    return runGpuKernelModule(*module, entryName, seed, printValues,
                              !noRaceCheck);

  // The entry function and the roles of its arguments.
  auto spec = introspectSpec(*module, entryName, inputFile);
  if (!spec)
    return fail(spec.takeError());
  func::FuncOp fn = spec->entry;
  Operation *attnOp = spec->attnOp;
  auto attention = dyn_cast_or_null<AttentionOp>(attnOp);

  // Sizes from the command line, .npy inputs and static types, checked
  // against the op's rules; then the memory guard and the random inputs.
  BindingOptions bindingOpts;
  bindingOpts.sizes.assign(sizes.begin(), sizes.end());
  bindingOpts.shapes.assign(shapes.begin(), shapes.end());
  bindingOpts.inputs.assign(inputs.begin(), inputs.end());
  auto binding = bindSizes(*spec, bindingOpts);
  if (!binding)
    return fail(binding.takeError());
  if (llvm::Error err = checkMemory(*spec, *binding))
    return fail(std::move(err));
  fillRandomInputs(*spec, *binding, seed);
  std::vector<HostTensor> &hostArgs = binding->args;

  bool onCpu = *dev == RunDevice::Cpu;
  if ((printTileMap || countTiles) && !onCpu)
    return fail("--tile-map and --count-tiles are not available with "
                "--device=" +
                device);
  if ((printTileMap || countTiles) && !attention)
    return fail("--tile-map and --count-tiles need an attn.attention op");
  if ((printTileMap || countTiles) && attention.isRagged())
    return fail("--tile-map and --count-tiles do not take ragged batches");
  if ((printTileMap || countTiles) && cpuFlags.formName() == "naive")
    return fail(std::string(printTileMap ? "--tile-map" : "--count-tiles") +
                " needs --form=fused or --form=decode");
  if (*dev == RunDevice::GpuEmulator && !attnOp)
    return fail("--device=gpu-emulate needs a function with an attn op");
  if (*dev == RunDevice::Gpu && !attnOp)
    return fail("--device=gpu needs a function with an attn op");
  // Compile.
  std::string gpuIR;
  auto runnerOpts = runnerOptions(*dev, &gpuIR);
  if (!runnerOpts)
    return fail(runnerOpts.takeError());
  auto runner = Runner::create(*module, fn.getSymName(), *runnerOpts);
  if (printGpuIR && *dev == RunDevice::GpuEmulator)
    llvm::outs() << gpuIR << "\n";
  if (!runner)
    return fail(errorPrefix(*dev, false) + llvm::toString(runner.takeError()));
  TileCounts predicted;
  if (printTileMap || countTiles) {
    // Under --form=auto the op has a version per form: the one for these
    // sizes.
    int64_t nq = binding->sizes.lookup("Nq");
    SmallVector<LoweringChoice> choices;
    for (const LoweringChoice &c : (*runner)->loweringChoices())
      if (c.runsFor(nq))
        choices.push_back(c);
    if (choices.size() != 1)
      return fail("the lowering reported " + llvm::Twine(choices.size()) +
                  " attention ops for Nq = " + llvm::Twine(nq) +
                  ", expected one");
    predicted = predictTiles(attention, *binding, choices.front());
  }
  printCompiled(**runner);

  // Run: a checked first call (first-call costs; memory and tiles on the
  // CPU), then the timed calls.
  std::vector<const HostTensor *> argPtrs;
  for (auto &t : hostArgs)
    argPtrs.push_back(&t);
  JitFunction::setAllocationLimit(maxAllocation);
  JitFunction::resetTileCounters();
  int64_t heapBefore = JitFunction::heapCurrentBytes();
  JitFunction::resetHeapPeak();
  std::vector<HostTensor> results;
  if (llvm::Error err = (*runner)->bind(argPtrs))
    return fail(errorPrefix(*dev, true) + llvm::toString(std::move(err)));
  if (llvm::Error err = (*runner)->run())
    return fail(errorPrefix(*dev, true) + llvm::toString(std::move(err)));
  if (llvm::Error err = (*runner)->fetch(results))
    return fail(errorPrefix(*dev, true) + llvm::toString(std::move(err)));
  int64_t peakHeap = JitFunction::heapPeakBytes() - heapBefore;
  auto [visited, boundaryVisited] = JitFunction::tileCounters();
  double firstCall = (*runner)->lastRunSeconds();
  std::vector<double> times;
  if (*dev != RunDevice::GpuEmulator) {
    auto timed = (*runner)->time(reps);
    if (!timed)
      return fail(errorPrefix(*dev, true) + llvm::toString(timed.takeError()));
    times = std::move(*timed);
  }
  bool firstCallOnly = times.empty();
  if (firstCallOnly)
    times.push_back(firstCall); // --reps=0: the single (first) call
  std::sort(times.begin(), times.end());
  double median = times[times.size() / 2];
  if (const EmulatorStats *stats = (*runner)->emulatorStats())
    printEmulatorStats(*stats, firstCall);

  // Reference: always for --verify, --reference-output and the emulator;
  // otherwise only when it is cheap (the f64 reference runs at well under
  // 1 GFLOP/s). FLOPs of the allowed pairs: the structural rules count them
  // on the host; a mask_mod region is counted by the reference (which
  // evaluates it per pair) when it runs, and FLOP/s is not reported
  // otherwise. The structural count also estimates the reference's cost.
  std::vector<::attn::ref::Tensor> expected;
  double flops = 0, cost = 0;
  bool regionMask = attention && attention.getMaskModBlock();
  if (attention) {
    cost = structuralFlops(attention, hostArgs);
    flops = regionMask ? 0 : cost;
  }
  bool wantReference = verifyOpt || !referenceOutputs.empty() ||
                       *dev == RunDevice::GpuEmulator ||
                       (attnOp && (!attention || cost <= 2e9));
  llvm::Error refErr = llvm::Error::success();
  if (!attnOp)
    refErr = llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "the entry function has no attn op");
  else if (wantReference)
    refErr = runReference(attnOp, argPtrs, expected,
                          attention && !regionMask ? nullptr : &flops);
  else
    refErr = llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "reference skipped (too expensive; --verify forces it)");

  const GpuDeviceDescription *gpu = (*runner)->gpuDevice();
  // (attn.projected_attention: the GEMMs' traffic is not counted.)
  double ioBytes =
      gpu && attention ? trafficBytes(attention, hostArgs, results) : 0;
  if (*dev != RunDevice::GpuEmulator) {
    llvm::outs() << llvm::format("run: %.6f s median of %zu (min %.6f, max "
                                 "%.6f",
                                 median, times.size(), times.front(),
                                 times.back());
    if (gpu)
      llvm::outs() << "; "
                   << (firstCallOnly ? "first call, host clock"
                                     : (*runner)->clockName());
    llvm::outs() << ")";
    if (flops > 0 && median > 0)
      llvm::outs() << (gpu ? llvm::format(", %.2f TFLOP/s",
                                          flops / median * 1e-12)
                           : llvm::format(", %.2f GFLOP/s",
                                          flops / median * 1e-9));
    if (gpu && median > 0) {
      double gbs = ioBytes / median * 1e-9;
      llvm::outs() << llvm::format(", %.1f GB/s", gbs);
      if (gpu->bandwidthGBs > 0)
        llvm::outs() << llvm::format(" (%.1f%% of %.0f GB/s)",
                                     100 * gbs / gpu->bandwidthGBs,
                                     gpu->bandwidthGBs);
    }
    if (gpu)
      llvm::outs() << llvm::format("; first call %.3f s", firstCall);
    llvm::outs() << "\n";
  }
  // Outputs the kernel allocated (out-params are attn-run's buffers).
  int64_t outputBytes = 0;
  if (onCpu && !(*runner)->cpuFunction()->resultsAreOutParams())
    for (const HostTensor &t : results)
      outputBytes += static_cast<int64_t>(t.bytes.size());
  if (onCpu)
    llvm::outs() << llvm::format(
        "memory: peak %.3f MiB allocated by the kernel, %.3f MiB of it "
        "outputs, %.3f MiB extra\n",
        peakHeap / 1048576.0, outputBytes / 1048576.0,
        std::max<int64_t>(peakHeap - outputBytes, 0) / 1048576.0);
  if (countTiles) {
    int64_t wantVisited = predicted.full + predicted.boundary;
    int64_t wantBoundary = predicted.boundary;
    bool match = visited == wantVisited && boundaryVisited == wantBoundary;
    llvm::outs() << "counted tiles: " << visited << " computed, "
                 << boundaryVisited << " with mask arithmetic; tile map "
                 << "predicts " << wantVisited << " and " << wantBoundary
                 << (match ? " [match]" : " [MISMATCH]") << "\n";
    if (!match)
      return fail("the kernel computed a different set of tiles than the "
                  "tile map predicts");
  }

  // Results: summary, optional files, verification.
  bool canVerify = !refErr;
  if (verifyOpt && !canVerify)
    return fail("cannot verify: " + llvm::toString(std::move(refErr)));
  if (refErr)
    llvm::outs() << "reference: " << llvm::toString(std::move(refErr)) << "\n";
  RunReport report(reportOptions(), *spec);
  if (canVerify)
    if (llvm::Error err = report.checkVerifiable(canVerify))
      return fail(std::move(err));
  const std::vector<::attn::ref::Tensor> *reference =
      canVerify ? &expected : nullptr;
  std::optional<ElementKind> computeKind =
      hostArgs.empty()
          ? std::nullopt
          : (*runner)->computeKind(hostArgs[0].kind,
                                   attention && attention.isQuantized());
  report.printResults(llvm::outs(), results, reference, computeKind);
  if (llvm::Error err = report.writeFiles(results, reference, hostArgs))
    return fail(std::move(err));
  if (!reportFile.empty()) {
    llvm::Error err = writeJSONReport(reportFile, [&](llvm::json::OStream &j) {
      j.attribute("spec", inputFile.getValue());
      j.attribute("device", device.getValue());
      if (onCpu)
        j.attribute("form", cpuFlags.formName());
      j.attributeArray("lowering", [&] {
        for (const LoweringChoice &c : (*runner)->loweringChoices())
          j.object([&] { c.writeJSON(j); });
      });
      (*runner)->writeJSON(j);
      j.attribute("compile_s", (*runner)->compileSeconds());
      if (*dev == RunDevice::GpuEmulator) {
        j.attribute("emulate_s", firstCall);
      } else {
        j.attribute("first_call_s", firstCall);
        writeTimesJSON(j, times);
        j.attribute("flops", flops);
      }
      if (onCpu) {
        j.attribute("gflops", median > 0 ? flops / median * 1e-9 : 0.0);
        j.attribute("peak_heap_bytes", peakHeap);
        j.attribute("output_bytes", outputBytes);
        j.attribute("extra_bytes",
                    std::max<int64_t>(peakHeap - outputBytes, 0));
      }
      if (gpu) {
        j.attribute("tflops", median > 0 ? flops / median * 1e-12 : 0.0);
        j.attribute("io_bytes", ioBytes);
        j.attribute("gbs", median > 0 ? ioBytes / median * 1e-9 : 0.0);
      }
      report.writeJSON(j);
    });
    if (err)
      return fail(std::move(err));
  }
  if (llvm::Error err = report.verificationError())
    return fail(std::move(err));
  return 0;
}

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  // Generated code reports a failed run-time check with `puts` and aborts:
  // a line-buffered C stdout writes the message before the abort, also
  // into a pipe.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  cl::HideUnrelatedOptions({&category, &gpuCategory});
  cl::ParseCommandLineOptions(
      argc, argv,
      "attn-run: compile an attn spec for the host CPU, run it, and check it "
      "against the f64 reference\n");
  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registry.insert<AttnDialect>();
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  return runMain(context);
}
