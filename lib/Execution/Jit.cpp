//===- Jit.cpp - compile and call attn specs on the host ------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Execution/Jit.h"

#include "attn-c/Kernel.h"
#include "attn/Execution/SpecBinding.h"
#include "attn/Transforms/Destinations.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/OpenMP/OpenMPToLLVMIRTranslation.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <malloc.h>
#include <mutex>

using namespace mlir;
using namespace mlir::attn;

#ifndef ATTN_C_RUNNER_UTILS
#define ATTN_C_RUNNER_UTILS "libmlir_c_runner_utils.so"
#endif

#ifndef ATTN_OPENMP_RUNTIME
#define ATTN_OPENMP_RUNTIME "libomp.so"
#endif

llvm::StringRef mlir::attn::cRunnerUtilsPath() { return ATTN_C_RUNNER_UTILS; }
llvm::StringRef mlir::attn::openMPRuntimePath() { return ATTN_OPENMP_RUNTIME; }

JitFunction::~JitFunction() = default;

static std::atomic<int64_t> tilesVisited{0}, boundaryTilesVisited{0};
static std::atomic<bool> visitLogEnabled{false};
static std::mutex visitLogMutex;
static std::vector<TileVisit> visitLog;

/// Called by instrumented kernels once per computed key tile.
extern "C" void attnTileVisit(int64_t batch, int64_t kvHead, int64_t queryTile,
                              int64_t keyTile, bool boundary) {
  ++tilesVisited;
  if (boundary)
    ++boundaryTilesVisited;
  if (!visitLogEnabled)
    return;
  std::lock_guard<std::mutex> lock(visitLogMutex);
  visitLog.push_back({batch, kvHead, queryTile, keyTile, boundary});
}

void JitFunction::setTileLogging(bool enabled) { visitLogEnabled = enabled; }

static std::atomic<int64_t> heapCurrent{0}, heapPeak{0};

static void noteAlloc(void *p) {
  if (!p)
    return;
  int64_t now = heapCurrent += static_cast<int64_t>(malloc_usable_size(p));
  int64_t peak = heapPeak.load();
  while (now > peak && !heapPeak.compare_exchange_weak(peak, now))
    ;
}

static std::atomic<int64_t> allocationLimit{0};

void JitFunction::setAllocationLimit(int64_t bytes) { allocationLimit = bytes; }

/// An allocation above the limit fails as malloc does when memory runs out.
static bool overLimit(size_t size) {
  int64_t limit = allocationLimit.load(std::memory_order_relaxed);
  return limit > 0 && size > static_cast<uint64_t>(limit);
}

extern "C" void *countingMalloc(size_t size) {
  if (overLimit(size))
    return nullptr;
  void *p = std::malloc(size);
  noteAlloc(p);
  return p;
}

extern "C" void *countingAlignedAlloc(size_t alignment, size_t size) {
  if (overLimit(size))
    return nullptr;
  void *p = std::aligned_alloc(alignment, size);
  noteAlloc(p);
  return p;
}

extern "C" void countingFree(void *p) {
  if (p)
    heapCurrent -= static_cast<int64_t>(malloc_usable_size(p));
  std::free(p);
}

void JitFunction::resetHeapPeak() { heapPeak = heapCurrent.load(); }
int64_t JitFunction::heapPeakBytes() { return heapPeak - 0; }
int64_t JitFunction::heapCurrentBytes() { return heapCurrent; }

void JitFunction::resetTileCounters() {
  tilesVisited = 0;
  boundaryTilesVisited = 0;
  std::lock_guard<std::mutex> lock(visitLogMutex);
  visitLog.clear();
}

std::vector<TileVisit> JitFunction::visitedTiles() {
  std::lock_guard<std::mutex> lock(visitLogMutex);
  return visitLog;
}

std::pair<int64_t, int64_t> JitFunction::tileCounters() {
  return {tilesVisited.load(), boundaryTilesVisited.load()};
}

static std::string typeStr(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

static llvm::Error makeError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

llvm::Expected<std::unique_ptr<JitFunction>>
JitFunction::compile(ModuleOp module, llvm::StringRef entry,
                     const JitOptions &options) {
  static bool initialized = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    // Inline assembly in generated code (the AMX permission request).
    llvm::InitializeNativeTargetAsmParser();
    return true;
  }();
  (void)initialized;

  auto start = std::chrono::steady_clock::now();
  auto fn = module.lookupSymbol<func::FuncOp>(entry);
  if (!fn || fn.isExternal())
    return makeError("no function @" + entry + " with a body in the module");

  std::unique_ptr<JitFunction> jit(new JitFunction());
  jit->name = entry.str();
  for (Type t : fn.getArgumentTypes()) {
    auto rt = dyn_cast<RankedTensorType>(t);
    ElementKind kind;
    if (!rt || !getElementKind(rt.getElementType(), kind))
      return makeError("argument type " + typeStr(t) +
                       " is not a ranked tensor of a supported element type");
    jit->args.push_back(rt);
  }
  for (Type t : fn.getResultTypes()) {
    auto rt = dyn_cast<RankedTensorType>(t);
    ElementKind kind;
    if (!rt || !getElementKind(rt.getElementType(), kind))
      return makeError("result type " + typeStr(t) +
                       " is not a ranked tensor of a supported element type");
    jit->results.push_back(rt);
  }

  // The CPU to generate code for: refuse one whose instructions this host
  // lacks, rather than stopping on an illegal instruction at run time.
  auto target = resolveCpuTarget(options.targetCpu, options.targetFeatures,
                                 options.targetTriple);
  if (!target)
    return target.takeError();
  llvm::SmallVector<std::string> missing = featuresMissingOnHost(*target);
  if (!missing.empty())
    return makeError("cannot run code for target CPU '" + target->cpu + "'" +
                     (options.targetTriple.empty() ? std::string()
                                                   : " of " + target->triple) +
                     (options.targetFeatures.empty()
                          ? std::string()
                          : " with features '" + options.targetFeatures + "'") +
                     " on this host (" + getHostCpuTarget().cpu +
                     "), which lacks: " + llvm::join(missing, ", "));
  jit->cpuTarget = *target;

  MLIRContext *ctx = module.getContext();
  registerBuiltinDialectTranslation(*ctx);
  registerLLVMDialectTranslation(*ctx);
  registerOpenMPDialectTranslation(*ctx);
  // Lower a clone holding only the entry and what it names: the other specs
  // of the file would cost their lowering and LLVM's code generation.
  OwningOpRef<ModuleOp> clone(module.clone());
  eraseOtherFunctions(*clone, entry);
  clone->lookupSymbol<func::FuncOp>(entry)->setAttr("llvm.emit_c_interface",
                                                    UnitAttr::get(ctx));

  CpuPipelineOptions pipelineOpts;
  setPipelineOptions(pipelineOpts, options);
  // Out-params when every result is statically shaped (the rule of
  // attn-results-to-out-params) or the results become destinations sized
  // from the arguments (attn-results-to-destinations).
  std::optional<llvm::SmallVector<DestinationShape>> destinations =
      destinationShapes(fn);
  jit->resultsOut =
      options.outParams && !jit->results.empty() &&
      (destinations || llvm::all_of(jit->results, [](RankedTensorType r) {
         return r.hasStaticShape();
       }));
  if (jit->resultsOut && destinations)
    for (const DestinationShape &shape : *destinations) {
      std::vector<std::pair<int64_t, int64_t>> dims;
      for (const DestinationDim &d : shape)
        dims.emplace_back(d.arg, d.arg < 0 ? d.size : d.dim);
      jit->resultSizes.push_back(std::move(dims));
    }
  if (failed(lowerToLLVM(*clone, pipelineOpts)))
    return makeError("lowering to the LLVM dialect failed");
  if (Operation *fn = clone->lookupSymbol(entry))
    jit->choices = readLoweringChoices(fn);

  // A target machine for the host or the chosen CPU: without it LLVM's cost
  // model knows no vector registers and vectorizes nothing.
  using llvm::orc::JITTargetMachineBuilder;
  llvm::Expected<JITTargetMachineBuilder> tmBuilder =
      jit->cpuTarget.isHost
          ? JITTargetMachineBuilder::detectHost()
          : JITTargetMachineBuilder(llvm::Triple(jit->cpuTarget.triple));
  if (!tmBuilder)
    return tmBuilder.takeError();
  if (!jit->cpuTarget.isHost) {
    tmBuilder->setCPU(jit->cpuTarget.cpu);
    std::vector<std::string> features;
    for (llvm::StringRef f : llvm::split(jit->cpuTarget.features, ','))
      if (!f.trim().empty())
        features.push_back(f.trim().str());
    tmBuilder->addFeatures(features);
  }
  tmBuilder->setCodeGenOptLevel(
      static_cast<llvm::CodeGenOptLevel>(std::min(options.optLevel, 3u)));
  auto tm = tmBuilder->createTargetMachine();
  if (!tm)
    return tm.takeError();
  auto transformer = makeOptimizingTransformer(options.optLevel,
                                               /*sizeLevel=*/0, tm->get());
  llvm::SmallVector<llvm::StringRef, 2> libs = {cRunnerUtilsPath()};
  if (options.parallel)
    libs.push_back(openMPRuntimePath());
  ExecutionEngineOptions engineOpts;
  engineOpts.transformer = transformer;
  engineOpts.sharedLibPaths = libs;
  // ATTN_PERF=1 registers the JIT'd code with `perf` (perf-<pid>.map).
  engineOpts.enablePerfNotificationListener =
      std::getenv("ATTN_PERF") != nullptr;
  engineOpts.jitCodeGenOptLevel =
      static_cast<llvm::CodeGenOptLevel>(std::min(options.optLevel, 3u));
  auto engine = ExecutionEngine::create(*clone, engineOpts, std::move(*tm));
  if (!engine)
    return engine.takeError();
  jit->engine = std::move(*engine);
  bool instrument = options.instrumentTiles;
  jit->engine->registerSymbols(
      [instrument](llvm::orc::MangleAndInterner interner) {
        llvm::orc::SymbolMap map;
        auto add = [&](const char *name, auto *fn) {
          map[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(fn),
                                 llvm::JITSymbolFlags::Exported};
        };
        // The compiled code's heap goes through counting wrappers, so that a
        // run can report the peak memory it allocated.
        add("malloc", &countingMalloc);
        add("aligned_alloc", &countingAlignedAlloc);
        add("free", &countingFree);
        if (instrument)
          add("attn_tile_visit", &attnTileVisit);
        // The run-time checks' error channel (libattn_runtime).
        add("attn_rt_error_context", &attn_rt_error_context);
        add("attn_rt_check_failed", &attn_rt_check_failed);
        add("attn_rt_has_failed", &attn_rt_has_failed);
        return map;
      });
  jit->compileTime =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return jit;
}

/// The strided memref descriptor of a contiguous host tensor:
/// {allocated, aligned, offset, sizes[rank], strides[rank]}, all 8 bytes.
static std::vector<int64_t> describe(const HostTensor &t) {
  auto ptr = reinterpret_cast<int64_t>(t.bytes.data());
  std::vector<int64_t> desc = {ptr, ptr, 0};
  desc.insert(desc.end(), t.shape.begin(), t.shape.end());
  std::vector<int64_t> strides(t.shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(t.shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * t.shape[d + 1];
  desc.insert(desc.end(), strides.begin(), strides.end());
  return desc;
}

llvm::Error JitFunction::invoke(llvm::ArrayRef<const HostTensor *> inputs,
                                std::vector<HostTensor> &outputs) {
  if (inputs.size() != args.size())
    return makeError("expected " + llvm::Twine(args.size()) + " inputs, got " +
                     llvm::Twine(inputs.size()));
  // One strided memref descriptor per argument.
  std::vector<std::vector<int64_t>> descs(inputs.size());
  for (size_t a = 0; a < inputs.size(); ++a) {
    const HostTensor &t = *inputs[a];
    RankedTensorType type = args[a];
    ElementKind kind;
    getElementKind(type.getElementType(), kind);
    if (t.kind != kind)
      return makeError("input " + llvm::Twine(a) + " has element type " +
                       elementName(t.kind) + ", the function takes " +
                       elementName(kind));
    if (static_cast<int64_t>(t.shape.size()) != type.getRank())
      return makeError("input " + llvm::Twine(a) + " has rank " +
                       llvm::Twine(t.shape.size()) + ", the function takes " +
                       llvm::Twine(type.getRank()));
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (!type.isDynamicDim(d) && type.getDimSize(d) != t.shape[d])
        return makeError("input " + llvm::Twine(a) + " has size " +
                         llvm::Twine(t.shape[d]) + " in dimension " +
                         llvm::Twine(d) + ", the function takes " +
                         llvm::Twine(type.getDimSize(d)));
    descs[a] = describe(t);
  }
  // Out-params: the caller's buffers, after the inputs.
  std::vector<HostTensor> outBuffers;
  if (resultsOut) {
    for (auto [i, r] : llvm::enumerate(results)) {
      ElementKind kind;
      getElementKind(r.getElementType(), kind);
      std::vector<int64_t> shape(r.getShape());
      // Destinations: sized from the arguments.
      if (i < resultSizes.size())
        for (auto [d, size] : llvm::enumerate(resultSizes[i]))
          shape[d] = size.first < 0 ? size.second
                                    : inputs[size.first]->shape[size.second];
      HostTensor t;
      t.resize(kind, shape);
      outBuffers.push_back(std::move(t));
    }
    for (const HostTensor &t : outBuffers)
      descs.push_back(describe(t));
  }
  size_t resultWords = 0;
  if (!resultsOut)
    for (RankedTensorType r : results)
      resultWords += 3 + 2 * r.getRank();
  std::vector<int64_t> resultDescs(std::max<size_t>(resultWords, 1), 0);

  std::vector<void *> ptrs;
  if (resultWords)
    ptrs.push_back(resultDescs.data());
  for (auto &d : descs)
    ptrs.push_back(d.data());
  llvm::SmallVector<void *> packed;
  for (void *&p : ptrs)
    packed.push_back(&p);
  auto callStart = std::chrono::steady_clock::now();
  attn_rt_clear_error();
  llvm::Error callErr = engine->invokePacked("_mlir_ciface_" + name, packed);
  callTime = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                           callStart)
                 .count();
  if (callErr)
    return callErr;
  // A failed run-time check of the generated code: its message; what the
  // code allocated for its results is freed below all the same.
  std::string checkFailure;
  checkStatus = attn_rt_take_error();
  if (checkStatus != ATTN_STATUS_OK)
    checkFailure = attn_last_error();

  outputs.clear();
  if (resultsOut) {
    if (!checkFailure.empty())
      return makeError(checkFailure);
    outputs = std::move(outBuffers);
    return llvm::Error::success();
  }
  size_t offset = 0;
  for (RankedTensorType r : results) {
    if (!checkFailure.empty())
      break;
    const int64_t *desc = resultDescs.data() + offset;
    offset += 3 + 2 * r.getRank();
    ElementKind kind;
    getElementKind(r.getElementType(), kind);
    std::vector<int64_t> shape(desc + 3, desc + 3 + r.getRank());
    HostTensor out;
    out.resize(kind, shape);
    auto *base = reinterpret_cast<const uint8_t *>(desc[1]);
    int64_t bytes = elementBytes(kind);
    int64_t n = out.numElements();
    const int64_t *strides = desc + 3 + r.getRank();
    bool contiguous = true;
    for (int64_t d = r.getRank() - 1, expect = 1; d >= 0; --d) {
      contiguous &= shape[d] == 1 || strides[d] == expect;
      expect *= shape[d];
    }
    if (contiguous) {
      if (n > 0)
        std::memcpy(out.bytes.data(), base + desc[2] * bytes, n * bytes);
      n = 0; // nothing left for the element-wise copy below
    }
    for (int64_t i = 0; i < n; ++i) {
      int64_t rem = i, off = desc[2];
      for (int64_t d = r.getRank() - 1; d >= 0; --d) {
        off += (rem % shape[d]) * strides[d];
        rem /= shape[d];
      }
      std::memcpy(out.bytes.data() + i * bytes, base + off * bytes, bytes);
    }
    outputs.push_back(std::move(out));
  }
  // Free what the compiled code allocated for its results: not the inputs,
  // not constant globals (allocated pointer 0xdeadbeef), and each only once.
  std::vector<int64_t> freed;
  offset = 0;
  for (RankedTensorType r : results) {
    int64_t alloc = resultDescs[offset];
    offset += 3 + 2 * r.getRank();
    bool isInput = false;
    for (auto &d : descs)
      isInput |= d[0] == alloc;
    if (!alloc || alloc == 0xdeadbeef || isInput ||
        std::find(freed.begin(), freed.end(), alloc) != freed.end())
      continue;
    freed.push_back(alloc);
    countingFree(reinterpret_cast<void *>(alloc));
  }
  if (!checkFailure.empty())
    return makeError(checkFailure);
  return llvm::Error::success();
}
