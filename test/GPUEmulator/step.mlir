// A decode step with a dense KV cache on the GPU (StepHost.cpp): append the
// new token's K and V at kv_len[b], kv_len + 1 by an elementwise kernel,
// then the attention over the updated caches, bottom-right causal. The
// numbers are test/Execution/decode-step.mlir's, spread over D = 16 (the
// GPU kernel's smallest head dimension) and two sequences: q = 1/4 in
// every column and k rows of x in every column give the logit x (scale
// 1/4).
//   sequence 0: cache k = [0, 1], v = [10, 20], kv_len 2; the new token
//     k = 2, v = 30: out = (10 + 20 e + 30 e^2) / (1 + e + e^2) = 25.7521
//   sequence 1: an empty cache (kv_len 0); the new token k = 3, v = 40:
//     out = 40
// The returned caches show the new rows (row 2 of sequence 0, row 0 of
// sequence 1); rows past them keep the cache's values (7, never read).
//
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.q.npy f2 2x1x1x16 0.25*32
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.kn.npy f2 2x1x1x16 2*16,3*16
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.vn.npy f2 2x1x1x16 30*16,40*16
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.kc.npy f2 2x1x4x16 0*16,1*16,7*16,7*16,7*64
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.vc.npy f2 2x1x4x16 10*16,20*16,7*16,7*16,7*64
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.len.npy i4 2 2,0
// RUN: attn-run %s --device=gpu-emulate --print --input 0=%t.q.npy \
// RUN:   --input 1=%t.kn.npy --input 2=%t.vn.npy --input 3=%t.kc.npy \
// RUN:   --input 4=%t.vc.npy --input 5=%t.len.npy | FileCheck %s
// The CPU form gives the same.
// RUN: attn-run %s --print --reps=0 --input 0=%t.q.npy \
// RUN:   --input 1=%t.kn.npy --input 2=%t.vn.npy --input 3=%t.kc.npy \
// RUN:   --input 4=%t.vc.npy --input 5=%t.len.npy | FileCheck %s
//
// CHECK: result0: f16 [2, 1, 1, 16]
// CHECK-NEXT: {{^}}25.7{{[0-9]*}} 25.7{{[0-9]*}}
// CHECK: {{^}}40 40
// CHECK: result1: f16 [2, 1, 4, 16]
// CHECK-NEXT: {{^}}0 0
// CHECK: {{^}}1 1
// CHECK: {{^}}2 2
// CHECK: {{^}}7 7
// CHECK: {{^}}3 3
// CHECK: {{^}}7 7
// CHECK: result2: f16 [2, 1, 4, 16]
// CHECK-NEXT: {{^}}10 10
// CHECK: {{^}}20 20
// CHECK: {{^}}30 30
// CHECK: {{^}}7 7
// CHECK: {{^}}40 40
// CHECK: {{^}}7 7
//
// A position past the cache: the CPU's message, exit 1.
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.bad.npy i4 2 2,4
// RUN: not attn-run %s --device=gpu-emulate --input 5=%t.bad.npy 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not attn-run %s --reps=0 --input 5=%t.bad.npy 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: attn-run: error: run failed: attn: kv_cache_append writes past the cache: positions[1] = 4 with 1 new rows, the cache holds 4

func.func @step(%q: tensor<2x1x1x16xf16>, %kn: tensor<2x1x1x16xf16>,
                %vn: tensor<2x1x1x16xf16>, %kc: tensor<2x1x4x16xf16>,
                %vc: tensor<2x1x4x16xf16>, %len: tensor<2xi32>)
    -> (tensor<2x1x1x16xf16>, tensor<2x1x4x16xf16>, tensor<2x1x4x16xf16>) {
  %kc2 = attn.kv_cache_append cache(%kc : tensor<2x1x4x16xf16>)
      update(%kn : tensor<2x1x1x16xf16>) at(%len : tensor<2xi32>)
      -> tensor<2x1x4x16xf16>
  %vc2 = attn.kv_cache_append cache(%vc : tensor<2x1x4x16xf16>)
      update(%vn : tensor<2x1x1x16xf16>) at(%len : tensor<2xi32>)
      -> tensor<2x1x4x16xf16>
  %one = arith.constant dense<1> : tensor<2xi32>
  %len2 = arith.addi %len, %one : tensor<2xi32>
  %out = attn.attention q(%q : tensor<2x1x1x16xf16>)
      k(%kc2 : tensor<2x1x4x16xf16>) v(%vc2 : tensor<2x1x4x16xf16>)
      kv_len(%len2 : tensor<2xi32>) causal(bottom_right)
      -> tensor<2x1x1x16xf16>
  return %out, %kc2, %vc2
      : tensor<2x1x1x16xf16>, tensor<2x1x4x16xf16>, tensor<2x1x4x16xf16>
}
