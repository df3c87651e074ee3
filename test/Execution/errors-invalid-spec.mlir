// attn-run rejects a spec that fails verification, and one that does not
// parse, before compiling anything.
//
// RUN: not attn-run %s 2>&1 | FileCheck %s --check-prefix=INVALID
// INVALID: error: 'attn.attention' op query heads must be a multiple of K/V heads: Hq = 3 is not divisible by Hkv = 2
// INVALID: attn-run: error:
// INVALID-NOT: compile:
//
// RUN: echo 'func.func @f(' > %t.syntax.mlir
// RUN: not attn-run %t.syntax.mlir 2>&1 | FileCheck %s --check-prefix=SYNTAX
// SYNTAX: error:
// SYNTAX: attn-run: error: could not parse {{.*}}syntax.mlir

func.func @f(%q: tensor<1x3x4x8xf32>, %k: tensor<1x2x4x8xf32>,
             %v: tensor<1x2x4x8xf32>) -> tensor<1x3x4x8xf32> {
  %out = attn.attention q(%q : tensor<1x3x4x8xf32>) k(%k : tensor<1x2x4x8xf32>)
      v(%v : tensor<1x2x4x8xf32>) -> tensor<1x3x4x8xf32>
  return %out : tensor<1x3x4x8xf32>
}
