// RUN: attn-opt %s --attn-to-llvm-cpu | FileCheck %s
// RUN: attn-opt %s --attn-to-llvm-cpu="form=naive parallel=false" | FileCheck %s --check-prefix=NAIVE
// RUN: attn-opt %s --attn-to-llvm-cpu="form=decode" | FileCheck %s --check-prefix=DECODE
// RUN: not attn-opt %s --attn-to-llvm-cpu="form=blocked" 2>&1 | FileCheck %s --check-prefix=BAD

// The whole CPU pipeline: attn on tensors down to the LLVM dialect. Results
// with static shapes become out-params (inputs first, then the output
// buffer); a dynamically shaped result stays a result.

// CHECK-LABEL: llvm.func @f(
// CHECK-SAME: %arg32: i64) -> !llvm.struct<(ptr, ptr, i64, array<4 x i64>, array<4 x i64>)>
// CHECK: omp.parallel
// CHECK: omp.wsloop
// CHECK-NOT: attn.
// CHECK-NOT: linalg.

// NAIVE-LABEL: llvm.func @f
// NAIVE-NOT: omp.parallel
// NAIVE: llvm.call @malloc

// DECODE-LABEL: llvm.func @f
// DECODE: omp.parallel

// BAD: for the --form option: Cannot find option named 'blocked'
func.func @f(%q: tensor<1x4x?x16xf32>, %k: tensor<1x2x?x16xf32>,
             %v: tensor<1x2x?x16xf32>) -> tensor<1x4x?x16xf32> {
  %o = attn.attention q(%q : tensor<1x4x?x16xf32>) k(%k : tensor<1x2x?x16xf32>)
      v(%v : tensor<1x2x?x16xf32>) causal(top_left) -> tensor<1x4x?x16xf32>
  return %o : tensor<1x4x?x16xf32>
}

// A static spec: the public entry function takes q, k, v and then the
// output, each as a rank-4 memref descriptor (2 pointers, offset, 4 sizes,
// 4 strides), and returns nothing.
// CHECK-LABEL: llvm.func @g(
// CHECK-SAME: %arg33: !llvm.ptr, %arg34: !llvm.ptr,
// CHECK-SAME: %arg43: i64) attributes {target_cpu = "{{.+}}", target_features = #llvm.target_features<{{.+}}>} {
// CHECK: omp.parallel
// DECODE-LABEL: llvm.func @g(
// DECODE-SAME: %arg43: i64) attributes {target_cpu
func.func @g(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>,
             %v: tensor<1x2x8x16xf32>) -> tensor<1x4x8x16xf32> {
  %o = attn.attention q(%q : tensor<1x4x8x16xf32>) k(%k : tensor<1x2x8x16xf32>)
      v(%v : tensor<1x2x8x16xf32>) causal(top_left) -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}
