//===- KernelCallTest.cpp - attn_kernel_call on GPU kernels ---------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// The kernel ABI's GPU path (ATTN_KERNEL_GPU) with a hand-written kernel
// whose host code calls the runtime as generated code does, over the fake
// driver (GpuKernelCall.*, GpuKernelCallSync.* with ATTN_GPU_SYNC=1) and
// without a driver (NoDriverKernelCall.*).
//
//===----------------------------------------------------------------------===//

#include "FakeDriver.h"
#include "attn-c/Gpu.h"
#include "attn-c/Kernel.h"
#include "attn/Runtime/Mgpu.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using attn::test::fake;

namespace {

char kImage[] = "fake module: copy_add_one";
void *const kModule = mgpuModuleLoad(kImage, sizeof(kImage));

/// The device side: out[i] = x[i] + 1 (params: x, out, n).
void copyAddOne(void **params, const unsigned *, const unsigned *, unsigned) {
  const float *x = *static_cast<float **>(params[0]);
  float *out = *static_cast<float **>(params[1]);
  int64_t n = *static_cast<int64_t *>(params[2]);
  for (int64_t i = 0; i < n; ++i)
    out[i] = x[i] + 1;
}

/// The host side, as gpu-to-llvm emits it: args are memref descriptors
/// {allocated, aligned, offset, size, stride}.
void invokePacked(void **args) {
  auto *x = static_cast<int64_t *>(args[0]);
  auto *out = static_cast<int64_t *>(args[1]);
  void *stream = mgpuStreamCreate();
  void *f = mgpuModuleGetFunction(kModule, "copy_add_one");
  void *src = reinterpret_cast<void *>(x[1]);
  void *dst = reinterpret_cast<void *>(out[1]);
  int64_t n = x[3];
  void *params[] = {&src, &dst, &n};
  mgpuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, stream, params, nullptr, 3);
  mgpuStreamSynchronize(stream);
  mgpuStreamDestroy(stream);
}

const int64_t kShape[] = {-1};
const char *const kDims[] = {"N"};
const attn_tensor_info_t kTensors[] = {
    {"x", {kDLFloat, 32, 1}, 1, 0, kShape, kDims},
    {"out", {kDLFloat, 32, 1}, 1, 1, kShape, kDims},
};

attn_kernel_info_t gpuKernel() {
  return {ATTN_KERNEL_ABI_VERSION,
          ATTN_KERNEL_GPU,
          "add_one",
          "attn_add_one",
          1,
          1,
          kTensors,
          "sm_90a",
          "fused",
          invokePacked,
          nullptr};
}

attn_kernel_info_t cpuKernel() {
  attn_kernel_info_t k = gpuKernel();
  k.flags = 0;
  k.name = "add_one_cpu";
  k.target_cpu = "x86-64";
  k.invoke_packed = [](void **) { ADD_FAILURE() << "CPU kernel called"; };
  return k;
}

struct Buffer {
  DLTensor t = {};
  int64_t shape[1];
  int64_t strides[1] = {1};
  Buffer(void *data, int64_t n, DLDeviceType type, int32_t device = 0) {
    shape[0] = n;
    t.data = data;
    t.device = {type, device};
    t.ndim = 1;
    t.dtype = {kDLFloat, 32, 1};
    t.shape = shape;
  }
};

std::string lastError() { return attn_last_error(); }

class GpuKernelCall : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_TRUE(fake().ok) << "run with ATTN_CUDA_DRIVER=<the fake driver>";
    ASSERT_TRUE(attn_gpu_available()) << attn_gpu_unavailable_reason();
    fake().registerKernel("copy_add_one", copyAddOne);
    x = static_cast<float *>(attn_gpu_malloc(sizeof(host)));
    out = static_cast<float *>(attn_gpu_malloc(sizeof(host)));
    ASSERT_EQ(attn_gpu_memcpy_h2d(x, host, sizeof(host)), 0);
    stream = attn_gpu_stream_create();
    attn_exec_options_init(&options);
    options.stream = stream;
    fake().clearLog();
  }
  void TearDown() override {
    attn_gpu_free(x);
    attn_gpu_free(out);
    attn_gpu_stream_destroy(stream);
    EXPECT_EQ(attn_gpu_take_error(), nullptr);
  }
  attn_status_t call(const attn_kernel_info_t &k, Buffer &a, Buffer &b,
                     const attn_exec_options_t *o) {
    DLTensor *ts[] = {&a.t, &b.t};
    return attn_kernel_call(&k, ts, 2, o);
  }

  float host[4] = {1, 2, 3, 4};
  float *x = nullptr, *out = nullptr;
  void *stream = nullptr;
  attn_exec_options_t options;
};

TEST_F(GpuKernelCall, RunsOnTheCallersStream) {
  attn_kernel_info_t k = gpuKernel();
  Buffer a(x, 4, kDLCUDA), b(out, 4, kDLCUDA);
  ASSERT_EQ(call(k, a, b, &options), ATTN_STATUS_OK) << lastError();
  float back[4] = {};
  ASSERT_EQ(attn_gpu_memcpy_d2h(back, out, sizeof(back)), 0);
  EXPECT_EQ(back[0], 2);
  EXPECT_EQ(back[3], 5);
  std::string log = fake().takeLog();
  // Launched on the caller's stream, none created, destroyed or waited for.
  size_t at = log.find("cuLaunchKernel copy_add_one grid=1,1,1 block=32,1,1 "
                       "smem=0 stream=s");
  ASSERT_NE(at, std::string::npos) << log;
  EXPECT_EQ(log.find("cuStreamCreate"), std::string::npos) << log;
  EXPECT_EQ(log.find("cuStreamDestroy"), std::string::npos) << log;
  EXPECT_EQ(log.find("cuStreamSynchronize"), std::string::npos) << log;
  EXPECT_EQ(attn_gpu_get_current_stream(nullptr, nullptr), 0);

  // Null options: CUDA's default stream (s0 in the fake's log).
  ASSERT_EQ(call(k, a, b, nullptr), ATTN_STATUS_OK) << lastError();
  EXPECT_NE(fake().takeLog().find("stream=s0"), std::string::npos);
}

TEST_F(GpuKernelCall, RestoresTheThreadsStreamAndDevice) {
  attn_kernel_info_t k = gpuKernel();
  Buffer a(x, 4, kDLCUDA), b(out, 4, kDLCUDA);
  int marker = 0;
  attn_gpu_set_current_stream(&marker, 0);
  ASSERT_EQ(call(k, a, b, &options), ATTN_STATUS_OK) << lastError();
  void *s = nullptr;
  uint32_t flags = 1;
  EXPECT_EQ(attn_gpu_get_current_stream(&s, &flags), 1);
  EXPECT_EQ(s, &marker);
  EXPECT_EQ(flags, 0u);
  attn_gpu_clear_current_stream();
  EXPECT_EQ(attn_gpu_get_device(), 0);
}

TEST_F(GpuKernelCall, DriverFailureIsADeviceError) {
  attn_kernel_info_t k = gpuKernel();
  Buffer a(x, 4, kDLCUDA), b(out, 4, kDLCUDA);
  // A stale error of an earlier call is not this call's.
  EXPECT_EQ(attn_gpu_memcpy_h2d(host, x, 4), -1);
  ASSERT_EQ(call(k, a, b, &options), ATTN_STATUS_OK) << lastError();

  fake().failNext("cuLaunchKernel", 700);
  EXPECT_EQ(call(k, a, b, &options), ATTN_STATUS_DEVICE_ERROR);
  EXPECT_EQ(lastError(), "kernel add_one: cuLaunchKernel: "
                         "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory "
                         "access was encountered)");
  EXPECT_STREQ(attn_status_name(ATTN_STATUS_DEVICE_ERROR),
               "ATTN_STATUS_DEVICE_ERROR");
}

TEST_F(GpuKernelCall, RejectsHostTensors) {
  attn_kernel_info_t k = gpuKernel();
  float hostOut[4];
  Buffer a(host, 4, kDLCPU), b(hostOut, 4, kDLCPU);
  EXPECT_EQ(call(k, a, b, &options), ATTN_STATUS_UNSUPPORTED_DEVICE);
  EXPECT_EQ(lastError(), "input x: device type 1, expected kDLCUDA (2): "
                         "kernel add_one runs on the GPU (sm_90a)");
  Buffer c(x, 4, kDLCUDA);
  EXPECT_EQ(call(k, c, b, &options), ATTN_STATUS_UNSUPPORTED_DEVICE);
  EXPECT_EQ(lastError(), "output out: device type 1, expected kDLCUDA (2): "
                         "kernel add_one runs on the GPU (sm_90a)");
  EXPECT_EQ(fake().takeLog(), "");
}

TEST_F(GpuKernelCall, CpuKernelRejectsDeviceTensorsAndStreams) {
  attn_kernel_info_t k = cpuKernel();
  Buffer a(x, 4, kDLCUDA), b(out, 4, kDLCUDA);
  EXPECT_EQ(call(k, a, b, nullptr), ATTN_STATUS_UNSUPPORTED_DEVICE);
  EXPECT_EQ(lastError(), "input x: device type 2, expected kDLCPU (1)");
  float hostOut[4];
  Buffer c(host, 4, kDLCPU), d(hostOut, 4, kDLCPU);
  EXPECT_EQ(call(k, c, d, &options), ATTN_STATUS_UNSUPPORTED_DEVICE);
  EXPECT_EQ(lastError(), "options->stream is set, but this is a CPU kernel");
}

TEST_F(GpuKernelCall, RejectsTwoDevicesAndStrides) {
  attn_kernel_info_t k = gpuKernel();
  Buffer a(x, 4, kDLCUDA), b(out, 4, kDLCUDA, 1);
  EXPECT_EQ(call(k, a, b, &options), ATTN_STATUS_UNSUPPORTED_DEVICE);
  EXPECT_EQ(lastError(), "output out: on CUDA device 1, the tensors before "
                         "it on CUDA device 0");
  Buffer c(x, 2, kDLCUDA), d(out, 2, kDLCUDA);
  c.strides[0] = 2;
  c.t.strides = c.strides;
  EXPECT_EQ(call(k, c, d, &options), ATTN_STATUS_UNSUPPORTED_DEVICE);
  EXPECT_EQ(lastError(), "input x: strides [2] are not dense row-major; GPU "
                         "kernels take contiguous tensors");
  size_t bytes = 1;
  DLTensor *ts[] = {&a.t, &d.t};
  EXPECT_EQ(attn_kernel_workspace_size(&k, ts, 2, &bytes),
            ATTN_STATUS_SHAPE_MISMATCH);
  Buffer e(out, 4, kDLCUDA);
  DLTensor *ok[] = {&a.t, &e.t};
  EXPECT_EQ(attn_kernel_workspace_size(&k, ok, 2, &bytes), ATTN_STATUS_OK);
  EXPECT_EQ(bytes, 0u);
  EXPECT_EQ(fake().takeLog(), "");
}

TEST_F(GpuKernelCall, RejectsReturnedOutputs) {
  attn_kernel_info_t k = gpuKernel();
  k.flags |= ATTN_KERNEL_RETURNS_OUTPUTS;
  Buffer a(x, 4, kDLCUDA), b(out, 4, kDLCUDA);
  EXPECT_EQ(call(k, a, b, &options), ATTN_STATUS_UNSUPPORTED_DEVICE);
  EXPECT_EQ(lastError(), "kernel add_one runs on the GPU and returns "
                         "dynamically shaped outputs, which GPU kernels "
                         "cannot");
}

TEST_F(GpuKernelCall, DispatchPicksByDevice) {
  attn_kernel_info_t cpu = cpuKernel(), gpu = gpuKernel();
  const attn_kernel_info_t *kernels[] = {&cpu, &gpu};
  Buffer a(x, 4, kDLCUDA), b(out, 4, kDLCUDA);
  DLTensor *ts[] = {&a.t, &b.t};
  ASSERT_EQ(attn_kernel_dispatch(kernels, 2, ts, 2, &options), ATTN_STATUS_OK)
      << lastError();
  EXPECT_NE(fake().takeLog().find("cuLaunchKernel copy_add_one"),
            std::string::npos);
}

using GpuKernelCallSync = GpuKernelCall;

/// ATTN_GPU_SYNC=1: the generated code's synchronization is kept, and a
/// failure there is the call's.
TEST_F(GpuKernelCallSync, SynchronizesAndReports) {
  attn_kernel_info_t k = gpuKernel();
  Buffer a(x, 4, kDLCUDA), b(out, 4, kDLCUDA);
  ASSERT_EQ(call(k, a, b, &options), ATTN_STATUS_OK) << lastError();
  std::string log = fake().takeLog();
  EXPECT_LT(log.find("cuLaunchKernel"), log.find("cuStreamSynchronize s"))
      << log;
  fake().failNext("cuStreamSynchronize", 700);
  EXPECT_EQ(call(k, a, b, &options), ATTN_STATUS_DEVICE_ERROR);
  EXPECT_EQ(lastError(), "kernel add_one: cuStreamSynchronize: "
                         "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory "
                         "access was encountered)");
}

TEST(NoDriverKernelCall, DeviceTensorsNeedAGpu) {
  attn_kernel_info_t k = gpuKernel();
  float a[4], b[4];
  Buffer x(a, 4, kDLCUDA), out(b, 4, kDLCUDA);
  DLTensor *ts[] = {&x.t, &out.t};
  EXPECT_EQ(attn_kernel_call(&k, ts, 2, nullptr), ATTN_STATUS_DEVICE_ERROR);
  EXPECT_EQ(lastError(), std::string("kernel add_one runs on the GPU "
                                     "(sm_90a): ") +
                             attn_gpu_unavailable_reason());
  Buffer hx(a, 4, kDLCPU);
  ts[0] = &hx.t;
  EXPECT_EQ(attn_kernel_call(&k, ts, 2, nullptr),
            ATTN_STATUS_UNSUPPORTED_DEVICE);
}

} // namespace
