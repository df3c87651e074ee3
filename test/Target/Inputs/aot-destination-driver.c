// Calls an ahead-of-time compiled attn spec with dynamic sizes through its C
// interface: its result is a destination the caller allocates (q, k, v, then
// the output, as rank-4 memref descriptors; attn-results-to-destinations).
// A call with the right sizes is compared with an f64 reference written from
// docs/semantics.md (GQA, causal with bottom-right alignment); a call whose
// output is one query row short must fail its run-time check
// (ATTN_STATUS_SHAPE_MISMATCH) and write nothing past the caller's buffer.
#include "attn-c/Kernel.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int main(void) {
  uint32_t state = 12345;
  float *all[3] = {&q[0][0][0][0], &k[0][0][0][0], &v[0][0][0][0]};
  size_t count[3] = {sizeof q / 4, sizeof k / 4, sizeof v / 4};
  for (int t = 0; t < 3; ++t)
    for (size_t i = 0; i < count[t]; ++i) {
      state = state * 1664525u + 1013904223u;
      all[t][i] = (float)((state >> 8) / 16777216.0 * 4.0 - 2.0);
    }
  for (size_t i = 0; i < sizeof out / 4; ++i)
    (&out[0][0][0][0])[i] = NAN; // every element must be written

  Memref4 mq = wrap(&q[0][0][0][0], B, HQ, NQ, D);
  Memref4 mk = wrap(&k[0][0][0][0], B, HKV, NK, D);
  Memref4 mv = wrap(&v[0][0][0][0], B, HKV, NK, D);
  Memref4 mo = wrap(&out[0][0][0][0], B, HQ, NQ, D);
  attn_rt_clear_error();
  _mlir_ciface_aot(&mq, &mk, &mv, &mo);
  attn_status_t status = attn_rt_take_error();
  printf("call: %s\n", attn_status_name(status));

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
  printf("aot: max abs err %.3g: %s\n", maxErr,
         maxErr <= 1e-5 ? "ok" : "MISMATCH");

  // An output one query row short, at the start of a buffer of canaries:
  // the kernel refuses it, fills what the caller gave it with zeros, and
  // writes nothing past it.
  enum { SHORT = B * HQ * (NQ - 1) * D };
  static float guarded[B * HQ * NQ * D];
  for (size_t i = 0; i < sizeof guarded / 4; ++i)
    guarded[i] = 7.0f;
  Memref4 shortOut = wrap(guarded, B, HQ, NQ - 1, D);
  attn_rt_clear_error();
  _mlir_ciface_aot(&mq, &mk, &mv, &shortOut);
  status = attn_rt_take_error();
  printf("short output: %s: %s\n", attn_status_name(status), attn_last_error());
  int zeros = 1, canaries = 1;
  for (int i = 0; i < SHORT; ++i)
    zeros &= guarded[i] == 0.0f;
  for (size_t i = SHORT; i < sizeof guarded / 4; ++i)
    canaries &= guarded[i] == 7.0f;
  printf("short output: zeros %s, canaries %s\n", zeros ? "ok" : "MISMATCH",
         canaries ? "intact" : "OVERWRITTEN");
  return maxErr <= 1e-5 && status == ATTN_STATUS_SHAPE_MISMATCH && zeros &&
                 canaries
             ? 0
             : 1;
}
