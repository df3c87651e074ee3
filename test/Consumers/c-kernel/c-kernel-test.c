/*===- c-kernel-test.c - attn-compile'd kernels called from C99 ----------===*\
|*                                                                            *|
|* Part of the attn project.                                                  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
/*
 * Calls the kernels of kernels.mlir (next to this file), compiled by
 * attn-compile into a static library, through the C ABI of attn-c/Kernel.h,
 * on this program's own buffers, and checks them against its own f64
 * reference: contiguous and strided tensors, a byte offset, a decode step
 * with kv_len, an append into a strided cache, dynamic sizes, the
 * dispatcher, thread counts, concurrent callers, and every error status.
 * Shares no code with the compiler.
 * Exit status 0 when all checks pass; each failure prints a line.
 */

#include "test_kernels.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

#define CHECK(cond, ...)                                                       \
  do {                                                                         \
    if (!(cond)) {                                                             \
      printf("FAIL %s:%d: ", __FILE__, __LINE__);                              \
      printf(__VA_ARGS__);                                                     \
      printf("\n");                                                            \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

static uint64_t rngState = 88172645463325252ull;
static float nextRandom(void) {
  rngState ^= rngState << 13;
  rngState ^= rngState >> 7;
  rngState ^= rngState << 17;
  return (float)((rngState >> 11) * (1.0 / 9007199254740992.0)) * 2.0f - 1.0f;
}

static void fillRandom(float *p, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    p[i] = nextRandom();
}

/* A view of a float buffer: element (b, h, n, d) lives at
   base[off + b*s[0] + h*s[1] + n*s[2] + d*s[3]]. */
typedef struct {
  const float *base;
  int64_t off, s[4];
} View;

static double at(View v, int64_t b, int64_t h, int64_t n, int64_t d) {
  return v.base[v.off + b * v.s[0] + h * v.s[1] + n * v.s[2] + d * v.s[3]];
}

/* f64 attention: GQA (Hq/Hkv query heads per K/V head), causal top-left
   (query i reads keys j <= i; mode 0), bottom-right with kv_len (query i of
   Nq reads keys j <= kvLen - Nq + i, j < kvLen; mode 1) or every key
   (mode 2). Writes out[B,Hq,Nq,Dv] and lse[B,Hq,Nq] (dense). */
static void reference(View q, View k, View v, int64_t B, int64_t Hq,
                      int64_t Hkv, int64_t Nq, int64_t Nk, int64_t D, int mode,
                      const int32_t *kvLen, double *out, double *lse) {
  double scale = 1.0 / sqrt((double)D);
  double *s = malloc(sizeof(double) * (size_t)Nk);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hq; ++h) {
      int64_t g = h / (Hq / Hkv);
      int64_t len = kvLen ? kvLen[b] : Nk;
      for (int64_t i = 0; i < Nq; ++i) {
        int64_t last = mode == 0 ? i : mode == 1 ? len - Nq + i : Nk - 1;
        double m = -INFINITY, sum = 0;
        for (int64_t j = 0; j < Nk; ++j) {
          s[j] = -INFINITY;
          if (j > last || j >= len)
            continue;
          double dot = 0;
          for (int64_t d = 0; d < D; ++d)
            dot += at(q, b, h, i, d) * at(k, b, g, j, d);
          s[j] = scale * dot;
          if (s[j] > m)
            m = s[j];
        }
        for (int64_t j = 0; j < Nk; ++j)
          sum += s[j] == -INFINITY ? 0 : exp(s[j] - m);
        double *o = out + ((b * Hq + h) * Nq + i) * D;
        for (int64_t d = 0; d < D; ++d) {
          double acc = 0;
          for (int64_t j = 0; j < Nk; ++j)
            if (s[j] != -INFINITY)
              acc += exp(s[j] - m) / sum * at(v, b, g, j, d);
          o[d] = sum > 0 ? acc : 0;
        }
        if (lse)
          lse[(b * Hq + h) * Nq + i] = sum > 0 ? m + log(sum) : -INFINITY;
      }
    }
  free(s);
}

static double maxErr(const double *want, View got, int64_t B, int64_t H,
                     int64_t N, int64_t D) {
  double err = 0;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t n = 0; n < N; ++n)
        for (int64_t d = 0; d < D; ++d) {
          double w = want[((b * H + h) * N + n) * D + d];
          double g = at(got, b, h, n, d);
          double e = isinf(w) && w == g ? 0 : fabs(w - g);
          if (e > err || isnan(g))
            err = isnan(g) ? INFINITY : e;
        }
  return err;
}

static View dense(const float *p, int64_t H, int64_t N, int64_t D) {
  View v = {p, 0, {H * N * D, N * D, D, 1}};
  return v;
}

static DLTensor tensor(void *data, int ndim, int64_t *shape, int64_t *strides,
                       uint8_t code, uint8_t bits) {
  DLTensor t;
  memset(&t, 0, sizeof(t));
  t.data = data;
  t.device.device_type = kDLCPU;
  t.ndim = ndim;
  t.dtype.code = code;
  t.dtype.bits = bits;
  t.dtype.lanes = 1;
  t.shape = shape;
  t.strides = strides;
  return t;
}

static const double tol = 2e-4;

/* --- prefill: q [1,4,6,8], k/v [1,2,6,8], causal top-left, out + lse --- */
enum { PB = 1, PHQ = 4, PHKV = 2, PN = 6, PD = 8 };
static float pq[PB * PHQ * PN * PD], pk[PB * PHKV * PN * PD],
    pv[PB * PHKV * PN * PD];
static double pRefOut[PB * PHQ * PN * PD], pRefLse[PB * PHQ * PN];
static int64_t qShape[4] = {PB, PHQ, PN, PD}, kvShape[4] = {PB, PHKV, PN, PD},
               lseShape[3] = {PB, PHQ, PN};

static attn_status_t runPrefill(float *out, float *lse,
                                const attn_exec_options_t *options) {
  DLTensor q = tensor(pq, 4, qShape, NULL, kDLFloat, 32);
  DLTensor k = tensor(pk, 4, kvShape, NULL, kDLFloat, 32);
  DLTensor v = tensor(pv, 4, kvShape, NULL, kDLFloat, 32);
  DLTensor o = tensor(out, 4, qShape, NULL, kDLFloat, 32);
  DLTensor l = tensor(lse, 3, lseShape, NULL, kDLFloat, 32);
  return test_prefill(&q, &k, &v, &o, &l, options);
}

static void checkPrefillResult(const float *out, const float *lse,
                               const char *what) {
  double e = maxErr(pRefOut, dense(out, PHQ, PN, PD), PB, PHQ, PN, PD);
  CHECK(e < tol, "%s: out max error %g", what, e);
  View lv = {lse, 0, {PHQ * PN, PN, 1, 0}};
  double el = maxErr(pRefLse, lv, PB, PHQ, PN, 1);
  CHECK(el < tol, "%s: lse max error %g", what, el);
}

static void testPrefill(void) {
  fillRandom(pq, sizeof(pq) / 4);
  fillRandom(pk, sizeof(pk) / 4);
  fillRandom(pv, sizeof(pv) / 4);
  reference(dense(pq, PHQ, PN, PD), dense(pk, PHKV, PN, PD),
            dense(pv, PHKV, PN, PD), PB, PHQ, PHKV, PN, PN, PD, 0, NULL,
            pRefOut, pRefLse);
  float out[PB * PHQ * PN * PD], lse[PB * PHQ * PN];
  CHECK(runPrefill(out, lse, NULL) == ATTN_STATUS_OK, "prefill: %s",
        attn_last_error());
  checkPrefillResult(out, lse, "prefill");

  /* Thread counts: 1 and 3 threads give the same bits. */
  attn_exec_options_t opts;
  attn_exec_options_init(&opts);
  float out1[PB * PHQ * PN * PD], lse1[PB * PHQ * PN];
  opts.num_threads = 1;
  CHECK(runPrefill(out1, lse1, &opts) == ATTN_STATUS_OK, "1 thread: %s",
        attn_last_error());
  opts.num_threads = 3;
  CHECK(runPrefill(out, lse, &opts) == ATTN_STATUS_OK, "3 threads: %s",
        attn_last_error());
  CHECK(!memcmp(out, out1, sizeof(out)) && !memcmp(lse, lse1, sizeof(lse)),
        "1 and 3 threads differ");
}

/* Strided q (stored [B, N, H, D], a transposed view), k at a byte offset
   inside a larger buffer, strided out (stored [B, N, H, D]). */
static void testStrided(void) {
  float qt[PB * PN * PHQ * PD];
  for (int64_t h = 0; h < PHQ; ++h)
    for (int64_t n = 0; n < PN; ++n)
      for (int64_t d = 0; d < PD; ++d)
        qt[(n * PHQ + h) * PD + d] = pq[(h * PN + n) * PD + d];
  int64_t qStrides[4] = {PN * PHQ * PD, PD, PHQ * PD, 1};
  float kBig[16 + PB * PHKV * PN * PD];
  memcpy(kBig + 16, pk, sizeof(pk));
  float outT[PB * PN * PHQ * PD], lse[PB * PHQ * PN];
  DLTensor q = tensor(qt, 4, qShape, qStrides, kDLFloat, 32);
  DLTensor k = tensor(kBig, 4, kvShape, NULL, kDLFloat, 32);
  k.byte_offset = 16 * sizeof(float);
  DLTensor v = tensor(pv, 4, kvShape, NULL, kDLFloat, 32);
  DLTensor o = tensor(outT, 4, qShape, qStrides, kDLFloat, 32);
  DLTensor l = tensor(lse, 3, lseShape, NULL, kDLFloat, 32);

  size_t bytes = 0;
  CHECK(test_prefill_workspace_size(&q, &k, &v, &o, &l, &bytes) ==
            ATTN_STATUS_OK,
        "workspace query: %s", attn_last_error());
  /* A kernel of static sizes gathers its strided q (its strides are
     constants in the code) and scatters its strided out. */
  CHECK(bytes == 2 * ((sizeof(qt) + 63) / 64 * 64),
        "workspace %zu bytes, expected %zu (q and out)", bytes,
        2 * ((sizeof(qt) + 63) / 64 * 64));
  /* Runtime-allocated workspace. */
  CHECK(test_prefill(&q, &k, &v, &o, &l, NULL) == ATTN_STATUS_OK, "strided: %s",
        attn_last_error());
  View ov = {outT, 0, {PN * PHQ * PD, PD, PHQ * PD, 1}};
  double e = maxErr(pRefOut, ov, PB, PHQ, PN, PD);
  CHECK(e < tol, "strided: out max error %g", e);
  /* Caller's workspace. */
  memset(outT, 0, sizeof(outT));
  attn_exec_options_t opts;
  attn_exec_options_init(&opts);
  opts.workspace = malloc(bytes);
  opts.workspace_size = bytes;
  CHECK(test_prefill(&q, &k, &v, &o, &l, &opts) == ATTN_STATUS_OK,
        "strided, caller's workspace: %s", attn_last_error());
  e = maxErr(pRefOut, ov, PB, PHQ, PN, PD);
  CHECK(e < tol, "strided, caller's workspace: out max error %g", e);
  /* Too small. */
  opts.workspace_size = bytes - 1;
  CHECK(test_prefill(&q, &k, &v, &o, &l, &opts) ==
            ATTN_STATUS_WORKSPACE_TOO_SMALL,
        "small workspace accepted");
  CHECK(strstr(attn_last_error(), "workspace") != NULL, "message: %s",
        attn_last_error());
  free(opts.workspace);

  /* q with an innermost stride of 2 (every other float of a buffer twice
     its size), computed the same. */
  float *q2 = calloc(2 * PB * PHQ * PN * PD, sizeof(float));
  for (int64_t i = 0; i < PB * PHQ * PN * PD; ++i)
    q2[2 * i] = pq[i];
  int64_t q2Strides[4] = {2 * PHQ * PN * PD, 2 * PN * PD, 2 * PD, 2};
  DLTensor qs = tensor(q2, 4, qShape, q2Strides, kDLFloat, 32);
  CHECK(test_prefill_workspace_size(&qs, &k, &v, &o, &l, &bytes) ==
            ATTN_STATUS_OK,
        "workspace query: %s", attn_last_error());
  CHECK(bytes == 2 * ((sizeof(outT) + 63) / 64 * 64),
        "workspace %zu bytes, expected q and out", bytes);
  memset(outT, 0, sizeof(outT));
  CHECK(test_prefill(&qs, &k, &v, &o, &l, NULL) == ATTN_STATUS_OK,
        "q of innermost stride 2: %s", attn_last_error());
  e = maxErr(pRefOut, ov, PB, PHQ, PN, PD);
  CHECK(e < tol, "q of innermost stride 2: out max error %g", e);
  free(q2);
}

/* --- decode: q [2,4,1,8], k/v cache [2,2,16,8], kv_len [2], bottom-right */
enum { DB = 2, DHQ = 4, DHKV = 2, DNK = 16, DD = 8 };

static void testDecode(void) {
  static float q[DB * DHQ * DD], k[DB * DHKV * DNK * DD],
      v[DB * DHKV * DNK * DD], out[DB * DHQ * DD];
  static double ref[DB * DHQ * DD];
  int32_t kvLen[DB] = {5, 16};
  fillRandom(q, DB * DHQ * DD);
  fillRandom(k, DB * DHKV * DNK * DD);
  fillRandom(v, DB * DHKV * DNK * DD);
  reference(dense(q, DHQ, 1, DD), dense(k, DHKV, DNK, DD),
            dense(v, DHKV, DNK, DD), DB, DHQ, DHKV, 1, DNK, DD, 1, kvLen, ref,
            NULL);
  int64_t qs[4] = {DB, DHQ, 1, DD}, ks[4] = {DB, DHKV, DNK, DD}, ls[1] = {DB};
  DLTensor tq = tensor(q, 4, qs, NULL, kDLFloat, 32);
  DLTensor tk = tensor(k, 4, ks, NULL, kDLFloat, 32);
  DLTensor tv = tensor(v, 4, ks, NULL, kDLFloat, 32);
  DLTensor tl = tensor(kvLen, 1, ls, NULL, kDLInt, 32);
  DLTensor to = tensor(out, 4, qs, NULL, kDLFloat, 32);
  CHECK(test_decode(&tq, &tk, &tv, &tl, &to, NULL) == ATTN_STATUS_OK,
        "decode: %s", attn_last_error());
  double e = maxErr(ref, dense(out, DHQ, 1, DD), DB, DHQ, 1, DD);
  CHECK(e < tol, "decode: out max error %g", e);

  /* kv_len as a wrong dtype names the argument and the expected dtype. */
  DLTensor bad = tl;
  bad.dtype.bits = 64;
  CHECK(test_decode(&tq, &tk, &tv, &bad, &to, NULL) ==
            ATTN_STATUS_DTYPE_MISMATCH,
        "i64 kv_len accepted");
  CHECK(strstr(attn_last_error(), "kv_len") &&
            strstr(attn_last_error(), "expected i32"),
        "message: %s", attn_last_error());
}

/* --- append into a strided cache: [2,2,6,4] viewed in a framework's
   [B, Nmax, H, D] buffer (strides {Nmax H D, D, H D, 1}) inside a larger
   allocation, one new row per (batch entry, head) at positions {2, 5}. */
enum { AB = 2, AH = 2, AN = 6, AD = 4, APAD = 8 };

/* The buffer after appending `row` at pos[b] of every head. */
static void appendReference(float *buf, const float *row, const int32_t *pos) {
  for (int64_t b = 0; b < AB; ++b)
    for (int64_t h = 0; h < AH; ++h)
      for (int64_t d = 0; d < AD; ++d)
        buf[APAD + ((b * AN + pos[b]) * AH + h) * AD + d] =
            row[(b * AH + h) * AD + d];
}

typedef attn_status_t (*AppendFn)(const DLTensor *, const DLTensor *,
                                  const DLTensor *, DLTensor *,
                                  const attn_exec_options_t *);
typedef attn_status_t (*AppendSizeFn)(const DLTensor *, const DLTensor *,
                                      const DLTensor *, DLTensor *, size_t *);

/* `append` (static sizes) or `append_dynamic` (a dynamic capacity): the
   workspace the call needs is `copies` dense copies of the cache. */
static void testStridedAppend(const char *name, AppendFn append,
                              AppendSizeFn workspaceSize, size_t copies) {
  enum { SIZE = APAD + AB * AN * AH * AD + APAD };
  static float buf[SIZE], before[SIZE], want[SIZE], row[AB * AH * AD],
      denseOut[AB * AH * AN * AD];
  fillRandom(buf, SIZE);
  fillRandom(row, AB * AH * AD);
  memcpy(before, buf, sizeof(buf));
  int32_t pos[AB] = {2, AN - 1};
  int64_t cacheShape[4] = {AB, AH, AN, AD}, rowShape[4] = {AB, AH, 1, AD},
          posShape[1] = {AB};
  int64_t viewStrides[4] = {AN * AH * AD, AD, AH * AD, 1};
  DLTensor cache = tensor(buf, 4, cacheShape, viewStrides, kDLFloat, 32);
  cache.byte_offset = APAD * sizeof(float);
  DLTensor update = tensor(row, 4, rowShape, NULL, kDLFloat, 32);
  DLTensor at = tensor(pos, 1, posShape, NULL, kDLInt, 32);

  /* The cache's own tensor as the result: the rows land in the caller's
     strided buffer, everything else (other rows, the padding around the
     view) is left as it was. */
  size_t bytes = 0;
  CHECK(workspaceSize(&cache, &update, &at, &cache, &bytes) == ATTN_STATUS_OK,
        "%s workspace query: %s", name, attn_last_error());
  size_t one = (sizeof(denseOut) + 63) / 64 * 64;
  CHECK(bytes == copies * one, "%s workspace %zu bytes, expected %zu", name,
        bytes, copies * one);
  CHECK(append(&cache, &update, &at, &cache, NULL) == ATTN_STATUS_OK,
        "%s in place: %s", name, attn_last_error());
  memcpy(want, before, sizeof(want));
  appendReference(want, row, pos);
  CHECK(memcmp(buf, want, sizeof(buf)) == 0,
        "%s in place: the strided cache differs from the reference", name);

  /* A dense result of the strided cache: the cache with the new rows; the
     strided input is not written. */
  memcpy(buf, before, sizeof(buf));
  DLTensor result = tensor(denseOut, 4, cacheShape, NULL, kDLFloat, 32);
  CHECK(append(&cache, &update, &at, &result, NULL) == ATTN_STATUS_OK,
        "%s to a dense result: %s", name, attn_last_error());
  int mismatches = 0;
  for (int64_t b = 0; b < AB; ++b)
    for (int64_t h = 0; h < AH; ++h)
      for (int64_t n = 0; n < AN; ++n)
        for (int64_t d = 0; d < AD; ++d)
          mismatches += denseOut[((b * AH + h) * AN + n) * AD + d] !=
                        want[APAD + ((b * AN + n) * AH + h) * AD + d];
  CHECK(mismatches == 0, "%s to a dense result: %d elements differ", name,
        mismatches);
  CHECK(memcmp(buf, before, sizeof(buf)) == 0,
        "%s to a dense result wrote its strided input", name);

  /* A position past the cache: a status and a message, and the strided
     cache, its own result, as it was (the append writes nothing). */
  int32_t badPos[AB] = {2, AN};
  DLTensor badAt = tensor(badPos, 1, posShape, NULL, kDLInt, 32);
  CHECK(append(&cache, &update, &badAt, &cache, NULL) != ATTN_STATUS_OK,
        "%s past the cache succeeded", name);
  CHECK(strstr(attn_last_error(), "kv_cache_append") != NULL, "message: %s",
        attn_last_error());
  CHECK(memcmp(buf, before, sizeof(buf)) == 0,
        "%s: a failed append changed the strided cache", name);
}

/* --- dynamic sizes: q [1,2,Nq,8], k/v [1,2,Nk,8]; out returned [1,2,Nq,8] */
static void testDynamic(void) {
  enum { NQ = 5, NK = 9, D = 8, H = 2 };
  static float q[H * NQ * D], k[H * NK * D], v[H * NK * D], out[H * NQ * D];
  static double ref[H * NQ * D];
  fillRandom(q, H * NQ * D);
  fillRandom(k, H * NK * D);
  fillRandom(v, H * NK * D);
  reference(dense(q, H, NQ, D), dense(k, H, NK, D), dense(v, H, NK, D), 1, H, H,
            NQ, NK, D, 1, NULL, ref, NULL);
  int64_t qs[4] = {1, H, NQ, D}, ks[4] = {1, H, NK, D},
          vs[4] = {1, H, NK - 1, D};
  DLTensor tq = tensor(q, 4, qs, NULL, kDLFloat, 32);
  DLTensor tk = tensor(k, 4, ks, NULL, kDLFloat, 32);
  DLTensor tv = tensor(v, 4, ks, NULL, kDLFloat, 32);
  DLTensor to = tensor(out, 4, qs, NULL, kDLFloat, 32);
  CHECK(test_dynamic(&tq, &tk, &tv, &to, NULL) == ATTN_STATUS_OK, "dynamic: %s",
        attn_last_error());
  double e = maxErr(ref, dense(out, H, NQ, D), 1, H, NQ, D);
  CHECK(e < tol, "dynamic: out max error %g", e);

  /* Inputs of dynamic sizes are read in place when their innermost stride
     is 1: q stored [B, N, H, D] (a transposed view) and k as the first NK
     rows of a cache of 2 NK rows need no workspace. */
  CHECK(test_dynamic_info()->flags & ATTN_KERNEL_STRIDED_INPUTS,
        "the dynamic kernel does not take strided inputs");
  static float qt[NQ * H * D], kCache[H * 2 * NK * D];
  for (int64_t h = 0; h < H; ++h)
    for (int64_t n = 0; n < NQ; ++n)
      for (int64_t d = 0; d < D; ++d)
        qt[(n * H + h) * D + d] = q[(h * NQ + n) * D + d];
  for (int64_t h = 0; h < H; ++h)
    memcpy(kCache + h * 2 * NK * D, k + h * NK * D, NK * D * sizeof(float));
  int64_t qtStrides[4] = {NQ * H * D, D, H * D, 1},
          kCacheStrides[4] = {H * 2 * NK * D, 2 * NK * D, D, 1};
  DLTensor tqt = tensor(qt, 4, qs, qtStrides, kDLFloat, 32);
  DLTensor tkc = tensor(kCache, 4, ks, kCacheStrides, kDLFloat, 32);
  size_t bytes = 1;
  CHECK(test_dynamic_workspace_size(&tqt, &tkc, &tv, &to, &bytes) ==
                ATTN_STATUS_OK &&
            bytes == 0,
        "strided views of dynamic sizes: workspace %zu bytes, expected 0 (%s)",
        bytes, attn_last_error());
  memset(out, 0, sizeof(out));
  CHECK(test_dynamic(&tqt, &tkc, &tv, &to, NULL) == ATTN_STATUS_OK,
        "dynamic, strided views: %s", attn_last_error());
  e = maxErr(ref, dense(out, H, NQ, D), 1, H, NQ, D);
  CHECK(e < tol, "dynamic, strided views: out max error %g", e);
  /* An innermost stride of 2 is gathered: q's dense copy. */
  static float q2[2 * H * NQ * D];
  for (int64_t i = 0; i < H * NQ * D; ++i)
    q2[2 * i] = q[i];
  int64_t q2Strides[4] = {2 * H * NQ * D, 2 * NQ * D, 2 * D, 2};
  DLTensor tq2 = tensor(q2, 4, qs, q2Strides, kDLFloat, 32);
  CHECK(test_dynamic_workspace_size(&tq2, &tkc, &tv, &to, &bytes) ==
                ATTN_STATUS_OK &&
            bytes == (sizeof(q) + 63) / 64 * 64,
        "q of innermost stride 2: workspace %zu bytes", bytes);
  memset(out, 0, sizeof(out));
  CHECK(test_dynamic(&tq2, &tkc, &tv, &to, NULL) == ATTN_STATUS_OK,
        "dynamic, q of innermost stride 2: %s", attn_last_error());
  e = maxErr(ref, dense(out, H, NQ, D), 1, H, NQ, D);
  CHECK(e < tol, "dynamic, q of innermost stride 2: out max error %g", e);

  /* k and v disagree on Nk. */
  DLTensor tv2 = tensor(v, 4, vs, NULL, kDLFloat, 32);
  CHECK(test_dynamic(&tq, &tk, &tv2, &to, NULL) == ATTN_STATUS_SHAPE_MISMATCH,
        "Nk mismatch accepted");
  CHECK(strstr(attn_last_error(), "Nk") != NULL, "message: %s",
        attn_last_error());
#ifndef __SANITIZE_ADDRESS__
  /* A broadcast view (stride 0, innermost too, so that the kernel cannot
     read it in place) of 2^42 query rows: its dense copy (2^48 bytes,
     beyond any address space) cannot be allocated. (AddressSanitizer
     aborts on such a request instead of failing it.) */
  int64_t hugeShape[4] = {1, H, (int64_t)1 << 42, D},
          zeroStrides[4] = {0, 0, 0, 0};
  DLTensor huge = tensor(q, 4, hugeShape, zeroStrides, kDLFloat, 32);
  DLTensor hugeOut = tensor(out, 4, hugeShape, NULL, kDLFloat, 32);
  CHECK(test_dynamic(&huge, &tk, &tv, &hugeOut, NULL) ==
            ATTN_STATUS_OUT_OF_MEMORY,
        "a 2^48-byte workspace: %s", attn_last_error());
#endif
  /* An output of the wrong size (checked against what the kernel
     computed). */
  int64_t os[4] = {1, H, NQ - 1, D};
  DLTensor to2 = tensor(out, 4, os, NULL, kDLFloat, 32);
  CHECK(test_dynamic(&tq, &tk, &tv, &to2, NULL) == ATTN_STATUS_SHAPE_MISMATCH,
        "wrong output size accepted");
}

/* --- dynamic heads: q [2,Hq,4,8], k/v [2,Hkv,4,8], bool mask [1,1,4,4] */
static void testHeads(void) {
  enum { B = 2, HQ = 4, HKV = 2, N = 4, D = 8 };
  static float q[B * HQ * N * D], k[B * HKV * N * D], v[B * HKV * N * D],
      out[B * HQ * N * D];
  static double ref[B * HQ * N * D];
  uint8_t mask[N * N];
  memset(mask, 1, sizeof(mask));
  fillRandom(q, B * HQ * N * D);
  fillRandom(k, B * HKV * N * D);
  fillRandom(v, B * HKV * N * D);
  reference(dense(q, HQ, N, D), dense(k, HKV, N, D), dense(v, HKV, N, D), B, HQ,
            HKV, N, N, D, 2, NULL, ref, NULL);
  int64_t qs[4] = {B, HQ, N, D}, ks[4] = {B, HKV, N, D}, ms[4] = {1, 1, N, N};
  DLTensor tq = tensor(q, 4, qs, NULL, kDLFloat, 32);
  DLTensor tk = tensor(k, 4, ks, NULL, kDLFloat, 32);
  DLTensor tv = tensor(v, 4, ks, NULL, kDLFloat, 32);
  DLTensor tm = tensor(mask, 4, ms, NULL, 6 /* kDLBool */, 8);
  DLTensor to = tensor(out, 4, qs, NULL, kDLFloat, 32);
  CHECK(test_heads(&tq, &tk, &tv, &tm, &to, NULL) == ATTN_STATUS_OK,
        "heads: %s", attn_last_error());
  double e = maxErr(ref, dense(out, HQ, N, D), B, HQ, N, D);
  CHECK(e < tol, "heads: out max error %g", e);

  /* 3 query heads over 2 K/V heads. */
  int64_t q3[4] = {B, 3, N, D};
  DLTensor bad = tensor(q, 4, q3, NULL, kDLFloat, 32);
  DLTensor bado = tensor(out, 4, q3, NULL, kDLFloat, 32);
  CHECK(test_heads(&bad, &tk, &tv, &tm, &bado, NULL) ==
            ATTN_STATUS_SHAPE_MISMATCH,
        "3 query heads over 2 K/V heads accepted");
  CHECK(strstr(attn_last_error(), "not a multiple of Hkv = 2") != NULL,
        "message: %s", attn_last_error());
  /* Sizes whose byte count overflows. */
  int64_t huge[4] = {B, (int64_t)1 << 61, N, D};
  bad = tensor(q, 4, huge, NULL, kDLFloat, 32);
  CHECK(test_heads(&bad, &tk, &tv, &tm, &to, NULL) ==
            ATTN_STATUS_SHAPE_MISMATCH,
        "overflowing shape accepted");
  CHECK(strstr(attn_last_error(), "more bytes than") != NULL, "message: %s",
        attn_last_error());
}

static void testErrors(void) {
  float out[PB * PHQ * PN * PD], lse[PB * PHQ * PN];
  DLTensor q = tensor(pq, 4, qShape, NULL, kDLFloat, 32);
  DLTensor k = tensor(pk, 4, kvShape, NULL, kDLFloat, 32);
  DLTensor v = tensor(pv, 4, kvShape, NULL, kDLFloat, 32);
  DLTensor o = tensor(out, 4, qShape, NULL, kDLFloat, 32);
  DLTensor l = tensor(lse, 3, lseShape, NULL, kDLFloat, 32);

  CHECK(test_prefill(NULL, &k, &v, &o, &l, NULL) ==
            ATTN_STATUS_INVALID_ARGUMENT,
        "null q accepted");
  CHECK(strstr(attn_last_error(), "input q: null tensor") != NULL,
        "message: %s", attn_last_error());

  DLTensor bad = q;
  bad.dtype.bits = 16;
  CHECK(test_prefill(&bad, &k, &v, &o, &l, NULL) == ATTN_STATUS_DTYPE_MISMATCH,
        "f16 q accepted");
  CHECK(strstr(attn_last_error(), "input q: dtype f16, expected f32") != NULL,
        "message: %s", attn_last_error());

  int64_t wrong[4] = {PB, PHQ, PN, PD + 1};
  bad = q;
  bad.shape = wrong;
  CHECK(test_prefill(&bad, &k, &v, &o, &l, NULL) == ATTN_STATUS_SHAPE_MISMATCH,
        "wrong q shape accepted");
  CHECK(strstr(attn_last_error(), "expected [1,4,6,8]") != NULL, "message: %s",
        attn_last_error());
  bad = q;
  bad.ndim = 3;
  CHECK(test_prefill(&bad, &k, &v, &o, &l, NULL) == ATTN_STATUS_SHAPE_MISMATCH,
        "rank 3 q accepted");

  bad = o;
  bad.device.device_type = kDLCUDA;
  CHECK(test_prefill(&q, &k, &v, &bad, &l, NULL) ==
            ATTN_STATUS_UNSUPPORTED_DEVICE,
        "CUDA out accepted");
  CHECK(strstr(attn_last_error(), "output out: device") != NULL, "message: %s",
        attn_last_error());
  bad = q;
  bad.byte_offset = 2;
  CHECK(test_prefill(&bad, &k, &v, &o, &l, NULL) ==
            ATTN_STATUS_UNSUPPORTED_DEVICE,
        "misaligned q accepted");

  attn_exec_options_t opts;
  attn_exec_options_init(&opts);
  opts.abi_version = 99;
  CHECK(test_prefill(&q, &k, &v, &o, &l, &opts) == ATTN_STATUS_ABI_MISMATCH,
        "ABI version 99 accepted");
  attn_exec_options_init(&opts);
  opts.struct_size = 8;
  CHECK(test_prefill(&q, &k, &v, &o, &l, &opts) == ATTN_STATUS_ABI_MISMATCH,
        "struct_size 8 accepted");
  attn_exec_options_init(&opts);
  opts.num_threads = -1;
  CHECK(test_prefill(&q, &k, &v, &o, &l, &opts) == ATTN_STATUS_INVALID_ARGUMENT,
        "-1 threads accepted");
  attn_exec_options_init(&opts);
  opts.stream = &opts;
  CHECK(test_prefill(&q, &k, &v, &o, &l, &opts) ==
            ATTN_STATUS_UNSUPPORTED_DEVICE,
        "a stream accepted by a CPU kernel");

  size_t bytes = 1;
  CHECK(test_prefill_workspace_size(&q, &k, &v, &o, &l, NULL) ==
            ATTN_STATUS_INVALID_ARGUMENT,
        "null bytes accepted");
  CHECK(test_prefill_workspace_size(&q, &k, &v, &o, &l, &bytes) ==
                ATTN_STATUS_OK &&
            bytes == 0,
        "contiguous tensors need %zu bytes of workspace", bytes);

  /* The generic call and the dispatcher. */
  DLTensor *all[5] = {&q, &k, &v, &o, &l};
  CHECK(attn_kernel_call(test_prefill_info(), all, 4, NULL) ==
            ATTN_STATUS_INVALID_ARGUMENT,
        "4 tensors accepted");
  CHECK(attn_kernel_call(NULL, all, 5, NULL) == ATTN_STATUS_INVALID_ARGUMENT,
        "null kernel accepted");
  memset(out, 0, sizeof(out));
  CHECK(test_dispatch(all, 5, NULL) == ATTN_STATUS_OK, "dispatch: %s",
        attn_last_error());
  checkPrefillResult(out, lse, "dispatch");
  bad = q;
  bad.dtype.bits = 16;
  all[0] = &bad;
  CHECK(test_dispatch(all, 5, NULL) == ATTN_STATUS_NO_SPECIALIZATION,
        "dispatch of f16 q accepted");
  CHECK(strstr(attn_last_error(), "prefill(q: f32[1,4,6,8]") &&
            strstr(attn_last_error(), "decode("),
        "message: %s", attn_last_error());

  int32_t count = 0;
  const attn_kernel_info_t *const *kernels = test_kernels(&count);
  CHECK(count == 6 && kernels[0] == test_prefill_info(), "%d kernels", count);
  CHECK(!strcmp(test_decode_info()->tensors[3].name, "kv_len") &&
            !strcmp(test_decode_info()->symbol, "test_decode"),
        "decode info");
  CHECK(!strcmp(attn_status_name(ATTN_STATUS_NO_SPECIALIZATION),
                "ATTN_STATUS_NO_SPECIALIZATION"),
        "status name");
  CHECK(attn_runtime_abi_version() == ATTN_KERNEL_ABI_VERSION, "ABI version");
  /* A success clears the last error. */
  CHECK(runPrefill(out, lse, NULL) == ATTN_STATUS_OK &&
            attn_last_error()[0] == 0,
        "last error after success: %s", attn_last_error());
}

/* Concurrent callers: each thread runs the prefill kernel 20 times on the
   shared inputs into its own outputs with its own thread count. */
typedef struct {
  int id, failures;
} Worker;

static void *work(void *arg) {
  Worker *w = arg;
  float out[PB * PHQ * PN * PD], lse[PB * PHQ * PN];
  attn_exec_options_t opts;
  attn_exec_options_init(&opts);
  opts.num_threads = 1 + w->id % 2;
  for (int r = 0; r < 20; ++r) {
    memset(out, 0, sizeof(out));
    if (runPrefill(out, lse, &opts) != ATTN_STATUS_OK ||
        maxErr(pRefOut, dense(out, PHQ, PN, PD), PB, PHQ, PN, PD) >= tol)
      ++w->failures;
  }
  return NULL;
}

static void testThreads(void) {
  enum { N = 4 };
  pthread_t threads[N];
  Worker workers[N];
  for (int i = 0; i < N; ++i) {
    workers[i].id = i;
    workers[i].failures = 0;
    pthread_create(&threads[i], NULL, work, &workers[i]);
  }
  for (int i = 0; i < N; ++i) {
    pthread_join(threads[i], NULL);
    CHECK(workers[i].failures == 0, "thread %d: %d wrong results", i,
          workers[i].failures);
  }
}

int main(void) {
  testPrefill();
  testStrided();
  testDecode();
  /* The static kernel gathers its strided cache into the workspace (its
     strides are constants in its code) and scatters the result from there:
     two copies. The dynamic one writes an input in place, so it takes no
     strided views: the cache is copied into the workspace; its result, of
     a dynamic size and not an attention's, is allocated by the kernel and
     copied out by the runtime (docs/Embedding.md): one copy. */
  uint32_t flags = test_append_dynamic_info()->flags;
  CHECK(!(flags & ATTN_KERNEL_STRIDED_INPUTS) &&
            (flags & ATTN_KERNEL_RETURNS_OUTPUTS),
        "append_dynamic flags 0x%x", (unsigned)flags);
  testStridedAppend("append", test_append, test_append_workspace_size, 2);
  testStridedAppend("append_dynamic", test_append_dynamic,
                    test_append_dynamic_workspace_size, 1);
  testDynamic();
  testHeads();
  testErrors();
  testThreads();
  if (failures) {
    printf("c-kernel-test: %d failures\n", failures);
    return 1;
  }
  printf("c-kernel-test: all checks passed\n");
  return 0;
}
