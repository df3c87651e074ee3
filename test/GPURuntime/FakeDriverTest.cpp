//===- FakeDriverTest.cpp - the GPU runtime over a fake driver ------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// The runtime's logic against FakeCuda.cpp (ATTN_CUDA_DRIVER): lazy module
// loads, the shared-memory attribute, the current stream, error capture,
// copy directions, events, TMA descriptors, contexts.
//
//===----------------------------------------------------------------------===//

#include "FakeDriver.h"
#include "attn-c/Gpu.h"
#include "attn/Runtime/Mgpu.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

using attn::test::fake;

namespace {

char kImage[] = "fake module: add_one scale";

/// Loaded from a global constructor, as generated code does.
void *const startupModule = mgpuModuleLoad(kImage, sizeof(kImage));

/// A "kernel" the fake runs on the host: params = {float *data, int64 n}.
/// Launches without parameters (other tests) do nothing.
void addOne(void **params, const unsigned *, const unsigned *, unsigned) {
  if (!params)
    return;
  float *data = *static_cast<float **>(params[0]);
  int64_t n = *static_cast<int64_t *>(params[1]);
  for (int64_t i = 0; i < n; ++i)
    data[i] += 1;
}

std::string take() {
  const char *e = attn_gpu_take_error();
  return e ? e : "";
}

int count(const std::string &text, const std::string &what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + 1))
    ++n;
  return n;
}

class FakeDriver : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_TRUE(fake().ok) << "run with ATTN_CUDA_DRIVER=<the fake driver>";
    ASSERT_TRUE(attn_gpu_available()) << attn_gpu_unavailable_reason();
    take();
    attn_gpu_clear_current_stream();
    fake().clearLog();
  }
  void TearDown() override { EXPECT_EQ(take(), ""); }
};

TEST_F(FakeDriver, DeviceInfo) {
  EXPECT_STREQ(attn_gpu_unavailable_reason(), "");
  EXPECT_EQ(attn_gpu_device_count(), 1);
  attn_gpu_device_info_t info;
  ASSERT_EQ(attn_gpu_device_info(0, &info), 0);
  EXPECT_STREQ(info.name, "Fake GPU 0");
  EXPECT_EQ(info.compute_capability_major, 9);
  EXPECT_EQ(info.compute_capability_minor, 0);
  EXPECT_EQ(info.sm_count, 132);
  EXPECT_EQ(info.clock_khz, 1980000);
  EXPECT_EQ(info.max_shared_memory_per_block_optin, 232448);
  EXPECT_EQ(info.total_memory_bytes, uint64_t(141) << 30);
  EXPECT_NEAR(info.memory_bandwidth_gbs, 2 * 2619e6 * 768 / 1e9, 1e-6);
  EXPECT_EQ(attn_gpu_device_info(3, &info), -1);
  EXPECT_EQ(take(), "cuDeviceGet: CUDA_ERROR_INVALID_DEVICE (no description)");
}

TEST_F(FakeDriver, ModulesLoadOnFirstUseOnly) {
  // The global constructor's load reached the driver at no point.
  void *m = startupModule;
  EXPECT_EQ(fake().takeLog().find("cuModuleLoad"), std::string::npos);
  void *f = mgpuModuleGetFunction(m, "add_one");
  EXPECT_NE(f, nullptr);
  EXPECT_NE(mgpuModuleGetFunction(m, "scale"), nullptr);
  std::string log = fake().takeLog();
  EXPECT_EQ(count(log, "cuModuleLoadData fake module"), 1) << log;
  EXPECT_EQ(count(log, "cuModuleGetFunction"), 2) << log;

  EXPECT_EQ(mgpuModuleGetFunction(m, "missing"), nullptr);
  EXPECT_EQ(take(),
            "cuModuleGetFunction: CUDA_ERROR_NOT_FOUND (named symbol not "
            "found)");
  mgpuLaunchKernel(nullptr, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr, 0);
  EXPECT_EQ(take(), "mgpuLaunchKernel: no function (its module did not load)");
}

TEST_F(FakeDriver, JitModules) {
  char ptx[] = "fake ptx: add_one";
  void *m = mgpuModuleLoadJIT(ptx, 3);
  EXPECT_NE(mgpuModuleGetFunction(m, "add_one"), nullptr);
  EXPECT_NE(fake().takeLog().find("cuModuleLoadDataEx fake ptx: add_one O3"),
            std::string::npos);
  mgpuModuleUnload(m);
  EXPECT_EQ(count(fake().takeLog(), "cuModuleUnload"), 1);

  char bad[] = "bad-ptx: add_one";
  void *b = mgpuModuleLoadJIT(bad, 2);
  EXPECT_EQ(mgpuModuleGetFunction(b, "add_one"), nullptr);
  EXPECT_EQ(take(), "cuModuleLoadDataEx (PTX JIT): CUDA_ERROR_INVALID_PTX: "
                    "ptxas fatal: fake syntax error");
  mgpuModuleUnload(b);
  EXPECT_EQ(count(fake().takeLog(), "cuModuleUnload"), 0);
}

TEST_F(FakeDriver, LaunchPassesParamsAndStream) {
  fake().registerKernel("add_one", addOne);
  void *f = mgpuModuleGetFunction(startupModule, "add_one");
  void *s = mgpuStreamCreate();
  ASSERT_NE(s, nullptr);
  float host[4] = {1, 2, 3, 4};
  auto *dev = static_cast<float *>(mgpuMemAlloc(sizeof(host), s, 0));
  ASSERT_NE(dev, nullptr);
  mgpuMemcpy(dev, host, sizeof(host), s);
  int64_t n = 4;
  void *params[] = {&dev, &n};
  mgpuLaunchKernel(f, 2, 1, 1, 128, 1, 1, 0, s, params, nullptr, 2);
  float back[4] = {};
  mgpuMemcpy(back, dev, sizeof(back), s);
  mgpuStreamSynchronize(s);
  mgpuMemFree(dev, s);
  mgpuStreamDestroy(s);
  EXPECT_EQ(back[0], 2);
  EXPECT_EQ(back[3], 5);
  std::string log = fake().takeLog();
  EXPECT_NE(log.find("cuStreamCreate s"), std::string::npos) << log;
  EXPECT_NE(log.find("cuMemAllocAsync 16 s"), std::string::npos) << log;
  EXPECT_NE(log.find("cuLaunchKernel add_one grid=2,1,1 block=128,1,1 "
                     "smem=0 stream=s"),
            std::string::npos)
      << log;
  EXPECT_EQ(log.find("cuFuncSetAttribute"), std::string::npos) << log;
  EXPECT_NE(log.find("cuMemFreeAsync s"), std::string::npos) << log;
  EXPECT_NE(log.find("cuStreamDestroy s"), std::string::npos) << log;
}

TEST_F(FakeDriver, LargeSharedMemoryOptsIn) {
  void *f = mgpuModuleGetFunction(startupModule, "add_one");
  fake().clearLog();
  mgpuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 48 * 1024, nullptr, nullptr, nullptr,
                   0);
  std::string log = fake().takeLog();
  EXPECT_EQ(log.find("cuFuncSetAttribute"), std::string::npos) << log;
  mgpuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 48 * 1024 + 1, nullptr, nullptr,
                   nullptr, 0);
  log = fake().takeLog();
  size_t attr = log.find("cuFuncSetAttribute add_one 8 49153");
  ASSERT_NE(attr, std::string::npos) << log;
  EXPECT_LT(attr, log.find("cuLaunchKernel add_one grid=1,1,1 block=32,1,1 "
                           "smem=49153"));
  mgpuLaunchClusterKernel(f, 2, 1, 1, 4, 1, 1, 128, 1, 1, 200 * 1024, nullptr,
                          nullptr, nullptr);
  log = fake().takeLog();
  EXPECT_NE(log.find("cuFuncSetAttribute add_one 8 204800"), std::string::npos)
      << log;
  EXPECT_NE(log.find("cuLaunchKernelEx add_one grid=4,1,1 block=128,1,1 "
                     "smem=204800 stream=s0 attr4=2,1,1"),
            std::string::npos)
      << log;
}

TEST_F(FakeDriver, EmptyGridLaunchesNothing) {
  void *f = mgpuModuleGetFunction(startupModule, "add_one");
  fake().clearLog();
  mgpuLaunchKernel(f, 0, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr, 0);
  EXPECT_EQ(fake().takeLog(), "");
  mgpuLaunchKernel(f, int64_t(1) << 40, 1, 1, 32, 1, 1, 0, nullptr, nullptr,
                   nullptr, 0);
  EXPECT_EQ(take().rfind("mgpuLaunchKernel: grid (1099511627776, 1, 1)", 0),
            0u);
}

TEST_F(FakeDriver, CurrentStream) {
  void *mine = attn_gpu_stream_create();
  fake().clearLog();
  attn_gpu_set_current_stream(mine, 0);
  void *got = nullptr;
  uint32_t flags = 7;
  EXPECT_EQ(attn_gpu_get_current_stream(&got, &flags), 1);
  EXPECT_EQ(got, mine);
  EXPECT_EQ(flags, 0u);
  EXPECT_EQ(mgpuStreamCreate(), mine);
  mgpuStreamSynchronize(mine);
  mgpuStreamDestroy(mine);
  std::string log = fake().takeLog();
  EXPECT_EQ(log.find("cuStreamCreate"), std::string::npos) << log;
  EXPECT_EQ(count(log, "cuStreamSynchronize"), 1) << log;
  EXPECT_EQ(log.find("cuStreamDestroy"), std::string::npos) << log;

  // Asynchronous: the generated code's synchronization is skipped too.
  attn_gpu_set_current_stream(mine, ATTN_GPU_STREAM_ASYNC);
  mgpuStreamSynchronize(mgpuStreamCreate());
  EXPECT_EQ(fake().takeLog(), "");

  // The null stream can be the current stream.
  attn_gpu_set_current_stream(nullptr, 0);
  EXPECT_EQ(mgpuStreamCreate(), nullptr);
  mgpuStreamDestroy(nullptr);
  EXPECT_EQ(fake().takeLog(), "");

  // Another thread has its own (none).
  std::thread([] {
    EXPECT_EQ(attn_gpu_get_current_stream(nullptr, nullptr), 0);
  }).join();

  attn_gpu_clear_current_stream();
  EXPECT_EQ(attn_gpu_get_current_stream(&got, nullptr), 0);
  void *fresh = mgpuStreamCreate();
  EXPECT_NE(fresh, nullptr);
  mgpuStreamDestroy(fresh);
  log = fake().takeLog();
  EXPECT_EQ(count(log, "cuStreamCreate"), 1) << log;
  EXPECT_EQ(count(log, "cuStreamDestroy"), 1) << log;
  EXPECT_EQ(attn_gpu_stream_destroy(mine), 0);
}

TEST_F(FakeDriver, FirstErrorPerThread) {
  void *f = mgpuModuleGetFunction(startupModule, "add_one");
  fake().failNext("cuLaunchKernel", 700);
  fake().failNext("cuStreamSynchronize", 1);
  mgpuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr, 0);
  mgpuStreamSynchronize(nullptr);
  EXPECT_STREQ(attn_gpu_peek_error(),
               "cuLaunchKernel: CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory "
               "access was encountered)");
  std::thread([] { EXPECT_EQ(attn_gpu_peek_error(), nullptr); }).join();
  EXPECT_EQ(take(), "cuLaunchKernel: CUDA_ERROR_ILLEGAL_ADDRESS (an illegal "
                    "memory access was encountered)");
  EXPECT_EQ(attn_gpu_take_error(), nullptr);
  // An error code the driver cannot name.
  fake().failNext("cuStreamSynchronize", 12345);
  EXPECT_EQ(attn_gpu_stream_synchronize(nullptr), -1);
  EXPECT_EQ(take(), "cuStreamSynchronize: CUDA error 12345");
}

TEST_F(FakeDriver, CopiesCheckDirections) {
  int live = fake().liveAllocations();
  auto *dev = static_cast<uint8_t *>(attn_gpu_malloc(16));
  ASSERT_NE(dev, nullptr);
  uint8_t host[16], back[16] = {};
  for (int i = 0; i < 16; ++i)
    host[i] = static_cast<uint8_t>(i);
  EXPECT_EQ(attn_gpu_memcpy_h2d(dev, host, 16), 0);
  EXPECT_EQ(attn_gpu_memset(dev + 8, 0xab, 4, nullptr), 0);
  EXPECT_EQ(attn_gpu_memcpy_d2h(back, dev, 16), 0);
  EXPECT_EQ(back[7], 7);
  EXPECT_EQ(back[8], 0xab);
  EXPECT_EQ(back[12], 12);
  auto *dev2 = static_cast<uint8_t *>(attn_gpu_malloc(16));
  EXPECT_EQ(attn_gpu_memcpy_d2d(dev2, dev, 16), 0);
  EXPECT_EQ(attn_gpu_memcpy_d2h(back, dev2, 16), 0);
  EXPECT_EQ(back[8], 0xab);
  std::string log = fake().takeLog();
  EXPECT_NE(log.find("cuMemcpyHtoD 16\ncuMemsetD8Async 4 s0\ncuMemcpyDtoH 16"),
            std::string::npos)
      << log;

  // The wrong way round: the driver refuses, the runtime says which call.
  EXPECT_EQ(attn_gpu_memcpy_h2d(host, dev, 16), -1);
  EXPECT_EQ(take(), "cuMemcpyHtoD: CUDA_ERROR_INVALID_VALUE (invalid "
                    "argument)");
  EXPECT_EQ(attn_gpu_memcpy_d2h(dev, host, 16), -1);
  EXPECT_EQ(take(), "cuMemcpyDtoH: CUDA_ERROR_INVALID_VALUE (invalid "
                    "argument)");
  EXPECT_EQ(attn_gpu_free(dev), 0);
  EXPECT_EQ(attn_gpu_free(dev2), 0);
  EXPECT_EQ(attn_gpu_free(nullptr), 0);
  EXPECT_EQ(fake().liveAllocations(), live);

  // Generated code's memsets, of 32 and 16 bits.
  auto *words = static_cast<uint32_t *>(mgpuMemAlloc(16, nullptr, 0));
  mgpuMemset32(words, 0x01020304u, 4, nullptr);
  mgpuMemset16(words, 0xffff, 2, nullptr);
  uint32_t w[4];
  EXPECT_EQ(attn_gpu_memcpy_d2h(w, words, 16), 0);
  EXPECT_EQ(w[0], 0xffffffffu);
  EXPECT_EQ(w[1], 0x01020304u);
  mgpuMemFree(words, nullptr);
  EXPECT_EQ(fake().liveAllocations(), live);
}

TEST_F(FakeDriver, MemAllocKinds) {
  EXPECT_EQ(mgpuMemAlloc(0, nullptr, 0), nullptr);
  void *managed = mgpuMemAlloc(32, nullptr, 1);
  EXPECT_NE(managed, nullptr);
  mgpuMemFree(managed, nullptr);
  mgpuMemFree(nullptr, nullptr);
  std::string log = fake().takeLog();
  // Managed memory is not stream-ordered: cuMemFree, not cuMemFreeAsync.
  EXPECT_EQ(log, "cuMemAllocManaged 32 flags=1\ncuMemFree\n");
}

TEST_F(FakeDriver, Events) {
  void *a = attn_gpu_event_create(), *b = attn_gpu_event_create();
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(attn_gpu_event_record(a, nullptr), 0);
  EXPECT_EQ(attn_gpu_event_record(b, nullptr), 0);
  EXPECT_EQ(attn_gpu_event_synchronize(b), 0);
  float ms = 0;
  EXPECT_EQ(attn_gpu_event_elapsed_ms(a, b, &ms), 0);
  EXPECT_FLOAT_EQ(ms, 1.5f);
  EXPECT_EQ(attn_gpu_event_elapsed_ms(a, b, nullptr), -1);
  EXPECT_EQ(take(), "attn_gpu_event_elapsed_ms: null ms");

  // The generated code's events do not time (as in MLIR's wrappers).
  void *e = mgpuEventCreate();
  mgpuEventRecord(e, nullptr);
  mgpuStreamWaitEvent(nullptr, e);
  mgpuEventSynchronize(e);
  EXPECT_EQ(attn_gpu_event_elapsed_ms(a, e, &ms), -1);
  EXPECT_EQ(take(), "cuEventElapsedTime: CUDA_ERROR_INVALID_HANDLE (invalid "
                    "resource handle)");
  mgpuEventDestroy(e);
  EXPECT_EQ(attn_gpu_event_destroy(a), 0);
  EXPECT_EQ(attn_gpu_event_destroy(b), 0);
  std::string log = fake().takeLog();
  EXPECT_NE(log.find("cuEventCreate flags=0"), std::string::npos);
  EXPECT_NE(log.find("cuEventCreate flags=2"), std::string::npos);
  EXPECT_NE(log.find("cuStreamWaitEvent s0"), std::string::npos);
}

TEST_F(FakeDriver, HostRegisterMemRef) {
  float buf[40];
  // memref<4x8xf32, strided<[8, 1], offset: 2>>: 32 floats from buf + 2.
  int64_t desc[7] = {reinterpret_cast<int64_t>(buf),
                     reinterpret_cast<int64_t>(buf),
                     2,
                     4,
                     8,
                     8,
                     1};
  mgpuMemHostRegisterMemRef(2, desc, 4);
  mgpuMemHostUnregisterMemRef(2, desc, 4);
  EXPECT_EQ(fake().takeLog(), "cuMemHostRegister 128\ncuMemHostUnregister\n");
}

TEST_F(FakeDriver, TensorMapsAreEncodedAndCached) {
  std::vector<uint16_t> data(2 * 64 * 128);
  // memref<2x64x128xf16>, box 1x64x64, 128-byte swizzle (3).
  int64_t desc[9] = {reinterpret_cast<int64_t>(data.data()),
                     reinterpret_cast<int64_t>(data.data()),
                     0,
                     2,
                     64,
                     128,
                     64 * 128,
                     128,
                     1};
  int64_t box[3] = {1, 64, 64};
  int live = fake().liveAllocations();
  void *a = mgpuTensorMapEncodeTiledMemref(3, desc, 6, 0, 3, 0, 0, box);
  void *b = mgpuTensorMapEncodeTiledMemref(3, desc, 6, 0, 3, 0, 0, box);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a, b);
  EXPECT_EQ(fake().liveAllocations(), live + 1);
  std::string log = fake().takeLog();
  EXPECT_EQ(count(log, "cuTensorMapEncodeTiled dtype=6 dims=128,64,2 "
                       "strides=256,16384 box=64,64,1 swizzle=3"),
            2)
      << log;
  EXPECT_EQ(count(log, "cuMemAlloc 128\ncuMemcpyHtoD 128"), 1) << log;
  // The device copy holds the encoded map.
  uint64_t map[16];
  EXPECT_EQ(attn_gpu_memcpy_d2h(map, a, sizeof(map)), 0);
  EXPECT_EQ(map[0], reinterpret_cast<uint64_t>(data.data()));

  EXPECT_EQ(mgpuTensorMapEncodeTiledMemref(6, desc, 6, 0, 3, 0, 0, box),
            nullptr);
  EXPECT_EQ(take(), "mgpuTensorMapEncodeTiledMemref: rank 6 or data type 6 "
                    "out of range");
}

TEST_F(FakeDriver, ContextIsPushedAndPopped) {
  std::thread([] {
    void *ctx = reinterpret_cast<void *>(1);
    ASSERT_EQ(fake().ctxGetCurrent(&ctx), 0);
    EXPECT_EQ(ctx, nullptr);
    void *p = attn_gpu_malloc(8);
    EXPECT_NE(p, nullptr);
    EXPECT_EQ(attn_gpu_free(p), 0);
    ASSERT_EQ(fake().ctxGetCurrent(&ctx), 0);
    EXPECT_EQ(ctx, nullptr);
    EXPECT_EQ(attn_gpu_take_error(), nullptr);
  }).join();
}

TEST_F(FakeDriver, DeviceSelection) {
  attn_gpu_set_device(5);
  EXPECT_EQ(attn_gpu_get_device(), 5);
  EXPECT_EQ(attn_gpu_malloc(8), nullptr);
  EXPECT_EQ(take(), "cuDeviceGet: CUDA_ERROR_INVALID_DEVICE (no description)");
  mgpuSetDefaultDevice(0);
  EXPECT_EQ(attn_gpu_get_device(), 0);
}

} // namespace
