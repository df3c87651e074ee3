//===- Driver.cpp - the CUDA driver, loaded at run time -------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// dlopen of libcuda.so.1 (or $ATTN_CUDA_DRIVER) and dlsym of its entry points
// on first use; the per-thread error, device and stream; primary contexts.
// Global state is allocated once and never freed, so that the functions stay
// usable from other libraries' global constructors and destructors.
//
//===----------------------------------------------------------------------===//

#include "Driver.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <mutex>
#include <string>

namespace attn::gpu {
namespace {

struct DriverState {
  DriverApi api = {};
  bool usable = false;
  std::string reason;
};

/// cuda.h maps these names to versioned symbols; the unversioned ones are
/// the old ABI.
const char *symbolName(const char *field) {
  static const char *const versioned[][2] = {
      {"cuDeviceTotalMem", "cuDeviceTotalMem_v2"},
      {"cuCtxPushCurrent", "cuCtxPushCurrent_v2"},
      {"cuCtxPopCurrent", "cuCtxPopCurrent_v2"},
      {"cuStreamDestroy", "cuStreamDestroy_v2"},
      {"cuEventDestroy", "cuEventDestroy_v2"},
      {"cuEventElapsedTime", "cuEventElapsedTime_v2"},
      {"cuMemAlloc", "cuMemAlloc_v2"},
      {"cuMemFree", "cuMemFree_v2"},
      {"cuMemcpyHtoD", "cuMemcpyHtoD_v2"},
      {"cuMemcpyDtoH", "cuMemcpyDtoH_v2"},
      {"cuMemcpyDtoD", "cuMemcpyDtoD_v2"},
      {"cuMemHostRegister", "cuMemHostRegister_v2"},
  };
  for (const auto &v : versioned)
    if (!std::strcmp(v[0], field))
      return v[1];
  return field;
}

/// Entry points older drivers lack; the runtime falls back or reports
/// CUDA_ERROR_NOT_SUPPORTED when they are missing.
bool isOptional(const char *field) {
  static const char *const optional[] = {
      "cuDriverGetVersion", "cuLaunchKernelEx", "cuMemAllocAsync",
      "cuMemFreeAsync", "cuTensorMapEncodeTiled"};
  for (const char *o : optional)
    if (!std::strcmp(o, field))
      return true;
  return false;
}

template <typename Fn>
bool resolve(void *handle, const char *field, Fn &fn, std::string &missing) {
  void *p = dlsym(handle, symbolName(field));
  if (!p && std::strcmp(symbolName(field), field))
    p = dlsym(handle, field); // an older driver: the unversioned symbol
  fn = reinterpret_cast<Fn>(p);
  if (!p && !isOptional(field) && missing.empty())
    missing = field;
  return p != nullptr;
}

DriverState *load() {
  auto *s = new DriverState();
  const char *env = std::getenv("ATTN_CUDA_DRIVER");
  std::string path = env && *env ? env : "libcuda.so.1";
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *why = dlerror();
    s->reason = "no NVIDIA driver (" + path + ") could be loaded";
    if (why)
      s->reason += std::string(": ") + why;
    return s;
  }
  std::string missing;
#define ATTN_CU_FN(name, ret, args)                                            \
  resolve(handle, #name, s->api.name, missing);
#include "DriverFunctions.def"
  if (!missing.empty()) {
    s->reason = "the NVIDIA driver " + path + " lacks " + missing;
    return s;
  }
  CUresult r = s->api.cuInit(0);
  if (r == CUDA_ERROR_NO_DEVICE) {
    s->reason = "no CUDA device";
    return s;
  }
  if (r != CUDA_SUCCESS) {
    const char *name = nullptr;
    if (s->api.cuGetErrorName(r, &name) != CUDA_SUCCESS || !name)
      name = "unknown error";
    s->reason = std::string("cuInit failed: ") + name;
    return s;
  }
  int count = 0;
  if (s->api.cuDeviceGetCount(&count) != CUDA_SUCCESS || count <= 0) {
    s->reason = "no CUDA device";
    return s;
  }
  s->usable = true;
  return s;
}

DriverState &state() {
  static DriverState *s = load();
  return *s;
}

struct ThreadError {
  bool pending = false;
  char text[1024] = {};
  char taken[1024] = {};
};
thread_local ThreadError threadError;

constexpr int kMaxDevices = 64;

} // namespace

const DriverApi *driver() {
  DriverState &s = state();
  return s.usable ? &s.api : nullptr;
}

const char *unavailableReason() { return state().reason.c_str(); }

void recordError(const char *fmt, ...) {
  if (threadError.pending)
    return;
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(threadError.text, sizeof(threadError.text), fmt, ap);
  va_end(ap);
  threadError.pending = true;
}

bool check(const char *call, CUresult r) {
  if (r == CUDA_SUCCESS)
    return true;
  if (threadError.pending)
    return false;
  const char *name = nullptr, *text = nullptr;
  const DriverApi &api = state().api;
  if (api.cuGetErrorName && api.cuGetErrorName(r, &name) != CUDA_SUCCESS)
    name = nullptr;
  if (api.cuGetErrorString && api.cuGetErrorString(r, &text) != CUDA_SUCCESS)
    text = nullptr;
  if (name)
    recordError("%s: %s (%s)", call, name, text ? text : "no description");
  else
    recordError("%s: CUDA error %d", call, r);
  return false;
}

const char *peekError() {
  return threadError.pending ? threadError.text : nullptr;
}

const char *takeError() {
  if (!threadError.pending)
    return nullptr;
  std::memcpy(threadError.taken, threadError.text, sizeof(threadError.text));
  threadError.pending = false;
  return threadError.taken;
}

int32_t &currentDevice() {
  thread_local int32_t device = 0;
  return device;
}

CurrentStream &currentStream() {
  thread_local CurrentStream stream;
  return stream;
}

namespace {

/// The primary context of `device`, retained on first use (and never
/// released: it lives as long as the process, like the CUDA runtime's).
CUcontext primaryContext(const DriverApi *api, int32_t device) {
  static std::mutex *lock = new std::mutex();
  static CUcontext *contexts = new CUcontext[kMaxDevices]();
  if (device < 0 || device >= kMaxDevices) {
    recordError("device %d: out of range", device);
    return nullptr;
  }
  std::lock_guard<std::mutex> guard(*lock);
  if (contexts[device])
    return contexts[device];
  CUdevice dev = 0;
  if (!check("cuDeviceGet", api->cuDeviceGet(&dev, device)))
    return nullptr;
  CUcontext ctx = nullptr;
  if (!check("cuDevicePrimaryCtxRetain",
             api->cuDevicePrimaryCtxRetain(&ctx, dev)))
    return nullptr;
  contexts[device] = ctx;
  return ctx;
}

} // namespace

ScopedContext::ScopedContext(const char *what) {
  const DriverApi *d = driver();
  if (!d) {
    recordError("%s: no GPU: %s", what, unavailableReason());
    return;
  }
  CUcontext ctx = primaryContext(d, currentDevice());
  if (!ctx)
    return;
  CUcontext cur = nullptr;
  if (!check("cuCtxGetCurrent", d->cuCtxGetCurrent(&cur)))
    return;
  if (cur != ctx) {
    if (!check("cuCtxPushCurrent", d->cuCtxPushCurrent(ctx)))
      return;
    pushed = true;
  }
  api = d;
}

ScopedContext::~ScopedContext() {
  if (!pushed)
    return;
  CUcontext popped = nullptr;
  check("cuCtxPopCurrent", api->cuCtxPopCurrent(&popped));
}

} // namespace attn::gpu
