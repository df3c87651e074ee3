//===- Passes.td - attn conversion passes ------------------*- tablegen -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_PASSES_TD
#define ATTN_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertAttnToLinalgNaive : Pass<"convert-attn-to-linalg-naive"> {
  let summary = "Lower attn.attention to the naive form: materialized scores";
  let description = [{
    Lowers each `attn.attention` to `linalg.generic` ops on tensors, as the
    seed draws it:

    1. `S = q k^T` with f32 accumulation into a `[B, Hkv, R, Nq, Nk]` score
       tensor (the naive form materializes it);
    2. one elementwise op applies scale, soft cap, bias, ALiBi and writes
       `-inf` where a key may not be read;
    3. row max `m`, `P = exp(S - m)` (with `m` taken as 0 for rows whose max
       is `-inf`), row sum `l`;
    4. `O = P V` in f32, then `out = l == 0 ? 0 : O / l`, `lse = m + log(l)`
       (`-inf` for empty rows).

    Head grouping is a read pattern: `q`, `out` and head-indexed masks are
    reshaped (no copy) from `Hq` to `[Hkv, R]`, and `k`/`v` are indexed by
    `g` only, so no K/V copy per query head is ever built.

    Example:

    ```mlir
    %o = attn.attention q(%q : tensor<1x4x8x16xf32>)
        k(%k : tensor<1x2x8x16xf32>) v(%v : tensor<1x2x8x16xf32>)
        causal(top_left) -> tensor<1x4x8x16xf32>
    ```

    becomes a `tensor.expand_shape` of `q` to `1x2x2x8x16`, six
    `linalg.generic`s over a `tensor<1x2x2x8x8xf32>` score tensor, and a
    `tensor.collapse_shape` of the result.
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect"
  ];
}

#endif // ATTN_CONVERSION_PASSES_TD
