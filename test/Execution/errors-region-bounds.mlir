// A mask region that reads its mod_inputs tensor out of bounds (document ids
// for 16 tokens, 24 queries and keys) is a run-time error naming the tensor,
// the index and the size instead of a read past the tensor, in every form:
// attn-run prints it and exits 1, without a crash.
// RUN: not attn-run %s --form=naive --reps=0 2>&1 | FileCheck %s
// RUN: not attn-run %s --form=fused --reps=0 2>&1 | FileCheck %s
// RUN: not attn-run %s --form=decode --reps=0 2>&1 | FileCheck %s
// The GPU kernel records it in its device-side error word, which the host
// code reads back after the launch (here on the warp-level emulator).
// RUN: not attn-run %s --device=gpu-emulate --reps=0 2>&1 | FileCheck %s
// CHECK: attn-run: error: run failed: attn: mask_mod reads a mod_inputs tensor out of bounds: mod_inputs #0, index 16 in dimension 0 of size 16
// CHECK-NOT: PLEASE submit a bug report
func.func @short_ids(%q: tensor<1x2x24x16xf32>, %doc: tensor<16xi32>)
    -> tensor<1x2x24x16xf32> {
  %out = attn.attention q(%q : tensor<1x2x24x16xf32>)
      k(%q : tensor<1x2x24x16xf32>) v(%q : tensor<1x2x24x16xf32>)
      mod_inputs(%doc : tensor<16xi32>)
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %d: tensor<16xi32>):
        %di = tensor.extract %d[%i] : tensor<16xi32>
        %dj = tensor.extract %d[%j] : tensor<16xi32>
        %same = arith.cmpi eq, %di, %dj : i32
        attn.yield %same : i1
      } -> tensor<1x2x24x16xf32>
  return %out : tensor<1x2x24x16xf32>
}
