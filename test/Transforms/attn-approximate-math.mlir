// RUN: attn-opt %s --attn-approximate-math | FileCheck %s

// exp, log and tanh become polynomials in plain arithmetic (vectorizable);
// no libm call is left.

// CHECK-LABEL: func.func @softmax_math
// CHECK-NOT: math.exp
// CHECK-NOT: math.log
// CHECK-NOT: math.tanh
// CHECK: math.fma
// CHECK: return
func.func @softmax_math(%x: f32) -> (f32, f32, f32) {
  %e = math.exp %x : f32
  %l = math.log %x : f32
  %t = math.tanh %x : f32
  return %e, %l, %t : f32, f32, f32
}
