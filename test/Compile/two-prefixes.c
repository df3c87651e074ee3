/*===- two-prefixes.c - two kernel libraries in one program --------------===*\
|*                                                                            *|
|* Part of the attn project.                                                  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
/*
 * lib_a (prefix a_, fused form, OpenMP) and lib_b (prefix b_, naive form,
 * sequential) compile the same spec; both link into this program without
 * clashing symbols and compute the same attention.
 */

#include "lib_a.h"
#include "lib_b.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  float q[64], k[64], v[64], outA[64], outB[64];
  for (int i = 0; i < 64; ++i) {
    q[i] = (float)((i * 37) % 17) / 17.0f - 0.5f;
    k[i] = (float)((i * 11) % 13) / 13.0f - 0.5f;
    v[i] = (float)((i * 7) % 19) / 19.0f - 0.5f;
  }
  int64_t shape[4] = {1, 2, 4, 8};
  DLTensor t[5];
  float *data[5] = {q, k, v, outA, outB};
  for (int i = 0; i < 5; ++i) {
    memset(&t[i], 0, sizeof(t[i]));
    t[i].data = data[i];
    t[i].device.device_type = kDLCPU;
    t[i].ndim = 4;
    t[i].dtype.code = kDLFloat;
    t[i].dtype.bits = 32;
    t[i].dtype.lanes = 1;
    t[i].shape = shape;
  }
  if (a_small(&t[0], &t[1], &t[2], &t[3], NULL) != ATTN_STATUS_OK ||
      b_small(&t[0], &t[1], &t[2], &t[4], NULL) != ATTN_STATUS_OK) {
    printf("two-prefixes: call failed: %s\n", attn_last_error());
    return 1;
  }
  double err = 0;
  for (int i = 0; i < 64; ++i)
    err = fmax(err, fabs((double)outA[i] - outB[i]));
  /* Row 0 of each head reads key 0 only: out = v[0]. */
  err = fmax(err, fabs((double)outA[0] - v[0]));
  if (!(err < 1e-5) || strcmp(a_small_info()->form, "fused") ||
      strcmp(b_small_info()->form, "naive")) {
    printf("two-prefixes: max difference %g\n", err);
    return 1;
  }
  printf("two-prefixes: ok\n");
  return 0;
}
