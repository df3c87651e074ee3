// Quantized K/V caches (int8, fp8 e4m3 / e5m2, f32 scales per token and head
// or per page and head) in the GPU kernel: the K/V tile copies load the raw
// rows, decode them, multiply by their scales and stage them in the kernel's
// 16-bit type (converting copies, as for f32 inputs); checked against the
// f64 reference (which multiplies the raw values by their scales itself) on
// the warp-level emulator. The same ops as Execution/quantized-kv.mlir
// where the GPU takes their head dimensions.
//
// RUN: attn-run %s --device=gpu-emulate --entry=int8_dense --verify --seed=1 | FileCheck %s
// RUN: attn-run %s --device=gpu-emulate --entry=int8_dense --verify --seed=2 --gpu-splits=0 | FileCheck %s
// RUN: attn-run %s --device=gpu-emulate --entry=e4m3_paged --verify --seed=3 | FileCheck %s
// RUN: attn-run %s --device=gpu-emulate --entry=e5m2_pages_of_64 --verify --seed=4 | FileCheck %s
// RUN: attn-run %s --device=gpu-emulate --entry=latent_e4m3 --verify --seed=5 | FileCheck %s
// RUN: attn-run %s --device=gpu-emulate --entry=ragged_int8 --verify --seed=6 | FileCheck %s
// RUN: attn-run %s --device=gpu-emulate --entry=chunked_prefill_e4m3 --verify --seed=7 | FileCheck %s
// CHECK: out: {{.*}} vs reference: {{.*}} [ok
//
// Rows past kv_len hold NaN bit patterns (0x7f), their scales inf: the
// copies zero them after scaling, so every output is the mean of the five
// readable V rows, 2.0 (e4m3 0x38 = 1.0, 0x40 = 2.0).
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.k.npy u1 1x1x8x16 56*80,127*48
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.v.npy u1 1x1x8x16 64*80,127*48
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.q.npy f4 1x2x1x16 0.25
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.s.npy f4 1x1x8 1,1,1,1,1,inf,inf,inf
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.len.npy i4 1 5
// RUN: attn-run %s --device=gpu-emulate --entry=e4m3_nan_past_len --input q=%t.q.npy --input k=%t.k.npy --input v=%t.v.npy --input k_scale=%t.s.npy --input v_scale=%t.s.npy --input kv_len=%t.len.npy --verify | FileCheck %s --check-prefix=NAN
// NAN: out: f32 [1, 2, 1, 16] sum 64 abs-sum 64 | vs reference: max abs err 0, {{.*}} [ok
//
// The fp8 decode step of examples/serving/quantized_decode_step.mlir on the
// GPU: the append kernels quantize the new rows (one thread per row: scale
// max |x| / 448, values rounded to e4m3) bit for bit as the semantics and
// the CPU forms do, then the attention reads the cache; out within bf16
// staging's error of the f64 attention over the dequantized cache.
// RUN: rm -rf %t.d && mkdir -p %t.d
// RUN: %python %S/../Execution/Inputs/quantized_step.py gen %t.d
// RUN: attn-run %attn_src_root/examples/serving/quantized_decode_step.mlir --device=gpu-emulate --reps=0 --input 0=%t.d/q.npy --input 1=%t.d/kn.npy --input 2=%t.d/vn.npy --input 3=%t.d/kp.npy --input 4=%t.d/ks.npy --input 5=%t.d/vp.npy --input 6=%t.d/vs.npy --input 7=%t.d/pt.npy --input 8=%t.d/len.npy --output 0=%t.d/out.npy --output 1=%t.d/out_kp.npy --output 2=%t.d/out_ks.npy --output 3=%t.d/out_vp.npy --output 4=%t.d/out_vs.npy
// RUN: %python %S/../Execution/Inputs/quantized_step.py check %t.d 2e-2 | FileCheck %s --check-prefix=STEP
// STEP: out vs f64 reference on the dequantized cache: max abs err
// STEP: appended rows and scales: match
//
// int8 with per-(batch entry, head) K scales and per-token V scales: the
// GPU's appended caches and scales equal the CPU's byte for byte (the CPU's
// are checked by hand in Execution/quantized-append.mlir).
// RUN: attn-run %s --entry=int8_step --form=fused --reps=0 --seed=3 --output 1=%t.c1.npy --output 2=%t.c2.npy --output 3=%t.c3.npy
// RUN: attn-run %s --entry=int8_step --device=gpu-emulate --reps=0 --seed=3 --output 1=%t.g1.npy --output 2=%t.g2.npy --output 3=%t.g3.npy
// RUN: cmp %t.c1.npy %t.g1.npy
// RUN: cmp %t.c2.npy %t.g2.npy
// RUN: cmp %t.c3.npy %t.g3.npy

// Decode-ish: 4 queries per head, int8, bhnd, per-token K scales, per
// (batch entry, head) V scales, a causal diagonal and kv_len.
func.func @int8_dense(%q: tensor<2x8x4x64xf32>, %k: tensor<2x2x100x64xi8>,
                      %v: tensor<2x2x100x64xi8>, %ks: tensor<2x2x100xf32>,
                      %vs: tensor<2x2xf32>, %len: tensor<2xi32>)
    -> (tensor<2x8x4x64xf32>, tensor<2x8x4xf32>) {
  %o, %l = attn.attention q(%q : tensor<2x8x4x64xf32>)
      k(%k : tensor<2x2x100x64xi8>) v(%v : tensor<2x2x100x64xi8>)
      k_scale(%ks : tensor<2x2x100xf32>) v_scale(%vs : tensor<2x2xf32>)
      kv_len(%len : tensor<2xi32>) causal(bottom_right)
      -> tensor<2x8x4x64xf32>, tensor<2x8x4xf32>
  return %o, %l : tensor<2x8x4x64xf32>, tensor<2x8x4xf32>
}

// Paged decode, vLLM's bnhd pools of 16-token pages (key tiles of several
// pages), fp8 e4m3, per-page K scales, per-token V scales, bf16 queries.
func.func @e4m3_paged(%q: tensor<3x1x8x128xbf16>, %k: tensor<40x16x2x128xf8E4M3FN>,
                      %v: tensor<40x16x2x128xf8E4M3FN>, %ks: tensor<40x2xf32>,
                      %vs: tensor<40x16x2xf32>, %pt: tensor<3x12xi32>,
                      %len: tensor<3xi32>) -> tensor<3x1x8x128xbf16> {
  %o = attn.attention q(%q : tensor<3x1x8x128xbf16>)
      k(%k : tensor<40x16x2x128xf8E4M3FN>) v(%v : tensor<40x16x2x128xf8E4M3FN>)
      page_table(%pt : tensor<3x12xi32>) layout(bnhd)
      k_scale(%ks : tensor<40x2xf32>) v_scale(%vs : tensor<40x16x2xf32>)
      kv_len(%len : tensor<3xi32>) causal(bottom_right)
      -> tensor<3x1x8x128xbf16>
  return %o : tensor<3x1x8x128xbf16>
}

// Pages of 64 tokens (tiles inside one page), fp8 e5m2, f16 queries,
// sliding window.
func.func @e5m2_pages_of_64(%q: tensor<2x4x1x64xf16>, %k: tensor<12x2x64x64xf8E5M2>,
                            %v: tensor<12x2x64x64xf8E5M2>, %ks: tensor<12x2x64xf32>,
                            %vs: tensor<12x2x64xf32>, %pt: tensor<2x5xi32>,
                            %len: tensor<2xi32>) -> tensor<2x4x1x64xf16> {
  %o = attn.attention q(%q : tensor<2x4x1x64xf16>)
      k(%k : tensor<12x2x64x64xf8E5M2>) v(%v : tensor<12x2x64x64xf8E5M2>)
      page_table(%pt : tensor<2x5xi32>) k_scale(%ks : tensor<12x2x64xf32>)
      v_scale(%vs : tensor<12x2x64xf32>) kv_len(%len : tensor<2xi32>)
      causal(bottom_right) window_left(100) -> tensor<2x4x1x64xf16>
  return %o : tensor<2x4x1x64xf16>
}

// Latent attention over an fp8 latent cache: V is K's first 128 columns,
// scaled by k_scale.
func.func @latent_e4m3(%q: tensor<2x16x1x192xf32>, %c: tensor<2x1x200x192xf8E4M3FN>,
                       %s: tensor<2x1x200xf32>, %len: tensor<2xi32>)
    -> (tensor<2x16x1x128xf32>, tensor<2x16x1xf32>) {
  %o, %l = attn.attention q(%q : tensor<2x16x1x192xf32>)
      k(%c : tensor<2x1x200x192xf8E4M3FN>) v(%c : tensor<2x1x200x192xf8E4M3FN>)
      v_from_k(128) k_scale(%s : tensor<2x1x200xf32>)
      kv_len(%len : tensor<2xi32>) -> tensor<2x16x1x128xf32>, tensor<2x16x1xf32>
  return %o, %l : tensor<2x16x1x128xf32>, tensor<2x16x1xf32>
}

// A ragged batch over an int8 cache: per-token scales follow their keys.
func.func @ragged_int8(%q: tensor<1x4x70x64xf32>, %k: tensor<1x2x150x64xi8>,
                       %v: tensor<1x2x150x64xi8>, %ks: tensor<1x2x150xf32>,
                       %vs: tensor<1x2xf32>, %cq: tensor<4xi32>,
                       %ck: tensor<4xi32>) -> tensor<1x4x70x64xf32> {
  %o = attn.attention q(%q : tensor<1x4x70x64xf32>) k(%k : tensor<1x2x150x64xi8>)
      v(%v : tensor<1x2x150x64xi8>) ragged(%cq, %ck : tensor<4xi32>, tensor<4xi32>)
      k_scale(%ks : tensor<1x2x150xf32>) v_scale(%vs : tensor<1x2xf32>)
      causal(bottom_right) -> tensor<1x4x70x64xf32>
  return %o : tensor<1x4x70x64xf32>
}

// Chunked prefill over an fp8 paged cache.
func.func @chunked_prefill_e4m3(%q: tensor<1x8x60x64xf16>,
                                %k: tensor<32x2x16x64xf8E4M3FN>,
                                %v: tensor<32x2x16x64xf8E4M3FN>,
                                %ks: tensor<32x2x16xf32>, %vs: tensor<32x2xf32>,
                                %cq: tensor<4xi32>, %pt: tensor<3x8xi32>,
                                %len: tensor<3xi32>) -> tensor<1x8x60x64xf16> {
  %o = attn.attention q(%q : tensor<1x8x60x64xf16>)
      k(%k : tensor<32x2x16x64xf8E4M3FN>) v(%v : tensor<32x2x16x64xf8E4M3FN>)
      ragged(%cq : tensor<4xi32>) page_table(%pt : tensor<3x8xi32>)
      k_scale(%ks : tensor<32x2x16xf32>) v_scale(%vs : tensor<32x2xf32>)
      kv_len(%len : tensor<3xi32>) causal(bottom_right)
      -> tensor<1x8x60x64xf16>
  return %o : tensor<1x8x60x64xf16>
}

// One query per head (two heads, MQA) over 8 keys of which kv_len = 5 are
// readable.
func.func @e4m3_nan_past_len(%q: tensor<1x2x1x16xf32>,
                             %k: tensor<1x1x8x16xf8E4M3FN>,
                             %v: tensor<1x1x8x16xf8E4M3FN>,
                             %ks: tensor<1x1x8xf32>, %vs: tensor<1x1x8xf32>,
                             %len: tensor<1xi32>) -> tensor<1x2x1x16xf32> {
  %o = attn.attention q(%q : tensor<1x2x1x16xf32>)
      k(%k : tensor<1x1x8x16xf8E4M3FN>) v(%v : tensor<1x1x8x16xf8E4M3FN>)
      k_scale(%ks : tensor<1x1x8xf32>) v_scale(%vs : tensor<1x1x8xf32>)
      kv_len(%len : tensor<1xi32>) -> tensor<1x2x1x16xf32>
  return %o : tensor<1x2x1x16xf32>
}

// A decode step over an int8 dense cache with per-(batch entry, head) K
// scales (the caller's, unchanged by the append) and per-token V scales.
func.func @int8_step(%q: tensor<2x4x1x64xf16>, %kn: tensor<2x2x1x64xf16>,
                     %vn: tensor<2x2x1x64xf16>, %kc: tensor<2x2x40x64xi8>,
                     %ks: tensor<2x2xf32>, %vc: tensor<2x2x40x64xi8>,
                     %vs: tensor<2x2x40xf32>, %len: tensor<2xi32>)
    -> (tensor<2x4x1x64xf16>, tensor<2x2x40x64xi8>, tensor<2x2x40x64xi8>,
        tensor<2x2x40xf32>) {
  %kc2, %ks2 = attn.kv_cache_append cache(%kc : tensor<2x2x40x64xi8>)
      update(%kn : tensor<2x2x1x64xf16>) at(%len : tensor<2xi32>)
      scales(%ks : tensor<2x2xf32>)
      -> tensor<2x2x40x64xi8>, tensor<2x2xf32>
  %vc2, %vs2 = attn.kv_cache_append cache(%vc : tensor<2x2x40x64xi8>)
      update(%vn : tensor<2x2x1x64xf16>) at(%len : tensor<2xi32>)
      scales(%vs : tensor<2x2x40xf32>)
      -> tensor<2x2x40x64xi8>, tensor<2x2x40xf32>
  %one = arith.constant dense<1> : tensor<2xi32>
  %len2 = arith.addi %len, %one : tensor<2xi32>
  %out = attn.attention q(%q : tensor<2x4x1x64xf16>)
      k(%kc2 : tensor<2x2x40x64xi8>) v(%vc2 : tensor<2x2x40x64xi8>)
      kv_len(%len2 : tensor<2xi32>) k_scale(%ks2 : tensor<2x2xf32>)
      v_scale(%vs2 : tensor<2x2x40xf32>) causal(bottom_right)
      -> tensor<2x4x1x64xf16>
  return %out, %kc2, %vc2, %vs2
      : tensor<2x4x1x64xf16>, tensor<2x2x40x64xi8>, tensor<2x2x40x64xi8>,
        tensor<2x2x40xf32>
}
