//===- HostTensor.h - host buffers passed to compiled specs -----*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_EXECUTION_HOSTTENSOR_H
#define ATTN_EXECUTION_HOSTTENSOR_H

#include "mlir/IR/Types.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir {
namespace attn {

/// Element types a compiled spec exchanges with the host.
/// F8E4M3 and F8E5M2 are fp8 (f8E4M3FN, f8E5M2) stored as their bits.
enum class ElementKind {
  F32,
  F64,
  F16,
  BF16,
  I1,
  I8,
  I32,
  I64,
  F8E4M3,
  F8E5M2
};

/// Maps an MLIR element type to an ElementKind; false if unsupported.
bool getElementKind(Type type, ElementKind &kind);
/// Bytes per element in memory (i1 is stored as one byte).
int64_t elementBytes(ElementKind kind);
const char *elementName(ElementKind kind);

/// A dense, row-major tensor in host memory, in the exact bit format the
/// compiled code reads and writes.
struct HostTensor {
  ElementKind kind = ElementKind::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;

  int64_t numElements() const;
  /// Allocates zeroed storage for `shape`.
  void resize(ElementKind kind, std::vector<int64_t> shape);
  /// Element `i` widened to double.
  double get(int64_t i) const;
  /// Element `i` as an integer: exact for integer kinds (get() rounds i64
  /// values beyond 2^53); float kinds truncate, saturate, NaN gives 0.
  int64_t getInt(int64_t i) const;
  /// Stores `v` into element `i`, rounding to the element type (integer
  /// kinds truncate and saturate; NaN stores 0).
  void set(int64_t i, double v);
};

/// f32 <-> bf16 with round-to-nearest-even (NaN stays NaN).
uint16_t floatToBF16(float x);
float bf16ToFloat(uint16_t h);

} // namespace attn
} // namespace mlir

#endif // ATTN_EXECUTION_HOSTTENSOR_H
