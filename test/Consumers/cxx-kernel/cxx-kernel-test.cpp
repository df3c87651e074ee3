// The prefill kernel of ../c-kernel/kernels.mlir called from C++. With every
// V row of a K/V head equal, each query's output is that row whatever the
// scores are (a convex combination of equal rows), and lse is finite: a
// check that needs no reference implementation.
#include "cxx_kernels.h"

#include <cmath>
#include <cstdio>
#include <vector>

int main() {
  int64_t qShape[4] = {1, 4, 6, 8}, kvShape[4] = {1, 2, 6, 8},
          lseShape[3] = {1, 4, 6};
  std::vector<float> q(1 * 4 * 6 * 8), k(1 * 2 * 6 * 8), v(k.size()),
      out(q.size(), -1.0f), lse(1 * 4 * 6, 0.0f);
  for (size_t i = 0; i < q.size(); ++i)
    q[i] = std::sin(0.1f * static_cast<float>(i));
  for (size_t i = 0; i < k.size(); ++i) {
    k[i] = std::cos(0.3f * static_cast<float>(i));
    // v[h][n][d] = h + d / 8: equal rows within a head.
    v[i] = static_cast<float>(i / (6 * 8)) + static_cast<float>(i % 8) / 8;
  }
  auto tensor = [](std::vector<float> &data, int64_t *shape, int32_t ndim) {
    DLTensor t{};
    t.data = data.data();
    t.device.device_type = kDLCPU;
    t.ndim = ndim;
    t.dtype.code = kDLFloat;
    t.dtype.bits = 32;
    t.dtype.lanes = 1;
    t.shape = shape;
    return t;
  };
  DLTensor tq = tensor(q, qShape, 4), tk = tensor(k, kvShape, 4),
           tv = tensor(v, kvShape, 4), to = tensor(out, qShape, 4),
           tl = tensor(lse, lseShape, 3);
  attn_status_t status = cxx_prefill(&tq, &tk, &tv, &to, &tl, nullptr);
  if (status != ATTN_STATUS_OK) {
    std::printf("cxx_prefill: %s: %s\n", attn_status_name(status),
                attn_last_error());
    return 1;
  }
  int bad = 0;
  for (int h = 0; h < 4; ++h)
    for (int i = 0; i < 6; ++i)
      for (int d = 0; d < 8; ++d) {
        float want = static_cast<float>(h / 2) + static_cast<float>(d) / 8;
        bad += std::fabs(out[(h * 6 + i) * 8 + d] - want) > 1e-5f;
      }
  for (float l : lse)
    bad += !std::isfinite(l);
  std::printf("cxx-kernel-test: %d mismatches\n", bad);
  return bad != 0;
}
