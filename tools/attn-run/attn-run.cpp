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
#include "attn/Execution/SpecBinding.h"
#include "attn/Execution/TileMap.h"
#include "attn/IR/AttnOps.h"
#include "attn/Support/Npy.h"
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
               cl::desc("Write a JSON summary (times, GFLOP/s, memory, "
                        "errors) to this file"),
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
    cl::desc("Print the fused form's key-tile map for the given sizes: full "
             "('#'), boundary ('+') and skipped ('.') tiles"),
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
    if (printTileMap || countTiles || !reportFile.empty())
      return fail("--tile-map, --count-tiles and --report are not available "
                  "with --device=gpu-emulate");
    GpuEmulateRun run{verifyOpt,
                      atolOpt,
                      rtolOpt,
                      printValues,
                      {outputs.begin(), outputs.end()},
                      {referenceOutputs.begin(), referenceOutputs.end()},
                      {inputOutputs.begin(), inputOutputs.end()}};
    return runGpuEmulated(*module, *spec, *binding, run);
  }
  if (device == "gpu") {
    if (printTileMap || countTiles)
      return fail("--tile-map and --count-tiles are not available with "
                  "--device=gpu");
    GpuDeviceRun run;
    run.specPath = inputFile;
    run.verify = verifyOpt;
    run.atol = atolOpt;
    run.rtol = rtolOpt;
    run.print = printValues;
    run.reps = reps;
    run.outputs.assign(outputs.begin(), outputs.end());
    run.referenceOutputs.assign(referenceOutputs.begin(),
                                referenceOutputs.end());
    run.saveInputs.assign(inputOutputs.begin(), inputOutputs.end());
    run.reportFile = reportFile;
    return runOnGpu(*module, *spec, *binding, run);
  }
  if (device != "cpu")
    return fail("unknown --device '" + device + "': cpu, gpu or gpu-emulate");
  const llvm::StringMap<int64_t> &known = binding->sizes;
  std::vector<HostTensor> &hostArgs = binding->args;

  // Compile.
  // Tile map of the fused form for these sizes.
  TileCounts predicted;
  auto attention = dyn_cast_or_null<AttentionOp>(attnOp);
  if ((printTileMap || countTiles) && !attention)
    return fail("--tile-map and --count-tiles need an attn.attention op");
  if ((printTileMap || countTiles) && attention.isRagged())
    return fail("--tile-map and --count-tiles do not take ragged batches");
  if (printTileMap || countTiles) {
    int64_t nq = known.lookup("Nq"), nk = known.lookup("Nk"),
            batch = known.count("B") ? known.lookup("B") : 1;
    std::vector<int64_t> kvLens;
    if (Value kv = attention.getKvLen()) {
      const HostTensor &t = hostArgs[cast<BlockArgument>(kv).getArgNumber()];
      for (int64_t i = 0; i < t.numElements(); ++i)
        kvLens.push_back(t.getInt(i));
    }
    // The tiles the JIT will use: chosen for the same target it compiles
    // for (an unknown target is reported by the compilation below).
    auto target = resolveCpuTarget(targetCpu, targetFeatures);
    if (!target)
      return fail(target.takeError());
    TileSizes tiles =
        chooseTileSizes(attention, *target, form == "decode", tileQ, tileK);
    int64_t hkv = attention.getNumKvHeads();
    if (hkv == ShapedType::kDynamic)
      hkv = known.lookup("Hkv");
    predicted =
        tileMap(attention, hostArgs, batch, hkv, nq, nk, kvLens, tiles.q,
                tiles.k, printTileMap ? &llvm::outs() : nullptr);
  }

  JitOptions jitOpts;
  jitOpts.form = form;
  jitOpts.optLevel = optLevel;
  jitOpts.tileQ = tileQ;
  jitOpts.tileK = tileK;
  jitOpts.splits = splits;
  jitOpts.instrumentTiles = countTiles;
  jitOpts.targetCpu = targetCpu;
  jitOpts.targetFeatures = targetFeatures;
  if (countTiles && form == "naive")
    return fail("--count-tiles needs --form=fused or --form=decode");
  auto jit = JitFunction::compile(*module, fn.getSymName(), jitOpts);
  if (!jit)
    return fail("compilation failed: " + llvm::toString(jit.takeError()));
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
  JitFunction::resetTileCounters();
  int64_t heapBefore = JitFunction::heapCurrentBytes();
  JitFunction::resetHeapPeak();
  if (llvm::Error err = (*jit)->invoke(argPtrs, results))
    return fail("run failed: " + llvm::toString(std::move(err)));
  int64_t peakHeap = JitFunction::heapPeakBytes() - heapBefore;
  int64_t outputBytes = 0;
  for (const HostTensor &t : results)
    outputBytes += static_cast<int64_t>(t.bytes.size());
  auto [visited, boundaryVisited] = JitFunction::tileCounters();
  // The time of a call is that of the compiled function itself (with the
  // allocation of its outputs), not of the copies into host arrays around it.
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
  auto fnResults = fn.front().getTerminator()->getOperands();
  bool verified = true;
  bool canVerify = !refErr;
  if (verifyOpt && !canVerify)
    return fail("cannot verify: " + llvm::toString(std::move(refErr)));
  if (refErr)
    llvm::outs() << "reference: " << llvm::toString(std::move(refErr)) << "\n";
  if (canVerify) {
    // The reference knows the attn op's results; the function must return
    // them directly and in order.
    canVerify = fnResults.size() == attnOp->getNumResults();
    for (size_t i = 0; canVerify && i < fnResults.size(); ++i)
      canVerify = fnResults[i] == attnOp->getResult(i);
    if (verifyOpt && !canVerify)
      return fail("cannot verify: the entry function must return the attn "
                  "op's results, in order");
  }
  auto resultName = [&](size_t i) -> std::string {
    if (attnOp && isa<ProjectedAttentionOp>(attnOp))
      return "result";
    if (attnOp && fnResults.size() == attnOp->getNumResults())
      return i == 0 ? "out" : "lse";
    return "result" + std::to_string(i);
  };
  std::vector<double> maxAbsErrors;
  for (size_t i = 0; i < results.size(); ++i) {
    const HostTensor &t = results[i];
    double sum = 0, absSum = 0;
    for (int64_t e = 0, n = t.numElements(); e < n; ++e) {
      double v = t.get(e);
      if (std::isfinite(v)) {
        sum += v;
        absSum += std::fabs(v);
      }
    }
    llvm::outs() << resultName(i) << ": " << elementName(t.kind) << " "
                 << shapeStr(t.shape)
                 << llvm::format(" sum %.6g abs-sum %.6g", sum, absSum);
    if (canVerify) {
      double atol, rtol;
      defaultTolerance(t.kind, atol, rtol);
      if (atolOpt >= 0)
        atol = atolOpt;
      if (rtolOpt >= 0)
        rtol = rtolOpt;
      Comparison c = compare(t, expected[i], atol, rtol);
      maxAbsErrors.push_back(c.maxAbsError);
      llvm::outs() << llvm::format(
          " | vs reference: max abs err %.3g, max rel err %.3g", c.maxAbsError,
          c.maxRelError);
      if (verifyOpt) {
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
    }
    llvm::outs() << "\n";
    if (printValues) {
      for (int64_t e = 0, n = t.numElements(); e < n; ++e)
        llvm::outs() << llvm::format("%.6g", t.get(e))
                     << ((e + 1) % 8 == 0 || e + 1 == n ? "\n" : " ");
    }
  }
  auto findResult = [&](StringRef key) {
    unsigned n;
    if (!key.getAsInteger(10, n))
      return n < results.size() ? static_cast<int>(n) : -1;
    for (size_t i = 0; i < results.size(); ++i)
      if (resultName(i) == key)
        return static_cast<int>(i);
    return -1;
  };
  auto writeNpy = [&](StringRef path, const std::vector<double> &values,
                      const std::vector<int64_t> &shape,
                      const std::string &dtype) {
    ::attn::npy::Array arr;
    std::string err = ::attn::npy::fromDoubles(values, shape, dtype, arr);
    if (err.empty())
      err = ::attn::npy::write(path.str(), arr);
    return err;
  };
  for (const std::string &s : outputs) {
    auto [key, path] = StringRef(s).split('=');
    int idx = findResult(key);
    if (idx < 0 || path.empty())
      return fail("bad --output '" + s + "': no result named '" + key + "'");
    const HostTensor &t = results[idx];
    std::vector<double> values(t.numElements());
    for (size_t e = 0; e < values.size(); ++e)
      values[e] = t.get(static_cast<int64_t>(e));
    std::string err = writeNpy(path, values, t.shape, npyDtype(t.kind));
    if (!err.empty())
      return fail("output " + key + ": " + err);
  }
  for (const std::string &s : referenceOutputs) {
    auto [key, path] = StringRef(s).split('=');
    int idx = findResult(key);
    if (idx < 0 || path.empty())
      return fail("bad --reference-output '" + s + "': no result named '" +
                  key + "'");
    if (!canVerify)
      return fail("--reference-output: the reference cannot compute this "
                  "function's results");
    std::string err =
        writeNpy(path, expected[idx].data, expected[idx].shape, "<f8");
    if (!err.empty())
      return fail("reference output " + key + ": " + err);
  }
  for (const std::string &s : inputOutputs) {
    auto [key, path] = StringRef(s).split('=');
    int a = spec->findArg(key);
    if (a < 0 || path.empty())
      return fail("bad --save-input '" + s + "': no argument named '" + key +
                  "'");
    const HostTensor &t = hostArgs[a];
    std::vector<double> values(t.numElements());
    for (size_t e = 0; e < values.size(); ++e)
      values[e] = t.get(static_cast<int64_t>(e));
    std::string err = writeNpy(path, values, t.shape, npyDtype(t.kind));
    if (!err.empty())
      return fail("input " + key + ": " + err);
  }
  if (!reportFile.empty()) {
    std::error_code ec;
    llvm::raw_fd_ostream os(reportFile, ec);
    if (ec)
      return fail("cannot write " + reportFile + ": " + ec.message());
    llvm::json::OStream j(os, 2);
    j.object([&] {
      j.attribute("spec", inputFile.getValue());
      j.attribute("form", form.getValue());
      j.attribute("compile_s", (*jit)->compileSeconds());
      j.attributeObject("target", [&] {
        j.attribute("cpu", target.cpu);
        j.attribute("isa", target.isaName());
        j.attribute("features", target.features);
      });
      j.attribute("median_s", median);
      j.attribute("min_s", times.front());
      j.attribute("max_s", times.back());
      j.attributeArray("times_s", [&] {
        for (double t : times)
          j.value(t);
      });
      j.attribute("flops", flops);
      j.attribute("gflops", median > 0 ? flops / median * 1e-9 : 0.0);
      j.attribute("peak_heap_bytes", peakHeap);
      j.attribute("output_bytes", outputBytes);
      j.attribute("extra_bytes", std::max<int64_t>(peakHeap - outputBytes, 0));
      j.attribute("verified", verifyOpt ? llvm::json::Value(verified)
                                        : llvm::json::Value(nullptr));
      j.attributeArray("max_abs_error", [&] {
        for (double e : maxAbsErrors)
          j.value(e);
      });
    });
    os << "\n";
  }
  if (verifyOpt && !verified) {
    llvm::errs() << "attn-run: error: outputs differ from the reference "
                    "beyond tolerance\n";
    return 1;
  }
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
