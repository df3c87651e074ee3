//===- MgpuWrappers.cpp - what MLIR's gpu-to-llvm host code calls ---------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// The mgpu* functions of MLIR 22's GPU host code (the declarations
// gpu-to-llvm and the gpu.binary translation emit), over the driver loaded
// at run time. Differences from MLIR's CudaRuntimeWrappers, which Debian
// does not ship:
// - Failures are recorded on the calling thread (attn_gpu_take_error), not
//   printed; without a GPU every function records "no GPU" and does nothing.
// - Modules load lazily, on the first mgpuModuleGetFunction, once per
//   device: the generated code calls mgpuModuleLoad from a global
//   constructor, which must not touch the driver on a machine without a GPU.
// - mgpuStreamCreate returns the caller's current stream when one is set
//   (attn_gpu_set_current_stream), and its destruction is a no-op.
// - Device memory is stream-ordered (cuMemAllocAsync/cuMemFreeAsync) where
//   the driver has it; TMA descriptors are cached per device and content.
//
//===----------------------------------------------------------------------===//

#include "Driver.h"

#include <climits>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#define ATTN_GPU_EXPORT extern "C" __attribute__((visibility("default")))

using namespace attn::gpu;

namespace {

/// A module as the generated code sees it: the image, loaded per device on
/// first use.
struct LazyModule {
  const void *image;
  bool jit;
  int optLevel;
  std::mutex lock;
  std::vector<std::pair<int32_t, CUmodule>> loaded;
};

const char *errorName(const DriverApi *api, CUresult r) {
  const char *name = nullptr;
  if (api->cuGetErrorName(r, &name) != CUDA_SUCCESS || !name)
    return "unknown CUDA error";
  return name;
}

CUmodule loadFor(const DriverApi *api, LazyModule &m, int32_t device) {
  std::lock_guard<std::mutex> guard(m.lock);
  for (auto &[d, mod] : m.loaded)
    if (d == device)
      return mod;
  CUmodule mod = nullptr;
  if (!m.jit) {
    if (!check("cuModuleLoadData", api->cuModuleLoadData(&mod, m.image)))
      return nullptr;
  } else {
    char log[4096] = {};
    int options[] = {CU_JIT_ERROR_LOG_BUFFER,
                     CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                     CU_JIT_OPTIMIZATION_LEVEL};
    void *values[] = {log, reinterpret_cast<void *>(sizeof(log)),
                      reinterpret_cast<void *>(static_cast<intptr_t>(
                          m.optLevel < 0   ? 0
                          : m.optLevel > 4 ? 4
                                           : m.optLevel))};
    CUresult r = api->cuModuleLoadDataEx(&mod, m.image, 3, options, values);
    if (r != CUDA_SUCCESS) {
      log[sizeof(log) - 1] = 0;
      recordError("cuModuleLoadDataEx (PTX JIT): %s%s%s", errorName(api, r),
                  *log ? ": " : "", log);
      return nullptr;
    }
  }
  m.loaded.emplace_back(device, mod);
  return mod;
}

bool toDim(intptr_t v, unsigned &out) {
  if (v < 0 || v > static_cast<intptr_t>(UINT_MAX))
    return false;
  out = static_cast<unsigned>(v);
  return true;
}

constexpr int32_t kDefaultSharedBytes = 48 * 1024;

/// Opts `f` in to more than 48 KiB of dynamic shared memory.
bool allowSharedMemory(const DriverApi *api, CUfunction f, int32_t smem) {
  if (smem <= kDefaultSharedBytes)
    return true;
  return check("cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)",
               api->cuFuncSetAttribute(
                   f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem));
}

/// Allocations that are not stream-ordered (managed memory, or any memory
/// when the driver lacks cuMemAllocAsync): cuMemFree releases them, which
/// waits for the device.
std::mutex &syncAllocationsLock() {
  static auto *lock = new std::mutex();
  return *lock;
}
std::set<CUdeviceptr> &syncAllocations() {
  static auto *set = new std::set<CUdeviceptr>();
  return *set;
}

bool isCurrent(CUstream s) {
  const CurrentStream &c = currentStream();
  return c.set && c.stream == s;
}

} // namespace

ATTN_GPU_EXPORT void *mgpuModuleLoad(void *data, uint64_t size) {
  (void)size;
  return new LazyModule{data, false, 0, {}, {}};
}

ATTN_GPU_EXPORT void *mgpuModuleLoadJIT(void *data, int32_t optLevel) {
  return new LazyModule{data, true, optLevel, {}, {}};
}

ATTN_GPU_EXPORT void mgpuModuleUnload(void *module) {
  auto *m = static_cast<LazyModule *>(module);
  if (!m)
    return;
  if (const DriverApi *api = driver())
    for (auto &[d, mod] : m->loaded)
      check("cuModuleUnload", api->cuModuleUnload(mod));
  delete m;
}

ATTN_GPU_EXPORT void *mgpuModuleGetFunction(void *module, const char *name) {
  ScopedContext ctx("mgpuModuleGetFunction");
  auto *m = static_cast<LazyModule *>(module);
  if (!ctx.ok() || !m)
    return nullptr;
  CUmodule mod = loadFor(ctx.get(), *m, currentDevice());
  if (!mod)
    return nullptr;
  CUfunction f = nullptr;
  if (!check("cuModuleGetFunction", ctx->cuModuleGetFunction(&f, mod, name)))
    return nullptr;
  return f;
}

ATTN_GPU_EXPORT void mgpuLaunchKernel(void *function, intptr_t gridX,
                                      intptr_t gridY, intptr_t gridZ,
                                      intptr_t blockX, intptr_t blockY,
                                      intptr_t blockZ, int32_t smem,
                                      void *stream, void **params, void **extra,
                                      int64_t paramsCount) {
  (void)paramsCount;
  ScopedContext ctx("mgpuLaunchKernel");
  if (!ctx.ok())
    return;
  if (!function) {
    recordError("mgpuLaunchKernel: no function (its module did not load)");
    return;
  }
  unsigned g[3], b[3];
  if (!toDim(gridX, g[0]) || !toDim(gridY, g[1]) || !toDim(gridZ, g[2]) ||
      !toDim(blockX, b[0]) || !toDim(blockY, b[1]) || !toDim(blockZ, b[2])) {
    recordError("mgpuLaunchKernel: grid (%ld, %ld, %ld) or block (%ld, %ld, "
                "%ld) out of range",
                static_cast<long>(gridX), static_cast<long>(gridY),
                static_cast<long>(gridZ), static_cast<long>(blockX),
                static_cast<long>(blockY), static_cast<long>(blockZ));
    return;
  }
  // An empty grid (a zero-sized problem) launches nothing.
  if (!g[0] || !g[1] || !g[2])
    return;
  auto *f = static_cast<CUfunction>(function);
  if (!allowSharedMemory(ctx.get(), f, smem))
    return;
  check("cuLaunchKernel",
        ctx->cuLaunchKernel(f, g[0], g[1], g[2], b[0], b[1], b[2],
                            static_cast<unsigned>(smem),
                            static_cast<CUstream>(stream), params, extra));
}

ATTN_GPU_EXPORT void
mgpuLaunchClusterKernel(void *function, intptr_t clusterX, intptr_t clusterY,
                        intptr_t clusterZ, intptr_t gridX, intptr_t gridY,
                        intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                        intptr_t blockZ, int32_t smem, void *stream,
                        void **params, void **extra) {
  ScopedContext ctx("mgpuLaunchClusterKernel");
  if (!ctx.ok())
    return;
  if (!function) {
    recordError(
        "mgpuLaunchClusterKernel: no function (its module did not load)");
    return;
  }
  if (!ctx->cuLaunchKernelEx) {
    recordError("mgpuLaunchClusterKernel: the driver has no cuLaunchKernelEx");
    return;
  }
  CUlaunchConfig config = {};
  CUlaunchAttribute cluster = {};
  unsigned c[3];
  if (!toDim(gridX, config.gridDimX) || !toDim(gridY, config.gridDimY) ||
      !toDim(gridZ, config.gridDimZ) || !toDim(blockX, config.blockDimX) ||
      !toDim(blockY, config.blockDimY) || !toDim(blockZ, config.blockDimZ) ||
      !toDim(clusterX, c[0]) || !toDim(clusterY, c[1]) ||
      !toDim(clusterZ, c[2])) {
    recordError("mgpuLaunchClusterKernel: a dimension is out of range");
    return;
  }
  if (!config.gridDimX || !config.gridDimY || !config.gridDimZ)
    return;
  auto *f = static_cast<CUfunction>(function);
  if (!allowSharedMemory(ctx.get(), f, smem))
    return;
  cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  cluster.value.clusterDim = {c[0], c[1], c[2]};
  config.sharedMemBytes = static_cast<unsigned>(smem);
  config.hStream = static_cast<CUstream>(stream);
  config.attrs = &cluster;
  config.numAttrs = 1;
  check("cuLaunchKernelEx", ctx->cuLaunchKernelEx(&config, f, params, extra));
}

ATTN_GPU_EXPORT void *mgpuStreamCreate() {
  if (currentStream().set)
    return currentStream().stream;
  ScopedContext ctx("mgpuStreamCreate");
  if (!ctx.ok())
    return nullptr;
  CUstream s = nullptr;
  check("cuStreamCreate", ctx->cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  return s;
}

ATTN_GPU_EXPORT void mgpuStreamDestroy(void *stream) {
  if (isCurrent(static_cast<CUstream>(stream)))
    return;
  ScopedContext ctx("mgpuStreamDestroy");
  if (ctx.ok())
    check("cuStreamDestroy",
          ctx->cuStreamDestroy(static_cast<CUstream>(stream)));
}

ATTN_GPU_EXPORT void mgpuStreamSynchronize(void *stream) {
  if (isCurrent(static_cast<CUstream>(stream)) &&
      (currentStream().flags & 1u /*ATTN_GPU_STREAM_ASYNC*/))
    return;
  ScopedContext ctx("mgpuStreamSynchronize");
  if (ctx.ok())
    check("cuStreamSynchronize",
          ctx->cuStreamSynchronize(static_cast<CUstream>(stream)));
}

ATTN_GPU_EXPORT void mgpuStreamWaitEvent(void *stream, void *event) {
  ScopedContext ctx("mgpuStreamWaitEvent");
  if (ctx.ok())
    check("cuStreamWaitEvent",
          ctx->cuStreamWaitEvent(static_cast<CUstream>(stream),
                                 static_cast<CUevent>(event), 0));
}

ATTN_GPU_EXPORT void *mgpuEventCreate() {
  ScopedContext ctx("mgpuEventCreate");
  if (!ctx.ok())
    return nullptr;
  CUevent e = nullptr;
  check("cuEventCreate", ctx->cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
  return e;
}

ATTN_GPU_EXPORT void mgpuEventDestroy(void *event) {
  ScopedContext ctx("mgpuEventDestroy");
  if (ctx.ok())
    check("cuEventDestroy", ctx->cuEventDestroy(static_cast<CUevent>(event)));
}

ATTN_GPU_EXPORT void mgpuEventSynchronize(void *event) {
  ScopedContext ctx("mgpuEventSynchronize");
  if (ctx.ok())
    check("cuEventSynchronize",
          ctx->cuEventSynchronize(static_cast<CUevent>(event)));
}

ATTN_GPU_EXPORT void mgpuEventRecord(void *event, void *stream) {
  ScopedContext ctx("mgpuEventRecord");
  if (ctx.ok())
    check("cuEventRecord", ctx->cuEventRecord(static_cast<CUevent>(event),
                                              static_cast<CUstream>(stream)));
}

ATTN_GPU_EXPORT void *mgpuMemAlloc(uint64_t sizeBytes, void *stream,
                                   int8_t isHostShared) {
  ScopedContext ctx("mgpuMemAlloc");
  if (!ctx.ok() || sizeBytes == 0)
    return nullptr;
  CUdeviceptr p = 0;
  // Synchronous gpu.alloc passes no stream: order it on the caller's.
  if (!stream && currentStream().set)
    stream = currentStream().stream;
  if (!(isHostShared & 1) && ctx->cuMemAllocAsync) {
    if (!check(
            "cuMemAllocAsync",
            ctx->cuMemAllocAsync(&p, sizeBytes, static_cast<CUstream>(stream))))
      p = 0;
    return reinterpret_cast<void *>(p);
  }
  bool ok =
      (isHostShared & 1)
          ? check("cuMemAllocManaged",
                  ctx->cuMemAllocManaged(&p, sizeBytes, CU_MEM_ATTACH_GLOBAL))
          : check("cuMemAlloc", ctx->cuMemAlloc(&p, sizeBytes));
  if (!ok)
    return nullptr;
  std::lock_guard<std::mutex> guard(syncAllocationsLock());
  syncAllocations().insert(p);
  return reinterpret_cast<void *>(p);
}

ATTN_GPU_EXPORT void mgpuMemFree(void *ptr, void *stream) {
  if (!ptr)
    return;
  ScopedContext ctx("mgpuMemFree");
  if (!ctx.ok())
    return;
  auto p = reinterpret_cast<CUdeviceptr>(ptr);
  bool sync = !ctx->cuMemFreeAsync;
  {
    std::lock_guard<std::mutex> guard(syncAllocationsLock());
    sync |= syncAllocations().erase(p) > 0;
  }
  if (!stream && currentStream().set)
    stream = currentStream().stream;
  if (sync)
    check("cuMemFree", ctx->cuMemFree(p));
  else
    check("cuMemFreeAsync",
          ctx->cuMemFreeAsync(p, static_cast<CUstream>(stream)));
}

ATTN_GPU_EXPORT void mgpuMemcpy(void *dst, void *src, size_t sizeBytes,
                                void *stream) {
  ScopedContext ctx("mgpuMemcpy");
  if (ctx.ok() && sizeBytes)
    check("cuMemcpyAsync",
          ctx->cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst),
                             reinterpret_cast<CUdeviceptr>(src), sizeBytes,
                             static_cast<CUstream>(stream)));
}

ATTN_GPU_EXPORT void mgpuMemset32(void *dst, unsigned value, size_t count,
                                  void *stream) {
  ScopedContext ctx("mgpuMemset32");
  if (ctx.ok() && count)
    check("cuMemsetD32Async",
          ctx->cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(dst), value,
                                count, static_cast<CUstream>(stream)));
}

ATTN_GPU_EXPORT void mgpuMemset16(void *dst, unsigned short value, size_t count,
                                  void *stream) {
  ScopedContext ctx("mgpuMemset16");
  if (ctx.ok() && count)
    check("cuMemsetD16Async",
          ctx->cuMemsetD16Async(reinterpret_cast<CUdeviceptr>(dst), value,
                                count, static_cast<CUstream>(stream)));
}

ATTN_GPU_EXPORT void mgpuMemHostRegister(void *ptr, uint64_t sizeBytes) {
  ScopedContext ctx("mgpuMemHostRegister");
  if (ctx.ok() && sizeBytes)
    check("cuMemHostRegister", ctx->cuMemHostRegister(ptr, sizeBytes, 0));
}

ATTN_GPU_EXPORT void mgpuMemHostUnregister(void *ptr) {
  ScopedContext ctx("mgpuMemHostUnregister");
  if (ctx.ok())
    check("cuMemHostUnregister", ctx->cuMemHostUnregister(ptr));
}

namespace {

/// A ranked memref descriptor: {allocated, aligned, offset, sizes[rank],
/// strides[rank]}, every word 64 bits.
struct MemRefView {
  const int64_t *words;
  int64_t rank;
  char *aligned() const { return reinterpret_cast<char *>(words[1]); }
  int64_t offset() const { return words[2]; }
  int64_t size(int64_t d) const { return words[3 + d]; }
  int64_t stride(int64_t d) const { return words[3 + rank + d]; }
};

/// The bytes a memref spans from its first element (0 when empty).
uint64_t spanBytes(const MemRefView &m, int64_t elementBytes) {
  int64_t last = 0;
  for (int64_t d = 0; d < m.rank; ++d) {
    if (m.size(d) <= 0)
      return 0;
    last += (m.size(d) - 1) * m.stride(d);
  }
  return static_cast<uint64_t>((last + 1) * elementBytes);
}

} // namespace

ATTN_GPU_EXPORT void mgpuMemHostRegisterMemRef(int64_t rank, void *descriptor,
                                               int64_t elementSizeBytes) {
  MemRefView m{static_cast<const int64_t *>(descriptor), rank};
  mgpuMemHostRegister(m.aligned() + m.offset() * elementSizeBytes,
                      spanBytes(m, elementSizeBytes));
}

ATTN_GPU_EXPORT void mgpuMemHostUnregisterMemRef(int64_t rank, void *descriptor,
                                                 int64_t elementSizeBytes) {
  MemRefView m{static_cast<const int64_t *>(descriptor), rank};
  mgpuMemHostUnregister(m.aligned() + m.offset() * elementSizeBytes);
}

ATTN_GPU_EXPORT void mgpuSetDefaultDevice(int32_t device) {
  currentDevice() = device;
}

namespace {

/// Bytes per element of CUtensorMapDataType 0..12 (UINT8 ... TFLOAT32_FTZ).
constexpr int64_t kTmaElementBytes[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};

/// Device copies of encoded tensor maps, per device and content: the
/// generated code encodes its maps on every call.
void *deviceTensorMap(const DriverApi *api, const CUtensorMap &map) {
  static std::mutex *lock = new std::mutex();
  static auto *cache = new std::map<std::string, CUdeviceptr>();
  std::string key(reinterpret_cast<const char *>(&map), sizeof(map));
  key += std::to_string(currentDevice());
  std::lock_guard<std::mutex> guard(*lock);
  auto it = cache->find(key);
  if (it != cache->end())
    return reinterpret_cast<void *>(it->second);
  CUdeviceptr p = 0;
  if (!check("cuMemAlloc", api->cuMemAlloc(&p, sizeof(map))))
    return nullptr;
  if (!check("cuMemcpyHtoD", api->cuMemcpyHtoD(p, &map, sizeof(map)))) {
    api->cuMemFree(p);
    return nullptr;
  }
  (*cache)[key] = p;
  return reinterpret_cast<void *>(p);
}

} // namespace

ATTN_GPU_EXPORT void *mgpuTensorMapEncodeTiledMemref(
    int64_t rank, void *descriptor, int64_t dtype, int64_t interleave,
    int64_t swizzle, int64_t l2Promotion, int64_t oobFill, int64_t *boxDims) {
  ScopedContext ctx("mgpuTensorMapEncodeTiledMemref");
  if (!ctx.ok())
    return nullptr;
  if (!ctx->cuTensorMapEncodeTiled) {
    recordError("mgpuTensorMapEncodeTiledMemref: the driver has no "
                "cuTensorMapEncodeTiled (CUDA 12 or newer is needed)");
    return nullptr;
  }
  if (rank < 1 || rank > 5 || dtype < 0 || dtype > 12) {
    recordError("mgpuTensorMapEncodeTiledMemref: rank %ld or data type %ld "
                "out of range",
                static_cast<long>(rank), static_cast<long>(dtype));
    return nullptr;
  }
  MemRefView m{static_cast<const int64_t *>(descriptor), rank};
  int64_t bytes = kTmaElementBytes[dtype];
  // The driver counts dimensions innermost first.
  uint64_t dims[5] = {}, strides[5] = {};
  unsigned box[5] = {}, elementStrides[5] = {};
  for (int64_t r = 0; r < rank; ++r) {
    dims[r] = static_cast<uint64_t>(m.size(rank - 1 - r));
    box[r] = static_cast<unsigned>(boxDims[rank - 1 - r]);
    elementStrides[r] = 1;
    if (r > 0)
      strides[r - 1] = static_cast<uint64_t>(m.stride(rank - 1 - r) * bytes);
  }
  alignas(128) CUtensorMap map = {};
  if (!check("cuTensorMapEncodeTiled",
             ctx->cuTensorMapEncodeTiled(
                 &map, static_cast<int>(dtype), static_cast<unsigned>(rank),
                 m.aligned() + m.offset() * bytes, dims, strides, box,
                 elementStrides, static_cast<int>(interleave),
                 static_cast<int>(swizzle), static_cast<int>(l2Promotion),
                 static_cast<int>(oobFill))))
    return nullptr;
  return deviceTensorMap(ctx.get(), map);
}
