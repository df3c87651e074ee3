// Paged K/V in the GPU kernel: the key-tile loader reads each key's row
// through the page table (cp.async per 16-byte chunk, so any page size
// works, also one that does not divide the key tile), both pool orders,
// run on the warp-level emulator against the f64 reference (random inputs:
// pages in shuffled order, entries past a sequence's last
// page -1).
// RUN: attn-run %s --device=gpu-emulate --entry=decode_gqa --verify | FileCheck %s --check-prefix=DECODE
// RUN: attn-run %s --device=gpu-emulate --entry=prefill_bnhd --verify --gpu-tile-k=64 | FileCheck %s --check-prefix=PREFILL
// RUN: attn-run %s --device=gpu-emulate --entry=prefill_bnhd --verify --gpu-tile-k=16 --gpu-warps=2 | FileCheck %s --check-prefix=PREFILL
// DECODE: out: f16 [3, 8, 1, 64] {{.*}} [ok
// DECODE: lse: f32 [3, 8, 1] {{.*}} [ok
// PREFILL: out: bf16 [2, 40, 4, 32] {{.*}} [ok
//
// A page table entry a sequence reads that lies outside the pool is
// recorded in the kernel's error word and reported like the CPU's check;
// the CPU forms give the same message.
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.pt.npy i4 3x4 0,1,2,3,4,5,99,-1,7,8,-1,-1
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.len.npy i4 3 64,40,20
// RUN: not attn-run %s --device=gpu-emulate --entry=decode_gqa \
// RUN:   --input page_table=%t.pt.npy --input kv_len=%t.len.npy 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not attn-run %s --form=fused --entry=decode_gqa --reps=0 \
// RUN:   --input page_table=%t.pt.npy --input kv_len=%t.len.npy 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: attn-run: error: run failed: attn: a page_table entry that a sequence reads lies outside the page pool: page_table[1, 2] = 99, the pool has 16 pages
// BAD-NOT: PLEASE submit a bug report
// The same table with sequence 1 ending before its bad page: nothing reads
// it, and the call succeeds.
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.len2.npy i4 3 64,32,20
// RUN: attn-run %s --device=gpu-emulate --entry=decode_gqa --verify \
// RUN:   --input page_table=%t.pt.npy --input kv_len=%t.len2.npy | FileCheck %s --check-prefix=DECODE

func.func @decode_gqa(%q: tensor<3x8x1x64xf16>, %kp: tensor<16x2x16x64xf16>,
                      %vp: tensor<16x2x16x64xf16>, %pt: tensor<3x4xi32>,
                      %len: tensor<3xi32>)
    -> (tensor<3x8x1x64xf16>, tensor<3x8x1xf32>) {
  %out, %lse = attn.attention q(%q : tensor<3x8x1x64xf16>)
      k(%kp : tensor<16x2x16x64xf16>) v(%vp : tensor<16x2x16x64xf16>)
      page_table(%pt : tensor<3x4xi32>) kv_len(%len : tensor<3xi32>)
      causal(bottom_right)
      -> tensor<3x8x1x64xf16>, tensor<3x8x1xf32>
  return %out, %lse : tensor<3x8x1x64xf16>, tensor<3x8x1xf32>
}

// vLLM's pool order [P, S, Hkv, D] (layout(bnhd)), pages of 24 tokens.
func.func @prefill_bnhd(%q: tensor<2x40x4x32xbf16>,
                        %kp: tensor<12x24x2x32xbf16>,
                        %vp: tensor<12x24x2x32xbf16>, %pt: tensor<2x5xi64>,
                        %len: tensor<2xi32>) -> tensor<2x40x4x32xbf16> {
  %out = attn.attention q(%q : tensor<2x40x4x32xbf16>)
      k(%kp : tensor<12x24x2x32xbf16>) v(%vp : tensor<12x24x2x32xbf16>)
      layout(bnhd) page_table(%pt : tensor<2x5xi64>)
      kv_len(%len : tensor<2xi32>) causal(bottom_right) window_left(50)
      -> tensor<2x40x4x32xbf16>
  return %out : tensor<2x40x4x32xbf16>
}
