// Absurd sizes (docs/Robustness.md). Static sizes whose bytes a 64-bit
// integer cannot count are rejected by the verifier, on both ops (the
// projection rows B * N too, test/Dialect/Attn/invalid.mlir); the largest
// valid ones lower through the whole CPU pipeline in every form without a
// crash. Dynamic sizes that would need more memory than the machine has are
// refused by attn-run before anything is allocated.
//
// RUN: not attn-opt %s -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=VERIFY --implicit-check-not=error:
// RUN: attn-opt %S/Inputs/largest-valid.mlir --attn-to-llvm-cpu="form=naive" -o /dev/null
// RUN: attn-opt %S/Inputs/largest-valid.mlir --attn-to-llvm-cpu="form=fused" -o /dev/null
// RUN: attn-opt %S/Inputs/largest-valid.mlir --attn-to-llvm-cpu="form=decode" -o /dev/null
// Empty tensors with B = INT64_MAX (a fuzz finding: the fused form's tile-size
// choice multiplied B x Hkv x query tiles without saturating; UBSan caught it).
// RUN: attn-opt %S/Inputs/huge-batch-zero-rows.mlir --attn-to-llvm-cpu="form=fused" -o /dev/null
// RUN: attn-opt %S/Inputs/huge-batch-zero-rows.mlir --attn-to-llvm-cpu="form=decode" -o /dev/null
//
// attn-run with dynamic sizes: the verifier rejects them on the concrete
// types before any allocation, or the memory check does.
// RUN: not attn-run %S/Inputs/dynamic.mlir --size B=1,Hq=1,Hkv=1,Nq=9223372036854775807,Nk=9223372036854775807,Dqk=1,Dv=1 2>&1 | FileCheck %s --check-prefix=RUN-VERIFY
// RUN-VERIFY: operand #0 of type 'tensor<1x1x9223372036854775807x1xf32>' is too large: its size in bytes overflows a 64-bit size
// RUN-VERIFY: attn-run: error: the given sizes are inconsistent with the spec
// RUN: not attn-run %S/Inputs/dynamic.mlir --size B=1,Hq=1,Hkv=1,Nq=2147483648,Nk=2147483648,Dqk=1,Dv=1 2>&1 | FileCheck %s --check-prefix=RUN-LOGITS
// RUN-LOGITS: [B, Hq, Nq, Nk] = [1, 1, 2147483648, 2147483648] is too large: the bytes of its f32 logits overflow a 64-bit size
// RUN-LOGITS: attn-run: error: the given sizes are inconsistent with the spec
// RUN: not attn-run %S/Inputs/dynamic.mlir --size B=1,Hq=1,Hkv=1,Nq=1,Nk=4,Dqk=1099511627776,Dv=1 2>&1 | FileCheck %s --check-prefix=RUN-MEMORY
// RUN-MEMORY: attn-run: error: argument 0 [1, 1, 1, 1099511627776] would need 4398046511104 bytes, more than this machine's {{[0-9]+}} bytes of memory
// RUN: not attn-run %S/Inputs/dynamic.mlir --size B=1,Hq=1,Hkv=1,Nq=1,Nk=0,Dqk=1,Dv=1099511627776 2>&1 | FileCheck %s --check-prefix=RUN-OUT
// RUN-OUT: attn-run: error: the output would need 4398046511104 bytes, more than this machine's {{[0-9]+}} bytes of memory

// VERIFY: error: 'attn.attention' op operand #0 of type 'tensor<9223372036854775807x1x9223372036854775807x4xf32>' is too large
func.func @int64_max(%q: tensor<9223372036854775807x1x9223372036854775807x4xf32>) -> tensor<9223372036854775807x1x9223372036854775807x4xf32> {
  %o = attn.attention q(%q : tensor<9223372036854775807x1x9223372036854775807x4xf32>) k(%q : tensor<9223372036854775807x1x9223372036854775807x4xf32>) v(%q : tensor<9223372036854775807x1x9223372036854775807x4xf32>) causal(bottom_right) -> tensor<9223372036854775807x1x9223372036854775807x4xf32>
  return %o : tensor<9223372036854775807x1x9223372036854775807x4xf32>
}

// -----

// The inputs fit, the result does not: B * Hq * Nq * Dv * 4 = 2^64 bytes.
// VERIFY: error: 'attn.attention' op result #0 of type 'tensor<1x2147483648x1x2147483648xf32>' is too large
func.func @result_too_large(%q: tensor<1x2147483648x1x1xf32>, %k: tensor<1x1x1x1xf32>, %v: tensor<1x1x1x2147483648xf32>) -> tensor<1x2147483648x1x2147483648xf32> {
  %o = attn.attention q(%q : tensor<1x2147483648x1x1xf32>) k(%k : tensor<1x1x1x1xf32>) v(%v : tensor<1x1x1x2147483648xf32>) -> tensor<1x2147483648x1x2147483648xf32>
  return %o : tensor<1x2147483648x1x2147483648xf32>
}

// -----

// VERIFY: error: 'attn.attention' op [B, Hq, Nq, Nk] = [2, 1, 4294967296, 4294967296] is too large: the bytes of its f32 logits overflow a 64-bit size
func.func @logits(%q: tensor<2x1x4294967296x1xf16>) -> tensor<2x1x4294967296x1xf16> {
  %o = attn.attention q(%q : tensor<2x1x4294967296x1xf16>) k(%q : tensor<2x1x4294967296x1xf16>) v(%q : tensor<2x1x4294967296x1xf16>) -> tensor<2x1x4294967296x1xf16>
  return %o : tensor<2x1x4294967296x1xf16>
}

// -----

// VERIFY: error: 'attn.projected_attention' op the projected q [B, N, H, D] = [1, 2, 2, 1152921504606846976] is too large: its size in bytes overflows a 64-bit size
func.func @projected_weight(%x: tensor<1x2x4xf32>, %wq: tensor<4x2305843009213693952xf32>, %wk: tensor<4x1152921504606846976xf32>, %wv: tensor<4x1xf32>, %wo: tensor<2x4xf32>) -> tensor<1x2x4xf32> {
  %y = attn.projected_attention x(%x : tensor<1x2x4xf32>) wq(%wq : tensor<4x2305843009213693952xf32>) wk(%wk : tensor<4x1152921504606846976xf32>) wv(%wv : tensor<4x1xf32>) wo(%wo : tensor<2x4xf32>) heads(2, 1) -> tensor<1x2x4xf32>
  return %y : tensor<1x2x4xf32>
}
