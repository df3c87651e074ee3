/*===- bf16-conversions.c - bf16 kernels for CPUs without bf16 -----------===*\
|*                                                                            *|
|* Part of the attn project.                                                  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
/*
 * A bf16 kernel library compiled for Haswell (no bf16 conversion
 * instruction) calls __truncsfbf2, which GCC 12's libgcc lacks; the runtime
 * defines it (lib/Runtime/FloatConversions.cpp). This program links such a
 * library (it would not link, or not load, without the definition), checks
 * the conversion's rounding on chosen bit patterns, and runs the kernel
 * against an f64 reference written here from docs/Semantics.md.
 */

#include "lib_bf16.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The runtime's definition: the bf16 comes back in the low 16 bits of the
 * register a float is returned in (lib/Runtime/FloatConversions.cpp). */
float __truncsfbf2(float x);

static uint16_t truncBits(uint32_t in) {
  float x;
  memcpy(&x, &in, 4);
  float r = __truncsfbf2(x);
  uint32_t out;
  memcpy(&out, &r, 4);
  return (uint16_t)(out & 0xffffu);
}

static float bf16ToFloat(uint16_t b) {
  uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static uint16_t floatToBf16(float f) { /* inputs here are exact in bf16 */
  uint32_t u;
  memcpy(&u, &f, 4);
  return (uint16_t)(u >> 16);
}

enum { H = 2, N = 8, D = 32, COUNT = H * N * D };

int main(void) {
  int failures = 0;
  static const struct {
    uint32_t in;
    uint16_t out;
    const char *what;
  } cases[] = {
      {0x3f800000u, 0x3f80, "1.0"},
      {0x3f808000u, 0x3f80, "a tie rounds to even (down)"},
      {0x3f818000u, 0x3f82, "a tie rounds to even (up)"},
      {0x3f808001u, 0x3f81, "above the tie rounds up"},
      {0xbf807fffu, 0xbf80, "below the tie rounds down, negative"},
      {0x7f7fffffu, 0x7f80, "the largest float rounds to infinity"},
      {0xff800000u, 0xff80, "-infinity"},
      {0x7fc00001u, 0x7fc0, "a quiet NaN"},
      {0xff800001u, 0xffc0, "a signalling NaN becomes quiet"},
      {0x00000001u, 0x0000, "the smallest denormal rounds to 0"},
      {0x80000000u, 0x8000, "-0"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    uint16_t got = truncBits(cases[i].in);
    if (got != cases[i].out) {
      printf("bf16-conversions: %s: 0x%08x -> 0x%04x, expected 0x%04x\n",
             cases[i].what, (unsigned)cases[i].in, got, cases[i].out);
      ++failures;
    }
  }

  uint16_t q[COUNT], k[COUNT], v[COUNT], out[COUNT];
  for (int i = 0; i < COUNT; ++i) {
    q[i] = floatToBf16((float)((i * 37) % 17) / 16.0f - 0.5f);
    k[i] = floatToBf16((float)((i * 11) % 13) / 8.0f - 0.75f);
    v[i] = floatToBf16((float)((i * 7) % 19) / 4.0f - 2.25f);
  }
  int64_t shape[4] = {1, H, N, D};
  DLTensor t[4];
  uint16_t *data[4] = {q, k, v, out};
  for (int i = 0; i < 4; ++i) {
    memset(&t[i], 0, sizeof(t[i]));
    t[i].data = data[i];
    t[i].device.device_type = kDLCPU;
    t[i].ndim = 4;
    t[i].dtype.code = kDLBfloat;
    t[i].dtype.bits = 16;
    t[i].dtype.lanes = 1;
    t[i].shape = shape;
  }
  if (b16_bf16_small(&t[0], &t[1], &t[2], &t[3], NULL) != ATTN_STATUS_OK) {
    printf("bf16-conversions: call failed: %s\n", attn_last_error());
    return 1;
  }
  /* Reference: causal(top_left), scale 1/sqrt(D), f64. The kernel rounds P
   * to bf16 for P V and the result to bf16 (docs/Semantics.md): relative
   * errors of 2^-8 each on values below 2.25 in magnitude. */
  double err = 0;
  for (int h = 0; h < H; ++h)
    for (int i = 0; i < N; ++i) {
      double s[N], m = -INFINITY, sum = 0;
      for (int j = 0; j <= i; ++j) {
        double dot = 0;
        for (int d = 0; d < D; ++d)
          dot += (double)bf16ToFloat(q[(h * N + i) * D + d]) *
                 bf16ToFloat(k[(h * N + j) * D + d]);
        s[j] = dot / sqrt((double)D);
        m = fmax(m, s[j]);
      }
      for (int j = 0; j <= i; ++j)
        sum += (s[j] = exp(s[j] - m));
      for (int d = 0; d < D; ++d) {
        double o = 0;
        for (int j = 0; j <= i; ++j)
          o += s[j] / sum * bf16ToFloat(v[(h * N + j) * D + d]);
        err = fmax(err, fabs(o - bf16ToFloat(out[(h * N + i) * D + d])));
      }
    }
  if (!(err < 0.03)) {
    printf("bf16-conversions: max error %g against the reference\n", err);
    ++failures;
  }
  if (failures)
    return 1;
  printf("bf16-conversions: ok (max error %g)\n", err);
  return 0;
}
