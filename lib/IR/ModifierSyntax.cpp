//===- ModifierSyntax.cpp - custom syntax of the attention modifiers ------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "ModifierSyntax.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <tuple>
#include <type_traits>

using namespace mlir;
using namespace mlir::attn;

//===----------------------------------------------------------------------===//
// Modifier syntax: any order, each at most once
//===----------------------------------------------------------------------===//

namespace {
/// The modifier operands and attributes of either op, as the custom
/// directives bind them.
struct ModifierSlots {
  using Operand = std::optional<OpAsmParser::UnresolvedOperand>;
  Operand &kvLen, &kvStart, &keyMask, &mask, &bias, &alibi, &sink,
      &runtimeScale;
  Type &kvLenType, &kvStartType, &keyMaskType, &maskType, &biasType, &alibiType,
      &sinkType, &runtimeScaleType;
  SmallVectorImpl<OpAsmParser::UnresolvedOperand> &modInputs;
  SmallVectorImpl<Type> &modInputTypes;
  CausalAlignAttr &causal, &align;
  IntegerAttr &windowLeft, &windowRight;
  FloatAttr &scale, &softcap;
  NormalizationAttr &norm;
  Region &scoreMod, &maskMod;
  LayoutAttr *layout;
  /// attn.attention only (null for the other ops).
  Operand *pageTable = nullptr, *cuQ = nullptr, *cuK = nullptr;
  Type *pageTableType = nullptr, *cuQType = nullptr, *cuKType = nullptr;
  Operand *kScale = nullptr, *vScale = nullptr;
  Type *kScaleType = nullptr, *vScaleType = nullptr;
  IntegerAttr *vFromK = nullptr;
};
} // namespace

static constexpr StringLiteral kModifierNames[] = {
    "page_table", "ragged",      "layout",       "v_from_k",   "k_scale",
    "v_scale",    "kv_len",      "kv_start",     "key_mask",   "mask",
    "bias",       "alibi",       "sink",         "mod_inputs", "causal",
    "align",      "window_left", "window_right", "scale",      "softcap",
    "norm",       "score_mod",   "mask_mod"};

/// Whether the op whose slots these are takes modifier `name`.
static bool takesModifier(const ModifierSlots &s, StringRef name) {
  if (name == "layout")
    return s.layout;
  if (name == "page_table" || name == "ragged")
    return s.pageTable;
  if (name == "v_from_k")
    return s.vFromK;
  if (name == "k_scale" || name == "v_scale")
    return s.kScale;
  return llvm::is_contained(kModifierNames, name);
}

static ParseResult parseModifierList(OpAsmParser &p, ModifierSlots s) {
  llvm::SmallDenseSet<StringRef, 16> seen;
  MLIRContext *ctx = p.getContext();
  Builder b(ctx);
  auto operand = [&](ModifierSlots::Operand &v, Type &t) -> ParseResult {
    OpAsmParser::UnresolvedOperand u;
    if (p.parseLParen() || p.parseOperand(u) || p.parseColonType(t) ||
        p.parseRParen())
      return failure();
    v = u;
    return success();
  };
  auto align = [&](CausalAlignAttr &attr, StringRef what) -> ParseResult {
    StringRef kw;
    SMLoc loc = p.getCurrentLocation();
    if (p.parseLParen() || p.parseKeyword(&kw))
      return failure();
    std::optional<CausalAlign> a = symbolizeCausalAlign(kw);
    if (!a)
      return p.emitError(loc) << "expected top_left or bottom_right in " << what
                              << "(...); got '" << kw << "'";
    attr = CausalAlignAttr::get(ctx, *a);
    return p.parseRParen();
  };
  auto typedAttr = [&](auto &attr, Type type) -> ParseResult {
    using AttrT = std::remove_reference_t<decltype(attr)>;
    return failure(p.parseLParen() || p.parseAttribute<AttrT>(attr, type) ||
                   p.parseRParen());
  };
  while (true) {
    SMLoc loc = p.getCurrentLocation();
    StringRef kw;
    if (failed(p.parseOptionalKeyword(&kw)))
      return success();
    if (!takesModifier(s, kw)) {
      std::string expected;
      llvm::raw_string_ostream os(expected);
      llvm::interleaveComma(
          llvm::make_filter_range(
              kModifierNames, [&](StringRef n) { return takesModifier(s, n); }),
          os);
      return p.emitError(loc)
             << "unknown modifier '" << kw << "'; expected one of " << expected
             << ", or '->'";
    }
    if (!seen.insert(kw).second)
      return p.emitError(loc) << "modifier '" << kw << "' is given twice";
    ParseResult r = success();
    if (kw == "page_table") {
      r = operand(*s.pageTable, *s.pageTableType);
    } else if (kw == "ragged") {
      // `ragged(%cu_q, %cu_k : tq, tk)`, or `ragged(%cu_q : tq)` over a
      // paged cache (the keys come from the page table and kv_len).
      OpAsmParser::UnresolvedOperand q, k;
      bool withK = false;
      r = failure(p.parseLParen() || p.parseOperand(q));
      if (succeeded(r) && succeeded(p.parseOptionalComma())) {
        withK = true;
        r = p.parseOperand(k);
      }
      if (succeeded(r))
        r = p.parseColonType(*s.cuQType);
      if (succeeded(r) && withK)
        r = failure(p.parseComma() || p.parseType(*s.cuKType));
      if (succeeded(r))
        r = p.parseRParen();
      *s.cuQ = q;
      if (withK)
        *s.cuK = k;
    } else if (kw == "layout") {
      StringRef name;
      SMLoc at = p.getCurrentLocation();
      if (p.parseLParen() || p.parseKeyword(&name))
        return failure();
      std::optional<Layout> l = symbolizeLayout(name);
      if (!l)
        return p.emitError(at)
               << "expected bhnd or bnhd in layout(...); got '" << name << "'";
      *s.layout = LayoutAttr::get(ctx, *l);
      r = p.parseRParen();
    } else if (kw == "v_from_k") {
      r = typedAttr(*s.vFromK, b.getI64Type());
    } else if (kw == "k_scale") {
      r = operand(*s.kScale, *s.kScaleType);
    } else if (kw == "v_scale") {
      r = operand(*s.vScale, *s.vScaleType);
    } else if (kw == "kv_len") {
      r = operand(s.kvLen, s.kvLenType);
    } else if (kw == "kv_start") {
      r = operand(s.kvStart, s.kvStartType);
    } else if (kw == "key_mask") {
      r = operand(s.keyMask, s.keyMaskType);
    } else if (kw == "mask") {
      r = operand(s.mask, s.maskType);
    } else if (kw == "bias") {
      r = operand(s.bias, s.biasType);
    } else if (kw == "alibi") {
      r = operand(s.alibi, s.alibiType);
    } else if (kw == "sink") {
      r = operand(s.sink, s.sinkType);
    } else if (kw == "mod_inputs") {
      r = failure(p.parseLParen() || p.parseOperandList(s.modInputs) ||
                  p.parseColonTypeList(s.modInputTypes) || p.parseRParen());
    } else if (kw == "causal") {
      r = align(s.causal, "causal");
    } else if (kw == "align") {
      r = align(s.align, "align");
    } else if (kw == "window_left") {
      r = typedAttr(s.windowLeft, b.getI64Type());
    } else if (kw == "window_right") {
      r = typedAttr(s.windowRight, b.getI64Type());
    } else if (kw == "scale") {
      // `scale(0.125)`, or `scale(%s : tensor<f32>)` read at run time.
      OpAsmParser::UnresolvedOperand u;
      if (p.parseLParen())
        return failure();
      OptionalParseResult isOperand = p.parseOptionalOperand(u);
      if (isOperand.has_value()) {
        r = failure(failed(*isOperand) ||
                    p.parseColonType(s.runtimeScaleType) || p.parseRParen());
        s.runtimeScale = u;
      } else {
        r = failure(p.parseAttribute(s.scale, b.getF64Type()) ||
                    p.parseRParen());
      }
    } else if (kw == "softcap") {
      r = typedAttr(s.softcap, b.getF64Type());
    } else if (kw == "norm") {
      StringRef name;
      SMLoc at = p.getCurrentLocation();
      if (p.parseLParen() || p.parseKeyword(&name))
        return failure();
      std::optional<Normalization> n = symbolizeNormalization(name);
      if (!n)
        return p.emitError(at) << "expected softmax or sigmoid in norm(...); "
                                  "got '"
                               << name << "'";
      s.norm = NormalizationAttr::get(ctx, *n);
      r = p.parseRParen();
    } else if (kw == "score_mod") {
      r = p.parseRegion(s.scoreMod, /*arguments=*/{});
    } else if (kw == "mask_mod") {
      r = p.parseRegion(s.maskMod, /*arguments=*/{});
    }
    if (failed(r))
      return failure();
  }
}

static void printModifierList(
    OpAsmPrinter &p, Operation *op, Value kvLen, Value kvStart, Value keyMask,
    Value mask, Value bias, Value alibi, Value sink, Value runtimeScale,
    OperandRange modInputs, CausalAlignAttr causal, CausalAlignAttr align,
    IntegerAttr windowLeft, IntegerAttr windowRight, FloatAttr scale,
    FloatAttr softcap, NormalizationAttr norm, Region &scoreMod,
    Region &maskMod, LayoutAttr layout, IntegerAttr vFromK) {
  if (layout && layout.getValue() != Layout::bhnd)
    p << " layout(" << stringifyLayout(layout.getValue()) << ")";
  if (vFromK)
    p << " v_from_k(" << vFromK.getInt() << ")";
  for (auto [kw, v] : {std::pair<StringRef, Value>{"kv_len", kvLen},
                       {"kv_start", kvStart},
                       {"key_mask", keyMask},
                       {"mask", mask},
                       {"bias", bias},
                       {"alibi", alibi},
                       {"sink", sink}})
    if (v)
      p << " " << kw << "(" << v << " : " << v.getType() << ")";
  if (!modInputs.empty()) {
    p << " mod_inputs(" << modInputs << " : ";
    llvm::interleaveComma(modInputs.getTypes(), p);
    p << ")";
  }
  if (causal)
    p << " causal(" << stringifyCausalAlign(causal.getValue()) << ")";
  if (align)
    p << " align(" << stringifyCausalAlign(align.getValue()) << ")";
  for (auto [kw, a] :
       {std::pair<StringRef, Attribute>{"window_left", windowLeft},
        {"window_right", windowRight},
        {"scale", scale},
        {"softcap", softcap}}) {
    if (!a)
      continue;
    p << " " << kw << "(";
    p.printAttributeWithoutType(a);
    p << ")";
  }
  if (runtimeScale)
    p << " scale(" << runtimeScale << " : " << runtimeScale.getType() << ")";
  if (norm && norm.getValue() != Normalization::softmax)
    p << " norm(" << stringifyNormalization(norm.getValue()) << ")";
  for (auto [kw, r] : {std::pair<StringRef, Region *>{"score_mod", &scoreMod},
                       {"mask_mod", &maskMod}}) {
    if (r->empty())
      continue;
    p << " " << kw << " ";
    p.printRegion(*r, /*printEntryBlockArgs=*/true);
  }
}

#define ATTN_MODIFIER_PARSE_SLOTS(LAYOUT)                                      \
  ModifierSlots {                                                              \
    kvLen, kvStart, keyMask, mask, bias, alibi, sink, runtimeScale, kvLenType, \
        kvStartType, keyMaskType, maskType, biasType, alibiType, sinkType,     \
        runtimeScaleType, modInputs, modInputTypes, causal, align, windowLeft, \
        windowRight, scale, softcap, norm, scoreMod, maskMod, LAYOUT           \
  }
#define ATTN_MODIFIER_PRINT_ARGS                                               \
  kvLen, kvStart, keyMask, mask, bias, alibi, sink, runtimeScale, modInputs,   \
      causal, align, windowLeft, windowRight, scale, softcap, norm, scoreMod,  \
      maskMod

ParseResult mlir::attn::parseAttentionModifiers(
    OpAsmParser &p, std::optional<OpAsmParser::UnresolvedOperand> &pageTable,
    Type &pageTableType, std::optional<OpAsmParser::UnresolvedOperand> &cuQ,
    Type &cuQType, std::optional<OpAsmParser::UnresolvedOperand> &cuK,
    Type &cuKType, std::optional<OpAsmParser::UnresolvedOperand> &kScale,
    Type &kScaleType, std::optional<OpAsmParser::UnresolvedOperand> &vScale,
    Type &vScaleType, LayoutAttr &layout, IntegerAttr &vFromK,
    ATTN_MODIFIER_PARSE_PARAMS) {
  ModifierSlots s = ATTN_MODIFIER_PARSE_SLOTS(&layout);
  s.kScale = &kScale;
  s.kScaleType = &kScaleType;
  s.vScale = &vScale;
  s.vScaleType = &vScaleType;
  s.vFromK = &vFromK;
  s.pageTable = &pageTable;
  s.pageTableType = &pageTableType;
  s.cuQ = &cuQ;
  s.cuQType = &cuQType;
  s.cuK = &cuK;
  s.cuKType = &cuKType;
  return parseModifierList(p, s);
}
ParseResult mlir::attn::parseModifiers(OpAsmParser &p,
                                       ATTN_MODIFIER_PARSE_PARAMS) {
  return parseModifierList(p, ATTN_MODIFIER_PARSE_SLOTS(nullptr));
}
void mlir::attn::printAttentionModifiers(
    OpAsmPrinter &p, Operation *op, Value pageTable, Type pageTableType,
    Value cuQ, Type cuQType, Value cuK, Type cuKType, Value kScale,
    Type kScaleType, Value vScale, Type vScaleType, LayoutAttr layout,
    IntegerAttr vFromK, ATTN_MODIFIER_PRINT_PARAMS) {
  // Printed first, where the op's canonical form has always had them.
  if (pageTable)
    p << " page_table(" << pageTable << " : " << pageTableType << ")";
  if (cuQ && cuK)
    p << " ragged(" << cuQ << ", " << cuK << " : " << cuQType << ", " << cuKType
      << ")";
  else if (cuQ)
    p << " ragged(" << cuQ << " : " << cuQType << ")";
  for (auto [kw, v, t] :
       {std::tuple<StringRef, Value, Type>{"k_scale", kScale, kScaleType},
        {"v_scale", vScale, vScaleType}})
    if (v)
      p << " " << kw << "(" << v << " : " << t << ")";
  printModifierList(p, op, ATTN_MODIFIER_PRINT_ARGS, layout, vFromK);
}
void mlir::attn::printModifiers(OpAsmPrinter &p, Operation *op,
                                ATTN_MODIFIER_PRINT_PARAMS) {
  printModifierList(p, op, ATTN_MODIFIER_PRINT_ARGS, LayoutAttr(),
                    IntegerAttr());
}
