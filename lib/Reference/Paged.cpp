//===- Paged.cpp - the reference's reading of paged K/V -------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// Written from docs/Semantics.md ("Paged K/V"): key j < kv_len[b] of batch
// entry b is row j % S of page page_table[b, j / S] of the pools. The
// reference copies the pages a sequence reads into dense K and V and runs
// the dense reference on them.
//
//===----------------------------------------------------------------------===//

#include "attn/Reference/Reference.h"

#include "Internal.h"

#include <algorithm>
#include <cmath>

using namespace attn::ref;
using detail::shapeStr;

std::string attn::ref::densePagedKv(const Spec &spec, const Inputs &in,
                                    Tensor &k, Tensor &v) {
  if (!in.pageTable || !in.k || !in.v || !in.q)
    return "paged attention needs q, k, v and a page table";
  if (!in.kvLen)
    return "paged attention needs kvLen";
  const Tensor &pt = *in.pageTable;
  if (pt.shape.size() != 2)
    return "page table: expected rank 2, got shape " + shapeStr(pt.shape);
  if (in.k->shape.size() != 4 || in.v->shape.size() != 4 ||
      in.q->shape.size() != 4)
    return "q, k and v must have rank 4";
  for (const Tensor *t : {in.pageTable, in.k, in.v}) {
    size_t n = 1;
    for (int64_t d : t->shape)
      n *= static_cast<size_t>(std::max<int64_t>(d, 0));
    if (n != t->data.size())
      return "tensor of shape " + shapeStr(t->shape) + " holds " +
             std::to_string(t->data.size()) + " values";
  }
  const bool bhnd = spec.layout == Layout::BHND;
  const int64_t b = pt.shape[0], maxPages = pt.shape[1];
  const int64_t qb = in.q->shape[0];
  if (qb != b)
    return "page table has " + std::to_string(b) + " rows, batch is " +
           std::to_string(qb);
  if (static_cast<int64_t>(in.kvLen->size()) != b)
    return "kvLen has " + std::to_string(in.kvLen->size()) +
           " entries, batch is " + std::to_string(b);
  // Pools: [P, H, S, D] (BHND) or [P, S, H, D] (BNHD).
  auto heads = [&](const Tensor &t) { return t.shape[bhnd ? 1 : 2]; };
  auto rows = [&](const Tensor &t) { return t.shape[bhnd ? 2 : 1]; };
  const Tensor &kp = *in.k, &vp = *in.v;
  const int64_t pages = kp.shape[0], hkv = heads(kp), s = rows(kp);
  if (vp.shape[0] != pages || heads(vp) != hkv || rows(vp) != s)
    return "k pool " + shapeStr(kp.shape) + " and v pool " +
           shapeStr(vp.shape) + " differ in pages, heads or page size";
  if (s < 1)
    return "page size must be positive";
  const int64_t nk = maxPages * s;
  auto dense = [&](const Tensor &pool, Tensor &out) {
    int64_t d = pool.shape[3];
    out.shape = bhnd ? std::vector<int64_t>{b, hkv, nk, d}
                     : std::vector<int64_t>{b, nk, hkv, d};
    out.data.assign(static_cast<size_t>(b * hkv * nk * d), 0.0);
  };
  dense(kp, k);
  dense(vp, v);
  for (int64_t bi = 0; bi < b; ++bi) {
    int64_t len = std::clamp<int64_t>((*in.kvLen)[bi], 0, nk);
    for (int64_t j = 0; j < len; ++j) {
      double entry = pt.data[static_cast<size_t>(bi * maxPages + j / s)];
      if (!(entry >= 0 && entry < static_cast<double>(pages)))
        return "page table entry [" + std::to_string(bi) + ", " +
               std::to_string(j / s) + "] = " + std::to_string(entry) +
               " is outside the pool of " + std::to_string(pages) + " pages";
      int64_t page = static_cast<int64_t>(entry), row = j % s;
      for (auto [pool, out] :
           {std::pair<const Tensor *, Tensor *>{&kp, &k}, {&vp, &v}}) {
        int64_t d = pool->shape[3];
        for (int64_t g = 0; g < hkv; ++g) {
          int64_t src = bhnd ? ((page * hkv + g) * s + row) * d
                             : ((page * s + row) * hkv + g) * d;
          int64_t dst = bhnd ? ((bi * hkv + g) * nk + j) * d
                             : ((bi * nk + j) * hkv + g) * d;
          std::copy_n(pool->data.begin() + src, d, out->data.begin() + dst);
        }
      }
    }
  }
  return "";
}
