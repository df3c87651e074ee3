//===- Ragged.cpp - the reference's ragged batches ------------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// Written from docs/Semantics.md ("Ragged batches"): every sequence of a
// packed batch is its own attention problem over its slices of q, k and v.
// The reference copies each sequence's rows into dense B = 1 tensors, runs
// the dense reference on them and writes the rows back.
//
//===----------------------------------------------------------------------===//

#include "attn/Reference/Reference.h"

#include "Internal.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace attn::ref;
using detail::shapeStr;

namespace {

/// Rows [r0, r0 + n) along N of a rank-4 B = 1 tensor in `layout`.
Tensor sliceRows(const Tensor &t, Layout layout, int64_t r0, int64_t n) {
  bool bhnd = layout == Layout::BHND;
  int64_t h = bhnd ? t.shape[1] : t.shape[2];
  int64_t rows = bhnd ? t.shape[2] : t.shape[1];
  int64_t d = t.shape[3];
  Tensor s;
  s.shape = bhnd ? std::vector<int64_t>{1, h, n, d}
                 : std::vector<int64_t>{1, n, h, d};
  s.data.resize(static_cast<size_t>(h * n * d));
  for (int64_t hi = 0; hi < h; ++hi)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t x = 0; x < d; ++x) {
        int64_t from =
            bhnd ? (hi * rows + r0 + i) * d + x : ((r0 + i) * h + hi) * d + x;
        int64_t to = bhnd ? (hi * n + i) * d + x : (i * h + hi) * d + x;
        s.data[to] = t.data[from];
      }
  return s;
}

/// The part of a mask or bias (rank <= 4, broadcast to [1, Hq, Tq, Nk])
/// that one sequence reads: its rows [r0, r0 + nr) of dimension Nq and
/// columns [c0, c0 + nc) of Nk (dimensions of size 1 stay as they are).
Tensor sliceMask(const Tensor &t, int64_t r0, int64_t nr, int64_t c0,
                 int64_t nc) {
  Tensor s;
  s.shape = t.shape;
  size_t rank = t.shape.size();
  int64_t rows = rank >= 2 ? t.shape[rank - 2] : 1;
  int64_t cols = rank >= 1 ? t.shape[rank - 1] : 1;
  bool sliceRows = rank >= 2 && rows != 1, sliceCols = rank >= 1 && cols != 1;
  int64_t outRows = sliceRows ? nr : rows, outCols = sliceCols ? nc : cols;
  if (rank >= 2)
    s.shape[rank - 2] = outRows;
  if (rank >= 1)
    s.shape[rank - 1] = outCols;
  int64_t outer = 1;
  for (size_t d = 0; d + 2 < rank; ++d)
    outer *= t.shape[d];
  s.data.resize(static_cast<size_t>(outer * outRows * outCols));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t r = 0; r < outRows; ++r)
      for (int64_t c = 0; c < outCols; ++c) {
        int64_t fr = sliceRows ? r0 + r : r, fc = sliceCols ? c0 + c : c;
        s.data[(o * outRows + r) * outCols + c] =
            t.data[(o * rows + fr) * cols + fc];
      }
  return s;
}

std::string checkOffsets(const char *name, const std::vector<int64_t> &cu,
                         int64_t tokens) {
  if (cu.empty())
    return std::string(name) + " must hold B + 1 >= 1 offsets";
  if (cu.front() < 0 || cu.back() > tokens)
    return std::string(name) + " offsets must lie within the " +
           std::to_string(tokens) + " packed tokens";
  for (size_t i = 0; i + 1 < cu.size(); ++i)
    if (cu[i] > cu[i + 1])
      return std::string(name) + " offsets must be non-decreasing";
  return "";
}

} // namespace

std::string attn::ref::raggedAttention(const Spec &spec, const Inputs &in,
                                       Outputs &result, int64_t *pairs) {
  const bool paged = in.pageTable != nullptr;
  if (!in.cuSeqlensQ)
    return "ragged batches need cuSeqlensQ";
  if (paged != !in.cuSeqlensK)
    return paged ? "a paged ragged batch takes no cuSeqlensK"
                 : "ragged batches need cuSeqlensK (or a page table)";
  if (!in.q || !in.k || !in.v)
    return "q, k and v are required";
  if (paged && !in.kvLen)
    return "a paged ragged batch needs kvLen";
  for (const Tensor *t : {in.q, in.k, in.v}) {
    if (paged && t != in.q)
      continue;
    if (t->shape.size() != 4 || t->shape[0] != 1)
      return "ragged q, k and v must be rank 4 with B = 1; got " +
             shapeStr(t->shape);
  }
  const std::vector<int64_t> &cq = *in.cuSeqlensQ;
  const std::vector<int64_t> *ck = in.cuSeqlensK;
  if (ck && cq.size() != ck->size())
    return "cuSeqlensQ has " + std::to_string(cq.size()) +
           " offsets, cuSeqlensK " + std::to_string(ck->size());
  const bool bhnd = spec.layout == Layout::BHND;
  auto rows = [&](const Tensor &t) { return t.shape[bhnd ? 2 : 1]; };
  auto heads = [&](const Tensor &t) { return t.shape[bhnd ? 1 : 2]; };
  if (std::string err = checkOffsets("cuSeqlensQ", cq, rows(*in.q));
      !err.empty())
    return err;
  if (ck)
    if (std::string err = checkOffsets("cuSeqlensK", *ck, rows(*in.k));
        !err.empty())
      return err;
  const size_t seqs = cq.size() - 1;
  if (in.kvLen && in.kvLen->size() != seqs)
    return "kvLen has " + std::to_string(in.kvLen->size()) + " entries for " +
           std::to_string(seqs) + " sequences";
  if (in.keyMask)
    return "keyMask is not defined for ragged batches";
  if (in.kvStart && in.kvStart->size() != seqs)
    return "kvStart has " + std::to_string(in.kvStart->size()) +
           " entries for " + std::to_string(seqs) + " sequences";
  if (paged && (in.pageTable->shape.size() != 2 ||
                in.pageTable->shape[0] != static_cast<int64_t>(seqs)))
    return "the page table must have one row per sequence (" +
           std::to_string(seqs) + "); got " + shapeStr(in.pageTable->shape);
  const int64_t tq = rows(*in.q), hq = heads(*in.q), dv = in.v->shape[3];
  result.out.shape = bhnd ? std::vector<int64_t>{1, hq, tq, dv}
                          : std::vector<int64_t>{1, tq, hq, dv};
  result.out.data.assign(static_cast<size_t>(hq * tq * dv), 0.0);
  result.lse.shape = {1, hq, tq};
  result.lse.data.assign(static_cast<size_t>(hq * tq),
                         -std::numeric_limits<double>::infinity());
  if (pairs)
    *pairs = 0;
  for (size_t s = 0; s < seqs; ++s) {
    int64_t q0 = cq[s], nq = cq[s + 1] - cq[s];
    // A sequence without queries reads nothing (not even its page table).
    if (nq == 0)
      continue;
    Tensor qs = sliceRows(*in.q, spec.layout, q0, nq);
    Tensor ks, vs, pt, mask, bias;
    std::vector<int64_t> kvLen, kvStart;
    Inputs sub;
    sub.q = &qs;
    int64_t k0 = 0, nk;
    if (paged) {
      sub.k = in.k;
      sub.v = in.v;
      int64_t m = in.pageTable->shape[1];
      pt.shape = {1, m};
      pt.data.assign(in.pageTable->data.begin() + s * m,
                     in.pageTable->data.begin() + (s + 1) * m);
      sub.pageTable = &pt;
      nk = m * rows(*in.k);
    } else {
      k0 = (*ck)[s];
      nk = (*ck)[s + 1] - k0;
      ks = sliceRows(*in.k, spec.layout, k0, nk);
      vs = sliceRows(*in.v, spec.layout, k0, nk);
      sub.k = &ks;
      sub.v = &vs;
    }
    if (in.kvLen) {
      kvLen = {(*in.kvLen)[s]};
      sub.kvLen = &kvLen;
    }
    if (in.kvStart) {
      kvStart = {(*in.kvStart)[s]};
      sub.kvStart = &kvStart;
    }
    if (in.mask) {
      mask = sliceMask(*in.mask, q0, nq, k0, nk);
      sub.mask = &mask;
    }
    if (in.bias) {
      bias = sliceMask(*in.bias, q0, nq, k0, nk);
      sub.bias = &bias;
    }
    sub.alibiSlopes = in.alibiSlopes;
    sub.sink = in.sink;
    sub.scoreMod = in.scoreMod;
    sub.maskMod = in.maskMod;
    sub.modInputs = in.modInputs;
    sub.regionBatchOffset = static_cast<int64_t>(s);
    if (pairs) {
      int64_t p = countAllowedPairs(spec, sub);
      if (p < 0)
        return "sequence " + std::to_string(s) + " is inconsistent";
      *pairs += p;
      continue;
    }
    Outputs o;
    if (std::string err = attention(spec, sub, o); !err.empty())
      return "sequence " + std::to_string(s) + ": " + err;
    for (int64_t h = 0; h < hq; ++h)
      for (int64_t i = 0; i < nq; ++i) {
        result.lse.data[h * tq + q0 + i] = o.lse.data[h * nq + i];
        for (int64_t x = 0; x < dv; ++x) {
          int64_t from = bhnd ? (h * nq + i) * dv + x : (i * hq + h) * dv + x;
          int64_t to =
              bhnd ? (h * tq + q0 + i) * dv + x : ((q0 + i) * hq + h) * dv + x;
          result.out.data[to] = o.out.data[from];
        }
      }
  }
  return "";
}
