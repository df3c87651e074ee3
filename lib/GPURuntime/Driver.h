//===- Driver.h - the CUDA driver, loaded at run time -----------*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// The few CUDA driver types and entry points the GPU runtime uses, declared
// here (the runtime builds without the CUDA toolkit) and resolved with dlsym
// from libcuda.so.1 (or $ATTN_CUDA_DRIVER) on first use. Also the runtime's
// per-thread state: the first recorded error, the device, the current
// stream. Private to lib/GPURuntime.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_GPURUNTIME_DRIVER_H
#define ATTN_LIB_GPURUNTIME_DRIVER_H

#include <cstddef>
#include <cstdint>

namespace attn::gpu {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;

// Enumerators of cuda.h the runtime passes (values from CUDA 12/13).
enum : int {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_NOT_SUPPORTED = 801,
  CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13,
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 36,
  CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 37,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
  CU_STREAM_NON_BLOCKING = 1,
  CU_EVENT_DEFAULT = 0,
  CU_EVENT_DISABLE_TIMING = 2,
  CU_MEM_ATTACH_GLOBAL = 1,
  CU_JIT_ERROR_LOG_BUFFER = 5,
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
  CU_JIT_OPTIMIZATION_LEVEL = 7,
  CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4,
};

struct CUlaunchAttribute {
  int id;
  char pad[4];
  union {
    char raw[64];
    struct {
      unsigned x, y, z;
    } clusterDim;
  } value;
};

struct CUlaunchConfig {
  unsigned gridDimX, gridDimY, gridDimZ;
  unsigned blockDimX, blockDimY, blockDimZ;
  unsigned sharedMemBytes;
  CUstream hStream;
  CUlaunchAttribute *attrs;
  unsigned numAttrs;
};

/// 128 bytes, 128-byte aligned as cuda.h declares it.
struct alignas(128) CUtensorMap {
  uint64_t opaque[16];
};

/// The driver's entry points; optional ones (newer drivers) may be null.
struct DriverApi {
#define ATTN_CU_FN(name, ret, args) ret(*name) args;
#include "DriverFunctions.def"
};

/// The loaded driver, or null (see unavailableReason()). Loads the driver
/// and calls cuInit once, on the first call, from any thread.
const DriverApi *driver();

/// Why driver() is null, or "" when a driver with a device is usable.
const char *unavailableReason();

/// Records, unless an error is already pending on this thread,
/// "<call>: <name> (<description>)". Returns r == CUDA_SUCCESS.
bool check(const char *call, CUresult r);

/// Records a message unless an error is already pending on this thread.
void recordError(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/// The pending error of this thread (null if none); take clears it.
const char *peekError();
const char *takeError();

/// The device of this thread (mgpuSetDefaultDevice, attn_gpu_set_device).
int32_t &currentDevice();

/// The caller's current stream of this thread.
struct CurrentStream {
  bool set = false;
  CUstream stream = nullptr;
  uint32_t flags = 0;
};
CurrentStream &currentStream();

/// Makes the primary context of this thread's device current for the scope
/// (nothing when it already is). ok() is false when there is no GPU or the
/// context could not be made current; the error is recorded then.
class ScopedContext {
public:
  explicit ScopedContext(const char *what);
  ~ScopedContext();
  ScopedContext(const ScopedContext &) = delete;
  ScopedContext &operator=(const ScopedContext &) = delete;
  bool ok() const { return api != nullptr; }
  const DriverApi *operator->() const { return api; }
  const DriverApi *get() const { return api; }

private:
  const DriverApi *api = nullptr;
  bool pushed = false;
};

} // namespace attn::gpu

#endif // ATTN_LIB_GPURUNTIME_DRIVER_H
