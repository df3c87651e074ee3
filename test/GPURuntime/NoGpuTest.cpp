//===- NoGpuTest.cpp - the GPU runtime without a driver or a device -------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// Run by ctest three times (test/GPURuntime/CMakeLists.txt):
//   NoDriver.*  ATTN_CUDA_DRIVER names a library that does not exist;
//   NoDevice.*  the fake driver with FAKE_CUDA_DEVICES=0;
//   Host.*      the environment as it is: this machine's driver, if any.
//
//===----------------------------------------------------------------------===//

#include "attn-c/Gpu.h"
#include "attn/Runtime/Mgpu.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace {

/// What generated code does from a global constructor: it must not touch
/// the driver (nor fail) on a machine without a GPU.
void *const moduleLoadedAtStartup =
    mgpuModuleLoad(const_cast<char *>("kernels: k"), 11);
const bool errorAfterStartup = attn_gpu_peek_error() != nullptr;

std::string take() {
  const char *e = attn_gpu_take_error();
  return e ? e : "";
}

TEST(NoDriver, ReportsWhy) {
  ASSERT_FALSE(attn_gpu_available());
  std::string reason = attn_gpu_unavailable_reason();
  EXPECT_EQ(reason.rfind("no NVIDIA driver (/nonexistent/libcuda.so.1) could "
                         "be loaded: ",
                         0),
            0u)
      << reason;
  EXPECT_EQ(attn_gpu_device_count(), 0);
  attn_gpu_device_info_t info;
  EXPECT_EQ(attn_gpu_device_info(0, &info), -1);
  EXPECT_EQ(take(), "attn_gpu_device_info: no GPU: " + reason);
}

TEST(NoDriver, StartupModuleLoadIsLazy) {
  EXPECT_NE(moduleLoadedAtStartup, nullptr);
  EXPECT_FALSE(errorAfterStartup);
  take();
  EXPECT_EQ(mgpuModuleGetFunction(moduleLoadedAtStartup, "k"), nullptr);
  EXPECT_EQ(take(), std::string("mgpuModuleGetFunction: no GPU: ") +
                        attn_gpu_unavailable_reason());
}

/// Every entry point: no crash, the first error kept, nothing else.
TEST(NoDriver, EveryFunctionFailsCleanly) {
  take();
  void *s = mgpuStreamCreate();
  EXPECT_EQ(s, nullptr);
  std::string first = take();
  EXPECT_EQ(first.rfind("mgpuStreamCreate: no GPU: no NVIDIA driver", 0), 0u)
      << first;
  int64_t desc[7] = {0, 0, 0, 4, 4, 4, 1};
  int64_t box[2] = {4, 4};
  mgpuLaunchKernel(nullptr, 1, 1, 1, 1, 1, 1, 0, s, nullptr, nullptr, 0);
  EXPECT_NE(take().find("mgpuLaunchKernel: no GPU"), std::string::npos);
  mgpuLaunchClusterKernel(nullptr, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, s, nullptr,
                          nullptr);
  mgpuStreamSynchronize(s);
  mgpuStreamWaitEvent(s, nullptr);
  mgpuStreamDestroy(s);
  EXPECT_EQ(mgpuEventCreate(), nullptr);
  mgpuEventRecord(nullptr, s);
  mgpuEventSynchronize(nullptr);
  mgpuEventDestroy(nullptr);
  EXPECT_EQ(mgpuMemAlloc(64, s, 0), nullptr);
  mgpuMemFree(reinterpret_cast<void *>(0x1000), s);
  mgpuMemcpy(desc, desc, 8, s);
  mgpuMemset32(desc, 0, 1, s);
  mgpuMemset16(desc, 0, 1, s);
  mgpuMemHostRegisterMemRef(2, desc, 4);
  mgpuMemHostUnregisterMemRef(2, desc, 4);
  EXPECT_EQ(mgpuTensorMapEncodeTiledMemref(2, desc, 6, 0, 0, 0, 0, box),
            nullptr);
  mgpuSetDefaultDevice(0);
  EXPECT_NE(take().find("no GPU"), std::string::npos);

  EXPECT_EQ(attn_gpu_malloc(16), nullptr);
  EXPECT_EQ(attn_gpu_free(reinterpret_cast<void *>(0x1000)), -1);
  EXPECT_EQ(attn_gpu_memcpy_h2d(desc, desc, 8), -1);
  EXPECT_EQ(attn_gpu_memcpy_d2h(desc, desc, 8), -1);
  EXPECT_EQ(attn_gpu_memcpy_d2d(desc, desc, 8), -1);
  EXPECT_EQ(attn_gpu_memset(desc, 0, 8, nullptr), -1);
  EXPECT_EQ(attn_gpu_stream_create(), nullptr);
  EXPECT_EQ(attn_gpu_stream_synchronize(nullptr), -1);
  EXPECT_EQ(attn_gpu_stream_destroy(nullptr), -1);
  EXPECT_EQ(attn_gpu_event_create(), nullptr);
  EXPECT_EQ(attn_gpu_event_record(nullptr, nullptr), -1);
  EXPECT_EQ(attn_gpu_event_synchronize(nullptr), -1);
  float ms = 1;
  EXPECT_EQ(attn_gpu_event_elapsed_ms(nullptr, nullptr, &ms), -1);
  EXPECT_EQ(ms, 0);
  EXPECT_EQ(attn_gpu_event_destroy(nullptr), -1);
  EXPECT_EQ(take().rfind("attn_gpu_malloc: no GPU", 0), 0u);
  EXPECT_EQ(attn_gpu_take_error(), nullptr);
}

TEST(NoDevice, ReportsWhy) {
  ASSERT_FALSE(attn_gpu_available());
  EXPECT_STREQ(attn_gpu_unavailable_reason(), "no CUDA device");
  EXPECT_EQ(attn_gpu_device_count(), 0);
  take();
  EXPECT_EQ(attn_gpu_malloc(16), nullptr);
  EXPECT_EQ(take(), "attn_gpu_malloc: no GPU: no CUDA device");
}

/// This machine as it is: either a usable GPU or a reason naming the
/// driver library.
TEST(Host, AvailableOrReason) {
  if (std::getenv("ATTN_CUDA_DRIVER"))
    GTEST_SKIP() << "ATTN_CUDA_DRIVER is set";
  if (attn_gpu_available()) {
    EXPECT_STREQ(attn_gpu_unavailable_reason(), "");
    EXPECT_GT(attn_gpu_device_count(), 0);
    return;
  }
  std::string reason = attn_gpu_unavailable_reason();
  EXPECT_TRUE(reason.rfind("no NVIDIA driver (libcuda.so.1) could be "
                           "loaded",
                           0) == 0 ||
              reason == "no CUDA device")
      << reason;
}

} // namespace
