// --verify needs the entry function to return the attn op's results directly
// and in order, and every operand of the op to be a function argument.
//
// RUN: not attn-run %s --entry=returns_only_out --verify 2>&1 | FileCheck %s --check-prefix=RESULTS
// RUN: not attn-run %s --entry=returns_swapped --verify 2>&1 | FileCheck %s --check-prefix=RESULTS
// RUN: not attn-run %s --entry=returns_computed --verify 2>&1 | FileCheck %s --check-prefix=RESULTS
// RESULTS: attn-run: error: cannot verify: the entry function must return the attn op's results, in order
//
// Without --verify the same function runs.
// RUN: attn-run %s --entry=returns_computed --reps=1 | FileCheck %s --check-prefix=NOVERIFY
// NOVERIFY: run:
//
// RUN: not attn-run %s --entry=constant_operands --verify 2>&1 | FileCheck %s --check-prefix=CONST
// CONST: attn-run: error: cannot verify: the reference needs every operand of the attn op to be an argument of the entry function
//
// RUN: not attn-run %s --entry=no_attn_op --verify 2>&1 | FileCheck %s --check-prefix=NOATTN
// NOATTN: attn-run: error: cannot verify: the entry function has no attn op
//
// RUN: not attn-run %s 2>&1 | FileCheck %s --check-prefix=SEVERAL
// SEVERAL: attn-run: error: several public functions in {{.*}}; choose one with --entry
//
// RUN: not attn-run %s --entry=nosuch 2>&1 | FileCheck %s --check-prefix=NOENTRY
// NOENTRY: attn-run: error: no function @nosuch with a body in

func.func @returns_only_out(%q: tensor<1x1x2x2xf32>, %k: tensor<1x1x2x2xf32>,
                            %v: tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32> {
  %out, %lse = attn.attention q(%q : tensor<1x1x2x2xf32>) k(%k : tensor<1x1x2x2xf32>)
      v(%v : tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>, tensor<1x1x2xf32>
  return %out : tensor<1x1x2x2xf32>
}

func.func @returns_swapped(%q: tensor<1x1x2x2xf32>, %k: tensor<1x1x2x2xf32>,
                           %v: tensor<1x1x2x2xf32>)
    -> (tensor<1x1x2xf32>, tensor<1x1x2x2xf32>) {
  %out, %lse = attn.attention q(%q : tensor<1x1x2x2xf32>) k(%k : tensor<1x1x2x2xf32>)
      v(%v : tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>, tensor<1x1x2xf32>
  return %lse, %out : tensor<1x1x2xf32>, tensor<1x1x2x2xf32>
}

// The entry returns the result of a second attn op fed by the first (the
// one --verify would check).
func.func @returns_computed(%q: tensor<1x1x2x2xf32>, %k: tensor<1x1x2x2xf32>,
                            %v: tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32> {
  %out = attn.attention q(%q : tensor<1x1x2x2xf32>) k(%k : tensor<1x1x2x2xf32>)
      v(%v : tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %again = attn.attention q(%out : tensor<1x1x2x2xf32>) k(%k : tensor<1x1x2x2xf32>)
      v(%v : tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  return %again : tensor<1x1x2x2xf32>
}

func.func @constant_operands(%q: tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32> {
  %kv = arith.constant dense<1.0> : tensor<1x1x2x2xf32>
  %out = attn.attention q(%q : tensor<1x1x2x2xf32>) k(%kv : tensor<1x1x2x2xf32>)
      v(%kv : tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  return %out : tensor<1x1x2x2xf32>
}

func.func @no_attn_op() -> tensor<2x2xf32> {
  %c = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<2x2xf32>
  %f = linalg.fill ins(%c : f32) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
  return %f : tensor<2x2xf32>
}
