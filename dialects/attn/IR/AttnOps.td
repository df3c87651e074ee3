//===- AttnOps.td - attn dialect operations ----------------*- tablegen -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_IR_ATTNOPS_TD
#define ATTN_IR_ATTNOPS_TD

include "attn/IR/AttnDialect.td"
include "attn/IR/AttnEnums.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/IR/RegionKindInterface.td"

def Attn_FloatTensor : RankedTensorOf<[F32, F16, BF16]>;
def Attn_MaskTensor : RankedTensorOf<[I1]>;
def Attn_KvLenTensor : RankedTensorOf<[I32, I64]>;
def Attn_SlopeTensor : RankedTensorOf<[F32]>;
// The logit scale as a run-time operand: one f32, `tensor<f32>`.
def Attn_ScaleTensor : 0DTensorOf<[F32]>;
def Attn_PageTableTensor : RankedTensorOf<[I32, I64]>;
// K/V as attn.attention and attn.kv_cache_append read them: floats, or a
// quantized cache (int8, fp8 e4m3 / e5m2) with f32 scales beside it.
def Attn_KvTensor : RankedTensorOf<[F32, F16, BF16, I8, F8E4M3FN, F8E5M2]>;
def Attn_KvScaleTensor : RankedTensorOf<[F32]>;

// Operands and attributes that say which keys a query reads and how logits
// are formed; shared by the core op and the projection-level op.
defvar Attn_ModifierOperands = (ins
  Optional<Attn_KvLenTensor>:$kv_len,
  Optional<Attn_KvLenTensor>:$kv_start,
  Optional<Attn_MaskTensor>:$key_mask,
  Optional<Attn_MaskTensor>:$mask,
  Optional<Attn_FloatTensor>:$bias,
  Optional<Attn_SlopeTensor>:$alibi_slopes,
  Optional<Attn_SlopeTensor>:$sink,
  Optional<Attn_ScaleTensor>:$runtime_scale,
  Variadic<AnyRankedTensor>:$mod_inputs
);
defvar Attn_ModifierAttrs = (ins
  OptionalAttr<Attn_CausalAlign>:$causal,
  OptionalAttr<Attn_CausalAlign>:$align,
  OptionalAttr<I64Attr>:$window_left,
  OptionalAttr<I64Attr>:$window_right,
  OptionalAttr<F64Attr>:$scale,
  OptionalAttr<F64Attr>:$softcap,
  DefaultValuedAttr<Attn_Normalization, "::mlir::attn::Normalization::softmax">:$normalization
);
// The user's score and mask modifications (see docs/Semantics.md, "Score and
// mask regions").
defvar Attn_ModifierRegions = (region MaxSizedRegion<1>:$score_mod,
                                      MaxSizedRegion<1>:$mask_mod);

// Modifiers may be written in any order (each at most once); the printer
// uses the order of the list below.
defvar Attn_ModifierDirectiveArgs = [{
    $kv_len, type($kv_len), $kv_start, type($kv_start), $key_mask,
    type($key_mask), $mask, type($mask),
    $bias, type($bias),
    $alibi_slopes, type($alibi_slopes), $sink, type($sink), $runtime_scale,
    type($runtime_scale), $mod_inputs,
    type($mod_inputs),
    $causal, $align, $window_left, $window_right, $scale, $softcap,
    $normalization, $score_mod, $mask_mod
}];

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

def Attn_AttentionOp : Attn_Op<"attention",
    [Pure, AttrSizedOperandSegments, IsolatedFromAbove]> {
  let summary = "scaled dot-product attention, stated completely";
  let description = [{
    Computes, for every batch `b`, query head `h`, query `i`:

    ```
    g(h)  = h / (Hq / Hkv)                          // head grouping
    s_ij  = scale * dot(q[b,h,i,:], k[b,g(h),j,:])  // scale = 1/sqrt(Dqk) by default
    s_ij  = softcap * tanh(s_ij / softcap)          // if softcap
    s_ij += bias[b,h,i,j] - slope[h] * |j - p(i)|   // if bias / alibi
    s_ij  = score_mod(b, h, i, j, s_ij)             // if score_mod
    s_ij  = -inf where key j is not allowed         // kv_len, kv_start,
                                                    // key_mask, causal,
                                                    // window, mask, mask_mod
    out[b,h,i,:] = sum_j softmax_j(s_i)[j] * v[b,g(h),j,:]
    lse[b,h,i]   = log(sum_j exp(s_ij))             // optional result
    ```

    Sizes are read from the types: `q : [B, Hq, Nq, Dqk]`,
    `k : [B, Hkv, Nk, Dqk]`, `v : [B, Hkv, Nk, Dv]`, `out : [B, Hq, Nq, Dv]`
    in the logical order; `layout(bnhd)` says the four tensors are stored as
    `[B, N, H, D]` instead. `lse` is always `[B, Hq, Nq]` f32. Any size may be
    dynamic.

    Key `j` is allowed for query `i` when `j < kv_len[b]` (default `Nk`),
    `j >= kv_start[b]` (default 0: left padding, the first valid key of each
    batch entry; positions `p(i)` do not move), `key_mask[b, j]` (a
    `[B, Nk]` i1 key-padding mask, true = the key may be read), and, when
    stated, `j <= p(i)` (causal), `p(i) - j <= window_left`,
    `j - p(i) <= window_right` and `mask[b,h,i,j]`. `p(i) = i` for
    `causal(top_left)` or no causal mask, `p(i) = i + kv_len[b] - Nq` for
    `causal(bottom_right)`. `mask` (i1) and `bias` are broadcastable to
    `[B, Hq, Nq, Nk]` (numpy rules, always in this logical order); `alibi`
    gives one f32 slope per query head.

    Without `causal`, `align(bottom_right)` places the window and ALiBi
    distances on the bottom-right diagonal, `p(i) = i + kv_len[b] - Nq`
    (FlashAttention's local attention with `Nq != Nk`); `align` must agree
    with `causal` when both are given.

    The scale is `scale(c)` (a constant), or `scale(%s : tensor<f32>)`, one
    f32 the caller passes with every call (flash-attn's `softmax_scale`, a
    model whose scale is a parameter): one compiled kernel serves every
    scale. Without either it is `1/sqrt(Dqk)`.

    ```mlir
    %o = attn.attention q(%q : tensor<1x8x?x64xf32>)
        k(%k : tensor<1x8x?x64xf32>) v(%v : tensor<1x8x?x64xf32>)
        scale(%s : tensor<f32>) causal(top_left) -> tensor<1x8x?x64xf32>
    ```

    Left padding (a batch of prompts padded at the start, as Hugging Face
    tokenizers pad for generation): `kv_start(%first : tensor<Bxi32>)`
    gives each batch entry's first valid key (one per sequence of a ragged
    batch, counted in its own keys); keys before it are never read. It is
    a lower bound beside `kv_len`'s upper one and moves no position: the
    causal diagonal, windows and ALiBi distances stay where they are (with
    the queries padded like the keys, query `i` and key `i` are the same
    token). A query row with no key left (a padded query) gives `out = 0`,
    `lse = -inf`. The forms skip the key tiles before it. Padding anywhere
    else (the 2-D attention mask frameworks pass, `[B, Nk]`, true = a real
    token) is `key_mask(%m : tensor<BxNkxi1>)`; the forms skip key tiles it
    denies entirely and run those it allows entirely without mask
    arithmetic (not on ragged batches, whose keys are packed: use `mask`).

    ```mlir
    %o = attn.attention q(%q : tensor<4x8x?x64xf32>)
        k(%k : tensor<4x2x?x64xf32>) v(%v : tensor<4x2x?x64xf32>)
        kv_start(%first : tensor<4xi32>) causal(top_left)
        -> tensor<4x8x?x64xf32>
    ```

    Modifiers (`page_table` and `ragged` included) may be written in any
    order, each at most once.

    User variants: `score_mod` and `mask_mod` are single-block regions
    evaluated per (batch `b`, query head `h`, query row `i`, key `j`), like
    FlexAttention's `score_mod` and `mask_mod`. Their block arguments are
    `b, h, i, j : index`, then (score only) the f32 logit `s` after scale,
    soft cap, bias and ALiBi, then one argument per `mod_inputs` tensor (so
    the regions use nothing from above). `score_mod` yields the new f32 logit;
    `mask_mod` yields an `i1`, true = the key may be read, and-ed with the
    structural masks before normalization. Only `arith` and `math` ops,
    `tensor.extract` and `tensor.dim` may appear. Masks built from
    comparisons of affine expressions of the indices (causal, windows,
    prefix-LM, dilations) are classified per tile without evaluating them
    per element; masks that read `mod_inputs` (document ids) are classified
    per tile from the range of the values the tile reads.

    ```mlir
    // Document masking over packed sequences: a query reads keys of its own
    // document only.
    %out = attn.attention q(%q : tensor<1x8x?x64xf32>)
        k(%k : tensor<1x8x?x64xf32>) v(%v : tensor<1x8x?x64xf32>)
        mod_inputs(%doc : tensor<?xi32>)
        mask_mod {
        ^bb0(%b: index, %h: index, %i: index, %j: index, %d: tensor<?xi32>):
          %di = tensor.extract %d[%i] : tensor<?xi32>
          %dj = tensor.extract %d[%j] : tensor<?xi32>
          %same = arith.cmpi eq, %di, %dj : i32
          attn.yield %same : i1
        } -> tensor<1x8x?x64xf32>
    ```

    A row with no allowed key gives `out = 0` and `lse = -inf`. f16 and bf16
    inputs accumulate in f32. See `docs/Semantics.md` for the full contract.

    Paged K/V (vLLM's block tables): with `page_table(%pt : tensor<BxMxi32>)`,
    `k` and `v` are page pools `[P, Hkv, S, D]` (or `[P, S, Hkv, D]` with
    `layout(bnhd)`, vLLM's order) of `P` pages of `S` tokens (`S` static),
    and `kv_len` is required. The logical key `j < kv_len[b]` of batch entry
    `b` is row `j % S` of page `page_table[b, j / S]`; `Nk = M * S`. Table
    entries past the last page a sequence uses are never read; a read entry
    outside `[0, P)` is a run-time error (the kernel returns
    `ATTN_STATUS_INVALID_ARGUMENT` naming the entry; docs/Robustness.md).
    `page_table(...)` and `ragged(...)` may stand anywhere among the other
    modifiers; they print first.

    ```mlir
    %o = attn.attention q(%q : tensor<4x8x1x64xf32>)
        k(%kp : tensor<256x2x16x64xf32>) v(%vp : tensor<256x2x16x64xf32>)
        page_table(%pt : tensor<4x64xi32>) kv_len(%len : tensor<4xi32>)
        causal(bottom_right) -> tensor<4x8x1x64xf32>
    ```

    Ragged batches (FlashAttention's varlen API): with
    `ragged(%cu_q, %cu_k : tensor<?xi32>, tensor<?xi32>)`, q, k, v and out
    hold the tokens of B sequences packed in one batch entry (`B = 1` in the
    types: q `[1, Hq, Tq, Dqk]`), and the `B + 1` non-decreasing offsets say
    which: sequence `b` has query rows `cu_q[b] .. cu_q[b+1]` and keys
    `cu_k[b] .. cu_k[b+1]`, so every sequence has its own `Nq` and `Nk`. Each
    sequence is attended as its own problem: causal, windows and ALiBi on its
    own diagonal (`bottom_right` for chunked prefill). Rows outside every
    sequence give `out = 0`, `lse = -inf`. A ragged batch takes every
    other modifier: `kv_len` has one entry per sequence (the keys of
    sequence `b` it reads, FlashAttention's `seqused_k`); `mask` and `bias`
    are indexed by packed rows (`[1, Hq, Tq, Tk]`); the regions see the
    sequence as `b` and its own `i`, `j`.

    ```mlir
    %o = attn.attention q(%q : tensor<1x8x?x64xf32>)
        k(%k : tensor<1x2x?x64xf32>) v(%v : tensor<1x2x?x64xf32>)
        ragged(%cq, %ck : tensor<9xi32>, tensor<9xi32>) causal(bottom_right)
        -> tensor<1x8x?x64xf32>
    ```

    Chunked prefill over a paged cache: `ragged(%cu_q : tensor<?xi32>)` (no
    key offsets) with `page_table` (one row per sequence) and `kv_len` (one
    entry per sequence, the new tokens included): sequence `b`'s new queries
    read the first `kv_len[b]` tokens of its pages, on the bottom-right
    diagonal `p(i) = i + kv_len[b] - Nq_b` under `causal(bottom_right)`; a
    mask or bias is `[1, Hq, Tq, max_pages * S]`.

    ```mlir
    %o = attn.attention q(%q : tensor<1x8x?x64xf16>)
        k(%kp : tensor<256x2x16x64xf16>) v(%vp : tensor<256x2x16x64xf16>)
        ragged(%cq : tensor<5xi32>) page_table(%pt : tensor<4x64xi32>)
        kv_len(%len : tensor<4xi32>) causal(bottom_right)
        -> tensor<1x8x?x64xf16>
    ```

    Latent attention (DeepSeek's MLA, absorbed form): with `v_from_k(Dv)`,
    V is the first `Dv` columns of K, one cache read twice and never copied:
    `v[b, g, j, :] = k[b, g, j, 0:Dv]`. `v` must then be the same value as
    `k`, `Dv` at most `Dqk`, and out has `Dv` columns.

    ```mlir
    %o = attn.attention q(%q : tensor<1x128x?x576xbf16>)
        k(%c : tensor<1x1x?x576xbf16>) v(%c : tensor<1x1x?x576xbf16>)
        v_from_k(512) scale(0.0625) causal(bottom_right)
        -> tensor<1x128x?x512xbf16>
    ```

    Quantized K/V caches: `k` and `v` of element type `i8`, `f8E4M3FN` or
    `f8E5M2` come with f32 scales, `k_scale(%ks : ...)` and
    `v_scale(%vs : ...)` (required; with `v_from_k` only `k_scale`): the
    value a form reads is `k[...] * k_scale[...]`, dequantized as tiles are
    loaded (no dequantized copy of the cache). A scale tensor is either one
    scale per token and head, K's shape without its last dimension
    (`[B, Hkv, Nk]`, pools `[P, Hkv, S]`; `[B, Nk, Hkv]` / `[P, S, Hkv]`
    with `layout(bnhd)`), or one per page (batch entry, for dense K/V) and
    head, `[P, Hkv]`. Queries and out stay f32, f16 or bf16.

    ```mlir
    %o = attn.attention q(%q : tensor<4x8x1x128xf32>)
        k(%kp : tensor<256x2x16x128xi8>) v(%vp : tensor<256x2x16x128xi8>)
        page_table(%pt : tensor<4x64xi32>) kv_len(%len : tensor<4xi32>)
        k_scale(%ks : tensor<256x2x16xf32>) v_scale(%vs : tensor<256x2xf32>)
        -> tensor<4x8x1x128xf32>
    ```

    Example (GQA with 8 query heads sharing 2 K/V heads, causal, with lse):

    ```mlir
    %out, %lse = attn.attention q(%q : tensor<2x8x128x64xf32>)
        k(%k : tensor<2x2x128x64xf32>) v(%v : tensor<2x2x128x64xf32>)
        causal(bottom_right) window_left(64)
        -> tensor<2x8x128x64xf32>, tensor<2x8x128xf32>
    ```
  }];

  let arguments = !con(
    (ins Attn_FloatTensor:$query, Attn_KvTensor:$key,
         Attn_KvTensor:$value, Optional<Attn_PageTableTensor>:$page_table,
         Optional<Attn_KvLenTensor>:$cu_seqlens_q,
         Optional<Attn_KvLenTensor>:$cu_seqlens_k,
         Optional<Attn_KvScaleTensor>:$k_scale,
         Optional<Attn_KvScaleTensor>:$v_scale),
    Attn_ModifierOperands,
    (ins DefaultValuedAttr<Attn_Layout, "::mlir::attn::Layout::bhnd">:$layout,
         OptionalAttr<I64Attr>:$v_from_k),
    Attn_ModifierAttrs);
  let results = (outs Attn_FloatTensor:$out,
                      Optional<RankedTensorOf<[F32]>>:$lse);

  let regions = Attn_ModifierRegions;

  let assemblyFormat = !strconcat([{
    `q` `(` $query `:` type($query) `)`
    `k` `(` $key `:` type($key) `)`
    `v` `(` $value `:` type($value) `)`
    custom<AttentionModifiers>($page_table, type($page_table), $cu_seqlens_q,
        type($cu_seqlens_q), $cu_seqlens_k, type($cu_seqlens_k), $k_scale,
        type($k_scale), $v_scale, type($v_scale), $layout, $v_from_k,
        }], Attn_ModifierDirectiveArgs, [{)
    attr-dict `->` type($out) (`,` type($lse)^)?
  }]);

  let hasVerifier = 1;

  let extraClassDeclaration = [{
    /// Logical sizes read from the types (ShapedType::kDynamic when dynamic).
    int64_t getBatch();
    int64_t getNumQueryHeads();
    int64_t getNumKvHeads();
    int64_t getQuerySeqLen();
    int64_t getKvSeqLen();
    int64_t getHeadDimQK();
    int64_t getHeadDimV();
    /// Paged K/V: k and v are page pools read through `page_table`.
    bool isPaged() { return static_cast<bool>(getPageTable()); }
    /// Paged K/V: tokens per page (the pools' N dimension) and pool pages.
    int64_t getPageSize();
    int64_t getNumPages();
    /// Quantized K/V: 8-bit elements (i8, fp8) read with k_scale / v_scale.
    bool isQuantized();
    ::mlir::LogicalResult verifyQuantization();
    /// Quantized K/V: V's scales, v_scale, or k_scale under v_from_k.
    ::mlir::Value getValueScale() {
      return getVScale() ? getVScale() : getKScale();
    }
    /// Ragged batches: sequences packed along N with per-sequence offsets.
    bool isRagged() { return static_cast<bool>(getCuSeqlensQ()); }
    /// The number of sequences: B, or a ragged batch's offsets less one
    /// (kDynamic when they are dynamic).
    int64_t getNumSequences();
    ::mlir::LogicalResult verifyRagged();
    ::mlir::LogicalResult verifyPaging(::llvm::ArrayRef<int64_t> k,
                                       ::llvm::ArrayRef<int64_t> v);
    /// The scale to use: the stated one, or 1/sqrt(Dqk) (requires static Dqk);
    /// nullopt when it is read at run time (`scale(%s : tensor<f32>)`).
    std::optional<double> getEffectiveScale();
    /// Logical [B, H, N, D] dimension index `logical` -> physical index.
    int64_t getPhysicalDim(int64_t logical);
    /// Whether query positions are aligned bottom-right
    /// (p(i) = i + kv_len - Nq): from `causal`, else from `align`.
    bool isBottomRightAligned();
    /// The entry blocks of the user's regions, or null when absent.
    ::mlir::Block *getScoreModBlock();
    ::mlir::Block *getMaskModBlock();
    /// Window bounds as the lowerings use them: unset, or at least 2^61
    /// (wider than any tensor, so unbounded; this keeps the bound arithmetic
    /// p + right + 1 from overflowing), give nullopt.
    std::optional<int64_t> getEffectiveWindowLeft();
    std::optional<int64_t> getEffectiveWindowRight();
  }];
}

//===----------------------------------------------------------------------===//
// ProjectedAttentionOp
//===----------------------------------------------------------------------===//

def Attn_ProjectedAttentionOp : Attn_Op<"projected_attention",
    [Pure, AttrSizedOperandSegments, IsolatedFromAbove]> {
  let summary = "attention from token representations: project, split heads, "
                "attend, merge heads, project out";
  let description = [{
    The seed's whole pipeline `X -> Q/K/V -> heads -> attention -> concat ->
    W_O` as one op:

    ```
    Q = xq  Wq : [B, Nq, Hq*Dqk]      K = xkv Wk : [B, Nk, Hkv*Dqk]
    V = xkv Wv : [B, Nk, Hkv*Dv]
    head h of Q is the column block h*Dqk .. (h+1)*Dqk (likewise K, V)
    Z = attention(Q, K, V) with heads merged back : [B, Nq, Hq*Dv]
    result = Z Wo : [B, Nq, D]
    ```

    `xq : [B, Nq, D]`; `xkv : [B, Nk, D]` is optional: without it the op is
    self-attention and K, V come from `xq`. `Wq : [D, Hq*Dqk]`,
    `Wk : [D, Hkv*Dqk]`, `Wv : [D, Hkv*Dv]`, `Wo : [Hq*Dv, D]`. The head counts
    are attributes; `Dqk` and `Dv` follow from the weight shapes. The
    attention modifiers mean exactly what they mean on `attn.attention`.

    Example (the seed's GQA example: D = 512, H = 8 query heads, G = 2 K/V
    heads, causal self-attention):

    ```mlir
    %y = attn.projected_attention x(%x : tensor<2x16x512xf32>)
        wq(%wq : tensor<512x512xf32>) wk(%wk : tensor<512x128xf32>)
        wv(%wv : tensor<512x128xf32>) wo(%wo : tensor<512x512xf32>)
        heads(8, 2) causal(top_left) -> tensor<2x16x512xf32>
    ```
  }];

  let arguments = !con(
    (ins Attn_FloatTensor:$xq, Optional<Attn_FloatTensor>:$xkv,
         Attn_FloatTensor:$wq, Attn_FloatTensor:$wk, Attn_FloatTensor:$wv,
         Attn_FloatTensor:$wo),
    Attn_ModifierOperands,
    (ins ConfinedAttr<I64Attr, [IntPositive]>:$num_query_heads,
         ConfinedAttr<I64Attr, [IntPositive]>:$num_kv_heads),
    Attn_ModifierAttrs);
  let results = (outs Attn_FloatTensor:$result);
  let regions = Attn_ModifierRegions;

  let assemblyFormat = !strconcat([{
    `x` `(` $xq `:` type($xq) `)`
    (`kv_source` `(` $xkv^ `:` type($xkv) `)`)?
    `wq` `(` $wq `:` type($wq) `)`
    `wk` `(` $wk `:` type($wk) `)`
    `wv` `(` $wv `:` type($wv) `)`
    `wo` `(` $wo `:` type($wo) `)`
    `heads` `(` $num_query_heads `,` $num_kv_heads `)`
    custom<Modifiers>(}], Attn_ModifierDirectiveArgs, [{)
    attr-dict `->` type($result)
  }]);

  let hasVerifier = 1;

  let extraClassDeclaration = [{
    /// The value K and V are projected from: xkv, or xq for self-attention.
    ::mlir::Value getKvSource() { return getXkv() ? getXkv() : getXq(); }
    bool isBottomRightAligned();
  }];
}

//===----------------------------------------------------------------------===//
// YieldOp
//===----------------------------------------------------------------------===//

def Attn_YieldOp : Attn_Op<"yield", [Pure, ReturnLike, Terminator,
    HasParent<"AttentionOp, ProjectedAttentionOp">]> {
  let summary = "the result of a score_mod or mask_mod region";
  let description = [{
    Ends a `score_mod` region with the new f32 logit, or a `mask_mod` region
    with an `i1` (true = the key may be read).

    ```mlir
    attn.yield %allowed : i1
    ```
  }];
  let arguments = (ins AnyType:$value);
  let assemblyFormat = "$value attr-dict `:` type($value)";
}

//===----------------------------------------------------------------------===//
// KvCacheAppendOp
//===----------------------------------------------------------------------===//

def Attn_KvCacheAppendOp : Attn_Op<"kv_cache_append", [Pure,
    AttrSizedOperandSegments, AllTypesMatch<["cache", "result"]>]> {
  let summary = "write new K or V rows into a KV cache at per-batch positions";
  let description = [{
    `result` is `cache` with `update[b, :, 0 : Nnew, :]` written at rows
    `positions[b] .. positions[b] + Nnew` of batch entry `b` (logical
    `[B, H, N, D]` order; `layout(bnhd)` stores both as `[B, N, H, D]`).
    `positions` is usually the valid length before the append (`kv_len`), so
    a decode step is `kv_cache_append` of K and V followed by
    `attn.attention ... kv_len(kv_len + Nnew) causal(bottom_right)`.

    The CPU lowering updates the cache buffer in place when the caller gives
    up the input tensor (bufferization decides); every position is checked
    before the first write: a write past the cache (`positions[b] < 0` or
    `positions[b] + Nnew > Nmax`) is a run-time error (a status and a message
    naming the position) and nothing is written.

    ```mlir
    %k2 = attn.kv_cache_append cache(%kc : tensor<8x8x4096x128xf32>)
        update(%kn : tensor<8x8x1x128xf32>) at(%len : tensor<8xi32>)
        -> tensor<8x8x4096x128xf32>
    ```

    Paged caches: with `page_table(%pt : tensor<BxMxi32>)` the cache is a
    page pool `[P, H, S, D]` (`[P, S, H, D]` with `layout(bnhd)`) as on
    `attn.attention`, and token `t` of batch entry `b` goes to row
    `(positions[b] + t) % S` of page `page_table[b, (positions[b] + t) / S]`.
    The update is `[B, H, Nnew, D]`. Writes go one token at a time in batch
    order. Run-time checks stop the program with a message, never writing out
    of bounds: a position past the page table
    (`positions[b] + Nnew > M * S`) or a page index outside `[0, P)`.

    ```mlir
    %kp2 = attn.kv_cache_append cache(%kp : tensor<256x2x16x64xf32>)
        update(%kn : tensor<4x2x1x64xf32>) at(%len : tensor<4xi32>)
        page_table(%pt : tensor<4x64xi32>) -> tensor<256x2x16x64xf32>
    ```

    Quantized caches (`i8`, `f8E4M3FN`, `f8E5M2`, as `attn.attention` reads
    them) take the cache's f32 `scales(...)` and return them updated as a
    second result; the update stays f32, f16 or bf16. With one scale per
    token and head (the cache's shape without D) each new row gets
    `scale = max_d |x| / qmax` (qmax 127, 448 or 57344; 1 for a zero row)
    and its values `x / scale` rounded to nearest even (int8 clamped to
    [-127, 127]). With one scale per page (batch entry) and head the scale
    is the caller's and stays: values are `x / scale` rounded, saturated to
    the type's largest finite value.

    ```mlir
    %kp2, %ks2 = attn.kv_cache_append cache(%kp : tensor<256x2x16x64xi8>)
        update(%kn : tensor<4x2x1x64xf32>) at(%len : tensor<4xi32>)
        page_table(%pt : tensor<4x64xi32>) scales(%ks : tensor<256x2x16xf32>)
        -> tensor<256x2x16x64xi8>, tensor<256x2x16xf32>
    ```
  }];
  let arguments = (ins Attn_KvTensor:$cache, Attn_FloatTensor:$update,
                       Attn_KvLenTensor:$positions,
                       Optional<Attn_PageTableTensor>:$page_table,
                       Optional<Attn_KvScaleTensor>:$scales,
                       DefaultValuedAttr<Attn_Layout,
                           "::mlir::attn::Layout::bhnd">:$layout);
  let results = (outs Attn_KvTensor:$result,
                      Optional<Attn_KvScaleTensor>:$new_scales);
  let assemblyFormat = [{
    `cache` `(` $cache `:` type($cache) `)`
    `update` `(` $update `:` type($update) `)`
    `at` `(` $positions `:` type($positions) `)`
    (`page_table` `(` $page_table^ `:` type($page_table) `)`)?
    (`scales` `(` $scales^ `:` type($scales) `)`)?
    (`layout` `(` $layout^ `)`)? attr-dict `->` type($result)
    (`,` type($new_scales)^)?
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// CombineOp
//===----------------------------------------------------------------------===//

def Attn_CombineOp : Attn_Op<"combine", [Pure,
    AllTypesMatch<["out_a", "out_b", "out"]>,
    AllTypesMatch<["lse_a", "lse_b", "lse"]>]> {
  let summary = "merge softmax attention over two disjoint key segments";
  let description = [{
    Given the `out` and `lse` results of softmax `attn.attention` over two
    disjoint sets of keys (two KV segments, two chunks of a cache), returns
    exactly what attention over their union gives:

    ```
    M   = max(lse_a, lse_b)
    w_x = exp(lse_x - M)            (0 when lse_x = -inf)
    out = (w_a out_a + w_b out_b) / (w_a + w_b)    (0 when both are -inf)
    lse = M + log(w_a + w_b)                        (-inf when both are -inf)
    ```

    `out` is `[B, Hq, Nq, Dv]` in `layout` (default `bhnd`), `lse` is
    `[B, Hq, Nq]` f32; arithmetic is in f32.

    ```mlir
    %o, %l = attn.combine a(%oa, %la : tensor<1x8x16x64xf32>, tensor<1x8x16xf32>)
        b(%ob, %lb : tensor<1x8x16x64xf32>, tensor<1x8x16xf32>)
        -> tensor<1x8x16x64xf32>, tensor<1x8x16xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$out_a, RankedTensorOf<[F32]>:$lse_a,
                       Attn_FloatTensor:$out_b, RankedTensorOf<[F32]>:$lse_b,
                       DefaultValuedAttr<Attn_Layout,
                           "::mlir::attn::Layout::bhnd">:$layout);
  let results = (outs Attn_FloatTensor:$out, RankedTensorOf<[F32]>:$lse);
  let assemblyFormat = [{
    `a` `(` $out_a `,` $lse_a `:` type($out_a) `,` type($lse_a) `)`
    `b` `(` $out_b `,` $lse_b `:` type($out_b) `,` type($lse_b) `)`
    (`layout` `(` $layout^ `)`)? attr-dict `->` type($out) `,` type($lse)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// GridWorkOp
//===----------------------------------------------------------------------===//

def Attn_GridChoice : Resource<"::mlir::attn::GridChoiceResource">;

def Attn_GridWorkOp : Attn_Op<"grid_work",
    [MemoryEffects<[MemWrite<Attn_GridChoice>]>]> {
  let summary = "how much work the enclosing grid does, for the thread choice";
  let description = [{
    Placed by the CPU lowerings in the body of the `scf.forall` that is a
    kernel's grid of work: `work` is the whole grid's number of
    multiply-adds in `Q K^T` and `P V` at run time, an upper bound (masks
    ignored). `attn-forall-to-parallel-or-sequential` runs the grid on
    several threads only where `work` is at least its `min-parallel-work`;
    below that, starting and joining the threads costs more than they save
    (a decode step over a few hundred cached keys, for example). A grid
    without one runs in parallel whenever several threads are available.

    In an `scf.forall`, `work` must be defined above it (the choice is made
    before the grid runs). It has no meaning elsewhere: canonicalization
    erases it outside an `scf.forall` (after the grid became a loop nest).
    It stays otherwise: its one effect, a write of the grid's thread choice
    (a resource of its own, no memory), keeps it from being dead.

    ```mlir
    scf.forall (%b, %g, %t) in (%nb, %ng, %nt) shared_outs(%o = %init) {
      attn.grid_work %work
      ...
    }
    ```
  }];
  let arguments = (ins Index:$work);
  let assemblyFormat = "$work attr-dict";
  let hasCanonicalizeMethod = 1;
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// GridThreadsOp
//===----------------------------------------------------------------------===//

def Attn_GridThreadsOp : Attn_Op<"grid_threads",
    [MemoryEffects<[MemRead<Attn_GridChoice>]>]> {
  let summary = "the threads a grid of the given work would run on";
  let description = [{
    Placed by the CPU lowerings before a kernel's grid (an `scf.forall`
    whose `attn.grid_work` is `work`) where the grid's shape depends on the
    threads that will run it: the decode form chooses its number of
    split-KV chunks from it at run time (`splits=-1`).

    `attn-forall-to-parallel-or-sequential` replaces it by the thread count
    the grid gets: `omp_get_max_threads()` where the grid runs in parallel
    (several threads, a parallel region may open here, and `work` is at
    least `min-parallel-work`), 1 where it runs on the calling thread
    (inside another grid, in a serial build, or below the threshold).

    It reads the thread choice (the resource `attn.grid_work` writes, no
    memory): it is not merged or moved across another grid's marker or a
    call (which may set the thread count), and is erased when unused.

    ```mlir
    %threads = attn.grid_threads %work
    %splits = ... // from %threads and the grid's other dimensions
    scf.forall (%b, %g, %t, %s) in (%nb, %ng, %nt, %splits) ... {
      attn.grid_work %work
      ...
    }
    ```
  }];
  let arguments = (ins Index:$work);
  let results = (outs Index:$threads);
  let assemblyFormat = "$work attr-dict";
}

#endif // ATTN_IR_ATTNOPS_TD
