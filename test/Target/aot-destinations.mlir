// REQUIRES: host-cc
// The driver links libattn_runtime, which sanitizer builds instrument: an
// uninstrumented C program cannot load it (nothing here is instrumented).
// UNSUPPORTED: sanitizer
// RUN: attn-opt %s --attn-to-llvm-cpu="form=fused parallel=false" -o %t.llvm.mlir
// RUN: mlir-translate --mlir-to-llvmir %t.llvm.mlir -o %t.ll
// RUN: llc -O2 -relocation-model=pic -filetype=obj %t.ll -o %t.o
// RUN: %host_cc -I%attn_src_root/include %S/Inputs/aot-destination-driver.c %t.o -L%attn_lib_dir -lattn_runtime -Wl,-rpath,%attn_lib_dir -lm -o %t.exe
// RUN: %t.exe | FileCheck %s
// RUN: attn-opt %s --attn-to-llvm-cpu="form=decode" -o %t.decode.mlir
// RUN: mlir-translate --mlir-to-llvmir %t.decode.mlir -o %t.decode.ll
// RUN: llc -O2 -relocation-model=pic -filetype=obj %t.decode.ll -o %t.decode.o
// RUN: %host_cc -I%attn_src_root/include %S/Inputs/aot-destination-driver.c %t.decode.o -L%attn_lib_dir -lattn_runtime -L%mlir_lib_dir -lomp -lmlir_c_runner_utils -Wl,-rpath,%attn_lib_dir -Wl,-rpath,%mlir_lib_dir -lm -o %t.decode.exe
// RUN: %t.decode.exe | FileCheck %s
//
// Ahead-of-time use of a spec with dynamic sizes: the result is a destination
// the caller allocates (attn-results-to-destinations), written in place, its
// sizes checked by the kernel against the inputs' before any work. (The
// decode form copies its merged result into the strided destination with
// MLIR's memrefCopy, from libmlir_c_runner_utils here; attn-compile's
// kernels call libattn_runtime's copy instead.)

// CHECK: call: ATTN_STATUS_OK
// CHECK: aot: max abs err {{.*}}: ok
// CHECK: short output: ATTN_STATUS_SHAPE_MISMATCH: attn: output #0 has size 4 in dimension 2, the inputs give 5
// CHECK: short output: zeros ok, canaries intact
func.func @aot(%q: tensor<?x4x?x8xf32>, %k: tensor<?x2x?x8xf32>,
               %v: tensor<?x2x?x8xf32>) -> tensor<?x4x?x8xf32>
    attributes {llvm.emit_c_interface} {
  %o = attn.attention q(%q : tensor<?x4x?x8xf32>) k(%k : tensor<?x2x?x8xf32>)
      v(%v : tensor<?x2x?x8xf32>) causal(bottom_right) -> tensor<?x4x?x8xf32>
  return %o : tensor<?x4x?x8xf32>
}
