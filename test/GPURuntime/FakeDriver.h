//===- FakeDriver.h - the test controls of FakeCuda.cpp ---------*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TEST_GPURUNTIME_FAKEDRIVER_H
#define ATTN_TEST_GPURUNTIME_FAKEDRIVER_H

#include <cstdlib>
#include <dlfcn.h>
#include <string>

namespace attn::test {

using FakeKernel = void (*)(void **params, const unsigned *grid,
                            const unsigned *block, unsigned smem);

/// The controls of the fake driver the runtime loaded ($ATTN_CUDA_DRIVER).
struct FakeDriver {
  const char *(*log)();
  void (*clearLog)();
  void (*failNext)(const char *fn, int code);
  void (*registerKernel)(const char *name, FakeKernel fn);
  int (*liveAllocations)();
  int (*ctxGetCurrent)(void **ctx);
  bool ok = false;

  FakeDriver() {
    const char *path = std::getenv("ATTN_CUDA_DRIVER");
    void *h = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : nullptr;
    if (!h)
      return;
    log = reinterpret_cast<decltype(log)>(dlsym(h, "fake_cuda_log"));
    clearLog =
        reinterpret_cast<decltype(clearLog)>(dlsym(h, "fake_cuda_clear_log"));
    failNext =
        reinterpret_cast<decltype(failNext)>(dlsym(h, "fake_cuda_fail_next"));
    registerKernel = reinterpret_cast<decltype(registerKernel)>(
        dlsym(h, "fake_cuda_register_kernel"));
    liveAllocations = reinterpret_cast<decltype(liveAllocations)>(
        dlsym(h, "fake_cuda_live_allocations"));
    ctxGetCurrent =
        reinterpret_cast<decltype(ctxGetCurrent)>(dlsym(h, "cuCtxGetCurrent"));
    ok = log && clearLog && failNext && registerKernel && liveAllocations &&
         ctxGetCurrent;
  }

  /// The log since the last clear, then clears it.
  std::string takeLog() {
    std::string s = log();
    clearLog();
    return s;
  }
};

inline FakeDriver &fake() {
  static FakeDriver f;
  return f;
}

} // namespace attn::test

#endif // ATTN_TEST_GPURUNTIME_FAKEDRIVER_H
