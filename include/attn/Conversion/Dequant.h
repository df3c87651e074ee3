//===- Dequant.h - reading quantized K/V caches -----------------*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// Quantized K/V (`k_scale(...)` / `v_scale(...)` on attn.attention): k and v
// hold i8, f8E4M3FN or f8E5M2 values and the value every form reads is
// `k[...] * k_scale[...]` in f32. These helpers decode the 8-bit elements
// (scalars or vectors; fp8 through f16 bit patterns, so no target needs fp8
// instructions) and locate a row's scale.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_DEQUANT_H
#define ATTN_CONVERSION_DEQUANT_H

#include "attn/IR/AttnOps.h"

#include "mlir/IR/Builders.h"

#include <utility>

namespace mlir {
namespace attn {

/// `raw` (an i8, f8E4M3FN or f8E5M2 scalar or vector) as f32 (same shape):
/// integers exactly, fp8 values exactly (NaN stays NaN, e5m2's inf stays
/// inf).
Value decodeQuantized(OpBuilder &b, Location loc, Value raw);

/// decodeQuantized without its last multiplication: (x, c) with the value
/// x * c (c = 2^8 for e4m3, else 1), for callers that fold c into a scale.
std::pair<Value, double> decodeQuantizedUnscaled(OpBuilder &b, Location loc,
                                                 Value raw);

/// The largest finite value of a quantized element type (127 for i8: the
/// symmetric range), the `qmax` a per-token scale divides the row's
/// largest magnitude by.
double quantizedMax(Type t);

/// `y` (an f32 scalar, already divided by its scale) as an element of the
/// quantized type `t`: rounded to nearest even, saturated to +-quantizedMax
/// (int8 to [-127, 127]); NaN stays NaN for fp8 and is 0 for int8.
Value encodeQuantized(OpBuilder &b, Location loc, Value y, Type t);

/// The indices of the scale of the D-row at (`block`, `head`, `row`) of a
/// cache (block: batch entry or pool page; row: token within it) in
/// `scale`, which holds one scale per token and head (K's shape without D,
/// in `layout`) or one per block and head ([P, Hkv]).
SmallVector<Value> scaleIndex(Value scale, Layout layout, Value block,
                              Value head, Value row);

/// The whole cache `kv` dequantized into an f32 tensor of its shape (the
/// naive form, which materializes every intermediate anyway).
Value dequantizeTensor(OpBuilder &b, Location loc, Value kv, Value scale,
                       Layout layout);

} // namespace attn
} // namespace mlir

#endif // ATTN_CONVERSION_DEQUANT_H
