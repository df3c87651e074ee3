//===- RegionEval.cpp - f64 evaluation of score/mask regions --------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// The reference's own interpreter of score_mod / mask_mod programs
// (RegionProgram): integers with the bit width of their type, floats in
// double, every undefined operation an error. Like the rest of the
// reference, it shares no code with the compiler.
//
//===----------------------------------------------------------------------===//

#include "attn/Reference/Reference.h"

#include "Internal.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <tuple>

using namespace attn::ref;
using attn::ref::detail::roundHalfEven;
using attn::ref::detail::shapeStr;

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
} // namespace

//===----------------------------------------------------------------------===//
// score_mod / mask_mod programs
//===----------------------------------------------------------------------===//

namespace {

/// A region value: integers in `i` (sign-extended from their width, so i1
/// true is -1 here and reads as 1 through its unsigned value), floats in `f`.
struct Val {
  int64_t i = 0;
  double f = 0.0;
};

/// Sign-extends the low `bits` bits of `v`.
int64_t sext(uint64_t v, unsigned bits) {
  if (bits >= 64)
    return static_cast<int64_t>(v);
  unsigned shift = 64 - bits;
  return static_cast<int64_t>(v << shift) >> shift;
}

/// The low `bits` bits of `v`, zero-extended.
uint64_t zext(int64_t v, unsigned bits) {
  uint64_t u = static_cast<uint64_t>(v);
  return bits >= 64 ? u : u & ((uint64_t(1) << bits) - 1);
}

int64_t minSigned(unsigned bits) {
  return bits >= 64 ? std::numeric_limits<int64_t>::min()
                    : -(int64_t(1) << (bits - 1));
}

/// Rounds a float result to its type: f16 and bf16 exactly, f32 and f64 are
/// kept in double.
double roundFloat(ScalarKind kind, double x) {
  switch (kind) {
  case ScalarKind::F16:
    return roundToF16(static_cast<float>(x));
  case ScalarKind::BF16:
    return roundToBF16(static_cast<float>(x));
  default:
    return x;
  }
}

const char *typeName(ScalarType t, std::string &buf) {
  switch (t.kind) {
  case ScalarKind::F16:
    return "f16";
  case ScalarKind::BF16:
    return "bf16";
  case ScalarKind::F32:
    return "f32";
  case ScalarKind::F64:
    return "f64";
  case ScalarKind::Int:
    break;
  }
  buf = "i" + std::to_string(t.bits);
  return buf.c_str();
}

/// Number of operands of each opcode (-1: any, checked elsewhere).
int arity(Opcode op) {
  switch (op) {
  case Opcode::Arg:
  case Opcode::Constant:
    return 0;
  case Opcode::AbsI:
  case Opcode::ExtSI:
  case Opcode::ExtUI:
  case Opcode::TruncI:
  case Opcode::IndexCast:
  case Opcode::IndexCastUI:
  case Opcode::SIToFP:
  case Opcode::UIToFP:
  case Opcode::FPToSI:
  case Opcode::FPToUI:
  case Opcode::ExtF:
  case Opcode::TruncF:
  case Opcode::Bitcast:
  case Opcode::NegF:
  case Opcode::AbsF:
  case Opcode::Tanh:
  case Opcode::Exp:
  case Opcode::Exp2:
  case Opcode::ExpM1:
  case Opcode::Log:
  case Opcode::Log2:
  case Opcode::Log10:
  case Opcode::Log1p:
  case Opcode::Sqrt:
  case Opcode::Rsqrt:
  case Opcode::Cbrt:
  case Opcode::Floor:
  case Opcode::Ceil:
  case Opcode::Round:
  case Opcode::RoundEven:
  case Opcode::Trunc:
  case Opcode::Sin:
  case Opcode::Cos:
  case Opcode::Tan:
  case Opcode::Asin:
  case Opcode::Acos:
  case Opcode::Atan:
  case Opcode::Sinh:
  case Opcode::Cosh:
  case Opcode::Asinh:
  case Opcode::Acosh:
  case Opcode::Atanh:
  case Opcode::Erf:
  case Opcode::Erfc:
  case Opcode::IsNaN:
  case Opcode::IsInf:
  case Opcode::IsFinite:
  case Opcode::CountLeadingZeros:
  case Opcode::CountTrailingZeros:
  case Opcode::CtPop:
  case Opcode::Dim:
    return 1;
  case Opcode::Select:
  case Opcode::Fma:
    return 3;
  case Opcode::Extract:
    return -1;
  default:
    return 2;
  }
}

/// Whether the operands of `op` are floats (else integers).
bool floatOperands(Opcode op) {
  switch (op) {
  case Opcode::FPToSI:
  case Opcode::FPToUI:
  case Opcode::ExtF:
  case Opcode::TruncF:
  case Opcode::AddF:
  case Opcode::SubF:
  case Opcode::MulF:
  case Opcode::DivF:
  case Opcode::RemF:
  case Opcode::NegF:
  case Opcode::MaximumF:
  case Opcode::MinimumF:
  case Opcode::MaxNumF:
  case Opcode::MinNumF:
  case Opcode::CmpF:
  case Opcode::AbsF:
  case Opcode::CopySign:
  case Opcode::PowF:
  case Opcode::Fma:
  case Opcode::Atan2:
  case Opcode::IsNaN:
  case Opcode::IsInf:
  case Opcode::IsFinite:
    return true;
  default:
    return Opcode::Tanh <= op && op <= Opcode::Erfc; // unary float math
  }
}

bool cmpF(CmpFPred p, double a, double b) {
  bool unordered = std::isnan(a) || std::isnan(b);
  switch (p) {
  case CmpFPred::AlwaysFalse:
    return false;
  case CmpFPred::AlwaysTrue:
    return true;
  case CmpFPred::ord:
    return !unordered;
  case CmpFPred::uno:
    return unordered;
  case CmpFPred::oeq:
    return !unordered && a == b;
  case CmpFPred::ogt:
    return !unordered && a > b;
  case CmpFPred::oge:
    return !unordered && a >= b;
  case CmpFPred::olt:
    return !unordered && a < b;
  case CmpFPred::ole:
    return !unordered && a <= b;
  case CmpFPred::one:
    return !unordered && a != b;
  case CmpFPred::ueq:
    return unordered || a == b;
  case CmpFPred::ugt:
    return unordered || a > b;
  case CmpFPred::uge:
    return unordered || a >= b;
  case CmpFPred::ult:
    return unordered || a < b;
  case CmpFPred::ule:
    return unordered || a <= b;
  case CmpFPred::une:
    return unordered || a != b;
  }
  return false;
}

bool cmpI(CmpIPred p, int64_t a, int64_t b, unsigned bits) {
  uint64_t ua = zext(a, bits), ub = zext(b, bits);
  switch (p) {
  case CmpIPred::eq:
    return a == b;
  case CmpIPred::ne:
    return a != b;
  case CmpIPred::slt:
    return a < b;
  case CmpIPred::sle:
    return a <= b;
  case CmpIPred::sgt:
    return a > b;
  case CmpIPred::sge:
    return a >= b;
  case CmpIPred::ult:
    return ua < ub;
  case CmpIPred::ule:
    return ua <= ub;
  case CmpIPred::ugt:
    return ua > ub;
  case CmpIPred::uge:
    return ua >= ub;
  }
  return false;
}

/// maximumf / minimumf: NaN if either is NaN, -0 < +0.
double maximumF(double a, double b, bool isMax) {
  if (std::isnan(a) || std::isnan(b))
    return kNaN;
  if (a == b && a == 0.0)
    return (std::signbit(a) == isMax) ? b : a;
  return isMax ? std::max(a, b) : std::min(a, b);
}

/// math.ipowi: wrapping integer power; negative exponents give 1/x^n
/// truncated (0 unless |x| == 1); 0 to a negative power is an error.
bool ipowi(int64_t x, int64_t n, unsigned bits, int64_t &r) {
  if (n < 0) {
    if (x == 0)
      return false;
    if (x == 1)
      r = 1;
    else if (x == -1)
      r = (n % 2 == 0) ? 1 : -1;
    else
      r = 0;
    return true;
  }
  uint64_t acc = 1, base = static_cast<uint64_t>(x);
  for (uint64_t e = static_cast<uint64_t>(n); e; e >>= 1) {
    if (e & 1)
      acc *= base;
    base *= base;
  }
  r = sext(acc, bits);
  return true;
}

} // namespace

std::string attn::ref::evaluateRegion(
    const RegionProgram &program, const char *what, const int64_t idx[4],
    double s, const std::vector<const Tensor *> &modInputs, double &result) {
  const size_t n = program.instrs.size();
  // A fresh vector per call keeps the function reentrant; programs are small.
  std::vector<Val> vals(n);
  auto where = [&]() {
    return " at (b, h, i, j) = (" + std::to_string(idx[0]) + ", " +
           std::to_string(idx[1]) + ", " + std::to_string(idx[2]) + ", " +
           std::to_string(idx[3]) + ")";
  };
  for (size_t k = 0; k < n; ++k) {
    const Instr &in = program.instrs[k];
    auto fail = [&](const std::string &msg) {
      std::string op = in.name.empty() ? "" : " ('" + in.name + "')";
      return std::string(what) + " instruction " + std::to_string(k) + op +
             ": " + msg;
    };
    int want = arity(in.op);
    if (want >= 0 && static_cast<int>(in.operands.size()) != want)
      return fail("expected " + std::to_string(want) + " operands, got " +
                  std::to_string(in.operands.size()));
    for (int o : in.operands)
      if (o < 0 || static_cast<size_t>(o) >= k)
        return fail("operand " + std::to_string(o) +
                    " is not an earlier instruction");
    if (in.type.kind == ScalarKind::Int &&
        (in.type.bits < 1 || in.type.bits > 64))
      return fail("integer width " + std::to_string(in.type.bits) +
                  " is not in 1..64");
    const unsigned bits = in.type.bits;
    const bool resFloat = in.type.isFloat();
    // Operand types as the instruction reads them.
    auto opType = [&](int i) { return program.instrs[in.operands[i]].type; };
    if (in.op != Opcode::Extract && in.op != Opcode::Dim &&
        in.op != Opcode::Select && in.op != Opcode::FPowI &&
        in.op != Opcode::Bitcast)
      for (size_t i = 0; i < in.operands.size(); ++i)
        if (opType(static_cast<int>(i)).isFloat() != floatOperands(in.op))
          return fail(std::string("operand ") + std::to_string(i) +
                      " should be " +
                      (floatOperands(in.op) ? "a float" : "an integer"));
    auto I = [&](int i) { return vals[in.operands[i]].i; };
    auto F = [&](int i) { return vals[in.operands[i]].f; };
    // The operands' width (integer ops take operands of the result's width,
    // comparisons and casts read their operand's).
    const unsigned obits = in.operands.empty() ? bits : opType(0).bits;
    Val v;
    auto setI = [&](uint64_t x) { v.i = sext(x, bits); };
    auto setF = [&](double x) { v.f = roundFloat(in.type.kind, x); };
    auto setB = [&](bool b) { v.i = b ? -1 : 0; };
    auto u = [&](int i) { return zext(I(i), obits); };
    switch (in.op) {
    case Opcode::Arg:
      if (in.arg < 0 || in.arg > 4)
        return fail("block argument " + std::to_string(in.arg) +
                    " does not exist");
      if (in.arg == 4)
        v.f = s;
      else
        v.i = idx[in.arg];
      break;
    case Opcode::Constant:
      if (resFloat)
        setF(in.fvalue);
      else
        setI(static_cast<uint64_t>(in.ivalue));
      break;
    case Opcode::AddI:
      setI(static_cast<uint64_t>(I(0)) + static_cast<uint64_t>(I(1)));
      break;
    case Opcode::SubI:
      setI(static_cast<uint64_t>(I(0)) - static_cast<uint64_t>(I(1)));
      break;
    case Opcode::MulI:
      setI(static_cast<uint64_t>(I(0)) * static_cast<uint64_t>(I(1)));
      break;
    case Opcode::DivSI:
    case Opcode::RemSI:
    case Opcode::FloorDivSI:
    case Opcode::CeilDivSI: {
      int64_t a = I(0), b = I(1);
      if (b == 0)
        return fail("division by zero" + where());
      if (b == -1 && a == minSigned(bits))
        return fail("signed division overflows" + where());
      int64_t q = a / b, r = a % b;
      if (in.op == Opcode::RemSI)
        setI(static_cast<uint64_t>(r));
      else if (in.op == Opcode::FloorDivSI)
        setI(static_cast<uint64_t>(r != 0 && ((a < 0) != (b < 0)) ? q - 1 : q));
      else if (in.op == Opcode::CeilDivSI)
        setI(static_cast<uint64_t>(r != 0 && ((a < 0) == (b < 0)) ? q + 1 : q));
      else
        setI(static_cast<uint64_t>(q));
      break;
    }
    case Opcode::DivUI:
    case Opcode::RemUI:
    case Opcode::CeilDivUI: {
      uint64_t a = u(0), b = u(1);
      if (b == 0)
        return fail("division by zero" + where());
      if (in.op == Opcode::RemUI)
        setI(a % b);
      else if (in.op == Opcode::CeilDivUI)
        setI(a / b + (a % b != 0 ? 1 : 0));
      else
        setI(a / b);
      break;
    }
    case Opcode::MinSI:
      setI(static_cast<uint64_t>(std::min(I(0), I(1))));
      break;
    case Opcode::MaxSI:
      setI(static_cast<uint64_t>(std::max(I(0), I(1))));
      break;
    case Opcode::MinUI:
      setI(std::min(u(0), u(1)));
      break;
    case Opcode::MaxUI:
      setI(std::max(u(0), u(1)));
      break;
    case Opcode::AndI:
      setI(static_cast<uint64_t>(I(0) & I(1)));
      break;
    case Opcode::OrI:
      setI(static_cast<uint64_t>(I(0) | I(1)));
      break;
    case Opcode::XOrI:
      setI(static_cast<uint64_t>(I(0) ^ I(1)));
      break;
    case Opcode::ShLI:
    case Opcode::ShRSI:
    case Opcode::ShRUI: {
      uint64_t amount = u(1);
      if (amount >= bits)
        return fail("shift by " + std::to_string(amount) + " of an i" +
                    std::to_string(bits) + where());
      if (in.op == Opcode::ShLI)
        setI(static_cast<uint64_t>(I(0)) << amount);
      else if (in.op == Opcode::ShRSI)
        setI(static_cast<uint64_t>(I(0) >> amount));
      else
        setI(u(0) >> amount);
      break;
    }
    case Opcode::AbsI: {
      uint64_t a = static_cast<uint64_t>(I(0));
      setI(I(0) < 0 ? ~a + 1 : a);
      break;
    }
    case Opcode::CmpI:
      if (in.predicate < 0 || in.predicate > static_cast<int>(CmpIPred::uge))
        return fail("unknown cmpi predicate " + std::to_string(in.predicate));
      setB(cmpI(static_cast<CmpIPred>(in.predicate), I(0), I(1), obits));
      break;
    case Opcode::Select:
      if (opType(0).isFloat() || opType(1).isFloat() != resFloat ||
          opType(2).isFloat() != resFloat)
        return fail("operand types do not fit a select");
      v = vals[in.operands[I(0) != 0 ? 1 : 2]];
      break;
    case Opcode::ExtSI:
    case Opcode::TruncI:
    case Opcode::IndexCast:
      // The operand is sign-extended already: extending keeps the value,
      // truncating re-extends from the new width.
      setI(static_cast<uint64_t>(I(0)));
      break;
    case Opcode::ExtUI:
      setI(u(0));
      break;
    case Opcode::IndexCastUI:
      setI(bits > obits ? u(0) : static_cast<uint64_t>(I(0)));
      break;
    case Opcode::SIToFP:
      setF(static_cast<double>(I(0)));
      break;
    case Opcode::UIToFP:
      setF(static_cast<double>(u(0)));
      break;
    case Opcode::FPToSI:
    case Opcode::FPToUI: {
      double t = std::trunc(F(0));
      bool isSigned = in.op == Opcode::FPToSI;
      double lo = isSigned ? -std::ldexp(1.0, bits - 1) : 0.0;
      double hi = isSigned ? std::ldexp(1.0, bits - 1) : std::ldexp(1.0, bits);
      if (!(t >= lo && t < hi)) {
        std::string tn;
        return fail("converting " + std::to_string(F(0)) + " to " +
                    typeName(in.type, tn) + " is out of range" + where());
      }
      if (isSigned)
        setI(static_cast<uint64_t>(static_cast<int64_t>(t)));
      else
        setI(t >= std::ldexp(1.0, 63)
                 ? static_cast<uint64_t>(t - std::ldexp(1.0, 63)) +
                       (uint64_t(1) << 63)
                 : static_cast<uint64_t>(t));
      break;
    }
    case Opcode::ExtF:
      v.f = F(0);
      break;
    case Opcode::TruncF:
      v.f = in.type.kind == ScalarKind::F32
                ? static_cast<double>(static_cast<float>(F(0)))
                : roundFloat(in.type.kind, F(0));
      break;
    case Opcode::Bitcast: {
      ScalarType from = opType(0);
      if (resFloat == from.isFloat()) {
        v = vals[in.operands[0]];
        break;
      }
      if (in.type.kind == ScalarKind::F32 && from.bits == 32) {
        uint32_t b = static_cast<uint32_t>(zext(I(0), 32));
        float x;
        std::memcpy(&x, &b, sizeof x);
        v.f = x;
      } else if (in.type.kind == ScalarKind::F64 && from.bits == 64) {
        int64_t b = I(0);
        std::memcpy(&v.f, &b, sizeof v.f);
      } else if (from.kind == ScalarKind::F32 && bits == 32) {
        float x = static_cast<float>(F(0));
        uint32_t b;
        std::memcpy(&b, &x, sizeof b);
        setI(b);
      } else if (from.kind == ScalarKind::F64 && bits == 64) {
        double x = F(0);
        std::memcpy(&v.i, &x, sizeof x);
      } else {
        return fail("bitcast is supported between i32 and f32, i64 and f64 "
                    "only");
      }
      break;
    }
    case Opcode::AddF:
      setF(F(0) + F(1));
      break;
    case Opcode::SubF:
      setF(F(0) - F(1));
      break;
    case Opcode::MulF:
      setF(F(0) * F(1));
      break;
    case Opcode::DivF:
      setF(F(0) / F(1));
      break;
    case Opcode::RemF:
      setF(std::fmod(F(0), F(1)));
      break;
    case Opcode::NegF:
      setF(-F(0));
      break;
    case Opcode::MaximumF:
      setF(maximumF(F(0), F(1), true));
      break;
    case Opcode::MinimumF:
      setF(maximumF(F(0), F(1), false));
      break;
    case Opcode::MaxNumF:
      setF(std::fmax(F(0), F(1)));
      break;
    case Opcode::MinNumF:
      setF(std::fmin(F(0), F(1)));
      break;
    case Opcode::CmpF:
      if (in.predicate < 0 ||
          in.predicate > static_cast<int>(CmpFPred::AlwaysTrue))
        return fail("unknown cmpf predicate " + std::to_string(in.predicate));
      setB(cmpF(static_cast<CmpFPred>(in.predicate), F(0), F(1)));
      break;
    case Opcode::AbsF:
      setF(std::fabs(F(0)));
      break;
    case Opcode::CopySign:
      setF(std::copysign(F(0), F(1)));
      break;
    case Opcode::PowF:
      setF(std::pow(F(0), F(1)));
      break;
    case Opcode::FPowI:
      if (!opType(0).isFloat() || opType(1).isFloat())
        return fail("fpowi takes a float and an integer");
      setF(std::pow(F(0), static_cast<double>(I(1))));
      break;
    case Opcode::Fma:
      setF(std::fma(F(0), F(1), F(2)));
      break;
    case Opcode::Atan2:
      setF(std::atan2(F(0), F(1)));
      break;
    case Opcode::Tanh:
      setF(std::tanh(F(0)));
      break;
    case Opcode::Exp:
      setF(std::exp(F(0)));
      break;
    case Opcode::Exp2:
      setF(std::exp2(F(0)));
      break;
    case Opcode::ExpM1:
      setF(std::expm1(F(0)));
      break;
    case Opcode::Log:
      setF(std::log(F(0)));
      break;
    case Opcode::Log2:
      setF(std::log2(F(0)));
      break;
    case Opcode::Log10:
      setF(std::log10(F(0)));
      break;
    case Opcode::Log1p:
      setF(std::log1p(F(0)));
      break;
    case Opcode::Sqrt:
      setF(std::sqrt(F(0)));
      break;
    case Opcode::Rsqrt:
      setF(1.0 / std::sqrt(F(0)));
      break;
    case Opcode::Cbrt:
      setF(std::cbrt(F(0)));
      break;
    case Opcode::Floor:
      setF(std::floor(F(0)));
      break;
    case Opcode::Ceil:
      setF(std::ceil(F(0)));
      break;
    case Opcode::Round:
      setF(std::round(F(0)));
      break;
    case Opcode::RoundEven: {
      double x = F(0);
      setF(std::isfinite(x) ? std::copysign(roundHalfEven(std::fabs(x)), x)
                            : x);
      break;
    }
    case Opcode::Trunc:
      setF(std::trunc(F(0)));
      break;
    case Opcode::Sin:
      setF(std::sin(F(0)));
      break;
    case Opcode::Cos:
      setF(std::cos(F(0)));
      break;
    case Opcode::Tan:
      setF(std::tan(F(0)));
      break;
    case Opcode::Asin:
      setF(std::asin(F(0)));
      break;
    case Opcode::Acos:
      setF(std::acos(F(0)));
      break;
    case Opcode::Atan:
      setF(std::atan(F(0)));
      break;
    case Opcode::Sinh:
      setF(std::sinh(F(0)));
      break;
    case Opcode::Cosh:
      setF(std::cosh(F(0)));
      break;
    case Opcode::Asinh:
      setF(std::asinh(F(0)));
      break;
    case Opcode::Acosh:
      setF(std::acosh(F(0)));
      break;
    case Opcode::Atanh:
      setF(std::atanh(F(0)));
      break;
    case Opcode::Erf:
      setF(std::erf(F(0)));
      break;
    case Opcode::Erfc:
      setF(std::erfc(F(0)));
      break;
    case Opcode::IsNaN:
      setB(std::isnan(F(0)));
      break;
    case Opcode::IsInf:
      setB(std::isinf(F(0)));
      break;
    case Opcode::IsFinite:
      setB(std::isfinite(F(0)));
      break;
    case Opcode::IPowI: {
      int64_t r;
      if (!ipowi(I(0), I(1), bits, r))
        return fail("0 raised to a negative power" + where());
      v.i = r;
      break;
    }
    case Opcode::CountLeadingZeros:
    case Opcode::CountTrailingZeros:
    case Opcode::CtPop: {
      uint64_t a = u(0);
      uint64_t count = 0;
      if (in.op == Opcode::CtPop) {
        for (unsigned b = 0; b < bits; ++b)
          count += (a >> b) & 1;
      } else if (in.op == Opcode::CountTrailingZeros) {
        while (count < bits && !((a >> count) & 1))
          ++count;
      } else {
        while (count < bits && !((a >> (bits - 1 - count)) & 1))
          ++count;
      }
      setI(count);
      break;
    }
    case Opcode::Extract:
    case Opcode::Dim: {
      if (in.input < 0 || static_cast<size_t>(in.input) >= modInputs.size() ||
          !modInputs[in.input])
        return fail("mod_inputs #" + std::to_string(in.input) +
                    " is not given (" + std::to_string(modInputs.size()) +
                    " mod_inputs)");
      const Tensor &t = *modInputs[in.input];
      for (size_t o = 0; o < in.operands.size(); ++o)
        if (opType(static_cast<int>(o)).isFloat())
          return fail("an index operand is a float");
      if (in.op == Opcode::Dim) {
        int64_t d = I(0);
        if (d < 0 || d >= static_cast<int64_t>(t.shape.size()))
          return std::string(what) + " asks for dimension " +
                 std::to_string(d) + " of mod_inputs #" +
                 std::to_string(in.input) + " of shape " + shapeStr(t.shape) +
                 where();
        setI(static_cast<uint64_t>(t.shape[d]));
        break;
      }
      if (in.operands.size() != t.shape.size())
        return fail("mod_inputs #" + std::to_string(in.input) + " has rank " +
                    std::to_string(t.shape.size()) + ", read with " +
                    std::to_string(in.operands.size()) + " indices");
      int64_t flat = 0;
      bool inside = true;
      for (size_t d = 0; d < t.shape.size(); ++d) {
        int64_t x = I(static_cast<int>(d));
        inside &= x >= 0 && x < t.shape[d];
        flat = flat * t.shape[d] + x;
      }
      if (!inside) {
        std::vector<int64_t> at;
        for (size_t d = 0; d < t.shape.size(); ++d)
          at.push_back(I(static_cast<int>(d)));
        return std::string(what) + " reads mod_inputs #" +
               std::to_string(in.input) + " at " + shapeStr(at) +
               " outside its shape " + shapeStr(t.shape) + where();
      }
      if (static_cast<size_t>(flat) >= t.data.size())
        return fail("mod_inputs #" + std::to_string(in.input) + " has " +
                    std::to_string(t.data.size()) + " elements for shape " +
                    shapeStr(t.shape));
      double x = t.data[flat];
      if (resFloat) {
        setF(x);
      } else {
        if (!std::isfinite(x))
          return fail("mod_inputs #" + std::to_string(in.input) +
                      " holds the non-integer " + std::to_string(x));
        // Integer tensors are stored as exact doubles; values beyond 2^63
        // (u64 data) wrap like their bit pattern.
        setI(x >= std::ldexp(1.0, 63)
                 ? static_cast<uint64_t>(x - std::ldexp(1.0, 63)) +
                       (uint64_t(1) << 63)
                 : static_cast<uint64_t>(static_cast<int64_t>(x)));
      }
      break;
    }
    }
    vals[k] = v;
  }
  if (program.result < 0 || static_cast<size_t>(program.result) >= n)
    return std::string(what) + " has no result";
  const Instr &r = program.instrs[program.result];
  result = r.type.isFloat() ? vals[program.result].f
                            : (vals[program.result].i != 0 ? 1.0 : 0.0);
  return "";
}
