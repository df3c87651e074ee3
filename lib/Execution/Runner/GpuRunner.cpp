//===- GpuRunner.cpp - run a spec on an NVIDIA GPU ------------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// The GPU pipeline (lowerToGpu's passes) rewrites the entry into a host
// function on memrefs (the inputs, then the results as trailing
// out-parameters) whose kernels are a gpu.binary; the ExecutionEngine JITs
// that host code, whose mgpu* calls resolve to libattn_gpu_runtime. The
// inputs are copied to device buffers; the host function is called with
// memref descriptors of device pointers on a stream of ours (the runtime's
// current stream), timed with events, and the outputs are copied back.
//
//===----------------------------------------------------------------------===//

#include "RunnerImpl.h"

#include "attn-c/Gpu.h"
#include "attn-c/Kernel.h"
#include "attn/Execution/SpecBinding.h"
#include "attn/Runtime/Mgpu.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"

#include <algorithm>
#include <chrono>

using namespace mlir;
using namespace mlir::attn;

void mlir::attn::registerGpuHostSymbols(ExecutionEngine &engine) {
  engine.registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap map;
    auto add = [&](const char *name, auto *fn) {
      map[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(fn),
                             llvm::JITSymbolFlags::Exported};
    };
#define ATTN_ADD(fn) add(#fn, &fn)
    ATTN_ADD(mgpuModuleLoad);
    ATTN_ADD(mgpuModuleLoadJIT);
    ATTN_ADD(mgpuModuleUnload);
    ATTN_ADD(mgpuModuleGetFunction);
    ATTN_ADD(mgpuLaunchKernel);
    ATTN_ADD(mgpuLaunchClusterKernel);
    ATTN_ADD(mgpuStreamCreate);
    ATTN_ADD(mgpuStreamDestroy);
    ATTN_ADD(mgpuStreamSynchronize);
    ATTN_ADD(mgpuStreamWaitEvent);
    ATTN_ADD(mgpuEventCreate);
    ATTN_ADD(mgpuEventDestroy);
    ATTN_ADD(mgpuEventSynchronize);
    ATTN_ADD(mgpuEventRecord);
    ATTN_ADD(mgpuMemAlloc);
    ATTN_ADD(mgpuMemFree);
    ATTN_ADD(mgpuMemcpy);
    ATTN_ADD(mgpuMemset32);
    ATTN_ADD(mgpuMemset16);
    ATTN_ADD(mgpuMemHostRegister);
    ATTN_ADD(mgpuMemHostRegisterMemRef);
    ATTN_ADD(mgpuMemHostUnregister);
    ATTN_ADD(mgpuMemHostUnregisterMemRef);
    ATTN_ADD(mgpuTensorMapEncodeTiledMemref);
    ATTN_ADD(mgpuSetDefaultDevice);
    return map;
  });
}

/// The run-time checks' error channel of the host code (libattn_runtime).
static void registerRuntimeCheckSymbols(ExecutionEngine &engine) {
  engine.registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap map;
    auto add = [&](const char *name, auto *fn) {
      map[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(fn),
                             llvm::JITSymbolFlags::Exported};
    };
    ATTN_ADD(attn_rt_error_context);
    ATTN_ADD(attn_rt_check_failed);
    ATTN_ADD(attn_rt_has_failed);
    return map;
  });
}
#undef ATTN_ADD

/// The driver's first recorded error (cleared), or `what` failed.
static std::string driverError(llvm::StringRef what) {
  const char *e = attn_gpu_take_error();
  return e ? std::string(e) : (what + " failed").str();
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

/// The device `index` (made the runtime's current device) and its info.
static llvm::Error openDevice(int index, attn_gpu_device_info_t &info) {
  if (!attn_gpu_available())
    return runnerError(llvm::Twine("no usable GPU: ") +
                       attn_gpu_unavailable_reason());
  int count = attn_gpu_device_count();
  if (index < 0 || index >= count)
    return runnerError("CUDA device " + llvm::Twine(index) + ": there are " +
                       llvm::Twine(count) + " CUDA devices");
  attn_gpu_set_device(index);
  if (attn_gpu_device_info(index, &info))
    return runnerError(driverError("attn_gpu_device_info"));
  return llvm::Error::success();
}

/// sm_90 devices get sm_90a (the wgmma/TMA features), others sm_XY.
static std::string chipForDevice(const attn_gpu_device_info_t &info) {
  std::string chip = "sm_" + std::to_string(info.compute_capability_major) +
                     std::to_string(info.compute_capability_minor);
  if (info.compute_capability_major == 9 && info.compute_capability_minor == 0)
    chip += "a";
  return chip;
}

llvm::Expected<std::string> mlir::attn::chipOfGpuDevice(int index) {
  attn_gpu_device_info_t info;
  if (llvm::Error err = openDevice(index, info))
    return std::move(err);
  return chipForDevice(info);
}

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

namespace {
class GpuRunner final : public Runner {
public:
  GpuRunner(DenseResultRule rule, size_t numInputs)
      : Runner(RunDevice::Gpu), rule(std::move(rule)), numInputs(numInputs) {}
  ~GpuRunner() override { release(); }

  llvm::Error compile(ModuleOp module, func::FuncOp fn,
                      const RunnerOptions &options);

  llvm::Error bind(llvm::ArrayRef<const HostTensor *> inputs) override;
  llvm::Error run() override;
  llvm::Expected<std::vector<double>> time(unsigned reps) override;
  llvm::Error fetch(std::vector<HostTensor> &results) override;

  llvm::StringRef clockName() const override { return "CUDA events"; }

  void writeJSON(llvm::json::OStream &j) const override {
    j.attributeObject("gpu", [&] {
      j.attribute("name", description.name);
      j.attribute("arch", description.arch);
      j.attribute("chip", description.chip);
      j.attribute("format", format);
      j.attribute("warps", choices.front().warps);
      j.attribute("tile_k", choices.front().tileK);
    });
  }

  const GpuDeviceDescription *gpuDevice() const override {
    return &description;
  }

private:
  /// Frees the device buffers and the stream.
  void release();

  DenseResultRule rule;
  size_t numInputs;
  std::string format;
  GpuDeviceDescription description;
  std::unique_ptr<ExecutionEngine> engine;
  void (*entryFn)(void **) = nullptr;

  std::vector<void *> devicePtrs, outputPtrs;
  std::vector<HostTensor> outputs;
  std::vector<std::vector<int64_t>> descs;
  std::vector<void *> descPtrs;
  llvm::SmallVector<void *> packed;
  void *stream = nullptr;
};
} // namespace

llvm::Error GpuRunner::compile(ModuleOp module, func::FuncOp fn,
                               const RunnerOptions &options) {
  GpuCodegenOptions codegen = options.gpu;
  format = codegen.format;
  if (format != "isa" && format != "bin" && format != "fatbin")
    return runnerError("unknown GPU binary format '" + format +
                       "': expected isa, bin or fatbin");
  MLIRContext *ctx = module.getContext();
  {
    DialectRegistry registry;
    registerGpuCodegen(registry);
    ctx->appendDialectRegistry(registry);
  }
  GpuPipelineOptions pipelineOpts;
  // An explicit chip is checked before anything needs a GPU.
  if (!codegen.chip.empty()) {
    setPipelineOptions(pipelineOpts, codegen);
    PassManager pm(ctx);
    if (llvm::Error e = buildAttnGpuPipeline(pm, pipelineOpts))
      return e;
  }

  // The device, and whether it can run the chip's code.
  attn_gpu_device_info_t info;
  if (llvm::Error err = openDevice(options.gpuDevice, info))
    return err;
  unsigned deviceCC =
      info.compute_capability_major * 10 + info.compute_capability_minor;
  description.index = options.gpuDevice;
  description.name = info.name;
  description.arch = "sm_" + std::to_string(deviceCC);
  description.smCount = info.sm_count;
  description.memoryGiB = info.total_memory_bytes / 1073741824.0;
  description.bandwidthGBs = info.memory_bandwidth_gbs;
  std::string chip = codegen.chip.empty() ? chipForDevice(info) : codegen.chip;
  unsigned chipCC = 0;
  bool archSpecific = false;
  if (!parseChip(chip, chipCC, archSpecific))
    return runnerError("unknown chip '" + chip +
                       "': expected sm_80, sm_90a, ...");
  // PTX runs on its chip and newer ones (through the driver's JIT); a cubin
  // only on its major version; "a" code only on its own chip.
  bool runs = archSpecific ? chipCC == deviceCC
              : format == "bin"
                  ? chipCC / 10 == deviceCC / 10 && chipCC <= deviceCC
                  : chipCC <= deviceCC;
  if (!runs)
    return runnerError("code for " + chip + " (format " + format +
                       ") cannot run on device " +
                       llvm::Twine(options.gpuDevice) + " (" + info.name +
                       ", " + description.arch + ")");
  description.chip = chip;
  codegen.chip = chip;
  setPipelineOptions(pipelineOpts, codegen);

  // Lower a clone holding only the entry (every function becomes kernels).
  auto compileStart = std::chrono::steady_clock::now();
  OwningOpRef<ModuleOp> clone(module.clone());
  llvm::StringRef name = fn.getSymName();
  eraseOtherFunctions(*clone, name);
  clone->lookupSymbol<func::FuncOp>(name)->setAttr("llvm.emit_c_interface",
                                                   UnitAttr::get(ctx));
  {
    PassManager pm(ctx);
    if (llvm::Error e = buildAttnGpuPipeline(pm, pipelineOpts))
      return e;
    // The lowering's diagnostics name the spec's op; not its generic form.
    bool printOp = ctx->shouldPrintOpOnDiagnostic();
    ctx->printOpOnDiagnostic(false);
    LogicalResult lowered = pm.run(*clone);
    ctx->printOpOnDiagnostic(printOp);
    if (failed(lowered))
      return runnerError("lowering to GPU kernels failed");
  }
  if (Operation *lowered = clone->lookupSymbol(name))
    choices = readLoweringChoices(lowered);
  if (choices.size() != 1)
    return runnerError("the lowering reported " + llvm::Twine(choices.size()) +
                       " attention kernels, expected one");
  size_t numIn = fn.getNumArguments(), numOut = fn.getNumResults();
  std::string cifaceName = ("_mlir_ciface_" + name).str();
  auto ciface = clone->lookupSymbol<LLVM::LLVMFuncOp>(cifaceName);
  if (!ciface)
    return runnerError("the lowered module has no " + cifaceName);
  if (ciface.getFunctionType().getNumParams() != numIn + numOut)
    return runnerError(cifaceName + " takes " +
                       llvm::Twine(ciface.getFunctionType().getNumParams()) +
                       " arguments; expected " + llvm::Twine(numIn) +
                       " inputs and " + llvm::Twine(numOut) +
                       " out-parameters");

  // JIT the host code.
  static bool nativeTarget = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)nativeTarget;
  auto tmBuilder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!tmBuilder)
    return tmBuilder.takeError();
  auto tm = tmBuilder->createTargetMachine();
  if (!tm)
    return tm.takeError();
  auto transformer =
      makeOptimizingTransformer(/*optLevel=*/2, /*sizeLevel=*/0, tm->get());
  ExecutionEngineOptions engineOpts;
  engineOpts.transformer = transformer;
  engineOpts.enablePerfNotificationListener = false;
  auto created = ExecutionEngine::create(*clone, engineOpts, std::move(*tm));
  if (!created)
    return runnerError("JIT of the host code failed: " +
                       llvm::toString(created.takeError()));
  engine = std::move(*created);
  registerGpuHostSymbols(*engine);
  registerRuntimeCheckSymbols(*engine);
  // Global constructors: the module image is recorded (no driver call yet).
  engine->initialize();
  auto entry = engine->lookupPacked(cifaceName);
  if (!entry)
    return entry.takeError();
  entryFn = *entry;
  compileTime = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                              compileStart)
                    .count();
  return llvm::Error::success();
}

void GpuRunner::release() {
  if (stream) {
    attn_gpu_clear_current_stream();
    attn_gpu_stream_destroy(stream);
    stream = nullptr;
  }
  for (void *p : devicePtrs)
    attn_gpu_free(p);
  devicePtrs.clear();
  outputPtrs.clear();
}

llvm::Error GpuRunner::bind(llvm::ArrayRef<const HostTensor *> inputs) {
  release();
  if (inputs.size() != numInputs)
    return runnerError("expected " + llvm::Twine(numInputs) + " inputs, got " +
                       llvm::Twine(inputs.size()));
  auto shapes = rule.shapes(inputs);
  if (!shapes)
    return shapes.takeError();
  outputs.assign(shapes->size(), HostTensor());
  for (size_t i = 0; i < shapes->size(); ++i)
    outputs[i].resize(rule.kinds[i], (*shapes)[i]);
  auto allocate = [&](size_t bytes) {
    void *p = attn_gpu_malloc(std::max<size_t>(bytes, 1));
    if (p)
      devicePtrs.push_back(p);
    return p;
  };
  descs.clear();
  for (const HostTensor *t : inputs) {
    void *p = allocate(t->bytes.size());
    if (!p || (!t->bytes.empty() &&
               attn_gpu_memcpy_h2d(p, t->bytes.data(), t->bytes.size())))
      return runnerError("copying the inputs to the device: " +
                         driverError("attn_gpu_malloc"));
    descs.push_back(descriptor(p, t->shape));
  }
  // A copy from pageable memory may return before its DMA lands; that
  // copy is on CUDA's default stream, which our non-blocking stream does
  // not wait for.
  if (attn_gpu_stream_synchronize(nullptr))
    return runnerError("copying the inputs to the device: " +
                       driverError("attn_gpu_stream_synchronize"));
  stream = attn_gpu_stream_create();
  if (!stream)
    return runnerError(driverError("attn_gpu_stream_create"));
  for (const HostTensor &t : outputs) {
    void *p = allocate(t.bytes.size());
    // NaN bit patterns: elements the kernels never write show.
    if (!p ||
        attn_gpu_memset(p, 0xff, std::max<size_t>(t.bytes.size(), 1), stream))
      return runnerError("allocating the outputs: " +
                         driverError("attn_gpu_malloc"));
    outputPtrs.push_back(p);
    descs.push_back(descriptor(p, t.shape));
  }
  descPtrs.clear();
  for (auto &d : descs)
    descPtrs.push_back(d.data());
  packed.clear();
  for (void *&p : descPtrs)
    packed.push_back(&p);
  return llvm::Error::success();
}

llvm::Error GpuRunner::run() {
  if (!stream)
    return runnerError("run before bind");
  // The generated code runs on our stream and synchronizes it.
  attn_gpu_take_error();
  attn_gpu_set_current_stream(stream, 0);
  auto start = std::chrono::steady_clock::now();
  attn_rt_clear_error();
  entryFn(packed.data());
  attn_gpu_stream_synchronize(stream);
  runTime =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  // A failed run-time check: nothing was launched.
  status = attn_rt_take_error();
  if (status != ATTN_STATUS_OK)
    return runnerError(attn_last_error());
  if (const char *e = attn_gpu_take_error()) {
    status = ATTN_STATUS_DEVICE_ERROR;
    return runnerError(llvm::Twine("the run failed: ") + e);
  }
  return llvm::Error::success();
}

llvm::Expected<std::vector<double>> GpuRunner::time(unsigned reps) {
  std::vector<double> times;
  if (reps == 0)
    return times;
  if (!stream)
    return runnerError("time before bind");
  // Events around each call on the stream, which the generated code then
  // only queues work on.
  void *start = attn_gpu_event_create(), *end = attn_gpu_event_create();
  llvm::scope_exit destroyEvents([&] {
    if (start)
      attn_gpu_event_destroy(start);
    if (end)
      attn_gpu_event_destroy(end);
    attn_gpu_set_current_stream(stream, 0);
  });
  if (!start || !end)
    return runnerError(driverError("attn_gpu_event_create"));
  attn_gpu_set_current_stream(stream, ATTN_GPU_STREAM_ASYNC);
  for (unsigned r = 0; r < reps; ++r) {
    float ms = 0;
    attn_gpu_event_record(start, stream);
    entryFn(packed.data());
    attn_gpu_event_record(end, stream);
    if (attn_gpu_event_synchronize(end) ||
        attn_gpu_event_elapsed_ms(start, end, &ms))
      return runnerError("timing: " + driverError("attn_gpu_event_elapsed_ms"));
    if (const char *e = attn_gpu_take_error())
      return runnerError(llvm::Twine("a timed run failed: ") + e);
    times.push_back(ms * 1e-3);
  }
  return times;
}

llvm::Error GpuRunner::fetch(std::vector<HostTensor> &results) {
  for (size_t i = 0; i < outputs.size(); ++i)
    if (!outputs[i].bytes.empty() &&
        attn_gpu_memcpy_d2h(outputs[i].bytes.data(), outputPtrs[i],
                            outputs[i].bytes.size()))
      return runnerError("copying the outputs back: " +
                         driverError("attn_gpu_memcpy_d2h"));
  results = outputs;
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<Runner>>
mlir::attn::createGpuRunner(ModuleOp module, func::FuncOp fn,
                            DenseResultRule rule,
                            const RunnerOptions &options) {
  auto runner =
      std::make_unique<GpuRunner>(std::move(rule), fn.getNumArguments());
  if (llvm::Error err = runner->compile(module, fn, options))
    return std::move(err);
  return std::unique_ptr<Runner>(std::move(runner));
}
