// What the ahead-of-time drivers (aot-driver.c, aot-destination-driver.c)
// share: the sizes, rank-4 memref descriptors, seeded inputs, and the f64
// reference written from docs/semantics.md (GQA, causal with bottom-right
// alignment) that an output is compared with.
#ifndef AOT_COMMON_H
#define AOT_COMMON_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { B = 2, HQ = 4, HKV = 2, NQ = 5, NK = 7, D = 8 };

typedef struct {
  float *allocated, *aligned;
  int64_t offset, sizes[4], strides[4];
} Memref4;

void _mlir_ciface_aot(Memref4 *q, Memref4 *k, Memref4 *v, Memref4 *out);

static Memref4 wrap(float *data, int64_t b, int64_t h, int64_t n, int64_t d) {
  Memref4 m = {data, data, 0, {b, h, n, d}, {h * n * d, n * d, d, 1}};
  return m;
}

static float q[B][HQ][NQ][D], k[B][HKV][NK][D], v[B][HKV][NK][D],
    out[B][HQ][NQ][D];

/// Seeded inputs; the output filled with NaN (every element must be
/// written).
static void fillInputs(void) {
  uint32_t state = 12345;
  float *all[3] = {&q[0][0][0][0], &k[0][0][0][0], &v[0][0][0][0]};
  size_t count[3] = {sizeof q / 4, sizeof k / 4, sizeof v / 4};
  for (int t = 0; t < 3; ++t)
    for (size_t i = 0; i < count[t]; ++i) {
      state = state * 1664525u + 1013904223u;
      all[t][i] = (float)((state >> 8) / 16777216.0 * 4.0 - 2.0);
    }
  for (size_t i = 0; i < sizeof out / 4; ++i)
    (&out[0][0][0][0])[i] = NAN;
}

/// The largest difference of `out` from the reference (infinity for NaN).
static double maxError(void) {
  double maxErr = 0.0;
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < HQ; ++h)
      for (int i = 0; i < NQ; ++i) {
        int g = h / (HQ / HKV);
        int pos = i + NK - NQ; // bottom-right: p(i) = i + kv_len - Nq
        double logits[NK], m = -INFINITY, sum = 0.0;
        for (int j = 0; j <= pos; ++j) {
          double s = 0.0;
          for (int d = 0; d < D; ++d)
            s += (double)q[b][h][i][d] * k[b][g][j][d];
          logits[j] = s / sqrt((double)D);
          m = fmax(m, logits[j]);
        }
        for (int j = 0; j <= pos; ++j)
          sum += exp(logits[j] - m);
        for (int d = 0; d < D; ++d) {
          double o = 0.0;
          for (int j = 0; j <= pos; ++j)
            o += exp(logits[j] - m) / sum * v[b][g][j][d];
          double err = fabs(o - out[b][h][i][d]);
          if (!(err <= maxErr)) // NaN propagates
            maxErr = isnan(err) ? INFINITY : err;
        }
      }
  return maxErr;
}

#endif // AOT_COMMON_H
