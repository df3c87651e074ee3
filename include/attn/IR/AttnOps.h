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

#define GET_OP_CLASSES
#include "attn/IR/AttnOps.h.inc"

#endif // ATTN_IR_ATTNOPS_H
