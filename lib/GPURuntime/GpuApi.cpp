//===- GpuApi.cpp - the GPU runtime's C API (attn-c/Gpu.h) ----------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn-c/Gpu.h"

#include "Driver.h"

#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>

#define ATTN_GPU_EXPORT extern "C" __attribute__((visibility("default")))

using namespace attn::gpu;

namespace {

int status(bool ok) { return ok ? 0 : -1; }

CUdeviceptr dptr(const void *p) { return reinterpret_cast<CUdeviceptr>(p); }

} // namespace

ATTN_GPU_EXPORT int attn_gpu_available(void) { return driver() != nullptr; }

ATTN_GPU_EXPORT const char *attn_gpu_unavailable_reason(void) {
  return unavailableReason();
}

ATTN_GPU_EXPORT int attn_gpu_device_count(void) {
  const DriverApi *api = driver();
  int count = 0;
  if (!api || !check("cuDeviceGetCount", api->cuDeviceGetCount(&count)))
    return 0;
  return count;
}

ATTN_GPU_EXPORT int attn_gpu_device_info(int device,
                                         attn_gpu_device_info_t *info) {
  if (!info) {
    recordError("attn_gpu_device_info: null info");
    return -1;
  }
  std::memset(info, 0, sizeof(*info));
  const DriverApi *api = driver();
  if (!api) {
    recordError("attn_gpu_device_info: no GPU: %s", unavailableReason());
    return -1;
  }
  CUdevice dev = 0;
  if (!check("cuDeviceGet", api->cuDeviceGet(&dev, device)) ||
      !check("cuDeviceGetName",
             api->cuDeviceGetName(info->name, sizeof(info->name) - 1, dev)))
    return -1;
  struct {
    int attribute;
    int32_t *field;
    bool required;
  } attributes[] = {
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
       &info->compute_capability_major, true},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
       &info->compute_capability_minor, true},
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &info->sm_count, true},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
       &info->max_shared_memory_per_block_optin, true},
      // Deprecated figures a driver may no longer report: 0 then.
      {CU_DEVICE_ATTRIBUTE_CLOCK_RATE, &info->clock_khz, false},
      {CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, &info->memory_clock_khz, false},
      {CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH,
       &info->memory_bus_width_bits, false},
  };
  for (auto &a : attributes) {
    int value = 0;
    CUresult r = api->cuDeviceGetAttribute(&value, a.attribute, dev);
    if (r != CUDA_SUCCESS && a.required) {
      check("cuDeviceGetAttribute", r);
      return -1;
    }
    *a.field = r == CUDA_SUCCESS ? value : 0;
  }
  size_t total = 0;
  if (!check("cuDeviceTotalMem", api->cuDeviceTotalMem(&total, dev)))
    return -1;
  info->total_memory_bytes = total;
  info->memory_bandwidth_gbs = 2.0 * info->memory_clock_khz * 1e3 *
                               (info->memory_bus_width_bits / 8.0) / 1e9;
  return 0;
}

ATTN_GPU_EXPORT int32_t attn_gpu_sm_count(void) {
  // Per device, asked once (0: not asked yet; -1: unknown).
  static std::mutex mutex;
  static std::map<int32_t, int32_t> counts;
  int32_t device = currentDevice();
  std::lock_guard<std::mutex> lock(mutex);
  int32_t &count = counts[device];
  if (count == 0) {
    count = -1;
    const DriverApi *api = driver();
    CUdevice dev = 0;
    int value = 0;
    if (api && api->cuDeviceGet(&dev, device) == CUDA_SUCCESS &&
        api->cuDeviceGetAttribute(&value,
                                  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                  dev) == CUDA_SUCCESS &&
        value > 0)
      count = value;
  }
  return count > 0 ? count : 0;
}

ATTN_GPU_EXPORT void attn_gpu_set_device(int device) {
  currentDevice() = device;
}

ATTN_GPU_EXPORT int attn_gpu_get_device(void) { return currentDevice(); }

ATTN_GPU_EXPORT void attn_gpu_set_current_stream(void *stream, uint32_t flags) {
  currentStream() = {true, static_cast<CUstream>(stream), flags};
}

ATTN_GPU_EXPORT void attn_gpu_clear_current_stream(void) {
  currentStream() = {};
}

ATTN_GPU_EXPORT int attn_gpu_get_current_stream(void **stream,
                                                uint32_t *flags) {
  const CurrentStream &c = currentStream();
  if (stream)
    *stream = c.set ? c.stream : nullptr;
  if (flags)
    *flags = c.set ? c.flags : 0;
  return c.set;
}

ATTN_GPU_EXPORT void *attn_gpu_malloc(size_t bytes) {
  ScopedContext ctx("attn_gpu_malloc");
  CUdeviceptr p = 0;
  if (ctx.ok() && bytes && !check("cuMemAlloc", ctx->cuMemAlloc(&p, bytes)))
    p = 0;
  return reinterpret_cast<void *>(p);
}

ATTN_GPU_EXPORT int attn_gpu_free(void *device_ptr) {
  if (!device_ptr)
    return 0;
  ScopedContext ctx("attn_gpu_free");
  return status(ctx.ok() &&
                check("cuMemFree", ctx->cuMemFree(dptr(device_ptr))));
}

ATTN_GPU_EXPORT int attn_gpu_memcpy_h2d(void *device_dst, const void *host_src,
                                        size_t bytes) {
  ScopedContext ctx("attn_gpu_memcpy_h2d");
  return status(
      ctx.ok() &&
      (!bytes || check("cuMemcpyHtoD",
                       ctx->cuMemcpyHtoD(dptr(device_dst), host_src, bytes))));
}

ATTN_GPU_EXPORT int attn_gpu_memcpy_d2h(void *host_dst, const void *device_src,
                                        size_t bytes) {
  ScopedContext ctx("attn_gpu_memcpy_d2h");
  return status(
      ctx.ok() &&
      (!bytes || check("cuMemcpyDtoH",
                       ctx->cuMemcpyDtoH(host_dst, dptr(device_src), bytes))));
}

ATTN_GPU_EXPORT int attn_gpu_memcpy_d2d(void *device_dst,
                                        const void *device_src, size_t bytes) {
  ScopedContext ctx("attn_gpu_memcpy_d2d");
  return status(ctx.ok() &&
                (!bytes || check("cuMemcpyDtoD",
                                 ctx->cuMemcpyDtoD(dptr(device_dst),
                                                   dptr(device_src), bytes))));
}

ATTN_GPU_EXPORT int attn_gpu_memset(void *device_dst, uint8_t value,
                                    size_t bytes, void *stream) {
  ScopedContext ctx("attn_gpu_memset");
  return status(
      ctx.ok() &&
      (!bytes || check("cuMemsetD8Async",
                       ctx->cuMemsetD8Async(dptr(device_dst), value, bytes,
                                            static_cast<CUstream>(stream)))));
}

ATTN_GPU_EXPORT void *attn_gpu_stream_create(void) {
  ScopedContext ctx("attn_gpu_stream_create");
  CUstream s = nullptr;
  if (ctx.ok())
    check("cuStreamCreate", ctx->cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  return s;
}

ATTN_GPU_EXPORT int attn_gpu_stream_destroy(void *stream) {
  ScopedContext ctx("attn_gpu_stream_destroy");
  return status(ctx.ok() &&
                check("cuStreamDestroy",
                      ctx->cuStreamDestroy(static_cast<CUstream>(stream))));
}

ATTN_GPU_EXPORT int attn_gpu_stream_synchronize(void *stream) {
  ScopedContext ctx("attn_gpu_stream_synchronize");
  return status(ctx.ok() &&
                check("cuStreamSynchronize",
                      ctx->cuStreamSynchronize(static_cast<CUstream>(stream))));
}

ATTN_GPU_EXPORT void *attn_gpu_event_create(void) {
  ScopedContext ctx("attn_gpu_event_create");
  CUevent e = nullptr;
  if (ctx.ok())
    check("cuEventCreate", ctx->cuEventCreate(&e, CU_EVENT_DEFAULT));
  return e;
}

ATTN_GPU_EXPORT int attn_gpu_event_destroy(void *event) {
  ScopedContext ctx("attn_gpu_event_destroy");
  return status(ctx.ok() &&
                check("cuEventDestroy",
                      ctx->cuEventDestroy(static_cast<CUevent>(event))));
}

ATTN_GPU_EXPORT int attn_gpu_event_record(void *event, void *stream) {
  ScopedContext ctx("attn_gpu_event_record");
  return status(ctx.ok() &&
                check("cuEventRecord",
                      ctx->cuEventRecord(static_cast<CUevent>(event),
                                         static_cast<CUstream>(stream))));
}

ATTN_GPU_EXPORT int attn_gpu_event_synchronize(void *event) {
  ScopedContext ctx("attn_gpu_event_synchronize");
  return status(ctx.ok() &&
                check("cuEventSynchronize",
                      ctx->cuEventSynchronize(static_cast<CUevent>(event))));
}

ATTN_GPU_EXPORT int attn_gpu_event_elapsed_ms(void *start, void *end,
                                              float *ms) {
  if (!ms) {
    recordError("attn_gpu_event_elapsed_ms: null ms");
    return -1;
  }
  *ms = 0;
  ScopedContext ctx("attn_gpu_event_elapsed_ms");
  return status(ctx.ok() &&
                check("cuEventElapsedTime",
                      ctx->cuEventElapsedTime(ms, static_cast<CUevent>(start),
                                              static_cast<CUevent>(end))));
}

ATTN_GPU_EXPORT const char *attn_gpu_take_error(void) { return takeError(); }

ATTN_GPU_EXPORT const char *attn_gpu_peek_error(void) { return peekError(); }
