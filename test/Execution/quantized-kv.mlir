// Quantized K/V caches (int8, fp8 e4m3 / e5m2 with f32 scales per token and
// head or per page and head) in every CPU form on random inputs against the
// f64 reference, which multiplies the raw values by their scales itself
// (lib/Reference/Reference.cpp; attn-run decodes fp8 with APFloat).
//
// RUN: attn-run %s --entry=int8_dense --form=naive --verify --reps=1 | FileCheck %s
// RUN: attn-run %s --entry=int8_dense --form=fused --verify --reps=1 --seed=2 | FileCheck %s
// RUN: attn-run %s --entry=int8_dense --form=decode --splits=3 --verify --reps=1 --seed=3 | FileCheck %s
// RUN: attn-run %s --entry=e4m3_paged --form=naive --verify --reps=1 | FileCheck %s
// RUN: attn-run %s --entry=e4m3_paged --form=fused --verify --reps=1 --seed=4 | FileCheck %s
// RUN: attn-run %s --entry=e4m3_paged --form=decode --splits=4 --verify --reps=1 --seed=5 | FileCheck %s
// RUN: attn-run %s --entry=e5m2_pages_of_64 --form=fused --verify --reps=1 --seed=6 | FileCheck %s
// RUN: attn-run %s --entry=e5m2_pages_of_64 --form=decode --verify --reps=1 --seed=7 | FileCheck %s
// RUN: attn-run %s --entry=int8_odd_head_dim --size Nk=150 --form=naive --verify --reps=1 | FileCheck %s
// RUN: attn-run %s --entry=int8_odd_head_dim --size Nk=150 --form=fused --verify --reps=1 --seed=8 | FileCheck %s
// RUN: attn-run %s --entry=latent_e4m3 --form=fused --verify --reps=1 --seed=9 | FileCheck %s
// RUN: attn-run %s --entry=latent_e4m3 --form=decode --verify --reps=1 --seed=10 | FileCheck %s
// RUN: attn-run %s --entry=ragged_int8 --form=naive --verify --reps=1 | FileCheck %s
// RUN: attn-run %s --entry=ragged_int8 --form=fused --verify --reps=1 --seed=11 | FileCheck %s
// RUN: attn-run %s --entry=chunked_prefill_e4m3 --form=fused --verify --reps=1 --seed=12 | FileCheck %s
// RUN: attn-run %s --entry=chunked_prefill_e4m3 --form=naive --verify --reps=1 --seed=13 | FileCheck %s
// RUN: attn-run %s --entry=int8_dense --form=fused --parallel --verify --reps=1 --seed=14 | FileCheck %s
// RUN: attn-run %s --entry=fp8_odd_head_dim --form=decode --verify --reps=1 --seed=15 | FileCheck %s
// RUN: attn-run %s --entry=fp8_odd_head_dim --form=fused --verify --reps=1 --seed=16 | FileCheck %s
// CHECK: out: {{.*}} vs reference: {{.*}} [ok
//
// Rows past kv_len hold NaN bit patterns (0x7f): the row-wise decode kernels
// never read them (and the packed ones mask them), so every output is the
// mean of the five readable V rows, 2.0 (e4m3 0x38 = 1.0, 0x40 = 2.0).
// RUN: %python %S/Inputs/write_npy.py %t.k.npy u1 1x1x8x16 56*80,127*48
// RUN: %python %S/Inputs/write_npy.py %t.v.npy u1 1x1x8x16 64*80,127*48
// RUN: %python %S/Inputs/write_npy.py %t.q.npy f4 1x2x1x16 0.25
// RUN: %python %S/Inputs/write_npy.py %t.s.npy f4 1x1x8 1
// RUN: %python %S/Inputs/write_npy.py %t.len.npy i4 1 5
// RUN: attn-run %s --entry=e4m3_nan_past_len --form=decode --input q=%t.q.npy --input k=%t.k.npy --input v=%t.v.npy --input k_scale=%t.s.npy --input v_scale=%t.s.npy --input kv_len=%t.len.npy --verify --reps=1 | FileCheck %s --check-prefix=NAN
// RUN: attn-run %s --entry=e4m3_nan_past_len --form=fused --input q=%t.q.npy --input k=%t.k.npy --input v=%t.v.npy --input k_scale=%t.s.npy --input v_scale=%t.s.npy --input kv_len=%t.len.npy --verify --reps=1 | FileCheck %s --check-prefix=NAN
// NAN: out: f32 [1, 2, 1, 16] sum 64 abs-sum 64 | vs reference: max abs err 0, {{.*}} [ok
//
// Scales from a file (every K row scaled by 1/127) instead of random ones.
// RUN: %python %S/Inputs/write_npy.py %t.ks.npy f4 2x2x100 0.007874015748031496
// RUN: attn-run %s --entry=int8_dense --form=fused --input k_scale=%t.ks.npy --verify --reps=1 | FileCheck %s
//
// The fused form dequantizes one key tile at a time into an f32 scratch
// tile: no f32 copy of the cache.
// RUN: attn-opt %s --convert-attn-to-fused-loops | FileCheck %s --check-prefix=IR
// IR-LABEL: func.func @int8_dense
// IR-NOT: tensor<2x2x100x64xf32>
// IR: arith.sitofp {{.*}} : vector<{{[0-9]+}}xi8> to vector<{{[0-9]+}}xf32>
// IR-LABEL: func.func @e4m3_paged
// IR: arith.bitcast {{.*}} : vector<{{[0-9]+}}xf8E4M3FN> to vector<{{[0-9]+}}xi8>

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

// A head dimension that is no whole number of vectors (element-wise
// dequantization), prefill with a dynamic key count.
func.func @int8_odd_head_dim(%q: tensor<1x4x37x40xf32>, %k: tensor<1x2x?x40xi8>,
                             %v: tensor<1x2x?x40xi8>, %ks: tensor<1x2x?xf32>,
                             %vs: tensor<1x2x?xf32>) -> tensor<1x4x37x40xf32> {
  %o = attn.attention q(%q : tensor<1x4x37x40xf32>) k(%k : tensor<1x2x?x40xi8>)
      v(%v : tensor<1x2x?x40xi8>) k_scale(%ks : tensor<1x2x?xf32>)
      v_scale(%vs : tensor<1x2x?xf32>) causal(bottom_right)
      -> tensor<1x4x37x40xf32>
  return %o : tensor<1x4x37x40xf32>
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

// Decode over fp8 caches whose head dim (40) is not a multiple of the vector
// lanes: the last chunk of each row is a partial read.
func.func @fp8_odd_head_dim(%q: tensor<2x4x1x40xf32>,
                            %k: tensor<2x2x70x40xf8E5M2>,
                            %v: tensor<2x2x70x40xf8E5M2>,
                            %ks: tensor<2x2x70xf32>, %vs: tensor<2x2xf32>,
                            %len: tensor<2xi32>) -> tensor<2x4x1x40xf32> {
  %o = attn.attention q(%q : tensor<2x4x1x40xf32>)
      k(%k : tensor<2x2x70x40xf8E5M2>) v(%v : tensor<2x2x70x40xf8E5M2>)
      k_scale(%ks : tensor<2x2x70xf32>) v_scale(%vs : tensor<2x2xf32>)
      kv_len(%len : tensor<2xi32>) causal(bottom_right)
      -> tensor<2x4x1x40xf32>
  return %o : tensor<2x4x1x40xf32>
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
