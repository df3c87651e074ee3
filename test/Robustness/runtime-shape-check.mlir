// Sizes the verifier cannot relate because they are dynamic are checked by
// the generated code: an inconsistent call aborts with a message naming the
// rule, instead of reading out of bounds. attn-run checks sizes on the host
// first, so these tests call the lowered code through mlir-runner with
// mismatched buffers. (The message goes through `puts`, hence an unbuffered
// stdout so that it is written before the abort.)

// RUN: attn-opt %s --convert-attn-to-fused-loops | FileCheck %s --check-prefix=IR
// IR-LABEL: func.func @attention
// IR: cf.assert %{{.+}}, "attn: batch sizes of q and k differ"
// IR: cf.assert %{{.+}}, "attn: k and v have different lengths"
// IR: scf.forall

// RUN: attn-opt %s --attn-to-llvm-cpu="parallel=false" \
// RUN:   | not --crash stdbuf -o0 mlir-runner -e main -entry-point-result=void \
// RUN:       -shared-libs=%mlir_lib_dir/libmlir_runner_utils.so,%mlir_lib_dir/libmlir_c_runner_utils.so 2>&1 \
// RUN:   | FileCheck %s --check-prefix=ABORT
// ABORT-NOT: attn: batch sizes
// ABORT: attn: k and v have different lengths

func.func @attention(%q: tensor<?x1x4x8xf32>, %k: tensor<?x1x?x8xf32>,
                     %v: tensor<?x1x?x8xf32>) -> tensor<?x1x4x8xf32> {
  %o = attn.attention q(%q : tensor<?x1x4x8xf32>) k(%k : tensor<?x1x?x8xf32>)
      v(%v : tensor<?x1x?x8xf32>) -> tensor<?x1x4x8xf32>
  return %o : tensor<?x1x4x8xf32>
}

func.func @main() {
  %q = arith.constant dense<1.0> : tensor<1x1x4x8xf32>
  %k = arith.constant dense<1.0> : tensor<1x1x6x8xf32>
  %v = arith.constant dense<1.0> : tensor<1x1x5x8xf32>
  %qd = tensor.cast %q : tensor<1x1x4x8xf32> to tensor<?x1x4x8xf32>
  %kd = tensor.cast %k : tensor<1x1x6x8xf32> to tensor<?x1x?x8xf32>
  %vd = tensor.cast %v : tensor<1x1x5x8xf32> to tensor<?x1x?x8xf32>
  %o = call @attention(%qd, %kd, %vd)
      : (tensor<?x1x4x8xf32>, tensor<?x1x?x8xf32>, tensor<?x1x?x8xf32>)
      -> tensor<?x1x4x8xf32>
  return
}
