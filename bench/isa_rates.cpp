// The peak multiply-add rate of each instruction set the attention kernels
// could use, on one core: independent chains of one instruction in a loop,
// so that only its throughput counts (no memory traffic, no dependences
// between consecutive instructions).
//
//   isa_rates [--probes fma256,fma512,dpbf16,amx-bf16] [--seconds S]
//
//  - fma256 / fma512: vfmadd231ps on ymm / zmm (f32, 8 / 16 multiply-adds);
//  - dpbf16: vdpbf16ps on zmm (AVX-512 BF16: 32 bf16 products summed into 16
//    f32 lanes);
//  - amx-bf16: tdpbf16ps on 16 x 64-byte tiles (AMX: a 16 x 32 by 32 x 16
//    bf16 product added to 16 x 16 f32, 8192 multiply-adds), after asking
//    Linux for the AMX state (arch_prctl ARCH_REQ_XCOMP_PERM).
// Only the probes named run; bench.py names those the CPU's flags allow (an
// instruction the CPU lacks would stop the process). Prints one JSON object:
//   {"probes": [{"name", "ns_per_instruction", "gflops"}, ...]}
// with gflops = 2 x multiply-adds per second (one core), or an "error" for a
// probe that could not run (AMX refused by the kernel).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>

static double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// 12 independent accumulators in registers: more than latency x throughput
// on every core measured (FMA: 4 cycles x 2 per cycle).
#define REPEAT12(X)                                                            \
  X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)

__attribute__((target("avx2,fma"))) static double fma256(long n) {
  __m256 a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11;
#define INIT(i) a##i = _mm256_set1_ps(float(i) * 1e-3f);
  REPEAT12(INIT)
#undef INIT
  __m256 x = _mm256_set1_ps(0.999f), y = _mm256_set1_ps(1.0001f);
  double t0 = now();
  for (long k = 0; k < n; k += 12) {
#define STEP(i) a##i = _mm256_fmadd_ps(x, y, a##i);
    REPEAT12(STEP)
#undef STEP
    __asm__ volatile("" : "+x"(x));
  }
  double t = now() - t0;
  float sink[8];
  __m256 s = a0;
#define SUM(i) s = _mm256_add_ps(s, a##i);
  REPEAT12(SUM)
#undef SUM
  _mm256_storeu_ps(sink, s);
  __asm__ volatile("" ::"r"(sink[0]) : "memory");
  return t;
}

__attribute__((target("avx512f"))) static double fma512(long n) {
  __m512 a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11;
#define INIT(i) a##i = _mm512_set1_ps(float(i) * 1e-3f);
  REPEAT12(INIT)
#undef INIT
  __m512 x = _mm512_set1_ps(0.999f), y = _mm512_set1_ps(1.0001f);
  double t0 = now();
  for (long k = 0; k < n; k += 12) {
#define STEP(i) a##i = _mm512_fmadd_ps(x, y, a##i);
    REPEAT12(STEP)
#undef STEP
    __asm__ volatile("" : "+v"(x));
  }
  double t = now() - t0;
  __m512 s = a0;
#define SUM(i) s = _mm512_add_ps(s, a##i);
  REPEAT12(SUM)
#undef SUM
  float r = _mm512_reduce_add_ps(s);
  __asm__ volatile("" ::"x"(r));
  return t;
}

__attribute__((target("avx512f,avx512bf16"))) static double dpbf16(long n) {
  __m512 a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11;
#define INIT(i) a##i = _mm512_set1_ps(float(i) * 1e-3f);
  REPEAT12(INIT)
#undef INIT
  __m512bh x = (__m512bh)_mm512_set1_epi32(0x3f803f80);
  __m512bh y = (__m512bh)_mm512_set1_epi32(0x3f803f80);
  double t0 = now();
  for (long k = 0; k < n; k += 12) {
#define STEP(i) a##i = _mm512_dpbf16_ps(a##i, x, y);
    REPEAT12(STEP)
#undef STEP
    __asm__ volatile("" : "+v"(x));
  }
  double t = now() - t0;
  __m512 s = a0;
#define SUM(i) s = _mm512_add_ps(s, a##i);
  REPEAT12(SUM)
#undef SUM
  float r = _mm512_reduce_add_ps(s);
  __asm__ volatile("" ::"x"(r));
  return t;
}

namespace {
/// The 64-byte tile configuration of ldtilecfg (palette 1).
struct TileConfig {
  uint8_t palette, startRow, reserved[14];
  uint16_t colBytes[16];
  uint8_t rows[16];
};
} // namespace

/// Asks Linux for the AMX tile data state (needed once per process before
/// any tile instruction); false when refused.
static bool requestAmx() {
  const long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
}

__attribute__((target("amx-tile,amx-bf16"))) static double amxBf16(long n) {
  TileConfig cfg;
  std::memset(&cfg, 0, sizeof cfg);
  cfg.palette = 1;
  for (int i = 0; i < 8; ++i) {
    cfg.rows[i] = 16;
    cfg.colBytes[i] = 64;
  }
  _tile_loadconfig(&cfg);
  alignas(64) static uint16_t a[16 * 32], b[16 * 32];
  alignas(64) static float c[16 * 16];
  for (int i = 0; i < 16 * 32; ++i)
    a[i] = b[i] = 0x3f80; // bf16 1.0
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  _tile_loadd(4, a, 64);
  _tile_loadd(5, b, 64);
  _tile_loadd(6, a, 64);
  _tile_loadd(7, b, 64);
  // Four independent accumulator tiles, two A and two B tiles: the shape
  // of a 32 x 32 register block of a GEMM.
  double t0 = now();
  for (long k = 0; k < n; k += 4) {
    _tile_dpbf16ps(0, 4, 5);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 6, 5);
    _tile_dpbf16ps(3, 6, 7);
  }
  double t = now() - t0;
  _tile_stored(0, c, 64);
  _tile_release();
  __asm__ volatile("" ::"r"(c[0]) : "memory");
  return t;
}

struct Probe {
  const char *name;
  double macs; // multiply-adds per instruction
  double (*run)(long);
  long warmup, count; // instructions: a short first run, then the measured
};

int main(int argc, char **argv) {
  std::string which = "fma256,fma512,dpbf16,amx-bf16";
  double seconds = 0.3;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--probes")
      which = argv[i + 1];
    else if (a == "--seconds")
      seconds = std::atof(argv[i + 1]);
  }
  const Probe probes[] = {
      {"fma256", 8, fma256, 1200000, 0},
      {"fma512", 16, fma512, 1200000, 0},
      {"dpbf16", 32, dpbf16, 1200000, 0},
      {"amx-bf16", 16 * 16 * 32, amxBf16, 40000, 0},
  };
  std::string out = "{\"probes\": [";
  bool first = true;
  for (const Probe &p : probes) {
    if (("," + which + ",").find("," + std::string(p.name) + ",") ==
        std::string::npos)
      continue;
    char line[256];
    if (std::string(p.name) == "amx-bf16" && !requestAmx()) {
      std::snprintf(line, sizeof line,
                    "{\"name\": \"%s\", \"error\": \"arch_prctl refused the "
                    "AMX state\"}",
                    p.name);
    } else {
      // Calibrate on a short run (it also lets the clock settle), then run
      // for about `seconds`; the best of three runs.
      double t = p.run(p.warmup);
      long n = static_cast<long>(p.warmup * seconds / (t > 0 ? t : 1e-3));
      n = std::max<long>(n / 12 * 12, 12);
      double best = 1e30;
      for (int r = 0; r < 3; ++r)
        best = std::min(best, p.run(n));
      std::snprintf(line, sizeof line,
                    "{\"name\": \"%s\", \"ns_per_instruction\": %.4f, "
                    "\"gflops\": %.1f}",
                    p.name, best / n * 1e9, 2.0 * p.macs * n / best * 1e-9);
    }
    out += (first ? "" : ", ") + std::string(line);
    first = false;
  }
  std::printf("%s]}\n", out.c_str());
  return 0;
}
