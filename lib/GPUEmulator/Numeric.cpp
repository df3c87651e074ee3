//===- Numeric.cpp - element kinds, rounding and memory encodings ---------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "Interp.h"

#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/IR/BuiltinTypes.h"

#include "llvm/ADT/APFloat.h"

#include <cmath>
#include <cstring>
#include <vector>

using namespace mlir;
using namespace mlir::attn::gpuemu;

bool mlir::attn::gpuemu::kindOf(Type type, EK &kind) {
  if (auto shaped = dyn_cast<ShapedType>(type))
    type = shaped.getElementType();
  // An LLVM struct of one element type (wgmma's accumulators) is held like
  // a vector of its fields.
  if (auto st = dyn_cast<LLVM::LLVMStructType>(type)) {
    ArrayRef<Type> body = st.getBody();
    if (body.empty() || !llvm::all_equal(body))
      return false;
    type = body.front();
  }
  if (type.isIndex())
    kind = EK::Index;
  else if (type.isInteger(1))
    kind = EK::I1;
  else if (type.isInteger(8))
    kind = EK::I8;
  else if (type.isInteger(16))
    kind = EK::I16;
  else if (type.isInteger(32))
    kind = EK::I32;
  else if (type.isInteger(64))
    kind = EK::I64;
  else if (type.isF16())
    kind = EK::F16;
  else if (type.isBF16())
    kind = EK::BF16;
  else if (type.isF32())
    kind = EK::F32;
  else if (type.isF64())
    kind = EK::F64;
  else if (isa<Float8E4M3FNType>(type))
    kind = EK::F8E4M3FN;
  else if (isa<Float8E5M2Type>(type))
    kind = EK::F8E5M2;
  else
    return false;
  return true;
}

unsigned mlir::attn::gpuemu::bitWidth(EK k) {
  switch (k) {
  case EK::I1:
    return 1;
  case EK::I8:
  case EK::F8E4M3FN:
  case EK::F8E5M2:
    return 8;
  case EK::I16:
  case EK::F16:
  case EK::BF16:
    return 16;
  case EK::I32:
  case EK::F32:
    return 32;
  case EK::I64:
  case EK::Index:
  case EK::F64:
    return 64;
  }
  return 64;
}

unsigned mlir::attn::gpuemu::byteSize(EK k) {
  return k == EK::I1 ? 1 : bitWidth(k) / 8;
}

const char *mlir::attn::gpuemu::kindName(EK k) {
  static const char *names[] = {"i1",  "i8",    "i16",      "i32",
                                "i64", "index", "f16",      "bf16",
                                "f32", "f64",   "f8E4M3FN", "f8E5M2"};
  return names[static_cast<int>(k)];
}

/// Rounds `x` to a binary format with `mant` fraction bits, minimum normal
/// exponent `emin` and maximum exponent `emax`, ties to even.
static double roundFormat(double x, int mant, int emin, int emax) {
  if (!std::isfinite(x) || x == 0)
    return x;
  int e;
  std::frexp(x, &e); // x = m * 2^e, 0.5 <= |m| < 1: exponent is e - 1
  int exp = std::max(e - 1, emin);
  double ulp = std::ldexp(1.0, exp - mant);
  // nearbyint rounds ties to even in the default rounding mode; the
  // division and multiplication by a power of two are exact.
  double r = std::nearbyint(x / ulp) * ulp;
  double maxFinite = std::ldexp(2.0 - std::ldexp(1.0, -mant), emax);
  if (std::fabs(r) > maxFinite)
    return std::copysign(INFINITY, x);
  return r;
}

/// roundFormat for results in the normal range of the format, on the bits
/// of the double (ties to even); other values take the general path.
static double roundFast(double x, int mant, int emin, int emax) {
  uint64_t u;
  std::memcpy(&u, &x, 8);
  int exp = static_cast<int>((u >> 52) & 0x7ff) - 1023;
  if (exp < emin || exp > emax)
    return roundFormat(x, mant, emin, emax);
  int shift = 52 - mant;
  uint64_t lsb = (u >> shift) & 1;
  u += (uint64_t(1) << (shift - 1)) - 1 + lsb;
  u &= ~((uint64_t(1) << shift) - 1);
  double r;
  std::memcpy(&r, &u, 8);
  if (static_cast<int>((u >> 52) & 0x7ff) - 1023 > emax)
    return std::copysign(INFINITY, x);
  return r;
}

/// The APFloat semantics of an fp8 kind.
static const llvm::fltSemantics &fp8Semantics(EK k) {
  return k == EK::F8E4M3FN ? llvm::APFloat::Float8E4M3FN()
                           : llvm::APFloat::Float8E5M2();
}

/// `x` rounded to fp8 kind `k` (ties to even; e4m3fn has no infinity: out of
/// range values become NaN, as APFloat and MLIR's constant folding round).
static llvm::APFloat toFp8(EK k, double x) {
  llvm::APFloat v(x);
  bool losesInfo;
  v.convert(fp8Semantics(k), llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  return v;
}

static double fp8ToDouble(llvm::APFloat v) {
  bool losesInfo;
  v.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
            &losesInfo);
  return v.convertToDouble();
}

double mlir::attn::gpuemu::roundTo(EK k, double x) {
  switch (k) {
  case EK::F8E4M3FN:
  case EK::F8E5M2:
    return fp8ToDouble(toFp8(k, x));
  case EK::F16:
    return roundFast(x, 10, -14, 15);
  case EK::BF16:
    return roundFast(x, 7, -126, 127);
  case EK::F32:
    return static_cast<double>(static_cast<float>(x));
  default:
    return x;
  }
}

int64_t mlir::attn::gpuemu::wrapInt(EK k, int64_t x) {
  switch (k) {
  case EK::I1:
    return x & 1;
  case EK::I8:
    return static_cast<int8_t>(x);
  case EK::I16:
    return static_cast<int16_t>(x);
  case EK::I32:
    return static_cast<int32_t>(x);
  default:
    return x;
  }
}

/// Encodes a value of a small float format given as its fraction bits,
/// exponent bias and exponent bits.
static uint64_t encodeSmall(double x, int mant, int bias, int expBits) {
  uint64_t sign = std::signbit(x) ? 1 : 0;
  uint64_t expMax = (1u << expBits) - 1;
  uint64_t out;
  if (std::isnan(x))
    out = (expMax << mant) | (1u << (mant - 1));
  else if (std::isinf(x))
    out = expMax << mant;
  else if (x == 0)
    out = 0;
  else {
    double a = std::fabs(x);
    int e;
    std::frexp(a, &e);
    int exp = e - 1;
    if (exp < 1 - bias) // subnormal
      out = static_cast<uint64_t>(std::ldexp(a, bias - 1 + mant));
    else
      out = (static_cast<uint64_t>(exp + bias) << mant) |
            (static_cast<uint64_t>(std::ldexp(a, mant - exp)) &
             ((1u << mant) - 1));
  }
  return (sign << (mant + expBits)) | out;
}

static double decodeSmall(uint64_t bits, int mant, int bias, int expBits) {
  uint64_t expMax = (1u << expBits) - 1;
  bool sign = (bits >> (mant + expBits)) & 1;
  uint64_t exp = (bits >> mant) & expMax;
  uint64_t frac = bits & ((1u << mant) - 1);
  double v;
  if (exp == expMax)
    v = frac ? NAN : INFINITY;
  else if (exp == 0)
    v = std::ldexp(static_cast<double>(frac), 1 - bias - mant);
  else
    v = std::ldexp(static_cast<double>(frac | (1u << mant)),
                   static_cast<int>(exp) - bias - mant);
  return sign ? -v : v;
}

uint64_t mlir::attn::gpuemu::toBits(EK k, Slot s) {
  switch (k) {
  case EK::F8E4M3FN:
  case EK::F8E5M2:
    return toFp8(k, s.f).bitcastToAPInt().getZExtValue();
  case EK::F16:
    return encodeSmall(s.f, 10, 15, 5);
  case EK::BF16:
    return encodeSmall(s.f, 7, 127, 8);
  case EK::F32: {
    float v = static_cast<float>(s.f);
    uint32_t b;
    std::memcpy(&b, &v, 4);
    return b;
  }
  case EK::F64: {
    uint64_t b;
    std::memcpy(&b, &s.f, 8);
    return b;
  }
  default: {
    unsigned w = bitWidth(k);
    uint64_t u = static_cast<uint64_t>(s.i);
    return w == 64 ? u : u & ((uint64_t(1) << w) - 1);
  }
  }
}

/// Values of every f16 and bf16 bit pattern.
static const std::vector<double> &smallFloatTable(bool bf16) {
  static const std::vector<double> tables[2] = {
      [] {
        std::vector<double> t(65536);
        for (uint32_t b = 0; b < 65536; ++b)
          t[b] = decodeSmall(b, 10, 15, 5);
        return t;
      }(),
      [] {
        std::vector<double> t(65536);
        for (uint32_t b = 0; b < 65536; ++b)
          t[b] = decodeSmall(b, 7, 127, 8);
        return t;
      }()};
  return tables[bf16 ? 1 : 0];
}

Slot mlir::attn::gpuemu::fromBits(EK k, uint64_t bits) {
  Slot s;
  switch (k) {
  case EK::F8E4M3FN:
  case EK::F8E5M2:
    s.f = fp8ToDouble(
        llvm::APFloat(fp8Semantics(k), llvm::APInt(8, bits & 0xff)));
    return s;
  case EK::F16:
    s.f = smallFloatTable(false)[bits & 0xffff];
    return s;
  case EK::BF16:
    s.f = smallFloatTable(true)[bits & 0xffff];
    return s;
  case EK::F32: {
    uint32_t b = static_cast<uint32_t>(bits);
    float v;
    std::memcpy(&v, &b, 4);
    s.f = v;
    return s;
  }
  case EK::F64:
    std::memcpy(&s.f, &bits, 8);
    return s;
  default:
    s.i = wrapInt(k, static_cast<int64_t>(bits));
    return s;
  }
}

Slot mlir::attn::gpuemu::loadElem(EK k, const uint8_t *p) {
  uint64_t bits = 0;
  std::memcpy(&bits, p, byteSize(k)); // little-endian host
  if (k == EK::I1)
    bits &= 1;
  return fromBits(k, bits);
}

void mlir::attn::gpuemu::storeElem(EK k, uint8_t *p, Slot s) {
  uint64_t bits = toBits(k, s);
  std::memcpy(p, &bits, byteSize(k));
}
