// Unsupported element types (docs/Robustness.md): q, k, v and out take f32,
// f16 or bf16 (one type for all four; k and v may instead be a quantized
// cache, i8 or fp8, with k_scale and v_scale: invalid-quantized.mlir), masks i1, kv_len i32 or i64, ALiBi
// slopes and lse f32. Anything else is an ODS diagnostic from the verifier
// (every case: test/Dialect/Attn/invalid.mlir); attn-run stops there with
// exit status 1, and also rejects entry arguments it cannot pass.
//
// RUN: not attn-opt %s -split-input-file -o /dev/null 2>&1 | FileCheck %s --implicit-check-not=error:
// RUN: not attn-run %s 2>&1 | FileCheck %s --check-prefix=RUN-F64
// RUN-F64: error: 'attn.attention' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<1x1x2x2xf64>'
// RUN-F64: attn-run: error: could not parse {{.*}}unsupported-types.mlir
// RUN: not attn-run %S/Inputs/complex-arg.mlir 2>&1 | FileCheck %s --check-prefix=RUN-ARG
// RUN-ARG: attn-run: error: argument 3 is not a ranked tensor of f32, f16, bf16, f64, i1, i8, i32, i64, f8E4M3FN or f8E5M2

// CHECK: error: 'attn.attention' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<1x1x2x2xf64>'
func.func @f64(%q: tensor<1x1x2x2xf64>) -> tensor<1x1x2x2xf64> {
  %0 = attn.attention q(%q : tensor<1x1x2x2xf64>) k(%q : tensor<1x1x2x2xf64>) v(%q : tensor<1x1x2x2xf64>) -> tensor<1x1x2x2xf64>
  return %0 : tensor<1x1x2x2xf64>
}

// -----

// CHECK: error: 'attn.attention' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<1x1x2x2xf8E4M3FN>'
func.func @f8(%q: tensor<1x1x2x2xf8E4M3FN>) -> tensor<1x1x2x2xf8E4M3FN> {
  %0 = attn.attention q(%q : tensor<1x1x2x2xf8E4M3FN>) k(%q : tensor<1x1x2x2xf8E4M3FN>) v(%q : tensor<1x1x2x2xf8E4M3FN>) -> tensor<1x1x2x2xf8E4M3FN>
  return %0 : tensor<1x1x2x2xf8E4M3FN>
}

// -----

// CHECK: error: 'attn.attention' op q, k, v and out must share one element type (k and v may share an 8-bit quantized one); got 'f32', 'f16', 'f16', 'f32'
func.func @mixed(%q: tensor<1x1x2x2xf32>, %k: tensor<1x1x2x2xf16>) -> tensor<1x1x2x2xf32> {
  %0 = attn.attention q(%q : tensor<1x1x2x2xf32>) k(%k : tensor<1x1x2x2xf16>) v(%k : tensor<1x1x2x2xf16>) -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}

// -----

// CHECK: error: 'attn.attention' op operand #3 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<1xi16>'
func.func @i16_kv_len(%q: tensor<1x1x2x2xf32>, %len: tensor<1xi16>) -> tensor<1x1x2x2xf32> {
  %0 = attn.attention q(%q : tensor<1x1x2x2xf32>) k(%q : tensor<1x1x2x2xf32>) v(%q : tensor<1x1x2x2xf32>) kv_len(%len : tensor<1xi16>) -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}

// -----

// CHECK: error: 'attn.attention' op operand #3 must be ranked tensor of 1-bit signless integer values, but got 'tensor<2x2xf32>'
func.func @float_mask(%q: tensor<1x1x2x2xf32>, %m: tensor<2x2xf32>) -> tensor<1x1x2x2xf32> {
  %0 = attn.attention q(%q : tensor<1x1x2x2xf32>) k(%q : tensor<1x1x2x2xf32>) v(%q : tensor<1x1x2x2xf32>) mask(%m : tensor<2x2xf32>) -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}
