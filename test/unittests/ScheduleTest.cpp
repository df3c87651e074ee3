//===- ScheduleTest.cpp - the shared schedule on the host and in IR -------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// The schedule (include/attn/Schedule/Schedule.h) is one piece of code
// evaluated two ways: on the host (attn-run's tile map and FLOP count) and
// as IR inside the generated kernels. These tests check small cases by hand
// and then, on random shapes, masks and tile sizes, that the tiles an
// instrumented fused or split-KV kernel computes are exactly the tiles the
// host evaluation predicts (each exactly once, with the same boundary/full
// classification). A failure prints the seed and case to replay:
//
//   ATTN_SCHEDULE_SEED=<s> ATTN_SCHEDULE_CASE=<i> AttnScheduleTests
//
//===----------------------------------------------------------------------===//

#include "attn/Schedule/Schedule.h"
#include "attn/Execution/Jit.h"
#include "attn/IR/AttnDialect.h"

#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <sstream>

using namespace mlir;
using namespace mlir::attn;

namespace {

std::pair<int64_t, int64_t> range(int64_t lo, int64_t hi) { return {lo, hi}; }

std::string kinds(const Schedule &s, int64_t nq, int64_t nk, int64_t kvLen) {
  std::string out;
  for (int64_t qt = 0; qt < s.numQueryTiles(nq); ++qt) {
    for (int64_t kt = 0; kt < s.numKeyTiles(nk); ++kt) {
      TileKind k = s.classify(qt, kt, nq, nk, kvLen);
      out += k == TileKind::Full ? '#' : k == TileKind::Boundary ? '+' : '.';
    }
    out += '\n';
  }
  return out;
}

TEST(Schedule, CausalTopLeft) {
  ScheduleSpec spec;
  spec.causal = true;
  spec.tiles = {4, 4};
  Schedule s(spec);
  EXPECT_EQ(kinds(s, 16, 16, 16), "+...\n#+..\n##+.\n###+\n");
  // Row 5 reads keys [0, 6).
  EXPECT_EQ(s.rowKeys(5, 16, 16), range(0, 6));
  EXPECT_EQ(s.allowedPairs(16, 16), 16.0 * 17 / 2);
}

TEST(Schedule, CausalBottomRightWithKvLen) {
  // 4 new queries against a cache of which 10 keys are valid: query i sits
  // at position i + 10 - 4 and reads keys [0, i + 7).
  ScheduleSpec spec;
  spec.causal = true;
  spec.bottomRight = true;
  spec.tiles = {4, 4};
  Schedule s(spec);
  EXPECT_EQ(kinds(s, 4, 16, 10), "#++.\n");
  EXPECT_EQ(s.rowKeys(0, 4, 10), range(0, 7));
  EXPECT_EQ(s.rowKeys(3, 4, 10), range(0, 10));
  // An empty cache: nothing to read, every tile skipped.
  EXPECT_EQ(kinds(s, 4, 16, 0), "....\n");
}

TEST(Schedule, SlidingWindow) {
  ScheduleSpec spec;
  spec.causal = true;
  spec.windowLeft = 4;
  spec.tiles = {4, 4};
  Schedule s(spec);
  EXPECT_EQ(kinds(s, 16, 16, 16), "+...\n++..\n.++.\n..++\n");
  EXPECT_EQ(s.rowKeys(9, 16, 16), range(5, 10));
}

TEST(Schedule, SplitsPartitionTheTiles) {
  ScheduleSpec spec;
  spec.tiles = {1, 16};
  spec.splits = 3;
  Schedule s(spec);
  EXPECT_EQ(s.grid(2, 8, 1), (llvm::SmallVector<int64_t>{2, 8, 1, 3}));
  // 7 key tiles in chunks of ceil(7 / 3) = 3: [0, 3), [3, 6), [6, 7).
  EXPECT_EQ(s.keyTileRange(0, 1, 100, 0), range(0, 3));
  EXPECT_EQ(s.keyTileRange(0, 1, 100, 1), range(3, 6));
  EXPECT_EQ(s.keyTileRange(0, 1, 100, 2), range(6, 7));
  // Fewer tiles than splits: trailing splits are empty.
  auto last = s.keyTileRange(0, 1, 20, 2);
  EXPECT_EQ(last.first, last.second);
}

TEST(Schedule, FilledSplitsLeaveNoChunkEmpty) {
  ScheduleSpec spec;
  HostArith a;
  TileRules<HostArith> rules(spec, a);
  // 8 tiles: 6 chunks of 2 fill 4; 3 of 3 fill 3; 5 of 2 fill 4.
  EXPECT_EQ(rules.filledSplits(8, 6), 4);
  EXPECT_EQ(rules.filledSplits(8, 3), 3);
  EXPECT_EQ(rules.filledSplits(8, 5), 4);
  EXPECT_EQ(rules.filledSplits(8, 8), 8);
  EXPECT_EQ(rules.filledSplits(8, 1), 1);
  // Every chunk of the filled count is non-empty, for every tile count.
  for (int64_t tiles = 1; tiles <= 40; ++tiles)
    for (int64_t n = 1; n <= tiles; ++n) {
      int64_t f = rules.filledSplits(tiles, n);
      EXPECT_LE(f, n);
      for (int64_t s = 0; s < f; ++s) {
        auto [lo, hi] = rules.splitTiles(0, tiles, s, f);
        EXPECT_LT(lo, hi) << tiles << " tiles, " << f << " chunks, chunk " << s;
      }
    }
}

/// One random case: a spec, its sizes and the form's tiles.
struct Case {
  int64_t batch, hkv, group, nq, nk, d = 16, tq, tk, splits;
  std::string causal; // "", "top_left", "bottom_right"
  std::optional<int64_t> left, right;
  bool kvLen;
  std::vector<int64_t> kvLens;

  std::string spec() const {
    std::ostringstream os;
    int64_t hq = hkv * group;
    auto t4 = [&](int64_t h, int64_t n) {
      std::ostringstream t;
      t << "tensor<" << batch << "x" << h << "x" << n << "x" << d << "xf32>";
      return t.str();
    };
    os << "func.func @f(%q: " << t4(hq, nq) << ", %k: " << t4(hkv, nk)
       << ", %v: " << t4(hkv, nk);
    if (kvLen)
      os << ", %len: tensor<" << batch << "xi64>";
    os << ") -> " << t4(hq, nq)
       << " {\n  %o = attn.attention q(%q : " << t4(hq, nq)
       << ") k(%k : " << t4(hkv, nk) << ") v(%v : " << t4(hkv, nk) << ")";
    if (kvLen)
      os << " kv_len(%len : tensor<" << batch << "xi64>)";
    if (!causal.empty())
      os << " causal(" << causal << ")";
    if (left)
      os << " window_left(" << *left << ")";
    if (right)
      os << " window_right(" << *right << ")";
    os << " -> " << t4(hq, nq) << "\n  return %o : " << t4(hq, nq) << "\n}\n";
    return os.str();
  }

  std::string describe() const {
    std::ostringstream os;
    os << "B=" << batch << " Hkv=" << hkv << " R=" << group << " Nq=" << nq
       << " Nk=" << nk << " tiles=" << tq << "x" << tk << " splits=" << splits
       << " causal=" << (causal.empty() ? "none" : causal)
       << " left=" << (left ? std::to_string(*left) : "none")
       << " right=" << (right ? std::to_string(*right) : "none") << " kv_len=";
    for (int64_t l : kvLens)
      os << l << ",";
    return os.str();
  }
};

Case randomCase(std::mt19937_64 &rng) {
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  Case c;
  c.batch = pick(1, 2);
  c.hkv = pick(1, 2);
  c.group = pick(1, 3);
  c.nk = pick(1, 80);
  c.splits = pick(0, 1) ? pick(1, 4) : 0;
  c.nq = c.splits ? pick(1, 8) : pick(1, 80);
  int64_t tiles[] = {4, 8, 16, 32};
  c.tq = tiles[pick(0, 3)];
  c.tk = tiles[pick(1, 3)];
  const char *causals[] = {"", "top_left", "bottom_right"};
  c.causal = causals[pick(0, 2)];
  if (pick(0, 2) == 0)
    c.left = pick(0, 24);
  if (pick(0, 3) == 0)
    c.right = pick(0, 24);
  c.kvLen = pick(0, 1);
  for (int64_t b = 0; b < c.batch; ++b)
    c.kvLens.push_back(c.kvLen ? pick(0, c.nk) : c.nk);
  return c;
}

/// The tiles the host evaluation of the schedule predicts.
std::vector<TileVisit> predicted(const Case &c) {
  ScheduleSpec spec;
  spec.causal = !c.causal.empty();
  spec.bottomRight = c.causal == "bottom_right";
  spec.windowLeft = c.left;
  spec.windowRight = c.right;
  spec.tiles = {c.tq, c.tk};
  spec.splits = c.splits;
  Schedule s(spec);
  std::vector<TileVisit> out;
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t g = 0; g < c.hkv; ++g)
      for (int64_t qt = 0; qt < s.numQueryTiles(c.nq); ++qt)
        for (int64_t split = 0; split < std::max<int64_t>(c.splits, 1);
             ++split) {
          auto [lo, hi] =
              s.keyTileRange(qt, c.nq, c.kvLens[b], c.splits ? split : -1);
          for (int64_t kt = lo; kt < hi; ++kt)
            out.push_back({b, g, qt, kt,
                           s.classify(qt, kt, c.nq, c.nk, c.kvLens[b]) ==
                               TileKind::Boundary});
        }
  std::sort(out.begin(), out.end());
  return out;
}

class ScheduleAgreement : public ::testing::Test {
protected:
  void SetUp() override {
    registerAllDialects(registry);
    registerAllExtensions(registry);
    registry.insert<AttnDialect>();
    context = std::make_unique<MLIRContext>(registry);
    context->loadAllAvailableDialects();
  }
  DialectRegistry registry;
  std::unique_ptr<MLIRContext> context;
};

TEST_F(ScheduleAgreement, KernelsComputeThePredictedTiles) {
  uint64_t seed = 20261130;
  if (const char *s = std::getenv("ATTN_SCHEDULE_SEED"))
    seed = std::strtoull(s, nullptr, 10);
  int first = 0, count = 40;
  if (const char *s = std::getenv("ATTN_SCHEDULE_CASE")) {
    first = std::atoi(s);
    count = 1;
  }
  for (int i = first; i < first + count; ++i) {
    std::mt19937_64 rng(seed + i);
    Case c = randomCase(rng);
    SCOPED_TRACE("replay: ATTN_SCHEDULE_SEED=" + std::to_string(seed) +
                 " ATTN_SCHEDULE_CASE=" + std::to_string(i) + " (" +
                 c.describe() + ")");
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(c.spec(), context.get());
    ASSERT_TRUE(module) << c.spec();
    JitOptions opts;
    opts.form = c.splits ? AttentionForm::Decode : AttentionForm::Fused;
    opts.tileQ = c.tq;
    opts.tileK = c.tk;
    opts.splits = c.splits ? c.splits : 4;
    opts.instrumentTiles = true;
    opts.parallel = false;
    opts.optLevel = 1;
    auto jit = JitFunction::compile(*module, "f", opts);
    ASSERT_TRUE(!!jit) << llvm::toString(jit.takeError());
    std::vector<HostTensor> args(c.kvLen ? 4 : 3);
    int64_t hq = c.hkv * c.group;
    args[0].resize(ElementKind::F32, {c.batch, hq, c.nq, c.d});
    args[1].resize(ElementKind::F32, {c.batch, c.hkv, c.nk, c.d});
    args[2].resize(ElementKind::F32, {c.batch, c.hkv, c.nk, c.d});
    if (c.kvLen) {
      args[3].resize(ElementKind::I64, {c.batch});
      for (int64_t b = 0; b < c.batch; ++b)
        args[3].set(b, static_cast<double>(c.kvLens[b]));
    }
    std::vector<const HostTensor *> ptrs;
    for (auto &a : args)
      ptrs.push_back(&a);
    std::vector<HostTensor> results;
    JitFunction::setTileLogging(true);
    JitFunction::resetTileCounters();
    llvm::Error err = (*jit)->invoke(ptrs, results);
    ASSERT_FALSE(!!err) << llvm::toString(std::move(err));
    std::vector<TileVisit> got = JitFunction::visitedTiles();
    JitFunction::setTileLogging(false);
    std::sort(got.begin(), got.end());
    std::vector<TileVisit> want = predicted(c);
    ASSERT_EQ(got.size(), want.size());
    EXPECT_TRUE(got == want);
  }
}

} // namespace
