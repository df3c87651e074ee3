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

#include "GpuDevice.h"
#include "GpuEmulate.h"

#include "attn/Conversion/Passes.h"
#include "attn/Execution/Jit.h"
#include "attn/Execution/ReferenceBridge.h"
#include "attn/Execution/RunReport.h"
#include "attn/Execution/SpecBinding.h"
#include "attn/Execution/TileMap.h"
#include "attn/IR/AttnOps.h"
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
static cl::opt<std::string>
    form("form",
         cl::desc("Attention form: naive (materialized scores), fused "
                  "(tiled online softmax) or decode (split-KV)"),
         cl::init("fused"), cl::cat(category));
static cl::opt<int64_t> tileQ("tile-q",
                              cl::desc("Query rows per tile (0 = default)"),
                              cl::init(0), cl::cat(category));
static cl::opt<int64_t> tileK("tile-k", cl::desc("Keys per tile (0 = default)"),
                              cl::init(0), cl::cat(category));
static cl::opt<int64_t> splits("splits",
                               cl::desc("KV chunks of the decode form"),
                               cl::init(4), cl::cat(category));
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
static cl::opt<std::string> targetCpu(
    "target-cpu",
    cl::desc("LLVM CPU to generate code for (haswell, znver4, x86-64, ...; "
             "empty: the host). This host must be able to run it"),
    cl::cat(category));
static cl::opt<std::string> targetFeatures(
    "target-features",
    cl::desc("LLVM target features over the CPU's own, e.g. +avx2,-avx512f "
             "(empty: none)"),
    cl::cat(category));
static cl::opt<unsigned> optLevel("O", cl::desc("LLVM optimization level"),
                                  cl::init(3), cl::Prefix, cl::cat(category));
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

static int fail(const llvm::Twine &msg) {
  llvm::errs() << "attn-run: error: " << msg << "\n";
  return 1;
}

/// Prints a library error as attn-run's error.
static int fail(llvm::Error err) {
  return fail(llvm::toString(std::move(err)));
}

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
  if (device == "gpu-emulate" && hasGpuLaunch(*module))
    return runGpuKernelModule(*module, entryName, seed, printValues);

  // The entry function and the roles of its arguments.
  auto spec = introspectSpec(*module, entryName, inputFile);
  if (!spec)
    return fail(spec.takeError());
  func::FuncOp fn = spec->entry;
  Operation *attnOp = spec->attnOp;

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
  if (device == "gpu-emulate") {
    if (printTileMap || countTiles)
      return fail("--tile-map and --count-tiles are not available with "
                  "--device=gpu-emulate");
    return runGpuEmulated(*module, *spec, *binding, reportOptions(), inputFile,
                          reportFile);
  }
  if (device == "gpu") {
    if (printTileMap || countTiles)
      return fail("--tile-map and --count-tiles are not available with "
                  "--device=gpu");
    GpuDeviceRun run;
    run.specPath = inputFile;
    run.report = reportOptions();
    run.reps = reps;
    run.reportFile = reportFile;
    return runOnGpu(*module, *spec, *binding, run);
  }
  if (device != "cpu")
    return fail("unknown --device '" + device + "': cpu, gpu or gpu-emulate");
  const llvm::StringMap<int64_t> &known = binding->sizes;
  std::vector<HostTensor> &hostArgs = binding->args;

  // Compile.
  auto attention = dyn_cast_or_null<AttentionOp>(attnOp);
  if ((printTileMap || countTiles) && !attention)
    return fail("--tile-map and --count-tiles need an attn.attention op");
  if ((printTileMap || countTiles) && attention.isRagged())
    return fail("--tile-map and --count-tiles do not take ragged batches");
  if ((printTileMap || countTiles) && form == "naive")
    return fail(std::string(printTileMap ? "--tile-map" : "--count-tiles") +
                " needs --form=fused or --form=decode");
  JitOptions jitOpts;
  if (llvm::Error err = jitOpts.setForm(form))
    return fail(std::move(err));
  jitOpts.optLevel = optLevel;
  jitOpts.tileQ = tileQ;
  jitOpts.tileK = tileK;
  jitOpts.splits = splits;
  jitOpts.instrumentTiles = countTiles;
  jitOpts.targetCpu = targetCpu;
  jitOpts.targetFeatures = targetFeatures;
  auto jit = JitFunction::compile(*module, fn.getSymName(), jitOpts);
  if (!jit)
    return fail("compilation failed: " + llvm::toString(jit.takeError()));

  // The tile map of the tiles the lowering chose, for these sizes.
  TileCounts predicted;
  if (printTileMap || countTiles) {
    llvm::ArrayRef<LoweringChoice> choices = (*jit)->loweringChoices();
    if (choices.size() != 1)
      return fail("the lowering reported " + llvm::Twine(choices.size()) +
                  " attention ops, expected one");
    int64_t nq = known.lookup("Nq"), nk = known.lookup("Nk"),
            batch = known.count("B") ? known.lookup("B") : 1;
    std::vector<int64_t> kvLens;
    if (Value kv = attention.getKvLen()) {
      const HostTensor &t = hostArgs[cast<BlockArgument>(kv).getArgNumber()];
      for (int64_t i = 0; i < t.numElements(); ++i)
        kvLens.push_back(t.getInt(i));
    }
    int64_t hkv = attention.getNumKvHeads();
    if (hkv == ShapedType::kDynamic)
      hkv = known.lookup("Hkv");
    predicted = tileMap(attention, hostArgs, batch, hkv, nq, nk, kvLens,
                        choices.front().tileQ, choices.front().tileK,
                        printTileMap ? &llvm::outs() : nullptr);
  }
  llvm::outs() << llvm::format("compile: %.3f s (form %s)\n",
                               (*jit)->compileSeconds(), form.c_str());
  const CpuTarget &target = (*jit)->target();
  llvm::outs() << "target: " << target.describe() << "\n";

  // Run.
  std::vector<const HostTensor *> argPtrs;
  for (auto &t : hostArgs)
    argPtrs.push_back(&t);
  std::vector<HostTensor> results;
  std::vector<double> times;
  // Warm-up run (first-call costs), which also measures memory and tiles.
  JitFunction::setAllocationLimit(maxAllocation);
  JitFunction::resetTileCounters();
  int64_t heapBefore = JitFunction::heapCurrentBytes();
  JitFunction::resetHeapPeak();
  if (llvm::Error err = (*jit)->invoke(argPtrs, results))
    return fail("run failed: " + llvm::toString(std::move(err)));
  int64_t peakHeap = JitFunction::heapPeakBytes() - heapBefore;
  // Outputs the kernel allocated (out-params are attn-run's buffers).
  int64_t outputBytes = 0;
  if (!(*jit)->resultsAreOutParams())
    for (const HostTensor &t : results)
      outputBytes += static_cast<int64_t>(t.bytes.size());
  auto [visited, boundaryVisited] = JitFunction::tileCounters();
  // The time of a call is that of the compiled function itself (with the
  // allocation of outputs of dynamic size), not of the copies into host
  // arrays around it.
  double warmCall = (*jit)->lastCallSeconds();
  for (unsigned r = 0; r < unsigned(reps); ++r) {
    if (llvm::Error err = (*jit)->invoke(argPtrs, results))
      return fail("run failed: " + llvm::toString(std::move(err)));
    times.push_back((*jit)->lastCallSeconds());
  }
  if (times.empty())
    times.push_back(warmCall); // --reps=0: the single (warm-up) run
  std::sort(times.begin(), times.end());
  double median = times[times.size() / 2];

  // Reference: always for --verify and --reference-output; otherwise only
  // when it is cheap (the f64 reference runs at well under 1 GFLOP/s).
  std::vector<::attn::ref::Tensor> expected;
  // FLOPs of the allowed pairs. The structural rules count them on the host;
  // a mask_mod region is counted by the reference (which evaluates it per
  // pair) when the reference runs, and GFLOP/s is not reported otherwise.
  // The structural count also estimates the reference's cost.
  double flops = 0, cost = 0;
  bool regionMask = attention && attention.getMaskModBlock();
  if (attention) {
    cost = structuralFlops(attention, hostArgs);
    flops = regionMask ? 0 : cost;
  }
  bool wantReference = verifyOpt || !referenceOutputs.empty() ||
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
  llvm::outs() << llvm::format("run: %.6f s median of %zu (min %.6f, max "
                               "%.6f)",
                               median, times.size(), times.front(),
                               times.back());
  if (flops > 0 && median > 0)
    llvm::outs() << llvm::format(", %.2f GFLOP/s", flops / median * 1e-9);
  llvm::outs() << "\n";
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
  report.printResults(llvm::outs(), results, reference);
  if (llvm::Error err = report.writeFiles(results, reference, hostArgs))
    return fail(std::move(err));
  if (!reportFile.empty()) {
    llvm::Error err = writeJSONReport(reportFile, [&](llvm::json::OStream &j) {
      j.attribute("spec", inputFile.getValue());
      j.attribute("form", form.getValue());
      j.attribute("compile_s", (*jit)->compileSeconds());
      j.attributeArray("lowering", [&] {
        for (const LoweringChoice &c : (*jit)->loweringChoices())
          j.object([&] { c.writeJSON(j); });
      });
      j.attributeObject("target", [&] {
        j.attribute("cpu", target.cpu);
        j.attribute("isa", target.isaName());
        j.attribute("features", target.features);
      });
      writeTimesJSON(j, times);
      j.attribute("flops", flops);
      j.attribute("gflops", median > 0 ? flops / median * 1e-9 : 0.0);
      j.attribute("peak_heap_bytes", peakHeap);
      j.attribute("output_bytes", outputBytes);
      j.attribute("extra_bytes", std::max<int64_t>(peakHeap - outputBytes, 0));
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
  cl::HideUnrelatedOptions(
      {&category, &gpuEmulateCategory, &gpuDeviceCategory});
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
