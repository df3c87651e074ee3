// Sizes the verifier cannot relate because they are dynamic are checked by
// the generated code: an inconsistent call records the first failed check
// (naming the rule and the sizes) in the calling thread's error record,
// skips the work and returns; nothing aborts. This file checks the IR;
// runtime-shape-check-run.mlir runs it with mismatched buffers, then with
// consistent ones in the same process.
//
// RUN: attn-opt %s --convert-attn-to-fused-loops | FileCheck %s --check-prefix=IR
// IR-LABEL: func.func @attention
// IR: %[[CTX:.+]] = call @attn_rt_error_context() : () -> i64
// IR: %[[QB:.+]] = tensor.dim %arg0, %c0
// IR: %[[KB:.+]] = tensor.dim %arg1, %c0
// IR: %[[EQ:.+]] = arith.cmpi eq, %[[QB]], %[[KB]]
// IR: %[[BAD:.+]] = arith.xori %[[EQ]], %true
// IR: scf.if %[[BAD]] {
// IR: func.call @attn_rt_check_failed(%[[CTX]], %c0_i32,
// IR: func.call @attn_rt_check_failed(%[[CTX]], %c1_i32,
// IR: func.call @attn_rt_check_failed(%[[CTX]], %c6_i32,
// IR: %[[FAILED:.+]] = call @attn_rt_has_failed(%[[CTX]])
// IR: %[[NZ:.+]] = arith.cmpi ne, %[[FAILED]], %c0_i32
// IR: scf.if %[[NZ]] -> (tensor<?x1x4x8xf32>) {
// IR: tensor.empty(%c0) : tensor<?x1x4x8xf32>
// IR: linalg.fill
// IR: } else {
// IR: scf.forall
// IR-NOT: cf.assert
//

func.func @attention(%q: tensor<?x1x4x8xf32>, %k: tensor<?x1x?x8xf32>,
                     %v: tensor<?x1x?x8xf32>) -> tensor<?x1x4x8xf32> {
  %o = attn.attention q(%q : tensor<?x1x4x8xf32>) k(%k : tensor<?x1x?x8xf32>)
      v(%v : tensor<?x1x?x8xf32>) -> tensor<?x1x4x8xf32>
  return %o : tensor<?x1x4x8xf32>
}
