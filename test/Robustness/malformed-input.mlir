// Malformed input to attn-run (docs/Robustness.md): a file that does not
// parse, one that parses but does not verify, an empty file and binary
// garbage all end with a diagnostic and exit status 1, never a crash. (The
// parser and verifier on arbitrary text: test/Dialect/Attn/malformed.mlir
// and the fuzzer attn-fuzz-parse, docs/Robustness.md.)
//
// RUN: not attn-run %s 2>&1 | FileCheck %s --check-prefix=TRUNCATED
// TRUNCATED: error: expected ':'
// TRUNCATED: attn-run: error: could not parse {{.*}}malformed-input.mlir
//
// RUN: echo "" > %t.empty.mlir
// RUN: not attn-run %t.empty.mlir 2>&1 | FileCheck %s --check-prefix=EMPTY
// EMPTY: attn-run: error: no public function with a body in {{.*}}empty.mlir
//
// RUN: %python -c "import sys; sys.stdout.buffer.write(bytes(range(1, 256)))" > %t.bin.mlir
// RUN: not attn-run %t.bin.mlir 2>&1 | FileCheck %s --check-prefix=BINARY
// BINARY: attn-run: error:
//
// RUN: not attn-opt %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=TRUNCATED-OPT
// TRUNCATED-OPT: error: expected ':'

func.func @f(%q: tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32> {
  %0 = attn.attention q(%q : tensor<1x1x2x2xf32>) k(%q : tensor<1x1x2x2xf32>) v(%q
