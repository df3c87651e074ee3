// REQUIRES: host-cc
// The driver links libattn_runtime, which sanitizer builds instrument: an
// uninstrumented C program cannot load it (nothing here is instrumented).
// UNSUPPORTED: sanitizer
// RUN: attn-opt %s --attn-to-llvm-cpu="form=fused parallel=false" -o %t.llvm.mlir
// RUN: mlir-translate --mlir-to-llvmir %t.llvm.mlir -o %t.ll
// RUN: llc -O2 -relocation-model=pic -filetype=obj %t.ll -o %t.o
// RUN: %host_cc %S/Inputs/aot-driver.c %t.o -L%attn_lib_dir -lattn_runtime -Wl,-rpath,%attn_lib_dir -lm -o %t.exe
// RUN: %t.exe | FileCheck %s
// RUN: attn-opt %s --attn-to-llvm-cpu="form=decode parallel=false" -o %t.decode.mlir
// RUN: mlir-translate --mlir-to-llvmir %t.decode.mlir -o %t.decode.ll
// RUN: llc -O2 -relocation-model=pic -filetype=obj %t.decode.ll -o %t.decode.o
// RUN: %host_cc %S/Inputs/aot-driver.c %t.decode.o -L%attn_lib_dir -lattn_runtime -Wl,-rpath,%attn_lib_dir -lm -o %t.decode.exe
// RUN: %t.decode.exe | FileCheck %s
//
// Ahead-of-time use of the CPU pipeline: the spec compiled to an object with
// llc, linked into a C program that calls it through the C interface with
// out-params (q, k, v, then the output buffer; the documented signature of
// --attn-to-llvm-cpu) and checks the result against its own f64 reference.
// Before the out-params fix, the entry function still returned its result,
// so this call bound the wrong descriptors. The object calls libattn_runtime
// (its scratch allocations are checked: attn-check-allocations).

// CHECK: aot: max abs err {{.*}}: ok
func.func @aot(%q: tensor<2x4x5x8xf32>, %k: tensor<2x2x7x8xf32>,
               %v: tensor<2x2x7x8xf32>) -> tensor<2x4x5x8xf32>
    attributes {llvm.emit_c_interface} {
  %o = attn.attention q(%q : tensor<2x4x5x8xf32>) k(%k : tensor<2x2x7x8xf32>)
      v(%v : tensor<2x2x7x8xf32>) causal(bottom_right) -> tensor<2x4x5x8xf32>
  return %o : tensor<2x4x5x8xf32>
}
