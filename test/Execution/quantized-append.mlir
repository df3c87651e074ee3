// attn.kv_cache_append into quantized caches (values worked out by hand
// from the rule in AttnOps.td: per-token scale = max |x| / qmax, values x /
// scale rounded to nearest even; per-block scales are the caller's, values
// saturate).
//
// The fp8 decode step of examples/serving/quantized_decode_step.mlir (append
// K and V, then attend), every form, checked by an independent numpy script:
// the appended rows and scales bit for bit, no other row changed, out against
// an f64 attention over the dequantized cache.
// RUN: rm -rf %t.d && mkdir -p %t.d
// RUN: %python %S/Inputs/quantized_step.py gen %t.d
// RUN: attn-run %attn_src_root/examples/serving/quantized_decode_step.mlir --form=fused --reps=0 --input 0=%t.d/q.npy --input 1=%t.d/kn.npy --input 2=%t.d/vn.npy --input 3=%t.d/kp.npy --input 4=%t.d/ks.npy --input 5=%t.d/vp.npy --input 6=%t.d/vs.npy --input 7=%t.d/pt.npy --input 8=%t.d/len.npy --output 0=%t.d/out.npy --output 1=%t.d/out_kp.npy --output 2=%t.d/out_ks.npy --output 3=%t.d/out_vp.npy --output 4=%t.d/out_vs.npy
// RUN: %python %S/Inputs/quantized_step.py check %t.d | FileCheck %s --check-prefix=STEP
// RUN: attn-run %attn_src_root/examples/serving/quantized_decode_step.mlir --form=decode --reps=0 --input 0=%t.d/q.npy --input 1=%t.d/kn.npy --input 2=%t.d/vn.npy --input 3=%t.d/kp.npy --input 4=%t.d/ks.npy --input 5=%t.d/vp.npy --input 6=%t.d/vs.npy --input 7=%t.d/pt.npy --input 8=%t.d/len.npy --output 0=%t.d/out.npy --output 1=%t.d/out_kp.npy --output 2=%t.d/out_ks.npy --output 3=%t.d/out_vp.npy --output 4=%t.d/out_vs.npy
// RUN: %python %S/Inputs/quantized_step.py check %t.d | FileCheck %s --check-prefix=STEP
// RUN: attn-run %attn_src_root/examples/serving/quantized_decode_step.mlir --form=naive --reps=0 --input 0=%t.d/q.npy --input 1=%t.d/kn.npy --input 2=%t.d/vn.npy --input 3=%t.d/kp.npy --input 4=%t.d/ks.npy --input 5=%t.d/vp.npy --input 6=%t.d/vs.npy --input 7=%t.d/pt.npy --input 8=%t.d/len.npy --output 0=%t.d/out.npy --output 1=%t.d/out_kp.npy --output 2=%t.d/out_ks.npy --output 3=%t.d/out_vp.npy --output 4=%t.d/out_vs.npy
// RUN: %python %S/Inputs/quantized_step.py check %t.d | FileCheck %s --check-prefix=STEP
// STEP: out vs f64 reference on the dequantized cache: max abs err
// STEP: appended rows and scales: match
// The check fails on a cache that was not appended to (the inputs as outputs).
// RUN: cp %t.d/kp.npy %t.d/out_kp.npy
// RUN: not %python %S/Inputs/quantized_step.py check %t.d | FileCheck %s --check-prefix=WRONG
// WRONG: k cache differs in
// WRONG: appended rows and scales: MISMATCH
//
// RUN: attn-run %s --entry=int8_paged_per_token --print --reps=0 | FileCheck %s --check-prefix=INT8
// seq 0: x = [1, -2, 0.5, 4] at position 1 = page 1 row 1: scale 4 / 127,
// x / scale = [31.75, -63.5, 15.875, 127] -> [32, -64, 16, 127];
// seq 1: a zero row at position 0 = page 0 row 0: scale 1, values 0.
// INT8: result0: i8 [2, 1, 2, 4]
// INT8-NEXT: {{^}}0 0 0 0 9 9 9 9{{$}}
// INT8-NEXT: {{^}}9 9 9 9 32 -64 16 127{{$}}
// INT8: result1: f32 [2, 1, 2]
// INT8-NEXT: {{^}}1 0.5 0.5 0.0314961{{$}}
func.func @int8_paged_per_token() -> (tensor<2x1x2x4xi8>, tensor<2x1x2xf32>) {
  %c = arith.constant dense<9> : tensor<2x1x2x4xi8>
  %s = arith.constant dense<0.5> : tensor<2x1x2xf32>
  %u = arith.constant dense<[[[[1.0, -2.0, 0.5, 4.0]]], [[[0.0, 0.0, 0.0, 0.0]]]]> : tensor<2x1x1x4xf32>
  %pt = arith.constant dense<[[1, 0], [0, 1]]> : tensor<2x2xi32>
  %at = arith.constant dense<[1, 0]> : tensor<2xi32>
  %c2, %s2 = attn.kv_cache_append cache(%c : tensor<2x1x2x4xi8>)
      update(%u : tensor<2x1x1x4xf32>) at(%at : tensor<2xi32>)
      page_table(%pt : tensor<2x2xi32>) scales(%s : tensor<2x1x2xf32>)
      -> tensor<2x1x2x4xi8>, tensor<2x1x2xf32>
  return %c2, %s2 : tensor<2x1x2x4xi8>, tensor<2x1x2xf32>
}

// RUN: attn-run %s --entry=e4m3_dense_per_block --print --reps=0 | FileCheck %s --check-prefix=E4M3
// scale 0.5: x / scale = [2, -600, 0.001, 2000, 0.2, -0, 6.6, 0.00048]
// -> [2, -448 (saturated), 2^-9 (a subnormal), 448, 0.203125, -0, 6.5, 0]
// at position 2; the scales stay.
// E4M3: result0: f8E4M3FN [1, 1, 3, 8]
// E4M3-NEXT: {{^}}1 1 1 1 1 1 1 1{{$}}
// E4M3-NEXT: {{^}}1 1 1 1 1 1 1 1{{$}}
// E4M3-NEXT: {{^}}2 -448 0.00195312 448 0.203125 -0 6.5 0{{$}}
// E4M3: result1: f32 [1, 1]
// E4M3-NEXT: {{^}}0.5{{$}}
func.func @e4m3_dense_per_block() -> (tensor<1x1x3x8xf8E4M3FN>, tensor<1x1xf32>) {
  %c = arith.constant dense<1.0> : tensor<1x1x3x8xf8E4M3FN>
  %s = arith.constant dense<0.5> : tensor<1x1xf32>
  %u = arith.constant dense<[[[[1.0, -300.0, 0.0005, 1000.0, 0.1, -0.0, 3.3, 0.00024]]]]> : tensor<1x1x1x8xf32>
  %at = arith.constant dense<2> : tensor<1xi32>
  %c2, %s2 = attn.kv_cache_append cache(%c : tensor<1x1x3x8xf8E4M3FN>)
      update(%u : tensor<1x1x1x8xf32>) at(%at : tensor<1xi32>)
      scales(%s : tensor<1x1xf32>) -> tensor<1x1x3x8xf8E4M3FN>, tensor<1x1xf32>
  return %c2, %s2 : tensor<1x1x3x8xf8E4M3FN>, tensor<1x1xf32>
}

// RUN: attn-run %s --entry=e5m2_dense_per_token_bnhd --print --reps=0 | FileCheck %s --check-prefix=E5M2
// Two tokens at position 1 (bnhd), bf16 updates. Row [1, 2, 3, 4]: scale
// 4 / 57344, x / scale = [14336, 28672, 43008, 57344] -> 43008 = 1.3125 *
// 2^15 rounds to 1.25 * 2^15 = 40960. Row [-0.5, 0, 0, 0.25]: scale 0.5 /
// 57344, values [-57344, 0, 0, 28672].
// E5M2: result0: f8E5M2 [1, 3, 1, 4]
// E5M2-NEXT: {{^}}0 0 0 0 14336 28672 40960 57344{{$}}
// E5M2-NEXT: {{^}}-57344 0 0 28672{{$}}
// E5M2: result1: f32 [1, 3, 1]
// E5M2-NEXT: {{^}}2 6.97545e-05 8.71931e-06{{$}}
func.func @e5m2_dense_per_token_bnhd() -> (tensor<1x3x1x4xf8E5M2>, tensor<1x3x1xf32>) {
  %c = arith.constant dense<0.0> : tensor<1x3x1x4xf8E5M2>
  %s = arith.constant dense<2.0> : tensor<1x3x1xf32>
  %u = arith.constant dense<[[[[1.0, 2.0, 3.0, 4.0]], [[-0.5, 0.0, 0.0, 0.25]]]]> : tensor<1x2x1x4xbf16>
  %at = arith.constant dense<1> : tensor<1xi32>
  %c2, %s2 = attn.kv_cache_append cache(%c : tensor<1x3x1x4xf8E5M2>)
      update(%u : tensor<1x2x1x4xbf16>) at(%at : tensor<1xi32>)
      scales(%s : tensor<1x3x1xf32>) layout(bnhd)
      -> tensor<1x3x1x4xf8E5M2>, tensor<1x3x1xf32>
  return %c2, %s2 : tensor<1x3x1x4xf8E5M2>, tensor<1x3x1xf32>
}
