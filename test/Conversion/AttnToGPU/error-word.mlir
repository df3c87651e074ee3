// RUN: attn-opt --convert-attn-to-gpu %s | FileCheck %s

// A mask_mod region that reads mod_inputs: the kernel reads the document ids
// in global memory and records a read out of bounds in a device-side error
// word, which the host code zeroes before the launch, copies back after it
// and turns into the runtime's check (same message and status as the CPU
// forms), zeroing the outputs. Nothing traps or aborts in the kernel.
// CHECK-LABEL: func.func @documents(
// CHECK-SAME: %[[DOC:[a-z0-9_]+]]: memref<128xi32>, %[[OUT:[a-z0-9_]+]]: memref<1x2x128x64xf16>)
// CHECK: %[[CTX:.*]] = call @attn_rt_error_context()
// CHECK: %[[T0:.*]] = gpu.wait async
// CHECK: %[[HOST:.*]] = memref.alloca() : memref<6xi64>
// CHECK: %[[WORD:.*]], %[[T1:.*]] = gpu.alloc async [%[[T0]]] () : memref<6xi64>
// CHECK: %[[T2:.*]] = gpu.memcpy async [%[[T1]]] %[[WORD]], %[[HOST]]
// The tile map, once per call: one byte per (row tile, key tile) pair from
// the per-tile summaries of the ids (the smallest and largest of the box);
// the mask ignores the head, so one map serves both heads.
// CHECK: %[[MAP:.*]], %[[TM:.*]] = gpu.alloc async [%[[T2]]] (%{{.*}}) : memref<?xi8>
// CHECK: %[[TT:.*]] = gpu.launch async [%[[TM]]] blocks({{.*}}) in (%{{.*}} = %{{.*}}, %{{.*}} = %c1{{.*}}, {{.*}} function(@documents_tile_map)
// CHECK: scf.for
// CHECK: memref.load %[[DOC]]
// CHECK: arith.minsi
// CHECK: arith.maxsi
// CHECK: memref.store %{{.*}}, %[[MAP]][%{{.*}}] : memref<?xi8>
// CHECK: gpu.terminator
// The attention kernel reads a tile's byte, and the ids per element.
// CHECK: %[[T3:.*]] = gpu.launch async [%[[TT]]] {{.*}} function(@documents_attention)
// CHECK: memref.load %[[MAP]]
// CHECK: memref.load %[[DOC]]
// A read out of bounds: the first thread to count it writes the check and
// its operands.
// CHECK: %[[OLD:.*]] = memref.atomic_rmw addi %{{.*}}, %[[WORD]][%{{.*}}] : (i64, memref<6xi64>) -> i64
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[OLD]]
// CHECK: scf.if %[[FIRST]] {
// CHECK: memref.store %{{.*}}, %[[WORD]][%{{.*}}] : memref<6xi64>
// CHECK-NOT: cf.assert
// CHECK-NOT: llvm.trap
// CHECK: gpu.terminator
// CHECK: %[[TF:.*]] = gpu.dealloc async [%[[T3]]] %[[MAP]]
// CHECK: %[[T4:.*]] = gpu.memcpy async [%[[TF]]] %[[HOST]], %[[WORD]]
// CHECK: %[[T5:.*]] = gpu.dealloc async [%[[T4]]] %[[WORD]]
// CHECK: gpu.wait [%[[T5]]]
// CHECK: %[[N:.*]] = memref.load %[[HOST]][%{{.*}}] : memref<6xi64>
// CHECK: %[[BAD:.*]] = arith.cmpi ne, %[[N]]
// CHECK: scf.if %[[BAD]] {
// CHECK: func.call @attn_rt_check_failed(%[[CTX]],
// CHECK: scf.if %[[BAD]] {
// CHECK: gpu.memset async [%{{.*}}] %[[OUT]], %{{.*}} : memref<1x2x128x64xf16>, f16
func.func @documents(%q: tensor<1x2x128x64xf16>, %doc: tensor<128xi32>)
    -> tensor<1x2x128x64xf16> {
  %out = attn.attention q(%q : tensor<1x2x128x64xf16>)
      k(%q : tensor<1x2x128x64xf16>) v(%q : tensor<1x2x128x64xf16>)
      causal(top_left) mod_inputs(%doc : tensor<128xi32>)
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %d: tensor<128xi32>):
        %di = tensor.extract %d[%i] : tensor<128xi32>
        %dj = tensor.extract %d[%j] : tensor<128xi32>
        %same = arith.cmpi eq, %di, %dj : i32
        attn.yield %same : i1
      } -> tensor<1x2x128x64xf16>
  return %out : tensor<1x2x128x64xf16>
}
