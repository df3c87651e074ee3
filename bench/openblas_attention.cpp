// Plain C++ attention baseline on OpenBLAS: GEMM, row softmax with max
// subtraction, GEMM. Layout [B, H, N, D] (bhnd), f32.
//
// For each batch entry and K/V head g, the query rows of the R = Hq / Hkv
// query heads that read g are one contiguous [R * Nq, Dqk] matrix (GQA by
// indexing: K and V are never copied). They are processed in blocks of
// --block-q rows:
//   S = scale * Q_blk K[klo:khi]^T           (cblas_sgemm)
//   per row: keys outside [lo, hi) -> weight 0; m = max; e = exp(s - m);
//            l = sum e                        (OpenMP over rows)
//   O_blk = E V[klo:khi], then O row *= 1/l  (cblas_sgemm)
// where [lo, hi) is the row's allowed key interval (kv_len, causal top-left
// or bottom-right, window_left / window_right: all of them are intervals) and
// [klo, khi) the union over the block, so causal blocks skip keys no row in
// them may read. A row with no allowed key gives 0.
//
// Usage: openblas_attention --q q.npy --k k.npy --v v.npy [--kv-len l.npy]
//          [--causal none|top_left|bottom_right] [--window-left N]
//          [--window-right N] [--block-q 256] [--reps N] [--threads T]
//          [--out out.npy] [--report r.json]
// Threads: OpenBLAS threads for the GEMMs (openblas_set_num_threads(T)) and
// T OpenMP threads for the softmax. bench.py sets OPENBLAS_CORETYPE where
// OpenBLAS's own detection picks a core weaker than the CPU allows (Debian's
// 0.3.21 falls back to an SSE-era core on CPUs it does not know; see
// bench/hostcpu.py); the program prints the core it runs. The two
// thread pools take turns: with OMP_WAIT_POLICY=passive the OpenMP threads
// sleep during the GEMMs instead of spinning (spinning cost 100x at 2 threads
// on a machine with other load).
// Memory: the resident-set high-water mark (VmHWM) over the warm-up and timed
// calls minus the resident set before them (high-water mark reset through
// /proc/self/clear_refs); the output is allocated before, so this is the
// workspace: one [block rows, Nk] score block plus OpenBLAS's buffers.
#include "attn/Support/Npy.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

extern "C" {
void openblas_set_num_threads(int);
char *openblas_get_corename(void);
char *openblas_get_config(void);
}

namespace {

/// The project's .npy reader and writer (lib/Support/Npy.cpp, compiled in by
/// bench/run.sh), throwing on error for this program's one try block.
static attn::npy::Array readNpy(const std::string &path) {
  attn::npy::Array a;
  std::string err = attn::npy::read(path, a);
  if (!err.empty())
    throw std::runtime_error(path + ": " + err);
  return a;
}

static int64_t numElements(const attn::npy::Array &a) {
  int64_t n = 0;
  if (!attn::npy::numElements(a.shape, n))
    throw std::runtime_error("bad .npy shape");
  return n;
}

template <typename T> static const T *dataAs(const attn::npy::Array &a) {
  return reinterpret_cast<const T *>(a.bytes.data());
}

struct Problem {
  int64_t B, Hq, Hkv, Nq, Nk, D, Dv;
  const float *q, *k, *v;
  std::vector<int64_t> kvLen; // per batch entry, clamped to [0, Nk]
  int causal = 0;             // 0 none, 1 top-left, 2 bottom-right
  int64_t wl = -1, wr = -1;   // window sides, -1 = unbounded
  float scale;
  int64_t blockQ = 256;
};

inline void interval(const Problem &P, int64_t i, int64_t kvl, int64_t &lo,
                     int64_t &hi) {
  int64_t p = P.causal == 2 ? i + kvl - P.Nq : i;
  lo = 0;
  hi = kvl;
  if (P.causal)
    hi = std::min(hi, p + 1);
  if (P.wl >= 0)
    lo = std::max(lo, p - P.wl);
  if (P.wr >= 0)
    hi = std::min(hi, p + P.wr + 1);
}

void attention(const Problem &P, float *out) {
  const int64_t R = P.Hq / P.Hkv, rows = R * P.Nq;
  const int64_t bq = std::min(P.blockQ, rows);
  std::vector<float> S(size_t(bq) * P.Nk);
  std::vector<float> inv(bq);
  std::vector<int64_t> lo(bq), hi(bq);
  for (int64_t b = 0; b < P.B; ++b) {
    const int64_t kvl = P.kvLen[b];
    for (int64_t g = 0; g < P.Hkv; ++g) {
      const float *Q = P.q + (b * P.Hq + g * R) * P.Nq * P.D;
      const float *K = P.k + (b * P.Hkv + g) * P.Nk * P.D;
      const float *V = P.v + (b * P.Hkv + g) * P.Nk * P.Dv;
      float *O = out + (b * P.Hq + g * R) * P.Nq * P.Dv;
      for (int64_t r0 = 0; r0 < rows; r0 += bq) {
        const int64_t m = std::min(bq, rows - r0);
        int64_t klo = P.Nk, khi = 0;
        for (int64_t r = 0; r < m; ++r) {
          interval(P, (r0 + r) % P.Nq, kvl, lo[r], hi[r]);
          if (lo[r] < hi[r]) {
            klo = std::min(klo, lo[r]);
            khi = std::max(khi, hi[r]);
          }
        }
        if (khi <= klo) {
          std::memset(O + r0 * P.Dv, 0, sizeof(float) * m * P.Dv);
          continue;
        }
        const int64_t n = khi - klo;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, P.D, P.scale,
                    Q + r0 * P.D, P.D, K + klo * P.D, P.D, 0.0f, S.data(), n);
#pragma omp parallel for schedule(static)
        for (int64_t r = 0; r < m; ++r) {
          float *s = S.data() + r * n;
          const int64_t a = lo[r] - klo, e = hi[r] - klo;
          if (a >= e) {
            std::fill(s, s + n, 0.0f);
            inv[r] = 0.0f;
            continue;
          }
          float mx = -INFINITY;
          for (int64_t j = a; j < e; ++j)
            mx = std::max(mx, s[j]);
          float sum = 0.0f;
          for (int64_t j = a; j < e; ++j) {
            s[j] = std::exp(s[j] - mx);
            sum += s[j];
          }
          std::fill(s, s + a, 0.0f);
          std::fill(s + e, s + n, 0.0f);
          inv[r] = 1.0f / sum;
        }
        float *Ob = O + r0 * P.Dv;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, P.Dv, n, 1.0f,
                    S.data(), n, V + klo * P.Dv, P.Dv, 0.0f, Ob, P.Dv);
        for (int64_t r = 0; r < m; ++r)
          for (int64_t d = 0; d < P.Dv; ++d)
            Ob[r * P.Dv + d] *= inv[r];
      }
    }
  }
}

// A field of /proc/self/status in bytes (VmRSS, VmHWM), or -1.
long statusBytes(const char *field) {
  FILE *f = std::fopen("/proc/self/status", "r");
  if (!f)
    return -1;
  char line[256];
  long kib = -1;
  size_t n = std::strlen(field);
  while (std::fgets(line, sizeof line, f))
    if (!std::strncmp(line, field, n) && line[n] == ':')
      kib = std::atol(line + n + 1);
  std::fclose(f);
  return kib < 0 ? -1 : kib * 1024;
}

// Resets the resident-set high-water mark to the current RSS (Linux >= 4.0)
// and returns the current RSS.
long resetPeakRss() {
  if (FILE *f = std::fopen("/proc/self/clear_refs", "w")) {
    std::fputs("5", f);
    std::fclose(f);
  }
  return statusBytes("VmRSS");
}

} // namespace

int main(int argc, char **argv) {
  std::string qPath, kPath, vPath, lenPath, outPath, reportPath;
  std::string causal = "none";
  int64_t wl = -1, wr = -1, blockQ = 256;
  int reps = 5, threads = 1;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "missing value for %s\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--q")
      qPath = next();
    else if (a == "--k")
      kPath = next();
    else if (a == "--v")
      vPath = next();
    else if (a == "--kv-len")
      lenPath = next();
    else if (a == "--out")
      outPath = next();
    else if (a == "--report")
      reportPath = next();
    else if (a == "--causal")
      causal = next();
    else if (a == "--window-left")
      wl = std::stoll(next());
    else if (a == "--window-right")
      wr = std::stoll(next());
    else if (a == "--block-q")
      blockQ = std::stoll(next());
    else if (a == "--reps")
      reps = std::stoi(next());
    else if (a == "--threads")
      threads = std::stoi(next());
    else {
      std::fprintf(stderr, "unknown option %s\n", a.c_str());
      return 2;
    }
  }
  if (qPath.empty() || kPath.empty() || vPath.empty()) {
    std::fprintf(stderr, "need --q, --k and --v\n");
    return 2;
  }
  openblas_set_num_threads(threads);
  omp_set_num_threads(threads);
  try {
    attn::npy::Array q = readNpy(qPath), k = readNpy(kPath), v = readNpy(vPath);
    if (q.dtype != "<f4" || k.dtype != "<f4" || v.dtype != "<f4" ||
        q.shape.size() != 4 || k.shape.size() != 4 || v.shape.size() != 4)
      throw std::runtime_error("q, k, v must be rank-4 float32 [B, H, N, D]");
    Problem P;
    P.B = q.shape[0];
    P.Hq = q.shape[1];
    P.Nq = q.shape[2];
    P.D = q.shape[3];
    P.Hkv = k.shape[1];
    P.Nk = k.shape[2];
    P.Dv = v.shape[3];
    if (k.shape[0] != P.B || v.shape[0] != P.B || k.shape[3] != P.D ||
        v.shape[1] != P.Hkv || v.shape[2] != P.Nk || P.Hq % P.Hkv)
      throw std::runtime_error("inconsistent q/k/v shapes");
    P.q = dataAs<float>(q);
    P.k = dataAs<float>(k);
    P.v = dataAs<float>(v);
    P.kvLen.assign(P.B, P.Nk);
    if (!lenPath.empty()) {
      attn::npy::Array l = readNpy(lenPath);
      if (l.dtype != "<i4" || numElements(l) != P.B)
        throw std::runtime_error("kv_len must be int32 [B]");
      for (int64_t b = 0; b < P.B; ++b)
        P.kvLen[b] = std::clamp<int64_t>(dataAs<int32_t>(l)[b], 0, P.Nk);
    }
    P.causal = causal == "none"           ? 0
               : causal == "top_left"     ? 1
               : causal == "bottom_right" ? 2
                                          : -1;
    if (P.causal < 0)
      throw std::runtime_error(
          "--causal must be none, top_left or bottom_right");
    P.wl = wl;
    P.wr = wr;
    P.blockQ = blockQ;
    P.scale = 1.0f / std::sqrt(static_cast<float>(P.D));

    std::vector<float> out(size_t(P.B * P.Hq * P.Nq * P.Dv), 0.0f);
    long rssBefore = resetPeakRss();
    std::vector<double> times;
    for (int r = 0; r <= reps; ++r) { // run 0 is the warm-up
      auto t0 = std::chrono::steady_clock::now();
      attention(P, out.data());
      double s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
              .count();
      if (r > 0)
        times.push_back(s);
    }
    long rssAfter = statusBytes("VmHWM");
    std::sort(times.begin(), times.end());
    double median = times.empty() ? 0 : times[times.size() / 2];
    std::printf("openblas core %s, config %s, %d threads: median %.6f s\n",
                openblas_get_corename(), openblas_get_config(), threads,
                median);
    if (!outPath.empty()) {
      attn::npy::Array o;
      o.dtype = "<f4";
      o.shape = {P.B, P.Hq, P.Nq, P.Dv};
      o.bytes.assign(reinterpret_cast<const char *>(out.data()),
                     reinterpret_cast<const char *>(out.data() + out.size()));
      std::string err = attn::npy::write(outPath, o);
      if (!err.empty())
        throw std::runtime_error(outPath + ": " + err);
    }
    if (!reportPath.empty()) {
      FILE *f = std::fopen(reportPath.c_str(), "w");
      std::fprintf(f,
                   "{\"core\": \"%s\", \"threads\": %d, \"median_s\": %.9g, "
                   "\"min_s\": %.9g, \"max_s\": %.9g, \"times_s\": [",
                   openblas_get_corename(), threads, median,
                   times.empty() ? 0 : times.front(),
                   times.empty() ? 0 : times.back());
      for (size_t i = 0; i < times.size(); ++i)
        std::fprintf(f, "%s%.9g", i ? ", " : "", times[i]);
      std::fprintf(
          f,
          "], \"peak_rss_delta_bytes\": %ld, "
          "\"workspace_bytes\": %lld}\n",
          rssAfter - rssBefore,
          static_cast<long long>(
              std::min<int64_t>(P.blockQ, (P.Hq / P.Hkv) * P.Nq) * P.Nk * 4));
      std::fclose(f);
    }
  } catch (const std::exception &e) {
    std::fprintf(stderr, "openblas_attention: %s\n", e.what());
    return 1;
  }
  return 0;
}
