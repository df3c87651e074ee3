// RUN: attn-opt %s --attn-to-llvm-cpu="min-parallel-work=0" | FileCheck %s
// RUN: attn-opt %s --attn-to-llvm-cpu | FileCheck %s --check-prefix=SMALL
// RUN: attn-opt %s --attn-to-llvm-cpu="min-parallel-work=8192" | FileCheck %s --check-prefix=AT
// RUN: attn-opt %s --attn-to-llvm-cpu="min-parallel-work=8193" | FileCheck %s --check-prefix=SMALL
// RUN: attn-opt %s --attn-to-llvm-cpu="form=naive parallel=false" | FileCheck %s --check-prefix=NAIVE
// RUN: attn-opt %s --attn-to-llvm-cpu="form=decode" | FileCheck %s --check-prefix=DECODE
// RUN: not attn-opt %s --attn-to-llvm-cpu="form=blocked" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: attn-opt %s --attn-to-llvm-cpu="target-cpu=haswell tile-k=32" | FileCheck %s --check-prefix=CHOICE
// RUN: attn-opt %s --attn-to-llvm-cpu="form=decode splits=3 target-cpu=skylake-avx512" | FileCheck %s --check-prefix=CHOICE-DECODE
// RUN: attn-opt %s --attn-to-llvm-cpu="form=naive" | FileCheck %s --check-prefix=CHOICE-NAIVE

// The whole CPU pipeline: attn on tensors down to the LLVM dialect. Results
// become out-params (inputs first, then the output buffer), a dynamically
// shaped one as a destination the caller sizes (attn-results-to-destinations):
// three inputs and the output, 11 descriptor words each, and no result.

// CHECK-LABEL: llvm.func @f(
// CHECK-SAME: %arg43: i64) attributes
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

// What the lowering chose stays on the function (attn.lowering, one
// dictionary per attention op): tiles (tile-k as given, tile-q chosen), the
// register tile (rows x f32 columns) and vector width of the target.
// CHOICE-LABEL: llvm.func @f(
// CHOICE-SAME: attn.lowering = [{form = "fused", register_cols = 16 : i64, register_rows = 6 : i64, splits = 0 : i64, tile_k = 32 : i64, tile_q = {{[0-9]+}} : i64, vector_bits = 256 : i64, warps = 0 : i64}]
// CHOICE-DECODE-LABEL: llvm.func @f(
// CHOICE-DECODE-SAME: attn.lowering = [{form = "decode", register_cols = {{[0-9]+}} : i64, register_rows = {{[0-9]+}} : i64, splits = 3 : i64, tile_k = {{[0-9]+}} : i64, tile_q = {{[0-9]+}} : i64, vector_bits = 512 : i64, warps = 0 : i64}]
// CHOICE-NAIVE-LABEL: llvm.func @f(
// CHOICE-NAIVE-SAME: attn.lowering = [{form = "naive", register_cols = 0 : i64, register_rows = 0 : i64, splits = 0 : i64, tile_k = 0 : i64, tile_q = 0 : i64, vector_bits = 0 : i64, warps = 0 : i64}]
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
// CHECK-SAME: %arg43: i64) attributes {attn.lowering = [{form = "fused", {{.*}}}], target_cpu = "{{.+}}", target_features = #llvm.target_features<{{.+}}>} {
// CHECK: omp.parallel
// With the default min-parallel-work (2^19 multiply-adds), @g's static grid
// is too small for threads: the parallel branch folds away.
// Its grid does 1 x 4 x 8 x 8 x (16 + 16) = 8192: at min-parallel-work=8192
// it still runs on threads, at 8193 no longer.
// SMALL-LABEL: llvm.func @g(
// SMALL: llvm.call @omp_get_max_threads()
// SMALL-NOT: omp.parallel
// AT-LABEL: llvm.func @g(
// AT: llvm.call @omp_get_max_threads()
// AT: omp.parallel
// DECODE-LABEL: llvm.func @g(
// DECODE-SAME: %arg43: i64) attributes {attn.lowering = [{form = "decode", {{.*}}}], target_cpu
func.func @g(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>,
             %v: tensor<1x2x8x16xf32>) -> tensor<1x4x8x16xf32> {
  %o = attn.attention q(%q : tensor<1x4x8x16xf32>) k(%k : tensor<1x2x8x16xf32>)
      v(%v : tensor<1x2x8x16xf32>) causal(top_left) -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}
