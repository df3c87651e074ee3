//===- AttnOps.cpp - attn dialect operations ------------------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/IR/AttnOps.h"

#include "ModRegionVerifier.h"
#include "ModifierSyntax.h"
#include "ShapeUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <initializer_list>
#include <optional>
#include <tuple>

using namespace mlir;
using namespace mlir::attn;

#include "attn/IR/AttnDialect.cpp.inc"
#include "attn/IR/AttnEnums.cpp.inc"

void AttnDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "attn/IR/AttnOps.cpp.inc"
      >();
}

using namespace mlir::attn::detail;

/// The logical sizes every modifier is checked against.
namespace {
struct ProblemSizes {
  int64_t batch, numQueryHeads, queryLen, kvLen;
};
} // namespace

/// Checks that a mask or bias tensor is broadcastable (numpy rules, trailing
/// alignment) to the logical [B, Hq, Nq, Nk] score shape.
static LogicalResult verifyBroadcastable(Operation *op, StringRef what,
                                         RankedTensorType type,
                                         const ProblemSizes &sizes) {
  SmallVector<int64_t, 4> target = {sizes.batch, sizes.numQueryHeads,
                                    sizes.queryLen, sizes.kvLen};
  ArrayRef<int64_t> shape = type.getShape();
  if (shape.size() > 4)
    return op->emitOpError()
           << what << " of rank " << shape.size()
           << " is not broadcastable to [B, Hq, Nq, Nk] = " << fmtShape(target)
           << ": rank must be at most 4";
  size_t offset = 4 - shape.size();
  static constexpr StringLiteral names[4] = {"B", "Hq", "Nq", "Nk"};
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t want = target[offset + i];
    if (shape[i] == 1 || compatible(shape[i], want))
      continue;
    return op->emitOpError()
           << what << " of shape " << fmtShape(shape)
           << " is not broadcastable to [B, Hq, Nq, Nk] = " << fmtShape(target)
           << ": dimension " << i << " has size " << shape[i]
           << ", expected 1 or " << names[offset + i] << " = " << want;
  }
  return success();
}

/// Product of `factors`, the dynamic ones left out; nullopt when it
/// overflows int64 (a zero factor makes it 0 whatever the others).
static std::optional<int64_t> staticProduct(ArrayRef<int64_t> factors) {
  if (llvm::is_contained(factors, 0))
    return 0;
  int64_t p = 1;
  for (int64_t f : factors)
    if (f != kDyn && llvm::MulOverflow(p, f, p))
      return std::nullopt;
  return p;
}

/// Rejects sizes that no generated code could index: every operand and
/// result must have a byte size, and the f32 logits of the logical
/// [B, Hq, Nq, Nk] problem a byte count, representable in int64 (the static
/// sizes only; dynamic sizes are bounded by the buffers passed at run time).
static LogicalResult verifySizesFit(Operation *op, const ProblemSizes &sizes) {
  for (auto [kind, values] :
       {std::pair<StringRef, ValueRange>{"operand", op->getOperands()},
        {"result", op->getResults()}}) {
    for (auto [i, v] : llvm::enumerate(values)) {
      auto type = cast<RankedTensorType>(v.getType());
      SmallVector<int64_t, 6> factors(type.getShape());
      Type elt = type.getElementType();
      factors.push_back(
          elt.isIntOrFloat() ? (elt.getIntOrFloatBitWidth() + 7) / 8 : 1);
      if (!staticProduct(factors))
        return op->emitOpError()
               << kind << " #" << i << " of type " << type
               << " is too large: its size in bytes overflows a 64-bit size";
    }
  }
  SmallVector<int64_t, 4> problem = {sizes.batch, sizes.numQueryHeads,
                                     sizes.queryLen, sizes.kvLen};
  if (!staticProduct(
          {sizes.batch, sizes.numQueryHeads, sizes.queryLen, sizes.kvLen, 4}))
    return op->emitOpError()
           << "[B, Hq, Nq, Nk] = " << fmtShape(problem)
           << " is too large: the bytes of its f32 logits overflow a 64-bit "
              "size";
  return success();
}

/// Verifies the operands and attributes shared by both ops.
/// Takes the logical sizes that `sizes` leaves dynamic from a modifier that
/// states them: the first one that does fixes the size, and the modifiers
/// after it are checked against it (as they are against q's own sizes).
static void refineSizes(ProblemSizes &sizes, RankedTensorType type) {
  int64_t *target[4] = {&sizes.batch, &sizes.numQueryHeads, &sizes.queryLen,
                        &sizes.kvLen};
  ArrayRef<int64_t> shape = type.getShape();
  size_t offset = 4 - std::min<size_t>(shape.size(), 4);
  for (size_t i = 0; i < shape.size() && i < 4; ++i)
    if (*target[offset + i] == kDyn && shape[i] != kDyn && shape[i] != 1)
      *target[offset + i] = shape[i];
}

template <typename OpTy>
static LogicalResult verifyModifiers(OpTy op, ProblemSizes sizes) {
  Operation *raw = op.getOperation();
  bool ragged = false;
  if constexpr (std::is_same_v<OpTy, AttentionOp>)
    ragged = op.isRagged();
  // (A ragged batch's kv_len has an entry per sequence: verifyRagged.)
  for (auto [what, noun, value] : {std::tuple<StringRef, StringRef, Value>{
                                       "kv_len", "length", op.getKvLen()},
                                   {"kv_start", "start", op.getKvStart()}}) {
    if (!value || ragged)
      continue;
    auto type = cast<RankedTensorType>(value.getType());
    if (type.getRank() != 1 || !compatible(type.getDimSize(0), sizes.batch))
      return op.emitOpError()
             << what << " must be a rank-1 tensor with one " << noun
             << " per batch entry (B = " << fmtSize(sizes.batch) << "); got "
             << type;
    if (sizes.batch == kDyn)
      sizes.batch = type.getDimSize(0);
  }
  if (Value keyMask = op.getKeyMask()) {
    // Keys are packed in a ragged batch: its masks are `mask` by packed rows.
    if (ragged)
      return op.emitOpError()
             << "key_mask is for dense and paged batches; a ragged batch "
                "states key padding with kv_len, kv_start or a mask by packed "
                "rows";
    auto type = cast<RankedTensorType>(keyMask.getType());
    if (type.getRank() != 2 || !compatible(type.getDimSize(0), sizes.batch) ||
        !compatible(type.getDimSize(1), sizes.kvLen))
      return op.emitOpError()
             << "key_mask must be a [B, Nk] tensor (B = "
             << fmtSize(sizes.batch) << ", Nk = " << fmtSize(sizes.kvLen)
             << "); got " << type;
    if (sizes.batch == kDyn)
      sizes.batch = type.getDimSize(0);
    if (sizes.kvLen == kDyn)
      sizes.kvLen = type.getDimSize(1);
  }
  for (auto [what, value] : {std::pair<StringRef, Value>{"mask", op.getMask()},
                             {"bias", op.getBias()}}) {
    if (!value)
      continue;
    auto type = cast<RankedTensorType>(value.getType());
    if (failed(verifyBroadcastable(raw, what, type, sizes)))
      return failure();
    refineSizes(sizes, type);
  }
  // Per-query-head f32 vectors: ALiBi slopes and sink logits.
  for (auto [value, what] :
       {std::pair<Value, StringRef>{op.getAlibiSlopes(),
                                    "alibi slopes must be a rank-1 tensor with "
                                    "one slope per query head"},
        {op.getSink(), "sink must be a rank-1 tensor with one logit per query "
                       "head"}}) {
    if (!value)
      continue;
    auto type = cast<RankedTensorType>(value.getType());
    if (type.getRank() != 1 ||
        !compatible(type.getDimSize(0), sizes.numQueryHeads))
      return op.emitOpError()
             << what << " (Hq = " << fmtSize(sizes.numQueryHeads) << "); got "
             << type;
  }
  if (op.getSink() && op.getNormalization() != Normalization::softmax)
    return op.emitOpError()
           << "sink joins the softmax's denominator; norm(sigmoid) has none";
  if (auto left = op.getWindowLeftAttr(); left && left.getInt() < 0)
    return op.emitOpError()
           << "window_left must be non-negative; got " << left.getInt();
  if (auto right = op.getWindowRightAttr(); right && right.getInt() < 0)
    return op.emitOpError()
           << "window_right must be non-negative; got " << right.getInt();
  if (op.getScaleAttr() && op.getRuntimeScale())
    return op.emitOpError() << "scale is given both as an attribute and as a "
                               "run-time operand; state one";
  if (auto scale = op.getScaleAttr();
      scale && !std::isfinite(scale.getValueAsDouble()))
    return op.emitOpError()
           << "scale must be finite; got " << scale.getValueAsDouble();
  if (auto cap = op.getSoftcapAttr()) {
    double c = cap.getValueAsDouble();
    if (!(c > 0.0) || !std::isfinite(c))
      return op.emitOpError()
             << "softcap must be positive and finite; got " << c;
  }
  return verifySizesFit(raw, sizes);
}

//===----------------------------------------------------------------------===//
// Score and mask regions (one region: ModRegionVerifier.cpp)
//===----------------------------------------------------------------------===//

using mlir::attn::detail::verifyModRegion;

template <typename OpTy> static LogicalResult verifyModRegions(OpTy op) {
  ValueRange inputs = op.getModInputs();
  if (failed(
          verifyModRegion(op, op.getScoreMod(), "score_mod", true, inputs)) ||
      failed(verifyModRegion(op, op.getMaskMod(), "mask_mod", false, inputs)))
    return failure();
  if (!inputs.empty() && op.getScoreMod().empty() && op.getMaskMod().empty())
    return op.emitOpError()
           << "mod_inputs are read only by score_mod and mask_mod regions; "
              "this op has neither";
  for (auto [i, v] : llvm::enumerate(inputs)) {
    Type elt = cast<RankedTensorType>(v.getType()).getElementType();
    if (!elt.isIntOrIndexOrFloat())
      return op.emitOpError()
             << "mod_inputs #" << i << " must hold integers or floats; got "
             << v.getType();
  }
  if (auto causal = op.getCausal(), align = op.getAlign();
      causal && align && *causal != *align)
    return op.emitOpError()
           << "align(" << stringifyCausalAlign(*align)
           << ") contradicts causal(" << stringifyCausalAlign(*causal)
           << "): the causal mask fixes the alignment";
  return success();
}

template <typename OpTy> static bool bottomRightAligned(OpTy op) {
  std::optional<CausalAlign> a = op.getCausal();
  if (!a)
    a = op.getAlign();
  return a && *a == CausalAlign::bottom_right;
}

static Block *blockOrNull(Region &r) {
  return r.empty() ? nullptr : &r.front();
}

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

bool AttentionOp::isBottomRightAligned() { return bottomRightAligned(*this); }
Block *AttentionOp::getScoreModBlock() { return blockOrNull(getScoreMod()); }
Block *AttentionOp::getMaskModBlock() { return blockOrNull(getMaskMod()); }

int64_t AttentionOp::getPhysicalDim(int64_t logical) {
  return physicalDim(getLayout(), logical);
}
int64_t AttentionOp::getBatch() {
  return logicalShape(getQuery().getType(), getLayout())[0];
}
int64_t AttentionOp::getNumQueryHeads() {
  return logicalShape(getQuery().getType(), getLayout())[1];
}
int64_t AttentionOp::getNumKvHeads() {
  return logicalShape(getKey().getType(), getLayout())[1];
}
int64_t AttentionOp::getQuerySeqLen() {
  return logicalShape(getQuery().getType(), getLayout())[2];
}
int64_t AttentionOp::getKvSeqLen() {
  int64_t n = logicalShape(getKey().getType(), getLayout())[2];
  if (!isPaged())
    return n;
  int64_t pages = getPageTable().getType().getDimSize(1);
  if (n == kDyn || pages == kDyn)
    return kDyn;
  int64_t nk;
  if (llvm::MulOverflow(n, pages, nk))
    return kDyn;
  return nk;
}
int64_t AttentionOp::getPageSize() {
  return logicalShape(getKey().getType(), getLayout())[2];
}
int64_t AttentionOp::getNumPages() {
  return logicalShape(getKey().getType(), getLayout())[0];
}
int64_t AttentionOp::getHeadDimQK() {
  return logicalShape(getQuery().getType(), getLayout())[3];
}
int64_t AttentionOp::getHeadDimV() {
  if (std::optional<int64_t> dv = getVFromK())
    return *dv;
  return logicalShape(getValue().getType(), getLayout())[3];
}

static std::optional<int64_t> effectiveWindow(IntegerAttr bound) {
  constexpr int64_t kUnbounded = int64_t(1) << 61;
  if (!bound || bound.getInt() >= kUnbounded)
    return std::nullopt;
  return bound.getInt();
}

std::optional<int64_t> AttentionOp::getEffectiveWindowLeft() {
  return effectiveWindow(getWindowLeftAttr());
}

std::optional<int64_t> AttentionOp::getEffectiveWindowRight() {
  return effectiveWindow(getWindowRightAttr());
}

std::optional<double> AttentionOp::getEffectiveScale() {
  if (getRuntimeScale())
    return std::nullopt;
  if (auto scale = getScaleAttr())
    return scale.getValueAsDouble();
  int64_t d = getHeadDimQK();
  if (d == kDyn || d <= 0)
    return std::nullopt;
  return 1.0 / std::sqrt(static_cast<double>(d));
}

LogicalResult AttentionOp::verifyRagged() {
  Value cuQ = getCuSeqlensQ(), cuK = getCuSeqlensK();
  if (!cuQ)
    return emitOpError() << "ragged batches need cu_seqlens_q";
  if (isPaged() && cuK)
    return emitOpError() << "a paged ragged batch reads each sequence's keys "
                            "through its page_table row and kv_len; write "
                            "ragged(%cu_q : ...) without cu_seqlens_k";
  if (!isPaged() && !cuK)
    return emitOpError() << "ragged batches need cu_seqlens_k (or a "
                            "page_table and kv_len for the keys)";
  auto tq = cast<RankedTensorType>(cuQ.getType());
  auto tk = cuK ? cast<RankedTensorType>(cuK.getType()) : tq;
  if (tq.getRank() != 1 || tk.getRank() != 1 ||
      !compatible(tq.getDimSize(0), tk.getDimSize(0)) ||
      tq.getDimSize(0) == 0 || tk.getDimSize(0) == 0) {
    InFlightDiagnostic diag = emitOpError()
                              << "ragged offsets must be rank-1 tensors of "
                                 "B + 1 offsets each; got "
                              << tq;
    if (cuK)
      diag << " and " << tk;
    return diag;
  }
  // kv_len and the page table have one entry or row per sequence.
  int64_t seqs = getNumSequences();
  for (auto [what, noun, value] :
       {std::tuple<StringRef, StringRef, Value>{"kv_len", "length", getKvLen()},
        {"kv_start", "start", getKvStart()}}) {
    if (!value)
      continue;
    auto type = cast<RankedTensorType>(value.getType());
    if (type.getRank() != 1 || !compatible(type.getDimSize(0), seqs))
      return emitOpError() << what << " of a ragged batch must have one "
                           << noun << " per sequence (B = " << fmtSize(seqs)
                           << ", one less than the offsets); "
                           << "got " << type;
  }
  for (auto [name, v] : {std::pair<StringRef, Value>{"q", getQuery()},
                         {"k", getKey()},
                         {"v", getValue()},
                         {"out", getOut()}}) {
    if (isPaged() && (name == "k" || name == "v"))
      continue;
    int64_t b = logicalShape(v.getType(), getLayout())[0];
    if (b != kDyn && b != 1)
      return emitOpError() << "ragged batches pack every sequence into one "
                              "batch entry: "
                           << name << " must have B = 1; got " << b;
  }
  return success();
}

int64_t AttentionOp::getNumSequences() {
  if (!isRagged())
    return getBatch();
  int64_t n = cast<RankedTensorType>(getCuSeqlensQ().getType()).getDimSize(0);
  return n == kDyn ? kDyn : n - 1;
}

LogicalResult AttentionOp::verifyPaging(ArrayRef<int64_t> k,
                                        ArrayRef<int64_t> v) {
  auto pt = cast<RankedTensorType>(getPageTable().getType());
  // A ragged batch has a row per sequence.
  int64_t batch = isRagged()
                      ? getNumSequences()
                      : logicalShape(getQuery().getType(), getLayout())[0];
  if (pt.getRank() != 2 || !compatible(pt.getDimSize(0), batch))
    return emitOpError() << "page_table must be [B, max_pages] with one row "
                            "of page indices per "
                         << (isRagged() ? "sequence" : "batch entry")
                         << " (B = " << fmtSize(batch) << "); got " << pt;
  if (!getKvLen())
    return emitOpError() << "page_table needs kv_len: the number of valid "
                            "tokens of each sequence";
  if (!compatible(k[0], v[0]))
    return emitOpError() << "k and v page pools must have the same number of "
                            "pages: k has "
                         << fmtSize(k[0]) << ", v has " << fmtSize(v[0]);
  // Both static: the schedule and the lowerings read the page size from K.
  if (k[2] == kDyn || v[2] == kDyn)
    return emitOpError() << "paged k and v need a static page size (their "
                            "N dimension); got "
                         << (k[2] == kDyn ? getKey().getType()
                                          : getValue().getType());
  int64_t s = k[2];
  if (s <= 0 || !compatible(k[2], v[2]))
    return emitOpError() << "paged k and v must have the same positive page "
                            "size: k has "
                         << fmtSize(k[2]) << ", v has " << fmtSize(v[2]);
  return success();
}

bool mlir::attn::isQuantizedKvType(Type t) {
  return t.isInteger(8) || isa<Float8E4M3FNType, Float8E5M2Type>(t);
}

bool AttentionOp::isQuantized() {
  return isQuantizedKvType(getKey().getType().getElementType());
}

LogicalResult AttentionOp::verifyQuantization() {
  Value kScale = getKScale(), vScale = getVScale();
  if (!isQuantized()) {
    if (kScale || vScale)
      return emitOpError() << (kScale ? "k_scale" : "v_scale")
                           << " goes with a quantized cache (k and v of "
                              "element type i8, f8E4M3FN or f8E5M2); k is "
                           << getKey().getType();
    return success();
  }
  Type e = getKey().getType().getElementType();
  if (!kScale)
    return emitOpError() << "a quantized cache (k and v of element type " << e
                         << ") needs k_scale(...): f32 scales per token and "
                            "head, or per page and head";
  if (getVFromK()) {
    if (vScale)
      return emitOpError() << "v_from_k reads V from k, scaled by k_scale; "
                              "drop v_scale";
  } else if (!vScale) {
    return emitOpError() << "a quantized cache (k and v of element type " << e
                         << ") needs v_scale(...): f32 scales per token and "
                            "head, or per page and head";
  }
  // One scale per row of D values (K's shape without D), or per page
  // (batch entry) and head.
  for (auto [name, scale, of] :
       {std::tuple<StringRef, Value, Value>{"k_scale", kScale, getKey()},
        {"v_scale", vScale, getValue()}}) {
    if (!scale)
      continue;
    std::string expected =
        kvScaleMismatch(cast<RankedTensorType>(scale.getType()).getShape(),
                        cast<RankedTensorType>(of.getType()).getShape(),
                        getLayout(), isPaged());
    if (!expected.empty())
      return emitOpError() << name << " must hold " << expected << "; got "
                           << scale.getType();
  }
  return success();
}

LogicalResult AttentionOp::verify() {
  Layout layout = getLayout();
  StringRef layoutName = stringifyLayout(layout);
  for (auto [name, v] : {std::pair<StringRef, Value>{"q", getQuery()},
                         {"k", getKey()},
                         {"v", getValue()},
                         {"out", getOut()}}) {
    auto type = cast<RankedTensorType>(v.getType());
    if (type.getRank() != 4)
      return emitOpError() << name
                           << " must have rank 4 ([B, H, N, D] or "
                              "[B, N, H, D]); got "
                           << type;
  }
  Type elt = getQuery().getType().getElementType();
  Type kvElt = getKey().getType().getElementType();
  // A quantized cache has its own element type (k and v share it).
  if (getValue().getType().getElementType() != kvElt ||
      (!isQuantized() && kvElt != elt) ||
      getOut().getType().getElementType() != elt)
    return emitOpError() << "q, k, v and out must share one element type "
                            "(k and v may share an 8-bit quantized one); got "
                         << elt << ", " << getKey().getType().getElementType()
                         << ", " << getValue().getType().getElementType()
                         << ", " << getOut().getType().getElementType();

  if (failed(verifyQuantization()))
    return failure();
  auto q = logicalShape(getQuery().getType(), layout);
  auto k = logicalShape(getKey().getType(), layout);
  auto v = logicalShape(getValue().getType(), layout);
  auto o = logicalShape(getOut().getType(), layout);
  // Latent attention: V is k's first Dv columns.
  if (std::optional<int64_t> dv = getVFromK()) {
    if (getValue() != getKey())
      return emitOpError() << "v_from_k(" << *dv
                           << ") reads V from k's first columns: v must be "
                              "the same value as k";
    if (k[3] == kDyn)
      return emitOpError() << "v_from_k needs a static head dimension in k; "
                              "got "
                           << getKey().getType();
    if (*dv < 1 || *dv > k[3])
      return emitOpError() << "v_from_k(" << *dv
                           << ") must take between 1 and Dqk = " << k[3]
                           << " columns of k";
    v[3] = *dv;
  }

  // A size dynamic in q, k and v may still be stated by out or lse: the
  // modifiers are checked against the first type that states it.
  auto firstStatic = [](std::initializer_list<int64_t> sizes) {
    for (int64_t s : sizes)
      if (s != kDyn)
        return s;
    return kDyn;
  };
  auto lseType = getLse() ? cast<RankedTensorType>(getLse().getType())
                          : RankedTensorType();
  auto lseDim = [&](int64_t i) {
    return lseType && lseType.getRank() == 3 ? lseType.getDimSize(i) : kDyn;
  };
  if ((getCuSeqlensQ() || getCuSeqlensK()) && failed(verifyRagged()))
    return failure();
  // Paged K/V: k and v are page pools [P, Hkv, S, D]; the batch comes from
  // q and the page table.
  bool paged = isPaged();
  auto pt = paged ? cast<RankedTensorType>(getPageTable().getType())
                  : RankedTensorType();
  int64_t ptBatch = pt && pt.getRank() == 2 ? pt.getDimSize(0) : kDyn;
  // (A ragged batch is one batch entry; its page table has a row per
  // sequence.)
  int64_t batch = isRagged() ? 1
                  : paged    ? firstStatic({q[0], o[0], lseDim(0), ptBatch})
                             : firstStatic({q[0], k[0], v[0], o[0], lseDim(0)});
  int64_t numQueryHeads = firstStatic({q[1], o[1], lseDim(1)});
  int64_t queryLen = firstStatic({q[2], o[2], lseDim(2)});

  if (paged) {
    if (failed(verifyPaging(k, v)))
      return failure();
  } else if (!compatible(q[0], k[0]) || !compatible(q[0], v[0]) ||
             !compatible(k[0], v[0]))
    return emitOpError() << "batch sizes differ: q has B = " << fmtSize(q[0])
                         << ", k has B = " << fmtSize(k[0])
                         << ", v has B = " << fmtSize(v[0]);
  for (auto [name, h] :
       {std::pair<StringRef, int64_t>{"q", q[1]}, {"k", k[1]}, {"v", v[1]}})
    if (h == 0)
      return emitOpError() << name << " must have at least one head; got 0";
  if (!compatible(k[1], v[1]))
    return emitOpError()
           << "k and v must have the same number of heads (Hkv): k has " << k[1]
           << ", v has " << v[1];
  if (numQueryHeads != kDyn && k[1] != kDyn && numQueryHeads % k[1] != 0)
    return emitOpError() << "query heads must be a multiple of K/V heads: Hq = "
                         << numQueryHeads
                         << " is not divisible by Hkv = " << k[1];
  if (!compatible(q[3], k[3]))
    return emitOpError()
           << "q and k must have the same head dimension (Dqk): q has " << q[3]
           << ", k has " << k[3];
  if (q[3] == 0 || k[3] == 0 || v[3] == 0)
    return emitOpError() << "head dimensions must be positive; got Dqk = "
                         << (q[3] == 0 ? q[3] : k[3]) << ", Dv = " << v[3];
  if (!compatible(k[2], v[2]))
    return emitOpError()
           << "k and v must have the same sequence length (Nk): k has " << k[2]
           << ", v has " << v[2];

  int64_t nk = paged ? getKvSeqLen() : (k[2] != kDyn ? k[2] : v[2]);
  SmallVector<int64_t, 4> expectOut = {batch, q[1], q[2], v[3]};
  for (int64_t i = 0; i < 4; ++i) {
    if (compatible(o[i], expectOut[i]))
      continue;
    SmallVector<int64_t, 4> physical(4);
    for (int64_t l = 0; l < 4; ++l)
      physical[physicalDim(layout, l)] = expectOut[l];
    return emitOpError() << "out must be [B, Hq, Nq, Dv] = "
                         << fmtShape(expectOut) << " (stored as "
                         << fmtShape(physical) << " in layout " << layoutName
                         << "); got " << getOut().getType();
  }

  if (Value lse = getLse()) {
    auto type = cast<RankedTensorType>(lse.getType());
    SmallVector<int64_t, 3> expect = {batch, numQueryHeads, queryLen};
    if (!compatibleShape(type.getShape(), expect))
      return emitOpError() << "lse must be [B, Hq, Nq] = " << fmtShape(expect)
                           << " f32; got " << type;
    if (getNormalization() != Normalization::softmax)
      return emitOpError() << "lse is defined only for softmax normalization; "
                              "got norm("
                           << stringifyNormalization(getNormalization()) << ")";
  }
  if (failed(verifyModRegions(*this)))
    return failure();
  // The per-tile classification of a mask_mod bounds its arithmetic with
  // indices below 2^40 (dynamic sizes are checked at run time).
  if (getMaskModBlock()) {
    for (auto [name, size] : {std::pair<StringRef, int64_t>{"B", batch},
                              {"Hq", numQueryHeads},
                              {"Nq", queryLen},
                              {"Nk", nk}})
      if (size != kDyn && size >= (int64_t(1) << 40))
        return emitOpError() << "mask_mod needs B, Hq, Nq and Nk below 2^40; "
                                "got "
                             << name << " = " << size;
  }
  return verifyModifiers(*this,
                         ProblemSizes{batch, numQueryHeads, queryLen, nk});
}

//===----------------------------------------------------------------------===//
// ProjectedAttentionOp
//===----------------------------------------------------------------------===//

bool ProjectedAttentionOp::isBottomRightAligned() {
  return bottomRightAligned(*this);
}

LogicalResult ProjectedAttentionOp::verify() {
  int64_t hq = getNumQueryHeads();
  int64_t hkv = getNumKvHeads();
  if (hq <= 0 || hkv <= 0)
    return emitOpError() << "head counts must be positive; got Hq = " << hq
                         << ", Hkv = " << hkv;
  if (hq % hkv != 0)
    return emitOpError() << "query heads must be a multiple of K/V heads: Hq = "
                         << hq << " is not divisible by Hkv = " << hkv;

  Type elt = getXq().getType().getElementType();
  for (Value v : SmallVector<Value>{getKvSource(), getWq(), getWk(), getWv(),
                                    getWo(), getResult()})
    if (cast<RankedTensorType>(v.getType()).getElementType() != elt)
      return emitOpError() << "sources, weights and result must share one "
                              "element type; expected "
                           << elt << ", got " << v.getType();

  auto xq = getXq().getType();
  auto xkv = cast<RankedTensorType>(getKvSource().getType());
  if (xq.getRank() != 3)
    return emitOpError() << "x must be [B, Nq, D]; got " << xq;
  if (xkv.getRank() != 3)
    return emitOpError() << "kv_source must be [B, Nk, D]; got " << xkv;
  int64_t batch = xq.getDimSize(0), nq = xq.getDimSize(1),
          model = xq.getDimSize(2);
  if (!compatible(xkv.getDimSize(0), batch) ||
      !compatible(xkv.getDimSize(2), model))
    return emitOpError() << "kv_source must be [B, Nk, D] with B = "
                         << fmtSize(batch) << " and D = " << fmtSize(model)
                         << " as in x; got " << xkv;
  if (batch == kDyn)
    batch = xkv.getDimSize(0);
  if (model == kDyn)
    model = xkv.getDimSize(2);
  // D dynamic in the sources: the weights must still agree on it (checked
  // against the first one that states it).
  for (auto [w, i] : {std::pair<Value, unsigned>{getWq(), 0},
                      {getWk(), 0},
                      {getWv(), 0},
                      {getWo(), 1}}) {
    auto type = cast<RankedTensorType>(w.getType());
    if (model == kDyn && type.getRank() == 2 && !type.isDynamicDim(i))
      model = type.getDimSize(i);
  }
  int64_t nk = xkv.getDimSize(1);
  // The projections run on [B*N, D] rows: the product must be representable.
  for (auto [name, n] : {std::pair<StringRef, int64_t>{"Nq", nq}, {"Nk", nk}}) {
    int64_t rows;
    if (batch != kDyn && n != kDyn && llvm::MulOverflow(batch, n, rows))
      return emitOpError() << "B * " << name << " = " << batch << " * " << n
                           << " overflows a 64-bit size";
  }

  // Each weight is [rows, cols]; `heads` divides the column count of the
  // input projections and the row count of the output projection.
  auto checkWeight = [&](StringRef name, Value w, int64_t rows, int64_t heads,
                         bool headsOnRows, StringRef form) -> LogicalResult {
    auto type = cast<RankedTensorType>(w.getType());
    int64_t r = type.getRank() == 2 ? type.getDimSize(0) : 0;
    int64_t c = type.getRank() == 2 ? type.getDimSize(1) : 0;
    int64_t split = headsOnRows ? r : c;
    int64_t other = headsOnRows ? c : r;
    bool ok = type.getRank() == 2 && compatible(other, rows) &&
              (split == kDyn || (split > 0 && split % heads == 0));
    if (ok)
      return success();
    return emitOpError() << name << " must be " << form
                         << " with D = " << fmtSize(rows)
                         << " and a multiple of " << heads << " head"
                         << (heads == 1 ? "" : "s") << " on the head side; got "
                         << type;
  };
  if (failed(checkWeight("wq", getWq(), model, hq, false, "[D, Hq*Dqk]")) ||
      failed(checkWeight("wk", getWk(), model, hkv, false, "[D, Hkv*Dqk]")) ||
      failed(checkWeight("wv", getWv(), model, hkv, false, "[D, Hkv*Dv]")) ||
      failed(checkWeight("wo", getWo(), model, hq, true, "[Hq*Dv, D]")))
    return failure();

  auto dimOrDyn = [](Value w, unsigned i) {
    return cast<RankedTensorType>(w.getType()).getDimSize(i);
  };
  auto perHead = [](int64_t n, int64_t h) { return n == kDyn ? kDyn : n / h; };
  int64_t dqkQ = perHead(dimOrDyn(getWq(), 1), hq);
  int64_t dqkK = perHead(dimOrDyn(getWk(), 1), hkv);
  if (!compatible(dqkQ, dqkK))
    return emitOpError() << "wq and wk give different head dimensions (Dqk): "
                         << dqkQ << " from wq (Hq = " << hq << "), " << dqkK
                         << " from wk (Hkv = " << hkv << ")";
  int64_t dvV = perHead(dimOrDyn(getWv(), 1), hkv);
  int64_t dvO = perHead(dimOrDyn(getWo(), 0), hq);
  if (!compatible(dvV, dvO))
    return emitOpError() << "wv and wo give different value head dimensions "
                            "(Dv): "
                         << dvV << " from wv (Hkv = " << hkv << "), " << dvO
                         << " from wo (Hq = " << hq << ")";

  // The expansion materializes q, k, v and the heads' output as rank-4
  // tensors ([B, N, H, D], attn.attention in layout bnhd): their bytes must
  // be countable too.
  int64_t dqk = dqkQ != kDyn ? dqkQ : dqkK, dv = dvV != kDyn ? dvV : dvO;
  int64_t eltBytes =
      elt.isIntOrFloat() ? (elt.getIntOrFloatBitWidth() + 7) / 8 : 1;
  for (auto [name, shape] : {std::pair<StringRef, SmallVector<int64_t, 4>>{
                                 "q", {batch, nq, hq, dqk}},
                             {"k", {batch, nk, hkv, dqk}},
                             {"v", {batch, nk, hkv, dv}},
                             {"attention output", {batch, nq, hq, dv}}}) {
    SmallVector<int64_t, 5> factors(shape.begin(), shape.end());
    factors.push_back(eltBytes);
    if (!staticProduct(factors))
      return emitOpError() << "the projected " << name
                           << " [B, N, H, D] = " << fmtShape(shape)
                           << " is too large: its size in bytes overflows a "
                              "64-bit size";
  }

  auto res = getResult().getType();
  SmallVector<int64_t, 3> expect = {batch, nq, model};
  bool ok = res.getRank() == 3;
  for (int64_t i = 0; ok && i < 3; ++i)
    ok = compatible(res.getDimSize(i), expect[i]);
  if (!ok)
    return emitOpError() << "result must be [B, Nq, D] = " << fmtShape(expect)
                         << "; got " << res;

  if (failed(verifyModRegions(*this)))
    return failure();
  return verifyModifiers(*this, ProblemSizes{batch, hq, nq, nk});
}

#define GET_OP_CLASSES
#include "attn/IR/AttnOps.cpp.inc"
