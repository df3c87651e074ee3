//===- DifferentialTest.cpp - randomized sweep: compiled code vs reference ===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// A randomized differential sweep. Each case is an attn spec written as MLIR
// text (a func.func @f taking tensors and returning the attn op's results),
// JIT-compiled for the host in every form under test, run on seeded random
// inputs, and compared output by output with the independent f64 reference
// (lib/Reference) within defaultTolerance.
//
// Case `i` of seed `s` is a pure function of (s, i): a random base
// configuration with one "scenario" forced on it (scenario i % N, see
// scenarios()), so every row of the feature matrix is covered by every run of
// the default sweep whatever the seed, and in combination with random other
// features. SweepCoverage.FeatureMatrix checks that coverage, data-dependent
// parts included (kv_len 0 and Nk, fully masked rows with lse = -inf).
//
// Environment:
//   ATTN_SWEEP_SEED=N    sweep seed (default kDefaultSeed; decimal or 0x..)
//   ATTN_SWEEP_CASES=N   number of cases (default kDefaultCases)
//   ATTN_SWEEP_CASE=I    run only case I (or a comma-separated list)
//   ATTN_SWEEP_FORMS=a,b forms to compile each case with (default
//                        kDefaultForms: all six, see below)
//   ATTN_SWEEP_DUMP=DIR  write every case's spec and inputs (.npy) to DIR,
//                        so that attn-run can replay it exactly; the failure
//                        message then prints the attn-run command line.
//   ATTN_SWEEP_VERBOSE=1 print the coverage table (SweepCoverage) and the
//                        time each case spends in each phase.
//
// A crash (in the compiler or the compiled code) prints the same replay
// information and spec as a mismatch before the process dies.
//
// Replay a failing case:
//   ATTN_SWEEP_SEED=<s> ATTN_SWEEP_CASE=<i> ATTN_SWEEP_FORMS=<form> \
//     <build>/test/unittests/AttnSweepTests
// (under ctest every case is its own test: ctest -R 'naive_<i> ').
//
// ctest lists the cases once (gtest_discover_tests, PRE_TEST) and keeps the
// list until the binary changes, so a later ctest run with other
// ATTN_SWEEP_CASES or ATTN_SWEEP_FORMS would ask for cases this run does not
// instantiate. main() fails such a run (a filter that selects no test)
// instead of letting the empty run pass; scripts/test.sh and
// scripts/sanitize.sh delete the cached list before they run ctest (CI sets a
// smaller sweep for the sanitizers in .ci/run).
//
//===----------------------------------------------------------------------===//

#include "attn/Execution/HostTensor.h"
#include "attn/Execution/Jit.h"
#include "attn/Execution/ReferenceBridge.h"
#include "attn/Execution/SpecBinding.h"
#include "attn/IR/AttnDialect.h"
#include "attn/IR/AttnOps.h"
#include "attn/Reference/Reference.h"
#include "attn/Support/Npy.h"
#include "attn/Target/CpuTarget.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <initializer_list>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <unistd.h>

using namespace mlir;
using namespace mlir::attn;

namespace {

//===----------------------------------------------------------------------===//
// Sweep parameters
//===----------------------------------------------------------------------===//

constexpr uint64_t kDefaultSeed = 0x5eed2024;
constexpr int kDefaultCases = 232;

/// Forms every case is compiled with: all of them, so that every form is
/// checked against the reference on the same specs in every run (select a
/// subset with ATTN_SWEEP_FORMS=naive,fused,decode). `FORM@CPU` compiles the
/// form for that LLVM CPU instead of the host: the fused form also runs as
/// AVX2 code (haswell: 6 x 16 register tiles, 8 lanes) and as the x86-64
/// baseline (SSE2: 4 lanes), which any x86-64 host can run, so the register
/// tiles of other targets are checked on every machine. `FORM+bf16dot`
/// compiles it with bf16-dot-products (the AVX-512 BF16 kernels): it takes
/// the bf16 cases on hosts with AVX-512 BF16 whose default is not already
/// those kernels (Intel; AMX hosts run them without AMX) and skips the
/// others (on AMD Zen 4 the plain form runs them).
/// `FORM+nodot` compiles it with neither those nor AMX (bf16 converted to
/// f32 for the host's f32 kernels): it takes the bf16 cases on hosts whose
/// default is one of them (AMD Zen 4, AMX hosts), where the plain form does
/// not run the conversion, and the f16 cases on AMX hosts (whose default
/// splits f16 into bf16 parts for AMX), and skips the others.
const std::vector<std::string> kDefaultForms = {
    "naive",        "fused",         "decode",     "fused@haswell",
    "fused@x86-64", "fused+bf16dot", "fused+nodot"};

/// A sweep form: `FORM[+bf16dot|+nodot][@CPU]`.
struct SweepForm {
  std::string form, cpu; // cpu empty: the host
  bool bf16Dot = false, noDot = false;
};

SweepForm parseForm(std::string form) {
  SweepForm f;
  size_t at = form.find('@');
  if (at != std::string::npos) {
    f.cpu = form.substr(at + 1);
    form = form.substr(0, at);
  }
  auto dropSuffix = [&](const std::string &suffix) {
    if (form.size() <= suffix.size() ||
        form.compare(form.size() - suffix.size(), suffix.size(), suffix) != 0)
      return false;
    form.resize(form.size() - suffix.size());
    return true;
  };
  f.bf16Dot = dropSuffix("+bf16dot");
  f.noDot = !f.bf16Dot && dropSuffix("+nodot");
  f.form = form;
  return f;
}

/// Whether `form` is expected to compile a spec; cases it does not take are
/// skipped (reported as skipped, never as passed). Every form takes every
/// spec today; restrict here if a form is specialized (for example a decode
/// form that only handles Nq = 1), never by weakening the comparison.
/// Whether this host can run it (and, for `+bf16dot`, whether the case is
/// bf16) are the only conditions.
struct Config;
bool formSupports(const std::string &form, const Config &c);

std::optional<std::string> getEnv(const char *name) {
  const char *v = std::getenv(name);
  if (!v || !*v)
    return std::nullopt;
  return std::string(v);
}

std::vector<std::string> splitList(const std::string &s) {
  std::vector<std::string> parts;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty())
      parts.push_back(item);
  return parts;
}

uint64_t sweepSeed() {
  if (auto s = getEnv("ATTN_SWEEP_SEED"))
    return std::strtoull(s->c_str(), nullptr, 0);
  return kDefaultSeed;
}

int sweepCaseCount() {
  if (auto s = getEnv("ATTN_SWEEP_CASES"))
    return std::max(0, std::atoi(s->c_str()));
  return kDefaultCases;
}

/// True when ATTN_SWEEP_CASE selects individual cases.
bool singleCases() { return getEnv("ATTN_SWEEP_CASE").has_value(); }

std::vector<int> sweepCaseIndices() {
  std::vector<int> indices;
  if (auto s = getEnv("ATTN_SWEEP_CASE")) {
    for (const std::string &p : splitList(*s)) {
      int i = std::atoi(p.c_str());
      if (std::find(indices.begin(), indices.end(), i) == indices.end())
        indices.push_back(i);
    }
    return indices;
  }
  for (int i = 0, n = sweepCaseCount(); i < n; ++i)
    indices.push_back(i);
  return indices;
}

std::vector<std::string> sweepForms() {
  if (auto s = getEnv("ATTN_SWEEP_FORMS"))
    return splitList(*s);
  return kDefaultForms;
}

//===----------------------------------------------------------------------===//
// Case configuration
//===----------------------------------------------------------------------===//

enum class DType { F32, F16, BF16 };
enum class CausalKind { None, TopLeft, BottomRight };
/// The user's regions the sweep writes (FlexAttention-style variants).
enum class MaskModKind {
  None,
  Document,  // ids[i] == ids[j] over random segment ids (mod_inputs)
  PrefixLM,  // j < prefix or j <= i
  Dilated,   // i - j in [0, w] and (i - j) % d == 0
  SeqParity, // (b + j) % 2 == 0 or j + 2 >= i: reads the batch index
};
enum class ScoreModKind {
  None,
  RelativeBias, // s + table[h, clamp(j - i + maxd, 0, 2 maxd)] (mod_inputs)
  TanhCap,      // cap * tanh(s / cap)
};

const char *dtypeName(DType t) {
  switch (t) {
  case DType::F32:
    return "f32";
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  }
  return "f32";
}

ElementKind dtypeKind(DType t) {
  switch (t) {
  case DType::F32:
    return ElementKind::F32;
  case DType::F16:
    return ElementKind::F16;
  case DType::BF16:
    return ElementKind::BF16;
  }
  return ElementKind::F32;
}

/// Everything that defines one case. Sizes are logical; `bnhd` says how q, k,
/// v and out are stored.
struct Config {
  uint64_t sweepSeed = 0, caseSeed = 0;
  int index = 0;
  int rep = 0; // index / number of scenarios: the repetition of the scenario
  std::string scenario;

  bool projected = false;   // attn.projected_attention instead of attention
  bool crossSource = false; // projected: a kv_source operand (Nk != Nq)
  DType dtype = DType::F32;
  bool bnhd = false;
  int64_t B = 1, Hq = 1, Hkv = 1, Nq = 1, Nk = 1, Dqk = 1, Dv = 1;
  int64_t D = 4; // projected: model dimension

  CausalKind causal = CausalKind::None;
  std::optional<int64_t> windowLeft, windowRight;
  bool kvLen = false, kvLenI64 = false;
  bool kvLenEdges = false;                  // kv_len[0] = 0 and kv_len[1] = Nk
  bool kvStart = false, kvStartI64 = false; // left padding
  bool keyMask = false;                     // [B, Nk] key-padding mask
  int maskRank = 0;                         // 0: no mask, else 1..4
  std::array<bool, 4> maskBcast{}; // per logical dim [B, Hq, Nq, Nk]: size 1
  double maskDensity = 0.8;
  bool maskEmptyRow = false; // one mask row all false
  int biasRank = 0;
  std::array<bool, 4> biasBcast{};
  DType biasType = DType::F32;
  bool biasNegInf = false; // some -inf entries (never a whole row)
  bool alibi = false;
  bool sink = false; // attention sinks (softmax only)
  std::optional<double> scale, softcap;
  /// The scale as a run-time operand, `scale(%scale : tensor<f32>)` (half
  /// the cases with an explicit scale, by the case seed's bit 7).
  bool scaleOperand() const { return scale && (caseSeed >> 7) % 2; }
  bool sigmoid = false;
  bool lse = false;
  /// Dynamic sizes by name (B, Hq, Hkv, Nq, Nk, Dqk, Dv; projected: B, Nq,
  /// Nk, D, W for the head side of the weights): 1 = `?` everywhere, 2 = `?`
  /// at a random subset of its occurrences (mixed static and dynamic types).
  std::map<std::string, int> dyn;
  double amplitude = 1.0; // range of q and k values

  // score_mod / mask_mod regions and align() without causal.
  MaskModKind maskMod = MaskModKind::None;
  bool docI64 = false;                 // document ids as i64 (else i32)
  int64_t prefix = 0;                  // PrefixLM
  int64_t dilWindow = 0, dilation = 1; // Dilated
  ScoreModKind scoreMod = ScoreModKind::None;
  int64_t maxDist = 1; // RelativeBias: table [Hq, 2 maxDist + 1]
  double modCap = 1.0; // TanhCap
  bool alignBottomRight = false;

  // Paged K/V: k and v are pools of `pages` pages of `pageSize` tokens read
  // through a [B, maxPages] page table (Nk = maxPages * pageSize); the
  // lengths are fixed with the configuration so that the pool can be sized
  // to them (exactly, for the "whole pool" edge case).
  bool paged = false, pageTableI64 = false;
  int64_t pageSize = 1, maxPages = 1, pages = 1;
  std::vector<int64_t> pagedLens;

  // Ragged batches: `cuQ.size() - 1` sequences packed along N of B = 1
  // tensors (Nq and Nk are the packed token counts). With `paged` (chunked
  // prefill) there are no key offsets: the page table has a row and
  // `pagedLens` an entry per sequence, and Nk is maxPages * pageSize.
  bool ragged = false, cuI64 = false;
  std::vector<int64_t> cuQ, cuK;
  // Latent attention: no v argument, V is k's first Dv columns (v_from_k).
  bool latent = false;
  // Quantized K/V: an i8 / fp8 cache with f32 scales per token and head, or
  // (per tensor) per page / batch entry and head.
  enum class Quant { None, I8, E4M3, E5M2 } quant = Quant::None;
  bool kScalePerBlock = false, vScalePerBlock = false;
  /// Rows of the page table and entries of kv_len: B, or the sequences.
  int64_t seqRows() const {
    return ragged ? static_cast<int64_t>(cuQ.size()) - 1 : B;
  }
};

/// `FORM@CPU` is skipped on a host that cannot run code for that CPU (a
/// non-x86 host, or one without AVX2 for `@haswell`), never failed;
/// `FORM+bf16dot` on cases that are not bf16, a host without AVX-512 BF16 or
/// one whose default takes them.
bool formSupports(const std::string &form, const Config &c) {
  static std::map<std::string, bool> runnable;
  SweepForm f = parseForm(form);
  if (f.bf16Dot) {
    // Where the host's default already is the dot products (AMD Zen 4
    // without AMX), the plain form runs them: the case would be compiled
    // and checked twice.
    static bool hostNeedsDot = [] {
      mlir::attn::CpuTarget host = mlir::attn::getHostCpuTarget();
      bool byDefault =
          !host.amxBf16 && mlir::attn::usesBf16DotProducts(
                               host, mlir::attn::Bf16DotProducts::Auto);
      return host.avx512bf16 && !byDefault;
    }();
    if (c.dtype != DType::BF16 || !hostNeedsDot)
      return false;
  }
  if (f.noDot) {
    static bool hostDefaultNative = [] {
      mlir::attn::CpuTarget host = mlir::attn::getHostCpuTarget();
      return host.amxBf16 || mlir::attn::usesBf16DotProducts(
                                 host, mlir::attn::Bf16DotProducts::Auto);
    }();
    // f16 takes AMX too (split into bf16 parts): on AMX hosts `+nodot`
    // also checks f16 on the f32 kernels.
    static bool hostAmx = mlir::attn::getHostCpuTarget().amxBf16;
    bool native = c.dtype == DType::BF16 || (c.dtype == DType::F16 && hostAmx);
    if (!native || !hostDefaultNative)
      return false;
  }
  std::string cpu = f.cpu;
  if (cpu.empty())
    return true;
  auto it = runnable.find(cpu);
  if (it != runnable.end())
    return it->second;
  auto target = mlir::attn::resolveCpuTarget(cpu);
  bool ok = static_cast<bool>(target) &&
            mlir::attn::featuresMissingOnHost(*target).empty();
  if (!target)
    llvm::consumeError(target.takeError());
  return runnable[cpu] = ok;
}

using Rng = std::mt19937_64;

uint64_t splitmix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

bool chance(Rng &rng, double p) {
  return std::uniform_real_distribution<double>(0, 1)(rng) < p;
}

template <typename T> T pick(Rng &rng, std::initializer_list<T> values) {
  std::uniform_int_distribution<size_t> d(0, values.size() - 1);
  return *(values.begin() + d(rng));
}

int64_t uniformInt(Rng &rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

const std::initializer_list<int64_t> kSeqLens = {1,  2,  3,  5,  7,  8, 13,
                                                 16, 17, 31, 37, 64, 65};
const std::initializer_list<int64_t> kOddSizes = {1, 7, 13, 37, 65};
const std::initializer_list<int64_t> kHeadDims = {1, 2, 3, 4, 7, 8, 13, 16, 32};
const std::initializer_list<int64_t> kWindows = {0, 1, 2, 3, 5, 8, 16};

void setGroups(Config &c, int64_t hkv, int64_t r) {
  c.Hkv = hkv;
  c.Hq = hkv * r;
}

void randomWindow(Rng &rng, Config &c, int which) {
  if (which != 1)
    c.windowLeft = pick(rng, kWindows);
  if (which != 0)
    c.windowRight = pick(rng, kWindows);
}

void randomMask(Rng &rng, Config &c, int rank) {
  c.maskRank = rank;
  for (int d = 0; d < 4; ++d)
    c.maskBcast[d] = d >= 4 - rank && chance(rng, 0.3);
  c.maskDensity = pick(rng, {0.5, 0.8, 0.95});
}

void randomBias(Rng &rng, Config &c, int rank, DType type) {
  c.biasRank = rank;
  for (int d = 0; d < 4; ++d)
    c.biasBcast[d] = d >= 4 - rank && chance(rng, 0.3);
  c.biasType = type;
}

/// The random part of a case: every feature with a moderate probability.
void randomBase(Rng &rng, Config &c) {
  double t = std::uniform_real_distribution<double>(0, 1)(rng);
  c.dtype = t < 0.6 ? DType::F32 : (t < 0.8 ? DType::F16 : DType::BF16);
  c.bnhd = chance(rng, 0.3);
  c.B = pick<int64_t>(rng, {1, 2, 3});
  setGroups(c, pick<int64_t>(rng, {1, 2, 3}), pick<int64_t>(rng, {1, 2, 4, 8}));
  c.Nq = pick(rng, kSeqLens);
  c.Nk = chance(rng, 0.5) ? c.Nq : pick(rng, kSeqLens);
  c.Dqk = pick(rng, kHeadDims);
  c.Dv = chance(rng, 0.6) ? c.Dqk : pick(rng, kHeadDims);
  c.D = pick<int64_t>(rng, {4, 6, 8, 12, 16});
  t = std::uniform_real_distribution<double>(0, 1)(rng);
  c.causal = t < 0.6
                 ? CausalKind::None
                 : (t < 0.8 ? CausalKind::TopLeft : CausalKind::BottomRight);
  if (chance(rng, 0.2))
    randomWindow(rng, c, static_cast<int>(uniformInt(rng, 0, 2)));
  if (chance(rng, 0.2)) {
    c.kvLen = true;
    c.kvLenI64 = chance(rng, 0.5);
    c.kvLenEdges = chance(rng, 0.5);
  }
  if (chance(rng, 0.15)) {
    c.kvStart = true;
    c.kvStartI64 = chance(rng, 0.5);
  }
  c.keyMask = chance(rng, 0.12);
  if (chance(rng, 0.2)) {
    randomMask(rng, c, static_cast<int>(uniformInt(rng, 1, 4)));
    c.maskEmptyRow = chance(rng, 0.3);
  }
  if (chance(rng, 0.2))
    randomBias(rng, c, static_cast<int>(uniformInt(rng, 1, 4)),
               pick(rng, {DType::F32, DType::F16, c.dtype}));
  c.alibi = chance(rng, 0.1);
  c.sink = chance(rng, 0.1);
  if (chance(rng, 0.2))
    c.scale = pick(rng, {0.1, 0.5, 1.0, 2.0});
  if (chance(rng, 0.1))
    c.softcap = pick(rng, {1.0, 2.5, 10.0, 30.0});
  c.sigmoid = chance(rng, 0.1);
  c.lse = chance(rng, 0.4);
  if (chance(rng, 0.2))
    for (const char *n : {"B", "Hq", "Hkv", "Nq", "Nk", "Dqk", "Dv"})
      if (chance(rng, 0.5))
        c.dyn[n] = static_cast<int>(uniformInt(rng, 1, 2));
  c.amplitude = pick(rng, {1.0, 1.0, 2.0, 4.0});
}

void makeProjected(Rng &rng, Config &c, bool cross, bool dynamic = false) {
  c.projected = true;
  c.crossSource = cross;
  c.Hkv = pick<int64_t>(rng, {1, 2});
  c.Hq = c.Hkv * pick<int64_t>(rng, {1, 2, 4});
  c.Dqk = pick<int64_t>(rng, {1, 2, 3, 4, 8});
  c.Dv = chance(rng, 0.5) ? c.Dqk : pick<int64_t>(rng, {1, 2, 5, 8});
  if (cross) {
    while (c.Nk == c.Nq)
      c.Nk = pick(rng, kSeqLens);
  }
  c.dyn.clear();
  if (dynamic || chance(rng, 0.3))
    for (const char *n : {"B", "Nq", "Nk", "D", "W"})
      if (chance(rng, dynamic ? 0.8 : 0.5))
        c.dyn[n] = static_cast<int>(uniformInt(rng, 1, 2));
}

/// Paged K/V with kv_len edge cases: an empty sequence, one that fills the
/// whole table, one that ends exactly on a page boundary, and the pool
/// either exactly as large as the pages the sequences use (the whole pool)
/// or with spare pages. `decode`: one query per sequence, bottom-right.
/// `pageSize`: that page size instead of a random one.
void makePaged(Rng &rng, Config &c, bool decode, int64_t pageSize = 0) {
  c.paged = true;
  c.projected = false;
  c.pageTableI64 = chance(rng, 0.3);
  // Even repetitions: lse, an empty sequence, the pool used whole; odd ones:
  // bnhd pools and page sizes that are not powers of two.
  bool even = c.rep % 2 == 0;
  c.pageSize = even ? pick<int64_t>(rng, {1, 2, 4, 8, 16})
                    : pick<int64_t>(rng, {3, 5, 6});
  if (pageSize)
    c.pageSize = pageSize;
  if (even) {
    c.sigmoid = false;
    c.lse = true;
  } else {
    c.bnhd = true;
  }
  if (decode) {
    c.Nq = 1;
    c.causal = CausalKind::BottomRight;
    c.Nk = pick<int64_t>(rng, {16, 37, 64, 100});
  }
  c.maxPages = std::max<int64_t>(2, (c.Nk + c.pageSize - 1) / c.pageSize);
  c.Nk = c.maxPages * c.pageSize;
  c.B = pick<int64_t>(rng, {3, 4});
  c.kvLen = true;
  c.kvLenI64 = chance(rng, 0.5);
  c.kvLenEdges = false;
  c.pagedLens.assign(c.B, 0);
  for (int64_t b = 0; b < c.B; ++b) {
    switch (b) {
    case 0:
      c.pagedLens[b] = even ? 0 : uniformInt(rng, 0, c.Nk);
      break;
    case 1:
      c.pagedLens[b] = c.Nk;
      break;
    case 2:
      c.pagedLens[b] =
          uniformInt(rng, 1, std::max<int64_t>(c.maxPages - 1, 1)) * c.pageSize;
      break;
    default:
      c.pagedLens[b] = uniformInt(rng, 0, c.Nk);
    }
  }
  std::shuffle(c.pagedLens.begin(), c.pagedLens.end(), rng);
  c.pages = 0;
  for (int64_t len : c.pagedLens)
    c.pages += (len + c.pageSize - 1) / c.pageSize;
  c.pages += even ? 0 : pick<int64_t>(rng, {0, 1, 3});
  c.pages = std::max<int64_t>(c.pages, 1);
  for (const char *n : {"P", "MaxPages"})
    if (chance(rng, 0.2))
      c.dyn[n] = static_cast<int>(uniformInt(rng, 1, 2));
}

/// Sorted offsets of `seqs` sequences in `tokens` tokens: repeated cuts are
/// empty sequences; sometimes rows before the first or after the last
/// sequence belong to none.
std::vector<int64_t> randomCuts(Rng &rng, int64_t seqs, int64_t tokens) {
  std::vector<int64_t> cu(seqs + 1);
  for (int64_t &x : cu)
    x = uniformInt(rng, 0, tokens);
  std::sort(cu.begin(), cu.end());
  if (chance(rng, 0.7))
    cu.front() = 0;
  if (chance(rng, 0.7))
    cu.back() = tokens;
  return cu;
}

/// A ragged batch: 1 to 5 sequences of random lengths (some empty), packed.
/// `withModifiers`: kv_len per sequence, masks and biases by packed rows and
/// regions (one reads the sequence as b) as the random base has them.
void makeRagged(Rng &rng, Config &c, bool withModifiers = false) {
  c.ragged = true;
  c.keyMask = false; // packed keys: a mask by packed rows instead
  c.projected = false;
  c.cuI64 = chance(rng, 0.5);
  int64_t seqs = c.rep % 2 == 0 ? pick<int64_t>(rng, {2, 3, 5})
                                : pick<int64_t>(rng, {1, 2, 3, 5});
  c.B = 1;
  c.Nq = pick<int64_t>(rng, {0, 5, 17, 40, 64, 97});
  c.Nk = chance(rng, 0.5) ? c.Nq : pick<int64_t>(rng, {3, 17, 40, 64, 97});
  c.cuQ = randomCuts(rng, seqs, c.Nq);
  c.cuK = randomCuts(rng, seqs, c.Nk);
  // Every other repetition forces the edge cases: an empty sequence, lse and
  // the chunked-prefill diagonal, or rows after the last sequence and the
  // bnhd layout.
  if (c.rep % 2 == 0) {
    c.sigmoid = false;
    c.lse = true;
    c.causal = CausalKind::BottomRight;
    c.cuQ[1] = c.cuQ[0];
  } else {
    c.bnhd = true;
    c.Nq = std::max<int64_t>(c.Nq, 5);
    c.cuQ = randomCuts(rng, seqs, c.Nq - 2);
  }
  c.kvLenEdges = false;
  if (withModifiers) {
    // Even repetitions: kv_len and a mask_mod reading the sequence; odd
    // ones: a mask or bias and a score_mod (random others on top).
    bool even = c.rep % 2 == 0;
    c.kvLen = even || chance(rng, 0.5);
    c.kvLenI64 = chance(rng, 0.5);
    c.kvStart = !even || chance(rng, 0.3);
    // Document ids index by i and j, which a ragged batch's sequences
    // restart: the parity mask reads the sequence instead.
    if (even || c.maskMod == MaskModKind::Document)
      c.maskMod = MaskModKind::SeqParity;
    if (c.maskMod == MaskModKind::PrefixLM)
      c.prefix = uniformInt(rng, 0, 8);
    if (!even && !c.maskRank && !c.biasRank)
      c.maskRank = pick<int>(rng, {2, 4});
    if (!even && c.scoreMod == ScoreModKind::None) {
      c.scoreMod =
          pick(rng, {ScoreModKind::RelativeBias, ScoreModKind::TanhCap});
      c.maxDist = pick<int64_t>(rng, {1, 4});
      c.modCap = pick(rng, {2.5, 10.0});
    }
  } else {
    c.kvLen = c.kvStart = false;
    c.maskRank = c.biasRank = 0;
    c.maskEmptyRow = c.biasNegInf = false;
    c.maskMod = MaskModKind::None;
    c.scoreMod = ScoreModKind::None;
  }
  for (const char *n : {"B", "Nq", "Nk"})
    if (chance(rng, 0.3))
      c.dyn[n] = static_cast<int>(uniformInt(rng, 1, 2));
}

/// Chunked prefill: a ragged batch of 1 to 4 sequences whose new queries
/// read their cached pages (the new tokens included) through a page table
/// row each, bottom-right causal on each sequence's diagonal; lengths with
/// edge cases (the new tokens only, a page boundary, the whole table).
void makeChunkedPrefill(Rng &rng, Config &c) {
  makePaged(rng, c, false);
  c.ragged = true;
  c.keyMask = false; // packed keys: a mask by packed rows instead
  c.cuI64 = chance(rng, 0.5);
  int64_t seqs = pick<int64_t>(rng, {1, 2, 3, 4});
  c.B = 1;
  c.Nq = pick<int64_t>(rng, {3, 17, 40, 64});
  c.cuQ = randomCuts(rng, seqs, c.Nq);
  c.cuK.clear();
  c.causal = chance(rng, 0.8) ? CausalKind::BottomRight : CausalKind::None;
  c.maskMod = MaskModKind::None;
  c.scoreMod = ScoreModKind::None;
  c.maskEmptyRow = c.biasNegInf = false;
  if (chance(rng, 0.7))
    c.maskRank = c.biasRank = 0;
  c.pagedLens.assign(seqs, 0);
  for (int64_t s = 0; s < seqs; ++s) {
    int64_t fresh = c.cuQ[s + 1] - c.cuQ[s];
    int64_t len = std::min(c.Nk, fresh + uniformInt(rng, 0, c.Nk));
    switch (uniformInt(rng, 0, 5)) {
    case 0:
      len = std::min(fresh, c.Nk);
      break;
    case 1:
      len = c.Nk;
      break;
    case 2:
      len = (len / c.pageSize) * c.pageSize;
      break;
    default:
      break;
    }
    c.pagedLens[s] = len;
  }
  c.pages = 0;
  for (int64_t len : c.pagedLens)
    c.pages += (len + c.pageSize - 1) / c.pageSize;
  c.pages = std::max<int64_t>(c.pages + pick<int64_t>(rng, {0, 2}), 1);
  c.dyn.erase("B");
}

/// Latent attention (DeepSeek's MLA, absorbed): MQA over one latent head
/// whose first Dv columns are V; dense or paged, decode or prefill.
void makeLatent(Rng &rng, Config &c) {
  // Odd repetitions: over a paged cache.
  if (c.rep % 2 == 1)
    makePaged(rng, c, chance(rng, 0.5));
  c.latent = true;
  c.projected = false;
  c.Hkv = 1;
  c.Hq = pick<int64_t>(rng, {1, 4, 8, 16});
  c.Dqk = pick<int64_t>(rng, {2, 8, 13, 16, 32, 64});
  c.Dv = c.rep % 2 == 0 ? c.Dqk - 1 : uniformInt(rng, 1, c.Dqk);
  c.Dv = std::max<int64_t>(c.Dv, 1);
  for (const char *n : {"Hkv", "Dqk", "Dv"})
    c.dyn.erase(n);
}

/// A quantized cache over a dense, paged, ragged or latent cache; the
/// structure, the type (int8, e4m3, e5m2) and the scale granularity cycle
/// with the repetition so that a few cases cover every pairing that matters.
void makeQuantized(Rng &rng, Config &c) {
  c.projected = false;
  switch (c.rep % 4) {
  case 1:
    makePaged(rng, c, chance(rng, 0.5));
    break;
  case 2:
    makeRagged(rng, c, chance(rng, 0.5));
    break;
  case 3:
    makeLatent(rng, c);
    break;
  default:
    break;
  }
  c.quant = std::array<Config::Quant, 3>{Config::Quant::I8, Config::Quant::E4M3,
                                         Config::Quant::E5M2}[c.rep % 3];
  c.kScalePerBlock = c.rep % 2 == 1 || chance(rng, 0.25);
  c.vScalePerBlock = c.rep % 4 == 0 || chance(rng, 0.25);
}

/// Shapes of whole pairs of registers (Dqk a multiple of 32, key tiles of 64
/// or more) in `type`: the AVX-512 BF16 or AMX kernels where the host has
/// them, the last partial key tile on the f32 kernel; `paged`: through a
/// paged cache whose pages hold whole registers of keys.
void pairShapes(Rng &r, Config &c, DType type, bool paged) {
  c.dtype = type;
  c.Dqk = pick<int64_t>(r, {32, 64});
  c.Dv = pick<int64_t>(r, {32, 64});
  c.Nq = pick<int64_t>(r, {64, 100});
  if (!paged) {
    c.Nk = pick<int64_t>(r, {64, 97, 160});
    return;
  }
  c.Nk = pick<int64_t>(r, {64, 160});
  makePaged(r, c, false, pick<int64_t>(r, {16, 32, 64}));
}

/// One forced feature per case index: row `i % size` of this table is
/// applied on top of the random base of case `i`.
struct Scenario {
  const char *name;
  std::function<void(Rng &, Config &)> apply;
};

const std::vector<Scenario> &scenarios() {
  static const std::vector<Scenario> table = {
      {"mha",
       [](Rng &r, Config &c) {
         setGroups(c, pick<int64_t>(r, {1, 2, 4}), 1);
       }},
      {"gqa_r2",
       [](Rng &r, Config &c) {
         setGroups(c, pick<int64_t>(r, {1, 2, 3}), 2);
       }},
      {"gqa_r4",
       [](Rng &r, Config &c) {
         setGroups(c, pick<int64_t>(r, {1, 2}), 4);
       }},
      {"gqa_r8",
       [](Rng &r, Config &c) {
         setGroups(c, pick<int64_t>(r, {1, 2}), 8);
       }},
      {"mqa",
       [](Rng &r, Config &c) {
         setGroups(c, 1, pick<int64_t>(r, {2, 3, 5, 8}));
       }},
      {"cross_nq_ne_nk",
       [](Rng &r, Config &c) {
         c.Nq = pick<int64_t>(r, {1, 3, 7, 13});
         c.Nk = pick<int64_t>(r, {17, 37, 65});
         if (chance(r, 0.3))
           std::swap(c.Nq, c.Nk);
       }},
      {"causal_top_left",
       [](Rng &r, Config &c) {
         c.causal = CausalKind::TopLeft;
         c.Nk = pick<int64_t>(r, {c.Nq, 5, 37});
       }},
      {"causal_bottom_right",
       [](Rng &r, Config &c) {
         c.causal = CausalKind::BottomRight;
         c.Nq = pick<int64_t>(r, {1, 3, 7, 13, 37});
         c.Nk = pick<int64_t>(r, {3, 13, 37, 65});
       }},
      {"window_left",
       [](Rng &r, Config &c) {
         c.windowRight.reset();
         c.windowLeft = pick(r, kWindows);
       }},
      {"window_right",
       [](Rng &r, Config &c) {
         c.windowLeft.reset();
         c.windowRight = pick(r, kWindows);
       }},
      {"window_both", [](Rng &r, Config &c) { randomWindow(r, c, 2); }},
      {"window_causal",
       [](Rng &r, Config &c) {
         randomWindow(r, c, static_cast<int>(uniformInt(r, 0, 2)));
         c.causal =
             chance(r, 0.5) ? CausalKind::TopLeft : CausalKind::BottomRight;
       }},
      {"kv_len_edges",
       [](Rng &r, Config &c) {
         c.kvLen = true;
         c.kvLenI64 = chance(r, 0.5);
         c.kvLenEdges = true;
         c.lse = !c.sigmoid;
       }},
      {"kv_len_causal_bottom_right",
       [](Rng &r, Config &c) {
         c.kvLen = true;
         c.kvLenI64 = chance(r, 0.5);
         c.causal = CausalKind::BottomRight;
         c.Nq = pick<int64_t>(r, {2, 5, 13});
         c.Nk = pick<int64_t>(r, {7, 16, 37});
       }},
      {"left_padding",
       [](Rng &r, Config &c) {
         c.kvStart = true;
         c.kvStartI64 = chance(r, 0.5);
         c.causal = chance(r, 0.7) ? CausalKind::TopLeft
                                   : CausalKind::BottomRight;
         c.B = std::max<int64_t>(c.B, 2);
         c.lse = !c.sigmoid;
       }},
      {"key_padding_mask",
       [](Rng &r, Config &c) {
         c.keyMask = true;
         c.B = std::max<int64_t>(c.B, 2);
         c.lse = !c.sigmoid;
         if (chance(r, 0.5))
           c.causal = CausalKind::BottomRight;
       }},
      {"decode",
       [](Rng &r, Config &c) {
         c.Nq = 1;
         c.Nk = pick<int64_t>(r, {1, 13, 65});
         c.kvLen = true;
         c.causal = CausalKind::BottomRight;
         c.lse = !c.sigmoid;
       }},
      {"mask_rank2", [](Rng &r, Config &c) { randomMask(r, c, 2); }},
      {"mask_rank3", [](Rng &r, Config &c) { randomMask(r, c, 3); }},
      {"mask_rank4", [](Rng &r, Config &c) { randomMask(r, c, 4); }},
      {"mask_empty_row",
       [](Rng &r, Config &c) {
         randomMask(r, c, static_cast<int>(uniformInt(r, 2, 4)));
         c.maskBcast[2] = c.maskBcast[3] = false;
         c.maskEmptyRow = true;
         c.sigmoid = false;
         c.lse = true;
       }},
      {"bias_f32",
       [](Rng &r, Config &c) {
         randomBias(r, c, static_cast<int>(uniformInt(r, 1, 4)), DType::F32);
       }},
      {"bias_f16",
       [](Rng &r, Config &c) {
         randomBias(r, c, static_cast<int>(uniformInt(r, 1, 4)), DType::F16);
       }},
      {"bias_neg_inf",
       [](Rng &r, Config &c) {
         randomBias(r, c, 4, pick(r, {DType::F32, DType::F16}));
         c.biasBcast[3] = false;
         c.biasNegInf = true;
         // Nothing else masks (see makeConfig), so that the -inf entries
         // are kept whatever the random base.
         c.kvLen = false;
         c.maskRank = 0;
         c.causal = CausalKind::None;
         c.windowLeft.reset();
         c.windowRight.reset();
       }},
      {"alibi", [](Rng &r, Config &c) { c.alibi = true; }},
      {"sink",
       [](Rng &r, Config &c) {
         c.sink = true;
         c.sigmoid = false;
         c.lse = chance(r, 0.7);
       }},
      {"softcap",
       [](Rng &r, Config &c) {
         c.softcap = pick(r, {1.0, 2.5, 10.0});
         c.amplitude = 4.0;
       }},
      {"sigmoid", [](Rng &r, Config &c) { c.sigmoid = true; }},
      {"lse",
       [](Rng &r, Config &c) {
         c.sigmoid = false;
         c.lse = true;
       }},
      {"bnhd", [](Rng &r, Config &c) { c.bnhd = true; }},
      {"f16", [](Rng &r, Config &c) { c.dtype = DType::F16; }},
      {"bf16", [](Rng &r, Config &c) { c.dtype = DType::BF16; }},
      // bf16 with whole pairs of registers (Dqk a multiple of 32, key tiles
      // of 64 or more): the AVX-512 BF16 kernels where the host has them,
      // with the last partial key tile on the f32 kernel.
      {"bf16_pairs",
       [](Rng &r, Config &c) { pairShapes(r, c, DType::BF16, false); }},
      // The same through a paged cache: pages of whole registers of keys
      // (pairs of K packed page by page; single-page tiles of 64 keys also
      // take the paired P V in place).
      {"bf16_paged_pairs",
       [](Rng &r, Config &c) { pairShapes(r, c, DType::BF16, true); }},
      // f16 in the same shapes: on AMX hosts whole tiles split each value
      // into two bf16 for the tile products (docs/Targets.md).
      {"f16_pairs",
       [](Rng &r, Config &c) { pairShapes(r, c, DType::F16, false); }},
      {"f16_paged_pairs",
       [](Rng &r, Config &c) { pairShapes(r, c, DType::F16, true); }},
      {"dynamic_all",
       [](Rng &r, Config &c) {
         for (const char *n : {"B", "Hq", "Hkv", "Nq", "Nk", "Dqk", "Dv"})
           c.dyn[n] = 1;
       }},
      {"dynamic_mixed",
       [](Rng &r, Config &c) {
         for (const char *n : {"B", "Hq", "Hkv", "Nq", "Nk", "Dqk", "Dv"})
           c.dyn[n] = chance(r, 0.7) ? 2 : 0;
       }},
      {"odd_sizes",
       [](Rng &r, Config &c) {
         c.Nq = pick(r, kOddSizes);
         c.Nk = pick(r, kOddSizes);
         c.Dqk = pick<int64_t>(r, {1, 7, 13});
         c.Dv = pick<int64_t>(r, {1, 7, 13});
       }},
      {"everything",
       [](Rng &r, Config &c) {
         c.kvLen = true;
         randomMask(r, c, static_cast<int>(uniformInt(r, 2, 4)));
         randomBias(r, c, static_cast<int>(uniformInt(r, 1, 4)),
                    pick(r, {DType::F32, DType::F16}));
         c.alibi = true;
         c.sink = !c.sigmoid;
         c.causal =
             chance(r, 0.5) ? CausalKind::TopLeft : CausalKind::BottomRight;
         randomWindow(r, c, 2);
         c.scale = 0.5;
         c.softcap = 5.0;
         c.lse = !c.sigmoid;
       }},
      {"projected_self",
       [](Rng &r, Config &c) {
         makeProjected(r, c, false);
         // Every element type within the first three repetitions.
         c.dtype = std::array<DType, 3>{DType::F32, DType::F16,
                                        DType::BF16}[c.rep % 3];
       }},
      {"projected_cross", [](Rng &r, Config &c) { makeProjected(r, c, true); }},
      {"projected_dynamic",
       [](Rng &r, Config &c) { makeProjected(r, c, chance(r, 0.5), true); }},
      // User variants: score_mod / mask_mod regions, align() without causal.
      {"document_mask",
       [](Rng &r, Config &c) {
         if (chance(r, 0.25))
           makeProjected(r, c, false);
         c.Nk = c.Nq;
         c.maskMod = MaskModKind::Document;
         // Alternate by repetition so that every sweep of at least four
         // repetitions has i32 and i64 ids, of static and dynamic length.
         c.docI64 = c.rep % 2 == 1;
         if ((c.rep / 2) % 2 == 0)
           c.dyn["Nq"] = 1;
         c.lse = !c.sigmoid && !c.projected;
       }},
      {"prefix_lm",
       [](Rng &r, Config &c) {
         c.causal = CausalKind::None;
         c.maskMod = MaskModKind::PrefixLM;
         c.prefix = uniformInt(r, 0, c.Nk);
       }},
      {"dilated_window",
       [](Rng &r, Config &c) {
         c.causal = CausalKind::None;
         c.maskMod = MaskModKind::Dilated;
         c.dilWindow = pick<int64_t>(r, {0, 2, 4, 8, 16});
         c.dilation = pick<int64_t>(r, {1, 2, 3});
       }},
      {"relative_bias",
       [](Rng &r, Config &c) {
         c.scoreMod = ScoreModKind::RelativeBias;
         c.maxDist = pick<int64_t>(r, {1, 2, 4, 8});
       }},
      {"tanh_softcap_mod",
       [](Rng &r, Config &c) {
         c.scoreMod = ScoreModKind::TanhCap;
         c.modCap = pick(r, {1.0, 2.5, 10.0});
         c.amplitude = 4.0;
         if (chance(r, 0.4)) {
           c.causal = CausalKind::None;
           c.maskMod = MaskModKind::PrefixLM;
           c.prefix = uniformInt(r, 0, c.Nk);
         }
       }},
      {"align_bottom_right_window",
       [](Rng &r, Config &c) {
         c.causal = CausalKind::None;
         c.alignBottomRight = true;
         c.Nq = pick<int64_t>(r, {1, 3, 7, 13});
         c.Nk = pick<int64_t>(r, {17, 37, 65});
         if (chance(r, 0.2))
           std::swap(c.Nq, c.Nk);
         c.kvLen = true;
         c.kvLenI64 = chance(r, 0.5);
         randomWindow(r, c, static_cast<int>(uniformInt(r, 0, 2)));
         c.lse = !c.sigmoid;
       }},
      {"projected_regions",
       [](Rng &r, Config &c) {
         makeProjected(r, c, chance(r, 0.3));
         if (!c.crossSource)
           c.Nk = c.Nq;
         c.causal = CausalKind::None;
         c.maskMod = c.crossSource
                         ? pick(r, {MaskModKind::PrefixLM, MaskModKind::Dilated})
                         : pick(r, {MaskModKind::Document, MaskModKind::PrefixLM,
                                    MaskModKind::Dilated});
         c.docI64 = chance(r, 0.5);
         c.prefix = uniformInt(r, 0, c.Nk);
         c.dilWindow = pick<int64_t>(r, {2, 4, 8});
         c.dilation = pick<int64_t>(r, {1, 2});
         if (chance(r, 0.5)) {
           c.scoreMod =
               pick(r, {ScoreModKind::RelativeBias, ScoreModKind::TanhCap});
           c.maxDist = pick<int64_t>(r, {1, 4});
           c.modCap = pick(r, {2.5, 10.0});
         }
       }},
      {"paged", [](Rng &r, Config &c) { makePaged(r, c, false); }},
      {"paged_decode", [](Rng &r, Config &c) { makePaged(r, c, true); }},
      {"ragged", [](Rng &r, Config &c) { makeRagged(r, c); }},
      {"ragged_modifiers", [](Rng &r, Config &c) { makeRagged(r, c, true); }},
      {"chunked_prefill",
       [](Rng &r, Config &c) { makeChunkedPrefill(r, c); }},
      {"latent", [](Rng &r, Config &c) { makeLatent(r, c); }},
      {"quantized", [](Rng &r, Config &c) { makeQuantized(r, c); }},
      {"random", [](Rng &r, Config &c) {}},
  };
  return table;
}

/// Case `index` of the sweep with seed `seed`.
Config makeConfig(uint64_t seed, int index) {
  Config c;
  c.sweepSeed = seed;
  c.index = index;
  c.caseSeed = splitmix(seed ^ splitmix(static_cast<uint64_t>(index)));
  Rng rng(c.caseSeed);
  randomBase(rng, c);
  const Scenario &s = scenarios()[index % scenarios().size()];
  c.rep = index / static_cast<int>(scenarios().size());
  c.scenario = s.name;
  s.apply(rng, c);

  // Make the combination consistent.
  if (c.projected) {
    c.bnhd = false;
    c.lse = false;
    if (!c.crossSource)
      c.Nk = c.Nq;
  }
  if (c.sigmoid)
    c.lse = false;
  // A ragged batch states key padding by packed rows, not key_mask.
  if (c.ragged)
    c.keyMask = false;
  if (c.kvLenEdges)
    c.B = std::max<int64_t>(c.B, 2);
  // -inf biases only where nothing else masks, and never on a whole row:
  // the contract leaves a row whose allowed logits are all -inf open.
  if (c.biasNegInf &&
      (c.kvLen || c.kvStart || c.keyMask || c.maskRank ||
       c.causal != CausalKind::None || c.windowLeft || c.windowRight ||
       c.biasBcast[3] || c.maskMod != MaskModKind::None ||
       c.scoreMod != ScoreModKind::None))
    c.biasNegInf = false;
  // align() must agree with a causal mask.
  if (c.alignBottomRight && c.causal == CausalKind::TopLeft)
    c.causal = CausalKind::BottomRight;
  return c;
}

//===----------------------------------------------------------------------===//
// Spec text
//===----------------------------------------------------------------------===//

struct ArgInfo {
  std::string name; // SSA name and role: q, k, v, kv_len, mask, ...
  std::string type;
  std::vector<int64_t> shape;
  ElementKind kind;
};

struct SpecText {
  std::string text;
  std::vector<ArgInfo> args;
  std::vector<std::string> resultNames;
};

std::string fmtDouble(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.6f", v);
  return buf;
}

class SpecWriter {
public:
  explicit SpecWriter(const Config &c)
      : c(c), rng(c.caseSeed ^ 0xd1a0d1a0ull) {}

  SpecText write() {
    if (c.projected)
      writeProjected();
    else
      writeAttention();
    return std::move(spec);
  }

private:
  using Dim = std::pair<int64_t, const char *>; // size, name (null: static)

  std::string dim(const Dim &d) {
    int mode = 0;
    if (d.second) {
      auto it = c.dyn.find(d.second);
      mode = it == c.dyn.end() ? 0 : it->second;
    }
    bool dynamic = mode == 1 || (mode == 2 && chance(rng, 0.5));
    return dynamic ? "?" : std::to_string(d.first);
  }

  std::string type(const std::vector<Dim> &dims, const std::string &elt) {
    std::string s = "tensor<";
    for (const Dim &d : dims)
      s += dim(d) + "x";
    return s + elt + ">";
  }

  void addArg(const std::string &name, const std::vector<Dim> &dims,
              const std::string &elt, ElementKind kind) {
    ArgInfo a;
    a.name = name;
    a.type = type(dims, elt);
    for (const Dim &d : dims)
      a.shape.push_back(d.first);
    a.kind = kind;
    spec.args.push_back(std::move(a));
  }

  const std::string &argType(const std::string &name) {
    for (const ArgInfo &a : spec.args)
      if (a.name == name)
        return a.type;
    static const std::string none;
    return none;
  }

  /// The dims of a mask or bias tensor of `rank` broadcast to [B, Hq, Nq, Nk].
  std::vector<Dim> broadcastDims(int rank, const std::array<bool, 4> &bcast) {
    const Dim logical[4] = {{c.B, "B"},
                            {c.Hq, c.projected ? nullptr : "Hq"},
                            {c.Nq, "Nq"},
                            {c.Nk, "Nk"}};
    std::vector<Dim> dims;
    for (int d = 4 - rank; d < 4; ++d)
      dims.push_back(bcast[d] ? Dim{1, nullptr} : logical[d]);
    return dims;
  }

  void addModifierArgs() {
    if (c.kvLen)
      addArg("kv_len", {{c.seqRows(), c.ragged ? "Seqs" : "B"}},
             c.kvLenI64 ? "i64" : "i32",
             c.kvLenI64 ? ElementKind::I64 : ElementKind::I32);
    if (c.kvStart)
      addArg("kv_start", {{c.seqRows(), c.ragged ? "Seqs" : "B"}},
             c.kvStartI64 ? "i64" : "i32",
             c.kvStartI64 ? ElementKind::I64 : ElementKind::I32);
    if (c.keyMask)
      addArg("key_mask", {{c.B, "B"}, {c.Nk, "Nk"}}, "i1", ElementKind::I1);
    if (c.maskRank)
      addArg("mask", broadcastDims(c.maskRank, c.maskBcast), "i1",
             ElementKind::I1);
    if (c.biasRank)
      addArg("bias", broadcastDims(c.biasRank, c.biasBcast),
             dtypeName(c.biasType), dtypeKind(c.biasType));
    if (c.alibi)
      addArg("alibi", {{c.Hq, c.projected ? nullptr : "Hq"}}, "f32",
             ElementKind::F32);
    if (c.sink && !c.sigmoid)
      addArg("sink", {{c.Hq, c.projected ? nullptr : "Hq"}}, "f32",
             ElementKind::F32);
    if (c.scaleOperand())
      addArg("scale", {}, "f32", ElementKind::F32);
    // mod_inputs, in this order.
    if (c.maskMod == MaskModKind::Document)
      addArg("doc", {{c.Nq, "Nq"}}, c.docI64 ? "i64" : "i32",
             c.docI64 ? ElementKind::I64 : ElementKind::I32);
    if (c.scoreMod == ScoreModKind::RelativeBias)
      addArg(
          "rel_table",
          {{c.Hq, c.projected ? nullptr : "Hq"}, {2 * c.maxDist + 1, nullptr}},
          "f32", ElementKind::F32);
  }

  std::vector<std::string> modInputNames() const {
    std::vector<std::string> names;
    for (const ArgInfo &a : spec.args)
      if (a.name == "doc" || a.name == "rel_table")
        names.push_back(a.name);
    return names;
  }

  /// The entry block header of a region: b, h, i, j (and s), then one
  /// argument per mod_inputs tensor. Values of the region are prefixed with
  /// `p` so that they never clash with the function's.
  std::string blockHeader(const std::string &p, bool score) {
    std::string s = "    ^bb0(%" + p + "b: index, %" + p + "h: index, %" + p +
                    "i: index, %" + p + "j: index";
    if (score)
      s += ", %" + p + "s: f32";
    for (const std::string &n : modInputNames())
      s += ", %" + p + n + ": " + argType(n);
    return s + "):\n";
  }

  std::string maskModText() {
    const std::string p = "m";
    std::string s = " mask_mod {\n" + blockHeader(p, false);
    auto line = [&](const std::string &l) { s += "      " + l + "\n"; };
    auto cst = [&](const std::string &name, int64_t v) {
      line("%" + name + " = arith.constant " + std::to_string(v) + " : index");
    };
    switch (c.maskMod) {
    case MaskModKind::Document: {
      std::string t = argType("doc"), elt = c.docI64 ? "i64" : "i32";
      line("%m0 = tensor.extract %mdoc[%mi] : " + t);
      line("%m1 = tensor.extract %mdoc[%mj] : " + t);
      line("%m2 = arith.cmpi eq, %m0, %m1 : " + elt);
      line("attn.yield %m2 : i1");
      break;
    }
    case MaskModKind::PrefixLM:
      cst("mp", c.prefix);
      line("%m0 = arith.cmpi slt, %mj, %mp : index");
      line("%m1 = arith.cmpi sle, %mj, %mi : index");
      line("%m2 = arith.ori %m0, %m1 : i1");
      line("attn.yield %m2 : i1");
      break;
    case MaskModKind::Dilated:
      cst("mz", 0);
      cst("mw", c.dilWindow);
      cst("md", c.dilation);
      line("%m0 = arith.subi %mi, %mj : index");
      line("%m1 = arith.cmpi sge, %m0, %mz : index");
      line("%m2 = arith.cmpi sle, %m0, %mw : index");
      line("%m3 = arith.remsi %m0, %md : index");
      line("%m4 = arith.cmpi eq, %m3, %mz : index");
      line("%m5 = arith.andi %m1, %m2 : i1");
      line("%m6 = arith.andi %m5, %m4 : i1");
      line("attn.yield %m6 : i1");
      break;
    case MaskModKind::SeqParity:
      cst("mz", 0);
      cst("m2c", 2);
      line("%m0 = arith.addi %mb, %mj : index");
      line("%m1 = arith.remui %m0, %m2c : index");
      line("%m2 = arith.cmpi eq, %m1, %mz : index");
      line("%m3 = arith.addi %mj, %m2c : index");
      line("%m4 = arith.cmpi sge, %m3, %mi : index");
      line("%m5 = arith.ori %m2, %m4 : i1");
      line("attn.yield %m5 : i1");
      break;
    case MaskModKind::None:
      break;
    }
    return s + "    }";
  }

  std::string scoreModText() {
    std::string s = " score_mod {\n" + blockHeader("s", true);
    auto line = [&](const std::string &l) { s += "      " + l + "\n"; };
    switch (c.scoreMod) {
    case ScoreModKind::RelativeBias:
      line("%sm = arith.constant " + std::to_string(c.maxDist) + " : index");
      line("%sz = arith.constant 0 : index");
      line("%sw = arith.constant " + std::to_string(2 * c.maxDist) +
           " : index");
      line("%s0 = arith.subi %sj, %si : index");
      line("%s1 = arith.addi %s0, %sm : index");
      line("%s2 = arith.maxsi %s1, %sz : index");
      line("%s3 = arith.minsi %s2, %sw : index");
      line("%s4 = tensor.extract %srel_table[%sh, %s3] : " +
           argType("rel_table"));
      line("%s5 = arith.addf %ss, %s4 : f32");
      line("attn.yield %s5 : f32");
      break;
    case ScoreModKind::TanhCap:
      line("%sc = arith.constant " + fmtDouble(c.modCap) + " : f32");
      line("%s0 = arith.divf %ss, %sc : f32");
      line("%s1 = math.tanh %s0 : f32");
      line("%s2 = arith.mulf %s1, %sc : f32");
      line("attn.yield %s2 : f32");
      break;
    case ScoreModKind::None:
      break;
    }
    return s + "    }";
  }

  std::string operand(const std::string &keyword, const std::string &name) {
    return keyword + "(%" + name + " : " + argType(name) + ")";
  }

  std::string modifierText() {
    std::string s;
    if (c.kvLen)
      s += " " + operand("kv_len", "kv_len");
    if (c.kvStart)
      s += " " + operand("kv_start", "kv_start");
    if (c.keyMask)
      s += " " + operand("key_mask", "key_mask");
    if (c.maskRank)
      s += " " + operand("mask", "mask");
    if (c.biasRank)
      s += " " + operand("bias", "bias");
    if (c.alibi)
      s += " " + operand("alibi", "alibi");
    if (c.sink && !c.sigmoid)
      s += " " + operand("sink", "sink");
    if (c.causal != CausalKind::None)
      s += c.causal == CausalKind::TopLeft ? " causal(top_left)"
                                           : " causal(bottom_right)";
    if (c.windowLeft)
      s += " window_left(" + std::to_string(*c.windowLeft) + ")";
    if (c.windowRight)
      s += " window_right(" + std::to_string(*c.windowRight) + ")";
    if (c.scaleOperand())
      s += " " + operand("scale", "scale");
    else if (c.scale)
      s += " scale(" + fmtDouble(*c.scale) + ")";
    if (c.softcap)
      s += " softcap(" + fmtDouble(*c.softcap) + ")";
    if (c.sigmoid)
      s += " norm(sigmoid)";
    if (c.alignBottomRight)
      s += " align(bottom_right)";
    std::vector<std::string> mods = modInputNames();
    if (!mods.empty()) {
      std::string names, types;
      for (size_t i = 0; i < mods.size(); ++i) {
        names += (i ? ", %" : "%") + mods[i];
        types += (i ? ", " : "") + argType(mods[i]);
      }
      s += " mod_inputs(" + names + " : " + types + ")";
    }
    if (c.scoreMod != ScoreModKind::None)
      s += scoreModText();
    if (c.maskMod != MaskModKind::None)
      s += maskModText();
    return s;
  }

  std::string signature(const std::vector<std::string> &results) {
    std::string s = "func.func @f(";
    for (size_t i = 0; i < spec.args.size(); ++i)
      s += (i ? ", %" : "%") + spec.args[i].name + ": " + spec.args[i].type;
    s += ") -> (";
    for (size_t i = 0; i < results.size(); ++i)
      s += (i ? ", " : "") + results[i];
    return s + ")";
  }

  void writeAttention() {
    std::string elt = dtypeName(c.dtype);
    ElementKind kind = dtypeKind(c.dtype);
    // The cache's element type: q's, or a quantized one.
    std::string kvElt = elt;
    ElementKind kvKind = kind;
    switch (c.quant) {
    case Config::Quant::I8:
      kvElt = "i8", kvKind = ElementKind::I8;
      break;
    case Config::Quant::E4M3:
      kvElt = "f8E4M3FN", kvKind = ElementKind::F8E4M3;
      break;
    case Config::Quant::E5M2:
      kvElt = "f8E5M2", kvKind = ElementKind::F8E5M2;
      break;
    case Config::Quant::None:
      break;
    }
    auto order = [&](Dim b, Dim h, Dim n, Dim d) {
      return c.bnhd ? std::vector<Dim>{b, n, h, d}
                    : std::vector<Dim>{b, h, n, d};
    };
    addArg("q", order({c.B, "B"}, {c.Hq, "Hq"}, {c.Nq, "Nq"}, {c.Dqk, "Dqk"}),
           elt, kind);
    if (c.paged) {
      // Page pools: the page size is static (the verifier requires it).
      Dim pages{c.pages, "P"}, rows{c.pageSize, nullptr};
      addArg("k", order(pages, {c.Hkv, "Hkv"}, rows, {c.Dqk, "Dqk"}), kvElt,
             kvKind);
      if (!c.latent)
        addArg("v", order(pages, {c.Hkv, "Hkv"}, rows, {c.Dv, "Dv"}), kvElt,
               kvKind);
      addArg("page_table",
             {{c.seqRows(), c.ragged ? "Seqs" : "B"}, {c.maxPages, "MaxPages"}},
             c.pageTableI64 ? "i64" : "i32",
             c.pageTableI64 ? ElementKind::I64 : ElementKind::I32);
    } else {
      addArg("k",
             order({c.B, "B"}, {c.Hkv, "Hkv"}, {c.Nk, "Nk"}, {c.Dqk, "Dqk"}),
             kvElt, kvKind);
      if (!c.latent)
        addArg("v",
               order({c.B, "B"}, {c.Hkv, "Hkv"}, {c.Nk, "Nk"}, {c.Dv, "Dv"}),
               kvElt, kvKind);
    }
    if (c.quant != Config::Quant::None) {
      // Scales: the cache's dims without D, or [pages / B, Hkv].
      Dim block = c.paged ? Dim{c.pages, "P"} : Dim{c.B, "B"};
      Dim rows = c.paged ? Dim{c.pageSize, nullptr} : Dim{c.Nk, "Nk"};
      for (auto [name, perBlock] :
           {std::pair<const char *, bool>{"k_scale", c.kScalePerBlock},
            {"v_scale", c.vScalePerBlock}}) {
        if (c.latent && std::string(name) == "v_scale")
          continue;
        std::vector<Dim> dims =
            order(block, {c.Hkv, "Hkv"}, rows, {1, nullptr});
        dims.pop_back();
        if (perBlock)
          dims = {block, {c.Hkv, "Hkv"}};
        addArg(name, dims, "f32", ElementKind::F32);
      }
    }
    if (c.ragged) {
      std::string ty = c.cuI64 ? "i64" : "i32";
      ElementKind kind = c.cuI64 ? ElementKind::I64 : ElementKind::I32;
      Dim n{static_cast<int64_t>(c.cuQ.size()), "Seqs1"};
      addArg("cu_seqlens_q", {n}, ty, kind);
      if (!c.paged)
        addArg("cu_seqlens_k", {n}, ty, kind);
    }
    addModifierArgs();
    std::vector<std::string> results = {
        type(order({c.B, "B"}, {c.Hq, "Hq"}, {c.Nq, "Nq"}, {c.Dv, "Dv"}), elt)};
    spec.resultNames = {"out"};
    if (c.lse) {
      results.push_back(type({{c.B, "B"}, {c.Hq, "Hq"}, {c.Nq, "Nq"}}, "f32"));
      spec.resultNames.push_back("lse");
    }
    std::string resultList = results[0] + (c.lse ? ", " + results[1] : "");
    std::string s = signature(results) + " {\n";
    s += c.lse ? "  %out, %lse = " : "  %out = ";
    s += "attn.attention " + operand("q", "q") + " " + operand("k", "k") + " " +
         (c.latent ? "v(%k : " + argType("k") + ") v_from_k(" +
                         std::to_string(c.Dv) + ")"
                   : operand("v", "v"));
    if (c.paged)
      s += " " + operand("page_table", "page_table");
    if (c.ragged && c.paged)
      s += " ragged(%cu_seqlens_q : " + argType("cu_seqlens_q") + ")";
    else if (c.ragged)
      s += " ragged(%cu_seqlens_q, %cu_seqlens_k : " + argType("cu_seqlens_q") +
           ", " + argType("cu_seqlens_k") + ")";
    if (c.bnhd)
      s += " layout(bnhd)";
    if (c.quant != Config::Quant::None) {
      s += " " + operand("k_scale", "k_scale");
      if (!c.latent)
        s += " " + operand("v_scale", "v_scale");
    }
    s += modifierText() + " -> " + resultList + "\n";
    s += c.lse ? "  return %out, %lse : " : "  return %out : ";
    s += resultList + "\n}\n";
    spec.text = s;
  }

  void writeProjected() {
    std::string elt = dtypeName(c.dtype);
    ElementKind kind = dtypeKind(c.dtype);
    addArg("x", {{c.B, "B"}, {c.Nq, "Nq"}, {c.D, "D"}}, elt, kind);
    if (c.crossSource)
      addArg("kv_source", {{c.B, "B"}, {c.Nk, "Nk"}, {c.D, "D"}}, elt, kind);
    addArg("wq", {{c.D, "D"}, {c.Hq * c.Dqk, "W"}}, elt, kind);
    addArg("wk", {{c.D, "D"}, {c.Hkv * c.Dqk, "W"}}, elt, kind);
    addArg("wv", {{c.D, "D"}, {c.Hkv * c.Dv, "W"}}, elt, kind);
    addArg("wo", {{c.Hq * c.Dv, "W"}, {c.D, "D"}}, elt, kind);
    addModifierArgs();
    std::string result = type({{c.B, "B"}, {c.Nq, "Nq"}, {c.D, "D"}}, elt);
    spec.resultNames = {"result"};
    std::string s = signature({result}) + " {\n";
    s += "  %result = attn.projected_attention " + operand("x", "x");
    if (c.crossSource)
      s += " " + operand("kv_source", "kv_source");
    for (const char *w : {"wq", "wk", "wv", "wo"})
      s += std::string(" ") + operand(w, w);
    s += " heads(" + std::to_string(c.Hq) + ", " + std::to_string(c.Hkv) + ")";
    s += modifierText() + " -> " + result + "\n";
    s += "  return %result : " + result + "\n}\n";
    spec.text = s;
  }

  const Config &c;
  Rng rng;
  SpecText spec;
};

SpecText writeSpec(const Config &c) { return SpecWriter(c).write(); }

//===----------------------------------------------------------------------===//
// Inputs
//===----------------------------------------------------------------------===//

/// Seeded inputs for every argument of the spec, by role.
std::vector<HostTensor> makeInputs(const Config &c, const SpecText &spec) {
  Rng rng(c.caseSeed ^ 0x1badb002ull);
  std::vector<HostTensor> inputs;
  for (const ArgInfo &a : spec.args) {
    HostTensor t;
    t.resize(a.kind, a.shape);
    int64_t n = t.numElements();
    auto fill = [&](double lo, double hi) {
      std::uniform_real_distribution<double> d(lo, hi);
      for (int64_t i = 0; i < n; ++i)
        t.set(i, d(rng));
    };
    if ((a.name == "k" || a.name == "v") && c.quant != Config::Quant::None) {
      // Raw values across [-127, 127] (rounded to the type), read with
      // scales near 1/127 (below).
      fill(-127, 127);
    } else if (a.name == "k_scale" || a.name == "v_scale") {
      fill(0.5 / 127, 1.5 / 127);
    } else if (a.name == "q" || a.name == "k") {
      fill(-c.amplitude, c.amplitude);
    } else if (a.name == "v" || a.name == "x" || a.name == "kv_source") {
      fill(-1, 1);
    } else if (a.name[0] == 'w') {
      // 1/sqrt(fan-in) keeps projected values O(1); 2x makes the softmax
      // rows less flat.
      double r = 2.0 / std::sqrt(static_cast<double>(a.shape[0]));
      fill(-r, r);
    } else if (a.name == "kv_len" && c.paged) {
      for (int64_t b = 0; b < n; ++b)
        t.set(b, static_cast<double>(c.pagedLens[b]));
    } else if (a.name == "cu_seqlens_q" || a.name == "cu_seqlens_k") {
      const std::vector<int64_t> &cu = a.name == "cu_seqlens_q" ? c.cuQ : c.cuK;
      for (int64_t i = 0; i < n; ++i)
        t.set(i, static_cast<double>(cu[i]));
    } else if (a.name == "page_table") {
      // Every page a sequence uses, in shuffled order; entries past a
      // sequence's last page are never read: -1 or a page past the pool.
      std::vector<int64_t> order(c.pages);
      std::iota(order.begin(), order.end(), 0);
      std::shuffle(order.begin(), order.end(), rng);
      size_t next = 0;
      for (int64_t b = 0; b < c.seqRows(); ++b)
        for (int64_t p = 0; p < c.maxPages; ++p)
          t.set(b * c.maxPages + p,
                p * c.pageSize < c.pagedLens[b]
                    ? static_cast<double>(order[next++])
                    : (chance(rng, 0.5) ? -1.0 : double(c.pages + 7)));
    } else if (a.name == "kv_len" && c.ragged) {
      // Per sequence over its packed keys: mostly all of them, sometimes
      // fewer, none, or more than it has (all are read).
      for (int64_t s = 0; s < n; ++s) {
        int64_t nk = c.cuK[s + 1] - c.cuK[s];
        int64_t kind = uniformInt(rng, 0, 5);
        t.set(s, static_cast<double>(kind < 2    ? nk
                                     : kind < 4  ? uniformInt(rng, 0, nk)
                                     : kind == 4 ? 0
                                                 : nk + 2));
      }
    } else if (a.name == "kv_len") {
      for (int64_t b = 0; b < n; ++b)
        t.set(b, static_cast<double>(uniformInt(rng, 0, c.Nk)));
      if (c.kvLenEdges) {
        t.set(0, 0);
        if (n > 1)
          t.set(1, static_cast<double>(c.Nk));
      }
    } else if (a.name == "kv_start") {
      // Per batch entry or sequence: before the first key (-1), 0, inside,
      // or past the last key (a row of padding only).
      for (int64_t s = 0; s < n; ++s) {
        int64_t nk = c.ragged && !c.paged ? c.cuK[s + 1] - c.cuK[s] : c.Nk;
        int64_t kind = uniformInt(rng, 0, 5);
        t.set(s, static_cast<double>(kind == 0   ? -1
                                     : kind == 1 ? 0
                                     : kind < 5  ? uniformInt(rng, 0, nk)
                                                 : nk + 1));
      }
    } else if (a.name == "key_mask") {
      // Per batch entry: no padding, at the start, at the end, or holes.
      int64_t nk = a.shape.back();
      for (int64_t b = 0; b * nk < n; ++b) {
        int64_t kind = uniformInt(rng, 0, 3), cut = uniformInt(rng, 0, nk);
        for (int64_t j = 0; j < nk; ++j)
          t.set(b * nk + j, kind == 0   ? 1
                            : kind == 1 ? (j >= cut)
                            : kind == 2 ? (j < cut)
                                        : chance(rng, 0.85));
      }
    } else if (a.name == "mask") {
      std::bernoulli_distribution d(c.maskDensity);
      for (int64_t i = 0; i < n; ++i)
        t.set(i, d(rng) ? 1 : 0);
      if (c.maskEmptyRow) {
        int64_t row = a.shape.back();
        int64_t r = uniformInt(rng, 0, n / row - 1);
        for (int64_t j = 0; j < row; ++j)
          t.set(r * row + j, 0);
      }
    } else if (a.name == "bias") {
      fill(-2, 2);
      if (c.biasNegInf) {
        int64_t row = a.shape.back();
        for (int64_t r = 0; r < n / row; ++r) {
          int64_t keep = uniformInt(rng, 0, row - 1);
          for (int64_t j = 0; j < row; ++j)
            if (j != keep && chance(rng, 0.3))
              t.set(r * row + j, -std::numeric_limits<double>::infinity());
        }
      }
    } else if (a.name == "alibi") {
      for (int64_t h = 0; h < n; ++h)
        t.set(h, std::pow(2.0, -8.0 * (h + 1) / static_cast<double>(n)));
    } else if (a.name == "sink") {
      // Logits around and above the random logits' range.
      fill(-2, 3);
    } else if (a.name == "scale") {
      t.set(0, *c.scale);
    } else if (a.name == "doc") {
      // Sorted segment ids (1 to 8 documents), as attn-run makes them.
      llvm::StringMap<int64_t> sizes;
      sizes["Nq"] = c.Nq;
      sizes["Nk"] = c.Nk;
      randomFill(t, ArgRole{"mod_input0", {"Nq"}}, sizes, rng);
    } else if (a.name == "rel_table") {
      fill(-2, 2);
    } else {
      ADD_FAILURE() << "no input rule for argument " << a.name;
    }
    inputs.push_back(std::move(t));
  }
  return inputs;
}

//===----------------------------------------------------------------------===//
// Running a case
//===----------------------------------------------------------------------===//

MLIRContext &sharedContext() {
  static MLIRContext *context = [] {
    DialectRegistry registry;
    registerAllDialects(registry);
    registerAllExtensions(registry);
    registry.insert<AttnDialect>();
    auto *ctx = new MLIRContext(registry);
    ctx->loadAllAvailableDialects();
    return ctx;
  }();
  return *context;
}

/// Parses and verifies `text`; on failure returns null and the diagnostics.
OwningOpRef<ModuleOp> parseSpec(const std::string &text, std::string &diags) {
  MLIRContext &ctx = sharedContext();
  llvm::raw_string_ostream os(diags);
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    os << d.getLocation() << ": " << d << "\n";
    return success();
  });
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &ctx);
  if (module && failed(mlir::verify(*module)))
    module = nullptr;
  return module;
}

Operation *findAttnOp(ModuleOp module) {
  Operation *found = nullptr;
  module.walk([&](Operation *op) {
    if (!found && isa<AttentionOp, ProjectedAttentionOp>(op))
      found = op;
  });
  return found;
}

/// Writes the spec and its inputs under $ATTN_SWEEP_DUMP; returns an attn-run
/// command line that replays the case, or "" when not dumping.
std::string dumpCase(const Config &c, const std::string &form,
                     const SpecText &spec,
                     const std::vector<HostTensor> &inputs) {
  auto dir = getEnv("ATTN_SWEEP_DUMP");
  if (!dir)
    return "";
  std::string base = *dir + "/seed" + std::to_string(c.sweepSeed) + "_case" +
                     std::to_string(c.index);
  SweepForm f = parseForm(form);
  std::string cmd =
      "attn-run " + base + ".mlir --verify --reps=1 --form=" + f.form;
  if (!f.cpu.empty())
    cmd += " --target-cpu=" + f.cpu;
  if (f.bf16Dot)
    cmd += " --bf16-dot-products --target-features=-amx-bf16";
  if (f.noDot)
    cmd += " --bf16-dot-products=false --target-features=-amx-bf16";
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(base + ".mlir", ec);
    if (ec)
      return "(could not write " + base + ".mlir: " + ec.message() + ")";
    os << "// Sweep seed " << c.sweepSeed << ", case " << c.index
       << ", scenario " << c.scenario << "\n"
       << spec.text;
  }
  for (size_t a = 0; a < inputs.size(); ++a) {
    const HostTensor &t = inputs[a];
    std::vector<double> values(t.numElements());
    for (size_t i = 0; i < values.size(); ++i)
      values[i] = t.get(static_cast<int64_t>(i));
    std::string path = base + ".arg" + std::to_string(a) + ".npy";
    ::attn::npy::Array arr;
    std::string err =
        ::attn::npy::fromDoubles(values, t.shape, npyDtype(t.kind), arr);
    if (err.empty())
      err = ::attn::npy::write(path, arr);
    if (!err.empty())
      return "(could not write " + path + ": " + err + ")";
    cmd += " --input " + std::to_string(a) + "=" + path;
  }
  return cmd;
}

/// Everything a failure message needs to replay the case.
std::string describe(const Config &c, const std::string &form,
                     const SpecText &spec, const std::string &replayCmd) {
  std::ostringstream os;
  os << "\n  sweep seed " << c.sweepSeed << ", case " << c.index
     << ", scenario '" << c.scenario << "', form '" << form << "'"
     << "\n  replay: ATTN_SWEEP_SEED=" << c.sweepSeed
     << " ATTN_SWEEP_CASE=" << c.index << " ATTN_SWEEP_FORMS=" << form
     << " AttnSweepTests";
  if (replayCmd.empty())
    os << "\n  (set ATTN_SWEEP_DUMP=DIR to get the spec and inputs as files "
          "for attn-run)";
  else
    os << "\n  attn-run replay: " << replayCmd;
  os << "\n  spec:\n" << spec.text;
  return os.str();
}

std::string indexStr(const std::vector<int64_t> &shape, int64_t flat) {
  std::vector<int64_t> idx(shape.size());
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    int64_t s = std::max<int64_t>(shape[d], 1);
    idx[d] = flat % s;
    flat /= s;
  }
  std::string out = "[";
  for (size_t d = 0; d < idx.size(); ++d)
    out += (d ? ", " : "") + std::to_string(idx[d]);
  return out + "]";
}

std::string shapeStr(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t d = 0; d < shape.size(); ++d)
    s += (d ? ", " : "") + std::to_string(shape[d]);
  return s + "]";
}

/// A compiled case with its inputs, results and reference results.
struct Executed {
  std::vector<HostTensor> inputs;
  std::vector<HostTensor> outputs;
  std::vector<::attn::ref::Tensor> expected;
};

/// Compiles `text` in `form`, runs it on `inputs` and runs the reference.
/// Returns an error message, or "" on success.
std::string execute(const std::string &text, const std::string &form,
                    std::vector<HostTensor> inputs, Executed &result) {
  using Clock = std::chrono::steady_clock;
  auto t0 = Clock::now();
  auto seconds = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
  };
  std::string diags;
  OwningOpRef<ModuleOp> module = parseSpec(text, diags);
  if (!module)
    return "the spec does not parse or verify:\n" + diags;
  Operation *op = findAttnOp(*module);
  if (!op)
    return "the spec has no attn op";
  result.inputs = std::move(inputs);
  std::vector<const HostTensor *> ptrs;
  for (const HostTensor &t : result.inputs)
    ptrs.push_back(&t);

  auto t1 = Clock::now();
  JitOptions options;
  // The sweep's shapes are small: on OpenMP threads whatever their work, so
  // that the parallel code stays covered.
  options.minParallelWork = 0;
  SweepForm f = parseForm(form);
  options.targetCpu = f.cpu;
  options.bf16DotProducts = f.bf16Dot ? Bf16DotProducts::On
                            : f.noDot ? Bf16DotProducts::Off
                                      : Bf16DotProducts::Auto;
  // AMX takes bf16 before the dot products where the host has both.
  if (f.bf16Dot || f.noDot)
    options.targetFeatures = "-amx-bf16";
  if (llvm::Error err = options.setForm(f.form))
    return llvm::toString(std::move(err));
  auto jit = JitFunction::compile(*module, "f", options);
  if (!jit)
    return "compilation failed: " + llvm::toString(jit.takeError());
  auto t2 = Clock::now();
  if (llvm::Error err = (*jit)->invoke(ptrs, result.outputs))
    return "the compiled function failed: " + llvm::toString(std::move(err));
  auto t3 = Clock::now();
  if (llvm::Error err = runReference(op, ptrs, result.expected, nullptr))
    return "the reference failed: " + llvm::toString(std::move(err));
  auto t4 = Clock::now();
  if (getEnv("ATTN_SWEEP_VERBOSE"))
    std::cout << "  parse " << seconds(t0, t1) << " s, compile "
              << seconds(t1, t2) << " s, first call (with JIT codegen) "
              << seconds(t2, t3) << " s, reference " << seconds(t3, t4)
              << " s\n";
  if (result.outputs.size() != result.expected.size())
    return "the compiled function returned " +
           std::to_string(result.outputs.size()) + " results, the reference " +
           std::to_string(result.expected.size());
  return "";
}

/// Compares one output; returns "" when within tolerance, else a message.
/// On top of compare() (atol + rtol * |ref|), an element whose reference
/// value is not finite (lse -inf of a fully masked row) must match it
/// exactly: compare()'s tolerance becomes infinite there.
std::string checkOutput(const std::string &name, const HostTensor &actual,
                        const ::attn::ref::Tensor &expected) {
  double atol, rtol;
  defaultTolerance(actual.kind, atol, rtol);
  Comparison cmp = compare(actual, expected, atol, rtol);
  int64_t nonFinite = 0, firstNonFinite = -1;
  if (actual.shape == expected.shape) {
    for (int64_t i = 0, n = actual.numElements(); i < n; ++i) {
      double a = actual.get(i), e = expected.data[i];
      if (std::isfinite(e) || (std::isnan(e) && std::isnan(a)) || a == e)
        continue;
      if (firstNonFinite < 0)
        firstNonFinite = i;
      ++nonFinite;
    }
  }
  if (cmp.mismatches == 0 && nonFinite == 0)
    return "";
  std::ostringstream os;
  os << "output '" << name << "' (" << elementName(actual.kind) << " "
     << shapeStr(actual.shape) << ", reference " << shapeStr(expected.shape)
     << ") differs from the reference: " << cmp.mismatches << " of "
     << actual.numElements() << " elements outside atol " << atol << " + rtol "
     << rtol << " * |ref|; max abs err " << cmp.maxAbsError << ", max rel err "
     << cmp.maxRelError;
  if (actual.shape == expected.shape && cmp.firstMismatch >= 0) {
    os << "; first at " << indexStr(actual.shape, cmp.firstMismatch) << ": got "
       << actual.get(cmp.firstMismatch) << ", expected "
       << expected.data[cmp.firstMismatch];
  }
  if (nonFinite > 0)
    os << "; " << nonFinite
       << " elements where the reference is not finite differ, first at "
       << indexStr(actual.shape, firstNonFinite) << ": got "
       << actual.get(firstNonFinite) << ", expected "
       << expected.data[firstNonFinite];
  return os.str();
}

/// What the crash handler prints: the replay information and spec of the
/// case being run, so that a crash in the compiler or the compiled code is
/// as reproducible as a mismatch.
std::string &crashContext() {
  static std::string context;
  return context;
}

void printCrashContext(void *) {
  const std::string &c = crashContext();
  if (c.empty())
    return;
  const char header[] = "\nAttnSweepTests crashed while running:";
  ssize_t ignored = ::write(2, header, sizeof(header) - 1);
  ignored = ::write(2, c.data(), c.size());
  (void)ignored;
}

/// Sets the crash context for the lifetime of one case.
class CrashContextScope {
public:
  explicit CrashContextScope(const std::string &context) {
    static bool registered = [] {
      llvm::sys::AddSignalHandler(printCrashContext, nullptr);
      return true;
    }();
    (void)registered;
    crashContext() = context + "\n";
  }
  ~CrashContextScope() { crashContext().clear(); }
};

//===----------------------------------------------------------------------===//
// The sweep
//===----------------------------------------------------------------------===//

class DifferentialSweep
    : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(DifferentialSweep, Case) {
  const std::string &form = std::get<0>(GetParam());
  Config c = makeConfig(sweepSeed(), std::get<1>(GetParam()));
  if (!formSupports(form, c))
    GTEST_SKIP() << "form '" << form << "' does not take scenario "
                 << c.scenario << " on this host";
  SpecText spec = writeSpec(c);
  std::vector<HostTensor> inputs = makeInputs(c, spec);
  std::string replay = dumpCase(c, form, spec, inputs);
  std::string context = describe(c, form, spec, replay);
  CrashContextScope crashScope(context);

  Executed run;
  std::string err = execute(spec.text, form, std::move(inputs), run);
  ASSERT_EQ(err, "") << context;
  for (size_t i = 0; i < run.outputs.size(); ++i) {
    std::string name =
        i < spec.resultNames.size() ? spec.resultNames[i] : std::to_string(i);
    EXPECT_EQ(checkOutput(name, run.outputs[i], run.expected[i]), "")
        << context;
  }
}

std::string
caseName(const ::testing::TestParamInfo<std::tuple<std::string, int>> &info) {
  std::string form;
  for (char ch : std::get<0>(info.param))
    form += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return form + "_" + std::to_string(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(
    Sweep, DifferentialSweep,
    ::testing::Combine(::testing::ValuesIn(sweepForms()),
                       ::testing::ValuesIn(sweepCaseIndices())),
    caseName);

//===----------------------------------------------------------------------===//
// The sweep's own checks
//===----------------------------------------------------------------------===//

/// The sweep covers the feature matrix: checked on the configurations, the
/// spec texts and (for data-dependent features) the reference's results,
/// without compiling anything.
TEST(SweepCoverage, FeatureMatrix) {
  int n = sweepCaseCount();
  if (singleCases() || n < static_cast<int>(2 * scenarios().size()))
    GTEST_SKIP() << "coverage is checked on full sweeps of at least "
                 << 2 * scenarios().size() << " cases";
  std::map<std::string, int> seen;
  auto note = [&](bool cond, const std::string &feature) {
    seen[feature] += cond ? 1 : 0;
  };
  for (int i = 0; i < n; ++i) {
    Config c = makeConfig(sweepSeed(), i);
    SpecText spec = writeSpec(c);
    bool attn = !c.projected;
    int64_t r = c.Hq / c.Hkv;
    note(attn && r == 1 && c.Hkv > 1, "MHA (Hq = Hkv > 1)");
    note(attn && c.Hkv == 1 && c.Hq > 1, "MQA (Hkv = 1)");
    for (int64_t g : {2, 4, 8})
      note(attn && c.Hkv > 1 && r == g, "GQA R = " + std::to_string(g));
    note(c.Nq == c.Nk, "self (Nq = Nk)");
    note(attn && c.Nq != c.Nk, "cross (Nq != Nk)");
    note(c.causal == CausalKind::TopLeft, "causal top-left");
    note(c.causal == CausalKind::BottomRight, "causal bottom-right");
    note(c.causal == CausalKind::BottomRight && c.Nq != c.Nk,
         "causal bottom-right, Nq != Nk");
    note(c.windowLeft && !c.windowRight, "window left only");
    note(!c.windowLeft && c.windowRight, "window right only");
    note(c.windowLeft && c.windowRight, "window both");
    if (c.ragged) {
      bool empty = false, outside = false, differ = false;
      for (size_t i = 0; i + 1 < c.cuQ.size(); ++i) {
        empty |= c.cuQ[i] == c.cuQ[i + 1];
        int64_t keys = c.paged ? c.pagedLens[i] : c.cuK[i + 1] - c.cuK[i];
        differ |= c.cuQ[i + 1] - c.cuQ[i] != keys;
      }
      outside = c.cuQ.front() > 0 || c.cuQ.back() < c.Nq;
      note(true, "ragged batch");
      note(c.cuQ.size() > 2, "ragged, several sequences");
      note(empty, "ragged, an empty sequence");
      note(outside, "ragged, rows outside every sequence");
      note(differ && c.causal == CausalKind::BottomRight,
           "ragged, Nq != Nk per sequence, bottom-right");
      note(c.bnhd, "ragged, bnhd");
      note(c.lse, "ragged with lse");
      note(c.paged, "ragged, chunked prefill over a paged cache");
      note(c.paged && c.causal == CausalKind::BottomRight && differ,
           "ragged paged, cached keys before the new queries");
      note(c.kvLen && !c.paged, "ragged with kv_len over packed keys");
      note(c.kvStart, "ragged with kv_start");
      note(c.maskRank || c.biasRank, "ragged with a mask or bias");
      note(c.maskMod == MaskModKind::SeqParity,
           "ragged, a mask_mod reading the sequence index");
      note(c.scoreMod != ScoreModKind::None, "ragged with a score_mod");
    }
    if (c.quant != Config::Quant::None) {
      note(true, "quantized cache");
      note(c.quant == Config::Quant::I8, "quantized cache, int8");
      note(c.quant == Config::Quant::E4M3, "quantized cache, fp8 e4m3");
      note(c.quant == Config::Quant::E5M2, "quantized cache, fp8 e5m2");
      note(c.kScalePerBlock || c.vScalePerBlock,
           "quantized cache, per-page / per-batch-entry scales");
      note(!c.kScalePerBlock || !c.vScalePerBlock,
           "quantized cache, per-token scales");
      note(c.paged, "quantized paged cache");
      note(c.ragged, "quantized cache, ragged batch");
      note(c.latent, "quantized latent cache");
    }
    if (c.latent) {
      note(true, "latent attention (v_from_k)");
      note(c.paged, "latent attention over a paged cache");
      note(c.Dv == c.Dqk - 1, "latent attention, Dv = Dqk - 1");
      note(c.Hq > 1, "latent attention, MQA over the latent head");
    }
    if (c.paged) {
      bool zero = false, boundary = false, full = false;
      int64_t used = 0;
      for (int64_t len : c.pagedLens) {
        zero |= len == 0;
        boundary |= len > 0 && len < c.Nk && len % c.pageSize == 0;
        full |= len == c.Nk;
        used += (len + c.pageSize - 1) / c.pageSize;
      }
      note(true, "paged K/V");
      note(c.bnhd, "paged K/V, bnhd pools");
      note(c.Nq == 1, "paged K/V, decode (Nq = 1)");
      note(c.Hq != c.Hkv, "paged K/V with GQA/MQA");
      note(c.lse, "paged K/V with lse");
      note(c.maskRank || c.biasRank || c.alibi || c.windowLeft ||
               c.windowRight || c.softcap,
           "paged K/V with other modifiers");
      note((c.pageSize & (c.pageSize - 1)) != 0,
           "paged K/V, page size not a power of two");
      note(zero, "paged kv_len 0");
      note(boundary, "paged kv_len on a page boundary");
      note(full, "paged kv_len = the whole table");
      note(used == c.pages, "paged: the sequences use the whole pool");
    }
    note((c.windowLeft || c.windowRight) && c.causal != CausalKind::None,
         "window with causal");
    note(c.windowLeft && *c.windowLeft == 0, "window_left(0)");
    note(c.keyMask, "key_mask");
    note(c.keyMask && c.causal != CausalKind::None, "key_mask with causal");
    note(c.keyMask && c.paged, "key_mask over a paged cache");
    note(c.kvStart && !c.kvStartI64, "kv_start i32");
    note(c.kvStart && c.kvStartI64, "kv_start i64");
    note(c.kvStart && c.kvLen, "kv_start with kv_len");
    note(c.kvStart && c.causal != CausalKind::None, "kv_start with causal");
    note(c.kvStart && c.maskMod != MaskModKind::None,
         "kv_start beside a mask_mod");
    note(c.kvLen && !c.kvLenI64, "kv_len i32");
    note(c.kvLen && c.kvLenI64, "kv_len i64");
    for (int rank = 1; rank <= 4; ++rank)
      note(c.maskRank == rank, "mask rank " + std::to_string(rank));
    note(c.maskRank && (c.maskBcast[0] || c.maskBcast[1] || c.maskBcast[2]),
         "mask broadcast");
    note(c.biasRank && c.biasType == DType::F32, "bias f32");
    note(c.biasRank && c.biasType == DType::F16, "bias f16");
    note(c.biasRank && c.biasType != c.dtype, "bias type != q type");
    note(c.biasRank == 4 && (c.biasBcast[0] || c.biasBcast[1] ||
                             c.biasBcast[2] || c.biasBcast[3]),
         "bias rank 4 broadcast");
    note(c.biasRank && c.biasRank < 4, "bias rank < 4");
    note(c.biasNegInf, "bias with -inf");
    note(c.alibi, "ALiBi");
    note(c.sink && !c.sigmoid, "attention sink");
    note(c.alibi && c.causal == CausalKind::None, "ALiBi without causal");
    note(c.softcap.has_value(), "soft cap");
    note(c.scale.has_value(), "explicit scale");
    note(c.scaleOperand(), "run-time scale operand");
    note(c.sigmoid, "sigmoid");
    note(attn && c.sigmoid, "sigmoid (attention)");
    note(c.lse, "lse");
    note(attn && !c.lse, "no lse");
    note(attn && !c.bnhd, "bhnd");
    note(attn && c.bnhd, "bnhd");
    for (DType t : {DType::F32, DType::F16, DType::BF16}) {
      note(attn && c.dtype == t, std::string("attention ") + dtypeName(t));
      note(c.projected && c.dtype == t,
           std::string("projected ") + dtypeName(t));
    }
    note(spec.text.find('?') != std::string::npos, "dynamic sizes");
    note(attn && c.dyn.size() == 7, "every size dynamic");
    for (const char *name : {"B", "Hq", "Hkv", "Nq", "Nk", "Dqk", "Dv"})
      note(attn && c.dyn.count(name) && c.dyn.at(name),
           std::string("dynamic ") + name);
    note(attn && c.dyn.count("Dqk") && c.dyn.at("Dqk") && !c.scale,
         "dynamic Dqk with the default scale");
    for (int64_t s : {1, 7, 13, 37, 65})
      note(c.Nq == s || c.Nk == s, "sequence length " + std::to_string(s));
    note(c.Dqk == 1, "Dqk = 1");
    note(c.Dqk != c.Dv, "Dqk != Dv");
    note(c.projected && !c.crossSource, "projected self-attention");
    note(c.projected && c.crossSource, "projected cross-attention");
    note(c.projected && c.Hq != c.Hkv, "projected GQA/MQA");
    note(c.projected && (c.kvLen || c.maskRank || c.biasRank ||
                         c.causal != CausalKind::None),
         "projected with modifiers");
    note(c.projected && !c.dyn.empty(), "projected dynamic");
    note(c.projected && c.dyn.count("B") && c.dyn.count("Nq"),
         "projected dynamic B and Nq");
    bool anyRegion =
        c.maskMod != MaskModKind::None || c.scoreMod != ScoreModKind::None;
    note(c.maskMod == MaskModKind::Document, "mask_mod: document mask");
    note(c.maskMod == MaskModKind::Document && c.docI64,
         "mask_mod: document ids i64");
    note(c.maskMod == MaskModKind::Document && !c.docI64,
         "mask_mod: document ids i32");
    note(c.maskMod == MaskModKind::Document &&
             spec.text.find("mod_inputs(%doc : tensor<?x") != std::string::npos,
         "mask_mod: document ids of dynamic length");
    note(c.maskMod == MaskModKind::PrefixLM, "mask_mod: prefix-LM");
    note(c.maskMod == MaskModKind::Dilated, "mask_mod: dilated window");
    note(c.scoreMod == ScoreModKind::RelativeBias,
         "score_mod: relative position bias table");
    note(c.scoreMod == ScoreModKind::TanhCap, "score_mod: tanh soft cap");
    note(c.maskMod != MaskModKind::None && c.scoreMod != ScoreModKind::None,
         "score_mod and mask_mod together");
    note(anyRegion && c.projected, "regions on projected attention");
    note(anyRegion && attn && c.Nq != c.Nk, "regions with Nq != Nk");
    note(anyRegion && c.dtype != DType::F32, "regions with f16/bf16");
    note(c.alignBottomRight && c.causal == CausalKind::None &&
             (c.windowLeft || c.windowRight),
         "align(bottom_right) window without causal");
    note(c.alignBottomRight && c.causal == CausalKind::None && c.kvLen &&
             c.Nq != c.Nk,
         "align(bottom_right) with kv_len, Nq != Nk");

    // Data-dependent features, from the inputs and the reference.
    std::vector<HostTensor> inputs = makeInputs(c, spec);
    for (size_t a = 0; a < spec.args.size(); ++a) {
      if (spec.args[a].name == "doc") {
        int64_t n = inputs[a].numElements();
        note(n > 0 && inputs[a].get(n - 1) > 0,
             "document mask over several documents");
      }
      if (spec.args[a].name != "kv_len")
        continue;
      bool zero = false, full = false;
      for (int64_t b = 0; b < inputs[a].numElements(); ++b) {
        zero |= inputs[a].get(b) == 0;
        full |= inputs[a].get(b) == c.Nk;
      }
      note(zero, "kv_len 0");
      note(full, "kv_len = Nk");
      note(zero && c.lse, "kv_len 0 with lse");
    }
    std::string diags;
    OwningOpRef<ModuleOp> module = parseSpec(spec.text, diags);
    ASSERT_TRUE(module) << diags << spec.text;
    std::vector<const HostTensor *> ptrs;
    for (const HostTensor &t : inputs)
      ptrs.push_back(&t);
    std::vector<::attn::ref::Tensor> expected;
    llvm::Error err =
        runReference(findAttnOp(*module), ptrs, expected, nullptr);
    ASSERT_FALSE(static_cast<bool>(err))
        << llvm::toString(std::move(err)) << spec.text;
    if (c.lse) {
      int64_t empty = 0;
      for (double v : expected[1].data)
        empty += std::isinf(v) && v < 0;
      note(empty > 0, "fully masked row with lse");
      note(empty > 0 && c.maskEmptyRow, "fully masked row from the mask");
      note(empty > 0 && !c.kvLen && !c.maskRank,
           "fully masked row from causal/window alone");
    }
    if (c.sigmoid) {
      bool zeroRow = false;
      int64_t dv = expected[0].shape.back();
      for (size_t r = 0; r * dv < expected[0].data.size() && !zeroRow; ++r) {
        bool all = true;
        for (int64_t d = 0; d < dv; ++d)
          all &= expected[0].data[r * dv + d] == 0;
        zeroRow |= all;
      }
      note(zeroRow && attn, "sigmoid with a fully masked row");
    }
  }
  std::ostringstream table;
  for (auto &[feature, count] : seen)
    table << "  " << feature << ": " << count << "\n";
  for (auto &[feature, count] : seen)
    EXPECT_GT(count, 0) << "no case of the sweep (seed " << sweepSeed() << ", "
                        << n << " cases) covers: " << feature << "\ncoverage:\n"
                        << table.str();
  if (getEnv("ATTN_SWEEP_VERBOSE"))
    std::cout << "coverage of " << n << " cases (seed " << sweepSeed() << "):\n"
              << table.str();
  RecordProperty("cases", n);
}

/// Same seed and index, same case: specs and input bytes.
TEST(SweepSanity, Deterministic) {
  for (int i : {0, 7, 33}) {
    Config a = makeConfig(1234, i), b = makeConfig(1234, i);
    SpecText sa = writeSpec(a), sb = writeSpec(b);
    EXPECT_EQ(sa.text, sb.text);
    std::vector<HostTensor> ia = makeInputs(a, sa), ib = makeInputs(b, sb);
    ASSERT_EQ(ia.size(), ib.size());
    for (size_t k = 0; k < ia.size(); ++k)
      EXPECT_EQ(ia[k].bytes, ib[k].bytes) << "argument " << k;
  }
  EXPECT_NE(writeSpec(makeConfig(1, 40)).text,
            writeSpec(makeConfig(2, 40)).text);
}

const char *kSanitySpec = R"mlir(
func.func @f(%q: tensor<2x2x3x4xf32>, %k: tensor<2x1x5x4xf32>,
             %v: tensor<2x1x5x3xf32>, %kv_len: tensor<2xi32>)
    -> (tensor<2x2x3x3xf32>, tensor<2x2x3xf32>) {
  %out, %lse = attn.attention q(%q : tensor<2x2x3x4xf32>)
      k(%k : tensor<2x1x5x4xf32>) v(%v : tensor<2x1x5x3xf32>)
      kv_len(%kv_len : tensor<2xi32>) CAUSAL
      -> tensor<2x2x3x3xf32>, tensor<2x2x3xf32>
  return %out, %lse : tensor<2x2x3x3xf32>, tensor<2x2x3xf32>
}
)mlir";

std::string sanitySpec(const std::string &causal) {
  std::string s = kSanitySpec;
  s.replace(s.find("CAUSAL"), 6, causal);
  return s;
}

/// Inputs of kSanitySpec: batch 0 reads no key (kv_len 0), batch 1 all 5.
std::vector<HostTensor> sanityInputs() {
  Rng rng(99);
  std::uniform_real_distribution<double> d(-1, 1);
  std::vector<HostTensor> in(4);
  std::vector<std::vector<int64_t>> shapes = {
      {2, 2, 3, 4}, {2, 1, 5, 4}, {2, 1, 5, 3}};
  for (int a = 0; a < 3; ++a) {
    in[a].resize(ElementKind::F32, shapes[a]);
    for (int64_t i = 0; i < in[a].numElements(); ++i)
      in[a].set(i, d(rng));
  }
  in[3].resize(ElementKind::I32, {2});
  in[3].set(0, 0);
  in[3].set(1, 5);
  return in;
}

/// Runs kSanitySpec (causal bottom-right) and checks it is within tolerance.
void runSanity(Executed &run) {
  std::string form = sweepForms().empty() ? "naive" : sweepForms()[0];
  std::string spec = sanitySpec("causal(bottom_right)");
  ASSERT_EQ(execute(spec, form, sanityInputs(), run), "") << spec;
  ASSERT_EQ(run.outputs.size(), 2u);
  for (size_t o = 0; o < 2; ++o)
    ASSERT_EQ(checkOutput("o", run.outputs[o], run.expected[o]), "")
        << "output " << o << " of the unperturbed run\n"
        << spec;
  // Batch 0 is fully masked: its outputs are exactly 0 and -inf.
  ASSERT_EQ(run.outputs[0].get(0), 0.0);
  ASSERT_TRUE(std::isinf(run.outputs[1].get(0)) && run.outputs[1].get(0) < 0);
}

/// Output `o` of `run` with element `i` replaced by `value`.
HostTensor perturbed(const Executed &run, size_t o, int64_t i, double value) {
  HostTensor t = run.outputs[o];
  t.set(i, value);
  return t;
}

int64_t compareMismatches(const Executed &run, size_t o, const HostTensor &t) {
  double atol, rtol;
  defaultTolerance(t.kind, atol, rtol);
  return compare(t, run.expected[o], atol, rtol).mismatches;
}

/// compare() and the sweep's check detect a 1e-2 error or a NaN in any
/// finite output element, out and lse alike.
TEST(SweepSanity, ComparisonDetectsPerturbation) {
  Executed run;
  ASSERT_NO_FATAL_FAILURE(runSanity(run));
  for (size_t o = 0; o < 2; ++o) {
    int64_t n = run.outputs[o].numElements();
    for (int64_t i : {int64_t(0), n / 2 + 1, n - 1}) {
      double v = run.outputs[o].get(i);
      if (!std::isfinite(v))
        continue;
      for (double w : {v + 1e-2, v - 1e-2, double(NAN)}) {
        HostTensor t = perturbed(run, o, i, w);
        EXPECT_EQ(compareMismatches(run, o, t), 1)
            << "output " << o << " element " << i << ": " << v << " -> " << w;
        EXPECT_NE(checkOutput("o", t, run.expected[o]), "")
            << "output " << o << " element " << i << ": " << v << " -> " << w;
      }
    }
  }
  // The fully masked row's out must stay exactly 0.
  EXPECT_EQ(compareMismatches(run, 0, perturbed(run, 0, 0, 1e-2)), 1);
  EXPECT_EQ(compareMismatches(run, 0, perturbed(run, 0, 0, NAN)), 1);
}

/// A fully masked row's lse must be exactly -inf. The sweep's check
/// (checkOutput) catches any other value on its own.
TEST(SweepSanity, SweepCheckDetectsWrongMaskedLse) {
  Executed run;
  ASSERT_NO_FATAL_FAILURE(runSanity(run));
  for (double w :
       {0.0, -1e30, std::numeric_limits<double>::infinity(), double(NAN)})
    EXPECT_NE(checkOutput("lse", perturbed(run, 1, 0, w), run.expected[1]), "")
        << "lse -inf -> " << w;
}

/// The same for compare() itself, which attn-run --verify uses. Its bound
/// atol + rtol * |ref| is infinite where the reference is +-inf, so it must
/// treat non-finite reference values separately (it once accepted any value
/// there, NaN included).
TEST(SweepSanity, CompareDetectsWrongMaskedLse) {
  Executed run;
  ASSERT_NO_FATAL_FAILURE(runSanity(run));
  for (double w :
       {0.0, -1e30, std::numeric_limits<double>::infinity(), double(NAN)})
    EXPECT_EQ(compareMismatches(run, 1, perturbed(run, 1, 0, w)), 1)
        << "lse -inf -> " << w;
}

/// A kernel with the wrong semantics fails the check the sweep makes: the
/// results of one spec compared with the reference of a slightly different
/// one (causal dropped, alignment flipped) mismatch.
TEST(SweepSanity, WrongSemanticsDetected) {
  std::string form = sweepForms().empty() ? "naive" : sweepForms()[0];
  const std::pair<const char *, const char *> pairs[] = {
      {"", "causal(top_left)"},
      {"causal(top_left)", "causal(bottom_right)"},
      {"causal(bottom_right)", "causal(bottom_right) window_left(1)"},
      {"causal(bottom_right)", "causal(bottom_right) scale(0.3)"},
  };
  for (auto [compiled, referenced] : pairs) {
    Executed actual, intended;
    ASSERT_EQ(execute(sanitySpec(compiled), form, sanityInputs(), actual), "");
    ASSERT_EQ(execute(sanitySpec(referenced), form, sanityInputs(), intended),
              "");
    EXPECT_NE(checkOutput("out", actual.outputs[0], intended.expected[0]), "")
        << "compiled with '" << compiled << "', checked against '" << referenced
        << "'";
  }
}

} // namespace

/// gtest_main, except that a --gtest_filter selecting no test fails: under
/// ctest it means the cached test list names a case this run's environment
/// does not instantiate, and an empty run must not count as a pass.
int main(int argc, char **argv) {
  ::testing::InitGoogleTest(&argc, argv);
  int rc = RUN_ALL_TESTS();
  const ::testing::UnitTest &unit = *::testing::UnitTest::GetInstance();
  if (rc == 0 && !GTEST_FLAG_GET(list_tests) && GTEST_FLAG_GET(filter) != "*" &&
      unit.test_to_run_count() == 0) {
    std::fprintf(stderr,
                 "AttnSweepTests: --gtest_filter=%s selects no test: the "
                 "case is not instantiated with this ATTN_SWEEP_CASES / "
                 "ATTN_SWEEP_FORMS (a stale ctest list? delete "
                 "'AttnSweepTests[1]_tests.cmake' in the build's "
                 "test/unittests to list the cases again)\n",
                 GTEST_FLAG_GET(filter).c_str());
    return 1;
  }
  return rc;
}
