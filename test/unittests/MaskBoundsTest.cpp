//===- MaskBoundsTest.cpp - per-tile classification of mask regions -------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// MaskBounds (include/attn/Schedule/MaskBounds.h) claims, for a box of
// (b, h, i, j), "no pair is allowed" (mayTrue false) or "every pair is"
// (mayFalse false). These tests check the claims against a brute-force
// evaluation of the same masks written independently in C++, on random boxes
// and parameters: a wrong claim would skip allowed keys or drop the mask from
// a partial tile. For masks made of comparisons of affine expressions that
// each use i and j once (causal, windows, prefix-LM, per-head offsets), the
// classification must also be exact. A failure prints the seed:
//
//   ATTN_MASKBOUNDS_SEED=<s> AttnScheduleTests --gtest_filter='MaskBounds*'
//
//===----------------------------------------------------------------------===//

#include "attn/Schedule/MaskBounds.h"
#include "attn/IR/AttnDialect.h"
#include "attn/IR/AttnOps.h"
#include "attn/Schedule/Schedule.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

using namespace mlir;
using namespace mlir::attn;

namespace {

struct MaskCase {
  std::string name;
  /// The region's body (after the block header), with the 4 index
  /// arguments %b, %h, %i, %j and, when `doc`, %d : tensor<?xi32>.
  std::string body;
  bool doc = false;
  /// Whether the classification must be exact (not only sound).
  bool exact = false;
  std::function<bool(int64_t b, int64_t h, int64_t i, int64_t j,
                     const std::vector<int32_t> &doc)>
      allowed;
};

std::vector<MaskCase> cases() {
  std::vector<MaskCase> c;
  c.push_back({"causal",
               "%t = arith.cmpi sle, %j, %i : index\n attn.yield %t : i1",
               false, true,
               [](int64_t, int64_t, int64_t i, int64_t j,
                  const std::vector<int32_t> &) { return j <= i; }});
  c.push_back(
      {"window",
       R"(%c5 = arith.constant 5 : index
  %c3 = arith.constant 3 : index
  %d = arith.subi %i, %j : index
  %l = arith.cmpi sle, %d, %c5 : index
  %e = arith.subi %j, %i : index
  %r = arith.cmpi sle, %e, %c3 : index
  %t = arith.andi %l, %r : i1
  attn.yield %t : i1)",
       false, false,
       [](int64_t, int64_t, int64_t i, int64_t j,
          const std::vector<int32_t> &) { return i - j <= 5 && j - i <= 3; }});
  c.push_back({"prefix_lm",
               R"(%c7 = arith.constant 7 : index
  %p = arith.cmpi slt, %j, %c7 : index
  %q = arith.cmpi sle, %j, %i : index
  %t = arith.ori %p, %q : i1
  attn.yield %t : i1)",
               false, false,
               [](int64_t, int64_t, int64_t i, int64_t j,
                  const std::vector<int32_t> &) { return j < 7 || j <= i; }});
  c.push_back({"per_head",
               R"(%c2 = arith.constant 2 : index
  %s = arith.muli %h, %c2 : index
  %w = arith.addi %i, %s : index
  %t = arith.cmpi sle, %j, %w : index
  attn.yield %t : i1)",
               false, true,
               [](int64_t, int64_t h, int64_t i, int64_t j,
                  const std::vector<int32_t> &) { return j <= i + 2 * h; }});
  c.push_back({"dilated",
               R"(%c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c9 = arith.constant 9 : index
  %d = arith.subi %i, %j : index
  %a = arith.cmpi sge, %d, %c0 : index
  %n = arith.cmpi sle, %d, %c9 : index
  %r = arith.remsi %d, %c3 : index
  %z = arith.cmpi eq, %r, %c0 : index
  %an = arith.andi %a, %n : i1
  %t = arith.andi %an, %z : i1
  attn.yield %t : i1)",
               false, false,
               [](int64_t, int64_t, int64_t i, int64_t j,
                  const std::vector<int32_t> &) {
                 int64_t d = i - j;
                 return d >= 0 && d <= 9 && d % 3 == 0;
               }});
  c.push_back({"blocks",
               R"(%c4 = arith.constant 4 : index
  %bi = arith.floordivsi %i, %c4 : index
  %bj = arith.divsi %j, %c4 : index
  %t = arith.cmpi ne, %bi, %bj : index
  %f = arith.constant true
  %n = arith.xori %t, %f : i1
  attn.yield %n : i1)",
               false, false,
               [](int64_t, int64_t, int64_t i, int64_t j,
                  const std::vector<int32_t> &) { return i / 4 == j / 4; }});
  // Products that wrap: i * 2^60 > 0 holds for i = 1..7 only (mod 2^64).
  c.push_back(
      {"overflow",
       R"(%c = arith.constant 1152921504606846976 : index
  %z = arith.constant 0 : index
  %m = arith.muli %i, %c : index
  %t = arith.cmpi sgt, %m, %z : index
  attn.yield %t : i1)",
       false, false,
       [](int64_t, int64_t, int64_t i, int64_t, const std::vector<int32_t> &) {
         return static_cast<int64_t>(static_cast<uint64_t>(i) *
                                     (uint64_t(1) << 60)) > 0;
       }});
  c.push_back({"document",
               R"(%di = tensor.extract %d[%i] : tensor<?xi32>
  %dj = tensor.extract %d[%j] : tensor<?xi32>
  %t = arith.cmpi eq, %di, %dj : i32
  attn.yield %t : i1)",
               true, false,
               [](int64_t, int64_t, int64_t i, int64_t j,
                  const std::vector<int32_t> &d) { return d[i] == d[j]; }});
  c.push_back(
      {"document_causal_select",
       R"(%di = tensor.extract %d[%i] : tensor<?xi32>
  %dj = tensor.extract %d[%j] : tensor<?xi32>
  %s = arith.cmpi eq, %di, %dj : i32
  %c = arith.cmpi sle, %j, %i : index
  %f = arith.constant false
  %t = arith.select %c, %s, %f : i1
  attn.yield %t : i1)",
       true, false,
       [](int64_t, int64_t, int64_t i, int64_t j,
          const std::vector<int32_t> &d) { return j <= i && d[i] == d[j]; }});
  return c;
}

class MaskBoundsTest : public ::testing::Test {
protected:
  MaskBoundsTest() { ctx.loadDialect<AttnDialect, func::FuncDialect>(); }

  OwningOpRef<ModuleOp> parse(const MaskCase &c) {
    std::string doc = c.doc ? ", %d: tensor<?xi32>" : "";
    std::string text =
        "func.func @f(%qq: tensor<1x4x?x8xf32>" +
        std::string(c.doc ? ", %doc: tensor<?xi32>" : "") +
        ") -> tensor<1x4x?x8xf32> {\n"
        "  %o = attn.attention q(%qq : tensor<1x4x?x8xf32>) "
        "k(%qq : tensor<1x4x?x8xf32>) v(%qq : tensor<1x4x?x8xf32>) " +
        std::string(c.doc ? "mod_inputs(%doc : tensor<?xi32>) " : "") +
        "mask_mod {\n ^bb0(%b: index, %h: index, %i: index, %j: index" + doc +
        "):\n  " + c.body + "\n } -> tensor<1x4x?x8xf32>\n" +
        "  return %o : tensor<1x4x?x8xf32>\n}\n";
    return parseSourceString<ModuleOp>(text, &ctx);
  }

  MLIRContext ctx;
};

TEST_F(MaskBoundsTest, SoundOnRandomBoxes) {
  unsigned seed = std::random_device{}();
  if (const char *s = std::getenv("ATTN_MASKBOUNDS_SEED"))
    seed = std::strtoul(s, nullptr, 10);
  SCOPED_TRACE("replay: ATTN_MASKBOUNDS_SEED=" + std::to_string(seed));
  std::mt19937 rng(seed);
  auto uniform = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (const MaskCase &c : cases()) {
    SCOPED_TRACE(c.name);
    OwningOpRef<ModuleOp> module = parse(c);
    ASSERT_TRUE(module) << "the test's region does not parse";
    AttentionOp op;
    module->walk([&](AttentionOp a) { op = a; });
    Block &region = *op.getMaskModBlock();
    constexpr int64_t n = 48;
    for (int trial = 0; trial < 400; ++trial) {
      // Documents: sorted ids, a few segments.
      std::vector<int32_t> doc(n);
      int32_t id = 0;
      for (int64_t t = 0; t < n; ++t) {
        if (t > 0 && uniform(0, 9) == 0)
          ++id;
        doc[t] = id;
      }
      auto range = [&](unsigned, ArrayRef<std::pair<int64_t, int64_t>> box)
          -> std::optional<std::pair<int64_t, int64_t>> {
        int64_t lo = std::max<int64_t>(box[0].first, 0);
        int64_t hi = std::min<int64_t>(box[0].second, n - 1);
        if (lo > hi)
          return std::nullopt;
        int64_t mn = doc[lo], mx = doc[lo];
        for (int64_t t = lo; t <= hi; ++t) {
          mn = std::min<int64_t>(mn, doc[t]);
          mx = std::max<int64_t>(mx, doc[t]);
        }
        return std::make_pair(mn, mx);
      };
      int64_t i0 = uniform(0, n - 1),
              i1 = uniform(i0, std::min(n - 1, i0 + 16));
      int64_t j0 = uniform(0, n - 1),
              j1 = uniform(j0, std::min(n - 1, j0 + 16));
      int64_t h0 = uniform(0, 3), h1 = uniform(h0, 3);
      HostArith a;
      MaskBounds<HostArith> bounds(region, a, range);
      auto t = bounds.classify({0, 0, h0, h1, i0, i1, j0, j1});
      bool any = false, all = true;
      for (int64_t h = h0; h <= h1; ++h)
        for (int64_t i = i0; i <= i1; ++i)
          for (int64_t j = j0; j <= j1; ++j) {
            bool ok = c.allowed(0, h, i, j, doc);
            any |= ok;
            all &= ok;
          }
      std::string box = "box h [" + std::to_string(h0) + ", " +
                        std::to_string(h1) + "] i [" + std::to_string(i0) +
                        ", " + std::to_string(i1) + "] j [" +
                        std::to_string(j0) + ", " + std::to_string(j1) + "]";
      // Soundness: a tile called empty has no allowed pair; one called full
      // has no denied pair.
      ASSERT_TRUE(t.mayTrue || !any) << "skipped an allowed pair, " << box;
      ASSERT_TRUE(t.mayFalse || all)
          << "dropped the mask of a denied pair, " << box;
      if (c.exact) {
        EXPECT_EQ(t.mayTrue, any) << box;
        EXPECT_EQ(t.mayFalse, !all) << box;
      }
    }
  }
}

// Document masks are classified from the ranges of the ids, not evaluated:
// tiles inside one document are full, tiles between two are empty.
TEST_F(MaskBoundsTest, DocumentTiles) {
  MaskCase c = cases()[7];
  ASSERT_EQ(c.name, "document");
  OwningOpRef<ModuleOp> module = parse(c);
  ASSERT_TRUE(module);
  AttentionOp op;
  module->walk([&](AttentionOp a) { op = a; });
  std::vector<int64_t> doc = {0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2};
  auto range = [&](unsigned, ArrayRef<std::pair<int64_t, int64_t>> box)
      -> std::optional<std::pair<int64_t, int64_t>> {
    return std::make_pair(doc[box[0].first], doc[box[0].second]);
  };
  HostArith a;
  MaskBounds<HostArith> bounds(*op.getMaskModBlock(), a, range);
  auto same = bounds.classify({0, 0, 0, 3, 4, 7, 4, 7});
  EXPECT_TRUE(same.mayTrue);
  EXPECT_FALSE(same.mayFalse);
  auto apart = bounds.classify({0, 0, 0, 3, 0, 3, 8, 11});
  EXPECT_FALSE(apart.mayTrue);
  EXPECT_TRUE(apart.mayFalse);
  auto straddle = bounds.classify({0, 0, 0, 3, 2, 5, 4, 7});
  EXPECT_TRUE(straddle.mayTrue);
  EXPECT_TRUE(straddle.mayFalse);
  // Unknown ranges (a tensor the callback cannot summarize): partial.
  auto unknown = [](unsigned, ArrayRef<std::pair<int64_t, int64_t>>)
      -> std::optional<std::pair<int64_t, int64_t>> { return std::nullopt; };
  MaskBounds<HostArith> blind(*op.getMaskModBlock(), a, unknown);
  auto t = blind.classify({0, 0, 0, 3, 0, 3, 8, 11});
  EXPECT_TRUE(t.mayTrue);
  EXPECT_TRUE(t.mayFalse);
}

} // namespace
