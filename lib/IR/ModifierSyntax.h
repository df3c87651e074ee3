//===- ModifierSyntax.h - custom syntax of the attention modifiers -*- C++
//-*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// The custom directives `custom<AttentionModifiers>` and `custom<Modifiers>`
// of attn.attention and attn.projected_attention (ModifierSyntax.cpp):
// modifiers in any order, each at most once.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_IR_MODIFIERSYNTAX_H
#define ATTN_LIB_IR_MODIFIERSYNTAX_H

#include "attn/IR/AttnOps.h"

#include "mlir/IR/OpImplementation.h"

#include <optional>

namespace mlir {
namespace attn {

#define ATTN_MODIFIER_PARSE_PARAMS                                             \
  std::optional<OpAsmParser::UnresolvedOperand> &kvLen, Type &kvLenType,       \
      std::optional<OpAsmParser::UnresolvedOperand> &kvStart,                  \
      Type &kvStartType,                                                       \
      std::optional<OpAsmParser::UnresolvedOperand> &keyMask,                  \
      Type &keyMaskType, std::optional<OpAsmParser::UnresolvedOperand> &mask,  \
      Type &maskType, std::optional<OpAsmParser::UnresolvedOperand> &bias,     \
      Type &biasType, std::optional<OpAsmParser::UnresolvedOperand> &alibi,    \
      Type &alibiType, std::optional<OpAsmParser::UnresolvedOperand> &sink,    \
      Type &sinkType,                                                          \
      std::optional<OpAsmParser::UnresolvedOperand> &runtimeScale,             \
      Type &runtimeScaleType,                                                  \
      SmallVectorImpl<OpAsmParser::UnresolvedOperand> &modInputs,              \
      SmallVectorImpl<Type> &modInputTypes, CausalAlignAttr &causal,           \
      CausalAlignAttr &align, IntegerAttr &windowLeft,                         \
      IntegerAttr &windowRight, FloatAttr &scale, FloatAttr &softcap,          \
      NormalizationAttr &norm, Region &scoreMod, Region &maskMod
#define ATTN_MODIFIER_PRINT_PARAMS                                             \
  Value kvLen, Type, Value kvStart, Type, Value keyMask, Type, Value mask,     \
      Type, Value bias, Type, Value alibi, Type, Value sink, Type,             \
      Value runtimeScale, Type, OperandRange modInputs, TypeRange,             \
      CausalAlignAttr causal, CausalAlignAttr align, IntegerAttr windowLeft,   \
      IntegerAttr windowRight, FloatAttr scale, FloatAttr softcap,             \
      NormalizationAttr norm, Region &scoreMod, Region &maskMod

/// attn.attention's modifiers also take `page_table(...)`, `ragged(...)`,
/// `layout(...)`, `v_from_k(...)`, `k_scale(...)` and `v_scale(...)`, anywhere
/// among the others.
ParseResult parseAttentionModifiers(
    OpAsmParser &p, std::optional<OpAsmParser::UnresolvedOperand> &pageTable,
    Type &pageTableType, std::optional<OpAsmParser::UnresolvedOperand> &cuQ,
    Type &cuQType, std::optional<OpAsmParser::UnresolvedOperand> &cuK,
    Type &cuKType, std::optional<OpAsmParser::UnresolvedOperand> &kScale,
    Type &kScaleType, std::optional<OpAsmParser::UnresolvedOperand> &vScale,
    Type &vScaleType, LayoutAttr &layout, IntegerAttr &vFromK,
    ATTN_MODIFIER_PARSE_PARAMS);
ParseResult parseModifiers(OpAsmParser &p, ATTN_MODIFIER_PARSE_PARAMS);
void printAttentionModifiers(OpAsmPrinter &p, Operation *op, Value pageTable,
                             Type pageTableType, Value cuQ, Type cuQType,
                             Value cuK, Type cuKType, Value kScale,
                             Type kScaleType, Value vScale, Type vScaleType,
                             LayoutAttr layout, IntegerAttr vFromK,
                             ATTN_MODIFIER_PRINT_PARAMS);
void printModifiers(OpAsmPrinter &p, Operation *op, ATTN_MODIFIER_PRINT_PARAMS);

} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_IR_MODIFIERSYNTAX_H
