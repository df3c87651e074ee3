//===- LogitBuilder.cpp - shared logit and mask arithmetic ----------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/LogitBuilder.h"
#include "attn/Conversion/ModInputs.h"
#include "attn/Conversion/PagedKv.h"
#include "attn/Conversion/RuntimeChecks.h"
#include "attn/IR/AttnBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

#include <limits>
#include <tuple>

using namespace mlir;
using namespace mlir::attn;

static Value f32Const(OpBuilder &b, Location loc, double v) {
  return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
}

LogitContext mlir::attn::buildLogitContext(OpBuilder &b, Location loc,
                                           AttentionOp op) {
  LogitContext ctx;
  ctx.op = op;
  Value k = op.getKey();
  auto toValue = [&](OpFoldResult r) -> Value {
    if (auto v = dyn_cast<Value>(r))
      return v;
    return arith::ConstantIndexOp::create(
        b, loc, cast<IntegerAttr>(cast<Attribute>(r)).getInt());
  };
  (void)k;
  ctx.nk = buildKvSeqLen(b, loc, op);
  ctx.nq = toValue(
      tensor::getMixedSize(b, loc, op.getQuery(), op.getPhysicalDim(2)));
  if (Value runtimeScale = op.getRuntimeScale()) {
    // scale(%s : tensor<f32>): read once, before the loops.
    ctx.scale = tensor::ExtractOp::create(b, loc, runtimeScale, ValueRange());
  } else if (std::optional<double> scale = op.getEffectiveScale()) {
    ctx.scale = f32Const(b, loc, *scale);
  } else {
    // Dqk is dynamic: scale = 1 / sqrt(Dqk) at run time.
    Value d = toValue(
        tensor::getMixedSize(b, loc, op.getQuery(), op.getPhysicalDim(3)));
    Value di = arith::IndexCastOp::create(b, loc, b.getI64Type(), d);
    Value df = arith::SIToFPOp::create(b, loc, b.getF32Type(), di);
    Value root = math::SqrtOp::create(b, loc, df);
    ctx.scale = arith::DivFOp::create(b, loc, f32Const(b, loc, 1.0), root);
  }
  if (auto cap = op.getSoftcapAttr())
    ctx.softcap = f32Const(b, loc, cap.getValueAsDouble());
  return ctx;
}

void mlir::attn::emitAppendSizeChecks(OpBuilder &b, Location loc,
                                      KvCacheAppendOp op, Value errors,
                                      OperandDimReader readDim) {
  bool bhnd = op.getLayout() == Layout::bhnd;
  int64_t hDim = bhnd ? 1 : 2;
  Value cache = op.getCache(), update = op.getUpdate();
  auto dim = [&](Value v, int64_t d) -> Value {
    if (readDim)
      return readDim(v, d);
    return tensor::DimOp::create(b, loc, v, d);
  };
  auto check = [&](int64_t logical, Value x, int64_t dx, Value y, int64_t dy) {
    if (!cast<ShapedType>(x.getType()).isDynamicDim(dx) &&
        !cast<ShapedType>(y.getType()).isDynamicDim(dy))
      return;
    Value vx = dim(x, dx), vy = dim(y, dy);
    Value eq = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, vx, vy);
    SmallVector<Value> args = {arith::ConstantIndexOp::create(b, loc, logical),
                               vx, vy};
    if (errors)
      emitRuntimeCheckInto(b, loc, errors, eq, RuntimeCheck::AppendSizes, args);
    else
      emitRuntimeCheck(b, loc, op, eq, RuntimeCheck::AppendSizes, args);
  };
  check(0, update, 0, op.getPositions(), 0);
  if (Value table = op.getPageTable())
    check(0, update, 0, table, 0);
  else
    check(0, update, 0, cache, 0);
  check(1, update, hDim, cache, hDim);
  check(3, update, 3, cache, 3);
}

void mlir::attn::emitRuntimeShapeChecks(OpBuilder &b, Location loc,
                                        AttentionOp op, Value errors,
                                        OperandDimReader readDim) {
  auto typeOf = [](Value v) { return cast<ShapedType>(v.getType()); };
  auto dim = [&](Value v, int64_t physical) -> Value {
    if (readDim)
      return readDim(v, physical);
    return tensor::DimOp::create(b, loc, v, physical);
  };
  auto cst = [&](int64_t c) -> Value {
    return arith::ConstantIndexOp::create(b, loc, c);
  };
  auto check = [&](Value ok, RuntimeCheck c, ArrayRef<Value> args) {
    if (errors)
      emitRuntimeCheckInto(b, loc, errors, ok, c, args);
    else
      emitRuntimeCheck(b, loc, op, ok, c, args);
  };
  // Checks x == y (recording both) when either side is dynamic.
  auto checkEq = [&](Value x, int64_t dx, Value y, int64_t dy, RuntimeCheck c) {
    if (!typeOf(x).isDynamicDim(dx) && !typeOf(y).isDynamicDim(dy))
      return;
    Value vx = dim(x, dx), vy = dim(y, dy);
    Value eq = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, vx, vy);
    check(eq, c, {vx, vy});
  };
  Value q = op.getQuery(), k = op.getKey(), v = op.getValue();
  auto qd = [&](int64_t l) { return op.getPhysicalDim(l); };
  bool paged = op.isPaged();
  // Nk of paged K/V: max_pages * S, read through `dim`.
  auto kvSeqLen = [&]() -> Value {
    if (!readDim)
      return buildKvSeqLen(b, loc, op);
    return arith::MulIOp::create(b, loc, dim(op.getPageTable(), 1),
                                 dim(k, qd(2)));
  };
  // A ragged batch's kv_len and page table have an entry or row per
  // sequence: one less than its offsets.
  Value cuQ = op.getCuSeqlensQ();
  auto checkSequences = [&](Value x, RuntimeCheck c) {
    if (!typeOf(x).isDynamicDim(0) && !typeOf(cuQ).isDynamicDim(0))
      return;
    Value vx = dim(x, 0);
    Value seqs = arith::SubIOp::create(b, loc, dim(cuQ, 0), cst(1));
    check(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, vx, seqs), c,
          {vx, seqs});
  };
  if (paged) {
    checkEq(k, qd(0), v, qd(0), RuntimeCheck::PagePoolsKV);
    if (cuQ)
      checkSequences(op.getPageTable(), RuntimeCheck::RaggedPageTableRows);
    else
      checkEq(op.getPageTable(), 0, q, qd(0), RuntimeCheck::PageTableRows);
  } else {
    checkEq(q, qd(0), k, qd(0), RuntimeCheck::BatchQK);
    checkEq(q, qd(0), v, qd(0), RuntimeCheck::BatchQV);
  }
  checkEq(k, qd(1), v, qd(1), RuntimeCheck::HeadsKV);
  checkEq(q, qd(3), k, qd(3), RuntimeCheck::HeadDimQK);
  checkEq(k, qd(2), v, qd(2), RuntimeCheck::LengthKV);
  if (typeOf(q).isDynamicDim(qd(1)) || typeOf(k).isDynamicDim(qd(1))) {
    Value hq = dim(q, qd(1)), hkv = dim(k, qd(1));
    Value zero = cst(0);
    Value pos =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, hkv, zero);
    check(pos, RuntimeCheck::NoKvHeads, {hkv});
    // Divide by max(hkv, 1) so the check itself cannot trap.
    Value safe = arith::MaxSIOp::create(b, loc, hkv, cst(1));
    Value rem = arith::RemUIOp::create(b, loc, hq, safe);
    Value div =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rem, zero);
    check(div, RuntimeCheck::HeadGroups, {hq, hkv});
  }
  // Quantized K/V: a scale per token and head (K's shape without D) or per
  // page (batch entry) and head.
  for (auto [which, scale, kv] :
       {std::tuple<int64_t, Value, Value>{0, op.getKScale(), k},
        {1, op.getVScale(), v}}) {
    if (!scale)
      continue;
    int64_t rank = typeOf(scale).getRank();
    for (int64_t d = 0; d < rank; ++d) {
      int64_t of = rank == 2 && d == 1 ? qd(1) : d;
      if (!typeOf(scale).isDynamicDim(d) && !typeOf(kv).isDynamicDim(of))
        continue;
      Value got = dim(scale, d), want = dim(kv, of);
      check(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, got, want),
            RuntimeCheck::KvScaleDim, {cst(which), cst(d), got, want});
    }
  }
  // Logical [B, Hq, Nq, Nk] sizes that masks and bias broadcast to.
  struct Source {
    Value tensor;
    int64_t dim;
  };
  Source target[4] = {{q, qd(0)}, {q, qd(1)}, {q, qd(2)}, {k, qd(2)}};
  for (Value t : {op.getMask(), op.getBias()}) {
    if (!t)
      continue;
    auto type = typeOf(t);
    int64_t offset = 4 - type.getRank();
    for (int64_t d = 0; d < type.getRank(); ++d) {
      if (type.getDimSize(d) == 1)
        continue;
      const Source &s = target[offset + d];
      Value expected;
      if (paged && offset + d == 3) {
        // Nk = max_pages * S: compared as a value.
        if (!type.isDynamicDim(d) && op.getKvSeqLen() != ShapedType::kDynamic)
          continue;
        expected = kvSeqLen();
      } else {
        if (!type.isDynamicDim(d) && !typeOf(s.tensor).isDynamicDim(s.dim))
          continue;
        expected = dim(s.tensor, s.dim);
      }
      Value got = dim(t, d);
      Value eq = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, got,
                                       expected);
      check(eq, RuntimeCheck::MaskBiasDim,
            {cst(t == op.getMask() ? 0 : 1), cst(d), got, expected});
    }
  }
  if (Value kvLen = op.getKvLen()) {
    if (cuQ)
      checkSequences(kvLen, RuntimeCheck::RaggedKvLenEntries);
    else
      checkEq(kvLen, 0, q, qd(0), RuntimeCheck::KvLenEntries);
  }
  // A static result size must match the dynamic input size it comes from.
  auto checkResult = [&](int64_t resultDim, Value src, int64_t srcDim,
                         RuntimeCheck c, int64_t shown) {
    auto rt = cast<RankedTensorType>(op.getResult(0).getType());
    if (rt.isDynamicDim(resultDim) || !typeOf(src).isDynamicDim(srcDim))
      return;
    Value want = cst(rt.getDimSize(resultDim));
    Value got = dim(src, srcDim);
    Value eq =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, got, want);
    check(eq, c, {cst(shown), want, got});
  };
  checkResult(qd(0), q, qd(0), RuntimeCheck::ResultDim, 0);
  checkResult(qd(1), q, qd(1), RuntimeCheck::ResultDim, 1);
  checkResult(qd(2), q, qd(2), RuntimeCheck::ResultDim, 2);
  checkResult(qd(3), v, qd(3), RuntimeCheck::ResultDim, 3);
  if (Value lse = op.getLse()) {
    auto lt = typeOf(lse);
    Source lseSrc[3] = {{q, qd(0)}, {q, qd(1)}, {q, qd(2)}};
    for (int64_t d = 0; d < 3; ++d) {
      if (lt.isDynamicDim(d) ||
          !typeOf(lseSrc[d].tensor).isDynamicDim(lseSrc[d].dim))
        continue;
      Value want = cst(lt.getDimSize(d));
      Value got = dim(lseSrc[d].tensor, lseSrc[d].dim);
      Value eq =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, got, want);
      check(eq, RuntimeCheck::LseDim, {cst(d), want, got});
    }
  }
  // Key padding, stated or already expanded into mod_inputs: kv_start has an
  // entry per batch entry (per sequence), key_mask is [B, Nk].
  KeyPaddingTensors padding = keyPaddingTensors(op);
  if (Value start = padding.kvStart) {
    if (cuQ)
      checkSequences(start, RuntimeCheck::KvStartEntries);
    else
      checkEq(start, 0, q, qd(0), RuntimeCheck::KvStartEntries);
  }
  if (Value keyMask = padding.keyMask) {
    auto type = typeOf(keyMask);
    if (type.isDynamicDim(0) || typeOf(q).isDynamicDim(qd(0))) {
      Value got = dim(keyMask, 0), want = dim(q, qd(0));
      check(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, got, want),
            RuntimeCheck::KeyMaskDim, {cst(0), got, want});
    }
    bool dynamicNk = paged ? op.getKvSeqLen() == ShapedType::kDynamic
                           : typeOf(k).isDynamicDim(qd(2));
    if (type.isDynamicDim(1) || dynamicNk) {
      Value got = dim(keyMask, 1);
      Value want = paged ? kvSeqLen() : dim(k, qd(2));
      check(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, got, want),
            RuntimeCheck::KeyMaskDim, {cst(1), got, want});
    }
  }
  if (Value slopes = op.getAlibiSlopes())
    checkEq(slopes, 0, q, qd(1), RuntimeCheck::AlibiSlopes);
  if (Value sink = op.getSink())
    checkEq(sink, 0, q, qd(1), RuntimeCheck::SinkLength);
  // The per-tile classification of a mask_mod bounds its arithmetic with
  // indices below kIndexBound (2^40); static sizes are checked by the
  // verifier.
  if (op.getMaskModBlock()) {
    auto checkSmall = [&](Value size) {
      Value small = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                          size, cst(int64_t(1) << 40));
      check(small, RuntimeCheck::ModSizeBound, {size});
    };
    for (auto [t, d] : {std::pair<Value, int64_t>{q, qd(0)},
                        {q, qd(1)},
                        {q, qd(2)},
                        {k, qd(2)}})
      if (typeOf(t).isDynamicDim(d))
        checkSmall(dim(t, d));
    if (paged)
      checkSmall(kvSeqLen());
  }
  // The page table's entries are data: a lowering on tensors checks them
  // here; the GPU kernel, which reads them in device memory, checks them
  // itself (its error word).
  if (!readDim)
    emitPageTableChecks(b, loc, op);
}

Value mlir::attn::buildClampedKvLen(OpBuilder &b, Location loc,
                                    const LogitContext &ctx, Value element) {
  Value len = arith::IndexCastOp::create(b, loc, b.getIndexType(), element);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  len = arith::MaxSIOp::create(b, loc, len, zero);
  return arith::MinSIOp::create(b, loc, len, ctx.nk);
}

Value mlir::attn::buildQueryPosition(OpBuilder &b, Location loc,
                                     const LogitContext &ctx, Value i,
                                     Value kvLen) {
  if (!AttentionOp(ctx.op).isBottomRightAligned())
    return i;
  // p(i) = i + kv_len - Nq: the queries are the newest kv_len positions.
  Value shifted = arith::AddIOp::create(b, loc, i, kvLen);
  return arith::SubIOp::create(b, loc, shifted, ctx.nq);
}

Value mlir::attn::buildStructuralAllowed(OpBuilder &b, Location loc,
                                         const LogitContext &ctx, Value i,
                                         Value j, Value kvLen) {
  AttentionOp op = ctx.op;
  Value allowed =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, j, kvLen);
  auto andWith = [&](Value cond) {
    allowed = arith::AndIOp::create(b, loc, allowed, cond);
  };
  bool needsPosition = op.getCausal() || op.getEffectiveWindowLeft() ||
                       op.getEffectiveWindowRight();
  if (!needsPosition)
    return allowed;
  Value p = buildQueryPosition(b, loc, ctx, i, kvLen);
  if (op.getCausal())
    andWith(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, j, p));
  if (auto left = op.getEffectiveWindowLeft()) {
    Value dist = arith::SubIOp::create(b, loc, p, j);
    Value bound = arith::ConstantIndexOp::create(b, loc, *left);
    andWith(
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, dist, bound));
  }
  if (auto right = op.getEffectiveWindowRight()) {
    Value dist = arith::SubIOp::create(b, loc, j, p);
    Value bound = arith::ConstantIndexOp::create(b, loc, *right);
    andWith(
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, dist, bound));
  }
  return allowed;
}

/// Steps 1-3 of the contract: scale, soft cap, additive terms.
static Value buildModifiedScore(OpBuilder &b, Location loc,
                                const LogitContext &ctx,
                                const LogitOperands &in) {
  Type f32 = b.getF32Type();
  // 1. scale * dot.
  Value s = arith::MulFOp::create(b, loc, in.raw, ctx.scale);
  // 2. soft cap: cap * tanh(s / cap).
  if (ctx.softcap) {
    Value t = arith::DivFOp::create(b, loc, s, ctx.softcap);
    t = math::TanhOp::create(b, loc, t);
    s = arith::MulFOp::create(b, loc, t, ctx.softcap);
  }
  // 3. additive terms: bias, then ALiBi's -slope * |j - p(i)|.
  if (in.bias) {
    Value bias = in.bias;
    if (bias.getType() != f32)
      bias = arith::ExtFOp::create(b, loc, f32, bias);
    s = arith::AddFOp::create(b, loc, s, bias);
  }
  if (in.slope) {
    Value p = buildQueryPosition(b, loc, ctx, in.i, in.kvLen);
    Value diff = arith::SubIOp::create(b, loc, in.j, p);
    Value neg = arith::SubIOp::create(
        b, loc, arith::ConstantIndexOp::create(b, loc, 0), diff);
    Value dist = arith::MaxSIOp::create(b, loc, diff, neg);
    Value di = arith::IndexCastOp::create(b, loc, b.getI64Type(), dist);
    Value df = arith::SIToFPOp::create(b, loc, f32, di);
    Value penalty = arith::MulFOp::create(b, loc, in.slope, df);
    s = arith::SubFOp::create(b, loc, s, penalty);
  }
  // 3b. the user's score_mod, after the additive terms.
  if (Block *mod = AttentionOp(ctx.op).getScoreModBlock())
    s = inlineModRegion(b, loc, ctx.op, *mod, "score_mod",
                        {in.b, in.h, in.regionI ? in.regionI : in.i,
                         in.regionJ ? in.regionJ : in.j, s},
                        ctx.modInputs);
  return s;
}

Value mlir::attn::inlineModRegion(OpBuilder &b, Location loc, Operation *op,
                                  Block &region, StringRef name,
                                  ValueRange args,
                                  const ModInputAccess *access) {
  std::optional<ModInputAccess> own;
  if (!access)
    access = &own.emplace(ModInputAccess::ofTensors(cast<AttentionOp>(op)));
  IRMapping map;
  unsigned n = args.size();
  for (auto [arg, v] : llvm::zip(region.getArguments().take_front(n), args))
    map.map(arg, v);
  for (auto [arg, v] :
       llvm::zip(region.getArguments().drop_front(n), access->inputs))
    map.map(arg, v);
  // The position of a region argument among the mod_inputs, if it is one.
  auto inputOf = [&](Value v) -> std::optional<unsigned> {
    auto arg = dyn_cast<BlockArgument>(v);
    if (!arg || arg.getOwner() != &region || arg.getArgNumber() < n)
      return std::nullopt;
    return arg.getArgNumber() - n;
  };
  RuntimeCheck check = name == "score_mod" ? RuntimeCheck::ScoreModRead
                                           : RuntimeCheck::MaskModRead;
  for (Operation &inner : region.without_terminator()) {
    // (The verifier makes the dimension of a tensor.dim a constant.)
    if (auto dimOp = dyn_cast<tensor::DimOp>(inner)) {
      std::optional<int64_t> d = dimOp.getConstantIndex();
      if (std::optional<unsigned> input = inputOf(dimOp.getSource());
          input && d) {
        map.map(dimOp.getResult(),
                access->dim(b, loc, access->inputs[*input], *d));
        continue;
      }
    }
    auto extract = dyn_cast<tensor::ExtractOp>(inner);
    std::optional<unsigned> input =
        extract ? inputOf(extract.getTensor()) : std::nullopt;
    if (!input) {
      b.clone(inner, map);
      continue;
    }
    // An index outside the tensor is recorded (the first failing dimension
    // of the read) and the read yields 0 instead of reading out of bounds.
    Value t = access->inputs[*input];
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value allOk;
    SmallVector<Value> indices;
    for (auto [d, idx] : llvm::enumerate(extract.getIndices())) {
      Value x = map.lookup(idx);
      indices.push_back(x);
      Value dim = access->dim(b, loc, t, d);
      Value ok = arith::AndIOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, zero, x),
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x, dim));
      // Dimensions are checked in order and the first failure of a call
      // wins: a read out of bounds in several dimensions names the first.
      access->report(b, loc, ok, check,
                     {arith::ConstantIndexOp::create(b, loc, *input), x,
                      arith::ConstantIndexOp::create(b, loc, d), dim});
      allOk = allOk ? arith::AndIOp::create(b, loc, allOk, ok) : ok;
    }
    Type elt = extract.getType();
    auto ifOp = scf::IfOp::create(
        b, loc, TypeRange{elt},
        allOk ? allOk : arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1),
        /*withElse=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      scf::YieldOp::create(b, loc, access->read(b, loc, t, indices));
      b.setInsertionPointToStart(&ifOp.getElseRegion().front());
      scf::YieldOp::create(
          b, loc,
          arith::ConstantOp::create(b, loc, b.getZeroAttr(elt)).getResult());
    }
    map.map(extract.getResult(), ifOp.getResult(0));
  }
  return map.lookup(region.getTerminator()->getOperand(0));
}

static Value maskWithNegInf(OpBuilder &b, Location loc, Value allowed,
                            Value s) {
  Value ninf = f32Const(b, loc, -std::numeric_limits<double>::infinity());
  return arith::SelectOp::create(b, loc, allowed, s, ninf);
}

Value mlir::attn::buildLogit(OpBuilder &b, Location loc,
                             const LogitContext &ctx, const LogitOperands &in) {
  Value s = buildModifiedScore(b, loc, ctx, in);
  // 4. masking with -inf, before normalization.
  Value allowed = buildStructuralAllowed(b, loc, ctx, in.i, in.j, in.kvLen);
  if (in.maskBit)
    allowed = arith::AndIOp::create(b, loc, allowed, in.maskBit);
  if (Block *mod = AttentionOp(ctx.op).getMaskModBlock())
    allowed = arith::AndIOp::create(
        b, loc, allowed,
        inlineModRegion(b, loc, ctx.op, *mod, "mask_mod",
                        {in.b, in.h, in.regionI ? in.regionI : in.i,
                         in.regionJ ? in.regionJ : in.j},
                        ctx.modInputs));
  return maskWithNegInf(b, loc, allowed, s);
}

Value mlir::attn::buildUnmaskedLogit(OpBuilder &b, Location loc,
                                     const LogitContext &ctx,
                                     const LogitOperands &in) {
  Value s = buildModifiedScore(b, loc, ctx, in);
  if (!in.maskBit)
    return s;
  return maskWithNegInf(b, loc, in.maskBit, s);
}

//===----------------------------------------------------------------------===//
// Softmax edge cases
//===----------------------------------------------------------------------===//

/// An f32 constant, a splat when `like` is a vector.
static Value f32Like(OpBuilder &b, Location loc, Value like, double v) {
  return createScalarOrSplatConstant(b, loc, like.getType(), APFloat(float(v)));
}

/// The i32 type (or vector of i32) shaped like `like`.
static Type i32Like(OpBuilder &b, Value like) {
  Type i32 = b.getI32Type();
  if (auto vecTy = dyn_cast<VectorType>(like.getType()))
    return VectorType::get(vecTy.getShape(), i32);
  return i32;
}

Value mlir::attn::buildSafeMax(OpBuilder &b, Location loc, Value m) {
  Value empty = arith::CmpFOp::create(
      b, loc, arith::CmpFPredicate::OEQ, m,
      f32Like(b, loc, m, -std::numeric_limits<double>::infinity()));
  return arith::SelectOp::create(b, loc, empty, f32Like(b, loc, m, 0.0), m);
}

Value mlir::attn::buildMergeWeight(OpBuilder &b, Location loc, Value ms,
                                   Value bigM) {
  Value ninf = f32Const(b, loc, -std::numeric_limits<double>::infinity());
  Value empty =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, ms, ninf);
  Value w = math::ExpOp::create(
      b, loc, arith::SubFOp::create(b, loc, ms, buildSafeMax(b, loc, bigM)));
  return arith::SelectOp::create(b, loc, empty, f32Const(b, loc, 0.0), w);
}

Value mlir::attn::buildMergeRowSum(OpBuilder &b, Location loc, Value sum,
                                   Value ms, Value ls, Value bigM) {
  Value w = buildMergeWeight(b, loc, ms, bigM);
  return arith::AddFOp::create(b, loc, sum,
                               arith::MulFOp::create(b, loc, w, ls));
}

Value mlir::attn::buildMergeOutputStep(OpBuilder &b, Location loc, Value out,
                                       Value ms, Value ls, Value os, Value bigM,
                                       Value bigL) {
  Value ws =
      arith::MulFOp::create(b, loc, buildMergeWeight(b, loc, ms, bigM), ls);
  Value u = buildNormalizedOutput(b, loc, ws, bigL);
  // A part of weight 0 (empty, or all of an empty row) adds nothing, also
  // when its output is not finite.
  Value zero = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, u,
                                     f32Const(b, loc, 0.0));
  Value sum =
      arith::AddFOp::create(b, loc, out, arith::MulFOp::create(b, loc, u, os));
  return arith::SelectOp::create(b, loc, zero, out, sum);
}

Value mlir::attn::buildNormalizedOutput(OpBuilder &b, Location loc, Value acc,
                                        Value l) {
  Value zero = f32Const(b, loc, 0.0);
  Value empty =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, l, zero);
  Value div = arith::DivFOp::create(b, loc, acc, l);
  return arith::SelectOp::create(b, loc, empty, zero, div);
}

SinkMerge mlir::attn::buildSinkMerge(OpBuilder &b, Location loc, Value m,
                                     Value l, Value sink) {
  SinkMerge r;
  r.m = arith::MaximumFOp::create(b, loc, m, sink);
  r.accScale = buildMergeWeight(b, loc, m, r.m);
  r.l = arith::AddFOp::create(b, loc,
                              arith::MulFOp::create(b, loc, l, r.accScale),
                              buildMergeWeight(b, loc, sink, r.m));
  return r;
}

Value mlir::attn::buildLogSumExp(OpBuilder &b, Location loc, Value m, Value l) {
  Value empty = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, l,
                                      f32Const(b, loc, 0.0));
  Value lse = arith::AddFOp::create(b, loc, m, math::LogOp::create(b, loc, l));
  return arith::SelectOp::create(
      b, loc, empty, f32Const(b, loc, -std::numeric_limits<double>::infinity()),
      lse);
}

Value mlir::attn::buildScaleRatio(OpBuilder &b, Location loc, Value s,
                                  Value t) {
  Type i32 = i32Like(b, s);
  auto c = [&](int64_t v) -> Value {
    return createScalarOrSplatConstant(b, loc, i32, v);
  };
  Value diff =
      arith::SubIOp::create(b, loc, arith::BitcastOp::create(b, loc, i32, s),
                            arith::BitcastOp::create(b, loc, i32, t));
  Value bits = arith::AddIOp::create(b, loc, diff, c(127 << 23));
  bits = arith::MaxSIOp::create(
      b, loc, arith::MinSIOp::create(b, loc, bits, c(254 << 23)), c(0));
  return arith::BitcastOp::create(b, loc, s.getType(), bits);
}

Value mlir::attn::buildRowSumScale(OpBuilder &b, Location loc, Value l) {
  // Biased exponent e of l (l >= 0); s = 2^-(e - 126) has biased exponent
  // 253 - e, clamped to [1, 253] so that s is a normal power of two.
  Type i32 = i32Like(b, l);
  auto c = [&](int64_t v) -> Value {
    return createScalarOrSplatConstant(b, loc, i32, v);
  };
  Value bits = arith::BitcastOp::create(b, loc, i32, l);
  Value e = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, bits, c(23)), c(0xff));
  Value se = arith::SubIOp::create(b, loc, c(253), e);
  se = arith::MaxSIOp::create(b, loc,
                              arith::MinSIOp::create(b, loc, se, c(253)), c(1));
  return arith::BitcastOp::create(b, loc, l.getType(),
                                  arith::ShLIOp::create(b, loc, se, c(23)));
}
