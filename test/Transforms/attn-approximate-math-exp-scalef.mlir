// REQUIRES: avx512-host
// RUN: attn-opt %s --attn-approximate-math=avx512=true \
// RUN:     --convert-vector-to-scf=full-unroll --convert-scf-to-cf \
// RUN:     --convert-vector-to-llvm --convert-math-to-llvm \
// RUN:     --convert-arith-to-llvm --convert-cf-to-llvm --convert-func-to-llvm \
// RUN:     --reconcile-unrealized-casts \
// RUN:   | mlir-runner -e main -entry-point-result=void --mattr=+avx512f \
// RUN:       -shared-libs=%mlir_lib_dir/libmlir_runner_utils.so,%mlir_lib_dir/libmlir_c_runner_utils.so \
// RUN:   | FileCheck %s
//
// The softmax's exp(x - max) with 2^k p as vscalefps (AVX-512 targets, run
// where the host has AVX-512): the same values as the exponent-field
// construction (attn-approximate-math-exp-nonpositive.mlir, whose CHECK
// line this one repeats): 2^k p is exact in both.

func.func @marked(%x: vector<16xf32>) -> vector<16xf32> {
  %e = math.exp %x {attn.exp_nonpositive} : vector<16xf32>
  return %e : vector<16xf32>
}
func.func @marked2(%x: vector<16xf32>) -> vector<16xf32> {
  %e = math.exp2 %x {attn.exp_nonpositive} : vector<16xf32>
  return %e : vector<16xf32>
}

// Values, six significant digits as vector.print writes them, each equal to
// exp(x) computed in f64 and rounded the same way: exp(0) = exp(-0) = 1;
// -0.346574 and -0.346575 straddle the end of the reduced range (k = 0 and
// k = -1); -86.9 is near the smallest value kept (1.8189e-38); -100, -87.5
// (below -87) and -inf give exactly 0; NaN stays NaN.
// CHECK: ( 1, 0.606531, 0.367879, 0.707106, 0.707106, 0.0497871, 2.06115e-09, 0, 1.8189e-38, 0, 0, nan, 1, 0.904837, 4.53999e-05, 1.60381e-28 )
// 2^t, as in attn-approximate-math-exp-nonpositive.mlir: -125.6 (below
// -125.5) and -inf give exactly 0.
// CHECK-NEXT: ( 1, 0.707107, 0.5, 0.707107, 0.707107, 0.125, 9.53674e-07, 7.88861e-31, 1.78171e-38, 0, 0, nan, 1, 0.933033, 0.000976562, 5.42101e-20 )
func.func @main() {
  %x = arith.constant dense<[0.0, -0.5, -1.0, -0.346574, -0.346575, -3.0,
      -20.0, -100.0, -86.9, -87.5, 0xFF800000, 0x7FC00000, -0.0, -0.1,
      -10.0, -64.0]> : vector<16xf32>
  %e = call @marked(%x) : (vector<16xf32>) -> vector<16xf32>
  vector.print %e : vector<16xf32>
  %y = arith.constant dense<[0.0, -0.5, -1.0, -0.49999997, -0.50000006, -3.0,
      -20.0, -100.0, -125.4, -125.6, 0xFF800000, 0x7FC00000, -0.0, -0.1,
      -10.0, -64.0]> : vector<16xf32>
  %e2 = call @marked2(%y) : (vector<16xf32>) -> vector<16xf32>
  vector.print %e2 : vector<16xf32>
  return
}
