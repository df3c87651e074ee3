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
//  - kvStart[b] (any value) removes the keys j < kvStart[b] and nothing else:
//    positions stay, a kvStart past kvLen leaves no key. keyMask[b, j] = 0
//    removes key j of batch entry b likewise.
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
//  - attentionFlops counts the pairs allowed by kvLen, kvStart, the causal
//    mask, the sliding window and mask_mod. The boolean mask tensor's content
//    is ignored unless `countMaskContent` is true.
//  - score_mod and mask_mod (RegionProgram) are evaluated for every
//    (b, h, i, j) of the logical [B, Hq, Nq, Nk] domain, whatever the other
//    masks say: a region has no control flow, so a read outside a mod_inputs
//    tensor (or any other undefined operation: division by zero, a shift by
//    the bit width or more, an out-of-range float-to-integer conversion) is
//    reported as an error wherever in the domain it happens. score_mod
//    receives the logit in double; f32 arithmetic in a region is carried out
//    in double, f16 and bf16 results are rounded to their type.
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

//===----------------------------------------------------------------------===//
// score_mod / mask_mod programs
//===----------------------------------------------------------------------===//

/// The scalar type of a region value: an integer of `bits` bits (index is 64,
/// i1 is 1) or a float kind.
enum class ScalarKind { Int, F16, BF16, F32, F64 };
struct ScalarType {
  ScalarKind kind = ScalarKind::Int;
  unsigned bits = 64; // Int only: 1..64
  bool isFloat() const { return kind != ScalarKind::Int; }
  static ScalarType integer(unsigned bits) { return {ScalarKind::Int, bits}; }
  static ScalarType index() { return {ScalarKind::Int, 64}; }
  static ScalarType i1() { return {ScalarKind::Int, 1}; }
  static ScalarType f32() { return {ScalarKind::F32, 0}; }
};

/// The operations a region may contain (arith, math, tensor.extract,
/// tensor.dim), plus the block arguments.
enum class Opcode {
  // Values without operands.
  Arg,      // block argument `arg`: 0..3 = b, h, i, j (index), 4 = s (f32)
  Constant, // `ivalue` (Int) or `fvalue` (float)
  // Integer arithmetic (wraps at the type's width).
  AddI,
  SubI,
  MulI,
  DivSI,
  DivUI,
  RemSI,
  RemUI,
  FloorDivSI,
  CeilDivSI,
  CeilDivUI,
  MinSI,
  MaxSI,
  MinUI,
  MaxUI,
  AndI,
  OrI,
  XOrI,
  ShLI,
  ShRSI,
  ShRUI,
  AbsI,
  CmpI,
  Select,
  // Casts. ExtSI/ExtUI/TruncI/IndexCast/IndexCastUI between integers.
  ExtSI,
  ExtUI,
  TruncI,
  IndexCast,
  IndexCastUI,
  SIToFP,
  UIToFP,
  FPToSI,
  FPToUI,
  ExtF,
  TruncF,
  Bitcast,
  // Float arithmetic.
  AddF,
  SubF,
  MulF,
  DivF,
  RemF,
  NegF,
  MaximumF,
  MinimumF,
  MaxNumF,
  MinNumF,
  CmpF,
  AbsF,
  CopySign,
  PowF,
  FPowI,
  Fma,
  // Unary float math (Tanh .. Erfc is one range for the evaluator).
  Tanh,
  Exp,
  Exp2,
  ExpM1,
  Log,
  Log2,
  Log10,
  Log1p,
  Sqrt,
  Rsqrt,
  Cbrt,
  Floor,
  Ceil,
  Round,
  RoundEven,
  Trunc,
  Sin,
  Cos,
  Tan,
  Asin,
  Acos,
  Atan,
  Sinh,
  Cosh,
  Asinh,
  Acosh,
  Atanh,
  Erf,
  Erfc,
  Atan2,
  IsNaN,
  IsInf,
  IsFinite,
  // Integer math.
  IPowI,
  CountLeadingZeros,
  CountTrailingZeros,
  CtPop,
  // Tensors.
  Extract, // mod_inputs[`input`][operands...]
  Dim,     // the size of dimension operands[0] of mod_inputs[`input`]
};

/// arith.cmpi predicates (names as in MLIR).
enum class CmpIPred { eq, ne, slt, sle, sgt, sge, ult, ule, ugt, uge };
/// arith.cmpf predicates (names as in MLIR).
enum class CmpFPred {
  AlwaysFalse,
  oeq,
  ogt,
  oge,
  olt,
  ole,
  one,
  ord,
  ueq,
  ugt,
  uge,
  ult,
  ule,
  une,
  uno,
  AlwaysTrue
};

/// One instruction; its value is referred to by its position in
/// RegionProgram::instrs. Operands refer to earlier instructions.
struct Instr {
  Opcode op = Opcode::Constant;
  ScalarType type;           // the result's type
  std::vector<int> operands; // Select: cond, true, false; Fma: a, b, c
  int arg = 0;               // Arg: block argument number
  int input = 0;             // Extract / Dim: mod_inputs number
  int predicate = 0;         // CmpI: CmpIPred, CmpF: CmpFPred
  int64_t ivalue = 0;        // Int constants (any width, sign-extended)
  double fvalue = 0.0;       // float constants
  /// The MLIR op it came from (for error messages); optional.
  std::string name;
};

/// A score_mod or mask_mod region as a straight-line program. The value of
/// instruction `result` is the region's result: the new logit (float) for
/// score_mod, an i1 for mask_mod.
struct RegionProgram {
  std::vector<Instr> instrs;
  int result = -1;

  /// Appends an instruction and returns its value number.
  int add(Instr in) {
    instrs.push_back(std::move(in));
    return static_cast<int>(instrs.size()) - 1;
  }
  int add(Opcode op, ScalarType type, std::vector<int> operands = {}) {
    Instr in;
    in.op = op;
    in.type = type;
    in.operands = std::move(operands);
    return add(std::move(in));
  }
};

/// Evaluates `program` for (b, h, i, j) = idx and logit `s` (ignored by
/// mask_mod) over `modInputs`. Sets `result` (the float value, or 0/1 for an
/// i1) and returns "", or returns a one-line error that starts with `what`
/// ("score_mod reads mod_inputs #0 at [9] outside its shape [8] ...").
std::string evaluateRegion(const RegionProgram &program, const char *what,
                           const int64_t idx[4], double s,
                           const std::vector<const Tensor *> &modInputs,
                           double &result);

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

struct Inputs {
  /// Rank 4, in `Spec::layout` physical order.
  const Tensor *q = nullptr, *k = nullptr, *v = nullptr;
  /// [B]; optional (required with `pageTable`).
  const std::vector<int64_t> *kvLen = nullptr;
  /// [B] (one per sequence of a ragged batch); optional. Keys j < kvStart[b]
  /// are not read (left padding); positions do not move.
  const std::vector<int64_t> *kvStart = nullptr;
  /// [B, Nk] key-padding mask (optional, not with ragged batches); nonzero =
  /// the key may be read.
  const Tensor *keyMask = nullptr;
  /// Paged K/V (optional): [B, maxPages] page indices. `k` and `v` are then
  /// page pools [P, Hkv, S, D] (BHND) or [P, S, Hkv, D] (BNHD), and key
  /// j < kvLen[b] of batch entry b is row j % S of page pageTable[b, j / S];
  /// Nk = maxPages * S. Entries past a sequence's last page are not read.
  const Tensor *pageTable = nullptr;
  /// Ragged batches (optional): [B + 1] non-decreasing offsets. q, k, v
  /// (batch size 1) pack the sequences along N: sequence b has query rows
  /// cuSeqlensQ[b] .. cuSeqlensQ[b+1] and keys cuSeqlensK[b] ..
  /// cuSeqlensK[b+1], and is attended as its own problem (its own Nq, Nk
  /// and diagonal). Rows outside every sequence: out 0, lse -inf. With a
  /// page table there is no cuSeqlensK: sequence b reads kvLen[b] keys
  /// through pageTable row b. kvLen has one entry per sequence; mask and
  /// bias are indexed by packed rows [1, Hq, Tq, Tk] (paged: Nk = maxPages
  /// * S); the regions get the sequence as b and its own i and j.
  const std::vector<int64_t> *cuSeqlensQ = nullptr, *cuSeqlensK = nullptr;
  /// Rank <= 4, broadcastable (numpy rules, trailing-aligned) to the logical
  /// [B, Hq, Nq, Nk]; nonzero = may read. Optional.
  const Tensor *mask = nullptr;
  /// Additive logit bias, same broadcasting as `mask`. Optional.
  const Tensor *bias = nullptr;
  /// [Hq]; s -= slope[h] * |j - p(i)|. Optional.
  const std::vector<double> *alibiSlopes = nullptr;
  /// [Hq] attention sinks (optional): a logit per query head that joins
  /// the softmax's denominator and has no value: out = sum_j e^{s_j} v_j /
  /// (e^{sink[h]} + sum_j e^{s_j}), lse = log(e^{sink[h]} + sum_j e^{s_j});
  /// a row without allowed keys gets out 0, lse sink[h].
  const std::vector<double> *sink = nullptr;
  /// The user's regions (optional): the logit after bias/ALiBi is replaced
  /// by scoreMod(b, h, i, j, s, modInputs...); a key is allowed only where
  /// maskMod(b, h, i, j, modInputs...) is true.
  const RegionProgram *scoreMod = nullptr, *maskMod = nullptr;
  /// The tensors the regions read (integers stored exactly as doubles).
  std::vector<const Tensor *> modInputs;
  /// Added to the batch index the regions see (a ragged batch's sequence
  /// attended as a B = 1 problem of its own).
  int64_t regionBatchOffset = 0;
  /// Latent attention (optional): v is the first vFromK columns of k (`v`
  /// is then ignored): v[b, g, j, :] = k[b, g, j, 0:vFromK].
  std::optional<int64_t> vFromK;
  /// Quantized K/V (optional): `k` and `v` hold the raw 8-bit values (int8
  /// or fp8, decoded exactly) and the value attended is k * kScale, v *
  /// vScale. A scale tensor has one scale per token and head (k's shape
  /// without D) or one per page (batch entry) and head, [P, Hkv]. With
  /// vFromK, V is the dequantized K's first columns (vScale unused).
  const Tensor *kScale = nullptr, *vScale = nullptr;
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

/// Ragged batches: attention() on every sequence's slices of `inputs`
/// (which has cuSeqlensQ and cuSeqlensK), written into `result`; `pairs`
/// (optional) gets the allowed (query, key) pairs summed over sequences and
/// query heads. Returns an error or an empty string.
std::string raggedAttention(const Spec &spec, const Inputs &inputs,
                            Outputs &result, int64_t *pairs = nullptr);

/// Paged K/V: dense [B, Hkv, Nk, D] copies (in `spec.layout`) of the page
/// pools of `inputs`, keys past kvLen[b] zero. Returns an error (a page
/// index outside the pool for a key that is read, a missing kvLen, shapes
/// that disagree) or an empty string.
std::string densePagedKv(const Spec &spec, const Inputs &inputs, Tensor &k,
                         Tensor &v);

/// Projection level: xq [B,Nq,D], xkv [B,Nk,D] (pass xq for self-attention),
/// wq [D,Hq*Dqk], wk [D,Hkv*Dqk], wv [D,Hkv*Dv], wo [Hq*Dv,D]; result
/// [B,Nq,D]. Head h is the column block h*Dqk .. (h+1)*Dqk. Modifiers are as
/// in Inputs (all optional). `spec.layout` is irrelevant here and ignored.
std::string projectedAttention(
    const Spec &spec, int64_t hq, int64_t hkv, const Tensor &xq,
    const Tensor &xkv, const Tensor &wq, const Tensor &wk, const Tensor &wv,
    const Tensor &wo, const std::vector<int64_t> *kvLen, const Tensor *mask,
    const Tensor *bias, const std::vector<double> *alibi, Tensor &result);

/// The same, with every modifier (kvLen, mask, bias, alibiSlopes, scoreMod,
/// maskMod, modInputs) taken from `mods`; its q, k and v are ignored.
std::string projectedAttention(const Spec &spec, int64_t hq, int64_t hkv,
                               const Tensor &xq, const Tensor &xkv,
                               const Tensor &wq, const Tensor &wk,
                               const Tensor &wv, const Tensor &wo,
                               const Inputs &mods, Tensor &result);

/// FLOPs the contract needs: (2*Dqk + 2*Dv) per allowed (query, key) pair per
/// query head. Allowed pairs are those permitted by kvLen, the causal mask,
/// the sliding window and mask_mod; the boolean mask tensor's content is
/// counted only when `countMaskContent` is true. Returns -1 when the inputs
/// are inconsistent (or a region fails).
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
