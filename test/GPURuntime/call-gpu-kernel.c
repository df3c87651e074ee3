/*===- call-gpu-kernel.c - call a compiled GPU kernel once ----------------===*\
|*                                                                            *|
|* Part of the attn project.                                                  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
/*
 * Test driver: loads a kernel library (attn-compile --gpu-chip ...
 * --emit=shared, prefix attn_), allocates device memory for every tensor of
 * its first kernel (static shapes), calls it through attn_kernel_call with
 * kDLCUDA tensors, and prints the status and, when the driver is the fake
 * one (test/GPURuntime/FakeCuda.cpp), the driver calls the generated host
 * code made.
 *
 *   call-gpu-kernel LIBRARY
 */

#include "attn-c/Gpu.h"
#include "attn-c/Kernel.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

typedef const attn_kernel_info_t *const *(*KernelsFn)(int32_t *);

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: call-gpu-kernel LIBRARY\n");
    return 2;
  }
  void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "call-gpu-kernel: %s\n", dlerror());
    return 1;
  }
  KernelsFn kernels = (KernelsFn)dlsym(lib, "attn_kernels");
  int32_t count = 0;
  const attn_kernel_info_t *k = kernels ? kernels(&count)[0] : NULL;
  if (!k || count < 1) {
    fprintf(stderr, "call-gpu-kernel: no attn_kernels in %s\n", argv[1]);
    return 1;
  }
  printf("kernel %s: flags %u, target %s\n", k->name, k->flags, k->target_cpu);
  int32_t n = k->num_inputs + k->num_outputs;
  if (n > 16) {
    fprintf(stderr, "call-gpu-kernel: %d tensors, at most 16\n", n);
    return 1;
  }
  DLTensor tensors[16];
  DLTensor *ptrs[16];
  int64_t shapes[16][8];
  for (int32_t i = 0; i < n; ++i) {
    const attn_tensor_info_t *t = &k->tensors[i];
    size_t bytes = (t->dtype.bits + 7) / 8;
    for (int32_t d = 0; d < t->ndim && d < 8; ++d) {
      shapes[i][d] = t->shape[d];
      bytes *= (size_t)t->shape[d];
    }
    DLTensor x = {0};
    x.data = attn_gpu_malloc(bytes);
    x.device.device_type = kDLCUDA;
    x.ndim = t->ndim;
    x.dtype = t->dtype;
    x.shape = shapes[i];
    tensors[i] = x;
    ptrs[i] = &tensors[i];
  }
  const char *driver = getenv("ATTN_CUDA_DRIVER");
  void *fake = driver ? dlopen(driver, RTLD_NOW | RTLD_LOCAL) : NULL;
  void (*clearLog)(void) =
      fake ? (void (*)(void))dlsym(fake, "fake_cuda_clear_log") : NULL;
  const char *(*log)(void) =
      fake ? (const char *(*)(void))dlsym(fake, "fake_cuda_log") : NULL;
  attn_exec_options_t options;
  attn_exec_options_init(&options);
  options.stream = attn_gpu_stream_create();
  if (clearLog)
    clearLog();
  attn_status_t s = attn_kernel_call(k, ptrs, n, &options);
  printf("%s: %s\n", attn_status_name(s), attn_last_error());
  if (log)
    printf("driver calls:\n%s", log());
  attn_gpu_stream_destroy(options.stream);
  for (int32_t i = 0; i < n; ++i)
    attn_gpu_free(tensors[i].data);
  return s == ATTN_STATUS_OK ? 0 : 1;
}
