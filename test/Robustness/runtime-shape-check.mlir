// Sizes the verifier cannot relate because they are dynamic are checked by
// the generated code: an inconsistent call records the first failed check
// (naming the rule and the sizes) in the calling thread's error record,
// skips the work and returns; nothing aborts. attn-run checks sizes on the
// host first, so this test calls the lowered code through mlir-runner with
// mismatched buffers, reads the record through libattn_runtime
// (attn_rt_take_error, attn_last_error), then calls again with consistent
// buffers in the same process.
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
// RUN: attn-opt %s --attn-to-llvm-cpu="parallel=false" \
// RUN:   | mlir-runner -e main -entry-point-result=void \
// RUN:       -shared-libs=%mlir_lib_dir/libmlir_runner_utils.so,%mlir_lib_dir/libmlir_c_runner_utils.so,%attn_lib_dir/libattn_runtime.so 2>&1 \
// RUN:   | FileCheck %s --check-prefix=OUT
// OUT: 3
// OUT-NEXT: attn: batch sizes of q and k differ (q: 1, k: 2)
// OUT-NEXT: 0
// OUT-NEXT: 1

func.func @attention(%q: tensor<?x1x4x8xf32>, %k: tensor<?x1x?x8xf32>,
                     %v: tensor<?x1x?x8xf32>) -> tensor<?x1x4x8xf32> {
  %o = attn.attention q(%q : tensor<?x1x4x8xf32>) k(%k : tensor<?x1x?x8xf32>)
      v(%v : tensor<?x1x?x8xf32>) -> tensor<?x1x4x8xf32>
  return %o : tensor<?x1x4x8xf32>
}

func.func private @attn_rt_clear_error()
func.func private @attn_rt_take_error() -> i32
func.func private @attn_last_error() -> !llvm.ptr
func.func private @printI64(i64)
func.func private @printNewline()
llvm.func @puts(!llvm.ptr) -> i32

func.func @status() {
  %s = call @attn_rt_take_error() : () -> i32
  %s64 = arith.extsi %s : i32 to i64
  call @printI64(%s64) : (i64) -> ()
  call @printNewline() : () -> ()
  return
}

func.func @main() {
  // q: batch 1, k: batch 2 (and 6 keys), v: batch 1 (and 5 keys): the first
  // failed check wins.
  %q = arith.constant dense<1.0> : tensor<1x1x4x8xf32>
  %k = arith.constant dense<1.0> : tensor<2x1x6x8xf32>
  %v = arith.constant dense<1.0> : tensor<1x1x5x8xf32>
  %qd = tensor.cast %q : tensor<1x1x4x8xf32> to tensor<?x1x4x8xf32>
  %kd = tensor.cast %k : tensor<2x1x6x8xf32> to tensor<?x1x?x8xf32>
  %vd = tensor.cast %v : tensor<1x1x5x8xf32> to tensor<?x1x?x8xf32>
  call @attn_rt_clear_error() : () -> ()
  %o = call @attention(%qd, %kd, %vd)
      : (tensor<?x1x4x8xf32>, tensor<?x1x?x8xf32>, tensor<?x1x?x8xf32>)
      -> tensor<?x1x4x8xf32>
  call @status() : () -> ()
  %m = call @attn_last_error() : () -> !llvm.ptr
  %r = llvm.call @puts(%m) : (!llvm.ptr) -> i32
  // The same code with consistent buffers: status 0, out = 1 (v is 1).
  %k2 = arith.constant dense<1.0> : tensor<1x1x5x8xf32>
  %k2d = tensor.cast %k2 : tensor<1x1x5x8xf32> to tensor<?x1x?x8xf32>
  %o2 = call @attention(%qd, %k2d, %vd)
      : (tensor<?x1x4x8xf32>, tensor<?x1x?x8xf32>, tensor<?x1x?x8xf32>)
      -> tensor<?x1x4x8xf32>
  call @status() : () -> ()
  %c0 = arith.constant 0 : index
  %e = tensor.extract %o2[%c0, %c0, %c0, %c0] : tensor<?x1x4x8xf32>
  %ei = arith.fptosi %e : f32 to i64
  call @printI64(%ei) : (i64) -> ()
  call @printNewline() : () -> ()
  return
}
