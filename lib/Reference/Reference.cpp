//===- Reference.cpp - f64 attention reference ----------------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// Written from docs/semantics.md only. Every loop is the obvious one; speed
// is not a goal, clarity and f64 accumulation are.
//
//===----------------------------------------------------------------------===//

#include "attn/Reference/Reference.h"

#include "Internal.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <tuple>

using namespace attn::ref;
using attn::ref::detail::roundHalfEven;
using attn::ref::detail::shapeStr;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// Product of `shape` into `n`; false on a negative dimension or overflow.
bool numElements(const std::vector<int64_t> &shape, int64_t &n) {
  n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return false;
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d)
      return false;
    n *= d;
  }
  return true;
}

/// Checks that `t` has consistent shape and data.
std::string checkTensor(const char *name, const Tensor &t) {
  int64_t n;
  if (!numElements(t.shape, n))
    return std::string(name) + ": invalid shape " + shapeStr(t.shape);
  if (static_cast<uint64_t>(n) != t.data.size())
    return std::string(name) + ": shape " + shapeStr(t.shape) + " needs " +
           std::to_string(n) + " elements, data has " +
           std::to_string(t.data.size());
  return "";
}

/// Logical sizes of one attention problem.
struct Dims {
  int64_t b = 0, hq = 0, hkv = 0, nq = 0, nk = 0, dqk = 0, dv = 0;
};

/// Element strides of a tensor broadcast to the logical [B, Hq, Nq, Nk];
/// broadcast dimensions get stride 0.
struct Broadcast {
  int64_t stride[4] = {0, 0, 0, 0};
  int64_t index(int64_t b, int64_t h, int64_t i, int64_t j) const {
    return b * stride[0] + h * stride[1] + i * stride[2] + j * stride[3];
  }
};

std::string makeBroadcast(const char *name, const Tensor &t, const Dims &d,
                          Broadcast &bc) {
  if (std::string err = checkTensor(name, t); !err.empty())
    return err;
  if (t.shape.size() > 4)
    return std::string(name) + ": rank " + std::to_string(t.shape.size()) +
           " > 4";
  const int64_t full[4] = {d.b, d.hq, d.nq, d.nk};
  size_t offset = 4 - t.shape.size();
  int64_t stride = 1;
  for (int k = 3; k >= 0; --k) {
    if (static_cast<size_t>(k) < offset) {
      bc.stride[k] = 0;
      continue;
    }
    int64_t dim = t.shape[k - offset];
    if (dim == full[k]) {
      bc.stride[k] = full[k] == 1 ? 0 : stride;
    } else if (dim == 1) {
      bc.stride[k] = 0;
    } else {
      return std::string(name) + ": shape " + shapeStr(t.shape) +
             " is not broadcastable to [B, Hq, Nq, Nk] = " +
             shapeStr({d.b, d.hq, d.nq, d.nk});
    }
    stride *= dim;
  }
  return "";
}

/// Element offset of [b, h, n, x] in a rank-4 tensor of the given layout,
/// where the logical sizes are H heads, N positions and X features.
int64_t offset4(Layout layout, int64_t h, int64_t n, int64_t x, int64_t bi,
                int64_t hi, int64_t ni, int64_t xi) {
  if (layout == Layout::BHND)
    return ((bi * h + hi) * n + ni) * x + xi;
  return ((bi * n + ni) * h + hi) * x + xi;
}

/// Logical [B, H, N, X] of a rank-4 tensor in the given layout.
void logical4(Layout layout, const Tensor &t, int64_t &b, int64_t &h,
              int64_t &n, int64_t &x) {
  b = t.shape[0];
  h = layout == Layout::BHND ? t.shape[1] : t.shape[2];
  n = layout == Layout::BHND ? t.shape[2] : t.shape[1];
  x = t.shape[3];
}

/// Everything attention() needs, checked once.
struct Problem {
  Dims d;
  bool bottomRight = false;
  double scale = 1.0;
  std::vector<int64_t> kvLen;   // clamped, [B]
  std::vector<int64_t> kvStart; // [B], 0 without kvStart
  Broadcast maskBc, biasBc;
};

std::string prepare(const Spec &spec, const Inputs &in, Problem &p) {
  if (!in.q || !in.k || !in.v)
    return "q, k and v are required";
  for (auto [name, t] : {std::pair<const char *, const Tensor *>{"q", in.q},
                         {"k", in.k},
                         {"v", in.v}}) {
    if (std::string err = checkTensor(name, *t); !err.empty())
      return err;
    if (t->shape.size() != 4)
      return std::string(name) + ": expected rank 4, got shape " +
             shapeStr(t->shape);
  }
  Dims &d = p.d;
  int64_t kb, vb, vh, vn;
  logical4(spec.layout, *in.q, d.b, d.hq, d.nq, d.dqk);
  logical4(spec.layout, *in.k, kb, d.hkv, d.nk, vn);
  if (vn != d.dqk)
    return "k: head dim " + std::to_string(vn) + " differs from q's " +
           std::to_string(d.dqk);
  logical4(spec.layout, *in.v, vb, vh, vn, d.dv);
  if (kb != d.b || vb != d.b)
    return "batch sizes differ: q " + std::to_string(d.b) + ", k " +
           std::to_string(kb) + ", v " + std::to_string(vb);
  if (vh != d.hkv)
    return "k has " + std::to_string(d.hkv) + " heads but v has " +
           std::to_string(vh);
  if (vn != d.nk)
    return "k has " + std::to_string(d.nk) + " keys but v has " +
           std::to_string(vn);
  if (d.hq < 1 || d.hkv < 1)
    return "head counts must be positive (Hq " + std::to_string(d.hq) +
           ", Hkv " + std::to_string(d.hkv) + ")";
  for (int64_t x : {d.b, d.hq, d.nq, d.nk, d.dqk, d.dv})
    if (x > (int64_t(1) << 31))
      return "dimension " + std::to_string(x) + " is too large";
  if (int64_t n; !numElements({d.b, d.hq, d.nq, std::max(d.dv, int64_t(1)),
                               std::max(d.nk, int64_t(1))},
                              n) ||
                 n > (int64_t(1) << 40))
    return "problem too large for the reference";
  if (d.hq % d.hkv != 0)
    return "Hq " + std::to_string(d.hq) + " is not a multiple of Hkv " +
           std::to_string(d.hkv);

  if (spec.scale) {
    p.scale = *spec.scale;
  } else {
    if (d.dqk == 0)
      return "Dqk is 0 and no scale is given";
    p.scale = 1.0 / std::sqrt(static_cast<double>(d.dqk));
  }
  if (spec.softcap && !(*spec.softcap > 0.0 && std::isfinite(*spec.softcap)))
    return "softcap must be positive and finite";

  p.bottomRight = spec.causal == Causal::BottomRight;
  if (spec.align) {
    bool br = *spec.align == Align::BottomRight;
    if (spec.causal != Causal::None && br != p.bottomRight)
      return "align contradicts the causal mask's alignment";
    p.bottomRight = br;
  }

  p.kvLen.assign(static_cast<size_t>(d.b), d.nk);
  if (in.kvLen) {
    if (static_cast<int64_t>(in.kvLen->size()) != d.b)
      return "kvLen has " + std::to_string(in.kvLen->size()) +
             " entries, batch is " + std::to_string(d.b);
    for (int64_t b = 0; b < d.b; ++b)
      p.kvLen[b] = std::clamp<int64_t>((*in.kvLen)[b], 0, d.nk);
  }
  p.kvStart.assign(static_cast<size_t>(d.b), 0);
  if (in.kvStart) {
    if (static_cast<int64_t>(in.kvStart->size()) != d.b)
      return "kvStart has " + std::to_string(in.kvStart->size()) +
             " entries, batch is " + std::to_string(d.b);
    p.kvStart = *in.kvStart;
  }
  if (in.keyMask) {
    if (std::string err = checkTensor("keyMask", *in.keyMask); !err.empty())
      return err;
    if (in.keyMask->shape != std::vector<int64_t>{d.b, d.nk})
      return "keyMask: expected shape [" + std::to_string(d.b) + ", " +
             std::to_string(d.nk) + "], got " + shapeStr(in.keyMask->shape);
  }
  if (in.mask)
    if (std::string err = makeBroadcast("mask", *in.mask, d, p.maskBc);
        !err.empty())
      return err;
  if (in.bias)
    if (std::string err = makeBroadcast("bias", *in.bias, d, p.biasBc);
        !err.empty())
      return err;
  if (in.sink && static_cast<int64_t>(in.sink->size()) != d.hq)
    return "sink has " + std::to_string(in.sink->size()) +
           " entries; expected Hq = " + std::to_string(d.hq);
  if (in.sink && spec.norm == Norm::Sigmoid)
    return "sink needs softmax normalization";
  if (in.alibiSlopes && static_cast<int64_t>(in.alibiSlopes->size()) != d.hq)
    return "alibiSlopes has " + std::to_string(in.alibiSlopes->size()) +
           " entries, Hq is " + std::to_string(d.hq);
  for (size_t m = 0; m < in.modInputs.size(); ++m) {
    if (!in.modInputs[m])
      return "mod_inputs #" + std::to_string(m) + " is null";
    std::string name = "mod_inputs #" + std::to_string(m);
    if (std::string err = checkTensor(name.c_str(), *in.modInputs[m]);
        !err.empty())
      return err;
  }
  for (auto [name, prog, wantFloat] :
       {std::tuple<const char *, const RegionProgram *, bool>{
            "score_mod", in.scoreMod, true},
        {"mask_mod", in.maskMod, false}}) {
    if (!prog)
      continue;
    if (prog->result < 0 ||
        static_cast<size_t>(prog->result) >= prog->instrs.size())
      return std::string(name) + " has no result";
    if (prog->instrs[prog->result].type.isFloat() != wantFloat)
      return std::string(name) + " must yield " +
             (wantFloat ? "a float (the new logit)" : "an i1");
    for (const Instr &instr : prog->instrs)
      if (instr.op == Opcode::Arg && instr.arg == 4 && !wantFloat)
        return "mask_mod reads the logit (block argument 4), which only "
               "score_mod has";
  }
  return "";
}

/// The query's absolute position p(i).
int64_t position(const Problem &p, int64_t b, int64_t i) {
  return p.bottomRight ? i + p.kvLen[b] - p.d.nq : i;
}

/// Whether key j is allowed for query i by kvLen, kvStart, causal mask and
/// window.
bool structurallyAllowed(const Spec &spec, const Problem &p, const Inputs &in,
                         int64_t b, int64_t i, int64_t j) {
  if (j >= p.kvLen[b] || j < p.kvStart[b])
    return false;
  if (in.keyMask && in.keyMask->data[static_cast<size_t>(b * p.d.nk + j)] == 0)
    return false;
  int64_t pos = position(p, b, i);
  if (spec.causal != Causal::None && j > pos)
    return false;
  if (spec.windowLeft && pos - j > *spec.windowLeft)
    return false;
  if (spec.windowRight && j - pos > *spec.windowRight)
    return false;
  return true;
}

bool maskAllows(const Inputs &in, const Problem &p, int64_t b, int64_t h,
                int64_t i, int64_t j) {
  return !in.mask || in.mask->data[p.maskBc.index(b, h, i, j)] != 0.0;
}

/// mask_mod's verdict on (b, h, i, j) in `allowed` (true without mask_mod);
/// returns the region's error, if any.
std::string maskModAllows(const Inputs &in, int64_t b, int64_t h, int64_t i,
                          int64_t j, bool &allowed) {
  allowed = true;
  if (!in.maskMod)
    return "";
  const int64_t idx[4] = {b + in.regionBatchOffset, h, i, j};
  double r;
  if (std::string err =
          evaluateRegion(*in.maskMod, "mask_mod", idx, 0.0, in.modInputs, r);
      !err.empty())
    return err;
  allowed = r != 0.0;
  return "";
}

} // namespace

/// Latent attention: the first `dv` columns of k (any rank-4 layout: D is
/// the last physical dimension).
static std::string latentValue(const Inputs &in, Tensor &v) {
  if (!in.k || in.k->shape.size() != 4)
    return "latent attention needs a rank-4 k";
  int64_t d = in.k->shape[3], dv = *in.vFromK;
  if (dv < 1 || dv > d)
    return "vFromK = " + std::to_string(dv) + " must lie in [1, " +
           std::to_string(d) + "]";
  v.shape = in.k->shape;
  v.shape[3] = dv;
  int64_t rows =
      static_cast<int64_t>(in.k->data.size()) / std::max<int64_t>(d, 1);
  v.data.resize(static_cast<size_t>(rows * dv));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t x = 0; x < dv; ++x)
      v.data[r * dv + x] = in.k->data[r * d + x];
  return "";
}

/// Quantized K/V: `raw` times its scales (one per row of D values, or one
/// per leading index and head).
static std::string dequantized(const Spec &spec, const Tensor &raw,
                               const Tensor &scale, Tensor &out) {
  if (raw.shape.size() != 4)
    return "a quantized cache must have rank 4";
  const int64_t d = raw.shape[3];
  const int64_t hDim = spec.layout == Layout::BHND ? 1 : 2;
  std::vector<int64_t> perToken(raw.shape.begin(), raw.shape.end() - 1);
  std::vector<int64_t> perBlock = {raw.shape[0], raw.shape[hDim]};
  bool token = scale.shape == perToken;
  if (!token && scale.shape != perBlock)
    return "scale tensor of shape " + detail::shapeStr(scale.shape) +
           " is neither per token " + detail::shapeStr(perToken) +
           " nor per block and head " + detail::shapeStr(perBlock);
  out.shape = raw.shape;
  out.data.resize(raw.data.size());
  const int64_t rows =
      static_cast<int64_t>(raw.data.size()) / std::max<int64_t>(d, 1);
  for (int64_t r = 0; r < rows; ++r) {
    // Row r is (i0, i1, i2) in row-major order over the first three dims.
    int64_t i2 = r % raw.shape[2], i1 = (r / raw.shape[2]) % raw.shape[1],
            i0 = r / (raw.shape[2] * raw.shape[1]);
    int64_t head = hDim == 1 ? i1 : i2;
    double sc = token
                    ? scale.data[static_cast<size_t>(r)]
                    : scale.data[static_cast<size_t>(i0 * perBlock[1] + head)];
    for (int64_t x = 0; x < d; ++x)
      out.data[r * d + x] = raw.data[r * d + x] * sc;
  }
  return "";
}

std::string attn::ref::attention(const Spec &spec, const Inputs &in,
                                 Outputs &result) {
  if (in.kScale) {
    if (!in.k || !in.v)
      return "a quantized cache needs k and v";
    if (!in.vFromK && !in.vScale)
      return "a quantized cache needs kScale and vScale";
    Tensor k, v;
    if (std::string err = dequantized(spec, *in.k, *in.kScale, k); !err.empty())
      return "k: " + err;
    Inputs plain = in;
    plain.k = &k;
    plain.kScale = plain.vScale = nullptr;
    if (!in.vFromK) {
      if (std::string err = dequantized(spec, *in.v, *in.vScale, v);
          !err.empty())
        return "v: " + err;
      plain.v = &v;
    } else {
      plain.v = &k;
    }
    return attention(spec, plain, result);
  }
  if (in.vFromK) {
    Tensor v;
    if (std::string err = latentValue(in, v); !err.empty())
      return err;
    Inputs explicitV = in;
    explicitV.v = &v;
    explicitV.vFromK.reset();
    return attention(spec, explicitV, result);
  }
  if (in.cuSeqlensQ || in.cuSeqlensK)
    return raggedAttention(spec, in, result);
  if (in.pageTable) {
    Tensor k, v;
    if (std::string err = densePagedKv(spec, in, k, v); !err.empty())
      return err;
    Inputs dense = in;
    dense.k = &k;
    dense.v = &v;
    dense.pageTable = nullptr;
    return attention(spec, dense, result);
  }
  Problem p;
  if (std::string err = prepare(spec, in, p); !err.empty())
    return err;
  const Dims &d = p.d;
  const int64_t group = d.hq / d.hkv;
  const Layout L = spec.layout;

  result.out.shape = L == Layout::BHND
                         ? std::vector<int64_t>{d.b, d.hq, d.nq, d.dv}
                         : std::vector<int64_t>{d.b, d.nq, d.hq, d.dv};
  result.out.data.assign(static_cast<size_t>(d.b * d.hq * d.nq * d.dv), 0.0);
  result.lse.shape = {d.b, d.hq, d.nq};
  result.lse.data.assign(static_cast<size_t>(d.b * d.hq * d.nq),
                         spec.norm == Norm::Sigmoid ? kNaN : -kInf);

  std::vector<double> logits(static_cast<size_t>(d.nk));
  std::vector<char> allowed(static_cast<size_t>(d.nk));
  std::vector<double> acc(static_cast<size_t>(d.dv));
  for (int64_t b = 0; b < d.b; ++b) {
    for (int64_t h = 0; h < d.hq; ++h) {
      const int64_t g = h / group;
      for (int64_t i = 0; i < d.nq; ++i) {
        const int64_t pos = position(p, b, i);
        // Logits in contract order: scale*dot, softcap, bias and ALiBi,
        // score_mod, then masking (allowed[j] == 0 stands for -inf). The
        // regions are evaluated for every key, allowed or not (see
        // Reference.h).
        for (int64_t j = 0; j < d.nk; ++j) {
          bool byMaskMod;
          if (std::string err = maskModAllows(in, b, h, i, j, byMaskMod);
              !err.empty())
            return err;
          allowed[j] = structurallyAllowed(spec, p, in, b, i, j) &&
                       maskAllows(in, p, b, h, i, j) && byMaskMod;
          if (!allowed[j] && !in.scoreMod)
            continue;
          double dot = 0.0;
          for (int64_t x = 0; x < d.dqk; ++x)
            dot += in.q->data[offset4(L, d.hq, d.nq, d.dqk, b, h, i, x)] *
                   in.k->data[offset4(L, d.hkv, d.nk, d.dqk, b, g, j, x)];
          double s = p.scale * dot;
          if (spec.softcap)
            s = *spec.softcap * std::tanh(s / *spec.softcap);
          if (in.bias)
            s += in.bias->data[p.biasBc.index(b, h, i, j)];
          if (in.alibiSlopes)
            s -=
                (*in.alibiSlopes)[h] * static_cast<double>(std::llabs(j - pos));
          if (in.scoreMod) {
            const int64_t idx[4] = {b + in.regionBatchOffset, h, i, j};
            if (std::string err = evaluateRegion(*in.scoreMod, "score_mod", idx,
                                                 s, in.modInputs, s);
                !err.empty())
              return err;
          }
          logits[j] = s;
        }

        std::fill(acc.begin(), acc.end(), 0.0);
        double lse;
        if (spec.norm == Norm::Sigmoid) {
          for (int64_t j = 0; j < d.nk; ++j) {
            // A -inf logit (bias, score_mod) weighs exactly 0 and, like a
            // masked key, contributes nothing, whatever its v.
            if (!allowed[j] || logits[j] == -kInf)
              continue;
            double w = 1.0 / (1.0 + std::exp(-logits[j]));
            for (int64_t x = 0; x < d.dv; ++x)
              acc[x] +=
                  w * in.v->data[offset4(L, d.hkv, d.nk, d.dv, b, g, j, x)];
          }
          lse = kNaN;
        } else {
          // The sink's logit joins the max and the denominator (with no
          // value): it is the softmax over the logits and the sink, with
          // the sink's column dropped.
          const double sink = in.sink ? (*in.sink)[h] : -kInf;
          double m = sink;
          for (int64_t j = 0; j < d.nk; ++j)
            if (allowed[j])
              m = std::max(m, logits[j]);
          if (m == -kInf) {
            // No allowed key (or only -inf logits): out = 0, lse = -inf.
            lse = -kInf;
          } else {
            double sum = sink == -kInf ? 0.0 : std::exp(sink - m);
            for (int64_t j = 0; j < d.nk; ++j) {
              if (!allowed[j] || logits[j] == -kInf)
                continue;
              double w = std::exp(logits[j] - m);
              sum += w;
              for (int64_t x = 0; x < d.dv; ++x)
                acc[x] +=
                    w * in.v->data[offset4(L, d.hkv, d.nk, d.dv, b, g, j, x)];
            }
            for (double &a : acc)
              a /= sum;
            lse = m + std::log(sum);
          }
        }
        for (int64_t x = 0; x < d.dv; ++x)
          result.out.data[offset4(L, d.hq, d.nq, d.dv, b, h, i, x)] = acc[x];
        result.lse.data[(b * d.hq + h) * d.nq + i] = lse;
      }
    }
  }
  return "";
}

int64_t attn::ref::countAllowedPairs(const Spec &spec, const Inputs &in,
                                     bool countMaskContent) {
  if (in.cuSeqlensQ || in.cuSeqlensK) {
    Outputs unused;
    int64_t pairs = 0;
    if (!raggedAttention(spec, in, unused, &pairs).empty())
      return -1;
    return pairs;
  }
  if (in.pageTable) {
    Tensor k, v;
    if (!densePagedKv(spec, in, k, v).empty())
      return -1;
    Inputs dense = in;
    dense.k = &k;
    dense.v = &v;
    dense.pageTable = nullptr;
    return countAllowedPairs(spec, dense, countMaskContent);
  }
  Problem p;
  if (!prepare(spec, in, p).empty())
    return -1;
  const Dims &d = p.d;
  int64_t pairs = 0;
  for (int64_t b = 0; b < d.b; ++b)
    for (int64_t h = 0; h < d.hq; ++h)
      for (int64_t i = 0; i < d.nq; ++i)
        for (int64_t j = 0; j < d.nk; ++j) {
          bool byMaskMod;
          if (!maskModAllows(in, b, h, i, j, byMaskMod).empty())
            return -1;
          if (byMaskMod && structurallyAllowed(spec, p, in, b, i, j) &&
              (!countMaskContent || maskAllows(in, p, b, h, i, j)))
            ++pairs;
        }
  return pairs;
}

double attn::ref::attentionFlops(const Spec &spec, const Inputs &in,
                                 bool countMaskContent) {
  if (in.vFromK) {
    Tensor v;
    if (!latentValue(in, v).empty())
      return -1.0;
    Inputs explicitV = in;
    explicitV.v = &v;
    explicitV.vFromK.reset();
    return attentionFlops(spec, explicitV, countMaskContent);
  }
  // (A paged ragged batch is counted per sequence by countAllowedPairs.)
  if (in.pageTable && !in.cuSeqlensQ) {
    Tensor k, v;
    if (!densePagedKv(spec, in, k, v).empty())
      return -1.0;
    Inputs dense = in;
    dense.k = &k;
    dense.v = &v;
    dense.pageTable = nullptr;
    return attentionFlops(spec, dense, countMaskContent);
  }
  int64_t pairs = countAllowedPairs(spec, in, countMaskContent);
  if (pairs < 0)
    return -1.0;
  int64_t b, h, n, dqk, dv;
  logical4(spec.layout, *in.q, b, h, n, dqk);
  logical4(spec.layout, *in.v, b, h, n, dv);
  return static_cast<double>(pairs) *
         (2.0 * static_cast<double>(dqk) + 2.0 * static_cast<double>(dv));
}

std::string attn::ref::projectedAttention(
    const Spec &spec, int64_t hq, int64_t hkv, const Tensor &xq,
    const Tensor &xkv, const Tensor &wq, const Tensor &wk, const Tensor &wv,
    const Tensor &wo, const std::vector<int64_t> *kvLen, const Tensor *mask,
    const Tensor *bias, const std::vector<double> *alibi, Tensor &result) {
  Inputs mods;
  mods.kvLen = kvLen;
  mods.mask = mask;
  mods.bias = bias;
  mods.alibiSlopes = alibi;
  return projectedAttention(spec, hq, hkv, xq, xkv, wq, wk, wv, wo, mods,
                            result);
}

std::string attn::ref::projectedAttention(const Spec &spec, int64_t hq,
                                          int64_t hkv, const Tensor &xq,
                                          const Tensor &xkv, const Tensor &wq,
                                          const Tensor &wk, const Tensor &wv,
                                          const Tensor &wo, const Inputs &mods,
                                          Tensor &result) {
  for (auto [name, t] : {std::pair<const char *, const Tensor *>{"xq", &xq},
                         {"xkv", &xkv},
                         {"wq", &wq},
                         {"wk", &wk},
                         {"wv", &wv},
                         {"wo", &wo}}) {
    if (std::string err = checkTensor(name, *t); !err.empty())
      return err;
    size_t rank = (t == &xq || t == &xkv) ? 3 : 2;
    if (t->shape.size() != rank)
      return std::string(name) + ": expected rank " + std::to_string(rank) +
             ", got shape " + shapeStr(t->shape);
  }
  if (hq < 1 || hkv < 1)
    return "head counts must be positive";
  const int64_t B = xq.shape[0], nq = xq.shape[1], D = xq.shape[2];
  if (xkv.shape[0] != B || xkv.shape[2] != D)
    return "xkv shape " + shapeStr(xkv.shape) + " does not match xq " +
           shapeStr(xq.shape);
  if (wq.shape[0] != D || wk.shape[0] != D || wv.shape[0] != D)
    return "wq/wk/wv must have D = " + std::to_string(D) + " rows";
  if (wq.shape[1] % hq != 0)
    return "wq columns " + std::to_string(wq.shape[1]) +
           " are not a multiple of Hq " + std::to_string(hq);
  const int64_t dqk = wq.shape[1] / hq;
  if (wk.shape[1] != hkv * dqk)
    return "wk shape " + shapeStr(wk.shape) + " expected [" +
           std::to_string(D) + ", " + std::to_string(hkv * dqk) + "]";
  if (wv.shape[1] % hkv != 0)
    return "wv columns " + std::to_string(wv.shape[1]) +
           " are not a multiple of Hkv " + std::to_string(hkv);
  const int64_t dv = wv.shape[1] / hkv;
  if (wo.shape[0] != hq * dv || wo.shape[1] != D)
    return "wo shape " + shapeStr(wo.shape) + " expected [" +
           std::to_string(hq * dv) + ", " + std::to_string(D) + "]";

  // x [B, N, D] @ w [D, C] -> [B, N, C], which is [B, N, H, C/H] = BNHD.
  auto project = [&](const Tensor &x, const Tensor &w, int64_t heads,
                     int64_t hd) {
    const int64_t n = x.shape[1], c = w.shape[1];
    Tensor r{{B, n, heads, hd}, std::vector<double>(B * n * c, 0.0)};
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < n; ++t)
        for (int64_t col = 0; col < c; ++col) {
          double s = 0.0;
          for (int64_t e = 0; e < D; ++e)
            s += x.data[(b * n + t) * D + e] * w.data[e * c + col];
          r.data[(b * n + t) * c + col] = s;
        }
    return r;
  };
  Tensor q = project(xq, wq, hq, dqk);
  Tensor k = project(xkv, wk, hkv, dqk);
  Tensor v = project(xkv, wv, hkv, dv);

  Spec inner = spec;
  inner.layout = Layout::BNHD;
  Inputs in = mods;
  in.q = &q;
  in.k = &k;
  in.v = &v;
  Outputs o;
  if (std::string err = attention(inner, in, o); !err.empty())
    return err;

  // out [B, Nq, Hq, Dv] is the concatenation [B, Nq, Hq*Dv]; apply wo.
  const int64_t c = hq * dv;
  result.shape = {B, nq, D};
  result.data.assign(static_cast<size_t>(B * nq * D), 0.0);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < nq; ++t)
      for (int64_t e = 0; e < D; ++e) {
        double s = 0.0;
        for (int64_t x = 0; x < c; ++x)
          s += o.out.data[(b * nq + t) * c + x] * wo.data[x * D + e];
        result.data[(b * nq + t) * D + e] = s;
      }
  return "";
}

//===----------------------------------------------------------------------===//
// Rounding helpers
//===----------------------------------------------------------------------===//

namespace {

uint32_t floatBits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

float bitsFloat(uint32_t u) {
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

} // namespace

float attn::ref::roundToF16(float x) {
  if (std::isnan(x) || std::isinf(x))
    return x;
  // Work on the magnitude in double: every step below is exact except the
  // one explicit rounding to an integer count of f16 ulps.
  double a = std::fabs(static_cast<double>(x));
  double r;
  if (a >= 65520.0) { // halfway between 65504 (max) and 65536 rounds up
    r = std::numeric_limits<double>::infinity();
  } else if (a < std::ldexp(1.0, -14)) {
    // Subnormal range: multiples of 2^-24.
    r = std::ldexp(roundHalfEven(std::ldexp(a, 24)), -24);
  } else {
    int e;
    std::frexp(a, &e); // a = f * 2^e, f in [0.5, 1): ulp is 2^(e-11)
    r = std::ldexp(roundHalfEven(std::ldexp(a, 11 - e)), e - 11);
  }
  return static_cast<float>(std::signbit(x) ? -r : r);
}

float attn::ref::roundToBF16(float x) {
  uint32_t u = floatBits(x);
  if (std::isnan(x))
    return bitsFloat((u | 0x00400000u) & 0xffff0000u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return bitsFloat(u & 0xffff0000u);
}

void attn::ref::roundTensorToF16(Tensor &t) {
  for (double &x : t.data)
    x = roundToF16(static_cast<float>(x));
}

void attn::ref::roundTensorToBF16(Tensor &t) {
  for (double &x : t.data)
    x = roundToBF16(static_cast<float>(x));
}

Tensor attn::ref::swapDims12(const Tensor &t) {
  if (t.shape.size() != 4 || !checkTensor("t", t).empty())
    return Tensor{};
  const int64_t a = t.shape[0], b = t.shape[1], c = t.shape[2], d = t.shape[3];
  Tensor r{{a, c, b, d}, std::vector<double>(t.data.size())};
  for (int64_t i = 0; i < a; ++i)
    for (int64_t j = 0; j < b; ++j)
      for (int64_t k = 0; k < c; ++k)
        for (int64_t x = 0; x < d; ++x)
          r.data[((i * c + k) * b + j) * d + x] =
              t.data[((i * b + j) * c + k) * d + x];
  return r;
}

//===----------------------------------------------------------------------===//
// Helpers shared with RegionEval.cpp
//===----------------------------------------------------------------------===//

std::string attn::ref::detail::shapeStr(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

/// Rounds a non-negative finite double to the nearest integer, ties to even.
double attn::ref::detail::roundHalfEven(double v) {
  double fl = std::floor(v);
  double diff = v - fl;
  if (diff > 0.5)
    return fl + 1.0;
  if (diff < 0.5)
    return fl;
  return std::fmod(fl, 2.0) == 0.0 ? fl : fl + 1.0;
}
