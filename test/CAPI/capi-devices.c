/*===- capi-devices.c - the C API's JIT for the GPU and its emulator ------===*\
|*                                                                            *|
|* Part of the attn project.                                                  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
/*
 * attnJitLibraryCreate with options.device, from C99, printing what
 * capi-devices.test checks:
 *   capi-devices emulate  the GPU kernel on the warp-level emulator, called
 *                         through attn_kernel_call on host tensors, against
 *                         this file's own f64 reference; bad calls; option
 *                         errors.
 *   capi-devices gpu      over the fake CUDA driver (ATTN_CUDA_DRIVER): the
 *                         chip from the device, kDLCUDA tensors, the driver
 *                         calls of a call, a failing launch.
 *   capi-devices nogpu    without a driver: what fails, and how.
 */

#include "attn-c/Compiler.h"
#include "attn-c/Gpu.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { B = 1, HQ = 4, HKV = 2, N = 32, D = 32 };

static const char *kSpec =
    "func.func @gqa(%q: tensor<1x4x32x32xf32>, %k: tensor<1x2x32x32xf32>,\n"
    "               %v: tensor<1x2x32x32xf32>)\n"
    "    -> (tensor<1x4x32x32xf32>, tensor<1x4x32xf32>) {\n"
    "  %o, %l = attn.attention q(%q : tensor<1x4x32x32xf32>)\n"
    "      k(%k : tensor<1x2x32x32xf32>) v(%v : tensor<1x2x32x32xf32>)\n"
    "      causal(top_left) -> tensor<1x4x32x32xf32>, tensor<1x4x32xf32>\n"
    "  return %o, %l : tensor<1x4x32x32xf32>, tensor<1x4x32xf32>\n"
    "}\n";

static AttnStringRef str(const char *s) {
  return attnStringRefCreateFromCString(s);
}

static void printError(AttnContext ctx, const char *what) {
  AttnStringRef e = attnContextGetLastError(ctx);
  printf("%s: %.*s\n", what, (int)e.length, e.data);
}

/* f64 causal GQA attention: out [B,HQ,N,D], lse [B,HQ,N]. */
static void reference(const float *q, const float *k, const float *v,
                      double *out, double *lse) {
  for (int h = 0; h < HQ; ++h) {
    int g = h / (HQ / HKV);
    for (int i = 0; i < N; ++i) {
      double s[N], m = -INFINITY, sum = 0;
      for (int j = 0; j <= i; ++j) {
        double dot = 0;
        for (int d = 0; d < D; ++d)
          dot += (double)q[(h * N + i) * D + d] * k[(g * N + j) * D + d];
        s[j] = dot / sqrt((double)D);
        m = s[j] > m ? s[j] : m;
      }
      for (int j = 0; j <= i; ++j)
        sum += exp(s[j] - m);
      for (int d = 0; d < D; ++d) {
        double acc = 0;
        for (int j = 0; j <= i; ++j)
          acc += exp(s[j] - m) * v[(g * N + j) * D + d];
        out[(h * N + i) * D + d] = acc / sum;
      }
      lse[h * N + i] = m + log(sum);
    }
  }
}

static DLTensor tensor(void *data, int64_t *shape, int32_t ndim,
                       DLDeviceType device) {
  DLTensor t;
  memset(&t, 0, sizeof(t));
  t.data = data;
  t.device.device_type = device;
  t.ndim = ndim;
  t.dtype.code = kDLFloat;
  t.dtype.bits = 32;
  t.dtype.lanes = 1;
  t.shape = shape;
  return t;
}

static int64_t qShape[4] = {B, HQ, N, D}, kvShape[4] = {B, HKV, N, D},
               lseShape[3] = {B, HQ, N};

static AttnJitLibrary jit(AttnContext ctx, AttnModule m, const char *device,
                          const char *chip, int64_t tileK) {
  AttnCompileOptions opts;
  attnCompileOptionsInit(&opts);
  opts.device = device;
  opts.gpu_chip = chip;
  opts.gpu_tile_k = tileK;
  return attnJitLibraryCreate(m, &opts);
}

static int emulate(AttnContext ctx, AttnModule m) {
  AttnJitLibrary lib = jit(ctx, m, "gpu-emulate", NULL, 32);
  if (attnJitLibraryIsNull(lib)) {
    printError(ctx, "jit");
    return 1;
  }
  const attn_kernel_info_t *k = attnJitLibraryLookupKernel(lib, str("gqa"));
  printf("kernel %s: flags %u, target %s, %d inputs, %d outputs\n", k->name,
         k->flags, k->target_cpu, k->num_inputs, k->num_outputs);
  static float q[B * HQ * N * D], kk[B * HKV * N * D], v[B * HKV * N * D],
      out[B * HQ * N * D], lse[B * HQ * N];
  static double refOut[B * HQ * N * D], refLse[B * HQ * N];
  unsigned seed = 7;
  for (size_t i = 0; i < sizeof(q) / sizeof(q[0]); ++i)
    q[i] = (float)((seed = seed * 1103515245u + 12345u) >> 8) / 8388608.f - 1;
  for (size_t i = 0; i < sizeof(kk) / sizeof(kk[0]); ++i) {
    kk[i] = (float)((seed = seed * 1103515245u + 12345u) >> 8) / 8388608.f - 1;
    v[i] = (float)((seed = seed * 1103515245u + 12345u) >> 8) / 8388608.f - 1;
  }
  reference(q, kk, v, refOut, refLse);
  DLTensor tq = tensor(q, qShape, 4, kDLCPU),
           tk = tensor(kk, kvShape, 4, kDLCPU),
           tv = tensor(v, kvShape, 4, kDLCPU),
           to = tensor(out, qShape, 4, kDLCPU),
           tl = tensor(lse, lseShape, 3, kDLCPU);
  DLTensor *all[5] = {&tq, &tk, &tv, &to, &tl};
  for (int call = 0; call < 2; ++call) {
    memset(out, 0, sizeof(out));
    attn_status_t s = attn_kernel_call(k, all, 5, NULL);
    /* The kernels stage f32 as bf16 (docs/GPU.md): bf16's tolerance. */
    double maxOut = 0, maxLse = 0;
    int bad = 0;
    for (int i = 0; i < B * HQ * N * D; ++i) {
      double e = fabs(out[i] - refOut[i]);
      maxOut = e > maxOut ? e : maxOut;
      bad += !(e <= 0.02 + 0.04 * fabs(refOut[i]));
    }
    for (int i = 0; i < B * HQ * N; ++i) {
      double e = fabs(lse[i] - refLse[i]);
      maxLse = e > maxLse ? e : maxLse;
      bad += !(e <= 0.02 + 0.04 * fabs(refLse[i]));
    }
    printf("call %d: %s, out max abs err %.2g, lse max abs err %.2g, %d "
           "beyond bf16 tolerance\n",
           call, attn_status_name(s), maxOut, maxLse, bad);
    if (call == 0) {
      /* A bad call between two good ones. */
      int64_t wrong[4] = {B, HQ, N - 1, D};
      DLTensor bq = tensor(q, wrong, 4, kDLCPU);
      DLTensor *badArgs[5] = {&bq, &tk, &tv, &to, &tl};
      s = attn_kernel_call(k, badArgs, 5, NULL);
      printf("bad call: %s: %s\n", attn_status_name(s), attn_last_error());
    }
  }
  attnJitLibraryDestroy(lib);

  /* Option errors. */
  AttnCompileOptions opts;
  attnCompileOptionsInit(&opts);
  opts.device = "gpu-emulate";
  if (attnLogicalResultIsFailure(
          attnCompileToFile(m, &opts, AttnOutputObject, str("/dev/null"))))
    printError(ctx, "ahead of time");
  opts.device = "tpu";
  if (attnJitLibraryIsNull(attnJitLibraryCreate(m, &opts)))
    printError(ctx, "device tpu");
  if (attnJitLibraryIsNull(jit(ctx, m, "gpu-emulate", NULL, 0)))
    printError(ctx, "gpu_tile_k 0");
  return 0;
}

static int gpu(AttnContext ctx, AttnModule m, int hasDriver) {
  if (!hasDriver) {
    /* Ahead of time, a GPU object needs no GPU (PTX: no ptxas either). */
    AttnCompileOptions opts;
    attnCompileOptionsInit(&opts);
    opts.device = "gpu";
    opts.gpu_chip = "sm_80";
    opts.gpu_format = "isa";
    AttnLogicalResult r =
        attnCompileToFile(m, &opts, AttnOutputObject, str("/dev/null"));
    if (attnLogicalResultIsSuccess(r))
      printf("ahead of time for sm_80: ok\n");
    else
      printError(ctx, "ahead of time for sm_80");
  }
  AttnJitLibrary lib = jit(ctx, m, "gpu", NULL, 64);
  if (attnJitLibraryIsNull(lib)) {
    printError(ctx, "jit without a chip");
    lib = jit(ctx, m, "gpu", "sm_80", 64);
    if (attnJitLibraryIsNull(lib)) {
      printError(ctx, "jit for sm_80");
      return 1;
    }
  }
  const attn_kernel_info_t *k = attnJitLibraryLookupKernel(lib, str("gqa"));
  printf("kernel %s: flags %u, target %s\n", k->name, k->flags, k->target_cpu);
  size_t qBytes = sizeof(float) * B * HQ * N * D,
         kvBytes = sizeof(float) * B * HKV * N * D,
         lseBytes = sizeof(float) * B * HQ * N;
  /* Without a driver, host memory stands for device memory: the call
     must stop before anything reads it. */
  void *(*allocate)(size_t) = hasDriver ? attn_gpu_malloc : malloc;
  DLTensor tq = tensor(allocate(qBytes), qShape, 4, kDLCUDA),
           tk = tensor(allocate(kvBytes), kvShape, 4, kDLCUDA),
           tv = tensor(allocate(kvBytes), kvShape, 4, kDLCUDA),
           to = tensor(allocate(qBytes), qShape, 4, kDLCUDA),
           tl = tensor(allocate(lseBytes), lseShape, 3, kDLCUDA);
  DLTensor *all[5] = {&tq, &tk, &tv, &to, &tl};
  const char *driver = getenv("ATTN_CUDA_DRIVER");
  void *fake =
      hasDriver && driver ? dlopen(driver, RTLD_NOW | RTLD_LOCAL) : NULL;
  void (*clearLog)(void) =
      fake ? (void (*)(void))dlsym(fake, "fake_cuda_clear_log") : NULL;
  const char *(*log)(void) =
      fake ? (const char *(*)(void))dlsym(fake, "fake_cuda_log") : NULL;
  void (*failNext)(const char *, int) =
      fake ? (void (*)(const char *, int))dlsym(fake, "fake_cuda_fail_next")
           : NULL;
  attn_exec_options_t options;
  attn_exec_options_init(&options);
  options.stream = hasDriver ? attn_gpu_stream_create() : NULL;
  if (clearLog)
    clearLog();
  attn_status_t s = attn_kernel_call(k, all, 5, &options);
  printf("call: %s: %s\n", attn_status_name(s), attn_last_error());
  if (log)
    printf("driver calls:\n%s", log());
  if (failNext) {
    failNext("cuLaunchKernel", 700);
    s = attn_kernel_call(k, all, 5, &options);
    printf("failed launch: %s: %s\n", attn_status_name(s), attn_last_error());
    s = attn_kernel_call(k, all, 5, &options);
    printf("next call: %s\n", attn_status_name(s));
  }
  if (options.stream)
    attn_gpu_stream_destroy(options.stream);
  for (int i = 0; i < 5; ++i)
    if (hasDriver)
      attn_gpu_free(all[i]->data);
    else
      free(all[i]->data);
  attnJitLibraryDestroy(lib);
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: capi-devices emulate|gpu|nogpu\n");
    return 2;
  }
  AttnContext ctx = attnContextCreate();
  AttnModule m = attnModuleCreateParse(ctx, str(kSpec), str("gqa.mlir"));
  if (attnModuleIsNull(m)) {
    printError(ctx, "parse");
    return 1;
  }
  int rc = !strcmp(argv[1], "emulate") ? emulate(ctx, m)
           : !strcmp(argv[1], "gpu")   ? gpu(ctx, m, 1)
                                       : gpu(ctx, m, 0);
  attnModuleDestroy(m);
  attnContextDestroy(ctx);
  return rc;
}
