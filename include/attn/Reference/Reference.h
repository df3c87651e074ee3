//===- Reference.h - f64 attention reference --------------------*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// An independent, deliberately naive implementation of docs/semantics.md that
// accumulates in f64. It shares no code with the compiler it checks: plain
// C++17 and the STL only, no MLIR, LLVM or other project headers.
//
// Choices the contract leaves open, made here explicitly:
//  - kvLen[b] outside [0, Nk] is clamped to [0, Nk]. The clamped value is the
//    one used everywhere, including the bottom-right position
//    p(i) = i + kvLen[b] - Nq.
//  - Positions p(i) (used by the causal mask, the sliding window and ALiBi)
//    follow `Spec::causal`: bottom-right for Causal::BottomRight, top-left
//    otherwise. `Spec::align` can pick the alignment explicitly when
//    causal == None (for example a bottom-right sliding window without a
//    causal mask, as FlashAttention does); combining it with a causal mask of
//    the other alignment is an error.
//  - An allowed key whose final logit is -inf (for example through a -inf
//    bias) contributes nothing; a row whose allowed logits are all -inf is
//    treated like a row with no allowed key (out = 0, lse = -inf).
//  - Norm::Sigmoid: weight = sigmoid(logit) for allowed keys, 0 otherwise, no
//    row sum. A fully masked row gives out = 0. lse is not defined for it and
//    is filled with NaN (shape [B, Hq, Nq] as for softmax).
//  - attentionFlops counts the pairs allowed by kvLen, the causal mask and the
//    sliding window. The boolean mask tensor's content is ignored unless
//    `countMaskContent` is true.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_REFERENCE_REFERENCE_H
#define ATTN_REFERENCE_REFERENCE_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace attn::ref {

/// Physical dimension order of q/k/v/out: [B, H, N, D] or [B, N, H, D].
enum class Layout { BHND, BNHD };
/// Causal mask and the position alignment it implies.
enum class Causal { None, TopLeft, BottomRight };
/// Explicit position alignment (for window/ALiBi without a causal mask).
enum class Align { TopLeft, BottomRight };
/// Row normalization.
enum class Norm { Softmax, Sigmoid };

/// A dense row-major tensor. `data.size()` must equal the product of `shape`
/// (1 for rank 0).
struct Tensor {
  std::vector<int64_t> shape;
  std::vector<double> data;
};

struct Spec {
  Layout layout = Layout::BHND;
  Causal causal = Causal::None;
  /// Unset: derived from `causal` (bottom-right only for BottomRight).
  std::optional<Align> align;
  /// Sliding window: p(i) - j <= windowLeft, j - p(i) <= windowRight.
  std::optional<int64_t> windowLeft, windowRight;
  /// Default 1/sqrt(Dqk).
  std::optional<double> scale;
  /// s = softcap * tanh(s / softcap); must be > 0 when set.
  std::optional<double> softcap;
  Norm norm = Norm::Softmax;
};

struct Inputs {
  /// Rank 4, in `Spec::layout` physical order.
  const Tensor *q = nullptr, *k = nullptr, *v = nullptr;
  /// [B]; optional.
  const std::vector<int64_t> *kvLen = nullptr;
  /// Rank <= 4, broadcastable (numpy rules, trailing-aligned) to the logical
  /// [B, Hq, Nq, Nk]; nonzero = may read. Optional.
  const Tensor *mask = nullptr;
  /// Additive logit bias, same broadcasting as `mask`. Optional.
  const Tensor *bias = nullptr;
  /// [Hq]; s -= slope[h] * |j - p(i)|. Optional.
  const std::vector<double> *alibiSlopes = nullptr;
};

struct Outputs {
  /// Physical layout like q: [B, Hq, Nq, Dv] or [B, Nq, Hq, Dv].
  Tensor out;
  /// [B, Hq, Nq]; -inf for rows with no allowed key; NaN for Norm::Sigmoid.
  Tensor lse;
};

/// Computes attention per docs/semantics.md. Returns an empty string on
/// success, otherwise a one-line description of the inconsistency (and
/// `result` is left unspecified).
std::string attention(const Spec &spec, const Inputs &inputs, Outputs &result);

/// Projection level: xq [B,Nq,D], xkv [B,Nk,D] (pass xq for self-attention),
/// wq [D,Hq*Dqk], wk [D,Hkv*Dqk], wv [D,Hkv*Dv], wo [Hq*Dv,D]; result
/// [B,Nq,D]. Head h is the column block h*Dqk .. (h+1)*Dqk. Modifiers are as
/// in Inputs (all optional). `spec.layout` is irrelevant here and ignored.
std::string projectedAttention(
    const Spec &spec, int64_t hq, int64_t hkv, const Tensor &xq,
    const Tensor &xkv, const Tensor &wq, const Tensor &wk, const Tensor &wv,
    const Tensor &wo, const std::vector<int64_t> *kvLen, const Tensor *mask,
    const Tensor *bias, const std::vector<double> *alibi, Tensor &result);

/// FLOPs the contract needs: (2*Dqk + 2*Dv) per allowed (query, key) pair per
/// query head. Allowed pairs are those permitted by kvLen, the causal mask and
/// the sliding window; the boolean mask tensor's content is counted only when
/// `countMaskContent` is true. Returns -1 when the inputs are inconsistent.
double attentionFlops(const Spec &spec, const Inputs &inputs,
                      bool countMaskContent = false);

/// Number of allowed (query, key) pairs summed over batch and query heads,
/// with the same rules as attentionFlops. Returns -1 on inconsistent inputs.
int64_t countAllowedPairs(const Spec &spec, const Inputs &inputs,
                          bool countMaskContent = false);

/// Round to the nearest f16 / bf16 value (ties to even; overflow to inf,
/// subnormals kept, NaN stays NaN) and widen back to float.
float roundToF16(float x);
float roundToBF16(float x);

/// Rounds every element to f32 and then to f16 / bf16, as a kernel fed with
/// f32 host data converted to the narrow type sees it.
void roundTensorToF16(Tensor &t);
void roundTensorToBF16(Tensor &t);

/// Swaps dimensions 1 and 2 of a rank-4 tensor (BHND <-> BNHD). Returns a
/// tensor with empty shape and data if `t` is not a consistent rank-4 tensor.
Tensor swapDims12(const Tensor &t);

} // namespace attn::ref

#endif // ATTN_REFERENCE_REFERENCE_H
