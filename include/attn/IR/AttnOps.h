//===- AttnOps.h - attn dialect operations ----------------------*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_IR_ATTNOPS_H
#define ATTN_IR_ATTNOPS_H

#include "attn/IR/AttnDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "attn/IR/AttnEnums.h.inc"

namespace mlir {
namespace attn {
/// What attn.grid_work "writes": the thread choice of its grid, no memory.
/// Its effect keeps the op alive (an op without effects and results is
/// dead) without making it an op of unknown effects, which bufferization
/// refuses.
struct GridChoiceResource
    : public SideEffects::Resource::Base<GridChoiceResource> {
  StringRef getName() final { return "attn.grid_choice"; }
};
} // namespace attn
} // namespace mlir

#define GET_OP_CLASSES
#include "attn/IR/AttnOps.h.inc"

namespace mlir {
namespace attn {
/// Whether `t` is an element type of a quantized K/V cache: i8, f8E4M3FN or
/// f8E5M2 (read with f32 scales; attn.attention's k_scale / v_scale).
bool isQuantizedKvType(Type t);
} // namespace attn
} // namespace mlir

#endif // ATTN_IR_ATTNOPS_H
