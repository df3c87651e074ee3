// RUN: attn-opt --convert-attn-to-gpu %s | FileCheck %s
// RUN: attn-opt --convert-attn-to-gpu="splits=4" %s | FileCheck %s --check-prefix=FIXED

// Decode (every row in one row tile): the split-KV grid is sized from the
// device's multiprocessor count, asked of the GPU runtime at run time
// (attn_gpu_sm_count; 132 when it answers 0): about 2 blocks per SM over
// B * Hkv, at most one split per key tile, and then only as many as chunks
// of ceil(tiles / S) key tiles fill (the schedule's filledSplits, as on the
// CPU: 6 wanted over 8 tiles launch 4). A fixed `splits` asks nothing.
// CHECK: func.func private @attn_gpu_sm_count() -> i32
// CHECK-LABEL: func.func @decode(
// CHECK: %[[N:.*]] = func.call @attn_gpu_sm_count() : () -> i32
// CHECK: %[[SMS:.*]] = arith.index_cast %[[N]] : i32 to index
// CHECK: %[[KNOWN:.*]] = arith.cmpi slt, %c0{{.*}}, %[[SMS]]
// CHECK: %[[USE:.*]] = arith.select %[[KNOWN]], %[[SMS]], %c132
// CHECK: %[[WANT:.*]] = arith.muli %[[USE]], %c2{{.*}} : index
// CHECK: arith.ceildivsi %[[WANT]]
// CHECK: %[[CAPPED:.*]] = arith.minsi %{{.*}}, %[[TILES:[^ ]+]] : index
// CHECK-NEXT: %[[PER:.*]] = arith.ceildivsi %[[TILES]], %[[CAPPED]] : index
// CHECK-NEXT: %[[FILLED:.*]] = arith.ceildivsi %[[TILES]], %[[PER]] : index
// CHECK: gpu.launch {{.*}}blocks({{.*}}) in ({{.*}} = %[[FILLED]],
// FIXED-NOT: attn_gpu_sm_count
// FIXED: gpu.launch
// FIXED-NOT: attn_gpu_sm_count
func.func @decode(%q: tensor<1x8x1x64xf16>, %k: tensor<1x2x1024x64xf16>,
                  %v: tensor<1x2x1024x64xf16>) -> tensor<1x8x1x64xf16> {
  %o = attn.attention q(%q : tensor<1x8x1x64xf16>)
      k(%k : tensor<1x2x1024x64xf16>) v(%v : tensor<1x2x1024x64xf16>)
      -> tensor<1x8x1x64xf16>
  return %o : tensor<1x8x1x64xf16>
}
