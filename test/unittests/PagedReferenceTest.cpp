//===- PagedReferenceTest.cpp - the reference's paged K/V -----------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// The reference reads paged K/V (page pools and a page table) exactly as the
// dense K/V that holds the same keys: checked against dense tensors built
// here from the contract's definition, in both layouts, with shuffled pages,
// partial last pages and empty sequences; and its error messages.
//
//===----------------------------------------------------------------------===//

#include "attn/Reference/Reference.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

using namespace attn::ref;

namespace {

Tensor randomTensor(std::vector<int64_t> shape, std::mt19937_64 &rng) {
  Tensor t;
  t.shape = shape;
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  std::uniform_real_distribution<double> d(-1, 1);
  for (int64_t i = 0; i < n; ++i)
    t.data.push_back(d(rng));
  return t;
}

void checkPagedMatchesDense(Layout layout, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const int64_t b = 4, hq = 4, hkv = 2, nq = 3, s = 3, maxPages = 5, d = 4;
  const int64_t nk = maxPages * s;
  std::vector<int64_t> kvLen = {0, 7, nk, 6}; // empty, partial, full, boundary
  int64_t pages = 0;
  for (int64_t len : kvLen)
    pages += (len + s - 1) / s;
  pages += 2; // unused pages
  bool bhnd = layout == Layout::BHND;
  auto pool = [&](int64_t dim) {
    return bhnd ? std::vector<int64_t>{pages, hkv, s, dim}
                : std::vector<int64_t>{pages, s, hkv, dim};
  };
  Tensor kp = randomTensor(pool(d), rng), vp = randomTensor(pool(d), rng);
  Tensor q = randomTensor(bhnd ? std::vector<int64_t>{b, hq, nq, d}
                               : std::vector<int64_t>{b, nq, hq, d},
                          rng);
  std::vector<int64_t> order(pages);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  Tensor pt;
  pt.shape = {b, maxPages};
  size_t next = 0;
  for (int64_t bi = 0; bi < b; ++bi)
    for (int64_t p = 0; p < maxPages; ++p)
      pt.data.push_back(p * s < kvLen[bi] ? order[next++] : -1.0);
  // Dense K/V from the definition: key j of batch bi is row j % s of page
  // pt[bi, j / s].
  auto dense = [&](const Tensor &src) {
    Tensor t;
    t.shape = bhnd ? std::vector<int64_t>{b, hkv, nk, d}
                   : std::vector<int64_t>{b, nk, hkv, d};
    t.data.assign(b * hkv * nk * d, 0.0);
    for (int64_t bi = 0; bi < b; ++bi)
      for (int64_t j = 0; j < kvLen[bi]; ++j)
        for (int64_t g = 0; g < hkv; ++g)
          for (int64_t x = 0; x < d; ++x) {
            int64_t page = static_cast<int64_t>(pt.data[bi * maxPages + j / s]);
            int64_t row = j % s;
            int64_t from = bhnd ? ((page * hkv + g) * s + row) * d + x
                                : ((page * s + row) * hkv + g) * d + x;
            int64_t to = bhnd ? ((bi * hkv + g) * nk + j) * d + x
                              : ((bi * nk + j) * hkv + g) * d + x;
            t.data[to] = src.data[from];
          }
    return t;
  };
  Tensor kd = dense(kp), vd = dense(vp);
  Spec spec;
  spec.layout = layout;
  spec.causal = Causal::BottomRight;
  spec.windowLeft = 5;
  Inputs paged, flat;
  paged.q = flat.q = &q;
  paged.kvLen = flat.kvLen = &kvLen;
  paged.k = &kp;
  paged.v = &vp;
  paged.pageTable = &pt;
  flat.k = &kd;
  flat.v = &vd;
  Outputs a, e;
  ASSERT_EQ(attention(spec, paged, a), "");
  ASSERT_EQ(attention(spec, flat, e), "");
  EXPECT_EQ(a.out.shape, e.out.shape);
  EXPECT_EQ(a.out.data, e.out.data);
  EXPECT_EQ(a.lse.data, e.lse.data);
  EXPECT_EQ(countAllowedPairs(spec, paged), countAllowedPairs(spec, flat));
}

TEST(PagedReference, MatchesDenseBHND) {
  for (uint64_t seed : {1, 2, 3})
    checkPagedMatchesDense(Layout::BHND, seed);
}

TEST(PagedReference, MatchesDenseBNHD) {
  for (uint64_t seed : {4, 5})
    checkPagedMatchesDense(Layout::BNHD, seed);
}

struct SmallPaged {
  Tensor q, k, v, pt;
  std::vector<int64_t> kvLen;
  Inputs in;
  SmallPaged() {
    q.shape = {2, 1, 1, 1};
    q.data = {0, 0};
    k.shape = v.shape = {2, 1, 2, 1}; // 2 pages of 2 tokens
    k.data = v.data = {1, 2, 3, 4};
    pt.shape = {2, 2};
    pt.data = {1, 0, 0, 7};
    kvLen = {3, 2};
    in.q = &q;
    in.k = &k;
    in.v = &v;
    in.pageTable = &pt;
    in.kvLen = &kvLen;
  }
};

TEST(PagedReference, ReadsOnlyTheSequencesPages) {
  // Batch 1 reads page 0 only: its entry 7 lies past its last page.
  SmallPaged p;
  Outputs out;
  ASSERT_EQ(attention(Spec(), p.in, out), "");
  // q = 0: the mean of the v rows read. Batch 0: page 1 (3, 4) and page 0
  // row 0 (1); batch 1: page 0 (1, 2).
  EXPECT_DOUBLE_EQ(out.out.data[0], 8.0 / 3.0);
  EXPECT_DOUBLE_EQ(out.out.data[1], 1.5);
}

TEST(PagedReference, BadEntry) {
  SmallPaged p;
  p.kvLen = {3, 3};
  Outputs out;
  EXPECT_EQ(attention(Spec(), p.in, out),
            "page table entry [1, 1] = 7.000000 is outside the pool of 2 "
            "pages");
  EXPECT_LT(countAllowedPairs(Spec(), p.in), 0);
}

TEST(PagedReference, NeedsKvLen) {
  SmallPaged p;
  p.in.kvLen = nullptr;
  Outputs out;
  EXPECT_EQ(attention(Spec(), p.in, out), "paged attention needs kvLen");
}

TEST(PagedReference, TableRowsMatchBatch) {
  SmallPaged p;
  p.pt.shape = {1, 4};
  Outputs out;
  EXPECT_EQ(attention(Spec(), p.in, out), "page table has 1 rows, batch is 2");
}

} // namespace
