//===- OldDriverTest.cpp - the GPU runtime over an older driver -----------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// FakeCuda.cpp built with FAKE_CUDA_OLD_DRIVER lacks the optional entry
// points (stream-ordered allocation, cuLaunchKernelEx,
// cuTensorMapEncodeTiled, cuEventElapsedTime_v2): the runtime falls back or
// says what is missing (ctest attn-gpu-runtime-old-driver).
//
//===----------------------------------------------------------------------===//

#include "FakeDriver.h"
#include "attn-c/Gpu.h"
#include "attn/Runtime/Mgpu.h"

#include <gtest/gtest.h>

#include <string>

using attn::test::fake;

namespace {

std::string take() {
  const char *e = attn_gpu_take_error();
  return e ? e : "";
}

TEST(OldDriver, FallsBackOrSaysWhatIsMissing) {
  ASSERT_TRUE(fake().ok) << "run with ATTN_CUDA_DRIVER=<the old fake driver>";
  ASSERT_TRUE(attn_gpu_available()) << attn_gpu_unavailable_reason();
  EXPECT_EQ(attn_gpu_free(attn_gpu_malloc(8)), 0); // retains the context
  fake().clearLog();

  // Memory: cuMemAlloc and cuMemFree instead of the stream-ordered pair.
  void *p = mgpuMemAlloc(64, nullptr, 0);
  EXPECT_NE(p, nullptr);
  mgpuMemFree(p, nullptr);
  EXPECT_EQ(fake().takeLog(), "cuMemAlloc 64\ncuMemFree\n");

  // Timing through the unversioned cuEventElapsedTime.
  void *a = attn_gpu_event_create(), *b = attn_gpu_event_create();
  EXPECT_EQ(attn_gpu_event_record(a, nullptr), 0);
  EXPECT_EQ(attn_gpu_event_record(b, nullptr), 0);
  float ms = 0;
  EXPECT_EQ(attn_gpu_event_elapsed_ms(a, b, &ms), 0);
  EXPECT_FLOAT_EQ(ms, 1.5f);
  attn_gpu_event_destroy(a);
  attn_gpu_event_destroy(b);

  // No cluster launches, no tensor maps.
  char image[] = "fake module: k";
  void *module = mgpuModuleLoad(image, sizeof(image));
  void *f = mgpuModuleGetFunction(module, "k");
  ASSERT_NE(f, nullptr);
  mgpuLaunchClusterKernel(f, 2, 1, 1, 2, 1, 1, 32, 1, 1, 0, nullptr, nullptr,
                          nullptr);
  EXPECT_EQ(take(),
            "mgpuLaunchClusterKernel: the driver has no cuLaunchKernelEx");
  int64_t desc[5] = {0, 0, 0, 64, 1};
  int64_t box[1] = {64};
  EXPECT_EQ(mgpuTensorMapEncodeTiledMemref(1, desc, 6, 0, 0, 0, 0, box),
            nullptr);
  EXPECT_EQ(take(), "mgpuTensorMapEncodeTiledMemref: the driver has no "
                    "cuTensorMapEncodeTiled (CUDA 12 or newer is needed)");
  EXPECT_EQ(fake().takeLog().find("cuLaunchKernel"), std::string::npos);
  mgpuModuleUnload(module);
}

} // namespace
