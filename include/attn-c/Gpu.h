/*===- attn-c/Gpu.h - the GPU runtime's C API ---------------------*- C -*-===*\
|*                                                                            *|
|* Part of the attn project.                                                  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
/*
 * libattn_gpu_runtime: the host runtime of attn's GPU kernels, over the CUDA
 * driver API. The driver (libcuda.so.1, or the library the environment
 * variable ATTN_CUDA_DRIVER names) is loaded with dlopen on first use, so
 * every program starts on a machine without a GPU; there every function
 * below fails cleanly and attn_gpu_available() says why.
 *
 * The same library provides the mgpu* functions MLIR's gpu-to-llvm host code
 * calls (see docs/GPU.md, "Runtime"). That code ignores return codes, so the
 * runtime keeps the first failure of a driver call on the calling thread:
 * attn_gpu_take_error() returns it and clears it.
 *
 * Pointers to device memory are CUdeviceptr values cast to void *; streams
 * and events are CUstream and CUevent handles (a null stream is CUDA's
 * default stream). Functions returning int return 0 on success and -1 on
 * failure (the error is recorded; see attn_gpu_take_error).
 */

#ifndef ATTN_C_GPU_H
#define ATTN_C_GPU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when the driver loaded and reports at least one device, else 0. */
int attn_gpu_available(void);

/* Why no GPU is usable ("" when one is): "no NVIDIA driver (libcuda.so.1)
   could be loaded: ...", "no CUDA device", ... */
const char *attn_gpu_unavailable_reason(void);

/* Number of CUDA devices (0 without a driver). */
int attn_gpu_device_count(void);

/* What the runtime knows of one device. */
typedef struct attn_gpu_device_info_t {
  char name[256];
  int32_t compute_capability_major; /* 9 on sm_90 */
  int32_t compute_capability_minor;
  int32_t sm_count;
  int32_t clock_khz;        /* SM clock the driver reports (0: unknown) */
  int32_t memory_clock_khz; /* peak memory clock (0: unknown) */
  int32_t memory_bus_width_bits;
  int32_t max_shared_memory_per_block_optin; /* bytes */
  int32_t reserved0;
  uint64_t total_memory_bytes;
  /* 2 * memory clock * bus width / 8: the theoretical DRAM bandwidth from
     the driver's figures (0 when they are unknown). Datasheets may differ. */
  double memory_bandwidth_gbs;
} attn_gpu_device_info_t;

int attn_gpu_device_info(int device, attn_gpu_device_info_t *info);

/* The multiprocessor count of the calling thread's current device
   (attn_gpu_get_device), asked once per device; 0 when it cannot be had (no
   driver, no such device), with no error recorded. Generated host code calls
   it to size the split-KV decode grid (about two blocks per SM). */
int32_t attn_gpu_sm_count(void);

/* The device the runtime works on for this thread (default 0); the same as
   MLIR's mgpuSetDefaultDevice. */
void attn_gpu_set_device(int device);
int attn_gpu_get_device(void);

/* The calling thread's current stream: while one is set, the generated
   code's mgpuStreamCreate returns it instead of creating a stream, and its
   mgpuStreamDestroy of it does nothing, so the caller decides which stream a
   kernel runs on. With ATTN_GPU_STREAM_ASYNC, the generated code's
   mgpuStreamSynchronize of it does nothing either: the call returns once its
   work is queued (attn_kernel_call sets this). */
#define ATTN_GPU_STREAM_ASYNC 1u
void attn_gpu_set_current_stream(void *stream, uint32_t flags);
/* Back to no current stream (mgpuStreamCreate creates streams again). */
void attn_gpu_clear_current_stream(void);
/* 1 and the stream (and flags, when not null) if one is set, else 0. */
int attn_gpu_get_current_stream(void **stream, uint32_t *flags);

/* Device memory (of the current device). Null when it fails. */
void *attn_gpu_malloc(size_t bytes);
int attn_gpu_free(void *device_ptr);
/* Synchronous copies (they wait for the copy to finish). */
int attn_gpu_memcpy_h2d(void *device_dst, const void *host_src, size_t bytes);
int attn_gpu_memcpy_d2h(void *host_dst, const void *device_src, size_t bytes);
int attn_gpu_memcpy_d2d(void *device_dst, const void *device_src, size_t bytes);
/* Sets `bytes` bytes to `value`, asynchronously on `stream`. */
int attn_gpu_memset(void *device_dst, uint8_t value, size_t bytes,
                    void *stream);

/* Streams. */
void *attn_gpu_stream_create(void);
int attn_gpu_stream_destroy(void *stream);
int attn_gpu_stream_synchronize(void *stream);

/* Events for timing (created with timing enabled). */
void *attn_gpu_event_create(void);
int attn_gpu_event_destroy(void *event);
int attn_gpu_event_record(void *event, void *stream);
int attn_gpu_event_synchronize(void *event);
/* Milliseconds between two recorded, completed events. */
int attn_gpu_event_elapsed_ms(void *start, void *end, float *ms);

/* The first failure recorded on this thread since the last call, as
   "cuLaunchKernel: CUDA_ERROR_INVALID_VALUE (invalid argument)", or null if
   none; clears it. The text is valid until the next call on this thread. */
const char *attn_gpu_take_error(void);

/* The same, without clearing it (null if none). */
const char *attn_gpu_peek_error(void);

#ifdef __cplusplus
}
#endif

#endif /* ATTN_C_GPU_H */
