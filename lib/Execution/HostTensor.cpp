//===- HostTensor.cpp - host buffers passed to compiled specs -------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Execution/HostTensor.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/APFloat.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace mlir;
using namespace mlir::attn;

bool mlir::attn::getElementKind(Type type, ElementKind &kind) {
  if (type.isF32())
    kind = ElementKind::F32;
  else if (type.isF64())
    kind = ElementKind::F64;
  else if (type.isF16())
    kind = ElementKind::F16;
  else if (type.isBF16())
    kind = ElementKind::BF16;
  else if (type.isInteger(1))
    kind = ElementKind::I1;
  else if (type.isInteger(8))
    kind = ElementKind::I8;
  else if (type.isInteger(32))
    kind = ElementKind::I32;
  else if (type.isInteger(64))
    kind = ElementKind::I64;
  else if (isa<Float8E4M3FNType>(type))
    kind = ElementKind::F8E4M3;
  else if (isa<Float8E5M2Type>(type))
    kind = ElementKind::F8E5M2;
  else
    return false;
  return true;
}

int64_t mlir::attn::elementBytes(ElementKind kind) {
  switch (kind) {
  case ElementKind::F64:
  case ElementKind::I64:
    return 8;
  case ElementKind::F32:
  case ElementKind::I32:
    return 4;
  case ElementKind::F16:
  case ElementKind::BF16:
    return 2;
  case ElementKind::I1:
  case ElementKind::I8:
  case ElementKind::F8E4M3:
  case ElementKind::F8E5M2:
    return 1;
  }
  return 1;
}

const char *mlir::attn::elementName(ElementKind kind) {
  switch (kind) {
  case ElementKind::F32:
    return "f32";
  case ElementKind::F64:
    return "f64";
  case ElementKind::F16:
    return "f16";
  case ElementKind::BF16:
    return "bf16";
  case ElementKind::I1:
    return "i1";
  case ElementKind::I8:
    return "i8";
  case ElementKind::I32:
    return "i32";
  case ElementKind::I64:
    return "i64";
  case ElementKind::F8E4M3:
    return "f8E4M3FN";
  case ElementKind::F8E5M2:
    return "f8E5M2";
  }
  return "?";
}

int64_t HostTensor::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

void HostTensor::resize(ElementKind k, std::vector<int64_t> s) {
  kind = k;
  shape = std::move(s);
  bytes.assign(static_cast<size_t>(numElements() * elementBytes(kind)), 0);
}

static uint16_t toHalfBits(double v, const llvm::fltSemantics &sem) {
  llvm::APFloat f(v);
  bool lost;
  f.convert(sem, llvm::APFloat::rmNearestTiesToEven, &lost);
  return static_cast<uint16_t>(f.bitcastToAPInt().getZExtValue());
}

static double fromHalfBits(uint16_t bits, const llvm::fltSemantics &sem,
                           unsigned width = 16) {
  llvm::APFloat f(sem, llvm::APInt(width, bits));
  bool lost;
  f.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
            &lost);
  return f.convertToDouble();
}

uint16_t mlir::attn::floatToBF16(float x) {
  return toHalfBits(x, llvm::APFloat::BFloat());
}
float mlir::attn::bf16ToFloat(uint16_t h) {
  return static_cast<float>(fromHalfBits(h, llvm::APFloat::BFloat()));
}

double HostTensor::get(int64_t i) const {
  const uint8_t *p = bytes.data() + i * elementBytes(kind);
  switch (kind) {
  case ElementKind::F32: {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  case ElementKind::F64: {
    double d;
    std::memcpy(&d, p, 8);
    return d;
  }
  case ElementKind::F16:
  case ElementKind::BF16: {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return fromHalfBits(h, kind == ElementKind::F16 ? llvm::APFloat::IEEEhalf()
                                                    : llvm::APFloat::BFloat());
  }
  case ElementKind::I1:
  case ElementKind::I8:
    return static_cast<int8_t>(*p);
  case ElementKind::I32: {
    int32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  case ElementKind::I64: {
    int64_t v;
    std::memcpy(&v, p, 8);
    return static_cast<double>(v);
  }
  case ElementKind::F8E4M3:
    return fromHalfBits(*p, llvm::APFloat::Float8E4M3FN(), 8);
  case ElementKind::F8E5M2:
    return fromHalfBits(*p, llvm::APFloat::Float8E5M2(), 8);
  }
  return 0;
}

/// `v` truncated toward zero and clamped to [lo, hi]; NaN gives 0. A plain
/// cast is undefined behavior outside the target's range.
static int64_t saturate(double v, int64_t lo, int64_t hi) {
  if (std::isnan(v))
    return 0;
  if (v <= static_cast<double>(lo))
    return lo;
  // hi + 1 is a power of two, exact in double: v < 2^k fits after truncation.
  if (v >= static_cast<double>(hi) + 1.0)
    return hi;
  return static_cast<int64_t>(v);
}

int64_t HostTensor::getInt(int64_t i) const {
  const uint8_t *p = bytes.data() + i * elementBytes(kind);
  switch (kind) {
  case ElementKind::I32: {
    int32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  case ElementKind::I64: {
    int64_t v;
    std::memcpy(&v, p, 8);
    return v;
  }
  case ElementKind::I1:
  case ElementKind::I8:
    return static_cast<int8_t>(*p);
  default:
    return saturate(get(i), std::numeric_limits<int64_t>::min(),
                    std::numeric_limits<int64_t>::max());
  }
}

void HostTensor::set(int64_t i, double v) {
  uint8_t *p = bytes.data() + i * elementBytes(kind);
  switch (kind) {
  case ElementKind::F32: {
    float f = static_cast<float>(v);
    std::memcpy(p, &f, 4);
    return;
  }
  case ElementKind::F64:
    std::memcpy(p, &v, 8);
    return;
  case ElementKind::F16:
  case ElementKind::BF16: {
    // Round to f32 first: the host data a kernel is fed is f32.
    uint16_t h = toHalfBits(static_cast<float>(v),
                            kind == ElementKind::F16 ? llvm::APFloat::IEEEhalf()
                                                     : llvm::APFloat::BFloat());
    std::memcpy(p, &h, 2);
    return;
  }
  case ElementKind::I1:
    *p = v != 0 ? 1 : 0;
    return;
  case ElementKind::I8:
    *p = static_cast<uint8_t>(static_cast<int8_t>(saturate(v, -128, 127)));
    return;
  case ElementKind::F8E4M3:
  case ElementKind::F8E5M2:
    // Round to f32 first, then to nearest-even fp8 (past the largest finite
    // value: NaN for e4m3fn, inf for e5m2, as APFloat converts).
    *p = static_cast<uint8_t>(
        toHalfBits(static_cast<float>(v), kind == ElementKind::F8E4M3
                                              ? llvm::APFloat::Float8E4M3FN()
                                              : llvm::APFloat::Float8E5M2()));
    return;
  case ElementKind::I32: {
    int32_t x =
        static_cast<int32_t>(saturate(v, std::numeric_limits<int32_t>::min(),
                                      std::numeric_limits<int32_t>::max()));
    std::memcpy(p, &x, 4);
    return;
  }
  case ElementKind::I64: {
    int64_t x = saturate(v, std::numeric_limits<int64_t>::min(),
                         std::numeric_limits<int64_t>::max());
    std::memcpy(p, &x, 8);
    return;
  }
  }
}
