//===- FakeCuda.cpp - a fake CUDA driver for the GPU runtime's tests ------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// A test-only stand-in for libcuda.so.1, loaded by libattn_gpu_runtime
// through ATTN_CUDA_DRIVER. It implements the driver functions the runtime
// resolves, with "device" memory in host memory, and checks what a real
// driver checks where the runtime's logic depends on it: a current context
// for context-bound calls, copy directions against the device allocations,
// timing events. Every call is logged; the fake_cuda_* functions let a test
// read the log, make the next call of a function fail, and register host
// functions that cuLaunchKernel runs for a named kernel.
//
// FAKE_CUDA_DEVICES=n sets the device count (default 1; 0: cuInit fails
// with CUDA_ERROR_NO_DEVICE). Built with FAKE_CUDA_OLD_DRIVER it is an old
// driver: no stream-ordered allocation, cluster launch or tensor maps, and
// the unversioned cuEventElapsedTime. FAKE_CUDA_TRACE=1 also prints every
// logged call to stderr as "fake-cuda: <call>" (for tools run by lit tests);
// FAKE_CUDA_FAIL=<function>=<code> makes the first call of that function
// fail with that CUresult, as fake_cuda_fail_next does.
//
//===----------------------------------------------------------------------===//

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

enum : int {
  kSuccess = 0,
  kInvalidValue = 1,
  kOutOfMemory = 2,
  kNotInitialized = 3,
  kNoDevice = 100,
  kInvalidDevice = 101,
  kInvalidContext = 201,
  kInvalidPtx = 218,
  kInvalidHandle = 400,
  kNotFound = 500,
};

using KernelFn = void (*)(void **params, const unsigned *grid,
                          const unsigned *block, unsigned smem);

struct Function {
  std::string name;
};
struct Module {
  std::string image;
  std::map<std::string, std::unique_ptr<Function>> functions;
};
struct Stream {
  int id;
};
struct Event {
  unsigned flags;
  bool recorded = false;
  double timeMs = 0;
};

struct State {
  std::mutex lock;
  std::vector<std::string> log;
  std::string joined;
  std::map<std::string, int> failNext;
  std::map<std::string, KernelFn> kernels;
  std::map<uintptr_t, size_t> allocations;
  bool initialized = false;
  int nextStream = 1;
  double clockMs = 0;
  int contexts[8] = {};
};

State &state() {
  static State *s = new State();
  return *s;
}

thread_local std::vector<void *> contextStack;

int deviceCount() {
  const char *env = std::getenv("FAKE_CUDA_DEVICES");
  return env ? std::atoi(env) : 1;
}

void logCall(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void logCall(const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  static const bool trace = std::getenv("FAKE_CUDA_TRACE") != nullptr;
  if (trace)
    std::fprintf(stderr, "fake-cuda: %s\n", buf);
  State &s = state();
  std::lock_guard<std::mutex> guard(s.lock);
  s.log.push_back(buf);
}

/// The injected failure of `fn`, if any (consumed).
int injected(const char *fn) {
  State &s = state();
  std::lock_guard<std::mutex> guard(s.lock);
  auto it = s.failNext.find(fn);
  if (it == s.failNext.end())
    return kSuccess;
  int code = it->second;
  s.failNext.erase(it);
  return code;
}

/// Common entry checks: an injected failure, cuInit, a current context.
int enter(const char *fn, bool needsContext) {
  if (int code = injected(fn))
    return code;
  if (!state().initialized)
    return kNotInitialized;
  if (needsContext && contextStack.empty())
    return kInvalidContext;
  return kSuccess;
}

/// Whether [p, p + n) lies in one device allocation.
bool isDevice(uintptr_t p, size_t n) {
  State &s = state();
  std::lock_guard<std::mutex> guard(s.lock);
  auto it = s.allocations.upper_bound(p);
  if (it == s.allocations.begin())
    return false;
  --it;
  return p >= it->first && p + n <= it->first + it->second;
}

int streamId(void *stream) {
  return stream ? static_cast<Stream *>(stream)->id : 0;
}

int allocate(uintptr_t *out, size_t n) {
  void *p = std::calloc(1, n ? n : 1);
  if (!p)
    return kOutOfMemory;
  State &s = state();
  std::lock_guard<std::mutex> guard(s.lock);
  s.allocations[reinterpret_cast<uintptr_t>(p)] = n;
  *out = reinterpret_cast<uintptr_t>(p);
  return kSuccess;
}

int release(uintptr_t p) {
  State &s = state();
  std::lock_guard<std::mutex> guard(s.lock);
  auto it = s.allocations.find(p);
  if (it == s.allocations.end())
    return kInvalidValue;
  s.allocations.erase(it);
  std::free(reinterpret_cast<void *>(p));
  return kSuccess;
}

} // namespace

// Test controls.

FAKE_EXPORT const char *fake_cuda_log(void) {
  State &s = state();
  std::lock_guard<std::mutex> guard(s.lock);
  s.joined.clear();
  for (const std::string &line : s.log)
    s.joined += line + "\n";
  return s.joined.c_str();
}

FAKE_EXPORT void fake_cuda_clear_log(void) {
  State &s = state();
  std::lock_guard<std::mutex> guard(s.lock);
  s.log.clear();
}

FAKE_EXPORT void fake_cuda_fail_next(const char *fn, int code) {
  State &s = state();
  std::lock_guard<std::mutex> guard(s.lock);
  s.failNext[fn] = code;
}

FAKE_EXPORT void fake_cuda_register_kernel(const char *name, KernelFn fn) {
  State &s = state();
  std::lock_guard<std::mutex> guard(s.lock);
  s.kernels[name] = fn;
}

FAKE_EXPORT int fake_cuda_live_allocations(void) {
  State &s = state();
  std::lock_guard<std::mutex> guard(s.lock);
  return static_cast<int>(s.allocations.size());
}

// The driver API.

FAKE_EXPORT int cuInit(unsigned flags) {
  logCall("cuInit");
  if (int code = injected("cuInit"))
    return code;
  if (deviceCount() <= 0)
    return kNoDevice;
  if (const char *env = std::getenv("FAKE_CUDA_FAIL")) {
    std::string spec = env;
    size_t eq = spec.rfind('=');
    if (eq != std::string::npos)
      fake_cuda_fail_next(spec.substr(0, eq).c_str(),
                          std::atoi(spec.c_str() + eq + 1));
  }
  state().initialized = true;
  return kSuccess;
}

FAKE_EXPORT int cuDriverGetVersion(int *v) {
  *v = 13000;
  return kSuccess;
}

FAKE_EXPORT int cuGetErrorName(int code, const char **name) {
  static const std::map<int, const char *> names = {
      {kSuccess, "CUDA_SUCCESS"},
      {kInvalidValue, "CUDA_ERROR_INVALID_VALUE"},
      {kOutOfMemory, "CUDA_ERROR_OUT_OF_MEMORY"},
      {kNotInitialized, "CUDA_ERROR_NOT_INITIALIZED"},
      {kNoDevice, "CUDA_ERROR_NO_DEVICE"},
      {kInvalidDevice, "CUDA_ERROR_INVALID_DEVICE"},
      {kInvalidContext, "CUDA_ERROR_INVALID_CONTEXT"},
      {kInvalidPtx, "CUDA_ERROR_INVALID_PTX"},
      {kInvalidHandle, "CUDA_ERROR_INVALID_HANDLE"},
      {kNotFound, "CUDA_ERROR_NOT_FOUND"},
      {700, "CUDA_ERROR_ILLEGAL_ADDRESS"}};
  auto it = names.find(code);
  *name = it == names.end() ? nullptr : it->second;
  return it == names.end() ? kInvalidValue : kSuccess;
}

FAKE_EXPORT int cuGetErrorString(int code, const char **text) {
  static const std::map<int, const char *> texts = {
      {kInvalidValue, "invalid argument"},
      {kOutOfMemory, "out of memory"},
      {kNoDevice, "no CUDA-capable device is detected"},
      {kInvalidContext, "invalid device context"},
      {kInvalidPtx, "a PTX JIT compilation failed"},
      {kInvalidHandle, "invalid resource handle"},
      {kNotFound, "named symbol not found"},
      {700, "an illegal memory access was encountered"}};
  auto it = texts.find(code);
  *text = it == texts.end() ? nullptr : it->second;
  return it == texts.end() ? kInvalidValue : kSuccess;
}

FAKE_EXPORT int cuDeviceGetCount(int *count) {
  if (int code = enter("cuDeviceGetCount", false))
    return code;
  *count = deviceCount();
  return kSuccess;
}

FAKE_EXPORT int cuDeviceGet(int *device, int ordinal) {
  if (int code = enter("cuDeviceGet", false))
    return code;
  if (ordinal < 0 || ordinal >= deviceCount() || ordinal >= 8)
    return kInvalidDevice;
  *device = ordinal;
  return kSuccess;
}

FAKE_EXPORT int cuDeviceGetName(char *name, int len, int device) {
  if (int code = enter("cuDeviceGetName", false))
    return code;
  std::snprintf(name, len, "Fake GPU %d", device);
  return kSuccess;
}

FAKE_EXPORT int cuDeviceGetAttribute(int *value, int attribute, int device) {
  if (int code = enter("cuDeviceGetAttribute", false))
    return code;
  switch (attribute) {
  case 13: // clock rate
    *value = 1980000;
    return kSuccess;
  case 16: // multiprocessors
    *value = 132;
    return kSuccess;
  case 36: // memory clock
    *value = 2619000;
    return kSuccess;
  case 37: // bus width
    *value = 6144;
    return kSuccess;
  case 75:
    *value = 9;
    return kSuccess;
  case 76:
    *value = 0;
    return kSuccess;
  case 97: // max shared memory per block, opt-in
    *value = 232448;
    return kSuccess;
  }
  return kInvalidValue;
}

FAKE_EXPORT int cuDeviceTotalMem_v2(size_t *bytes, int device) {
  if (int code = enter("cuDeviceTotalMem", false))
    return code;
  *bytes = size_t(141) << 30;
  return kSuccess;
}

FAKE_EXPORT int cuDevicePrimaryCtxRetain(void **ctx, int device) {
  logCall("cuDevicePrimaryCtxRetain %d", device);
  if (int code = enter("cuDevicePrimaryCtxRetain", false))
    return code;
  if (device < 0 || device >= 8)
    return kInvalidDevice;
  *ctx = &state().contexts[device];
  return kSuccess;
}

FAKE_EXPORT int cuCtxGetCurrent(void **ctx) {
  if (int code = enter("cuCtxGetCurrent", false))
    return code;
  *ctx = contextStack.empty() ? nullptr : contextStack.back();
  return kSuccess;
}

FAKE_EXPORT int cuCtxPushCurrent_v2(void *ctx) {
  if (int code = enter("cuCtxPushCurrent", false))
    return code;
  contextStack.push_back(ctx);
  return kSuccess;
}

FAKE_EXPORT int cuCtxPopCurrent_v2(void **ctx) {
  if (int code = enter("cuCtxPopCurrent", false))
    return code;
  if (contextStack.empty())
    return kInvalidContext;
  if (ctx)
    *ctx = contextStack.back();
  contextStack.pop_back();
  return kSuccess;
}

/// A cubin (ELF) or fatbin image: every function name is found in it.
static bool isBinaryImage(const void *image) {
  const auto *b = static_cast<const unsigned char *>(image);
  return (b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F') ||
         (b[0] == 0x50 && b[1] == 0xed && b[2] == 0x55 && b[3] == 0xba);
}

FAKE_EXPORT int cuModuleLoadData(void **module, const void *image) {
  bool binary = isBinaryImage(image);
  logCall("cuModuleLoadData %s",
          binary ? "<binary image>" : static_cast<const char *>(image));
  if (int code = enter("cuModuleLoadData", true))
    return code;
  *module = new Module{binary ? std::string("*")
                              : std::string(static_cast<const char *>(image)),
                       {}};
  return kSuccess;
}

FAKE_EXPORT int cuModuleLoadDataEx(void **module, const void *image, unsigned n,
                                   int *options, void **values) {
  const char *text = static_cast<const char *>(image);
  int optLevel = -1;
  char *errorLog = nullptr;
  size_t errorLogSize = 0;
  for (unsigned i = 0; i < n; ++i) {
    if (options[i] == 5)
      errorLog = static_cast<char *>(values[i]);
    else if (options[i] == 6)
      errorLogSize = reinterpret_cast<uintptr_t>(values[i]);
    else if (options[i] == 7)
      optLevel = static_cast<int>(reinterpret_cast<intptr_t>(values[i]));
  }
  const char *eol = std::strchr(text, '\n');
  int firstLine = eol ? static_cast<int>(eol - text) : 200;
  logCall("cuModuleLoadDataEx %.*s O%d", firstLine, text, optLevel);
  if (int code = enter("cuModuleLoadDataEx", true))
    return code;
  if (std::strstr(text, "bad-ptx")) {
    if (errorLog && errorLogSize)
      std::snprintf(errorLog, errorLogSize, "ptxas fatal: fake syntax error");
    return kInvalidPtx;
  }
  *module = new Module{text, {}};
  return kSuccess;
}

FAKE_EXPORT int cuModuleUnload(void *module) {
  logCall("cuModuleUnload");
  if (int code = enter("cuModuleUnload", false))
    return code;
  delete static_cast<Module *>(module);
  return kSuccess;
}

FAKE_EXPORT int cuModuleGetFunction(void **fn, void *module, const char *name) {
  logCall("cuModuleGetFunction %s", name);
  if (int code = enter("cuModuleGetFunction", true))
    return code;
  if (!module)
    return kInvalidHandle;
  const std::string &image = static_cast<Module *>(module)->image;
  if (image != "*" && !std::strstr(image.c_str(), name))
    return kNotFound;
  auto &f = static_cast<Module *>(module)->functions[name];
  if (!f)
    f.reset(new Function{name});
  *fn = f.get();
  return kSuccess;
}

FAKE_EXPORT int cuFuncSetAttribute(void *fn, int attribute, int value) {
  logCall("cuFuncSetAttribute %s %d %d",
          static_cast<Function *>(fn)->name.c_str(), attribute, value);
  return enter("cuFuncSetAttribute", true);
}

namespace {

int launch(const char *what, void *fn, const unsigned *grid,
           const unsigned *block, unsigned smem, void *stream, void **params) {
  const std::string &name = static_cast<Function *>(fn)->name;
  if (int code = enter(what, true))
    return code;
  KernelFn kernel = nullptr;
  {
    State &s = state();
    std::lock_guard<std::mutex> guard(s.lock);
    auto it = s.kernels.find(name);
    if (it != s.kernels.end())
      kernel = it->second;
  }
  if (kernel)
    kernel(params, grid, block, smem);
  return kSuccess;
}

} // namespace

FAKE_EXPORT int cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz,
                               unsigned bx, unsigned by, unsigned bz,
                               unsigned smem, void *stream, void **params,
                               void **extra) {
  logCall("cuLaunchKernel %s grid=%u,%u,%u block=%u,%u,%u smem=%u stream=s%d",
          static_cast<Function *>(fn)->name.c_str(), gx, gy, gz, bx, by, bz,
          smem, streamId(stream));
  unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
  return launch("cuLaunchKernel", fn, grid, block, smem, stream, params);
}

#ifndef FAKE_CUDA_OLD_DRIVER
struct FakeLaunchAttribute {
  int id;
  char pad[4];
  union {
    char raw[64];
    unsigned dim[3];
  } value;
};
struct FakeLaunchConfig {
  unsigned grid[3], block[3], smem;
  void *stream;
  FakeLaunchAttribute *attrs;
  unsigned numAttrs;
};

FAKE_EXPORT int cuLaunchKernelEx(const FakeLaunchConfig *config, void *fn,
                                 void **params, void **extra) {
  std::string attrs;
  for (unsigned i = 0; i < config->numAttrs; ++i)
    attrs += " attr" + std::to_string(config->attrs[i].id) + "=" +
             std::to_string(config->attrs[i].value.dim[0]) + "," +
             std::to_string(config->attrs[i].value.dim[1]) + "," +
             std::to_string(config->attrs[i].value.dim[2]);
  logCall("cuLaunchKernelEx %s grid=%u,%u,%u block=%u,%u,%u smem=%u "
          "stream=s%d%s",
          static_cast<Function *>(fn)->name.c_str(), config->grid[0],
          config->grid[1], config->grid[2], config->block[0], config->block[1],
          config->block[2], config->smem, streamId(config->stream),
          attrs.c_str());
  return launch("cuLaunchKernelEx", fn, config->grid, config->block,
                config->smem, config->stream, params);
}
#endif

FAKE_EXPORT int cuStreamCreate(void **stream, unsigned flags) {
  if (int code = enter("cuStreamCreate", true))
    return code;
  State &s = state();
  int id;
  {
    std::lock_guard<std::mutex> guard(s.lock);
    id = s.nextStream++;
  }
  *stream = new Stream{id};
  logCall("cuStreamCreate s%d flags=%u", id, flags);
  return kSuccess;
}

FAKE_EXPORT int cuStreamDestroy_v2(void *stream) {
  logCall("cuStreamDestroy s%d", streamId(stream));
  if (int code = enter("cuStreamDestroy", false))
    return code;
  if (!stream)
    return kInvalidHandle;
  delete static_cast<Stream *>(stream);
  return kSuccess;
}

FAKE_EXPORT int cuStreamSynchronize(void *stream) {
  logCall("cuStreamSynchronize s%d", streamId(stream));
  return enter("cuStreamSynchronize", true);
}

FAKE_EXPORT int cuStreamWaitEvent(void *stream, void *event, unsigned flags) {
  logCall("cuStreamWaitEvent s%d", streamId(stream));
  return enter("cuStreamWaitEvent", true);
}

FAKE_EXPORT int cuEventCreate(void **event, unsigned flags) {
  logCall("cuEventCreate flags=%u", flags);
  if (int code = enter("cuEventCreate", true))
    return code;
  *event = new Event{flags};
  return kSuccess;
}

FAKE_EXPORT int cuEventDestroy_v2(void *event) {
  logCall("cuEventDestroy");
  if (int code = enter("cuEventDestroy", false))
    return code;
  delete static_cast<Event *>(event);
  return kSuccess;
}

/// Each record advances the fake clock by 1.5 ms.
FAKE_EXPORT int cuEventRecord(void *event, void *stream) {
  logCall("cuEventRecord s%d", streamId(stream));
  if (int code = enter("cuEventRecord", true))
    return code;
  auto *e = static_cast<Event *>(event);
  State &s = state();
  std::lock_guard<std::mutex> guard(s.lock);
  s.clockMs += 1.5;
  e->recorded = true;
  e->timeMs = s.clockMs;
  return kSuccess;
}

FAKE_EXPORT int cuEventSynchronize(void *event) {
  logCall("cuEventSynchronize");
  return enter("cuEventSynchronize", true);
}

#ifdef FAKE_CUDA_OLD_DRIVER
FAKE_EXPORT int cuEventElapsedTime(float *ms, void *start, void *end) {
#else
FAKE_EXPORT int cuEventElapsedTime_v2(float *ms, void *start, void *end) {
#endif
  logCall("cuEventElapsedTime");
  if (int code = enter("cuEventElapsedTime", true))
    return code;
  auto *a = static_cast<Event *>(start), *b = static_cast<Event *>(end);
  if ((a->flags & 2) || (b->flags & 2) || !a->recorded || !b->recorded)
    return kInvalidHandle;
  *ms = static_cast<float>(b->timeMs - a->timeMs);
  return kSuccess;
}

FAKE_EXPORT int cuMemAlloc_v2(uintptr_t *p, size_t n) {
  logCall("cuMemAlloc %zu", n);
  if (int code = enter("cuMemAlloc", true))
    return code;
  return allocate(p, n);
}

FAKE_EXPORT int cuMemAllocManaged(uintptr_t *p, size_t n, unsigned flags) {
  logCall("cuMemAllocManaged %zu flags=%u", n, flags);
  if (int code = enter("cuMemAllocManaged", true))
    return code;
  return allocate(p, n);
}

#ifndef FAKE_CUDA_OLD_DRIVER
FAKE_EXPORT int cuMemAllocAsync(uintptr_t *p, size_t n, void *stream) {
  logCall("cuMemAllocAsync %zu s%d", n, streamId(stream));
  if (int code = enter("cuMemAllocAsync", true))
    return code;
  return allocate(p, n);
}
#endif

FAKE_EXPORT int cuMemFree_v2(uintptr_t p) {
  logCall("cuMemFree");
  if (int code = enter("cuMemFree", true))
    return code;
  return release(p);
}

#ifndef FAKE_CUDA_OLD_DRIVER
FAKE_EXPORT int cuMemFreeAsync(uintptr_t p, void *stream) {
  logCall("cuMemFreeAsync s%d", streamId(stream));
  if (int code = enter("cuMemFreeAsync", true))
    return code;
  return release(p);
}
#endif

FAKE_EXPORT int cuMemcpyAsync(uintptr_t dst, uintptr_t src, size_t n,
                              void *stream) {
  logCall("cuMemcpyAsync %zu s%d", n, streamId(stream));
  if (int code = enter("cuMemcpyAsync", true))
    return code;
  std::memmove(reinterpret_cast<void *>(dst), reinterpret_cast<void *>(src), n);
  return kSuccess;
}

FAKE_EXPORT int cuMemcpyHtoD_v2(uintptr_t dst, const void *src, size_t n) {
  logCall("cuMemcpyHtoD %zu", n);
  if (int code = enter("cuMemcpyHtoD", true))
    return code;
  if (!isDevice(dst, n) || isDevice(reinterpret_cast<uintptr_t>(src), n))
    return kInvalidValue;
  std::memcpy(reinterpret_cast<void *>(dst), src, n);
  return kSuccess;
}

FAKE_EXPORT int cuMemcpyDtoH_v2(void *dst, uintptr_t src, size_t n) {
  logCall("cuMemcpyDtoH %zu", n);
  if (int code = enter("cuMemcpyDtoH", true))
    return code;
  if (!isDevice(src, n) || isDevice(reinterpret_cast<uintptr_t>(dst), n))
    return kInvalidValue;
  std::memcpy(dst, reinterpret_cast<void *>(src), n);
  return kSuccess;
}

FAKE_EXPORT int cuMemcpyDtoD_v2(uintptr_t dst, uintptr_t src, size_t n) {
  logCall("cuMemcpyDtoD %zu", n);
  if (int code = enter("cuMemcpyDtoD", true))
    return code;
  if (!isDevice(src, n) || !isDevice(dst, n))
    return kInvalidValue;
  std::memmove(reinterpret_cast<void *>(dst), reinterpret_cast<void *>(src), n);
  return kSuccess;
}

namespace {

template <typename T>
int memsetDevice(const char *what, uintptr_t dst, T value, size_t count,
                 void *stream) {
  logCall("%s %zu s%d", what, count, streamId(stream));
  if (int code = enter(what, true))
    return code;
  if (!isDevice(dst, count * sizeof(T)))
    return kInvalidValue;
  T *p = reinterpret_cast<T *>(dst);
  for (size_t i = 0; i < count; ++i)
    p[i] = value;
  return kSuccess;
}

} // namespace

FAKE_EXPORT int cuMemsetD8Async(uintptr_t dst, unsigned char value, size_t n,
                                void *stream) {
  return memsetDevice("cuMemsetD8Async", dst, value, n, stream);
}

FAKE_EXPORT int cuMemsetD16Async(uintptr_t dst, unsigned short value, size_t n,
                                 void *stream) {
  return memsetDevice("cuMemsetD16Async", dst, value, n, stream);
}

FAKE_EXPORT int cuMemsetD32Async(uintptr_t dst, unsigned value, size_t n,
                                 void *stream) {
  return memsetDevice("cuMemsetD32Async", dst, value, n, stream);
}

FAKE_EXPORT int cuMemHostRegister_v2(void *p, size_t n, unsigned flags) {
  logCall("cuMemHostRegister %zu", n);
  return enter("cuMemHostRegister", true);
}

FAKE_EXPORT int cuMemHostUnregister(void *p) {
  logCall("cuMemHostUnregister");
  return enter("cuMemHostUnregister", true);
}

#ifndef FAKE_CUDA_OLD_DRIVER
/// Logs the arguments (innermost dimension first, as the driver counts) and
/// writes them into the map so that equal arguments give equal maps.
FAKE_EXPORT int
cuTensorMapEncodeTiled(uint64_t *map, int dtype, unsigned rank, void *address,
                       const uint64_t *dims, const uint64_t *strides,
                       const unsigned *box, const unsigned *elementStrides,
                       int interleave, int swizzle, int l2, int oob) {
  std::string text =
      "cuTensorMapEncodeTiled dtype=" + std::to_string(dtype) + " dims=";
  for (unsigned r = 0; r < rank; ++r)
    text += (r ? "," : "") + std::to_string(dims[r]);
  text += " strides=";
  for (unsigned r = 0; r + 1 < rank; ++r)
    text += (r ? "," : "") + std::to_string(strides[r]);
  text += " box=";
  for (unsigned r = 0; r < rank; ++r)
    text += (r ? "," : "") + std::to_string(box[r]);
  text += " swizzle=" + std::to_string(swizzle);
  logCall("%s", text.c_str());
  if (int code = enter("cuTensorMapEncodeTiled", false))
    return code;
  std::memset(map, 0, 128);
  map[0] = reinterpret_cast<uintptr_t>(address);
  map[1] = static_cast<uint64_t>(dtype) | uint64_t(rank) << 8 |
           uint64_t(swizzle) << 16;
  for (unsigned r = 0; r < rank; ++r) {
    map[2 + r] = dims[r];
    map[7 + r] = box[r];
  }
  return kSuccess;
}
#endif
