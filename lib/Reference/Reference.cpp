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

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <tuple>

using namespace attn::ref;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string shapeStr(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

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
  std::vector<int64_t> kvLen; // clamped, [B]
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
  if (in.mask)
    if (std::string err = makeBroadcast("mask", *in.mask, d, p.maskBc);
        !err.empty())
      return err;
  if (in.bias)
    if (std::string err = makeBroadcast("bias", *in.bias, d, p.biasBc);
        !err.empty())
      return err;
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

/// Whether key j is allowed for query i by kvLen, causal mask and window.
bool structurallyAllowed(const Spec &spec, const Problem &p, int64_t b,
                         int64_t i, int64_t j) {
  if (j >= p.kvLen[b])
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
  const int64_t idx[4] = {b, h, i, j};
  double r;
  if (std::string err =
          evaluateRegion(*in.maskMod, "mask_mod", idx, 0.0, in.modInputs, r);
      !err.empty())
    return err;
  allowed = r != 0.0;
  return "";
}

} // namespace

std::string attn::ref::attention(const Spec &spec, const Inputs &in,
                                 Outputs &result) {
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
          allowed[j] = structurallyAllowed(spec, p, b, i, j) &&
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
            const int64_t idx[4] = {b, h, i, j};
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
          double m = -kInf;
          for (int64_t j = 0; j < d.nk; ++j)
            if (allowed[j])
              m = std::max(m, logits[j]);
          if (m == -kInf) {
            // No allowed key (or only -inf logits): out = 0, lse = -inf.
            lse = -kInf;
          } else {
            double sum = 0.0;
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
          if (byMaskMod && structurallyAllowed(spec, p, b, i, j) &&
              (!countMaskContent || maskAllows(in, p, b, h, i, j)))
            ++pairs;
        }
  return pairs;
}

double attn::ref::attentionFlops(const Spec &spec, const Inputs &in,
                                 bool countMaskContent) {
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

/// Rounds a non-negative finite double to the nearest integer, ties to even.
double roundHalfEven(double v) {
  double fl = std::floor(v);
  double diff = v - fl;
  if (diff > 0.5)
    return fl + 1.0;
  if (diff < 0.5)
    return fl;
  return std::fmod(fl, 2.0) == 0.0 ? fl : fl + 1.0;
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
// score_mod / mask_mod programs
//===----------------------------------------------------------------------===//

namespace {

/// A region value: integers in `i` (sign-extended from their width, so i1
/// true is -1 here and reads as 1 through its unsigned value), floats in `f`.
struct Val {
  int64_t i = 0;
  double f = 0.0;
};

/// Sign-extends the low `bits` bits of `v`.
int64_t sext(uint64_t v, unsigned bits) {
  if (bits >= 64)
    return static_cast<int64_t>(v);
  unsigned shift = 64 - bits;
  return static_cast<int64_t>(v << shift) >> shift;
}

/// The low `bits` bits of `v`, zero-extended.
uint64_t zext(int64_t v, unsigned bits) {
  uint64_t u = static_cast<uint64_t>(v);
  return bits >= 64 ? u : u & ((uint64_t(1) << bits) - 1);
}

int64_t minSigned(unsigned bits) {
  return bits >= 64 ? std::numeric_limits<int64_t>::min()
                    : -(int64_t(1) << (bits - 1));
}

/// Rounds a float result to its type: f16 and bf16 exactly, f32 and f64 are
/// kept in double.
double roundFloat(ScalarKind kind, double x) {
  switch (kind) {
  case ScalarKind::F16:
    return roundToF16(static_cast<float>(x));
  case ScalarKind::BF16:
    return roundToBF16(static_cast<float>(x));
  default:
    return x;
  }
}

const char *typeName(ScalarType t, std::string &buf) {
  switch (t.kind) {
  case ScalarKind::F16:
    return "f16";
  case ScalarKind::BF16:
    return "bf16";
  case ScalarKind::F32:
    return "f32";
  case ScalarKind::F64:
    return "f64";
  case ScalarKind::Int:
    break;
  }
  buf = "i" + std::to_string(t.bits);
  return buf.c_str();
}

/// Number of operands of each opcode (-1: any, checked elsewhere).
int arity(Opcode op) {
  switch (op) {
  case Opcode::Arg:
  case Opcode::Constant:
    return 0;
  case Opcode::AbsI:
  case Opcode::ExtSI:
  case Opcode::ExtUI:
  case Opcode::TruncI:
  case Opcode::IndexCast:
  case Opcode::IndexCastUI:
  case Opcode::SIToFP:
  case Opcode::UIToFP:
  case Opcode::FPToSI:
  case Opcode::FPToUI:
  case Opcode::ExtF:
  case Opcode::TruncF:
  case Opcode::Bitcast:
  case Opcode::NegF:
  case Opcode::AbsF:
  case Opcode::Tanh:
  case Opcode::Exp:
  case Opcode::Exp2:
  case Opcode::ExpM1:
  case Opcode::Log:
  case Opcode::Log2:
  case Opcode::Log10:
  case Opcode::Log1p:
  case Opcode::Sqrt:
  case Opcode::Rsqrt:
  case Opcode::Cbrt:
  case Opcode::Floor:
  case Opcode::Ceil:
  case Opcode::Round:
  case Opcode::RoundEven:
  case Opcode::Trunc:
  case Opcode::Sin:
  case Opcode::Cos:
  case Opcode::Tan:
  case Opcode::Asin:
  case Opcode::Acos:
  case Opcode::Atan:
  case Opcode::Sinh:
  case Opcode::Cosh:
  case Opcode::Asinh:
  case Opcode::Acosh:
  case Opcode::Atanh:
  case Opcode::Erf:
  case Opcode::Erfc:
  case Opcode::IsNaN:
  case Opcode::IsInf:
  case Opcode::IsFinite:
  case Opcode::CountLeadingZeros:
  case Opcode::CountTrailingZeros:
  case Opcode::CtPop:
  case Opcode::Dim:
    return 1;
  case Opcode::Select:
  case Opcode::Fma:
    return 3;
  case Opcode::Extract:
    return -1;
  default:
    return 2;
  }
}

/// Whether the operands of `op` are floats (else integers).
bool floatOperands(Opcode op) {
  switch (op) {
  case Opcode::FPToSI:
  case Opcode::FPToUI:
  case Opcode::ExtF:
  case Opcode::TruncF:
  case Opcode::AddF:
  case Opcode::SubF:
  case Opcode::MulF:
  case Opcode::DivF:
  case Opcode::RemF:
  case Opcode::NegF:
  case Opcode::MaximumF:
  case Opcode::MinimumF:
  case Opcode::MaxNumF:
  case Opcode::MinNumF:
  case Opcode::CmpF:
  case Opcode::AbsF:
  case Opcode::CopySign:
  case Opcode::PowF:
  case Opcode::Fma:
  case Opcode::Atan2:
  case Opcode::IsNaN:
  case Opcode::IsInf:
  case Opcode::IsFinite:
    return true;
  default:
    return Opcode::Tanh <= op && op <= Opcode::Erfc; // unary float math
  }
}

bool cmpF(CmpFPred p, double a, double b) {
  bool unordered = std::isnan(a) || std::isnan(b);
  switch (p) {
  case CmpFPred::AlwaysFalse:
    return false;
  case CmpFPred::AlwaysTrue:
    return true;
  case CmpFPred::ord:
    return !unordered;
  case CmpFPred::uno:
    return unordered;
  case CmpFPred::oeq:
    return !unordered && a == b;
  case CmpFPred::ogt:
    return !unordered && a > b;
  case CmpFPred::oge:
    return !unordered && a >= b;
  case CmpFPred::olt:
    return !unordered && a < b;
  case CmpFPred::ole:
    return !unordered && a <= b;
  case CmpFPred::one:
    return !unordered && a != b;
  case CmpFPred::ueq:
    return unordered || a == b;
  case CmpFPred::ugt:
    return unordered || a > b;
  case CmpFPred::uge:
    return unordered || a >= b;
  case CmpFPred::ult:
    return unordered || a < b;
  case CmpFPred::ule:
    return unordered || a <= b;
  case CmpFPred::une:
    return unordered || a != b;
  }
  return false;
}

bool cmpI(CmpIPred p, int64_t a, int64_t b, unsigned bits) {
  uint64_t ua = zext(a, bits), ub = zext(b, bits);
  switch (p) {
  case CmpIPred::eq:
    return a == b;
  case CmpIPred::ne:
    return a != b;
  case CmpIPred::slt:
    return a < b;
  case CmpIPred::sle:
    return a <= b;
  case CmpIPred::sgt:
    return a > b;
  case CmpIPred::sge:
    return a >= b;
  case CmpIPred::ult:
    return ua < ub;
  case CmpIPred::ule:
    return ua <= ub;
  case CmpIPred::ugt:
    return ua > ub;
  case CmpIPred::uge:
    return ua >= ub;
  }
  return false;
}

/// maximumf / minimumf: NaN if either is NaN, -0 < +0.
double maximumF(double a, double b, bool isMax) {
  if (std::isnan(a) || std::isnan(b))
    return kNaN;
  if (a == b && a == 0.0)
    return (std::signbit(a) == isMax) ? b : a;
  return isMax ? std::max(a, b) : std::min(a, b);
}

/// math.ipowi: wrapping integer power; negative exponents give 1/x^n
/// truncated (0 unless |x| == 1); 0 to a negative power is an error.
bool ipowi(int64_t x, int64_t n, unsigned bits, int64_t &r) {
  if (n < 0) {
    if (x == 0)
      return false;
    if (x == 1)
      r = 1;
    else if (x == -1)
      r = (n % 2 == 0) ? 1 : -1;
    else
      r = 0;
    return true;
  }
  uint64_t acc = 1, base = static_cast<uint64_t>(x);
  for (uint64_t e = static_cast<uint64_t>(n); e; e >>= 1) {
    if (e & 1)
      acc *= base;
    base *= base;
  }
  r = sext(acc, bits);
  return true;
}

} // namespace

std::string attn::ref::evaluateRegion(
    const RegionProgram &program, const char *what, const int64_t idx[4],
    double s, const std::vector<const Tensor *> &modInputs, double &result) {
  const size_t n = program.instrs.size();
  // A fresh vector per call keeps the function reentrant; programs are small.
  std::vector<Val> vals(n);
  auto where = [&]() {
    return " at (b, h, i, j) = (" + std::to_string(idx[0]) + ", " +
           std::to_string(idx[1]) + ", " + std::to_string(idx[2]) + ", " +
           std::to_string(idx[3]) + ")";
  };
  for (size_t k = 0; k < n; ++k) {
    const Instr &in = program.instrs[k];
    auto fail = [&](const std::string &msg) {
      std::string op = in.name.empty() ? "" : " ('" + in.name + "')";
      return std::string(what) + " instruction " + std::to_string(k) + op +
             ": " + msg;
    };
    int want = arity(in.op);
    if (want >= 0 && static_cast<int>(in.operands.size()) != want)
      return fail("expected " + std::to_string(want) + " operands, got " +
                  std::to_string(in.operands.size()));
    for (int o : in.operands)
      if (o < 0 || static_cast<size_t>(o) >= k)
        return fail("operand " + std::to_string(o) +
                    " is not an earlier instruction");
    if (in.type.kind == ScalarKind::Int &&
        (in.type.bits < 1 || in.type.bits > 64))
      return fail("integer width " + std::to_string(in.type.bits) +
                  " is not in 1..64");
    const unsigned bits = in.type.bits;
    const bool resFloat = in.type.isFloat();
    // Operand types as the instruction reads them.
    auto opType = [&](int i) { return program.instrs[in.operands[i]].type; };
    if (in.op != Opcode::Extract && in.op != Opcode::Dim &&
        in.op != Opcode::Select && in.op != Opcode::FPowI &&
        in.op != Opcode::Bitcast)
      for (size_t i = 0; i < in.operands.size(); ++i)
        if (opType(static_cast<int>(i)).isFloat() != floatOperands(in.op))
          return fail(std::string("operand ") + std::to_string(i) +
                      " should be " +
                      (floatOperands(in.op) ? "a float" : "an integer"));
    auto I = [&](int i) { return vals[in.operands[i]].i; };
    auto F = [&](int i) { return vals[in.operands[i]].f; };
    // The operands' width (integer ops take operands of the result's width,
    // comparisons and casts read their operand's).
    const unsigned obits = in.operands.empty() ? bits : opType(0).bits;
    Val v;
    auto setI = [&](uint64_t x) { v.i = sext(x, bits); };
    auto setF = [&](double x) { v.f = roundFloat(in.type.kind, x); };
    auto setB = [&](bool b) { v.i = b ? -1 : 0; };
    auto u = [&](int i) { return zext(I(i), obits); };
    switch (in.op) {
    case Opcode::Arg:
      if (in.arg < 0 || in.arg > 4)
        return fail("block argument " + std::to_string(in.arg) +
                    " does not exist");
      if (in.arg == 4)
        v.f = s;
      else
        v.i = idx[in.arg];
      break;
    case Opcode::Constant:
      if (resFloat)
        setF(in.fvalue);
      else
        setI(static_cast<uint64_t>(in.ivalue));
      break;
    case Opcode::AddI:
      setI(static_cast<uint64_t>(I(0)) + static_cast<uint64_t>(I(1)));
      break;
    case Opcode::SubI:
      setI(static_cast<uint64_t>(I(0)) - static_cast<uint64_t>(I(1)));
      break;
    case Opcode::MulI:
      setI(static_cast<uint64_t>(I(0)) * static_cast<uint64_t>(I(1)));
      break;
    case Opcode::DivSI:
    case Opcode::RemSI:
    case Opcode::FloorDivSI:
    case Opcode::CeilDivSI: {
      int64_t a = I(0), b = I(1);
      if (b == 0)
        return fail("division by zero" + where());
      if (b == -1 && a == minSigned(bits))
        return fail("signed division overflows" + where());
      int64_t q = a / b, r = a % b;
      if (in.op == Opcode::RemSI)
        setI(static_cast<uint64_t>(r));
      else if (in.op == Opcode::FloorDivSI)
        setI(static_cast<uint64_t>(r != 0 && ((a < 0) != (b < 0)) ? q - 1 : q));
      else if (in.op == Opcode::CeilDivSI)
        setI(static_cast<uint64_t>(r != 0 && ((a < 0) == (b < 0)) ? q + 1 : q));
      else
        setI(static_cast<uint64_t>(q));
      break;
    }
    case Opcode::DivUI:
    case Opcode::RemUI:
    case Opcode::CeilDivUI: {
      uint64_t a = u(0), b = u(1);
      if (b == 0)
        return fail("division by zero" + where());
      if (in.op == Opcode::RemUI)
        setI(a % b);
      else if (in.op == Opcode::CeilDivUI)
        setI(a / b + (a % b != 0 ? 1 : 0));
      else
        setI(a / b);
      break;
    }
    case Opcode::MinSI:
      setI(static_cast<uint64_t>(std::min(I(0), I(1))));
      break;
    case Opcode::MaxSI:
      setI(static_cast<uint64_t>(std::max(I(0), I(1))));
      break;
    case Opcode::MinUI:
      setI(std::min(u(0), u(1)));
      break;
    case Opcode::MaxUI:
      setI(std::max(u(0), u(1)));
      break;
    case Opcode::AndI:
      setI(static_cast<uint64_t>(I(0) & I(1)));
      break;
    case Opcode::OrI:
      setI(static_cast<uint64_t>(I(0) | I(1)));
      break;
    case Opcode::XOrI:
      setI(static_cast<uint64_t>(I(0) ^ I(1)));
      break;
    case Opcode::ShLI:
    case Opcode::ShRSI:
    case Opcode::ShRUI: {
      uint64_t amount = u(1);
      if (amount >= bits)
        return fail("shift by " + std::to_string(amount) + " of an i" +
                    std::to_string(bits) + where());
      if (in.op == Opcode::ShLI)
        setI(static_cast<uint64_t>(I(0)) << amount);
      else if (in.op == Opcode::ShRSI)
        setI(static_cast<uint64_t>(I(0) >> amount));
      else
        setI(u(0) >> amount);
      break;
    }
    case Opcode::AbsI: {
      uint64_t a = static_cast<uint64_t>(I(0));
      setI(I(0) < 0 ? ~a + 1 : a);
      break;
    }
    case Opcode::CmpI:
      if (in.predicate < 0 || in.predicate > static_cast<int>(CmpIPred::uge))
        return fail("unknown cmpi predicate " + std::to_string(in.predicate));
      setB(cmpI(static_cast<CmpIPred>(in.predicate), I(0), I(1), obits));
      break;
    case Opcode::Select:
      if (opType(0).isFloat() || opType(1).isFloat() != resFloat ||
          opType(2).isFloat() != resFloat)
        return fail("operand types do not fit a select");
      v = vals[in.operands[I(0) != 0 ? 1 : 2]];
      break;
    case Opcode::ExtSI:
    case Opcode::TruncI:
    case Opcode::IndexCast:
      // The operand is sign-extended already: extending keeps the value,
      // truncating re-extends from the new width.
      setI(static_cast<uint64_t>(I(0)));
      break;
    case Opcode::ExtUI:
      setI(u(0));
      break;
    case Opcode::IndexCastUI:
      setI(bits > obits ? u(0) : static_cast<uint64_t>(I(0)));
      break;
    case Opcode::SIToFP:
      setF(static_cast<double>(I(0)));
      break;
    case Opcode::UIToFP:
      setF(static_cast<double>(u(0)));
      break;
    case Opcode::FPToSI:
    case Opcode::FPToUI: {
      double t = std::trunc(F(0));
      bool isSigned = in.op == Opcode::FPToSI;
      double lo = isSigned ? -std::ldexp(1.0, bits - 1) : 0.0;
      double hi = isSigned ? std::ldexp(1.0, bits - 1) : std::ldexp(1.0, bits);
      if (!(t >= lo && t < hi)) {
        std::string tn;
        return fail("converting " + std::to_string(F(0)) + " to " +
                    typeName(in.type, tn) + " is out of range" + where());
      }
      if (isSigned)
        setI(static_cast<uint64_t>(static_cast<int64_t>(t)));
      else
        setI(t >= std::ldexp(1.0, 63)
                 ? static_cast<uint64_t>(t - std::ldexp(1.0, 63)) +
                       (uint64_t(1) << 63)
                 : static_cast<uint64_t>(t));
      break;
    }
    case Opcode::ExtF:
      v.f = F(0);
      break;
    case Opcode::TruncF:
      v.f = in.type.kind == ScalarKind::F32
                ? static_cast<double>(static_cast<float>(F(0)))
                : roundFloat(in.type.kind, F(0));
      break;
    case Opcode::Bitcast: {
      ScalarType from = opType(0);
      if (resFloat == from.isFloat()) {
        v = vals[in.operands[0]];
        break;
      }
      if (in.type.kind == ScalarKind::F32 && from.bits == 32) {
        uint32_t b = static_cast<uint32_t>(zext(I(0), 32));
        float x;
        std::memcpy(&x, &b, sizeof x);
        v.f = x;
      } else if (in.type.kind == ScalarKind::F64 && from.bits == 64) {
        int64_t b = I(0);
        std::memcpy(&v.f, &b, sizeof v.f);
      } else if (from.kind == ScalarKind::F32 && bits == 32) {
        float x = static_cast<float>(F(0));
        uint32_t b;
        std::memcpy(&b, &x, sizeof b);
        setI(b);
      } else if (from.kind == ScalarKind::F64 && bits == 64) {
        double x = F(0);
        std::memcpy(&v.i, &x, sizeof x);
      } else {
        return fail("bitcast is supported between i32 and f32, i64 and f64 "
                    "only");
      }
      break;
    }
    case Opcode::AddF:
      setF(F(0) + F(1));
      break;
    case Opcode::SubF:
      setF(F(0) - F(1));
      break;
    case Opcode::MulF:
      setF(F(0) * F(1));
      break;
    case Opcode::DivF:
      setF(F(0) / F(1));
      break;
    case Opcode::RemF:
      setF(std::fmod(F(0), F(1)));
      break;
    case Opcode::NegF:
      setF(-F(0));
      break;
    case Opcode::MaximumF:
      setF(maximumF(F(0), F(1), true));
      break;
    case Opcode::MinimumF:
      setF(maximumF(F(0), F(1), false));
      break;
    case Opcode::MaxNumF:
      setF(std::fmax(F(0), F(1)));
      break;
    case Opcode::MinNumF:
      setF(std::fmin(F(0), F(1)));
      break;
    case Opcode::CmpF:
      if (in.predicate < 0 ||
          in.predicate > static_cast<int>(CmpFPred::AlwaysTrue))
        return fail("unknown cmpf predicate " + std::to_string(in.predicate));
      setB(cmpF(static_cast<CmpFPred>(in.predicate), F(0), F(1)));
      break;
    case Opcode::AbsF:
      setF(std::fabs(F(0)));
      break;
    case Opcode::CopySign:
      setF(std::copysign(F(0), F(1)));
      break;
    case Opcode::PowF:
      setF(std::pow(F(0), F(1)));
      break;
    case Opcode::FPowI:
      if (!opType(0).isFloat() || opType(1).isFloat())
        return fail("fpowi takes a float and an integer");
      setF(std::pow(F(0), static_cast<double>(I(1))));
      break;
    case Opcode::Fma:
      setF(std::fma(F(0), F(1), F(2)));
      break;
    case Opcode::Atan2:
      setF(std::atan2(F(0), F(1)));
      break;
    case Opcode::Tanh:
      setF(std::tanh(F(0)));
      break;
    case Opcode::Exp:
      setF(std::exp(F(0)));
      break;
    case Opcode::Exp2:
      setF(std::exp2(F(0)));
      break;
    case Opcode::ExpM1:
      setF(std::expm1(F(0)));
      break;
    case Opcode::Log:
      setF(std::log(F(0)));
      break;
    case Opcode::Log2:
      setF(std::log2(F(0)));
      break;
    case Opcode::Log10:
      setF(std::log10(F(0)));
      break;
    case Opcode::Log1p:
      setF(std::log1p(F(0)));
      break;
    case Opcode::Sqrt:
      setF(std::sqrt(F(0)));
      break;
    case Opcode::Rsqrt:
      setF(1.0 / std::sqrt(F(0)));
      break;
    case Opcode::Cbrt:
      setF(std::cbrt(F(0)));
      break;
    case Opcode::Floor:
      setF(std::floor(F(0)));
      break;
    case Opcode::Ceil:
      setF(std::ceil(F(0)));
      break;
    case Opcode::Round:
      setF(std::round(F(0)));
      break;
    case Opcode::RoundEven: {
      double x = F(0);
      setF(std::isfinite(x) ? std::copysign(roundHalfEven(std::fabs(x)), x)
                            : x);
      break;
    }
    case Opcode::Trunc:
      setF(std::trunc(F(0)));
      break;
    case Opcode::Sin:
      setF(std::sin(F(0)));
      break;
    case Opcode::Cos:
      setF(std::cos(F(0)));
      break;
    case Opcode::Tan:
      setF(std::tan(F(0)));
      break;
    case Opcode::Asin:
      setF(std::asin(F(0)));
      break;
    case Opcode::Acos:
      setF(std::acos(F(0)));
      break;
    case Opcode::Atan:
      setF(std::atan(F(0)));
      break;
    case Opcode::Sinh:
      setF(std::sinh(F(0)));
      break;
    case Opcode::Cosh:
      setF(std::cosh(F(0)));
      break;
    case Opcode::Asinh:
      setF(std::asinh(F(0)));
      break;
    case Opcode::Acosh:
      setF(std::acosh(F(0)));
      break;
    case Opcode::Atanh:
      setF(std::atanh(F(0)));
      break;
    case Opcode::Erf:
      setF(std::erf(F(0)));
      break;
    case Opcode::Erfc:
      setF(std::erfc(F(0)));
      break;
    case Opcode::IsNaN:
      setB(std::isnan(F(0)));
      break;
    case Opcode::IsInf:
      setB(std::isinf(F(0)));
      break;
    case Opcode::IsFinite:
      setB(std::isfinite(F(0)));
      break;
    case Opcode::IPowI: {
      int64_t r;
      if (!ipowi(I(0), I(1), bits, r))
        return fail("0 raised to a negative power" + where());
      v.i = r;
      break;
    }
    case Opcode::CountLeadingZeros:
    case Opcode::CountTrailingZeros:
    case Opcode::CtPop: {
      uint64_t a = u(0);
      uint64_t count = 0;
      if (in.op == Opcode::CtPop) {
        for (unsigned b = 0; b < bits; ++b)
          count += (a >> b) & 1;
      } else if (in.op == Opcode::CountTrailingZeros) {
        while (count < bits && !((a >> count) & 1))
          ++count;
      } else {
        while (count < bits && !((a >> (bits - 1 - count)) & 1))
          ++count;
      }
      setI(count);
      break;
    }
    case Opcode::Extract:
    case Opcode::Dim: {
      if (in.input < 0 || static_cast<size_t>(in.input) >= modInputs.size() ||
          !modInputs[in.input])
        return fail("mod_inputs #" + std::to_string(in.input) +
                    " is not given (" + std::to_string(modInputs.size()) +
                    " mod_inputs)");
      const Tensor &t = *modInputs[in.input];
      for (size_t o = 0; o < in.operands.size(); ++o)
        if (opType(static_cast<int>(o)).isFloat())
          return fail("an index operand is a float");
      if (in.op == Opcode::Dim) {
        int64_t d = I(0);
        if (d < 0 || d >= static_cast<int64_t>(t.shape.size()))
          return std::string(what) + " asks for dimension " +
                 std::to_string(d) + " of mod_inputs #" +
                 std::to_string(in.input) + " of shape " + shapeStr(t.shape) +
                 where();
        setI(static_cast<uint64_t>(t.shape[d]));
        break;
      }
      if (in.operands.size() != t.shape.size())
        return fail("mod_inputs #" + std::to_string(in.input) + " has rank " +
                    std::to_string(t.shape.size()) + ", read with " +
                    std::to_string(in.operands.size()) + " indices");
      int64_t flat = 0;
      bool inside = true;
      for (size_t d = 0; d < t.shape.size(); ++d) {
        int64_t x = I(static_cast<int>(d));
        inside &= x >= 0 && x < t.shape[d];
        flat = flat * t.shape[d] + x;
      }
      if (!inside) {
        std::vector<int64_t> at;
        for (size_t d = 0; d < t.shape.size(); ++d)
          at.push_back(I(static_cast<int>(d)));
        return std::string(what) + " reads mod_inputs #" +
               std::to_string(in.input) + " at " + shapeStr(at) +
               " outside its shape " + shapeStr(t.shape) + where();
      }
      if (static_cast<size_t>(flat) >= t.data.size())
        return fail("mod_inputs #" + std::to_string(in.input) + " has " +
                    std::to_string(t.data.size()) + " elements for shape " +
                    shapeStr(t.shape));
      double x = t.data[flat];
      if (resFloat) {
        setF(x);
      } else {
        if (!std::isfinite(x))
          return fail("mod_inputs #" + std::to_string(in.input) +
                      " holds the non-integer " + std::to_string(x));
        // Integer tensors are stored as exact doubles; values beyond 2^63
        // (u64 data) wrap like their bit pattern.
        setI(x >= std::ldexp(1.0, 63)
                 ? static_cast<uint64_t>(x - std::ldexp(1.0, 63)) +
                       (uint64_t(1) << 63)
                 : static_cast<uint64_t>(static_cast<int64_t>(x)));
      }
      break;
    }
    }
    vals[k] = v;
  }
  if (program.result < 0 || static_cast<size_t>(program.result) >= n)
    return std::string(what) + " has no result";
  const Instr &r = program.instrs[program.result];
  result = r.type.isFloat() ? vals[program.result].f
                            : (vals[program.result].i != 0 ? 1.0 : 0.0);
  return "";
}
