//===- ReferenceBridge.h - run the f64 reference for an attn op -*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// Reads an attn op's attributes into the reference's Spec, translates its
// score_mod / mask_mod regions into the reference's RegionPrograms (op by op,
// no evaluation here) and feeds it the host tensors bound to the op's
// operands. The arithmetic is the reference's own (lib/Reference), which
// shares no code with the compiler.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_EXECUTION_REFERENCEBRIDGE_H
#define ATTN_EXECUTION_REFERENCEBRIDGE_H

#include "attn/Execution/HostTensor.h"
#include "attn/Reference/Reference.h"

#include "mlir/IR/Block.h"
#include "mlir/IR/Operation.h"
#include "llvm/Support/Error.h"

namespace mlir {
namespace attn {

/// Runs the reference for `op` (attn.attention or attn.projected_attention)
/// whose operands are arguments of the enclosing function; `args[i]` is the
/// host tensor bound to argument i. `outs` receives one tensor per result.
llvm::Error runReference(Operation *op, llvm::ArrayRef<const HostTensor *> args,
                         std::vector<::attn::ref::Tensor> &outs, double *flops);

/// Translates a score_mod (`isScore`) or mask_mod region's block into the
/// reference's MLIR-free program, op by op. An op or type the reference does
/// not know is an error naming it; `name` ("score_mod", "mask_mod") starts
/// the message.
llvm::Expected<::attn::ref::RegionProgram>
translateRegion(Block &block, bool isScore, llvm::StringRef name);

/// Element-wise comparison of a computed output against the reference.
struct Comparison {
  double maxAbsError = 0, maxRelError = 0;
  int64_t mismatches = 0; // elements outside atol + rtol * |ref|
  int64_t firstMismatch = -1;
};
Comparison compare(const HostTensor &actual,
                   const ::attn::ref::Tensor &expected, double atol,
                   double rtol);

/// Tolerances that fit an element kind (f32, f16, bf16).
void defaultTolerance(ElementKind kind, double &atol, double &rtol);

} // namespace attn
} // namespace mlir

#endif // ATTN_EXECUTION_REFERENCEBRIDGE_H
