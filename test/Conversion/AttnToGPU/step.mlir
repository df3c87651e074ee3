// RUN: attn-opt --convert-attn-to-gpu %s | FileCheck %s

// A serving step (StepHost.cpp): one host function runs the ops in program
// order on the caller's buffers. Each kv_cache_append copies the cache into
// its result buffer unless the caller passed the cache's own buffer (the
// in-place update), then one kernel of a block per head checks every
// position and page table entry before any write (the error word carries a
// failure to attn_rt_check_failed) and writes the rows batch entry by batch
// entry; kv_len + 1 is an elementwise kernel into a temporary; the attention
// is skipped after a failed check and its output zeroed.

// CHECK-LABEL: func.func @step(
// CHECK-SAME: %[[KP:[a-z0-9]+]]: memref<8x2x16x64xf16>, %{{.*}}: memref<8x2x16x64xf16>, %[[PT:[a-z0-9]+]]: memref<2x4xi32>, %{{.*}}: memref<2xi32>, %[[OUT:[a-z0-9]+]]: memref<2x4x1x64xf16>, %[[KP2:[a-z0-9]+]]: memref<8x2x16x64xf16>
// CHECK-SAME: attributes {attn.gpu_kernel
// CHECK: %[[CTX:.+]] = call @attn_rt_error_context()
// CHECK: %[[P1:.+]] = memref.extract_aligned_pointer_as_index %[[KP]]
// CHECK: %[[P2:.+]] = memref.extract_aligned_pointer_as_index %[[KP2]]
// CHECK: arith.cmpi eq, %[[P2]], %[[P1]]
// CHECK: scf.if
// CHECK: gpu.memcpy async [%{{.+}}] %[[KP2]], %[[KP]]
// CHECK: call @attn_rt_has_failed(%[[CTX]])
// CHECK: gpu.alloc async [%{{.+}}] () : memref<6xi64>
// CHECK: gpu.launch async {{.*}} threads({{.*}}) in (%{{.+}} = %c128{{.*}}) module(@step_kernels) function(@step_append0)
// CHECK: memref.load %[[PT]]
// CHECK: memref.atomic_rmw addi
// CHECK: memref.store %{{.+}}, %[[KP2]]
// CHECK: gpu.barrier
// CHECK: gpu.terminator
// CHECK: func.call @attn_rt_check_failed(%[[CTX]]
// CHECK: function(@step_append1)
// CHECK: %[[LEN2:.+]], %{{.+}} = gpu.alloc async [%{{.+}}] () : memref<2xi32>
// CHECK: function(@step_elementwise2)
// CHECK: arith.addi %{{.+}}, %c1_i32
// CHECK: memref.store %{{.+}}, %[[LEN2]]
// CHECK: call @attn_rt_has_failed(%[[CTX]])
// CHECK: scf.if
// CHECK: function(@step_attention_split)
// CHECK: function(@step_merge)
// CHECK: call @attn_rt_has_failed(%[[CTX]])
// CHECK: scf.if
// CHECK: gpu.memset async [%{{.+}}] %[[OUT]]
// CHECK: gpu.dealloc async [%{{.+}}] %[[LEN2]]
// CHECK: return
func.func @step(%q: tensor<2x4x1x64xf16>, %kn: tensor<2x2x1x64xf16>,
                %vn: tensor<2x2x1x64xf16>, %kp: tensor<8x2x16x64xf16>,
                %vp: tensor<8x2x16x64xf16>, %pt: tensor<2x4xi32>,
                %len: tensor<2xi32>)
    -> (tensor<2x4x1x64xf16>, tensor<8x2x16x64xf16>, tensor<8x2x16x64xf16>) {
  %kp2 = attn.kv_cache_append cache(%kp : tensor<8x2x16x64xf16>)
      update(%kn : tensor<2x2x1x64xf16>) at(%len : tensor<2xi32>)
      page_table(%pt : tensor<2x4xi32>) -> tensor<8x2x16x64xf16>
  %vp2 = attn.kv_cache_append cache(%vp : tensor<8x2x16x64xf16>)
      update(%vn : tensor<2x2x1x64xf16>) at(%len : tensor<2xi32>)
      page_table(%pt : tensor<2x4xi32>) -> tensor<8x2x16x64xf16>
  %one = arith.constant dense<1> : tensor<2xi32>
  %len2 = arith.addi %len, %one : tensor<2xi32>
  %out = attn.attention q(%q : tensor<2x4x1x64xf16>)
      k(%kp2 : tensor<8x2x16x64xf16>) v(%vp2 : tensor<8x2x16x64xf16>)
      page_table(%pt : tensor<2x4xi32>) kv_len(%len2 : tensor<2xi32>)
      causal(bottom_right) -> tensor<2x4x1x64xf16>
  return %out, %kp2, %vp2
      : tensor<2x4x1x64xf16>, tensor<8x2x16x64xf16>, tensor<8x2x16x64xf16>
}
