// RUN: not attn-compile %s --emit=header 2>&1 | FileCheck %s --check-prefix=TYPE
// RUN: not attn-compile %S/Inputs/parse-error.mlir --emit=header 2>&1 | FileCheck %s --check-prefix=PARSE
// RUN: not attn-compile %S/Inputs/small.mlir %S/Inputs/small.mlir --emit=header 2>&1 | FileCheck %s --check-prefix=DUP
// RUN: not attn-compile %S/Inputs/missing.mlir --emit=header 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not attn-compile %S/Inputs/small.mlir --emit=bogus 2>&1 | FileCheck %s --check-prefix=EMIT
// RUN: not attn-compile %S/Inputs/small.mlir --emit=obj 2>&1 | FileCheck %s --check-prefix=NOOUT
// RUN: not attn-compile %S/Inputs/small.mlir --prefix=9x --emit=header 2>&1 | FileCheck %s --check-prefix=PREFIX
// RUN: not attn-compile %S/Inputs/small.mlir -O7 --emit=header 2>&1 | FileCheck %s --check-prefix=OPT
// RUN: not attn-compile %S/Inputs/small.mlir --target-cpu=not-a-cpu -o %t.o 2>&1 | FileCheck %s --check-prefix=CPU
// RUN: not attn-compile %S/Inputs/small.mlir --target-triple=bogus-thing -o %t.o 2>&1 | FileCheck %s --check-prefix=TRIPLE
// RUN: not attn-compile %S/Inputs/small.mlir --form=tiled -o %t.o 2>&1 | FileCheck %s --check-prefix=FORM
// RUN: not attn-compile %S/Inputs/small.mlir --entry=nope --emit=header 2>&1 | FileCheck %s --check-prefix=ENTRY
// RUN: not attn-compile %S/Inputs/bad-name.mlir --emit=header 2>&1 | FileCheck %s --check-prefix=NAME
// RUN: not attn-compile %S/Inputs/small.mlir --emit=shared --cc=no-such-cc -o %t.so 2>&1 | FileCheck %s --check-prefix=CC
//
// attn-compile's errors: located diagnostics for the spec, one line for bad
// options, a non-zero exit either way.

// TYPE: errors.mlir:[[@LINE+3]]:1: error: argument 0 of @unranked has type 'tensor<*xf32>'; a kernel takes ranked tensors
// TYPE: attn-compile: error: @unranked has no C kernel signature
// TYPE-NOT: attn_unranked
func.func @unranked(%x: tensor<*xf32>) -> tensor<*xf32> {
  return %x : tensor<*xf32>
}

// PARSE: parse-error.mlir:3:{{[0-9]+}}: error:
// PARSE: attn-compile: error: could not parse

// DUP: small.mlir:3:1: error: @small is defined in an earlier spec file too

// MISSING: attn-compile: error: {{.*}}missing.mlir

// EMIT: Cannot find option named 'bogus'

// NOOUT: attn-compile: error: --emit=obj, lib and shared need an output file (-o)

// PREFIX: attn-compile: error: --prefix='9x' is not the start of a C identifier

// OPT: attn-compile: error: -O7: expected 0 to 3

// CPU: attn-compile: error: {{.*}}not-a-cpu

// TRIPLE: attn-compile: error: target triple 'bogus-thing': No available targets are compatible


// FORM: attn-compile: error: unknown form 'tiled': expected naive, fused, decode or auto

// ENTRY: error: no function @nope with a body in the module

// CC: attn-compile: error: cannot find the C compiler 'no-such-cc'

// NAME: bad-name.mlir:3:1: error: function name 'kernels' cannot name a C kernel
