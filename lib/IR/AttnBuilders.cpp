//===- AttnBuilders.cpp - C++ API to build attn ops -----------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/IR/AttnBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

using namespace mlir;
using namespace mlir::attn;

static constexpr int64_t kDyn = ShapedType::kDynamic;

/// The ranked tensor type of `v`, or null when `v` is null or not one.
static RankedTensorType rankedOf(Value v) {
  if (!v)
    return nullptr;
  return dyn_cast<RankedTensorType>(v.getType());
}

/// Logical [B, H, N, D] sizes of `v` stored in `layout`, or none when `v` is
/// not a rank-4 ranked tensor.
static std::optional<SmallVector<int64_t, 4>> logicalSizes(Value v,
                                                           Layout layout) {
  RankedTensorType type = rankedOf(v);
  if (!type || type.getRank() != 4)
    return std::nullopt;
  ArrayRef<int64_t> shape = type.getShape();
  if (layout == Layout::bhnd)
    return SmallVector<int64_t, 4>(shape.begin(), shape.end());
  return SmallVector<int64_t, 4>{shape[0], shape[2], shape[1], shape[3]};
}

/// The first static size among `sizes`, or dynamic.
static int64_t firstStatic(ArrayRef<int64_t> sizes) {
  for (int64_t s : sizes)
    if (s != kDyn)
      return s;
  return kDyn;
}

/// Dimension `i` of `v`'s type when `v` is a ranked tensor of rank `rank`.
static int64_t dimIfRank(Value v, int64_t rank, int64_t i) {
  RankedTensorType type = rankedOf(v);
  if (!type || type.getRank() != rank)
    return kDyn;
  return type.getDimSize(i);
}

/// Batch size: the first static one among q, k and v.
static int64_t inferBatch(Value q, Value k, Value v) {
  return firstStatic(
      {dimIfRank(q, 4, 0), dimIfRank(k, 4, 0), dimIfRank(v, 4, 0)});
}

Type mlir::attn::inferAttentionOutType(Value q, Value k, Value v,
                                       Layout layout) {
  auto qs = logicalSizes(q, layout);
  auto vs = logicalSizes(v, layout);
  if (!qs || !vs)
    return q.getType();
  SmallVector<int64_t, 4> logical = {inferBatch(q, k, v), (*qs)[1], (*qs)[2],
                                     (*vs)[3]};
  SmallVector<int64_t, 4> physical = logical;
  if (layout == Layout::bnhd)
    std::swap(physical[1], physical[2]);
  return RankedTensorType::get(physical, rankedOf(q).getElementType());
}

RankedTensorType mlir::attn::inferAttentionLseType(Value q, Value k, Value v,
                                                   Layout layout) {
  Type f32 = Float32Type::get(q.getContext());
  auto qs = logicalSizes(q, layout);
  if (!qs)
    return RankedTensorType::get({kDyn, kDyn, kDyn}, f32);
  return RankedTensorType::get({inferBatch(q, k, v), (*qs)[1], (*qs)[2]}, f32);
}

namespace {
/// The modifier attributes, made once for either op.
struct ModifierAttrs {
  CausalAlignAttr causal, align;
  IntegerAttr windowLeft, windowRight;
  FloatAttr scale, softcap;
  NormalizationAttr norm;

  ModifierAttrs(OpBuilder &b, const AttentionModifiers &m) {
    MLIRContext *ctx = b.getContext();
    if (m.causal)
      causal = CausalAlignAttr::get(ctx, *m.causal);
    if (m.align)
      align = CausalAlignAttr::get(ctx, *m.align);
    if (m.windowLeft)
      windowLeft = b.getI64IntegerAttr(*m.windowLeft);
    if (m.windowRight)
      windowRight = b.getI64IntegerAttr(*m.windowRight);
    if (m.scale)
      scale = b.getF64FloatAttr(*m.scale);
    if (m.softcap)
      softcap = b.getF64FloatAttr(*m.softcap);
    norm = NormalizationAttr::get(ctx, m.norm);
  }
};
} // namespace

AttentionOp mlir::attn::buildAttention(OpBuilder &builder, Location loc,
                                       Value q, Value k, Value v,
                                       const AttentionConfig &config) {
  // Paged k and v are page pools: the batch size comes from q alone.
  Value kb = config.pageTable ? q : k, vb = config.pageTable ? q : v;
  Type outType = inferAttentionOutType(q, kb, vb, config.layout);
  if (config.pageTable) {
    auto o = dyn_cast<RankedTensorType>(outType);
    auto vs = logicalSizes(v, config.layout);
    if (o && o.getRank() == 4 && vs) {
      SmallVector<int64_t, 4> shape(o.getShape());
      shape[3] = (*vs)[3];
      outType = RankedTensorType::get(shape, o.getElementType());
    }
  }
  // Latent attention: out has Dv = vFromK columns (a size no type can have
  // is left to the verifier, which rejects it).
  if (config.vFromK && *config.vFromK > 0) {
    if (auto o = dyn_cast<RankedTensorType>(outType); o && o.getRank() == 4) {
      SmallVector<int64_t, 4> shape(o.getShape());
      shape[3] = *config.vFromK;
      outType = RankedTensorType::get(shape, o.getElementType());
    }
  }
  Type lseType;
  if (config.withLse)
    lseType = inferAttentionLseType(q, kb, vb, config.layout);
  ModifierAttrs attrs(builder, config);
  return AttentionOp::create(
      builder, loc, outType, lseType, q, k, v, config.pageTable,
      config.cuSeqlensQ, config.cuSeqlensK, config.kScale, config.vScale,
      config.kvLen, config.kvStart, config.keyMask, config.mask, config.bias,
      config.alibiSlopes, config.sink, config.runtimeScale, config.modInputs,
      LayoutAttr::get(builder.getContext(), config.layout),
      config.vFromK ? builder.getI64IntegerAttr(*config.vFromK) : IntegerAttr(),
      attrs.causal, attrs.align, attrs.windowLeft, attrs.windowRight,
      attrs.scale, attrs.softcap, attrs.norm);
}

Type mlir::attn::inferProjectedAttentionType(Value xq, Value xkv, Value wq,
                                             Value wk, Value wv, Value wo) {
  RankedTensorType xqType = rankedOf(xq);
  if (!xqType || xqType.getRank() != 3)
    return xq.getType();
  int64_t batch = firstStatic({xqType.getDimSize(0), dimIfRank(xkv, 3, 0)});
  int64_t model = firstStatic({xqType.getDimSize(2), dimIfRank(xkv, 3, 2),
                               dimIfRank(wq, 2, 0), dimIfRank(wk, 2, 0),
                               dimIfRank(wv, 2, 0), dimIfRank(wo, 2, 1)});
  return RankedTensorType::get({batch, xqType.getDimSize(1), model},
                               xqType.getElementType());
}

ProjectedAttentionOp mlir::attn::buildProjectedAttention(
    OpBuilder &builder, Location loc, Value xq, Value xkv, Value wq, Value wk,
    Value wv, Value wo, int64_t numQueryHeads, int64_t numKvHeads,
    const AttentionModifiers &modifiers) {
  Type resultType = inferProjectedAttentionType(xq, xkv, wq, wk, wv, wo);
  ModifierAttrs attrs(builder, modifiers);
  return ProjectedAttentionOp::create(
      builder, loc, resultType, xq, xkv, wq, wk, wv, wo, modifiers.kvLen,
      modifiers.kvStart, modifiers.keyMask, modifiers.mask, modifiers.bias,
      modifiers.alibiSlopes, modifiers.sink, modifiers.runtimeScale,
      modifiers.modInputs, builder.getI64IntegerAttr(numQueryHeads),
      builder.getI64IntegerAttr(numKvHeads), attrs.causal, attrs.align,
      attrs.windowLeft, attrs.windowRight, attrs.scale, attrs.softcap,
      attrs.norm);
}

/// Creates region `index` of `op` (0: score_mod, 1: mask_mod) with its block
/// arguments and fills it through `body`.
static void buildModRegion(
    OpBuilder &builder, Operation *op, unsigned index, bool isScore,
    llvm::function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  Location loc = op->getLoc();
  Region &region = op->getRegion(index);
  ValueRange inputs = isa<AttentionOp>(op)
                          ? cast<AttentionOp>(op).getModInputs()
                          : cast<ProjectedAttentionOp>(op).getModInputs();
  SmallVector<Type> types(4, builder.getIndexType());
  if (isScore)
    types.push_back(builder.getF32Type());
  llvm::append_range(types, inputs.getTypes());
  SmallVector<Location> locs(types.size(), loc);
  OpBuilder::InsertionGuard guard(builder);
  Block *block = builder.createBlock(&region, region.end(), types, locs);
  builder.setInsertionPointToEnd(block);
  Value result = body(builder, loc, block->getArguments());
  YieldOp::create(builder, loc, result);
}

void mlir::attn::buildMaskMod(
    OpBuilder &builder, Operation *op,
    llvm::function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  buildModRegion(builder, op, 1, /*isScore=*/false, body);
}

void mlir::attn::buildScoreMod(
    OpBuilder &builder, Operation *op,
    llvm::function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  buildModRegion(builder, op, 0, /*isScore=*/true, body);
}

static Block *entryOrNull(Region &region) {
  return region.empty() ? nullptr : &region.front();
}

template <typename OpTy> static bool expandKeyPaddingOf(OpTy op) {
  Value start = op.getKvStart(), keyMask = op.getKeyMask();
  if (!start && !keyMask)
    return false;
  Location loc = op.getLoc();
  SmallVector<Value> added;
  for (Value v : {start, keyMask})
    if (v)
      added.push_back(v);
  op.getKvStartMutable().clear();
  op.getKeyMaskMutable().clear();
  int64_t position = op.getModInputs().size();
  {
    Builder attrs(op.getContext());
    SmallVector<NamedAttribute> where;
    if (start)
      where.push_back(
          attrs.getNamedAttr("kv_start", attrs.getI64IntegerAttr(position++)));
    if (keyMask)
      where.push_back(
          attrs.getNamedAttr("key_mask", attrs.getI64IntegerAttr(position)));
    op->setAttr(kKeyPaddingAttr, attrs.getDictionaryAttr(where));
  }
  op.getModInputsMutable().append(added);
  // The bound: j >= kv_start[b] and key_mask[b, j] (b is the sequence in a
  // ragged batch), read from the region's last block arguments.
  auto allowed = [&](OpBuilder &b, Block *block, Value before) {
    Value bIdx = block->getArgument(0), j = block->getArgument(3);
    unsigned next = block->getNumArguments() - added.size();
    Value result = before;
    auto both = [&](Value ok) {
      result =
          result ? arith::AndIOp::create(b, loc, result, ok).getResult() : ok;
    };
    if (start) {
      Value first = tensor::ExtractOp::create(
          b, loc, block->getArgument(next++), ValueRange{bIdx});
      first = arith::IndexCastOp::create(b, loc, b.getIndexType(), first);
      both(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, j, first));
    }
    if (keyMask)
      both(tensor::ExtractOp::create(b, loc, block->getArgument(next++),
                                     ValueRange{bIdx, j}));
    return result;
  };
  OpBuilder builder(op.getContext());
  if (Block *score = entryOrNull(op.getScoreMod()))
    for (Value v : added)
      score->addArgument(v.getType(), loc);
  if (Block *mask = entryOrNull(op.getMaskMod())) {
    for (Value v : added)
      mask->addArgument(v.getType(), loc);
    auto yield = cast<YieldOp>(mask->getTerminator());
    builder.setInsertionPoint(yield);
    yield->setOperand(0, allowed(builder, mask, yield.getValue()));
    return true;
  }
  buildMaskMod(builder, op, [&](OpBuilder &b, Location, ValueRange) {
    return allowed(b, b.getInsertionBlock(), Value());
  });
  return true;
}

KeyPaddingTensors mlir::attn::keyPaddingTensors(AttentionOp op) {
  KeyPaddingTensors t{op.getKvStart(), op.getKeyMask()};
  auto where = op->getAttrOfType<DictionaryAttr>(kKeyPaddingAttr);
  if (!where)
    return t;
  auto inputs = op.getModInputs();
  auto at = [&](StringRef name) -> Value {
    auto i = where.getAs<IntegerAttr>(name);
    if (!i || i.getInt() < 0 ||
        i.getInt() >= static_cast<int64_t>(inputs.size()))
      return Value();
    return inputs[i.getInt()];
  };
  if (!t.kvStart)
    t.kvStart = at("kv_start");
  if (!t.keyMask)
    t.keyMask = at("key_mask");
  return t;
}

bool mlir::attn::expandKeyPadding(Operation *op) {
  if (auto attention = dyn_cast<AttentionOp>(op))
    return expandKeyPaddingOf(attention);
  if (auto projected = dyn_cast<ProjectedAttentionOp>(op))
    return expandKeyPaddingOf(projected);
  return false;
}
