//===- AttnBuilders.h - C++ API to build attn ops ---------------*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// A small API for embedding the attn dialect: state an attention variant as a
// plain struct, get an op whose result types are inferred from the operands.
//
//   AttentionConfig cfg;
//   cfg.causal = CausalAlign::bottom_right;
//   cfg.kvLen = lengths;
//   cfg.withLse = true;
//   AttentionOp op = buildAttention(b, loc, q, k, v, cfg);
//   if (failed(mlir::verify(op))) ...
//
// The builders never reject a problem: they infer what the types say and
// leave every rule to the verifier, so a bad shape is reported with the same
// message as in textual IR. Verify with `mlir::verify(op)` (which checks the
// ODS constraints first), not with the op's own `verify()` hook.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_IR_ATTNBUILDERS_H
#define ATTN_IR_ATTNBUILDERS_H

#include "attn/IR/AttnOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>

namespace mlir {
namespace attn {

/// The operands and attributes that say which keys a query reads and how
/// logits are formed. They mean the same on both ops (docs/Semantics.md).
/// Null values and empty optionals are simply not stated.
struct AttentionModifiers {
  /// Causal mask and its alignment; none means no causal mask.
  std::optional<CausalAlign> causal;
  /// Alignment of query positions without a causal mask (places the window
  /// and ALiBi); none means top-left, or the causal mask's.
  std::optional<CausalAlign> align;
  /// Sliding window sides; an unset side is unbounded.
  std::optional<int64_t> windowLeft;
  std::optional<int64_t> windowRight;
  /// Logit scale; none means 1/sqrt(Dqk) (or runtimeScale when set).
  std::optional<double> scale;
  /// Logit soft cap `cap * tanh(s / cap)`.
  std::optional<double> softcap;
  Normalization norm = Normalization::softmax;
  /// `tensor<Bxi32>` or `tensor<Bxi64>` valid key counts.
  Value kvLen;
  /// `tensor<Bxi32>` or `tensor<Bxi64>` first valid keys (left padding).
  Value kvStart;
  /// `tensor<BxNkxi1>` key-padding mask, true = may read.
  Value keyMask;
  /// i1 tensor broadcastable to [B, Hq, Nq, Nk], true = may read.
  Value mask;
  /// Float tensor broadcastable to [B, Hq, Nq, Nk], added to the logits.
  Value bias;
  /// `tensor<Hqxf32>` ALiBi slopes.
  Value alibiSlopes;
  /// Attention sinks: one f32 logit per query head that joins the softmax's
  /// denominator and contributes no value (docs/Semantics.md).
  Value sink;
  /// `tensor<f32>`: the logit scale read at run time (instead of `scale`).
  Value runtimeScale;
  /// Tensors the score_mod / mask_mod regions read (the regions themselves
  /// are added to the built op's regions by the caller).
  SmallVector<Value> modInputs;
};

/// Everything `attn.attention` states besides q, k and v.
struct AttentionConfig : AttentionModifiers {
  /// Physical order of q, k, v and out.
  Layout layout = Layout::bhnd;
  /// Also return the row log-sum-exp `[B, Hq, Nq]` f32.
  bool withLse = false;
  /// Paged K/V: `[B, max_pages]` i32/i64 page indices; k and v are then page
  /// pools `[P, Hkv, S, D]` (bhnd) or `[P, S, Hkv, D]` (bnhd).
  Value pageTable;
  /// Ragged batches: `[B + 1]` query and key offsets of the sequences packed
  /// along N of q, k and v (whose batch size is then 1).
  Value cuSeqlensQ, cuSeqlensK;
  /// Latent attention: V is the first `vFromK` columns of K (pass k as v).
  std::optional<int64_t> vFromK;
  /// Quantized K/V (i8, f8E4M3FN, f8E5M2 k and v): f32 scales per token and
  /// head (K's shape without D) or per page (batch entry) and head
  /// `[P, Hkv]`; the value read is `k * k_scale`.
  Value kScale, vScale;
};

/// The `out` type of attention over `q`, `k` and `v`: logical
/// `[B, Hq, Nq, Dv]` stored in `layout`, q's element type. B is the first
/// static batch size among q, k and v. When q or v is not a rank-4 ranked
/// tensor nothing can be inferred and q's type is returned, so that the
/// verifier reports the rank error.
Type inferAttentionOutType(Value q, Value k, Value v, Layout layout);

/// The `lse` type: `[B, Hq, Nq]` f32 (dynamic sizes where unknown).
RankedTensorType inferAttentionLseType(Value q, Value k, Value v,
                                       Layout layout);

/// Builds `attn.attention` with inferred result types.
AttentionOp buildAttention(OpBuilder &builder, Location loc, Value q, Value k,
                           Value v, const AttentionConfig &config = {});

/// The result type of the projection-level op: `[B, Nq, D]` with B and Nq
/// from `xq` and D the first static model width among xq, xkv and the weights,
/// in xq's element type. Returns xq's type when xq is not rank 3.
Type inferProjectedAttentionType(Value xq, Value xkv, Value wq, Value wk,
                                 Value wv, Value wo);

/// Builds `attn.projected_attention` with an inferred result type. `xkv` is
/// null for self-attention (K and V are projected from `xq`).
ProjectedAttentionOp
buildProjectedAttention(OpBuilder &builder, Location loc, Value xq, Value xkv,
                        Value wq, Value wk, Value wv, Value wo,
                        int64_t numQueryHeads, int64_t numKvHeads,
                        const AttentionModifiers &modifiers = {});

/// The projection-level op has no layout and no lse: passing a full
/// AttentionConfig would silently drop them, so it does not compile.
ProjectedAttentionOp buildProjectedAttention(OpBuilder &, Location, Value,
                                             Value, Value, Value, Value, Value,
                                             int64_t, int64_t,
                                             const AttentionConfig &) = delete;

/// Builds the body of `op`'s mask_mod region (`op` is an attn.attention or
/// attn.projected_attention whose mod_inputs are set): creates the block
/// with the arguments the verifier expects (b, h, i, j : index, then one per
/// mod_inputs tensor), calls `body` with them at its end and yields what it
/// returns (an i1, true = the key may be read).
void buildMaskMod(
    OpBuilder &builder, Operation *op,
    llvm::function_ref<Value(OpBuilder &, Location, ValueRange)> body);

/// Rewrites `op`'s key padding (an attn.attention or
/// attn.projected_attention), `kv_start` and `key_mask`, into its mask_mod
/// region: both join the mod_inputs (every region gets one more block
/// argument for each) and the mask yields `j >= kv_start[b]` and
/// `key_mask[b, j]`, and-ed with what it yielded before (or alone when there
/// was no mask_mod). The forms then classify them per tile as any
/// mask_mod's: key tiles before the start or wholly padding are skipped,
/// wholly real ones need no mask arithmetic. Returns whether `op` changed.
/// The rewrite records where the tensors went, as the attribute
/// kKeyPaddingAttr (`{kv_start = i, key_mask = j}`, their positions in
/// mod_inputs), so that the run-time shape checks still know them.
bool expandKeyPadding(Operation *op);

/// The attribute expandKeyPadding leaves on the op.
inline constexpr llvm::StringLiteral kKeyPaddingAttr = "attn.key_padding";

/// An op's key padding tensors, whether stated as modifiers or already
/// expanded into mod_inputs (null when absent).
struct KeyPaddingTensors {
  Value kvStart, keyMask;
};
KeyPaddingTensors keyPaddingTensors(AttentionOp op);

/// The same for score_mod: arguments (b, h, i, j : index, s : f32, inputs),
/// `body` returns the new f32 logit.
void buildScoreMod(
    OpBuilder &builder, Operation *op,
    llvm::function_ref<Value(OpBuilder &, Location, ValueRange)> body);

} // namespace attn
} // namespace mlir

#endif // ATTN_IR_ATTNBUILDERS_H
