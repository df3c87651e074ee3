//===- RuntimeCopyTest.cpp - libattn_runtime's strided copy ---------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// The runtime's copy between strided views (attn_rt_memref_copy; the same
// routine gathers strided kernel arguments into the dense workspace and
// scatters strided outputs back) against an element-by-element copy written
// here: random ranks, sizes (0 and 1 included), transposed and padded
// strides, broadcast sources (stride 0) and element sizes 1, 2, 3, 4 and 8.
// A failure prints its seed; ATTN_COPY_SEED=<n> replays it.
//
//===----------------------------------------------------------------------===//

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace {
/// {rank, ranked memref descriptor}, as the generated code passes it.
struct UnrankedDesc {
  int64_t rank;
  int64_t *desc;
};
} // namespace

extern "C" void attn_rt_memref_copy(int64_t elemBytes, UnrankedDesc *src,
                                    UnrankedDesc *dst);

namespace {

/// A strided view over `buffer`: strides in elements.
struct View {
  std::vector<int64_t> strides;
  int64_t offset = 0;
  int64_t span = 1; // elements the buffer needs
};

/// Strides of a random layout of `shape`: dimensions stored in a random
/// order, each padded by up to two elements; when `broadcast`, some
/// dimensions get stride 0.
View randomView(const std::vector<int64_t> &shape, bool broadcast,
                std::mt19937_64 &rng) {
  size_t rank = shape.size();
  std::vector<size_t> order(rank);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  View v;
  v.strides.assign(rank, 0);
  int64_t step = 1 + static_cast<int64_t>(rng() % 2); // inner stride 1 or 2
  for (size_t k = rank; k-- > 0;) {
    size_t d = order[k];
    v.strides[d] = step;
    step *= shape[d] + static_cast<int64_t>(rng() % 3);
  }
  if (broadcast)
    for (size_t d = 0; d < rank; ++d)
      if (rng() % 3 == 0)
        v.strides[d] = 0;
  v.offset = static_cast<int64_t>(rng() % 4);
  v.span = v.offset + 1;
  for (size_t d = 0; d < rank; ++d)
    v.span += std::max<int64_t>(shape[d] - 1, 0) * v.strides[d];
  return v;
}

/// The descriptor {allocated, aligned, offset, sizes..., strides...}.
std::vector<int64_t> descriptor(char *base, const View &v,
                                const std::vector<int64_t> &shape) {
  std::vector<int64_t> d = {reinterpret_cast<int64_t>(base),
                            reinterpret_cast<int64_t>(base), v.offset};
  d.insert(d.end(), shape.begin(), shape.end());
  d.insert(d.end(), v.strides.begin(), v.strides.end());
  return d;
}

TEST(RuntimeCopy, RandomViewsMatchElementwiseCopy) {
  uint64_t first = 1, count = 400;
  if (const char *s = std::getenv("ATTN_COPY_SEED")) {
    first = std::strtoull(s, nullptr, 10);
    count = 1;
  }
  const int64_t elemSizes[] = {1, 2, 3, 4, 8};
  for (uint64_t seed = first; seed < first + count; ++seed) {
    std::mt19937_64 rng(seed);
    size_t rank = rng() % 6;
    std::vector<int64_t> shape(rank);
    for (int64_t &s : shape)
      s = static_cast<int64_t>(rng() % 5);
    int64_t eb = elemSizes[rng() % 5];
    View src = randomView(shape, rng() % 2 == 0, rng);
    View dst = randomView(shape, false, rng);
    std::vector<char> in(src.span * eb), out(dst.span * eb, 0);
    for (char &c : in)
      c = static_cast<char>(rng());
    std::vector<char> want = out;
    // The element-by-element copy.
    int64_t n = 1;
    for (int64_t s : shape)
      n *= s;
    std::vector<int64_t> idx(rank, 0);
    for (int64_t i = 0; i < n; ++i) {
      int64_t so = src.offset, to = dst.offset;
      for (size_t d = 0; d < rank; ++d) {
        so += idx[d] * src.strides[d];
        to += idx[d] * dst.strides[d];
      }
      std::memcpy(&want[to * eb], &in[so * eb], eb);
      for (size_t d = rank; d-- > 0;) {
        if (++idx[d] < shape[d])
          break;
        idx[d] = 0;
      }
    }
    std::vector<int64_t> sd = descriptor(in.data(), src, shape);
    std::vector<int64_t> dd = descriptor(out.data(), dst, shape);
    UnrankedDesc s{static_cast<int64_t>(rank), sd.data()};
    UnrankedDesc d{static_cast<int64_t>(rank), dd.data()};
    attn_rt_memref_copy(eb, &s, &d);
    ASSERT_EQ(out, want) << "seed " << seed << " (ATTN_COPY_SEED=" << seed
                         << " replays it): rank " << rank << ", " << eb
                         << "-byte elements";
  }
}

} // namespace
