// A mask region that reads its mod_inputs tensor out of bounds (document ids
// for 16 tokens, 24 queries and keys) stops the program with the rule it
// broke instead of reading past the tensor, in every form. (The message goes
// through `puts`; attn-run keeps C's stdout line-buffered so that it is
// written before the abort.)
// RUN: not --crash attn-run %s --form=naive --reps=0 2>&1 | FileCheck %s
// RUN: not --crash attn-run %s --form=fused --reps=0 2>&1 | FileCheck %s
// RUN: not --crash attn-run %s --form=decode --reps=0 2>&1 | FileCheck %s
// CHECK: attn: mask_mod reads a mod_inputs tensor out of bounds
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
