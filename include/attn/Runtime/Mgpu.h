//===- Mgpu.h - the mgpu* functions, as generated host code calls them ----===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// The declarations MLIR 22's gpu-to-llvm and gpu.binary translation emit
// (checked with mlir-translate), defined by libattn_gpu_runtime: the JIT
// resolves generated host code's calls to them (registerGpuHostSymbols), and
// the tests call the runtime the way generated code does.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_MGPU_H
#define ATTN_RUNTIME_MGPU_H

#include <cstddef>
#include <cstdint>

extern "C" {
void *mgpuModuleLoad(void *data, uint64_t size);
void *mgpuModuleLoadJIT(void *data, int32_t optLevel);
void mgpuModuleUnload(void *module);
void *mgpuModuleGetFunction(void *module, const char *name);
void mgpuLaunchKernel(void *f, intptr_t gx, intptr_t gy, intptr_t gz,
                      intptr_t bx, intptr_t by, intptr_t bz, int32_t smem,
                      void *stream, void **params, void **extra,
                      int64_t paramsCount);
void mgpuLaunchClusterKernel(void *f, intptr_t cx, intptr_t cy, intptr_t cz,
                             intptr_t gx, intptr_t gy, intptr_t gz, intptr_t bx,
                             intptr_t by, intptr_t bz, int32_t smem,
                             void *stream, void **params, void **extra);
void *mgpuStreamCreate();
void mgpuStreamDestroy(void *stream);
void mgpuStreamSynchronize(void *stream);
void mgpuStreamWaitEvent(void *stream, void *event);
void *mgpuEventCreate();
void mgpuEventDestroy(void *event);
void mgpuEventSynchronize(void *event);
void mgpuEventRecord(void *event, void *stream);
void *mgpuMemAlloc(uint64_t size, void *stream, int8_t isHostShared);
void mgpuMemFree(void *ptr, void *stream);
void mgpuMemcpy(void *dst, void *src, size_t size, void *stream);
void mgpuMemset32(void *dst, unsigned value, size_t count, void *stream);
void mgpuMemset16(void *dst, unsigned short value, size_t count, void *stream);
void mgpuMemHostRegister(void *ptr, uint64_t size);
void mgpuMemHostRegisterMemRef(int64_t rank, void *desc, int64_t elemBytes);
void mgpuMemHostUnregister(void *ptr);
void mgpuMemHostUnregisterMemRef(int64_t rank, void *desc, int64_t elemBytes);
void *mgpuTensorMapEncodeTiledMemref(int64_t rank, void *desc, int64_t dtype,
                                     int64_t interleave, int64_t swizzle,
                                     int64_t l2Promotion, int64_t oobFill,
                                     int64_t *boxDims);
void mgpuSetDefaultDevice(int32_t device);
}

#endif // ATTN_RUNTIME_MGPU_H
