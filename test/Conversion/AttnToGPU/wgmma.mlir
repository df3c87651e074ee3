// S = Q K^T and O += P V on Hopper's warpgroup MMA (convert-attn-to-gpu{wgmma},
// attn-compile --gpu-wgmma): Q, K and V are staged in 128-byte swizzled
// shared memory (64 columns a block, the 16-byte chunks of row r XORed with
// r % 8) from a 1024-byte boundary of the shared window; per 16 dims one
// nvvm.wgmma.mma_async m64nNk16 (N = the key tile) with K-major descriptors
// (LBO 16, SBO 1024, layout 1 = 128-byte swizzle: 0x4000004000010000 =
// 4611686293305360384) after the copies' fence.proxy.async, wgmma-fenced,
// committed and waited for before the accumulators become the mma.sync C
// tiles the softmax reads. Each warp then stores its 16 rows of P (bf16) into
// the swizzled P tile, fences them for the async proxy, and after a barrier
// the warpgroup runs one m64nDvk16 per 16 keys, P K-major and V MN-major
// (B transposed: <row>; LBO = V's 64-column block, 64 rows x 128 B = 8192,
// SBO 1024: 0x4000004002000000 = 4611686293338849280), accumulating into O's
// registers (its mma.sync C tiles). Key tiles that are not whole 64-key
// blocks keep P V on mma.sync; shapes wgmma cannot take (head dim not a
// multiple of 64) keep mma.sync for both.
// RUN: attn-opt --convert-attn-to-gpu="wgmma=1" %s | FileCheck %s
// RUN: attn-opt --convert-attn-to-gpu="wgmma=1 tile-k=32" %s | FileCheck %s --check-prefix=N32
// RUN: attn-opt --convert-attn-to-gpu %s | FileCheck %s --check-prefix=OFF

// CHECK-LABEL: func.func @d128
// CHECK: attn.gpu_shared_memory = 91136
// CHECK-SAME: warps = 4 : i64, wgmma = 2 : i64
// Causal: the blocks dispatched first (low x) take the last, longest row
// tiles: row tile = grid x - 1 - block x.
// CHECK: gpu.launch blocks(%[[BX:[a-z0-9]+]], %{{[a-z0-9]+}}, %{{[a-z0-9]+}}) in (%[[GX:[a-z0-9]+]] = {{.*}}function(@d128_attention)
// CHECK-NEXT: arith.constant 1 : index
// CHECK-NEXT: %[[M:[0-9]+]] = arith.subi %[[GX]], %{{.*}} : index
// CHECK-NEXT: arith.subi %[[M]], %[[BX]] : index
// CHECK: memref.extract_aligned_pointer_as_index
// CHECK: memref.view {{.*}} to memref<2x64x64xbf16, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<2x2x64x64xbf16, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<2x2x64x64xbf16, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<1x64x64xbf16, #gpu.address_space<workgroup>>
// CHECK: arith.xori
// The copies (the generic proxy) are fenced for wgmma (the async proxy).
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: gpu.barrier
// CHECK: scf.for
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: gpu.barrier
// CHECK: llvm.mlir.zero : !llvm.struct<(f32, f32,
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: arith.constant 4611686293305360384 : i64
// CHECK-COUNT-8: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 64, k = 16>, D[<f32>, <{{zero|one}}>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: vector.from_elements {{.*}} : vector<2x2xf32>
// CHECK-NOT: nvgpu.mma.sync
// P: 8 accumulator tiles x 2 rows of each lane, fenced, then the barrier.
// CHECK-COUNT-16: vector.store {{.*}} : memref<1x64x64xbf16, #gpu.address_space<workgroup>>, vector<2xbf16>
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: gpu.barrier
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: arith.constant 4611686293338849280 : i64
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <row>]
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NOT: nvgpu.mma.sync
// CHECK: return
// N32-LABEL: func.func @d128
// N32-SAME: wgmma = 1 : i64
// N32-COUNT-8: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 32, k = 16>
// N32: nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = true}
// N32: nvgpu.mma.sync
// OFF-NOT: wgmma
func.func @d128(%q: tensor<1x8x100x128xbf16>, %k: tensor<1x2x130x128xbf16>,
                %v: tensor<1x2x130x128xbf16>) -> tensor<1x8x100x128xbf16> {
  %o = attn.attention q(%q : tensor<1x8x100x128xbf16>)
      k(%k : tensor<1x2x130x128xbf16>) v(%v : tensor<1x2x130x128xbf16>)
      causal(bottom_right) -> tensor<1x8x100x128xbf16>
  return %o : tensor<1x8x100x128xbf16>
}

// CHECK-LABEL: func.func @d32
// CHECK-NOT: wgmma
// CHECK: nvgpu.mma.sync
// CHECK-NOT: wgmma
// CHECK: return
func.func @d32(%q: tensor<1x4x64x32xf16>, %k: tensor<1x4x64x32xf16>,
               %v: tensor<1x4x64x32xf16>) -> tensor<1x4x64x32xf16> {
  %o = attn.attention q(%q : tensor<1x4x64x32xf16>) k(%k : tensor<1x4x64x32xf16>)
      v(%v : tensor<1x4x64x32xf16>) -> tensor<1x4x64x32xf16>
  return %o : tensor<1x4x64x32xf16>
}
