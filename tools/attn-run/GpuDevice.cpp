//===- GpuDevice.cpp - attn-run --device=gpu ------------------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// Runs a spec on an NVIDIA GPU: the GPU pipeline (lowerToGpu's passes)
// rewrites the entry into a host function on memrefs (the inputs, then the
// results as trailing out-parameters) whose kernels are a gpu.binary; the
// ExecutionEngine JITs that host code, whose mgpu* calls resolve to
// libattn_gpu_runtime. The inputs are the CPU path's (SpecBinding), copied to
// device buffers; the host function is called with memref descriptors of
// device pointers on a stream of ours (the runtime's current stream), timed
// with events, and the outputs are copied back and compared with the f64
// reference as --device=gpu-emulate does.
//
//===----------------------------------------------------------------------===//

#include "GpuDevice.h"
#include "GpuEmulate.h"

#include "attn-c/Gpu.h"
#include "attn-c/Kernel.h"
#include "attn/Execution/ReferenceBridge.h"
#include "attn/Execution/TileMap.h"
#include "attn/IR/AttnOps.h"
#include "attn/Pipelines/GpuPipeline.h"
#include "attn/Schedule/LoweringChoice.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <dlfcn.h>

using namespace mlir;
using namespace mlir::attn;
namespace cl = llvm::cl;

cl::OptionCategory
    mlir::attn::gpuDeviceCategory("attn-run options of --device=gpu");
static cl::opt<std::string> gpuChip(
    "gpu-chip",
    cl::desc("NVIDIA chip to generate code for: sm_80, sm_86, sm_89, sm_90a, "
             "... (default: the device's, sm_90a on sm_90)"),
    cl::cat(gpuDeviceCategory));
static cl::opt<std::string>
    gpuFormat("gpu-format",
              cl::desc("GPU binary: isa (PTX, compiled by the driver when "
                       "loaded), bin (cubin, needs ptxas) or fatbin"),
              cl::init("isa"), cl::cat(gpuDeviceCategory));
static cl::opt<int64_t>
    gpuSplits("gpu-splits",
              cl::desc("Split-KV chunks of the GPU decode kernel (-1: chosen "
                       "at run time, 0: off)"),
              cl::init(-1), cl::cat(gpuDeviceCategory));
static cl::opt<int> gpuDeviceIndex("gpu-device",
                                   cl::desc("CUDA device to run on"),
                                   cl::init(0), cl::cat(gpuDeviceCategory));

static int fail(const llvm::Twine &msg) {
  llvm::errs() << "attn-run: error: " << msg << "\n";
  return 1;
}

/// "sm_XY" -> XY (and whether it is architecture-specific, "sm_90a").
static bool parseChip(llvm::StringRef chip, unsigned &cc, bool &archSpecific) {
  if (!chip.consume_front("sm_"))
    return false;
  llvm::StringRef digits = chip.take_while(llvm::isDigit);
  if (digits.empty() || digits.getAsInteger(10, cc))
    return false;
  llvm::StringRef rest = chip.drop_front(digits.size());
  archSpecific = rest == "a";
  return rest.empty() || archSpecific;
}

/// The chip to generate code for on a device of compute capability
/// major.minor: sm_90 gets sm_90a (the wgmma/TMA features), others sm_XY.
static std::string chipForDevice(const attn_gpu_device_info_t &info) {
  std::string chip = "sm_" + std::to_string(info.compute_capability_major) +
                     std::to_string(info.compute_capability_minor);
  if (info.compute_capability_major == 9 && info.compute_capability_minor == 0)
    chip += "a";
  return chip;
}

/// The driver's first recorded error (cleared), or `what` failed.
static std::string driverError(llvm::StringRef what) {
  const char *e = attn_gpu_take_error();
  return e ? std::string(e) : (what + " failed").str();
}

/// The mgpu* functions the generated host code calls: resolved from the
/// process (attn-run links libattn_gpu_runtime), named explicitly so that a
/// missing one shows as an unresolved symbol rather than a wrong binding.
static const char *const mgpuFunctions[] = {
    "mgpuModuleLoad",
    "mgpuModuleLoadJIT",
    "mgpuModuleUnload",
    "mgpuModuleGetFunction",
    "mgpuLaunchKernel",
    "mgpuLaunchClusterKernel",
    "mgpuStreamCreate",
    "mgpuStreamDestroy",
    "mgpuStreamSynchronize",
    "mgpuStreamWaitEvent",
    "mgpuEventCreate",
    "mgpuEventDestroy",
    "mgpuEventSynchronize",
    "mgpuEventRecord",
    "mgpuMemAlloc",
    "mgpuMemFree",
    "mgpuMemcpy",
    "mgpuMemset32",
    "mgpuMemset16",
    "mgpuMemHostRegister",
    "mgpuMemHostRegisterMemRef",
    "mgpuMemHostUnregister",
    "mgpuMemHostUnregisterMemRef",
    "mgpuTensorMapEncodeTiledMemref",
    "mgpuSetDefaultDevice",
    // The run-time checks' error channel of the host code (libattn_runtime).
    "attn_rt_error_context",
    "attn_rt_check_failed",
    "attn_rt_has_failed",
};

/// A strided memref descriptor of a contiguous row-major buffer:
/// {allocated, aligned, offset, sizes[rank], strides[rank]}.
static std::vector<int64_t> descriptor(void *ptr,
                                       const std::vector<int64_t> &shape) {
  auto p = reinterpret_cast<int64_t>(ptr);
  std::vector<int64_t> desc = {p, p, 0};
  desc.insert(desc.end(), shape.begin(), shape.end());
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  desc.insert(desc.end(), strides.begin(), strides.end());
  return desc;
}

int mlir::attn::runOnGpu(ModuleOp module, const SpecInfo &spec,
                         const SpecBinding &binding, const GpuDeviceRun &run) {
  auto attention = dyn_cast_or_null<AttentionOp>(spec.attnOp);
  if (!attention)
    return fail("--device=gpu needs a function with an attn.attention op");
  func::FuncOp fn = spec.entry;
  auto fnResults = fn.front().getTerminator()->getOperands();
  bool direct = fnResults.size() == attention->getNumResults();
  for (size_t i = 0; direct && i < fnResults.size(); ++i)
    direct = fnResults[i] == attention->getResult(i);
  if (!direct)
    return fail("--device=gpu: the entry function must return the attn op's "
                "results, in order");
  if (gpuFormat != "isa" && gpuFormat != "bin" && gpuFormat != "fatbin")
    return fail("unknown --gpu-format '" + gpuFormat +
                "': expected isa, bin or fatbin");

  MLIRContext *ctx = module.getContext();
  {
    DialectRegistry registry;
    registerGpuCodegen(registry);
    ctx->appendDialectRegistry(registry);
  }
  GpuCodegenOptions codegen;
  codegen.format = gpuFormat;
  codegen.warps = gpuWarps;
  codegen.tileK = gpuTileK;
  codegen.splits = gpuSplits;
  GpuPipelineOptions pipelineOpts;
  // An explicit chip is checked before anything needs a GPU.
  if (!gpuChip.empty()) {
    codegen.chip = gpuChip;
    setPipelineOptions(pipelineOpts, codegen);
    PassManager pm(ctx);
    if (llvm::Error e = buildAttnGpuPipeline(pm, pipelineOpts))
      return fail("--device=gpu: " + llvm::toString(std::move(e)));
  }

  // The device.
  if (!attn_gpu_available())
    return fail(llvm::Twine("--device=gpu: no usable GPU: ") +
                attn_gpu_unavailable_reason());
  int count = attn_gpu_device_count();
  if (gpuDeviceIndex < 0 || gpuDeviceIndex >= count)
    return fail("--gpu-device=" + llvm::Twine(int(gpuDeviceIndex)) +
                ": there are " + llvm::Twine(count) + " CUDA devices");
  attn_gpu_set_device(gpuDeviceIndex);
  attn_gpu_device_info_t info;
  if (attn_gpu_device_info(gpuDeviceIndex, &info))
    return fail("--device=gpu: " + driverError("attn_gpu_device_info"));
  unsigned deviceCC =
      info.compute_capability_major * 10 + info.compute_capability_minor;
  std::string deviceArch = "sm_" + std::to_string(deviceCC);
  std::string chip = gpuChip.empty() ? chipForDevice(info) : gpuChip.getValue();
  unsigned chipCC = 0;
  bool archSpecific = false;
  if (!parseChip(chip, chipCC, archSpecific))
    return fail("--device=gpu: unknown chip '" + chip +
                "': expected sm_80, sm_90a, ...");
  // PTX runs on its chip and newer ones (through the driver's JIT); a cubin
  // only on its major version; "a" code only on its own chip.
  bool runs = archSpecific ? chipCC == deviceCC
              : gpuFormat == "bin"
                  ? chipCC / 10 == deviceCC / 10 && chipCC <= deviceCC
                  : chipCC <= deviceCC;
  if (!runs)
    return fail("--device=gpu: code for " + chip +
                " (--gpu-format=" + gpuFormat + ") cannot run on device " +
                llvm::Twine(int(gpuDeviceIndex)) + " (" + info.name + ", " +
                deviceArch + ")");
  codegen.chip = chip;
  setPipelineOptions(pipelineOpts, codegen);
  llvm::outs() << "device: " << int(gpuDeviceIndex) << ": " << info.name << ", "
               << deviceArch << ", " << info.sm_count << " SMs"
               << llvm::format(", %.1f GiB",
                               info.total_memory_bytes / 1073741824.0)
               << "\n";

  // Lower a clone holding only the entry (every function becomes kernels).
  auto compileStart = std::chrono::steady_clock::now();
  OwningOpRef<ModuleOp> clone(module.clone());
  llvm::StringRef name = fn.getSymName();
  for (auto f : llvm::make_early_inc_range(clone->getOps<func::FuncOp>()))
    if (f.getSymName() != name &&
        SymbolTable::symbolKnownUseEmpty(f, clone->getOperation()))
      f.erase();
  clone->lookupSymbol<func::FuncOp>(name)->setAttr("llvm.emit_c_interface",
                                                   UnitAttr::get(ctx));
  {
    PassManager pm(ctx);
    if (llvm::Error e = buildAttnGpuPipeline(pm, pipelineOpts))
      return fail("--device=gpu: " + llvm::toString(std::move(e)));
    // The lowering's diagnostics name the spec's op; not its generic form.
    bool printOp = ctx->shouldPrintOpOnDiagnostic();
    ctx->printOpOnDiagnostic(false);
    LogicalResult lowered = pm.run(*clone);
    ctx->printOpOnDiagnostic(printOp);
    if (failed(lowered))
      return fail("--device=gpu: lowering to GPU kernels failed");
  }
  // What the lowering chose (warps from the rows when --gpu-warps is 0).
  llvm::SmallVector<LoweringChoice> choices;
  if (Operation *lowered = clone->lookupSymbol(name))
    choices = readLoweringChoices(lowered);
  if (choices.size() != 1)
    return fail("--device=gpu: the lowering reported " +
                llvm::Twine(choices.size()) +
                " attention kernels, expected one");
  const LoweringChoice &choice = choices.front();
  size_t numIn = binding.args.size(), numOut = fnResults.size();
  std::string cifaceName = ("_mlir_ciface_" + name).str();
  auto ciface = clone->lookupSymbol<LLVM::LLVMFuncOp>(cifaceName);
  if (!ciface)
    return fail("--device=gpu: the lowered module has no " + cifaceName);
  if (ciface.getFunctionType().getNumParams() != numIn + numOut)
    return fail("--device=gpu: " + cifaceName + " takes " +
                llvm::Twine(ciface.getFunctionType().getNumParams()) +
                " arguments; expected " + llvm::Twine(numIn) + " inputs and " +
                llvm::Twine(numOut) + " out-parameters");

  // JIT the host code.
  static bool nativeTarget = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)nativeTarget;
  auto tmBuilder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!tmBuilder)
    return fail("--device=gpu: " + llvm::toString(tmBuilder.takeError()));
  auto tm = tmBuilder->createTargetMachine();
  if (!tm)
    return fail("--device=gpu: " + llvm::toString(tm.takeError()));
  auto transformer =
      makeOptimizingTransformer(/*optLevel=*/2, /*sizeLevel=*/0, tm->get());
  ExecutionEngineOptions engineOpts;
  engineOpts.transformer = transformer;
  engineOpts.enablePerfNotificationListener = false;
  auto engine = ExecutionEngine::create(*clone, engineOpts, std::move(*tm));
  if (!engine)
    return fail("--device=gpu: JIT of the host code failed: " +
                llvm::toString(engine.takeError()));
  (*engine)->registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap map;
    for (const char *fnName : mgpuFunctions)
      if (void *addr = dlsym(RTLD_DEFAULT, fnName))
        map[interner(fnName)] = {llvm::orc::ExecutorAddr::fromPtr(addr),
                                 llvm::JITSymbolFlags::Exported};
    return map;
  });
  // Global constructors: the module image is recorded (no driver call yet).
  (*engine)->initialize();
  auto entryFn = (*engine)->lookupPacked(cifaceName);
  if (!entryFn)
    return fail("--device=gpu: " + llvm::toString(entryFn.takeError()));
  double compileSeconds = std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - compileStart)
                              .count();
  llvm::outs() << llvm::format("compile: %.3f s", compileSeconds) << " (chip "
               << chip << ", "
               << (gpuFormat == "isa"   ? "PTX compiled by the driver at the "
                                          "first launch"
                   : gpuFormat == "bin" ? "cubin"
                                        : "fatbin")
               << ", warps " << choice.warps << ", tile-k " << choice.tileK
               << ")\n";

  // Device buffers: the inputs, then the outputs (shapes from q and v:
  // out is q's with v's head dimension, lse is [B, Hq, Nq]).
  std::vector<HostTensor> results(numOut);
  {
    const std::vector<int64_t> &q =
        binding.args[cast<BlockArgument>(attention.getQuery()).getArgNumber()]
            .shape;
    const std::vector<int64_t> &v =
        binding.args[cast<BlockArgument>(attention.getValue()).getArgNumber()]
            .shape;
    bool bnhd = attention.getLayout() == Layout::bnhd;
    for (size_t i = 0; i < numOut; ++i) {
      auto type = cast<RankedTensorType>(fn.getResultTypes()[i]);
      ElementKind kind;
      if (!getElementKind(type.getElementType(), kind))
        return fail("--device=gpu: result " + llvm::Twine(i) +
                    " has an unsupported element type");
      std::vector<int64_t> shape =
          i == 0 ? std::vector<int64_t>{q[0], q[1], q[2], v[3]}
          : bnhd ? std::vector<int64_t>{q[0], q[2], q[1]}
                 : std::vector<int64_t>{q[0], q[1], q[2]};
      for (int64_t d = 0; d < type.getRank(); ++d)
        if (d >= static_cast<int64_t>(shape.size()) ||
            (!type.isDynamicDim(d) && type.getDimSize(d) != shape[d]))
          return fail("--device=gpu: result " + llvm::Twine(i) +
                      " has an unexpected type");
      results[i].resize(kind, shape);
    }
  }
  std::vector<void *> devicePtrs;
  llvm::scope_exit freeBuffers([&] {
    for (void *p : devicePtrs)
      attn_gpu_free(p);
  });
  auto allocate = [&](size_t bytes) {
    void *p = attn_gpu_malloc(std::max<size_t>(bytes, 1));
    if (p)
      devicePtrs.push_back(p);
    return p;
  };
  std::vector<std::vector<int64_t>> descs;
  for (const HostTensor &t : binding.args) {
    void *p = allocate(t.bytes.size());
    if (!p || (!t.bytes.empty() &&
               attn_gpu_memcpy_h2d(p, t.bytes.data(), t.bytes.size())))
      return fail("--device=gpu: copying the inputs to the device: " +
                  driverError("attn_gpu_malloc"));
    descs.push_back(descriptor(p, t.shape));
  }
  // A copy from pageable memory may return before its DMA lands; that
  // copy is on CUDA's default stream, which our non-blocking stream does
  // not wait for.
  if (attn_gpu_stream_synchronize(nullptr))
    return fail("--device=gpu: copying the inputs to the device: " +
                driverError("attn_gpu_stream_synchronize"));
  void *stream = attn_gpu_stream_create();
  if (!stream)
    return fail("--device=gpu: " + driverError("attn_gpu_stream_create"));
  llvm::scope_exit destroyStream([&] {
    attn_gpu_clear_current_stream();
    attn_gpu_stream_destroy(stream);
  });
  std::vector<void *> outputPtrs;
  for (const HostTensor &t : results) {
    void *p = allocate(t.bytes.size());
    // NaN bit patterns: elements the kernels never write show.
    if (!p ||
        attn_gpu_memset(p, 0xff, std::max<size_t>(t.bytes.size(), 1), stream))
      return fail("--device=gpu: allocating the outputs: " +
                  driverError("attn_gpu_malloc"));
    outputPtrs.push_back(p);
    descs.push_back(descriptor(p, t.shape));
  }
  std::vector<void *> descPtrs;
  for (auto &d : descs)
    descPtrs.push_back(d.data());
  llvm::SmallVector<void *> packed;
  for (void *&p : descPtrs)
    packed.push_back(&p);

  // The first call (module load, the driver's PTX compilation), checked;
  // the generated code runs on our stream and synchronizes it.
  attn_gpu_take_error();
  attn_gpu_set_current_stream(stream, 0);
  auto firstStart = std::chrono::steady_clock::now();
  attn_rt_clear_error();
  (*entryFn)(packed.data());
  attn_gpu_stream_synchronize(stream);
  double firstSeconds = std::chrono::duration<double>(
                            std::chrono::steady_clock::now() - firstStart)
                            .count();
  // A failed run-time check: nothing was launched.
  if (attn_rt_take_error() != ATTN_STATUS_OK)
    return fail(attn_last_error());
  if (const char *e = attn_gpu_take_error())
    return fail(llvm::Twine("--device=gpu: the run failed: ") + e);
  for (size_t i = 0; i < numOut; ++i)
    if (!results[i].bytes.empty() &&
        attn_gpu_memcpy_d2h(results[i].bytes.data(), outputPtrs[i],
                            results[i].bytes.size()))
      return fail("--device=gpu: copying the outputs back: " +
                  driverError("attn_gpu_memcpy_d2h"));

  // Timed calls: events around each call on the stream, which the generated
  // code then only queues work on.
  std::vector<double> times;
  if (run.reps > 0) {
    void *start = attn_gpu_event_create(), *end = attn_gpu_event_create();
    llvm::scope_exit destroyEvents([&] {
      if (start)
        attn_gpu_event_destroy(start);
      if (end)
        attn_gpu_event_destroy(end);
    });
    if (!start || !end)
      return fail("--device=gpu: " + driverError("attn_gpu_event_create"));
    attn_gpu_set_current_stream(stream, ATTN_GPU_STREAM_ASYNC);
    for (unsigned r = 0; r < run.reps; ++r) {
      float ms = 0;
      attn_gpu_event_record(start, stream);
      (*entryFn)(packed.data());
      attn_gpu_event_record(end, stream);
      if (attn_gpu_event_synchronize(end) ||
          attn_gpu_event_elapsed_ms(start, end, &ms))
        return fail("--device=gpu: timing: " +
                    driverError("attn_gpu_event_elapsed_ms"));
      if (const char *e = attn_gpu_take_error())
        return fail(llvm::Twine("--device=gpu: a timed run failed: ") + e);
      times.push_back(ms * 1e-3);
    }
    attn_gpu_set_current_stream(stream, 0);
  }
  if (times.empty())
    times.push_back(firstSeconds); // --reps=0: the first call, host time
  std::sort(times.begin(), times.end());
  double median = times[times.size() / 2];

  // The reference: for --verify and --reference-output, or when cheap.
  std::vector<const HostTensor *> argPtrs;
  for (const HostTensor &t : binding.args)
    argPtrs.push_back(&t);
  bool regionMask = attention.getMaskModBlock() != nullptr;
  double cost = structuralFlops(attention, binding.args);
  double flops = regionMask ? 0 : cost;
  bool wantReference =
      run.report.verify || !run.report.referenceOutputs.empty() || cost <= 2e9;
  std::vector<::attn::ref::Tensor> expected;
  llvm::Error refErr = llvm::Error::success();
  if (wantReference)
    refErr = runReference(attention, argPtrs, expected,
                          regionMask ? &flops : nullptr);
  else
    refErr = llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "reference skipped (too expensive; --verify forces it)");
  llvm::outs() << llvm::format(
      "run: %.6f s median of %zu (min %.6f, max "
      "%.6f; %s)",
      median, times.size(), times.front(), times.back(),
      run.reps > 0 ? "CUDA events" : "first call, host clock");
  if (flops > 0 && median > 0)
    llvm::outs() << llvm::format(", %.2f TFLOP/s", flops / median * 1e-12);
  // Every input read and every output written once, K and V only up to
  // kv_len: the floor of the memory traffic (decode is bound by it).
  double kvFraction = 1;
  if (Value kvLen = attention.getKvLen()) {
    const HostTensor &lens =
        binding.args[cast<BlockArgument>(kvLen).getArgNumber()];
    const std::vector<int64_t> &k =
        binding.args[cast<BlockArgument>(attention.getKey()).getArgNumber()]
            .shape;
    int64_t nk = attention.getLayout() == Layout::bnhd ? k[1] : k[2];
    double read = 0;
    for (int64_t b = 0, n = lens.numElements(); b < n; ++b)
      read += std::clamp<int64_t>(lens.getInt(b), 0, nk);
    if (lens.numElements() > 0 && nk > 0)
      kvFraction = read / (double(lens.numElements()) * double(nk));
  }
  double ioBytes = 0;
  for (auto [a, t] : llvm::enumerate(binding.args)) {
    Value arg = fn.getArgument(a);
    bool isKv = arg == attention.getKey() || arg == attention.getValue();
    ioBytes += static_cast<double>(t.bytes.size()) * (isKv ? kvFraction : 1);
  }
  for (const HostTensor &t : results)
    ioBytes += static_cast<double>(t.bytes.size());
  if (median > 0) {
    double gbs = ioBytes / median * 1e-9;
    llvm::outs() << llvm::format(", %.1f GB/s", gbs);
    if (info.memory_bandwidth_gbs > 0)
      llvm::outs() << llvm::format(" (%.1f%% of %.0f GB/s)",
                                   100 * gbs / info.memory_bandwidth_gbs,
                                   info.memory_bandwidth_gbs);
  }
  llvm::outs() << llvm::format("; first call %.3f s\n", firstSeconds);
  bool canVerify = !refErr;
  if (run.report.verify && !canVerify)
    return fail("cannot verify: " + llvm::toString(std::move(refErr)));
  if (refErr)
    llvm::outs() << "reference: " << llvm::toString(std::move(refErr)) << "\n";

  RunReport report(run.report, spec);
  std::optional<ElementKind> computeKind =
      binding.args.empty() ? std::nullopt
                           : gpuComputeKind(binding.args[0].kind);
  const std::vector<::attn::ref::Tensor> *reference =
      canVerify ? &expected : nullptr;
  report.printResults(llvm::outs(), results, reference, computeKind);
  if (llvm::Error err = report.writeFiles(results, reference, binding.args))
    return fail(llvm::toString(std::move(err)));
  if (!run.reportFile.empty()) {
    llvm::Error err =
        writeJSONReport(run.reportFile, [&](llvm::json::OStream &j) {
          j.attribute("spec", run.specPath);
          j.attribute("device", "gpu");
          j.attributeObject("gpu", [&] {
            j.attribute("name", info.name);
            j.attribute("arch", deviceArch);
            j.attribute("chip", chip);
            j.attribute("format", gpuFormat.getValue());
            j.attribute("warps", choice.warps);
            j.attribute("tile_k", choice.tileK);
          });
          j.attributeArray("lowering",
                           [&] { j.object([&] { choice.writeJSON(j); }); });
          j.attribute("compile_s", compileSeconds);
          j.attribute("first_call_s", firstSeconds);
          writeTimesJSON(j, times);
          j.attribute("flops", flops);
          j.attribute("tflops", median > 0 ? flops / median * 1e-12 : 0.0);
          j.attribute("io_bytes", ioBytes);
          j.attribute("gbs", median > 0 ? ioBytes / median * 1e-9 : 0.0);
          report.writeJSON(j);
        });
    if (err)
      return fail(llvm::toString(std::move(err)));
  }
  if (llvm::Error err = report.verificationError())
    return fail(llvm::toString(std::move(err)));
  return 0;
}
