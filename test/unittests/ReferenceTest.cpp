//===- ReferenceTest.cpp - tests for the f64 attention reference ----------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// Hand-computed cases for attn::ref (docs/semantics.md), including the worked
// examples of the seed document (shared/seed/000_*.txt).
//
// A trick used throughout: with q = 0 every dot product is 0, and with
// v = identity ([Nk, Nk] per head) the output row equals the weight row.
// That turns "which keys may query i read" into a uniform distribution over
// exactly those keys, easy to write down by hand.
//
//===----------------------------------------------------------------------===//

#include "attn/Reference/Reference.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

using namespace attn::ref;

namespace {

constexpr double kTol = 1e-12;
constexpr double kInf = std::numeric_limits<double>::infinity();

Tensor makeTensor(std::vector<int64_t> shape, std::vector<double> data) {
  return Tensor{std::move(shape), std::move(data)};
}

/// Deterministic pseudo-random values in [-1, 1).
Tensor randomTensor(std::vector<int64_t> shape, uint64_t seed) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  Tensor t{std::move(shape), std::vector<double>(n)};
  uint64_t s = seed * 6364136223846793005ull + 1442695040888963407ull;
  for (double &x : t.data) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    x = static_cast<double>(s >> 11) / static_cast<double>(1ull << 53) * 2.0 -
        1.0;
  }
  return t;
}

/// Element [a, b, c, d] of a rank-4 tensor.
double &at(Tensor &t, int64_t a, int64_t b, int64_t c, int64_t d) {
  return t.data[((a * t.shape[1] + b) * t.shape[2] + c) * t.shape[3] + d];
}
double at(const Tensor &t, int64_t a, int64_t b, int64_t c, int64_t d) {
  return t.data[((a * t.shape[1] + b) * t.shape[2] + c) * t.shape[3] + d];
}

Outputs run(const Spec &spec, const Inputs &in) {
  Outputs o;
  std::string err = attention(spec, in, o);
  EXPECT_EQ(err, "");
  return o;
}

/// The "uniform" setup: q = 0 (Dqk = 1), k = 1, v = identity per head.
/// Output row [b, h, i, :] is then the weight row of query i.
struct Uniform {
  Tensor q, k, v;
  Uniform(int64_t b, int64_t h, int64_t nq, int64_t nk)
      : q{{b, h, nq, 1}, std::vector<double>(b * h * nq, 0.0)},
        k{{b, h, nk, 1}, std::vector<double>(b * h * nk, 1.0)},
        v{{b, h, nk, nk}, std::vector<double>(b * h * nk * nk, 0.0)} {
    for (int64_t x = 0; x < b; ++x)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t j = 0; j < nk; ++j)
          at(v, x, y, j, j) = 1.0;
  }
  Inputs inputs() const {
    Inputs in;
    in.q = &q;
    in.k = &k;
    in.v = &v;
    return in;
  }
};

/// Weight row [b, h, i, :] of a "uniform" run.
std::vector<double> row(const Outputs &o, int64_t b, int64_t h, int64_t i) {
  std::vector<double> r;
  for (int64_t j = 0; j < o.out.shape[3]; ++j)
    r.push_back(at(o.out, b, h, i, j));
  return r;
}

void expectRow(const std::vector<double> &got, const std::vector<double> &want,
               double tol = kTol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t j = 0; j < want.size(); ++j)
    EXPECT_NEAR(got[j], want[j], tol) << "at key " << j;
}

void expectNear(const Tensor &a, const Tensor &b, double tol) {
  ASSERT_EQ(a.shape, b.shape);
  ASSERT_EQ(a.data.size(), b.data.size());
  for (size_t i = 0; i < a.data.size(); ++i)
    EXPECT_NEAR(a.data[i], b.data[i], tol) << "at flat index " << i;
}

//===----------------------------------------------------------------------===//
// The seed's softmax examples
//===----------------------------------------------------------------------===//

/// One query, three keys with scale 1 and Dqk = 1: logits are k itself.
Outputs softmaxOf(const std::vector<double> &logits) {
  int64_t n = static_cast<int64_t>(logits.size());
  Tensor q = makeTensor({1, 1, 1, 1}, {1.0});
  Tensor k = makeTensor({1, 1, n, 1}, logits);
  Tensor v{{1, 1, n, n}, std::vector<double>(n * n, 0.0)};
  for (int64_t j = 0; j < n; ++j)
    at(v, 0, 0, j, j) = 1.0;
  Spec spec;
  spec.scale = 1.0;
  Inputs in;
  in.q = &q;
  in.k = &k;
  in.v = &v;
  return run(spec, in);
}

TEST(ReferenceSeed, SoftmaxSmooth) {
  // softmax([0.2, 0.5, 0.8]): e^0.2 = 1.221403, e^0.5 = 1.648721,
  // e^0.8 = 2.225541, sum 5.095665 -> [0.239694, 0.323554, 0.436752].
  Outputs o = softmaxOf({0.2, 0.5, 0.8});
  expectRow(row(o, 0, 0, 0),
            {0.23969447920584977, 0.32355370388335947, 0.43675181691079079});
  // lse = log(5.095665) = 1.628390.
  EXPECT_NEAR(o.lse.data[0], 1.6283901699061243, kTol);
}

TEST(ReferenceSeed, SoftmaxSharp) {
  // softmax([2, 5, 8]) = [e^-6, e^-3, 1] / (1 + e^-3 + e^-6).
  Outputs o = softmaxOf({2, 5, 8});
  expectRow(row(o, 0, 0, 0),
            {0.0023556330807966799, 0.047314155221824035, 0.9503302116973793});
  EXPECT_NEAR(o.lse.data[0], 8.0509457635229982, kTol);
}

TEST(ReferenceSeed, SoftmaxSaturated) {
  // softmax([20, 50, 80]) = [e^-60, e^-30, 1] / (1 + e^-30 + e^-60).
  Outputs o = softmaxOf({20, 50, 80});
  std::vector<double> r = row(o, 0, 0, 0);
  EXPECT_NEAR(r[0] / 8.7565107626957021e-27, 1.0, 1e-12);
  EXPECT_NEAR(r[1] / 9.3576229688393001e-14, 1.0, 1e-12);
  EXPECT_NEAR(r[2], 0.99999999999990652, kTol);
  EXPECT_NEAR(o.lse.data[0], 80.0 + std::log1p(std::exp(-30.0)), kTol);
}

TEST(ReferenceSeed, SoftmaxSubtractsTheMax) {
  // exp(1000) overflows a double; with the max subtracted the weights are
  // [1, e] / (1 + e) = [0.268941, 0.731059] and lse = 1001 + log(1 + e^-1).
  Outputs o = softmaxOf({1000, 1001});
  expectRow(row(o, 0, 0, 0), {0.2689414213699951, 0.7310585786300049});
  EXPECT_NEAR(o.lse.data[0], 1001.3132616875182, 1e-9);
}

TEST(ReferenceSeed, WorkedExampleThreeTokens) {
  // Q = K = [[1,0],[0,1],[1,1]], V = [[1,0],[0,2],[1,1]], Dh = 2.
  // Third query: dots [1, 1, 2], scaled [0.707, 0.707, 1.414];
  // a = [1, 1, e^(1/sqrt2)] / (2 + e^(1/sqrt2)) = [0.248, 0.248, 0.503];
  // z3 = 0.248*[1,0] + 0.248*[0,2] + 0.503*[1,1] = [a0 + a2, 2*a0 + a2]
  //    = [0.752, 1] (the seed prints 0.999 from its rounded weights;
  //      2*a0 + a2 = a0 + a1 + a2 = 1 exactly).
  Tensor qk = makeTensor({1, 1, 3, 2}, {1, 0, 0, 1, 1, 1});
  Tensor v = makeTensor({1, 1, 3, 2}, {1, 0, 0, 2, 1, 1});
  Inputs in;
  in.q = &qk;
  in.k = &qk;
  in.v = &v;
  Outputs o = run(Spec{}, in);

  const double r = 1.0 / std::sqrt(2.0);
  const double a0 = 1.0 / (2.0 + std::exp(r));
  EXPECT_NEAR(a0, 0.24825507825772311, kTol);
  EXPECT_NEAR(at(o.out, 0, 0, 2, 0), 0.75174492174227692, kTol);
  EXPECT_NEAR(at(o.out, 0, 0, 2, 1), 1.0, kTol);
  EXPECT_NEAR(o.lse.data[2], 2.1004053012281645, kTol); // log(2e^r + e^2r)

  // First query [1,0]: logits [r, 0, r] -> weights [w, 1-2w, w] with
  // w = e^r / (2e^r + 1) = 0.401112; z1 = [2w, 2(1-2w) + w].
  const double w = std::exp(r) / (2.0 * std::exp(r) + 1.0);
  EXPECT_NEAR(at(o.out, 0, 0, 0, 0), 2 * w, kTol);
  EXPECT_NEAR(at(o.out, 0, 0, 0, 1), 2 * (1 - 2 * w) + w, kTol);
  EXPECT_NEAR(at(o.out, 0, 0, 0, 0), 0.80222418535957185, kTol);
  EXPECT_NEAR(at(o.out, 0, 0, 0, 1), 0.79666372196064228, kTol);
  // Second query [0,1]: logits [0, r, r] -> weights [1-2w, w, w].
  EXPECT_NEAR(at(o.out, 0, 0, 1, 0), 0.59888790732021413, kTol);
  EXPECT_NEAR(at(o.out, 0, 0, 1, 1), 1.2033362780393577, kTol);
}

TEST(ReferenceSeed, CausalVisibilityTable) {
  // The seed's 4-token table: query i sees keys 0..i, uniformly here.
  Uniform u(1, 1, 4, 4);
  Spec spec;
  spec.causal = Causal::TopLeft;
  Outputs o = run(spec, u.inputs());
  expectRow(row(o, 0, 0, 0), {1, 0, 0, 0});
  expectRow(row(o, 0, 0, 1), {0.5, 0.5, 0, 0});
  expectRow(row(o, 0, 0, 2), {1. / 3, 1. / 3, 1. / 3, 0});
  expectRow(row(o, 0, 0, 3), {0.25, 0.25, 0.25, 0.25});
  // lse of a uniform row of zero logits is log(count).
  EXPECT_NEAR(o.lse.data[2], std::log(3.0), kTol);
}

//===----------------------------------------------------------------------===//
// Masking
//===----------------------------------------------------------------------===//

TEST(ReferenceMask, CausalRowZeroReadsOnlyKeyZero) {
  Tensor q = randomTensor({1, 2, 3, 4}, 1);
  Tensor k = randomTensor({1, 2, 3, 4}, 2);
  Tensor v = randomTensor({1, 2, 3, 5}, 3);
  Spec spec;
  spec.causal = Causal::TopLeft;
  Inputs in;
  in.q = &q;
  in.k = &k;
  in.v = &v;
  Outputs o = run(spec, in);
  for (int64_t h = 0; h < 2; ++h) {
    // One allowed key: weight exp(0)/1 = 1 exactly, so out = v[0] exactly.
    for (int64_t x = 0; x < 5; ++x)
      EXPECT_EQ(at(o.out, 0, h, 0, x), at(v, 0, h, 0, x));
    double dot = 0;
    for (int64_t x = 0; x < 4; ++x)
      dot += at(q, 0, h, 0, x) * at(k, 0, h, 0, x);
    EXPECT_NEAR(o.lse.data[h * 3 + 0], dot / 2.0, kTol); // lse = s00
  }
  // And row 0 differs from the unmasked result (the mask does something).
  Outputs full = run(Spec{}, in);
  EXPECT_NE(at(full.out, 0, 0, 0, 0), at(o.out, 0, 0, 0, 0));
}

TEST(ReferenceMask, BottomRightVersusTopLeft) {
  // Nq = 2, Nk = 4. Top-left: p(i) = i. Bottom-right: p(i) = i + 4 - 2.
  Uniform u(1, 1, 2, 4);
  Spec tl;
  tl.causal = Causal::TopLeft;
  Outputs a = run(tl, u.inputs());
  expectRow(row(a, 0, 0, 0), {1, 0, 0, 0});
  expectRow(row(a, 0, 0, 1), {0.5, 0.5, 0, 0});

  Spec br;
  br.causal = Causal::BottomRight;
  Outputs b = run(br, u.inputs());
  expectRow(row(b, 0, 0, 0), {1. / 3, 1. / 3, 1. / 3, 0});
  expectRow(row(b, 0, 0, 1), {0.25, 0.25, 0.25, 0.25});

  // With Nq == Nk the two alignments coincide.
  Uniform sq(1, 1, 3, 3);
  Outputs c = run(tl, sq.inputs()), d = run(br, sq.inputs());
  EXPECT_EQ(c.out.data, d.out.data);
}

TEST(ReferenceMask, FullyMaskedRowIsZeroWithLseMinusInf) {
  Tensor q = randomTensor({1, 1, 2, 3}, 4);
  Tensor k = randomTensor({1, 1, 3, 3}, 5);
  Tensor v = randomTensor({1, 1, 3, 2}, 6);
  // Mask [Nq, Nk]: row 0 reads nothing, row 1 reads key 2 only.
  Tensor mask = makeTensor({2, 3}, {0, 0, 0, 0, 0, 1});
  Inputs in;
  in.q = &q;
  in.k = &k;
  in.v = &v;
  in.mask = &mask;
  Outputs o = run(Spec{}, in);
  EXPECT_EQ(at(o.out, 0, 0, 0, 0), 0.0);
  EXPECT_EQ(at(o.out, 0, 0, 0, 1), 0.0);
  EXPECT_EQ(o.lse.data[0], -kInf);
  EXPECT_EQ(at(o.out, 0, 0, 1, 0), at(v, 0, 0, 2, 0));
  EXPECT_EQ(at(o.out, 0, 0, 1, 1), at(v, 0, 0, 2, 1));
  EXPECT_TRUE(std::isfinite(o.lse.data[1]));

  // The same with kvLen = 0, and with -inf bias on every key.
  std::vector<int64_t> kvLen = {0};
  Inputs in2 = in;
  in2.mask = nullptr;
  in2.kvLen = &kvLen;
  Outputs o2 = run(Spec{}, in2);
  Tensor bias = makeTensor({1}, {-kInf});
  Inputs in3 = in;
  in3.mask = nullptr;
  in3.bias = &bias;
  Outputs o3 = run(Spec{}, in3);
  for (const Outputs *r : {&o2, &o3}) {
    for (double x : r->out.data)
      EXPECT_EQ(x, 0.0);
    for (double l : r->lse.data)
      EXPECT_EQ(l, -kInf);
  }
}

TEST(ReferenceMask, BottomRightMoreQueriesThanKeys) {
  // Nq = 3 > Nk = 2: p(i) = i - 1, so query 0 (p = -1) reads nothing.
  Uniform u(1, 1, 3, 2);
  Spec spec;
  spec.causal = Causal::BottomRight;
  Outputs o = run(spec, u.inputs());
  expectRow(row(o, 0, 0, 0), {0, 0});
  EXPECT_EQ(o.lse.data[0], -kInf);
  expectRow(row(o, 0, 0, 1), {1, 0});
  expectRow(row(o, 0, 0, 2), {0.5, 0.5});
  for (double x : o.out.data)
    EXPECT_FALSE(std::isnan(x));
}

TEST(ReferenceMask, SlidingWindow) {
  Uniform u(1, 1, 4, 4);
  // Causal with left = 1: query i reads keys i-1 and i.
  Spec spec;
  spec.causal = Causal::TopLeft;
  spec.windowLeft = 1;
  Outputs o = run(spec, u.inputs());
  expectRow(row(o, 0, 0, 0), {1, 0, 0, 0});
  expectRow(row(o, 0, 0, 1), {0.5, 0.5, 0, 0});
  expectRow(row(o, 0, 0, 3), {0, 0, 0.5, 0.5});

  // No causal mask, left = 0 and right = 1: keys i and i+1.
  Spec fwd;
  fwd.windowLeft = 0;
  fwd.windowRight = 1;
  Outputs f = run(fwd, u.inputs());
  expectRow(row(f, 0, 0, 1), {0, 0.5, 0.5, 0});
  expectRow(row(f, 0, 0, 3), {0, 0, 0, 1});

  // Only the right side set: the left is unbounded.
  Spec right;
  right.windowRight = 0;
  Outputs r = run(right, u.inputs());
  expectRow(row(r, 0, 0, 2), {1. / 3, 1. / 3, 1. / 3, 0});

  // Window with bottom-right alignment, Nq = 1, Nk = 4: p(0) = 3.
  Uniform d(1, 1, 1, 4);
  Spec dec;
  dec.causal = Causal::BottomRight;
  dec.windowLeft = 2;
  Outputs dd = run(dec, d.inputs());
  expectRow(row(dd, 0, 0, 0), {0, 1. / 3, 1. / 3, 1. / 3});

  // Explicit bottom-right alignment without a causal mask (FlashAttention's
  // non-causal local attention): p(0) = 3, keys 2..3 (right side is 3 - p).
  Spec local;
  local.align = Align::BottomRight;
  local.windowLeft = 1;
  local.windowRight = 0;
  Outputs l = run(local, d.inputs());
  expectRow(row(l, 0, 0, 0), {0, 0, 0.5, 0.5});
}

TEST(ReferenceMask, KvLenPerBatch) {
  // B = 2, kvLen = [2, 3], Nk = 4, no causal.
  Uniform u(2, 1, 1, 4);
  std::vector<int64_t> kvLen = {2, 3};
  Inputs in = u.inputs();
  in.kvLen = &kvLen;
  Outputs o = run(Spec{}, in);
  expectRow(row(o, 0, 0, 0), {0.5, 0.5, 0, 0});
  expectRow(row(o, 1, 0, 0), {1. / 3, 1. / 3, 1. / 3, 0});

  // Bottom-right uses kvLen for p(i): Nq = 2, kvLen = [2, 3], Nk = 4.
  // batch 0: p = [0, 1]; batch 1: p = [1, 2].
  Uniform u2(2, 1, 2, 4);
  Inputs in2 = u2.inputs();
  in2.kvLen = &kvLen;
  Spec br;
  br.causal = Causal::BottomRight;
  Outputs b = run(br, in2);
  expectRow(row(b, 0, 0, 0), {1, 0, 0, 0});
  expectRow(row(b, 0, 0, 1), {0.5, 0.5, 0, 0});
  expectRow(row(b, 1, 0, 0), {0.5, 0.5, 0, 0});
  expectRow(row(b, 1, 0, 1), {1. / 3, 1. / 3, 1. / 3, 0});
}

TEST(ReferenceMask, KvLenIsClamped) {
  // Documented choice: kvLen outside [0, Nk] is clamped, also for p(i).
  Uniform u(2, 1, 1, 3);
  std::vector<int64_t> kvLen = {-5, 10};
  Inputs in = u.inputs();
  in.kvLen = &kvLen;
  Spec br;
  br.causal = Causal::BottomRight;
  Outputs o = run(br, in);
  expectRow(row(o, 0, 0, 0), {0, 0, 0});
  EXPECT_EQ(o.lse.data[0], -kInf);
  // kvLen 10 -> 3, p(0) = 0 + 3 - 1 = 2: all three keys.
  expectRow(row(o, 1, 0, 0), {1. / 3, 1. / 3, 1. / 3});
}

TEST(ReferenceMask, PaddingMaskBroadcast) {
  // Mask [B, 1, 1, Nk]: per-batch padding, broadcast over heads and queries.
  Uniform u(2, 2, 2, 3);
  Tensor mask = makeTensor({2, 1, 1, 3}, {1, 1, 0, 1, 0, 0});
  Inputs in = u.inputs();
  in.mask = &mask;
  Outputs o = run(Spec{}, in);
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t i = 0; i < 2; ++i) {
      expectRow(row(o, 0, h, i), {0.5, 0.5, 0});
      expectRow(row(o, 1, h, i), {1, 0, 0});
    }
  // Nonzero (not just 1) means "may read"; a scalar mask broadcasts too.
  Tensor scalar = makeTensor({}, {-2.0});
  in.mask = &scalar;
  Outputs s = run(Spec{}, in);
  expectRow(row(s, 1, 1, 1), {1. / 3, 1. / 3, 1. / 3});
}

//===----------------------------------------------------------------------===//
// Logit modifiers
//===----------------------------------------------------------------------===//

TEST(ReferenceLogits, BiasBroadcast) {
  // Bias [0, ln2, ln3] on zero logits: weights [1, 2, 3] / 6.
  Uniform u(1, 2, 2, 3);
  Tensor bias = makeTensor({3}, {0.0, std::log(2.0), std::log(3.0)});
  Inputs in = u.inputs();
  in.bias = &bias;
  Outputs o = run(Spec{}, in);
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t i = 0; i < 2; ++i)
      expectRow(row(o, 0, h, i), {1. / 6, 2. / 6, 3. / 6});
  // lse = log(1 + 2 + 3).
  EXPECT_NEAR(o.lse.data[0], std::log(6.0), kTol);

  // Per-head bias [1, Hq, 1, Nk]: head 1 gets the reverse.
  Tensor hb = makeTensor({1, 2, 1, 3}, {0.0, std::log(2.0), std::log(3.0),
                                        std::log(3.0), std::log(2.0), 0.0});
  in.bias = &hb;
  Outputs p = run(Spec{}, in);
  expectRow(row(p, 0, 1, 1), {3. / 6, 2. / 6, 1. / 6});

  // A full [B, Hq, Nq, Nk] bias equals the broadcast one.
  Tensor full{{1, 2, 2, 3}, {}};
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 3; ++j)
        full.data.push_back(hb.data[h * 3 + j]);
  in.bias = &full;
  Outputs f = run(Spec{}, in);
  EXPECT_EQ(f.out.data, p.out.data);
}

TEST(ReferenceLogits, AlibiUsesAbsoluteDistance) {
  // slope ln2, non-causal Nq = Nk = 3, query 1 (p = 1): |j - p| = [1, 0, 1]
  // -> logits [-ln2, 0, -ln2] -> weights [1/2, 1, 1/2] / 2 = [.25, .5, .25].
  // (The signed form would give [+ln2, 0, -ln2] -> [4, 2, 1] / 7.)
  Uniform u(1, 1, 3, 3);
  std::vector<double> slopes = {std::log(2.0)};
  Inputs in = u.inputs();
  in.alibiSlopes = &slopes;
  Outputs o = run(Spec{}, in);
  expectRow(row(o, 0, 0, 1), {0.25, 0.5, 0.25});
  // query 0: distances [0, 1, 2] -> [1, 1/2, 1/4] / (7/4) = [4, 2, 1] / 7.
  expectRow(row(o, 0, 0, 0), {4. / 7, 2. / 7, 1. / 7});

  // Bottom-right decode row: Nq = 1, Nk = 3, p(0) = 2, distances [2, 1, 0]
  // -> [1/4, 1/2, 1] / (7/4) = [1, 2, 4] / 7.
  Uniform d(1, 1, 1, 3);
  Inputs ind = d.inputs();
  ind.alibiSlopes = &slopes;
  Spec br;
  br.causal = Causal::BottomRight;
  Outputs b = run(br, ind);
  expectRow(row(b, 0, 0, 0), {1. / 7, 2. / 7, 4. / 7});
}

TEST(ReferenceLogits, AlibiPerHeadAndCausalSignedForm) {
  // Under a causal mask |j - p(i)| = p(i) - j, so ALiBi equals the additive
  // bias slope[h] * (j - i) (FlexAttention's signed example).
  Tensor q = randomTensor({1, 2, 4, 3}, 7);
  Tensor k = randomTensor({1, 2, 4, 3}, 8);
  Tensor v = randomTensor({1, 2, 4, 2}, 9);
  std::vector<double> slopes = {0.5, 0.25};
  Tensor bias{{1, 2, 4, 4}, {}};
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t i = 0; i < 4; ++i)
      for (int64_t j = 0; j < 4; ++j)
        bias.data.push_back(slopes[h] * static_cast<double>(j - i));
  Spec spec;
  spec.causal = Causal::TopLeft;
  Inputs a;
  a.q = &q;
  a.k = &k;
  a.v = &v;
  Inputs b = a;
  a.alibiSlopes = &slopes;
  b.bias = &bias;
  Outputs oa = run(spec, a), ob = run(spec, b);
  expectNear(oa.out, ob.out, kTol);
  expectNear(oa.lse, ob.lse, kTol);
}

TEST(ReferenceLogits, SoftcapOrder) {
  // One query, keys with scaled dots [0, 10]; cap 1 -> [0, tanh 10].
  Tensor q = makeTensor({1, 1, 1, 1}, {1.0});
  Tensor k = makeTensor({1, 1, 2, 1}, {0.0, 10.0});
  Tensor v = makeTensor({1, 1, 2, 2}, {1, 0, 0, 1});
  Spec spec;
  spec.scale = 1.0;
  spec.softcap = 1.0;
  Inputs in;
  in.q = &q;
  in.k = &k;
  in.v = &v;
  Outputs o = run(spec, in);
  const double t = 0.99999999587769273; // tanh(10)
  const double w1 = std::exp(t) / (1.0 + std::exp(t));
  expectRow(row(o, 0, 0, 0), {1 - w1, w1});

  // Bias is added after the cap: [0, tanh(10) + 5], not [0, tanh(15)].
  Tensor bias = makeTensor({2}, {0.0, 5.0});
  in.bias = &bias;
  Outputs b = run(spec, in);
  const double w2 = std::exp(t + 5) / (1.0 + std::exp(t + 5));
  expectRow(row(b, 0, 0, 0), {1 - w2, w2});

  // Scale is applied before the cap: scale 0.05 -> [0, tanh(0.5)] with cap 1,
  // vs cap applied first: 0.05 * tanh(10).
  Spec s2 = spec;
  s2.scale = 0.05;
  in.bias = nullptr;
  Outputs c = run(s2, in);
  const double t2 = std::tanh(0.5);
  const double w3 = std::exp(t2) / (1.0 + std::exp(t2));
  expectRow(row(c, 0, 0, 0), {1 - w3, w3});

  // cap 2: 2 * tanh(10 / 2).
  Spec s3 = spec;
  s3.softcap = 2.0;
  Outputs d = run(s3, in);
  EXPECT_NEAR(d.lse.data[0], std::log(1.0 + std::exp(2 * std::tanh(5.0))),
              kTol);
}

TEST(ReferenceLogits, SigmoidNorm) {
  // Sigmoid: weight = sigmoid(s) for allowed keys, no row sum.
  // q = 0 -> s = 0 -> weight 1/2; causal row i sums v over keys 0..i times 1/2.
  Uniform u(1, 1, 3, 3);
  Spec spec;
  spec.norm = Norm::Sigmoid;
  spec.causal = Causal::TopLeft;
  Outputs o = run(spec, u.inputs());
  expectRow(row(o, 0, 0, 0), {0.5, 0, 0});
  expectRow(row(o, 0, 0, 2), {0.5, 0.5, 0.5});
  for (double l : o.lse.data)
    EXPECT_TRUE(std::isnan(l)); // documented: lse undefined -> NaN

  // Bias ln3 on key 1: sigmoid(ln 3) = 3/4.
  Tensor bias = makeTensor({3}, {0.0, std::log(3.0), 0.0});
  Inputs in = u.inputs();
  in.bias = &bias;
  Outputs b = run(spec, in);
  expectRow(row(b, 0, 0, 1), {0.5, 0.75, 0});

  // A fully masked row gives 0.
  std::vector<int64_t> kvLen = {0};
  in.kvLen = &kvLen;
  Outputs m = run(spec, in);
  for (double x : m.out.data)
    EXPECT_EQ(x, 0.0);
}

TEST(ReferenceLogits, DefaultScaleIsInverseSqrtDqk) {
  // Dqk = 4, q = k = [1,1,1,1]/... : dot 4 for key 0, 0 for key 1; scale
  // 1/2 -> logits [2, 0].
  Tensor q = makeTensor({1, 1, 1, 4}, {1, 1, 1, 1});
  Tensor k = makeTensor({1, 1, 2, 4}, {1, 1, 1, 1, 0, 0, 0, 0});
  Tensor v = makeTensor({1, 1, 2, 1}, {1, 0});
  Inputs in;
  in.q = &q;
  in.k = &k;
  in.v = &v;
  Outputs o = run(Spec{}, in);
  EXPECT_NEAR(o.out.data[0], std::exp(2.0) / (std::exp(2.0) + 1.0), kTol);
  EXPECT_NEAR(o.lse.data[0], std::log(std::exp(2.0) + 1.0), kTol);
}

//===----------------------------------------------------------------------===//
// Heads and layouts
//===----------------------------------------------------------------------===//

TEST(ReferenceHeads, GqaEqualsMhaWithRepeatedKv) {
  // Hq = 8, Hkv = 2: heads 0-3 read kv head 0, heads 4-7 read kv head 1
  // (the seed's repeat_interleave).
  const int64_t B = 2, Hq = 8, Hkv = 2, Nq = 3, Nk = 5, D = 4, Dv = 3;
  Tensor q = randomTensor({B, Hq, Nq, D}, 10);
  Tensor k = randomTensor({B, Hkv, Nk, D}, 11);
  Tensor v = randomTensor({B, Hkv, Nk, Dv}, 12);
  Tensor kr{{B, Hq, Nk, D}, std::vector<double>(B * Hq * Nk * D)};
  Tensor vr{{B, Hq, Nk, Dv}, std::vector<double>(B * Hq * Nk * Dv)};
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hq; ++h)
      for (int64_t j = 0; j < Nk; ++j) {
        for (int64_t x = 0; x < D; ++x)
          at(kr, b, h, j, x) = at(k, b, h / 4, j, x);
        for (int64_t x = 0; x < Dv; ++x)
          at(vr, b, h, j, x) = at(v, b, h / 4, j, x);
      }
  Spec spec;
  spec.causal = Causal::BottomRight;
  Inputs g;
  g.q = &q;
  g.k = &k;
  g.v = &v;
  Inputs m = g;
  m.k = &kr;
  m.v = &vr;
  Outputs og = run(spec, g), om = run(spec, m);
  EXPECT_EQ(og.out.shape, (std::vector<int64_t>{B, Hq, Nq, Dv}));
  EXPECT_EQ(og.out.data, om.out.data); // same arithmetic, bit-identical
  EXPECT_EQ(og.lse.data, om.lse.data);

  // Sanity: head 3 and head 4 read different kv heads.
  Tensor kSwap = k;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t j = 0; j < Nk; ++j)
      for (int64_t x = 0; x < D; ++x)
        at(kSwap, b, 1, j, x) = 0.0;
  g.k = &kSwap;
  Outputs os = run(spec, g);
  EXPECT_EQ(at(os.out, 0, 3, 0, 0), at(og.out, 0, 3, 0, 0));
  EXPECT_NE(at(os.out, 0, 4, 0, 0), at(og.out, 0, 4, 0, 0));
}

TEST(ReferenceHeads, MqaSingleKvHead) {
  Tensor q = randomTensor({1, 3, 2, 2}, 13);
  Tensor k = randomTensor({1, 1, 2, 2}, 14);
  Tensor v = randomTensor({1, 1, 2, 2}, 15);
  Inputs in;
  in.q = &q;
  in.k = &k;
  in.v = &v;
  Outputs o = run(Spec{}, in);
  // Each head h equals a one-head run of q[:, h].
  for (int64_t h = 0; h < 3; ++h) {
    Tensor qh{{1, 1, 2, 2}, {}};
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t x = 0; x < 2; ++x)
        qh.data.push_back(at(q, 0, h, i, x));
    Inputs ih = in;
    ih.q = &qh;
    Outputs oh = run(Spec{}, ih);
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t x = 0; x < 2; ++x)
        EXPECT_EQ(at(o.out, 0, h, i, x), at(oh.out, 0, 0, i, x));
  }
}

TEST(ReferenceHeads, LayoutBnhdEqualsBhnd) {
  const int64_t B = 2, Hq = 4, Hkv = 2, Nq = 3, Nk = 5, D = 3, Dv = 2;
  Tensor q = randomTensor({B, Hq, Nq, D}, 16);
  Tensor k = randomTensor({B, Hkv, Nk, D}, 17);
  Tensor v = randomTensor({B, Hkv, Nk, Dv}, 18);
  Tensor qt = swapDims12(q), kt = swapDims12(k), vt = swapDims12(v);
  EXPECT_EQ(qt.shape, (std::vector<int64_t>{B, Nq, Hq, D}));
  EXPECT_EQ(at(qt, 1, 2, 3, 1), at(q, 1, 3, 2, 1));
  std::vector<int64_t> kvLen = {4, 5};
  Tensor bias = randomTensor({1, Hq, Nq, Nk}, 19);
  std::vector<double> slopes = {0.1, 0.2, 0.3, 0.4};
  Spec spec;
  spec.causal = Causal::BottomRight;
  spec.windowLeft = 3;
  Inputs a;
  a.q = &q;
  a.k = &k;
  a.v = &v;
  a.kvLen = &kvLen;
  a.bias = &bias;
  a.alibiSlopes = &slopes;
  Inputs b = a;
  b.q = &qt;
  b.k = &kt;
  b.v = &vt;
  Spec specT = spec;
  specT.layout = Layout::BNHD;
  Outputs oa = run(spec, a), ob = run(specT, b);
  EXPECT_EQ(ob.out.shape, (std::vector<int64_t>{B, Nq, Hq, Dv}));
  Tensor back = swapDims12(ob.out);
  EXPECT_EQ(back.data, oa.out.data);
  EXPECT_EQ(ob.lse.data, oa.lse.data); // lse is [B, Hq, Nq] in both
}

TEST(ReferenceHeads, DvDiffersFromDqk) {
  // Dqk = 1, Dv = 3, one allowed key each (causal): out row i = v[i].
  Tensor q = makeTensor({1, 1, 2, 1}, {1, 2});
  Tensor k = makeTensor({1, 1, 2, 1}, {3, 4});
  Tensor v = makeTensor({1, 1, 2, 3}, {1, 2, 3, 4, 5, 6});
  Spec spec;
  spec.causal = Causal::TopLeft;
  Inputs in;
  in.q = &q;
  in.k = &k;
  in.v = &v;
  Outputs o = run(spec, in);
  EXPECT_EQ(o.out.shape, (std::vector<int64_t>{1, 1, 2, 3}));
  EXPECT_EQ(o.out.data[0], 1.0);
  // Row 1: logits [2*3, 2*4] = [6, 8] -> weights [1, e^2] / (1 + e^2).
  const double w = std::exp(2.0) / (1.0 + std::exp(2.0));
  EXPECT_NEAR(o.out.data[3], (1 - w) * 1 + w * 4, kTol);
  EXPECT_NEAR(o.out.data[5], (1 - w) * 3 + w * 6, kTol);
}

//===----------------------------------------------------------------------===//
// Projection level
//===----------------------------------------------------------------------===//

TEST(ReferenceProjection, TinyCrossAttentionByHand) {
  // D = 1, one head, Dqk = Dv = 1, all weights 1 except Wo = 2.
  // xq = [[1]], xkv = [[0], [1]] -> q = 1, k = [0, 1], v = [0, 1];
  // scale 1/sqrt(1): logits [0, 1] -> weights [1, e] / (1 + e);
  // out = e / (1 + e); result = 2e / (1 + e) = 1.462117.
  Tensor xq = makeTensor({1, 1, 1}, {1});
  Tensor xkv = makeTensor({1, 2, 1}, {0, 1});
  Tensor one = makeTensor({1, 1}, {1});
  Tensor two = makeTensor({1, 1}, {2});
  Tensor r;
  ASSERT_EQ(projectedAttention(Spec{}, 1, 1, xq, xkv, one, one, one, two,
                               nullptr, nullptr, nullptr, nullptr, r),
            "");
  EXPECT_EQ(r.shape, (std::vector<int64_t>{1, 1, 1}));
  EXPECT_NEAR(r.data[0], 1.4621171572600098, kTol);
}

/// The seed's pipeline written out step by step: project, split heads into
/// BHND tensors, attention(), concatenate heads, apply Wo.
Tensor composeByHand(const Spec &spec, int64_t hq, int64_t hkv,
                     const Tensor &xq, const Tensor &xkv, const Tensor &wq,
                     const Tensor &wk, const Tensor &wv, const Tensor &wo,
                     const std::vector<int64_t> *kvLen) {
  const int64_t B = xq.shape[0], nq = xq.shape[1], D = xq.shape[2];
  const int64_t nk = xkv.shape[1];
  const int64_t dqk = wq.shape[1] / hq, dv = wv.shape[1] / hkv;
  auto headsOf = [&](const Tensor &x, const Tensor &w, int64_t h, int64_t hd) {
    const int64_t n = x.shape[1];
    Tensor t{{B, h, n, hd}, std::vector<double>(B * h * n * hd, 0.0)};
    for (int64_t b = 0; b < B; ++b)
      for (int64_t head = 0; head < h; ++head)
        for (int64_t s = 0; s < n; ++s)
          for (int64_t c = 0; c < hd; ++c)
            for (int64_t e = 0; e < D; ++e)
              at(t, b, head, s, c) += x.data[(b * n + s) * D + e] *
                                      w.data[e * (h * hd) + head * hd + c];
    return t;
  };
  Tensor q = headsOf(xq, wq, hq, dqk);
  Tensor k = headsOf(xkv, wk, hkv, dqk);
  Tensor v = headsOf(xkv, wv, hkv, dv);
  EXPECT_EQ(k.shape[2], nk);
  Spec s = spec;
  s.layout = Layout::BHND;
  Inputs in;
  in.q = &q;
  in.k = &k;
  in.v = &v;
  in.kvLen = kvLen;
  Outputs o;
  EXPECT_EQ(attention(s, in, o), "");
  Tensor r{{B, nq, D}, std::vector<double>(B * nq * D, 0.0)};
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < nq; ++i)
      for (int64_t e = 0; e < D; ++e)
        for (int64_t h = 0; h < hq; ++h)
          for (int64_t c = 0; c < dv; ++c)
            r.data[(b * nq + i) * D + e] +=
                at(o.out, b, h, i, c) * wo.data[(h * dv + c) * D + e];
  return r;
}

TEST(ReferenceProjection, SelfAttentionMatchesComposition) {
  const int64_t B = 2, N = 4, D = 6, Hq = 2, Hkv = 2, Dh = 3;
  Tensor x = randomTensor({B, N, D}, 20);
  Tensor wq = randomTensor({D, Hq * Dh}, 21);
  Tensor wk = randomTensor({D, Hkv * Dh}, 22);
  Tensor wv = randomTensor({D, Hkv * Dh}, 23);
  Tensor wo = randomTensor({Hq * Dh, D}, 24);
  Spec spec;
  spec.causal = Causal::TopLeft;
  Tensor r;
  ASSERT_EQ(projectedAttention(spec, Hq, Hkv, x, x, wq, wk, wv, wo, nullptr,
                               nullptr, nullptr, nullptr, r),
            "");
  Tensor want = composeByHand(spec, Hq, Hkv, x, x, wq, wk, wv, wo, nullptr);
  expectNear(r, want, kTol);
}

TEST(ReferenceProjection, CrossAttentionGqaMatchesComposition) {
  // Nq = 3 != Nk = 5, Hq = 4, Hkv = 2, Dqk = 2 != Dv = 3, kvLen per batch.
  const int64_t B = 2, Nq = 3, Nk = 5, D = 4, Hq = 4, Hkv = 2, Dqk = 2, Dv = 3;
  Tensor xq = randomTensor({B, Nq, D}, 25);
  Tensor xkv = randomTensor({B, Nk, D}, 26);
  Tensor wq = randomTensor({D, Hq * Dqk}, 27);
  Tensor wk = randomTensor({D, Hkv * Dqk}, 28);
  Tensor wv = randomTensor({D, Hkv * Dv}, 29);
  Tensor wo = randomTensor({Hq * Dv, D}, 30);
  std::vector<int64_t> kvLen = {5, 2};
  Spec spec;
  spec.causal = Causal::BottomRight;
  Tensor r;
  ASSERT_EQ(projectedAttention(spec, Hq, Hkv, xq, xkv, wq, wk, wv, wo, &kvLen,
                               nullptr, nullptr, nullptr, r),
            "");
  EXPECT_EQ(r.shape, (std::vector<int64_t>{B, Nq, D}));
  Tensor want = composeByHand(spec, Hq, Hkv, xq, xkv, wq, wk, wv, wo, &kvLen);
  expectNear(r, want, kTol);

  // Inconsistent projection shapes are reported, not crashed on.
  Tensor bad = randomTensor({D, Hq * Dqk + 1}, 31);
  EXPECT_NE(projectedAttention(spec, Hq, Hkv, xq, xkv, bad, wk, wv, wo, nullptr,
                               nullptr, nullptr, nullptr, r),
            "");
  Tensor badWo = randomTensor({Hq * Dv, D + 1}, 32);
  EXPECT_NE(projectedAttention(spec, Hq, Hkv, xq, xkv, wq, wk, wv, badWo,
                               nullptr, nullptr, nullptr, nullptr, r),
            "");
}

//===----------------------------------------------------------------------===//
// score_mod / mask_mod regions
//===----------------------------------------------------------------------===//

/// Builds region programs the way the bridge translates MLIR: block
/// arguments first, then one instruction per op.
struct ProgramBuilder {
  RegionProgram p;
  const ScalarType index = ScalarType::index(), i1 = ScalarType::i1(),
                   f32 = ScalarType::f32(), i32 = ScalarType::integer(32);

  int op(Opcode o, ScalarType t, std::vector<int> operands, int pred = 0) {
    Instr in;
    in.op = o;
    in.type = t;
    in.operands = std::move(operands);
    in.predicate = pred;
    return p.add(in);
  }
  int arg(int n) {
    Instr in;
    in.op = Opcode::Arg;
    in.arg = n;
    in.type = n == 4 ? f32 : index;
    return p.add(in);
  }
  int b() { return arg(0); }
  int h() { return arg(1); }
  int i() { return arg(2); }
  int j() { return arg(3); }
  int s() { return arg(4); }
  int cint(int64_t v, ScalarType t) {
    Instr in;
    in.op = Opcode::Constant;
    in.type = t;
    in.ivalue = v;
    return p.add(in);
  }
  int cf(double v, ScalarType t = ScalarType::f32()) {
    Instr in;
    in.op = Opcode::Constant;
    in.type = t;
    in.fvalue = v;
    return p.add(in);
  }
  int cmpi(CmpIPred pred, int a, int b) {
    return op(Opcode::CmpI, i1, {a, b}, static_cast<int>(pred));
  }
  int extract(int input, ScalarType t, std::vector<int> indices) {
    Instr in;
    in.op = Opcode::Extract;
    in.type = t;
    in.input = input;
    in.operands = std::move(indices);
    return p.add(in);
  }
  RegionProgram yield(int v) {
    p.result = v;
    return p;
  }
};

/// Random q, k, v of [B, H, N, D] for region-versus-builtin comparisons.
struct Random {
  Tensor q, k, v;
  Random(int64_t b, int64_t hq, int64_t hkv, int64_t nq, int64_t nk,
         uint64_t seed, double amplitude = 1.0)
      : q(randomTensor({b, hq, nq, 4}, seed)),
        k(randomTensor({b, hkv, nk, 4}, seed + 1)),
        v(randomTensor({b, hkv, nk, 3}, seed + 2)) {
    for (double &x : q.data)
      x *= amplitude;
    for (double &x : k.data)
      x *= amplitude;
  }
  Inputs inputs() const {
    Inputs in;
    in.q = &q;
    in.k = &k;
    in.v = &v;
    return in;
  }
};

void expectSame(const Outputs &a, const Outputs &b, double tol = kTol) {
  expectNear(a.out, b.out, tol);
  ASSERT_EQ(a.lse.data.size(), b.lse.data.size());
  for (size_t x = 0; x < a.lse.data.size(); ++x) {
    if (std::isinf(b.lse.data[x]))
      EXPECT_EQ(a.lse.data[x], b.lse.data[x]) << "lse at " << x;
    else
      EXPECT_NEAR(a.lse.data[x], b.lse.data[x], tol) << "lse at " << x;
  }
}

/// mask_mod j <= i.
RegionProgram causalMaskMod() {
  ProgramBuilder pb;
  int i = pb.i(), j = pb.j();
  return pb.yield(pb.cmpi(CmpIPred::sle, j, i));
}

TEST(ReferenceRegions, MaskModCausalEqualsCausalTopLeft) {
  // Nq = 5 < Nk = 7: top-left causal, row 0 reads key 0 only.
  Random r(2, 2, 1, 5, 7, 100);
  RegionProgram mm = causalMaskMod();
  Inputs in = r.inputs();
  in.maskMod = &mm;
  Spec causal;
  causal.causal = Causal::TopLeft;
  expectSame(run(Spec{}, in), run(causal, r.inputs()));
  // And with the uniform trick, by hand: query 1 reads keys 0 and 1.
  Uniform u(1, 1, 3, 4);
  Inputs ui = u.inputs();
  ui.maskMod = &mm;
  Outputs o = run(Spec{}, ui);
  expectRow(row(o, 0, 0, 0), {1, 0, 0, 0});
  expectRow(row(o, 0, 0, 1), {0.5, 0.5, 0, 0});
  // mask_mod reduces the allowed pairs: 2 * 2 * (1+2+3+4+5) = 60.
  EXPECT_EQ(countAllowedPairs(Spec{}, in), 60);
  EXPECT_EQ(countAllowedPairs(causal, r.inputs()), 60);
  EXPECT_EQ(attentionFlops(Spec{}, in), 60 * (2.0 * 4 + 2.0 * 3));
}

TEST(ReferenceRegions, DocumentMaskEqualsDenseMask) {
  // Three packed documents of lengths 2, 3, 1 (self-attention, N = 6).
  const int64_t N = 6;
  Tensor doc = makeTensor({N}, {0, 0, 1, 1, 1, 2});
  ProgramBuilder pb;
  int i = pb.i(), j = pb.j();
  int di = pb.extract(0, pb.i32, {i}), dj = pb.extract(0, pb.i32, {j});
  RegionProgram mm = pb.yield(pb.cmpi(CmpIPred::eq, di, dj));
  Tensor dense = makeTensor({N, N}, std::vector<double>(N * N, 0.0));
  for (int64_t a = 0; a < N; ++a)
    for (int64_t c = 0; c < N; ++c)
      dense.data[a * N + c] = doc.data[a] == doc.data[c] ? 1.0 : 0.0;

  Random r(2, 4, 2, N, N, 110);
  Inputs in = r.inputs();
  in.maskMod = &mm;
  in.modInputs = {&doc};
  Inputs want = r.inputs();
  want.mask = &dense;
  expectSame(run(Spec{}, in), run(Spec{}, want));
  Spec causal;
  causal.causal = Causal::TopLeft;
  expectSame(run(causal, in), run(causal, want));
  // By hand: query 3 (document 1) reads keys 2, 3, 4 (causal: 2, 3).
  Uniform u(1, 1, N, N);
  Inputs ui = u.inputs();
  ui.maskMod = &mm;
  ui.modInputs = {&doc};
  expectRow(row(run(Spec{}, ui), 0, 0, 3), {0, 0, 1. / 3, 1. / 3, 1. / 3, 0});
  expectRow(row(run(causal, ui), 0, 0, 3), {0, 0, 0.5, 0.5, 0, 0});
  // Pairs per head: 2*2 + 3*3 + 1 = 14; B * Hq = 8.
  EXPECT_EQ(countAllowedPairs(Spec{}, in), 8 * 14);
  EXPECT_EQ(countAllowedPairs(Spec{}, want, /*countMaskContent=*/true), 8 * 14);
}

TEST(ReferenceRegions, ScoreModTanhEqualsSoftcap) {
  const double cap = 2.5;
  ProgramBuilder pb;
  int s = pb.s(), c = pb.cf(cap);
  int t = pb.op(Opcode::Tanh, pb.f32, {pb.op(Opcode::DivF, pb.f32, {s, c})});
  RegionProgram sm = pb.yield(pb.op(Opcode::MulF, pb.f32, {t, c}));
  Random r(1, 2, 2, 4, 6, 120, /*amplitude=*/4.0);
  Inputs in = r.inputs();
  in.scoreMod = &sm;
  Spec capped;
  capped.softcap = cap;
  expectSame(run(Spec{}, in), run(capped, r.inputs()));
  // The soft cap changes the result (the test can fail).
  Outputs plain = run(Spec{}, r.inputs());
  Outputs mod = run(Spec{}, in);
  double diff = 0;
  for (size_t x = 0; x < plain.out.data.size(); ++x)
    diff = std::max(diff, std::fabs(plain.out.data[x] - mod.out.data[x]));
  EXPECT_GT(diff, 1e-3);
}

TEST(ReferenceRegions, ScoreModRelativeTableEqualsBias) {
  // s += table[h, clamp(j - i + maxd, 0, 2 maxd)], table [Hq, 2 maxd + 1].
  const int64_t Hq = 3, Nq = 4, Nk = 7, maxd = 2, W = 2 * maxd + 1;
  Tensor table = randomTensor({Hq, W}, 130);
  ProgramBuilder pb;
  int h = pb.h(), i = pb.i(), j = pb.j(), s = pb.s();
  int rel =
      pb.op(Opcode::AddI, pb.index,
            {pb.op(Opcode::SubI, pb.index, {j, i}), pb.cint(maxd, pb.index)});
  int lo = pb.op(Opcode::MaxSI, pb.index, {rel, pb.cint(0, pb.index)});
  int at = pb.op(Opcode::MinSI, pb.index, {lo, pb.cint(W - 1, pb.index)});
  int t = pb.extract(0, pb.f32, {h, at});
  RegionProgram sm = pb.yield(pb.op(Opcode::AddF, pb.f32, {s, t}));

  Tensor bias = makeTensor({1, Hq, Nq, Nk}, std::vector<double>(Hq * Nq * Nk));
  for (int64_t y = 0; y < Hq; ++y)
    for (int64_t a = 0; a < Nq; ++a)
      for (int64_t c = 0; c < Nk; ++c)
        bias.data[(y * Nq + a) * Nk + c] =
            table.data[y * W + std::clamp<int64_t>(c - a + maxd, 0, W - 1)];
  Random r(2, Hq, 1, Nq, Nk, 131);
  Inputs in = r.inputs();
  in.scoreMod = &sm;
  in.modInputs = {&table};
  Inputs want = r.inputs();
  want.bias = &bias;
  Spec causal;
  causal.causal = Causal::BottomRight;
  expectSame(run(Spec{}, in), run(Spec{}, want));
  expectSame(run(causal, in), run(causal, want));
}

TEST(ReferenceRegions, AlignBottomRightWindowEqualsDenseMask) {
  // No causal mask, align(bottom_right), window left 1, right 0, Nq = 3,
  // Nk = 6, kvLen = [6, 4]: p(i) = i + kvLen - 3.
  const int64_t B = 2, Nq = 3, Nk = 6;
  std::vector<int64_t> kvLen = {6, 4};
  Spec spec;
  spec.align = Align::BottomRight;
  spec.windowLeft = 1;
  spec.windowRight = 0;
  Tensor dense = makeTensor({B, 1, Nq, Nk}, std::vector<double>(B * Nq * Nk));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < Nq; ++i)
      for (int64_t j = 0; j < Nk; ++j) {
        int64_t p = i + kvLen[b] - Nq;
        dense.data[(b * Nq + i) * Nk + j] =
            (j < kvLen[b] && p - j <= 1 && j - p <= 0) ? 1.0 : 0.0;
      }
  Random r(B, 2, 1, Nq, Nk, 140);
  Inputs in = r.inputs();
  in.kvLen = &kvLen;
  Inputs want = r.inputs();
  want.kvLen = &kvLen;
  want.mask = &dense;
  expectSame(run(spec, in), run(Spec{}, want));
  // By hand: batch 1, query 0 has p = 1: keys 0 and 1.
  Uniform u(B, 1, Nq, Nk);
  Inputs ui = u.inputs();
  ui.kvLen = &kvLen;
  Outputs o = run(spec, ui);
  expectRow(row(o, 1, 0, 0), {0.5, 0.5, 0, 0, 0, 0});
  expectRow(row(o, 0, 0, 2), {0, 0, 0, 0, 0.5, 0.5});
  // Top-left (the default) differs: batch 1, query 0 reads key 0 only.
  Spec topLeft = spec;
  topLeft.align.reset();
  expectRow(row(run(topLeft, ui), 1, 0, 0), {1, 0, 0, 0, 0, 0});
  // The same as a mask_mod: (p - j) in [0, 1] with p = i + kvLen[b] - Nq,
  // kvLen read from a mod_inputs tensor.
  Tensor lens = makeTensor({B}, {6, 4});
  ProgramBuilder pb;
  int b = pb.b(), i = pb.i(), j = pb.j();
  int len = pb.op(Opcode::IndexCast, pb.index, {pb.extract(0, pb.i32, {b})});
  int p =
      pb.op(Opcode::SubI, pb.index,
            {pb.op(Opcode::AddI, pb.index, {i, len}), pb.cint(Nq, pb.index)});
  int dist = pb.op(Opcode::SubI, pb.index, {p, j});
  int ok = pb.op(Opcode::AndI, pb.i1,
                 {pb.cmpi(CmpIPred::sge, dist, pb.cint(0, pb.index)),
                  pb.cmpi(CmpIPred::sle, dist, pb.cint(1, pb.index))});
  RegionProgram mm = pb.yield(ok);
  Inputs viaMod = r.inputs();
  viaMod.kvLen = &kvLen;
  viaMod.maskMod = &mm;
  viaMod.modInputs = {&lens};
  expectSame(run(Spec{}, viaMod), run(spec, in));
}

TEST(ReferenceRegions, OutOfBoundsExtractIsAnError) {
  // A document tensor of 8 ids read at i and j for N = 9.
  Tensor doc = makeTensor({8}, std::vector<double>(8, 0.0));
  ProgramBuilder pb;
  int i = pb.i(), j = pb.j();
  int di = pb.extract(0, pb.i32, {i}), dj = pb.extract(0, pb.i32, {j});
  RegionProgram mm = pb.yield(pb.cmpi(CmpIPred::eq, di, dj));
  Random r(1, 1, 1, 9, 9, 150);
  Inputs in = r.inputs();
  in.maskMod = &mm;
  in.modInputs = {&doc};
  Outputs o;
  // (b, h, i, j) = (0, 0, 0, 8) is the first pair reading outside.
  EXPECT_EQ(attention(Spec{}, in, o),
            "mask_mod reads mod_inputs #0 at [8] outside its shape [8] at "
            "(b, h, i, j) = (0, 0, 0, 8)");
  // Even where every other mask would hide the key (regions are evaluated on
  // the whole domain).
  Spec causal;
  causal.causal = Causal::TopLeft;
  EXPECT_NE(attention(causal, in, o), "");
  EXPECT_EQ(countAllowedPairs(Spec{}, in), -1);
  EXPECT_EQ(attentionFlops(Spec{}, in), -1.0);
  // The same read in score_mod, and a negative index.
  ProgramBuilder sb;
  int h = sb.h(), s = sb.s();
  int shifted = sb.op(Opcode::SubI, sb.index, {h, sb.cint(1, sb.index)});
  int t = sb.extract(0, sb.f32, {shifted});
  RegionProgram sm = sb.yield(sb.op(Opcode::AddF, sb.f32, {s, t}));
  Tensor table = makeTensor({1}, {0.5});
  Inputs si = r.inputs();
  si.scoreMod = &sm;
  si.modInputs = {&table};
  EXPECT_EQ(attention(Spec{}, si, o),
            "score_mod reads mod_inputs #0 at [-1] outside its shape [1] at "
            "(b, h, i, j) = (0, 0, 0, 0)");
  // A missing mod_inputs tensor and a wrong rank are errors too.
  si.modInputs = {};
  EXPECT_NE(attention(Spec{}, si, o).find("mod_inputs #0 is not given"),
            std::string::npos);
  Tensor matrix = makeTensor({1, 1}, {0.5});
  si.modInputs = {&matrix};
  EXPECT_NE(attention(Spec{}, si, o).find("has rank 2, read with 1 indices"),
            std::string::npos);
}

/// Evaluates a program at (0, 0, 0, 0) with s = 0.
double eval(const RegionProgram &p, std::string *err = nullptr,
            const std::vector<const Tensor *> &inputs = {}) {
  const int64_t idx[4] = {0, 0, 0, 0};
  double r = NAN;
  std::string e = evaluateRegion(p, "score_mod", idx, 0.0, inputs, r);
  if (err)
    *err = e;
  else
    EXPECT_EQ(e, "");
  return r;
}

TEST(ReferenceRegions, IntegerWrapAtI32) {
  ProgramBuilder pb;
  const ScalarType i32 = pb.i32, f32 = pb.f32;
  // INT32_MAX + 1 wraps to INT32_MIN.
  int big = pb.cint(2147483647, i32);
  int wrapped = pb.op(Opcode::AddI, i32, {big, pb.cint(1, i32)});
  RegionProgram p = pb.p;
  p.result = p.add(Opcode::SIToFP, f32, {wrapped});
  EXPECT_EQ(eval(p), -2147483648.0);
  // The unsigned view of the same bits, and the 64-bit index sum that does
  // not wrap.
  RegionProgram u = pb.p;
  u.result = u.add(Opcode::UIToFP, f32, {wrapped});
  EXPECT_EQ(eval(u), 2147483648.0);
  RegionProgram x = pb.p;
  int wide = x.add(Opcode::ExtSI, ScalarType::index(), {big});
  int oneIdx = x.add(Opcode::Constant, ScalarType::index());
  x.instrs[oneIdx].ivalue = 1;
  int sum = x.add(Opcode::AddI, ScalarType::index(), {wide, oneIdx});
  x.result = x.add(Opcode::SIToFP, f32, {sum});
  EXPECT_EQ(eval(x), 2147483648.0);
  // 65536 * 65536 wraps to 0 at i32; (-7) / 2 and floor/ceil division;
  // trunci; shifts; i1 true extends to 1 (extui) or -1 (extsi).
  auto unary = [&](Opcode o, ScalarType t, int64_t a, ScalarType at) {
    RegionProgram q;
    int ca = q.add(Opcode::Constant, at);
    q.instrs[ca].ivalue = a;
    int r = q.add(o, t, {ca});
    q.result = q.add(Opcode::SIToFP, ScalarType::f32(), {r});
    return eval(q);
  };
  auto binary = [&](Opcode o, int64_t a, int64_t b,
                    std::string *err = nullptr) {
    RegionProgram q;
    int ca = q.add(Opcode::Constant, i32);
    q.instrs[ca].ivalue = a;
    int cb = q.add(Opcode::Constant, i32);
    q.instrs[cb].ivalue = b;
    int r = q.add(o, i32, {ca, cb});
    q.result = q.add(Opcode::SIToFP, ScalarType::f32(), {r});
    return eval(q, err);
  };
  EXPECT_EQ(binary(Opcode::MulI, 65536, 65536), 0.0);
  EXPECT_EQ(binary(Opcode::MulI, 65537, 65537), 131073.0);
  EXPECT_EQ(binary(Opcode::DivSI, -7, 2), -3.0);
  EXPECT_EQ(binary(Opcode::RemSI, -7, 2), -1.0);
  EXPECT_EQ(binary(Opcode::FloorDivSI, -7, 2), -4.0);
  EXPECT_EQ(binary(Opcode::CeilDivSI, 7, 2), 4.0);
  EXPECT_EQ(binary(Opcode::DivUI, -2, 2), 2147483647.0);
  EXPECT_EQ(binary(Opcode::ShLI, 1, 31), -2147483648.0);
  EXPECT_EQ(binary(Opcode::ShRUI, -1, 28), 15.0);
  EXPECT_EQ(binary(Opcode::ShRSI, -16, 2), -4.0);
  EXPECT_EQ(binary(Opcode::MaxUI, -1, 3), -1.0);
  EXPECT_EQ(binary(Opcode::MinSI, -1, 3), -1.0);
  EXPECT_EQ(unary(Opcode::TruncI, ScalarType::integer(8), 300, i32), 44.0);
  EXPECT_EQ(unary(Opcode::TruncI, ScalarType::integer(8), 200, i32), -56.0);
  EXPECT_EQ(unary(Opcode::ExtUI, i32, 1, ScalarType::i1()), 1.0);
  EXPECT_EQ(unary(Opcode::ExtSI, i32, 1, ScalarType::i1()), -1.0);
  EXPECT_EQ(unary(Opcode::AbsI, i32, -2147483648, i32), -2147483648.0);
  // Undefined operations are errors, not values.
  std::string err;
  binary(Opcode::DivSI, 5, 0, &err);
  EXPECT_NE(err.find("division by zero"), std::string::npos) << err;
  binary(Opcode::DivSI, -2147483648, -1, &err);
  EXPECT_NE(err.find("overflows"), std::string::npos) << err;
  binary(Opcode::ShLI, 1, 32, &err);
  EXPECT_NE(err.find("shift by 32 of an i32"), std::string::npos) << err;
}

TEST(ReferenceRegions, FloatOpsAndCasts) {
  auto unaryF = [](Opcode o, ScalarType t, double a,
                   ScalarType at = ScalarType::f32()) {
    RegionProgram q;
    int ca = q.add(Opcode::Constant, at);
    q.instrs[ca].fvalue = a;
    q.result = q.add(o, t, {ca});
    return eval(q);
  };
  const ScalarType f32 = ScalarType::f32(), f16{ScalarKind::F16, 0},
                   bf16{ScalarKind::BF16, 0}, f64{ScalarKind::F64, 0};
  // truncf rounds to f16 / bf16 like roundToF16 / roundToBF16.
  double x = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -20);
  EXPECT_EQ(unaryF(Opcode::TruncF, f16, x, f64), roundToF16(float(x)));
  EXPECT_EQ(unaryF(Opcode::TruncF, f16, x, f64), 1.0 + std::ldexp(1.0, -10));
  EXPECT_EQ(unaryF(Opcode::TruncF, bf16, 3.14159265, f64), 3.140625);
  EXPECT_EQ(unaryF(Opcode::Round, f32, -2.5), -3.0);
  EXPECT_EQ(unaryF(Opcode::RoundEven, f32, -2.5), -2.0);
  EXPECT_EQ(unaryF(Opcode::Rsqrt, f32, 4.0), 0.5);
  EXPECT_EQ(unaryF(Opcode::Floor, f32, -0.5), -1.0);
  // fptosi: truncation, and out of range is an error.
  RegionProgram q;
  int c = q.add(Opcode::Constant, f32);
  q.instrs[c].fvalue = -3.75;
  int t = q.add(Opcode::FPToSI, ScalarType::integer(8), {c});
  q.result = q.add(Opcode::SIToFP, f32, {t});
  EXPECT_EQ(eval(q), -3.0);
  q.instrs[c].fvalue = 200.0;
  std::string err;
  eval(q, &err);
  EXPECT_NE(err.find("out of range"), std::string::npos) << err;
  // cmpf: ordered versus unordered with NaN; maximumf propagates NaN,
  // maxnumf does not.
  auto cmp = [](CmpFPred p, double a, double b) {
    RegionProgram r;
    int ca = r.add(Opcode::Constant, ScalarType::f32());
    r.instrs[ca].fvalue = a;
    int cb = r.add(Opcode::Constant, ScalarType::f32());
    r.instrs[cb].fvalue = b;
    r.result = r.add(Opcode::CmpF, ScalarType::i1(), {ca, cb});
    r.instrs[r.result].predicate = static_cast<int>(p);
    return eval(r);
  };
  EXPECT_EQ(cmp(CmpFPred::olt, NAN, 1.0), 0.0);
  EXPECT_EQ(cmp(CmpFPred::ult, NAN, 1.0), 1.0);
  EXPECT_EQ(cmp(CmpFPred::une, 1.0, 1.0), 0.0);
  EXPECT_EQ(cmp(CmpFPred::one, 1.0, 2.0), 1.0);
  EXPECT_EQ(cmp(CmpFPred::uno, 1.0, NAN), 1.0);
  EXPECT_EQ(cmp(CmpFPred::AlwaysTrue, NAN, NAN), 1.0);
  auto bin = [](Opcode o, double a, double b) {
    RegionProgram r;
    int ca = r.add(Opcode::Constant, ScalarType::f32());
    r.instrs[ca].fvalue = a;
    int cb = r.add(Opcode::Constant, ScalarType::f32());
    r.instrs[cb].fvalue = b;
    r.result = r.add(o, ScalarType::f32(), {ca, cb});
    return eval(r);
  };
  EXPECT_TRUE(std::isnan(bin(Opcode::MaximumF, NAN, 1.0)));
  EXPECT_EQ(bin(Opcode::MaxNumF, NAN, 1.0), 1.0);
  EXPECT_TRUE(std::signbit(bin(Opcode::MinimumF, 0.0, -0.0)));
  EXPECT_EQ(bin(Opcode::RemF, -7.5, 2.0), -1.5);
  EXPECT_EQ(bin(Opcode::CopySign, 3.0, -0.0), -3.0);
}

TEST(ReferenceRegions, MinusInfFromScoreModActsLikeAMask) {
  // score_mod: j > i ? -inf : s equals causal(top_left).
  ProgramBuilder pb;
  int i = pb.i(), j = pb.j(), s = pb.s();
  int future = pb.cmpi(CmpIPred::sgt, j, i);
  int ninf = pb.cf(-kInf);
  RegionProgram sm = pb.yield(pb.op(Opcode::Select, pb.f32, {future, ninf, s}));
  Random r(1, 2, 1, 4, 6, 160);
  Inputs in = r.inputs();
  in.scoreMod = &sm;
  Spec causal;
  causal.causal = Causal::TopLeft;
  expectSame(run(Spec{}, in), run(causal, r.inputs()));
  // A row whose logits are all -inf (head 1 everywhere): out 0, lse -inf.
  ProgramBuilder hb;
  int h = hb.h(), hs = hb.s();
  int one = hb.cmpi(CmpIPred::eq, h, hb.cint(1, hb.index));
  RegionProgram allInf =
      hb.yield(hb.op(Opcode::Select, hb.f32, {one, hb.cf(-kInf), hs}));
  Inputs hi = r.inputs();
  hi.scoreMod = &allInf;
  Outputs o = run(Spec{}, hi);
  Outputs plain = run(Spec{}, r.inputs());
  for (int64_t q = 0; q < 4; ++q) {
    EXPECT_EQ(o.lse.data[(0 * 2 + 1) * 4 + q], -kInf);
    EXPECT_NEAR(o.lse.data[q], plain.lse.data[q], kTol);
    for (int64_t x = 0; x < 3; ++x)
      EXPECT_EQ(at(o.out, 0, 1, q, x), 0.0);
  }
  // Sigmoid: weight 0 for a -inf logit, a fully -inf row gives 0.
  Spec sig;
  sig.norm = Norm::Sigmoid;
  Outputs so = run(sig, hi);
  for (int64_t x = 0; x < 3; ++x)
    EXPECT_EQ(at(so.out, 0, 1, 2, x), 0.0);
  // -inf from score_mod is data, not a mask: FLOPs still count the pair.
  EXPECT_EQ(countAllowedPairs(Spec{}, hi), 2 * 4 * 6);
}

TEST(ReferenceRegions, ScoreModSeesLogitAfterBiasAndAlibi) {
  // The identity score_mod changes nothing; s * 0 makes every row uniform
  // whatever the bias (so bias is applied before, not after, the region).
  ProgramBuilder pb;
  RegionProgram identity = pb.yield(pb.s());
  ProgramBuilder zb;
  int zs = zb.s();
  RegionProgram times0 =
      zb.yield(zb.op(Opcode::MulF, zb.f32, {zs, zb.cf(0.0)}));
  Random r(1, 2, 1, 3, 5, 170);
  Tensor bias = randomTensor({1, 2, 3, 5}, 171);
  std::vector<double> slopes = {0.5, 0.25};
  Inputs in = r.inputs();
  in.bias = &bias;
  in.alibiSlopes = &slopes;
  Spec capped;
  capped.softcap = 3.0;
  Inputs withId = in;
  withId.scoreMod = &identity;
  expectSame(run(capped, withId), run(capped, in));
  Uniform u(1, 1, 2, 4);
  Tensor ubias = randomTensor({1, 1, 2, 4}, 172);
  Inputs ui = u.inputs();
  ui.bias = &ubias;
  ui.scoreMod = &times0;
  expectRow(row(run(Spec{}, ui), 0, 0, 1), {0.25, 0.25, 0.25, 0.25});
}

TEST(ReferenceRegions, ProjectedAttentionTakesRegions) {
  // Projected self-attention with a document mask_mod equals the dense mask.
  const int64_t B = 2, N = 5, D = 4, Hq = 2, Hkv = 1, Dh = 3;
  Tensor x = randomTensor({B, N, D}, 180);
  Tensor wq = randomTensor({D, Hq * Dh}, 181);
  Tensor wk = randomTensor({D, Hkv * Dh}, 182);
  Tensor wv = randomTensor({D, Hkv * Dh}, 183);
  Tensor wo = randomTensor({Hq * Dh, D}, 184);
  Tensor doc = makeTensor({N}, {0, 0, 0, 1, 1});
  ProgramBuilder pb;
  int i = pb.i(), j = pb.j();
  RegionProgram mm = pb.yield(pb.cmpi(CmpIPred::eq, pb.extract(0, pb.i32, {i}),
                                      pb.extract(0, pb.i32, {j})));
  Tensor dense = makeTensor({N, N}, std::vector<double>(N * N));
  for (int64_t a = 0; a < N; ++a)
    for (int64_t c = 0; c < N; ++c)
      dense.data[a * N + c] = doc.data[a] == doc.data[c];
  Inputs mods;
  mods.maskMod = &mm;
  mods.modInputs = {&doc};
  Tensor got, want;
  ASSERT_EQ(
      projectedAttention(Spec{}, Hq, Hkv, x, x, wq, wk, wv, wo, mods, got), "");
  ASSERT_EQ(projectedAttention(Spec{}, Hq, Hkv, x, x, wq, wk, wv, wo, nullptr,
                               &dense, nullptr, nullptr, want),
            "");
  expectNear(got, want, kTol);
  // An error in the region comes back from the projected form too.
  Tensor shortDoc = makeTensor({3}, {0, 0, 0});
  mods.modInputs = {&shortDoc};
  EXPECT_NE(projectedAttention(Spec{}, Hq, Hkv, x, x, wq, wk, wv, wo, mods, got)
                .find("outside its shape [3]"),
            std::string::npos);
}

TEST(ReferenceRegions, MalformedProgramsAreErrors) {
  Random r(1, 1, 1, 2, 2, 190);
  Outputs o;
  // mask_mod yielding a float, score_mod yielding an integer.
  ProgramBuilder a;
  RegionProgram floatMask = a.yield(a.cf(1.0));
  Inputs in = r.inputs();
  in.maskMod = &floatMask;
  EXPECT_EQ(attention(Spec{}, in, o), "mask_mod must yield an i1");
  ProgramBuilder b;
  RegionProgram intScore = b.yield(b.i());
  in = r.inputs();
  in.scoreMod = &intScore;
  EXPECT_EQ(attention(Spec{}, in, o),
            "score_mod must yield a float (the new logit)");
  // No result; an operand that is not an earlier instruction.
  RegionProgram none;
  in.scoreMod = &none;
  EXPECT_EQ(attention(Spec{}, in, o), "score_mod has no result");
  RegionProgram forward;
  forward.add(Opcode::AddF, ScalarType::f32(), {1, 1});
  forward.result = forward.add(Opcode::Arg, ScalarType::f32());
  forward.instrs[1].arg = 4;
  in.scoreMod = &forward;
  EXPECT_NE(attention(Spec{}, in, o).find("not an earlier instruction"),
            std::string::npos);
  // mask_mod reading the logit.
  RegionProgram logit;
  logit.add(Opcode::Arg, ScalarType::f32());
  logit.instrs[0].arg = 4;
  logit.result = logit.add(Opcode::IsNaN, ScalarType::i1(), {0});
  in = r.inputs();
  in.maskMod = &logit;
  EXPECT_NE(attention(Spec{}, in, o).find("only score_mod has"),
            std::string::npos);
}

//===----------------------------------------------------------------------===//
// FLOPs, errors, rounding
//===----------------------------------------------------------------------===//

TEST(ReferenceFlops, CausalCounts) {
  // B = 1, Hq = 2, Nq = Nk = 4, Dqk = 8, Dv = 4. Causal: 1+2+3+4 = 10 pairs
  // per head; flops = 2 heads * 10 * (2*8 + 2*4) = 480.
  Tensor q = randomTensor({1, 2, 4, 8}, 33);
  Tensor k = randomTensor({1, 1, 4, 8}, 34);
  Tensor v = randomTensor({1, 1, 4, 4}, 35);
  Inputs in;
  in.q = &q;
  in.k = &k;
  in.v = &v;
  Spec causal;
  causal.causal = Causal::TopLeft;
  EXPECT_EQ(countAllowedPairs(causal, in), 20);
  EXPECT_EQ(attentionFlops(causal, in), 480.0);
  // No mask: 16 pairs per head -> 2 * 16 * 24 = 768.
  EXPECT_EQ(attentionFlops(Spec{}, in), 768.0);
  // Window left = 1 with causal: 1+2+2+2 = 7 per head -> 2 * 7 * 24 = 336.
  Spec win = causal;
  win.windowLeft = 1;
  EXPECT_EQ(attentionFlops(win, in), 336.0);
  // kvLen = 2 with bottom-right: p = i - 2, pairs 0+0+1+2 = 3 per head.
  std::vector<int64_t> kvLen = {2};
  Spec br;
  br.causal = Causal::BottomRight;
  Inputs ik = in;
  ik.kvLen = &kvLen;
  EXPECT_EQ(attentionFlops(br, ik), 2 * 3 * 24.0);
  // Mask content is ignored by default and counted on request.
  Tensor mask = makeTensor({4}, {1, 0, 1, 0});
  Inputs im = in;
  im.mask = &mask;
  EXPECT_EQ(attentionFlops(causal, im), 480.0);
  // Causal rows allowed by mask [1,0,1,0]: 1, 1, 2, 2 = 6 per head.
  EXPECT_EQ(attentionFlops(causal, im, /*countMaskContent=*/true),
            2 * 6 * 24.0);
}

TEST(ReferenceErrors, InconsistentShapesReturnErrors) {
  Tensor q = randomTensor({1, 3, 2, 4}, 36);
  Tensor k = randomTensor({1, 2, 2, 4}, 37);
  Tensor v = randomTensor({1, 2, 2, 4}, 38);
  Outputs o;
  Inputs in;
  in.q = &q;
  in.k = &k;
  in.v = &v;
  // Hq = 3 is not a multiple of Hkv = 2.
  EXPECT_NE(attention(Spec{}, in, o), "");
  EXPECT_EQ(attentionFlops(Spec{}, in), -1.0);

  Tensor q2 = randomTensor({1, 2, 2, 3}, 39); // Dqk 3 vs 4
  in.q = &q2;
  EXPECT_NE(attention(Spec{}, in, o), "");

  Tensor q3 = randomTensor({1, 2, 2, 4}, 40);
  in.q = &q3;
  EXPECT_EQ(attention(Spec{}, in, o), "");

  Tensor v2 = randomTensor({1, 2, 3, 4}, 41); // Nk 3 vs 2
  Inputs iv = in;
  iv.v = &v2;
  EXPECT_NE(attention(Spec{}, iv, o), "");

  Tensor broken{{1, 2, 2, 4}, std::vector<double>(5)}; // data size
  Inputs ib = in;
  ib.q = &broken;
  EXPECT_NE(attention(Spec{}, ib, o), "");

  Tensor rank3 = randomTensor({2, 2, 4}, 42);
  Inputs ir = in;
  ir.q = &rank3;
  EXPECT_NE(attention(Spec{}, ir, o), "");

  Tensor neg{{1, -2, 2, 4}, {}};
  Inputs in2 = in;
  in2.q = &neg;
  EXPECT_NE(attention(Spec{}, in2, o), "");

  Inputs none;
  EXPECT_NE(attention(Spec{}, none, o), "");

  std::vector<int64_t> kvLen = {1, 2}; // B is 1
  Inputs ik = in;
  ik.kvLen = &kvLen;
  EXPECT_NE(attention(Spec{}, ik, o), "");

  Tensor mask = randomTensor({3, 2}, 43); // Nq is 2, not 3
  Inputs im = in;
  im.mask = &mask;
  EXPECT_NE(attention(Spec{}, im, o), "");
  Tensor mask5 = randomTensor({1, 1, 1, 1, 2}, 44);
  im.mask = &mask5;
  EXPECT_NE(attention(Spec{}, im, o), "");

  Tensor bias = randomTensor({1, 3, 1, 1}, 45); // Hq is 2
  Inputs ibias = in;
  ibias.bias = &bias;
  EXPECT_NE(attention(Spec{}, ibias, o), "");

  std::vector<double> slopes = {1.0};
  Inputs ia = in;
  ia.alibiSlopes = &slopes;
  EXPECT_NE(attention(Spec{}, ia, o), "");

  Spec badCap;
  badCap.softcap = 0.0;
  EXPECT_NE(attention(badCap, in, o), "");

  Spec conflict;
  conflict.causal = Causal::TopLeft;
  conflict.align = Align::BottomRight;
  EXPECT_NE(attention(conflict, in, o), "");
}

TEST(ReferenceRounding, F16) {
  EXPECT_EQ(roundToF16(1.0f), 1.0f);
  EXPECT_EQ(roundToF16(65504.0f), 65504.0f);
  EXPECT_EQ(roundToF16(65519.0f), 65504.0f);
  EXPECT_TRUE(std::isinf(roundToF16(65520.0f)));
  EXPECT_EQ(roundToF16(-65520.0f), -std::numeric_limits<float>::infinity());
  // Half ulp at 1 is 2^-11: ties go to even.
  EXPECT_EQ(roundToF16(1.0f + std::ldexp(1.0f, -11)), 1.0f);
  EXPECT_EQ(roundToF16(1.0f + 3 * std::ldexp(1.0f, -11)),
            1.0f + std::ldexp(1.0f, -9));
  EXPECT_EQ(roundToF16(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)),
            1.0f + std::ldexp(1.0f, -10));
  // 0.1 -> 0.0999755859375 (0x2e66).
  EXPECT_EQ(roundToF16(0.1f), 0.0999755859375f);
  // Subnormals: multiples of 2^-24; 2^-25 ties to 0, 3*2^-26 -> 2^-24.
  EXPECT_EQ(roundToF16(std::ldexp(1.0f, -24)), std::ldexp(1.0f, -24));
  EXPECT_EQ(roundToF16(std::ldexp(1.0f, -25)), 0.0f);
  EXPECT_TRUE(std::signbit(roundToF16(-std::ldexp(1.0f, -26))));
  EXPECT_EQ(roundToF16(3 * std::ldexp(1.0f, -26)), std::ldexp(1.0f, -24));
  EXPECT_EQ(roundToF16(3 * std::ldexp(1.0f, -25)), std::ldexp(1.0f, -23));
  // Largest subnormal + half an ulp rounds to the smallest normal.
  EXPECT_EQ(roundToF16(std::ldexp(1023.5f, -24)), std::ldexp(1.0f, -14));
  EXPECT_TRUE(std::isnan(roundToF16(std::nanf(""))));
  EXPECT_TRUE(std::isinf(roundToF16(std::numeric_limits<float>::infinity())));
}

TEST(ReferenceRounding, BF16) {
  EXPECT_EQ(roundToBF16(1.0f), 1.0f);
  // bf16 has 7 fraction bits: half ulp at 1 is 2^-8.
  EXPECT_EQ(roundToBF16(1.0f + std::ldexp(1.0f, -8)), 1.0f);
  EXPECT_EQ(roundToBF16(1.0f + 3 * std::ldexp(1.0f, -8)),
            1.0f + std::ldexp(1.0f, -6));
  EXPECT_EQ(roundToBF16(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)),
            1.0f + std::ldexp(1.0f, -7));
  EXPECT_EQ(roundToBF16(-3.140625f), -3.140625f); // exactly representable
  EXPECT_EQ(roundToBF16(3.14159265f), 3.140625f);
  EXPECT_TRUE(std::isinf(roundToBF16(std::numeric_limits<float>::max())));
  EXPECT_TRUE(std::isnan(roundToBF16(std::nanf(""))));
  Tensor t = makeTensor({2}, {3.14159265, 0.1});
  roundTensorToBF16(t);
  EXPECT_EQ(t.data[0], 3.140625);
  EXPECT_EQ(t.data[1], 0.10009765625);
  roundTensorToF16(t);
  EXPECT_EQ(t.data[1], 0.10009765625); // bf16 0.1 is exact in f16
}

} // namespace
