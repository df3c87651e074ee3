//===- ReferenceBridge.cpp - run the f64 reference for an attn op ---------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Execution/ReferenceBridge.h"

#include "attn/IR/AttnOps.h"

#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;

static llvm::Error makeError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

static ::attn::ref::Tensor toRef(const HostTensor &t) {
  ::attn::ref::Tensor r;
  r.shape = t.shape;
  int64_t n = t.numElements();
  r.data.resize(n);
  for (int64_t i = 0; i < n; ++i)
    r.data[i] = t.get(i);
  return r;
}

namespace {
/// Host tensors bound to one op's operands, converted for the reference.
struct Bound {
  llvm::ArrayRef<const HostTensor *> args;
  std::vector<std::unique_ptr<::attn::ref::Tensor>> keep;
  std::vector<int64_t> kvLen;
  std::vector<double> slopes;

  llvm::Expected<const HostTensor *> lookup(Value v) {
    auto arg = dyn_cast<BlockArgument>(v);
    if (!arg || arg.getArgNumber() >= args.size())
      return makeError("the reference needs every operand of the attn op to "
                       "be an argument of the entry function");
    return args[arg.getArgNumber()];
  }
  llvm::Expected<const ::attn::ref::Tensor *> tensor(Value v) {
    if (!v)
      return nullptr;
    auto t = lookup(v);
    if (!t)
      return t.takeError();
    keep.push_back(std::make_unique<::attn::ref::Tensor>(toRef(**t)));
    return keep.back().get();
  }
};
} // namespace

template <typename OpTy> static ::attn::ref::Spec specOf(OpTy op) {
  ::attn::ref::Spec spec;
  if (auto causal = op.getCausal())
    spec.causal = *causal == CausalAlign::top_left
                      ? ::attn::ref::Causal::TopLeft
                      : ::attn::ref::Causal::BottomRight;
  spec.windowLeft = op.getWindowLeft();
  if (auto right = op.getWindowRightAttr())
    spec.windowRight = right.getInt();
  if (auto scale = op.getScaleAttr())
    spec.scale = scale.getValueAsDouble();
  if (auto cap = op.getSoftcapAttr())
    spec.softcap = cap.getValueAsDouble();
  spec.norm = op.getNormalization() == Normalization::softmax
                  ? ::attn::ref::Norm::Softmax
                  : ::attn::ref::Norm::Sigmoid;
  return spec;
}

template <typename OpTy>
static llvm::Error bindModifiers(OpTy op, Bound &bound,
                                 ::attn::ref::Inputs &in) {
  if (Value kv = op.getKvLen()) {
    auto t = bound.lookup(kv);
    if (!t)
      return t.takeError();
    for (int64_t i = 0, e = (*t)->numElements(); i < e; ++i)
      bound.kvLen.push_back((*t)->getInt(i));
    in.kvLen = &bound.kvLen;
  }
  if (Value s = op.getAlibiSlopes()) {
    auto t = bound.lookup(s);
    if (!t)
      return t.takeError();
    for (int64_t i = 0, e = (*t)->numElements(); i < e; ++i)
      bound.slopes.push_back((*t)->get(i));
    in.alibiSlopes = &bound.slopes;
  }
  auto mask = bound.tensor(op.getMask());
  if (!mask)
    return mask.takeError();
  in.mask = *mask;
  auto bias = bound.tensor(op.getBias());
  if (!bias)
    return bias.takeError();
  in.bias = *bias;
  return llvm::Error::success();
}

llvm::Error mlir::attn::runReference(Operation *op,
                                     llvm::ArrayRef<const HostTensor *> args,
                                     std::vector<::attn::ref::Tensor> &outs,
                                     double *flops) {
  Bound bound;
  bound.args = args;
  outs.clear();
  if (auto attn = dyn_cast<AttentionOp>(op)) {
    ::attn::ref::Spec spec = specOf(attn);
    spec.layout = attn.getLayout() == Layout::bhnd ? ::attn::ref::Layout::BHND
                                                   : ::attn::ref::Layout::BNHD;
    ::attn::ref::Inputs in;
    auto q = bound.tensor(attn.getQuery());
    if (!q)
      return q.takeError();
    auto k = bound.tensor(attn.getKey());
    if (!k)
      return k.takeError();
    auto v = bound.tensor(attn.getValue());
    if (!v)
      return v.takeError();
    in.q = *q;
    in.k = *k;
    in.v = *v;
    if (llvm::Error err = bindModifiers(attn, bound, in))
      return err;
    ::attn::ref::Outputs result;
    std::string msg = ::attn::ref::attention(spec, in, result);
    if (!msg.empty())
      return makeError("reference: " + msg);
    if (flops)
      *flops = ::attn::ref::attentionFlops(spec, in);
    outs.push_back(std::move(result.out));
    if (attn.getLse())
      outs.push_back(std::move(result.lse));
    return llvm::Error::success();
  }
  if (auto proj = dyn_cast<ProjectedAttentionOp>(op)) {
    ::attn::ref::Spec spec = specOf(proj);
    ::attn::ref::Inputs in;
    if (llvm::Error err = bindModifiers(proj, bound, in))
      return err;
    auto xq = bound.tensor(proj.getXq());
    if (!xq)
      return xq.takeError();
    auto xkv = bound.tensor(proj.getKvSource());
    if (!xkv)
      return xkv.takeError();
    std::vector<const ::attn::ref::Tensor *> w;
    for (Value wv : {proj.getWq(), proj.getWk(), proj.getWv(), proj.getWo()}) {
      auto t = bound.tensor(wv);
      if (!t)
        return t.takeError();
      w.push_back(*t);
    }
    ::attn::ref::Tensor result;
    std::string msg = ::attn::ref::projectedAttention(
        spec, proj.getNumQueryHeads(), proj.getNumKvHeads(), **xq, **xkv, *w[0],
        *w[1], *w[2], *w[3], in.kvLen, in.mask, in.bias, in.alibiSlopes,
        result);
    if (!msg.empty())
      return makeError("reference: " + msg);
    if (flops) {
      // Projections: 2*M*K*N each; attention part is not separated out.
      auto rows = [](const ::attn::ref::Tensor &t) {
        return t.shape[0] * t.shape[1];
      };
      double f = 0;
      f += 2.0 * rows(**xq) * w[0]->shape[0] * w[0]->shape[1];
      f += 2.0 * rows(**xkv) * w[1]->shape[0] * w[1]->shape[1];
      f += 2.0 * rows(**xkv) * w[2]->shape[0] * w[2]->shape[1];
      f += 2.0 * rows(**xq) * w[3]->shape[0] * w[3]->shape[1];
      *flops = f;
    }
    outs.push_back(std::move(result));
    return llvm::Error::success();
  }
  return makeError("not an attn op: " + op->getName().getStringRef());
}

Comparison mlir::attn::compare(const HostTensor &actual,
                               const ::attn::ref::Tensor &expected, double atol,
                               double rtol) {
  Comparison c;
  int64_t n = actual.numElements();
  if (actual.shape != expected.shape) {
    c.mismatches = std::max<int64_t>(n, 1);
    c.firstMismatch = 0;
    c.maxAbsError = INFINITY;
    return c;
  }
  for (int64_t i = 0; i < n; ++i) {
    double a = actual.get(i), e = expected.data[i];
    double abs;
    bool ok;
    if (!std::isfinite(e)) {
      // A non-finite reference value (lse = -inf of a fully masked row, NaN
      // propagated from NaN inputs) must be matched exactly: the bound
      // atol + rtol * |e| is infinite or NaN there.
      ok = (std::isnan(e) && std::isnan(a)) || a == e;
      abs = ok ? 0 : INFINITY;
    } else {
      abs = std::fabs(a - e);
      if (std::isnan(abs))
        abs = INFINITY;
      ok = abs <= atol + rtol * std::fabs(e);
    }
    double rel = abs / std::max(std::fabs(e), 1e-30);
    if (abs == 0)
      rel = 0;
    c.maxAbsError = std::max(c.maxAbsError, abs);
    if (std::fabs(e) > atol)
      c.maxRelError = std::max(c.maxRelError, rel);
    if (!ok) {
      if (c.firstMismatch < 0)
        c.firstMismatch = i;
      ++c.mismatches;
    }
  }
  return c;
}

void mlir::attn::defaultTolerance(ElementKind kind, double &atol,
                                  double &rtol) {
  switch (kind) {
  case ElementKind::F16:
    atol = 2e-3;
    rtol = 1e-2;
    return;
  case ElementKind::BF16:
    atol = 2e-2;
    rtol = 4e-2;
    return;
  default:
    atol = 1e-4;
    rtol = 1e-3;
    return;
  }
}
