// RUN: attn-opt %s --attn-approximate-math | FileCheck %s --check-prefix=IR
// RUN: attn-opt %s --attn-approximate-math=avx512=true | FileCheck %s --check-prefix=SCALEF
// RUN: attn-opt %s --attn-approximate-math --convert-vector-to-scf=full-unroll \
// RUN:     --convert-scf-to-cf --convert-vector-to-llvm --convert-math-to-llvm \
// RUN:     --convert-arith-to-llvm --convert-cf-to-llvm --convert-func-to-llvm \
// RUN:     --reconcile-unrealized-casts \
// RUN:   | mlir-runner -e main -entry-point-result=void \
// RUN:       -shared-libs=%mlir_lib_dir/libmlir_runner_utils.so,%mlir_lib_dir/libmlir_c_runner_utils.so \
// RUN:   | FileCheck %s
//
// The softmax's exp(x - max) (argument <= 0 or NaN), marked by the fused
// lowering with attn.exp_nonpositive, takes a shorter polynomial than the
// general approximation: no libm call, no upper clamp.

// IR-LABEL: func.func @marked
// IR-NOT: math.exp
// IR: math.roundeven
// IR-COUNT-8: math.fma
// IR: arith.select
// IR-LABEL: func.func @marked2
// 2^t: k = roundeven(t), r = t - k exactly, then the polynomial.
// IR-NOT: math.exp2
// IR: %[[K:.+]] = math.roundeven %[[T:.+]] : vector<16xf32>
// IR-NEXT: arith.subf %[[T]], %[[K]]
// IR-COUNT-6: math.fma
// IR-NOT: math.fma
// IR: arith.select
// IR-LABEL: func.func @unmarked
// IR-NOT: math.roundeven
// IR-LABEL: func.func @narrow

// AVX-512 targets: 2^k p as one vscalefps, write-masked to 0 where t < -87
// (instead of the clamp, conversion, shift and multiply of the exponent
// field); only on 16 lanes of f32.
// SCALEF-LABEL: func.func @marked
// SCALEF-DAG: %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : vector<16xf32>
// SCALEF-DAG: %[[ROUND:.+]] = arith.constant 4 : i32
// SCALEF-DAG: %[[K:.+]] = math.roundeven
// SCALEF-COUNT-7: math.fma
// SCALEF: %[[P:.+]] = math.fma
// SCALEF: %[[KEEP:.+]] = arith.cmpf uge, %{{.+}}, %{{.+}} : vector<16xf32>
// SCALEF: %[[BITS:.+]] = vector.bitcast %[[KEEP]] : vector<16xi1> to vector<1xi16>
// SCALEF: %[[MASK:.+]] = vector.extract %[[BITS]][0] : i16 from vector<1xi16>
// SCALEF: llvm.call_intrinsic "llvm.x86.avx512.mask.scalef.ps.512"(%[[P]], %[[K]], %[[ZERO]], %[[MASK]], %[[ROUND]]) : (vector<16xf32>, vector<16xf32>, vector<16xf32>, i16, i32) -> vector<16xf32>
// SCALEF-NOT: arith.fptosi
// SCALEF-LABEL: func.func @marked2
// SCALEF-COUNT-6: math.fma
// SCALEF: arith.cmpf uge
// SCALEF: llvm.call_intrinsic "llvm.x86.avx512.mask.scalef.ps.512"
// SCALEF-LABEL: func.func @unmarked
// SCALEF-LABEL: func.func @narrow
// SCALEF-NOT: llvm.call_intrinsic
// SCALEF: arith.fptosi
func.func @marked(%x: vector<16xf32>) -> vector<16xf32> {
  %e = math.exp %x {attn.exp_nonpositive} : vector<16xf32>
  return %e : vector<16xf32>
}
func.func @marked2(%x: vector<16xf32>) -> vector<16xf32> {
  %e = math.exp2 %x {attn.exp_nonpositive} : vector<16xf32>
  return %e : vector<16xf32>
}
func.func @unmarked(%x: vector<16xf32>) -> vector<16xf32> {
  %e = math.exp %x : vector<16xf32>
  return %e : vector<16xf32>
}
func.func @narrow(%x: vector<8xf32>) -> vector<8xf32> {
  %e = math.exp %x {attn.exp_nonpositive} : vector<8xf32>
  return %e : vector<8xf32>
}

// Values, six significant digits as vector.print writes them, each equal to
// exp(x) computed in f64 and rounded the same way: exp(0) = exp(-0) = 1;
// -0.346574 and -0.346575 straddle the end of the reduced range (k = 0 and
// k = -1); -86.9 is near the smallest value kept (1.8189e-38); -100, -87.5
// (below -87) and -inf give exactly 0; NaN stays NaN.
// CHECK: ( 1, 0.606531, 0.367879, 0.707106, 0.707106, 0.0497871, 2.06115e-09, 0, 1.8189e-38, 0, 0, nan, 1, 0.904837, 4.53999e-05, 1.60381e-28 )
// 2^t likewise (f64 values): -0.49999997 and -0.50000006 straddle the end
// of the reduced range (k = 0 and k = -1); -125.4 is near the smallest
// value kept (1.78171e-38); -125.6 (below -125.5) and -inf give exactly 0;
// NaN stays NaN.
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
