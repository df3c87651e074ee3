/*===- nested-omp.c - kernels called inside the caller's OpenMP region ----===*\
|*                                                                            *|
|* Part of the attn project.                                                  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
/*
 * A serving process may call kernels from its own OpenMP threads. lib_nested
 * (fused form, OpenMP, --min-parallel-work=0 so that its grid takes the
 * parallel branch wherever threads are allowed) is called by both threads of
 * a region of the caller (libomp's, through its GOMP entry points): at one
 * active level the kernel runs its loop nest on the calling thread; with two
 * active levels it opens a nested team. Every call equals lib_b's sequential
 * naive kernel of the same spec.
 */

#include "lib_b.h"
#include "lib_nested.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int omp_get_active_level(void);
int omp_get_thread_num(void);
void omp_set_max_active_levels(int levels);

static float q[64], k[64], v[64], expected[64];
static DLTensor t[4];
static int64_t shape[4] = {1, 2, 4, 8};

static void describe(DLTensor *x, float *data) {
  memset(x, 0, sizeof(*x));
  x->data = data;
  x->device.device_type = kDLCPU;
  x->ndim = 4;
  x->dtype.code = kDLFloat;
  x->dtype.bits = 32;
  x->dtype.lanes = 1;
  x->shape = shape;
}

/* Runs n_small on both threads of a region; returns the number of failed
   calls and wrong outputs. */
static int callInRegion(int levels) {
  int failures = 0;
  omp_set_max_active_levels(levels);
#pragma omp parallel num_threads(2) reduction(+ : failures)
  {
    float out[64];
    DLTensor o;
    describe(&o, out);
    attn_exec_options_t options;
    attn_exec_options_init(&options);
    options.num_threads = 2;
    if (omp_get_active_level() != 1) {
      printf("nested-omp: the caller's region is not active\n");
      ++failures;
    } else if (n_small(&t[0], &t[1], &t[2], &o, &options) != ATTN_STATUS_OK) {
      printf("nested-omp: thread %d: %s\n", omp_get_thread_num(),
             attn_last_error());
      ++failures;
    } else {
      for (int i = 0; i < 64; ++i)
        if (!(fabs((double)out[i] - expected[i]) < 1e-5)) {
          printf("nested-omp: levels %d, thread %d, element %d: %g, expected "
                 "%g\n",
                 levels, omp_get_thread_num(), i, out[i], expected[i]);
          ++failures;
          break;
        }
    }
  }
  return failures;
}

int main(void) {
  for (int i = 0; i < 64; ++i) {
    q[i] = (float)((i * 37) % 17) / 17.0f - 0.5f;
    k[i] = (float)((i * 11) % 13) / 13.0f - 0.5f;
    v[i] = (float)((i * 7) % 19) / 19.0f - 0.5f;
  }
  describe(&t[0], q);
  describe(&t[1], k);
  describe(&t[2], v);
  describe(&t[3], expected);
  if (b_small(&t[0], &t[1], &t[2], &t[3], NULL) != ATTN_STATUS_OK) {
    printf("nested-omp: reference call failed: %s\n", attn_last_error());
    return 1;
  }
  int failures = callInRegion(1) + callInRegion(2);
  if (failures) {
    printf("nested-omp: %d failures\n", failures);
    return 1;
  }
  printf("nested-omp: ok\n");
  return 0;
}
