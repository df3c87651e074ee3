//===- RandomInputs.cpp - random inputs for a bound spec ------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// The inputs attn-run and the tests make up for a spec whose sizes are bound
// (SpecBinding.cpp): values by argument role, page tables and lengths that
// fit the pool, ragged offsets, quantized caches and their scales.
//
//===----------------------------------------------------------------------===//

#include "attn/Execution/SpecBinding.h"

#include "attn/IR/AttnOps.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cmath>
#include <numeric>

using namespace mlir;
using namespace mlir::attn;

/// Sorted segment ids 0, 0, 1, 1, 1, 2, ...: 1 to 8 documents (at most one
/// per element) of random lengths.
static void segmentIds(HostTensor &t, std::mt19937_64 &rng) {
  int64_t n = t.numElements();
  if (n == 0)
    return;
  std::uniform_int_distribution<int64_t> docs(1, std::min<int64_t>(n, 8));
  int64_t numDocs = docs(rng);
  // numDocs - 1 distinct cut points in 1 .. n-1.
  std::vector<int64_t> cuts;
  for (int64_t c = 1; c < n; ++c)
    cuts.push_back(c);
  for (int64_t c = 0; c < numDocs - 1; ++c) {
    std::uniform_int_distribution<int64_t> pick(
        c, static_cast<int64_t>(cuts.size()) - 1);
    std::swap(cuts[c], cuts[pick(rng)]);
  }
  cuts.resize(numDocs - 1);
  std::sort(cuts.begin(), cuts.end());
  int64_t id = 0;
  size_t next = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (next < cuts.size() && i == cuts[next]) {
      ++id;
      ++next;
    }
    t.set(i, static_cast<double>(id));
  }
}

static bool isIntegerKind(ElementKind kind) {
  return kind == ElementKind::I8 || kind == ElementKind::I32 ||
         kind == ElementKind::I64;
}

void mlir::attn::randomFill(HostTensor &t, const ArgRole &role,
                            const llvm::StringMap<int64_t> &known,
                            std::mt19937_64 &rng) {
  int64_t n = t.numElements();
  if (StringRef(role.name).starts_with("mod_input") && isIntegerKind(t.kind)) {
    // A rank-1 integer tensor as long as the queries or the keys holds
    // segment (document) ids; other integer tensors get values usable as
    // indices into themselves: [0, smallest dimension).
    int64_t nq = known.lookup("Nq");
    int64_t nk = known.count("Nk") ? known.lookup("Nk") : nq;
    if (t.shape.size() == 1 && n > 0 && (n == nq || n == nk)) {
      segmentIds(t, rng);
      return;
    }
    int64_t bound = 1;
    if (!t.shape.empty())
      bound = *std::min_element(t.shape.begin(), t.shape.end());
    std::uniform_int_distribution<int64_t> d(0,
                                             std::max<int64_t>(bound, 1) - 1);
    for (int64_t i = 0; i < n; ++i)
      t.set(i, static_cast<double>(d(rng)));
    return;
  }
  if (role.name == "kv_len") {
    // Keys: k's (or kv_source's) rows; a projected self-attention reads its
    // keys from x, whose rows are the queries'.
    int64_t nk = known.count("Nk") ? known.lookup("Nk") : known.lookup("Nq");
    std::uniform_int_distribution<int64_t> d(0, std::max<int64_t>(nk, 0));
    for (int64_t i = 0; i < n; ++i)
      t.set(i, static_cast<double>(d(rng)));
    return;
  }
  if (role.name == "kv_start") {
    // Left padding: starts from -1 (as good as 0) to three quarters of the
    // keys, so that whole key tiles are skipped and others cut.
    int64_t nk = known.count("Nk") ? known.lookup("Nk") : known.lookup("Nq");
    std::uniform_int_distribution<int64_t> d(-1,
                                             std::max<int64_t>(nk, 0) * 3 / 4);
    for (int64_t i = 0; i < n; ++i)
      t.set(i, static_cast<double>(d(rng)));
    return;
  }
  if (role.name == "key_mask" && t.shape.size() == 2) {
    // Padding as frameworks make it, per batch entry: none, at the start, at
    // the end, or holes (a packed batch's separators).
    int64_t nk = t.shape[1];
    std::bernoulli_distribution hole(0.9);
    for (int64_t b = 0; b < t.shape[0]; ++b) {
      int64_t kind = std::uniform_int_distribution<int64_t>(0, 3)(rng);
      int64_t cut = std::uniform_int_distribution<int64_t>(0, nk)(rng);
      for (int64_t j = 0; j < nk; ++j)
        t.set(b * nk + j, kind == 0   ? 1
                          : kind == 1 ? (j >= cut ? 1 : 0)
                          : kind == 2 ? (j < cut ? 1 : 0)
                                      : (hole(rng) ? 1 : 0));
    }
    return;
  }
  if (role.name == "alibi") {
    // The usual geometric slopes 2^(-8 (h+1) / Hq).
    for (int64_t i = 0; i < n; ++i)
      t.set(i, std::pow(2.0, -8.0 * (i + 1) / static_cast<double>(n)));
    return;
  }
  if (role.name == "sink") {
    // Sink logits comparable to the random logits and above them, so that
    // the sink takes a visible share of the denominator.
    std::uniform_real_distribution<double> d(-1.0, 3.0);
    for (int64_t i = 0; i < n; ++i)
      t.set(i, d(rng));
    return;
  }
  if (role.name == "scale") {
    // A run-time logit scale: around 1/sqrt(D) for the usual head sizes,
    // sometimes zero or negative (a scale the GPU kernels cannot fold).
    std::uniform_real_distribution<double> d(-0.25, 0.5);
    for (int64_t i = 0; i < n; ++i)
      t.set(i, d(rng));
    return;
  }
  if ((role.name == "k" || role.name == "v") &&
      (t.kind == ElementKind::I8 || t.kind == ElementKind::F8E4M3 ||
       t.kind == ElementKind::F8E5M2)) {
    // A quantized cache: raw values in [-127, 127] (integers for int8,
    // rounded to fp8 otherwise), read with scales near 1/127.
    std::uniform_real_distribution<double> d(-127.0, 127.0);
    for (int64_t i = 0; i < n; ++i)
      t.set(i, t.kind == ElementKind::I8 ? std::round(d(rng)) : d(rng));
    return;
  }
  if (role.name == "k_scale" || role.name == "v_scale") {
    // [0.5, 1.5] / 127: the dequantized cache lies in [-1.5, 1.5].
    std::uniform_real_distribution<double> d(0.5, 1.5);
    for (int64_t i = 0; i < n; ++i)
      t.set(i, d(rng) / 127.0);
    return;
  }
  if (t.kind == ElementKind::I1) {
    std::bernoulli_distribution d(0.8);
    for (int64_t i = 0; i < n; ++i)
      t.set(i, d(rng) ? 1 : 0);
    return;
  }
  if (t.kind == ElementKind::I32 || t.kind == ElementKind::I64 ||
      t.kind == ElementKind::I8) {
    std::uniform_int_distribution<int64_t> d(0, 8);
    for (int64_t i = 0; i < n; ++i)
      t.set(i, static_cast<double>(d(rng)));
    return;
  }
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  for (int64_t i = 0; i < n; ++i)
    t.set(i, d(rng));
}

void mlir::attn::randomPaging(HostTensor &table, HostTensor &kvLen,
                              bool tableGiven, bool kvLenGiven, int64_t pages,
                              int64_t pageSize, std::mt19937_64 &rng,
                              llvm::ArrayRef<int64_t> newTokens) {
  if (tableGiven && kvLenGiven)
    return;
  int64_t batch = table.shape[0], maxPages = table.shape[1];
  if (tableGiven) {
    // Lengths that read only the table's valid leading entries.
    for (int64_t b = 0; b < batch; ++b) {
      int64_t valid = 0;
      while (valid < maxPages) {
        int64_t e = table.getInt(b * maxPages + valid);
        if (e < 0 || e >= pages)
          break;
        ++valid;
      }
      std::uniform_int_distribution<int64_t> d(0, valid * pageSize);
      kvLen.set(b, static_cast<double>(d(rng)));
    }
    return;
  }
  // Lengths: given, or random with edge cases (empty, a page boundary, the
  // whole table, a partial last page), then trimmed so that the sequences'
  // pages fit in the pool.
  int64_t nk = maxPages * pageSize;
  std::vector<int64_t> lens(batch);
  std::uniform_int_distribution<int> kind(0, 7);
  std::uniform_int_distribution<int64_t> any(0, nk);
  std::uniform_int_distribution<int64_t> page(0, maxPages);
  for (int64_t b = 0; b < batch; ++b) {
    if (kvLenGiven) {
      lens[b] = std::clamp<int64_t>(kvLen.getInt(b), 0, nk);
      continue;
    }
    int k = kind(rng);
    if (b < static_cast<int64_t>(newTokens.size()) && k != 0 &&
        newTokens[b] <= nk) {
      // Chunked prefill: the new tokens and some cached ones.
      std::uniform_int_distribution<int64_t> cached(0, nk - newTokens[b]);
      lens[b] = newTokens[b] + (k == 1 ? 0 : cached(rng));
      continue;
    }
    switch (k) {
    case 0:
      lens[b] = 0;
      break;
    case 1:
      lens[b] = page(rng) * pageSize;
      break;
    case 2:
      lens[b] = nk;
      break;
    default:
      lens[b] = any(rng);
    }
  }
  int64_t free = pages;
  std::vector<int64_t> order(std::max<int64_t>(pages, 0));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  size_t next = 0;
  for (int64_t b = 0; b < batch; ++b) {
    int64_t need = llvm::divideCeil(lens[b], pageSize);
    if (need > free) {
      need = free;
      lens[b] = std::min(lens[b], need * pageSize);
    }
    free -= need;
    for (int64_t p = 0; p < maxPages; ++p)
      table.set(b * maxPages + p,
                p < need ? static_cast<double>(order[next + p]) : -1.0);
    next += need;
    if (!kvLenGiven)
      kvLen.set(b, static_cast<double>(lens[b]));
  }
}

void mlir::attn::randomOffsets(HostTensor &cu, int64_t tokens,
                               std::mt19937_64 &rng) {
  int64_t n = cu.numElements();
  if (n == 0)
    return;
  // n - 1 sequences: sorted cut points in [0, tokens]; the first at 0 and
  // the last at `tokens` most of the time (else some rows lie outside every
  // sequence); repeated cuts are empty sequences.
  std::uniform_int_distribution<int64_t> d(0, std::max<int64_t>(tokens, 0));
  std::vector<int64_t> cuts(n);
  for (int64_t &c : cuts)
    c = d(rng);
  std::sort(cuts.begin(), cuts.end());
  std::bernoulli_distribution whole(0.8);
  if (whole(rng))
    cuts.front() = 0;
  if (whole(rng))
    cuts.back() = tokens;
  for (int64_t i = 0; i < n; ++i)
    cu.set(i, static_cast<double>(cuts[i]));
}

void mlir::attn::randomRaggedKvLen(HostTensor &kvLen, const HostTensor &cuK,
                                   std::mt19937_64 &rng) {
  std::uniform_int_distribution<int> kind(0, 9);
  for (int64_t s = 0; s < kvLen.numElements(); ++s) {
    int64_t nk = s + 1 < cuK.numElements()
                     ? std::max<int64_t>(cuK.getInt(s + 1) - cuK.getInt(s), 0)
                     : 0;
    std::uniform_int_distribution<int64_t> some(0, nk);
    int k = kind(rng);
    int64_t len = k < 5 ? nk : k < 8 ? some(rng) : k == 8 ? 0 : nk + 3;
    kvLen.set(s, static_cast<double>(len));
  }
}

void mlir::attn::fillRandomInputs(const SpecInfo &spec, SpecBinding &binding,
                                  uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (unsigned a = 0; a < binding.shapes.size(); ++a) {
    if (binding.loaded[a])
      continue;
    binding.args[a].resize(binding.kinds[a], binding.shapes[a]);
    randomFill(binding.args[a], spec.roles[a], binding.sizes, rng);
  }
  for (const char *name : {"cu_seqlens_q", "cu_seqlens_k"}) {
    int c = spec.findArg(name),
        src = spec.findArg(StringRef(name).ends_with("_q") ? "q" : "k");
    if (c < 0 || src < 0 || binding.loaded[c])
      continue;
    auto a = cast<AttentionOp>(spec.attnOp);
    randomOffsets(binding.args[c], binding.shapes[src][a.getPhysicalDim(2)],
                  rng);
  }
  int t = spec.findArg("page_table"), k = spec.findArg("k"),
      l = spec.findArg("kv_len"), cq = spec.findArg("cu_seqlens_q"),
      ck = spec.findArg("cu_seqlens_k");
  if (t >= 0 && k >= 0 && l >= 0) {
    auto a = cast<AttentionOp>(spec.attnOp);
    int64_t pages = binding.shapes[k][0];
    int64_t pageSize = binding.shapes[k][a.getPhysicalDim(2)];
    // A paged ragged batch: each sequence's new tokens (query rows).
    std::vector<int64_t> newTokens;
    if (cq >= 0)
      for (int64_t s = 0; s + 1 < binding.args[cq].numElements(); ++s)
        newTokens.push_back(std::max<int64_t>(
            binding.args[cq].getInt(s + 1) - binding.args[cq].getInt(s), 0));
    randomPaging(binding.args[t], binding.args[l], binding.loaded[t],
                 binding.loaded[l], pages, pageSize, rng, newTokens);
  } else if (l >= 0 && ck >= 0 && !binding.loaded[l]) {
    randomRaggedKvLen(binding.args[l], binding.args[ck], rng);
  }
}
