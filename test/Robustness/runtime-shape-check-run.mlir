// Runs the lowered code of runtime-shape-check.mlir through mlir-runner:
// attn-run checks sizes on the host first, so this calls the code with
// mismatched buffers directly, reads the error record through
// libattn_runtime (attn_rt_take_error, attn_last_error), then calls again
// with consistent buffers in the same process. Not in sanitizer builds:
// mlir-runner is not instrumented, so it cannot load the instrumented
// libattn_runtime (RuntimeChecksTest covers the same under the sanitizers).
// UNSUPPORTED: sanitizer
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
