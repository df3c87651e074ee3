// Measures the two machine limits the benchmark compares against, with a
// given number of threads:
//  - SGEMM rate: OpenBLAS cblas_sgemm, C = A B with A, B, C square n x n f32
//    (default n = 2048), 2 n^3 flops per call; one warm-up, then --reps calls.
//  - Read bandwidth: a streaming sum over a float buffer much larger than the
//    last-level cache (default 1 GiB), T OpenMP threads each summing a
//    contiguous slice with 16-lane vectors; bytes read / time.
// Prints one JSON object:
//   {"threads", "core", "sgemm_n", "sgemm_gflops_median", "sgemm_gflops_max",
//    "read_bytes", "read_gbs_median", "read_gbs_max"}
// With --probe it measures nothing and prints {"core", "config"}: the core
// OpenBLAS runs (openblas_get_corename()) under the current environment.
// bench.py probes with OPENBLAS_CORETYPE unset to see what OpenBLAS detects
// by itself, then decides whether to force a core (bench/hostcpu.py).
#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

extern "C" {
void openblas_set_num_threads(int);
char *openblas_get_corename(void);
char *openblas_get_config(void);
}

static double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main(int argc, char **argv) {
  int threads = 1, reps = 5;
  long n = 2048;
  long bwMiB = 1024;
  if (argc == 2 && std::string(argv[1]) == "--probe") {
    std::printf("{\"core\": \"%s\", \"config\": \"%s\"}\n",
                openblas_get_corename(), openblas_get_config());
    return 0;
  }
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--threads")
      threads = std::atoi(argv[i + 1]);
    else if (a == "--reps")
      reps = std::atoi(argv[i + 1]);
    else if (a == "--n")
      n = std::atol(argv[i + 1]);
    else if (a == "--bw-mib")
      bwMiB = std::atol(argv[i + 1]);
  }
  openblas_set_num_threads(threads);
  omp_set_num_threads(threads);

  // SGEMM.
  std::vector<float> A(n * n), B(n * n), C(n * n);
  for (long i = 0; i < n * n; ++i) {
    A[i] = float((i * 7) % 13) / 13.0f - 0.5f;
    B[i] = float((i * 5) % 11) / 11.0f - 0.5f;
  }
  std::vector<double> rates;
  for (int r = 0; r <= reps; ++r) {
    double t0 = now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f,
                A.data(), n, B.data(), n, 0.0f, C.data(), n);
    double t = now() - t0;
    if (r > 0)
      rates.push_back(2.0 * n * n * n / t * 1e-9);
  }
  std::vector<float>().swap(A);
  std::vector<float>().swap(B);
  std::vector<float>().swap(C);

  // Read bandwidth.
  const long count = bwMiB * 1024 * 1024 / 4;
  float *buf = static_cast<float *>(std::aligned_alloc(64, count * 4));
#pragma omp parallel for schedule(static)
  for (long i = 0; i < count; ++i)
    buf[i] = float(i & 1023) * 1e-3f;
  std::vector<double> bws;
  volatile float sink = 0;
  for (int r = 0; r <= reps; ++r) {
    double t0 = now();
    float total = 0;
#pragma omp parallel for schedule(static) reduction(+ : total)
    for (long i = 0; i < count; ++i)
      total += buf[i];
    double t = now() - t0;
    sink = sink + total;
    if (r > 0)
      bws.push_back(count * 4.0 / t * 1e-9);
  }
  std::free(buf);
  std::printf("{\"threads\": %d, \"core\": \"%s\", \"sgemm_n\": %ld, "
              "\"sgemm_gflops_median\": %.2f, \"sgemm_gflops_max\": %.2f, "
              "\"read_bytes\": %ld, \"read_gbs_median\": %.2f, "
              "\"read_gbs_max\": %.2f}\n",
              threads, openblas_get_corename(), n, median(rates),
              *std::max_element(rates.begin(), rates.end()), count * 4,
              median(bws), *std::max_element(bws.begin(), bws.end()));
  return 0;
}
