// RUN: attn-opt --convert-attn-to-gpu %s | FileCheck %s
// RUN: attn-opt --convert-attn-to-gpu="warps=2 tile-k=32" %s | FileCheck %s --check-prefix=SMALL

// GQA 8/2, causal bottom-right, lse, D = 64: the structure of the kernel.
// CHECK-LABEL: func.func @gqa(
// CHECK-SAME: memref<2x8x200x64xf16>, %{{.*}}: memref<2x2x300x64xf16>, %{{.*}}: memref<2x2x300x64xf16>, %{{.*}}: memref<2x8x200x64xf16>, %{{.*}}: memref<2x8x200xf32>)
// CHECK-NOT: -> tensor
// Static head counts: the verifier's rule, no run-time check.
// CHECK-NOT: attn_rt_check_failed
// Rows = Nq * (Hq / Hkv), 64 rows (4 warps) per block.
// CHECK: %[[ROWS:.*]] = arith.muli
// CHECK: %[[GX:.*]] = arith.ceildivsi %[[ROWS]], %c64
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[GX]], {{.*}}) threads({{.*}}) in ({{.*}} = %c128,
// CHECK-SAME: dynamic_shared_memory_size
// CHECK: gpu.dynamic_shared_memory
// Q [64][72], K and V [2][64][72] (16-byte row padding, double buffered).
// CHECK: memref.view {{.*}} to memref<64x72xf16, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<2x64x72xf16, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<2x64x72xf16, #gpu.address_space<workgroup>>
// Q, then the first K and V tiles: 16-byte cp.async, zero-filled past the end.
// CHECK-COUNT-4: nvgpu.device_async_copy {{.*}}, 8, %{{.*}} {bypassL1} : memref<2x8x200x64xf16> to memref<64x72xf16
// CHECK-COUNT-8: nvgpu.device_async_copy {{.*}} {bypassL1} : memref<2x2x300x64xf16> to memref<2x64x72xf16
// CHECK: nvgpu.device_async_create_group
// CHECK: nvgpu.device_async_wait {{.*}} {numGroups = 0 : i32}
// CHECK: gpu.barrier
// CHECK-COUNT-4: nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = false} : memref<64x72xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
// The key loop carries m, l (two rows per lane) and 8 output fragments.
// CHECK: scf.for {{.*}} -> (f32, f32, f32, f32, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>)
// Prefetch of the next tile, wait for the current one.
// CHECK-COUNT-8: nvgpu.device_async_copy
// CHECK: nvgpu.device_async_wait {{.*}} {numGroups = 1 : i32}
// CHECK-NEXT: gpu.barrier
// S = Q K^T: 8 key columns x 4 steps of 16 dims.
// CHECK-COUNT-32: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
// Full tiles skip the mask arithmetic (the else branch applies it).
// CHECK: scf.if
// CHECK: } else {
// CHECK: arith.cmpi sle
// CHECK: arith.select
// Online softmax: row max over the quad, exp2 with log2(e).
// CHECK: gpu.shuffle xor {{.*}}, %c1_i32{{.*}}, %c32_i32{{.*}} : f32
// CHECK: gpu.shuffle xor {{.*}}, %c2_i32{{.*}}, %c32_i32{{.*}} : f32
// CHECK: math.exp2
// P (converted in registers) times V (ldmatrix.trans).
// CHECK: arith.truncf {{.*}} : vector<2x2xf32> to vector<2x2xf16>
// CHECK: vector.shuffle {{.*}} [0, 1, 2, 3] : vector<2x2xf16>, vector<2x2xf16>
// CHECK: nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = true}
// CHECK-COUNT-32: nvgpu.mma.sync
// CHECK: gpu.barrier
// CHECK-NEXT: scf.yield
// Epilogue: row sums over the quad; stores of valid rows only; lse.
// CHECK: gpu.shuffle xor
// CHECK: math.log
// CHECK: scf.if
// CHECK: memref.store {{.*}} : memref<2x8x200x64xf16>
// CHECK: memref.store {{.*}} : memref<2x8x200xf32>
// CHECK: gpu.terminator

// SMALL-LABEL: func.func @gqa(
// SMALL: %[[GX:.*]] = arith.ceildivsi %{{.*}}, %c32
// SMALL: gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c64,
// SMALL: memref.view {{.*}} to memref<32x72xf16
// SMALL: memref.view {{.*}} to memref<2x32x72xf16
// SMALL: scf.for
// SMALL-COUNT-16: nvgpu.mma.sync
func.func @gqa(%q: tensor<2x8x200x64xf16>, %k: tensor<2x2x300x64xf16>,
               %v: tensor<2x2x300x64xf16>)
    -> (tensor<2x8x200x64xf16>, tensor<2x8x200xf32>) {
  %o, %lse = attn.attention q(%q : tensor<2x8x200x64xf16>)
      k(%k : tensor<2x2x300x64xf16>) v(%v : tensor<2x2x300x64xf16>)
      causal(bottom_right) -> tensor<2x8x200x64xf16>, tensor<2x8x200xf32>
  return %o, %lse : tensor<2x8x200x64xf16>, tensor<2x8x200xf32>
}

// A decode step (Nq = 1, MQA-like group of 4): rows = the group's heads
// (padded to the block's 64: four warps keep each thread's copies few);
// every modifier of the contract reads its tensor per element.
// CHECK-LABEL: func.func @decode(
// CHECK-SAME: memref<?x4x1x128xbf16>, %{{.*}}: memref<?x1x?x128xbf16>, %{{.*}}: memref<?x1x?x128xbf16>, %{{.*}}: memref<?xi32>, %{{.*}}: memref<?x1x1x?xi1>, %{{.*}}: memref<?x4x1x?xbf16>, %{{.*}}: memref<4xf32>, %{{.*}}: memref<?x4x1x128xbf16>)
// CHECK: gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c128,
// kv_len, read once per block and clamped to [0, Nk].
// CHECK: memref.load %{{.*}}[%{{.*}}] : memref<?xi32>
// CHECK: arith.minsi
// ALiBi slopes per row.
// CHECK: memref.load %{{.*}}[%{{.*}}] : memref<4xf32>
// CHECK: scf.for
// CHECK: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 16]} : (vector<4x2xbf16>, vector<2x2xbf16>, vector<2x2xf32>) -> vector<2x2xf32>
// Soft cap, bias and mask per element.
// CHECK: math.tanh
// CHECK: memref.load {{.*}} : memref<?x4x1x?xbf16>
// CHECK: memref.load {{.*}} : memref<?x1x1x?xi1>
func.func @decode(%q: tensor<?x4x1x128xbf16>, %k: tensor<?x1x?x128xbf16>,
                  %v: tensor<?x1x?x128xbf16>, %len: tensor<?xi32>,
                  %mask: tensor<?x1x1x?xi1>, %bias: tensor<?x4x1x?xbf16>,
                  %slopes: tensor<4xf32>) -> tensor<?x4x1x128xbf16> {
  %o = attn.attention q(%q : tensor<?x4x1x128xbf16>)
      k(%k : tensor<?x1x?x128xbf16>) v(%v : tensor<?x1x?x128xbf16>)
      kv_len(%len : tensor<?xi32>) mask(%mask : tensor<?x1x1x?xi1>)
      bias(%bias : tensor<?x4x1x?xbf16>) alibi(%slopes : tensor<4xf32>)
      causal(bottom_right) softcap(30.0) -> tensor<?x4x1x128xbf16>
  return %o : tensor<?x4x1x128xbf16>
}

// Dynamic head counts: the host code makes the size checks of every form
// (here: K/V heads present, query heads a multiple of them, k and v alike)
// and of the output buffer, and launches nothing after a failed check.
// CHECK-LABEL: func.func @dynamic_heads(
// CHECK: %[[CTX:.+]] = call @attn_rt_error_context() : () -> i64
// CHECK: scf.if
// CHECK: func.call @attn_rt_check_failed(%[[CTX]], %c{{[0-9]+}}_i32,
// CHECK: %[[FAILED:.+]] = call @attn_rt_has_failed(%[[CTX]])
// CHECK: scf.if
// CHECK: gpu.launch
func.func @dynamic_heads(%q: tensor<1x?x16x64xf16>, %k: tensor<1x?x16x64xf16>,
                         %v: tensor<1x?x16x64xf16>) -> tensor<1x?x16x64xf16> {
  %o = attn.attention q(%q : tensor<1x?x16x64xf16>)
      k(%k : tensor<1x?x16x64xf16>) v(%v : tensor<1x?x16x64xf16>)
      -> tensor<1x?x16x64xf16>
  return %o : tensor<1x?x16x64xf16>
}
