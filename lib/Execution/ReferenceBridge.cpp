//===- ReferenceBridge.cpp - run the f64 reference for an attn op ---------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Execution/ReferenceBridge.h"

#include "attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;

static llvm::Error makeError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

static ::attn::ref::Tensor toRef(const HostTensor &t) {
  ::attn::ref::Tensor r;
  r.shape = t.shape;
  int64_t n = t.numElements();
  r.data.resize(n);
  for (int64_t i = 0; i < n; ++i)
    r.data[i] = t.get(i);
  return r;
}

//===----------------------------------------------------------------------===//
// Regions -> RegionProgram
//===----------------------------------------------------------------------===//

namespace ref = ::attn::ref;

static llvm::Expected<ref::ScalarType> scalarType(Type t, StringRef region,
                                                  Operation *op) {
  if (isa<IndexType>(t))
    return ref::ScalarType::index();
  if (auto i = dyn_cast<IntegerType>(t))
    if (i.getWidth() >= 1 && i.getWidth() <= 64)
      return ref::ScalarType::integer(i.getWidth());
  if (t.isF16())
    return ref::ScalarType{ref::ScalarKind::F16, 0};
  if (t.isBF16())
    return ref::ScalarType{ref::ScalarKind::BF16, 0};
  if (t.isF32())
    return ref::ScalarType::f32();
  if (t.isF64())
    return ref::ScalarType{ref::ScalarKind::F64, 0};
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "the reference cannot evaluate " << region << ": values of type " << t;
  if (op)
    os << " ('" << op->getName() << "')";
  os << " (supported: index, i1..i64, f16, bf16, f32, f64)";
  return makeError(os.str());
}

/// The opcodes of the ops a region may hold, by op name (arith.constant,
/// arith.cmpi/cmpf, tensor.extract/dim and attn.yield are handled apart).
static const llvm::StringMap<ref::Opcode> &opcodeTable() {
  using O = ref::Opcode;
  static const llvm::StringMap<O> table = {
      {"arith.addi", O::AddI},
      {"arith.subi", O::SubI},
      {"arith.muli", O::MulI},
      {"arith.divsi", O::DivSI},
      {"arith.divui", O::DivUI},
      {"arith.remsi", O::RemSI},
      {"arith.remui", O::RemUI},
      {"arith.floordivsi", O::FloorDivSI},
      {"arith.ceildivsi", O::CeilDivSI},
      {"arith.ceildivui", O::CeilDivUI},
      {"arith.minsi", O::MinSI},
      {"arith.maxsi", O::MaxSI},
      {"arith.minui", O::MinUI},
      {"arith.maxui", O::MaxUI},
      {"arith.andi", O::AndI},
      {"arith.ori", O::OrI},
      {"arith.xori", O::XOrI},
      {"arith.shli", O::ShLI},
      {"arith.shrsi", O::ShRSI},
      {"arith.shrui", O::ShRUI},
      {"arith.select", O::Select},
      {"arith.extsi", O::ExtSI},
      {"arith.extui", O::ExtUI},
      {"arith.trunci", O::TruncI},
      {"arith.index_cast", O::IndexCast},
      {"arith.index_castui", O::IndexCastUI},
      {"arith.sitofp", O::SIToFP},
      {"arith.uitofp", O::UIToFP},
      {"arith.fptosi", O::FPToSI},
      {"arith.fptoui", O::FPToUI},
      {"arith.extf", O::ExtF},
      {"arith.truncf", O::TruncF},
      {"arith.bitcast", O::Bitcast},
      {"arith.addf", O::AddF},
      {"arith.subf", O::SubF},
      {"arith.mulf", O::MulF},
      {"arith.divf", O::DivF},
      {"arith.remf", O::RemF},
      {"arith.negf", O::NegF},
      {"arith.maximumf", O::MaximumF},
      {"arith.minimumf", O::MinimumF},
      {"arith.maxnumf", O::MaxNumF},
      {"arith.minnumf", O::MinNumF},
      {"math.absi", O::AbsI},
      {"math.absf", O::AbsF},
      {"math.copysign", O::CopySign},
      {"math.powf", O::PowF},
      {"math.fpowi", O::FPowI},
      {"math.ipowi", O::IPowI},
      {"math.fma", O::Fma},
      {"math.tanh", O::Tanh},
      {"math.exp", O::Exp},
      {"math.exp2", O::Exp2},
      {"math.expm1", O::ExpM1},
      {"math.log", O::Log},
      {"math.log2", O::Log2},
      {"math.log10", O::Log10},
      {"math.log1p", O::Log1p},
      {"math.sqrt", O::Sqrt},
      {"math.rsqrt", O::Rsqrt},
      {"math.cbrt", O::Cbrt},
      {"math.floor", O::Floor},
      {"math.ceil", O::Ceil},
      {"math.round", O::Round},
      {"math.roundeven", O::RoundEven},
      {"math.trunc", O::Trunc},
      {"math.sin", O::Sin},
      {"math.cos", O::Cos},
      {"math.tan", O::Tan},
      {"math.asin", O::Asin},
      {"math.acos", O::Acos},
      {"math.atan", O::Atan},
      {"math.atan2", O::Atan2},
      {"math.sinh", O::Sinh},
      {"math.cosh", O::Cosh},
      {"math.asinh", O::Asinh},
      {"math.acosh", O::Acosh},
      {"math.atanh", O::Atanh},
      {"math.erf", O::Erf},
      {"math.erfc", O::Erfc},
      {"math.isnan", O::IsNaN},
      {"math.isinf", O::IsInf},
      {"math.isfinite", O::IsFinite},
      {"math.ctlz", O::CountLeadingZeros},
      {"math.cttz", O::CountTrailingZeros},
      {"math.ctpop", O::CtPop},
  };
  return table;
}

static ref::CmpIPred cmpIPred(arith::CmpIPredicate p) {
  switch (p) {
  case arith::CmpIPredicate::eq:
    return ref::CmpIPred::eq;
  case arith::CmpIPredicate::ne:
    return ref::CmpIPred::ne;
  case arith::CmpIPredicate::slt:
    return ref::CmpIPred::slt;
  case arith::CmpIPredicate::sle:
    return ref::CmpIPred::sle;
  case arith::CmpIPredicate::sgt:
    return ref::CmpIPred::sgt;
  case arith::CmpIPredicate::sge:
    return ref::CmpIPred::sge;
  case arith::CmpIPredicate::ult:
    return ref::CmpIPred::ult;
  case arith::CmpIPredicate::ule:
    return ref::CmpIPred::ule;
  case arith::CmpIPredicate::ugt:
    return ref::CmpIPred::ugt;
  case arith::CmpIPredicate::uge:
    return ref::CmpIPred::uge;
  }
  return ref::CmpIPred::eq;
}

static ref::CmpFPred cmpFPred(arith::CmpFPredicate p) {
  using P = arith::CmpFPredicate;
  switch (p) {
  case P::AlwaysFalse:
    return ref::CmpFPred::AlwaysFalse;
  case P::OEQ:
    return ref::CmpFPred::oeq;
  case P::OGT:
    return ref::CmpFPred::ogt;
  case P::OGE:
    return ref::CmpFPred::oge;
  case P::OLT:
    return ref::CmpFPred::olt;
  case P::OLE:
    return ref::CmpFPred::ole;
  case P::ONE:
    return ref::CmpFPred::one;
  case P::ORD:
    return ref::CmpFPred::ord;
  case P::UEQ:
    return ref::CmpFPred::ueq;
  case P::UGT:
    return ref::CmpFPred::ugt;
  case P::UGE:
    return ref::CmpFPred::uge;
  case P::ULT:
    return ref::CmpFPred::ult;
  case P::ULE:
    return ref::CmpFPred::ule;
  case P::UNE:
    return ref::CmpFPred::une;
  case P::UNO:
    return ref::CmpFPred::uno;
  case P::AlwaysTrue:
    return ref::CmpFPred::AlwaysTrue;
  }
  return ref::CmpFPred::AlwaysFalse;
}

llvm::Expected<ref::RegionProgram>
mlir::attn::translateRegion(Block &block, bool isScore, StringRef name) {
  ref::RegionProgram prog;
  llvm::DenseMap<Value, int> values;
  const unsigned numScalarArgs = isScore ? 5 : 4;
  auto fail = [&](Operation *op, const llvm::Twine &msg) {
    std::string text =
        ("the reference cannot evaluate " + name + ": " + msg).str();
    if (op)
      text += " ('" + op->getName().getStringRef().str() + "')";
    return makeError(text);
  };
  if (block.getNumArguments() < numScalarArgs)
    return fail(nullptr, "it has " + llvm::Twine(block.getNumArguments()) +
                             " block arguments, expected at least " +
                             llvm::Twine(numScalarArgs));
  for (unsigned a = 0; a < numScalarArgs; ++a) {
    BlockArgument arg = block.getArgument(a);
    auto type = scalarType(arg.getType(), name, nullptr);
    if (!type)
      return type.takeError();
    ref::Instr in;
    in.op = ref::Opcode::Arg;
    in.arg = static_cast<int>(a);
    in.type = *type;
    values[arg] = prog.add(in);
  }
  // The mod_inputs number of a tensor block argument.
  auto inputOf = [&](Value v, Operation *op) -> llvm::Expected<int> {
    auto arg = dyn_cast<BlockArgument>(v);
    if (!arg || arg.getOwner() != &block || arg.getArgNumber() < numScalarArgs)
      return fail(op, "it reads a tensor that is not one of its mod_inputs "
                      "block arguments");
    return static_cast<int>(arg.getArgNumber() - numScalarArgs);
  };
  auto operandsOf = [&](ValueRange range, Operation *op,
                        std::vector<int> &out) -> llvm::Error {
    for (Value v : range) {
      auto it = values.find(v);
      if (it == values.end())
        return fail(op, "an operand is not a scalar defined in the region");
      out.push_back(it->second);
    }
    return llvm::Error::success();
  };

  for (Operation &op : block) {
    if (auto yield = dyn_cast<YieldOp>(op)) {
      auto it = values.find(yield.getValue());
      if (it == values.end())
        return fail(&op, "it yields a value not defined in the region");
      prog.result = it->second;
      break;
    }
    if (op.getNumResults() != 1)
      return fail(&op, "ops with " + llvm::Twine(op.getNumResults()) +
                           " results are not supported");
    auto type = scalarType(op.getResult(0).getType(), name, &op);
    if (!type)
      return type.takeError();
    ref::Instr in;
    in.type = *type;
    in.name = op.getName().getStringRef().str();
    if (auto c = dyn_cast<arith::ConstantOp>(op)) {
      in.op = ref::Opcode::Constant;
      if (auto i = dyn_cast<IntegerAttr>(c.getValue()))
        in.ivalue = i.getValue().getSExtValue();
      else if (auto f = dyn_cast<FloatAttr>(c.getValue()))
        in.fvalue = f.getValueAsDouble();
      else
        return fail(&op, "only integer and float constants are supported");
    } else if (auto cmp = dyn_cast<arith::CmpIOp>(op)) {
      in.op = ref::Opcode::CmpI;
      in.predicate = static_cast<int>(cmpIPred(cmp.getPredicate()));
    } else if (auto cmp = dyn_cast<arith::CmpFOp>(op)) {
      in.op = ref::Opcode::CmpF;
      in.predicate = static_cast<int>(cmpFPred(cmp.getPredicate()));
    } else if (auto ex = dyn_cast<tensor::ExtractOp>(op)) {
      in.op = ref::Opcode::Extract;
      auto input = inputOf(ex.getTensor(), &op);
      if (!input)
        return input.takeError();
      in.input = *input;
      if (llvm::Error err = operandsOf(ex.getIndices(), &op, in.operands))
        return std::move(err);
      values[ex.getResult()] = prog.add(std::move(in));
      continue;
    } else if (auto dim = dyn_cast<tensor::DimOp>(op)) {
      in.op = ref::Opcode::Dim;
      auto input = inputOf(dim.getSource(), &op);
      if (!input)
        return input.takeError();
      in.input = *input;
      if (llvm::Error err = operandsOf(dim.getIndex(), &op, in.operands))
        return std::move(err);
      values[dim.getResult()] = prog.add(std::move(in));
      continue;
    } else {
      auto it = opcodeTable().find(op.getName().getStringRef());
      if (it == opcodeTable().end())
        return fail(&op, "the op is not supported");
      in.op = it->second;
    }
    for (Type t : op.getOperandTypes())
      if (auto st = scalarType(t, name, &op); !st)
        return st.takeError();
    if (llvm::Error err = operandsOf(op.getOperands(), &op, in.operands))
      return std::move(err);
    values[op.getResult(0)] = prog.add(std::move(in));
  }
  if (prog.result < 0)
    return fail(nullptr, "it does not end with attn.yield");
  return prog;
}

namespace {
/// Host tensors bound to one op's operands, converted for the reference.
struct Bound {
  llvm::ArrayRef<const HostTensor *> args;
  std::vector<std::unique_ptr<::attn::ref::Tensor>> keep;
  std::vector<int64_t> kvLen, kvStart, cuQ, cuK;
  std::vector<double> slopes, sink;
  /// The integers of an index tensor operand.
  llvm::Error ints(Value v, std::vector<int64_t> &out) {
    auto t = lookup(v);
    if (!t)
      return t.takeError();
    for (int64_t i = 0, e = (*t)->numElements(); i < e; ++i)
      out.push_back((*t)->getInt(i));
    return llvm::Error::success();
  }
  ref::RegionProgram scoreMod, maskMod;

  llvm::Expected<const HostTensor *> lookup(Value v) {
    auto arg = dyn_cast<BlockArgument>(v);
    if (!arg || arg.getArgNumber() >= args.size())
      return makeError("the reference needs every operand of the attn op to "
                       "be an argument of the entry function");
    return args[arg.getArgNumber()];
  }
  llvm::Expected<const ::attn::ref::Tensor *> tensor(Value v) {
    if (!v)
      return nullptr;
    auto t = lookup(v);
    if (!t)
      return t.takeError();
    keep.push_back(std::make_unique<::attn::ref::Tensor>(toRef(**t)));
    return keep.back().get();
  }
};
} // namespace

/// The entry block of an optional region, or null.
static Block *firstBlock(Region &r) { return r.empty() ? nullptr : &r.front(); }

template <typename OpTy> static ::attn::ref::Spec specOf(OpTy op) {
  ::attn::ref::Spec spec;
  if (auto causal = op.getCausal())
    spec.causal = *causal == CausalAlign::top_left
                      ? ::attn::ref::Causal::TopLeft
                      : ::attn::ref::Causal::BottomRight;
  spec.windowLeft = op.getWindowLeft();
  if (auto right = op.getWindowRightAttr())
    spec.windowRight = right.getInt();
  if (auto scale = op.getScaleAttr())
    spec.scale = scale.getValueAsDouble();
  if (auto cap = op.getSoftcapAttr())
    spec.softcap = cap.getValueAsDouble();
  if (auto align = op.getAlign())
    spec.align = *align == CausalAlign::top_left
                     ? ::attn::ref::Align::TopLeft
                     : ::attn::ref::Align::BottomRight;
  spec.norm = op.getNormalization() == Normalization::softmax
                  ? ::attn::ref::Norm::Softmax
                  : ::attn::ref::Norm::Sigmoid;
  return spec;
}

template <typename OpTy>
static llvm::Error bindModifiers(OpTy op, Bound &bound, ::attn::ref::Spec &spec,
                                 ::attn::ref::Inputs &in) {
  // scale(%s : tensor<f32>): the value this call passes.
  if (Value s = op.getRuntimeScale()) {
    auto t = bound.lookup(s);
    if (!t)
      return t.takeError();
    spec.scale = (*t)->get(0);
  }
  // Per-batch integer vectors (kv_len, kv_start).
  auto perBatch = [&](Value v, std::vector<int64_t> &values,
                      const std::vector<int64_t> *&slot) -> llvm::Error {
    if (!v)
      return llvm::Error::success();
    auto t = bound.lookup(v);
    if (!t)
      return t.takeError();
    for (int64_t i = 0, e = (*t)->numElements(); i < e; ++i)
      values.push_back((*t)->getInt(i));
    slot = &values;
    return llvm::Error::success();
  };
  if (llvm::Error err = perBatch(op.getKvLen(), bound.kvLen, in.kvLen))
    return err;
  if (llvm::Error err = perBatch(op.getKvStart(), bound.kvStart, in.kvStart))
    return err;
  // Per-head f32 vectors (ALiBi slopes, sinks) as doubles.
  auto perHead = [&](Value v, std::vector<double> &values,
                     const std::vector<double> *&slot) -> llvm::Error {
    if (!v)
      return llvm::Error::success();
    auto t = bound.lookup(v);
    if (!t)
      return t.takeError();
    for (int64_t i = 0, e = (*t)->numElements(); i < e; ++i)
      values.push_back((*t)->get(i));
    slot = &values;
    return llvm::Error::success();
  };
  if (llvm::Error err =
          perHead(op.getAlibiSlopes(), bound.slopes, in.alibiSlopes))
    return err;
  if (llvm::Error err = perHead(op.getSink(), bound.sink, in.sink))
    return err;
  auto keyMask = bound.tensor(op.getKeyMask());
  if (!keyMask)
    return keyMask.takeError();
  in.keyMask = *keyMask;
  auto mask = bound.tensor(op.getMask());
  if (!mask)
    return mask.takeError();
  in.mask = *mask;
  auto bias = bound.tensor(op.getBias());
  if (!bias)
    return bias.takeError();
  in.bias = *bias;
  for (Value v : op.getModInputs()) {
    auto t = bound.tensor(v);
    if (!t)
      return t.takeError();
    in.modInputs.push_back(*t);
  }
  if (Block *block = firstBlock(op.getScoreMod())) {
    auto prog = translateRegion(*block, /*isScore=*/true, "score_mod");
    if (!prog)
      return prog.takeError();
    bound.scoreMod = std::move(*prog);
    in.scoreMod = &bound.scoreMod;
  }
  if (Block *block = firstBlock(op.getMaskMod())) {
    auto prog = translateRegion(*block, /*isScore=*/false, "mask_mod");
    if (!prog)
      return prog.takeError();
    bound.maskMod = std::move(*prog);
    in.maskMod = &bound.maskMod;
  }
  return llvm::Error::success();
}

llvm::Error mlir::attn::runReference(Operation *op,
                                     llvm::ArrayRef<const HostTensor *> args,
                                     std::vector<::attn::ref::Tensor> &outs,
                                     double *flops) {
  Bound bound;
  bound.args = args;
  outs.clear();
  if (auto attn = dyn_cast<AttentionOp>(op)) {
    ::attn::ref::Spec spec = specOf(attn);
    spec.layout = attn.getLayout() == Layout::bhnd ? ::attn::ref::Layout::BHND
                                                   : ::attn::ref::Layout::BNHD;
    ::attn::ref::Inputs in;
    auto q = bound.tensor(attn.getQuery());
    if (!q)
      return q.takeError();
    auto k = bound.tensor(attn.getKey());
    if (!k)
      return k.takeError();
    auto v = bound.tensor(attn.getValue());
    if (!v)
      return v.takeError();
    in.q = *q;
    in.k = *k;
    in.v = *v;
    in.vFromK = attn.getVFromK();
    // Quantized K/V: k and v hold the raw values (HostTensor decodes fp8
    // exactly), the reference multiplies by the scales.
    auto kScale = bound.tensor(attn.getKScale());
    if (!kScale)
      return kScale.takeError();
    auto vScale = bound.tensor(attn.getVScale());
    if (!vScale)
      return vScale.takeError();
    in.kScale = *kScale;
    in.vScale = *vScale;
    auto pageTable = bound.tensor(attn.getPageTable());
    if (!pageTable)
      return pageTable.takeError();
    in.pageTable = *pageTable;
    if (attn.isRagged()) {
      if (llvm::Error err = bound.ints(attn.getCuSeqlensQ(), bound.cuQ))
        return err;
      in.cuSeqlensQ = &bound.cuQ;
      if (Value cuK = attn.getCuSeqlensK()) {
        if (llvm::Error err = bound.ints(cuK, bound.cuK))
          return err;
        in.cuSeqlensK = &bound.cuK;
      }
    }
    if (llvm::Error err = bindModifiers(attn, bound, spec, in))
      return err;
    ::attn::ref::Outputs result;
    std::string msg = ::attn::ref::attention(spec, in, result);
    if (!msg.empty())
      return makeError("reference: " + msg);
    if (flops)
      *flops = ::attn::ref::attentionFlops(spec, in);
    outs.push_back(std::move(result.out));
    if (attn.getLse())
      outs.push_back(std::move(result.lse));
    return llvm::Error::success();
  }
  if (auto proj = dyn_cast<ProjectedAttentionOp>(op)) {
    ::attn::ref::Spec spec = specOf(proj);
    ::attn::ref::Inputs in;
    if (llvm::Error err = bindModifiers(proj, bound, spec, in))
      return err;
    auto xq = bound.tensor(proj.getXq());
    if (!xq)
      return xq.takeError();
    auto xkv = bound.tensor(proj.getKvSource());
    if (!xkv)
      return xkv.takeError();
    std::vector<const ::attn::ref::Tensor *> w;
    for (Value wv : {proj.getWq(), proj.getWk(), proj.getWv(), proj.getWo()}) {
      auto t = bound.tensor(wv);
      if (!t)
        return t.takeError();
      w.push_back(*t);
    }
    ::attn::ref::Tensor result;
    std::string msg = ::attn::ref::projectedAttention(
        spec, proj.getNumQueryHeads(), proj.getNumKvHeads(), **xq, **xkv, *w[0],
        *w[1], *w[2], *w[3], in, result);
    if (!msg.empty())
      return makeError("reference: " + msg);
    if (flops) {
      // Projections: 2*M*K*N each; attention part is not separated out.
      auto rows = [](const ::attn::ref::Tensor &t) {
        return t.shape[0] * t.shape[1];
      };
      double f = 0;
      f += 2.0 * rows(**xq) * w[0]->shape[0] * w[0]->shape[1];
      f += 2.0 * rows(**xkv) * w[1]->shape[0] * w[1]->shape[1];
      f += 2.0 * rows(**xkv) * w[2]->shape[0] * w[2]->shape[1];
      f += 2.0 * rows(**xq) * w[3]->shape[0] * w[3]->shape[1];
      *flops = f;
    }
    outs.push_back(std::move(result));
    return llvm::Error::success();
  }
  return makeError("not an attn op: " + op->getName().getStringRef());
}

Comparison mlir::attn::compare(const HostTensor &actual,
                               const ::attn::ref::Tensor &expected, double atol,
                               double rtol) {
  Comparison c;
  int64_t n = actual.numElements();
  if (actual.shape != expected.shape) {
    c.mismatches = std::max<int64_t>(n, 1);
    c.firstMismatch = 0;
    c.maxAbsError = INFINITY;
    return c;
  }
  for (int64_t i = 0; i < n; ++i) {
    double a = actual.get(i), e = expected.data[i];
    double abs;
    bool ok;
    if (!std::isfinite(e)) {
      // A non-finite reference value (lse = -inf of a fully masked row, NaN
      // propagated from NaN inputs) must be matched exactly: the bound
      // atol + rtol * |e| is infinite or NaN there.
      ok = (std::isnan(e) && std::isnan(a)) || a == e;
      abs = ok ? 0 : INFINITY;
    } else {
      abs = std::fabs(a - e);
      if (std::isnan(abs))
        abs = INFINITY;
      ok = abs <= atol + rtol * std::fabs(e);
    }
    double rel = abs / std::max(std::fabs(e), 1e-30);
    if (abs == 0)
      rel = 0;
    c.maxAbsError = std::max(c.maxAbsError, abs);
    if (std::fabs(e) > atol)
      c.maxRelError = std::max(c.maxRelError, rel);
    if (!ok) {
      if (c.firstMismatch < 0)
        c.firstMismatch = i;
      ++c.mismatches;
    }
  }
  return c;
}

void mlir::attn::defaultTolerance(ElementKind kind, double &atol,
                                  double &rtol) {
  switch (kind) {
  case ElementKind::F16:
    atol = 2e-3;
    rtol = 1e-2;
    return;
  case ElementKind::BF16:
    atol = 2e-2;
    rtol = 4e-2;
    return;
  default:
    atol = 1e-4;
    rtol = 1e-3;
    return;
  }
}
