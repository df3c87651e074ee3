//===- ArithOps.cpp - arith, math and index ops, on scalars and vectors ---===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// Floats are held as doubles with the exact value of their type; every
// result is rounded to its type once (ties to even). For f16, bf16 and f32
// the double result of +, -, *, / and sqrt rounds to the same value as the
// operation done in the narrow type. Transcendental functions are evaluated
// in double and rounded: more accurate than ex2.approx on a GPU.
//
//===----------------------------------------------------------------------===//

#include "Interp.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Index/IR/IndexOps.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::attn::gpuemu;

unsigned mlir::attn::gpuemu::numElems(Type type) {
  if (auto v = dyn_cast<VectorType>(type))
    return static_cast<unsigned>(v.getNumElements());
  if (auto st = dyn_cast<LLVM::LLVMStructType>(type))
    return static_cast<unsigned>(st.getBody().size());
  return 1;
}

LogicalResult mlir::attn::gpuemu::valueKind(Interp &in, Operation *op,
                                            Type type, EK &kind) {
  if (!kindOf(type, kind))
    return in.fail(op, "unsupported element type in the GPU emulator");
  return success();
}

/// Applies `fn(const Slot *operands) -> Slot` to every element of every
/// active thread (once if all operands are uniform). Operands with one
/// element are broadcast (scalar conditions of arith.select on vectors).
template <typename F>
static LogicalResult elementwise(Interp &in, Operation *op, Frame &f, F fn) {
  SmallVector<Val *, 3> args;
  bool uniform = true;
  for (Value v : op->getOperands()) {
    args.push_back(&in.get(f, v));
    uniform &= args.back()->uniform;
  }
  unsigned n = numElems(op->getResult(0).getType());
  Val &r = in.def(f, op->getResult(0), n, uniform);
  Slot tmp[3];
  size_t na = args.size();
  in.forResult(f, uniform, [&](unsigned l) {
    for (unsigned e = 0; e < n; ++e) {
      for (size_t i = 0; i < na; ++i)
        tmp[i] = args[i]->at(l, args[i]->n == 1 ? 0 : e);
      r.at(l, e) = fn(tmp);
    }
  });
  return success();
}

static uint64_t unsignedOf(EK k, int64_t x) {
  unsigned w = bitWidth(k);
  uint64_t u = static_cast<uint64_t>(x);
  return w == 64 ? u : u & ((uint64_t(1) << w) - 1);
}

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

static LogicalResult execConstant(Interp &in, Operation *op, Frame &f) {
  auto c = cast<arith::ConstantOp>(op);
  Type t = c.getType();
  EK k;
  if (failed(valueKind(in, op, t, k)))
    return failure();
  unsigned n = numElems(t);
  Val &r = in.def(f, c.getResult(), n, true);
  auto fromAttr = [&](Attribute a) {
    Slot s;
    if (auto fa = dyn_cast<FloatAttr>(a))
      s.f = fa.getValueAsDouble();
    else
      s.i = wrapInt(k, cast<IntegerAttr>(a).getValue().getSExtValue());
    if (auto ia = dyn_cast<IntegerAttr>(a); ia && k == EK::I1)
      s.i = ia.getValue().getBoolValue() ? 1 : 0;
    return s;
  };
  Attribute value = c.getValue();
  if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
    if (dense.isSplat()) {
      Slot s = fromAttr(dense.getSplatValue<Attribute>());
      for (unsigned e = 0; e < n; ++e)
        r.data[e] = s;
    } else {
      unsigned e = 0;
      for (Attribute a : dense.getValues<Attribute>())
        r.data[e++] = fromAttr(a);
    }
    return success();
  }
  if (isa<IntegerAttr, FloatAttr>(value)) {
    r.data[0] = fromAttr(value);
    return success();
  }
  return in.fail(op, "unsupported constant");
}

static LogicalResult execPoison(Interp &in, Operation *op, Frame &f) {
  Type t = op->getResult(0).getType();
  unsigned n = numElems(t);
  Val &r = in.def(f, op->getResult(0), n, true);
  for (unsigned e = 0; e < n; ++e)
    r.data[e].i = 0;
  return success();
}

//===----------------------------------------------------------------------===//
// Integer ops
//===----------------------------------------------------------------------===//

enum class IntOp {
  Add,
  Sub,
  Mul,
  DivS,
  DivU,
  RemS,
  RemU,
  FloorDivS,
  CeilDivS,
  CeilDivU,
  MinS,
  MaxS,
  MinU,
  MaxU,
  And,
  Or,
  Xor,
  Shl,
  ShrS,
  ShrU
};

template <IntOp K>
static LogicalResult execIntBinary(Interp &in, Operation *op, Frame &f) {
  EK k;
  if (failed(valueKind(in, op, op->getResult(0).getType(), k)))
    return failure();
  bool divByZero = false;
  unsigned w = bitWidth(k);
  LogicalResult res = elementwise(in, op, f, [&](const Slot *a) {
    int64_t x = a[0].i, y = a[1].i;
    uint64_t ux = unsignedOf(k, x), uy = unsignedOf(k, y);
    int64_t z = 0;
    switch (K) {
    case IntOp::Add:
      z = static_cast<int64_t>(static_cast<uint64_t>(x) +
                               static_cast<uint64_t>(y));
      break;
    case IntOp::Sub:
      z = static_cast<int64_t>(static_cast<uint64_t>(x) -
                               static_cast<uint64_t>(y));
      break;
    case IntOp::Mul:
      z = static_cast<int64_t>(static_cast<uint64_t>(x) *
                               static_cast<uint64_t>(y));
      break;
    case IntOp::DivS:
    case IntOp::RemS:
    case IntOp::FloorDivS:
    case IntOp::CeilDivS:
      if (y == 0 || (y == -1 && x == std::numeric_limits<int64_t>::min())) {
        divByZero = y == 0;
        break;
      }
      if (K == IntOp::DivS)
        z = x / y;
      else if (K == IntOp::RemS)
        z = x % y;
      else if (K == IntOp::FloorDivS)
        z = x / y - ((x % y != 0) && ((x < 0) != (y < 0)) ? 1 : 0);
      else
        z = x / y + ((x % y != 0) && ((x < 0) == (y < 0)) ? 1 : 0);
      break;
    case IntOp::DivU:
    case IntOp::RemU:
    case IntOp::CeilDivU:
      if (uy == 0) {
        divByZero = true;
        break;
      }
      z = static_cast<int64_t>(K == IntOp::DivU   ? ux / uy
                               : K == IntOp::RemU ? ux % uy
                                                  : (ux + uy - 1) / uy);
      break;
    case IntOp::MinS:
      z = std::min(x, y);
      break;
    case IntOp::MaxS:
      z = std::max(x, y);
      break;
    case IntOp::MinU:
      z = ux < uy ? x : y;
      break;
    case IntOp::MaxU:
      z = ux > uy ? x : y;
      break;
    case IntOp::And:
      z = x & y;
      break;
    case IntOp::Or:
      z = x | y;
      break;
    case IntOp::Xor:
      z = x ^ y;
      break;
    case IntOp::Shl:
      z = uy >= w ? 0 : static_cast<int64_t>(ux << uy);
      break;
    case IntOp::ShrS:
      z = uy >= w ? (x < 0 ? -1 : 0) : x >> uy;
      break;
    case IntOp::ShrU:
      z = uy >= w ? 0 : static_cast<int64_t>(ux >> uy);
      break;
    }
    Slot s;
    s.i = wrapInt(k, z);
    return s;
  });
  if (divByZero)
    return in.fail(op, "integer division by zero");
  return res;
}

static bool cmpInt(arith::CmpIPredicate p, EK k, int64_t x, int64_t y) {
  uint64_t ux = unsignedOf(k, x), uy = unsignedOf(k, y);
  switch (p) {
  case arith::CmpIPredicate::eq:
    return x == y;
  case arith::CmpIPredicate::ne:
    return x != y;
  case arith::CmpIPredicate::slt:
    return x < y;
  case arith::CmpIPredicate::sle:
    return x <= y;
  case arith::CmpIPredicate::sgt:
    return x > y;
  case arith::CmpIPredicate::sge:
    return x >= y;
  case arith::CmpIPredicate::ult:
    return ux < uy;
  case arith::CmpIPredicate::ule:
    return ux <= uy;
  case arith::CmpIPredicate::ugt:
    return ux > uy;
  case arith::CmpIPredicate::uge:
    return ux >= uy;
  }
  return false;
}

static LogicalResult execCmpI(Interp &in, Operation *op, Frame &f) {
  auto c = cast<arith::CmpIOp>(op);
  EK k;
  if (failed(valueKind(in, op, c.getLhs().getType(), k)))
    return failure();
  arith::CmpIPredicate p = c.getPredicate();
  return elementwise(in, op, f, [&](const Slot *a) {
    Slot s;
    s.i = cmpInt(p, k, a[0].i, a[1].i) ? 1 : 0;
    return s;
  });
}

static LogicalResult execCmpF(Interp &in, Operation *op, Frame &f) {
  auto c = cast<arith::CmpFOp>(op);
  arith::CmpFPredicate p = c.getPredicate();
  return elementwise(in, op, f, [&](const Slot *a) {
    double x = a[0].f, y = a[1].f;
    bool unord = std::isnan(x) || std::isnan(y);
    bool r = false;
    switch (p) {
    case arith::CmpFPredicate::AlwaysFalse:
      r = false;
      break;
    case arith::CmpFPredicate::OEQ:
      r = !unord && x == y;
      break;
    case arith::CmpFPredicate::OGT:
      r = !unord && x > y;
      break;
    case arith::CmpFPredicate::OGE:
      r = !unord && x >= y;
      break;
    case arith::CmpFPredicate::OLT:
      r = !unord && x < y;
      break;
    case arith::CmpFPredicate::OLE:
      r = !unord && x <= y;
      break;
    case arith::CmpFPredicate::ONE:
      r = !unord && x != y;
      break;
    case arith::CmpFPredicate::ORD:
      r = !unord;
      break;
    case arith::CmpFPredicate::UEQ:
      r = unord || x == y;
      break;
    case arith::CmpFPredicate::UGT:
      r = unord || x > y;
      break;
    case arith::CmpFPredicate::UGE:
      r = unord || x >= y;
      break;
    case arith::CmpFPredicate::ULT:
      r = unord || x < y;
      break;
    case arith::CmpFPredicate::ULE:
      r = unord || x <= y;
      break;
    case arith::CmpFPredicate::UNE:
      r = unord || x != y;
      break;
    case arith::CmpFPredicate::UNO:
      r = unord;
      break;
    case arith::CmpFPredicate::AlwaysTrue:
      r = true;
      break;
    }
    Slot s;
    s.i = r ? 1 : 0;
    return s;
  });
}

static LogicalResult execSelect(Interp &in, Operation *op, Frame &f) {
  if (isa<MemRefType>(op->getResult(0).getType()))
    return in.fail(op, "select of memrefs is not emulated");
  return elementwise(in, op, f,
                     [&](const Slot *a) { return a[0].i ? a[1] : a[2]; });
}

//===----------------------------------------------------------------------===//
// Float ops
//===----------------------------------------------------------------------===//

enum class FOp {
  Add,
  Sub,
  Mul,
  Div,
  Rem,
  Neg,
  Maximum,
  Minimum,
  MaxNum,
  MinNum,
  Exp2,
  Exp,
  Log,
  Log2,
  Tanh,
  Abs,
  Sqrt,
  Rsqrt,
  Fma,
  Floor,
  Ceil,
  RoundEven
};

template <FOp K>
static LogicalResult execFloat(Interp &in, Operation *op, Frame &f) {
  EK k;
  if (failed(valueKind(in, op, op->getResult(0).getType(), k)))
    return failure();
  return elementwise(in, op, f, [&](const Slot *a) {
    double x = a[0].f, y = 0, z = 0;
    if constexpr (K == FOp::Add || K == FOp::Sub || K == FOp::Mul ||
                  K == FOp::Div || K == FOp::Rem || K == FOp::Maximum ||
                  K == FOp::Minimum || K == FOp::MaxNum || K == FOp::MinNum ||
                  K == FOp::Fma)
      y = a[1].f;
    if constexpr (K == FOp::Fma)
      z = a[2].f;
    double r = 0;
    switch (K) {
    case FOp::Add:
      r = x + y;
      break;
    case FOp::Sub:
      r = x - y;
      break;
    case FOp::Mul:
      r = x * y;
      break;
    case FOp::Div:
      r = x / y;
      break;
    case FOp::Rem:
      r = std::fmod(x, y);
      break;
    case FOp::Neg:
      r = -x;
      break;
    case FOp::Maximum:
      r = std::isnan(x) || std::isnan(y) ? NAN
          : x == y                       ? (std::signbit(x) ? y : x)
                                         : std::max(x, y);
      break;
    case FOp::Minimum:
      r = std::isnan(x) || std::isnan(y) ? NAN
          : x == y                       ? (std::signbit(x) ? x : y)
                                         : std::min(x, y);
      break;
    case FOp::MaxNum:
      r = std::fmax(x, y);
      break;
    case FOp::MinNum:
      r = std::fmin(x, y);
      break;
    case FOp::Exp2:
      r = std::exp2(x);
      break;
    case FOp::Exp:
      r = std::exp(x);
      break;
    case FOp::Log:
      r = std::log(x);
      break;
    case FOp::Log2:
      r = std::log2(x);
      break;
    case FOp::Tanh:
      r = std::tanh(x);
      break;
    case FOp::Abs:
      r = std::fabs(x);
      break;
    case FOp::Sqrt:
      r = std::sqrt(x);
      break;
    case FOp::Rsqrt:
      r = 1.0 / std::sqrt(x);
      break;
    case FOp::Fma:
      r = k == EK::F32 ? static_cast<double>(std::fmaf(static_cast<float>(x),
                                                       static_cast<float>(y),
                                                       static_cast<float>(z)))
                       : std::fma(x, y, z);
      break;
    case FOp::Floor:
      r = std::floor(x);
      break;
    case FOp::Ceil:
      r = std::ceil(x);
      break;
    case FOp::RoundEven:
      // Ties to even in the default rounding mode.
      r = std::nearbyint(x);
      break;
    }
    Slot s;
    s.f = roundTo(k, r);
    return s;
  });
}

//===----------------------------------------------------------------------===//
// Casts
//===----------------------------------------------------------------------===//

enum class Cast {
  IndexCast,
  IndexCastUI,
  ExtSI,
  ExtUI,
  TruncI,
  ExtF,
  TruncF,
  SIToFP,
  UIToFP,
  FPToSI,
  FPToUI,
  Bitcast
};

template <Cast K>
static LogicalResult execCast(Interp &in, Operation *op, Frame &f) {
  EK src, dst;
  if (failed(valueKind(in, op, op->getOperand(0).getType(), src)) ||
      failed(valueKind(in, op, op->getResult(0).getType(), dst)))
    return failure();
  if (K == Cast::TruncF && op->hasAttr("roundingmode")) {
    auto t = cast<arith::TruncFOp>(op);
    if (t.getRoundingmode() &&
        *t.getRoundingmode() != arith::RoundingMode::to_nearest_even)
      return in.fail(op, "only round-to-nearest-even truncf is emulated");
  }
  bool outOfRange = false;
  LogicalResult res = elementwise(in, op, f, [&](const Slot *a) {
    Slot s = a[0];
    switch (K) {
    case Cast::IndexCast:
    case Cast::ExtSI:
    case Cast::TruncI:
      s.i = src == EK::I1 && K == Cast::ExtSI ? -a[0].i : wrapInt(dst, a[0].i);
      break;
    case Cast::IndexCastUI:
    case Cast::ExtUI:
      s.i = wrapInt(dst, static_cast<int64_t>(unsignedOf(src, a[0].i)));
      break;
    case Cast::ExtF:
      break;
    case Cast::TruncF:
      s.f = roundTo(dst, a[0].f);
      break;
    case Cast::SIToFP:
      s.f = roundTo(dst, static_cast<double>(a[0].i));
      break;
    case Cast::UIToFP:
      s.f = roundTo(dst, static_cast<double>(unsignedOf(src, a[0].i)));
      break;
    case Cast::FPToSI:
    case Cast::FPToUI: {
      double t = std::trunc(a[0].f);
      if (!std::isfinite(t) || std::fabs(t) > 9.2e18)
        outOfRange = true;
      else
        s.i = wrapInt(dst, static_cast<int64_t>(t));
      break;
    }
    case Cast::Bitcast:
      s = fromBits(dst, toBits(src, a[0]));
      break;
    }
    return s;
  });
  if (outOfRange)
    return in.fail(op, "float to integer conversion out of range");
  return res;
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

void mlir::attn::gpuemu::registerArithHandlers(Interp &in) {
  in.registerHandler(TypeID::get<arith::ConstantOp>(), execConstant);
  in.registerHandler(TypeID::get<ub::PoisonOp>(), execPoison);
#define INT(OP, K)                                                             \
  in.registerHandler(TypeID::get<OP>(), execIntBinary<IntOp::K>);
  INT(arith::AddIOp, Add)
  INT(arith::SubIOp, Sub)
  INT(arith::MulIOp, Mul)
  INT(arith::DivSIOp, DivS)
  INT(arith::DivUIOp, DivU)
  INT(arith::RemSIOp, RemS)
  INT(arith::RemUIOp, RemU)
  INT(arith::FloorDivSIOp, FloorDivS)
  INT(arith::CeilDivSIOp, CeilDivS)
  INT(arith::CeilDivUIOp, CeilDivU)
  INT(arith::MinSIOp, MinS)
  INT(arith::MaxSIOp, MaxS)
  INT(arith::MinUIOp, MinU)
  INT(arith::MaxUIOp, MaxU)
  INT(arith::AndIOp, And)
  INT(arith::OrIOp, Or)
  INT(arith::XOrIOp, Xor)
  INT(arith::ShLIOp, Shl)
  INT(arith::ShRSIOp, ShrS)
  INT(arith::ShRUIOp, ShrU)
  INT(index::AddOp, Add)
  INT(index::SubOp, Sub)
  INT(index::MulOp, Mul)
  INT(index::DivSOp, DivS)
  INT(index::DivUOp, DivU)
  INT(index::RemSOp, RemS)
  INT(index::RemUOp, RemU)
  INT(index::FloorDivSOp, FloorDivS)
  INT(index::CeilDivSOp, CeilDivS)
  INT(index::CeilDivUOp, CeilDivU)
  INT(index::MinSOp, MinS)
  INT(index::MaxSOp, MaxS)
  INT(index::MinUOp, MinU)
  INT(index::MaxUOp, MaxU)
  INT(index::AndOp, And)
  INT(index::OrOp, Or)
  INT(index::XOrOp, Xor)
  INT(index::ShlOp, Shl)
  INT(index::ShrSOp, ShrS)
  INT(index::ShrUOp, ShrU)
#undef INT
  in.registerHandler(TypeID::get<arith::CmpIOp>(), execCmpI);
  in.registerHandler(TypeID::get<arith::CmpFOp>(), execCmpF);
  in.registerHandler(TypeID::get<arith::SelectOp>(), execSelect);
#define FLT(OP, K) in.registerHandler(TypeID::get<OP>(), execFloat<FOp::K>);
  FLT(arith::AddFOp, Add)
  FLT(arith::SubFOp, Sub)
  FLT(arith::MulFOp, Mul)
  FLT(arith::DivFOp, Div)
  FLT(arith::RemFOp, Rem)
  FLT(arith::NegFOp, Neg)
  FLT(arith::MaximumFOp, Maximum)
  FLT(arith::MinimumFOp, Minimum)
  FLT(arith::MaxNumFOp, MaxNum)
  FLT(arith::MinNumFOp, MinNum)
  FLT(math::Exp2Op, Exp2)
  FLT(math::ExpOp, Exp)
  FLT(math::LogOp, Log)
  FLT(math::Log2Op, Log2)
  FLT(math::TanhOp, Tanh)
  FLT(math::AbsFOp, Abs)
  FLT(math::SqrtOp, Sqrt)
  FLT(math::RsqrtOp, Rsqrt)
  FLT(math::FmaOp, Fma)
  FLT(math::FloorOp, Floor)
  FLT(math::CeilOp, Ceil)
  FLT(math::RoundEvenOp, RoundEven)
#undef FLT
#define CAST(OP, K) in.registerHandler(TypeID::get<OP>(), execCast<Cast::K>);
  CAST(arith::IndexCastOp, IndexCast)
  CAST(arith::IndexCastUIOp, IndexCastUI)
  CAST(arith::ExtSIOp, ExtSI)
  CAST(arith::ExtUIOp, ExtUI)
  CAST(arith::TruncIOp, TruncI)
  CAST(arith::ExtFOp, ExtF)
  CAST(arith::TruncFOp, TruncF)
  CAST(arith::SIToFPOp, SIToFP)
  CAST(arith::UIToFPOp, UIToFP)
  CAST(arith::FPToSIOp, FPToSI)
  CAST(arith::FPToUIOp, FPToUI)
  CAST(arith::BitcastOp, Bitcast)
#undef CAST
}
