// RUN: attn-opt %s --attn-results-to-out-params | FileCheck %s

// A public function with a static result: the buffer it allocates becomes
// the caller's (a trailing argument), with no copy.
// CHECK-LABEL: func.func @static_result
// CHECK-SAME: (%[[X:.+]]: memref<4xf32>, %[[OUT:.+]]: memref<4xf32>) {
// CHECK-NOT: memref.alloc
// CHECK: linalg.copy ins(%[[X]] : memref<4xf32>) outs(%[[OUT]] : memref<4xf32>)
// CHECK: return{{$}}
func.func @static_result(%x: memref<4xf32>) -> memref<4xf32> {
  %a = memref.alloc() : memref<4xf32>
  linalg.copy ins(%x : memref<4xf32>) outs(%a : memref<4xf32>)
  return %a : memref<4xf32>
}

// A dynamically shaped result stays a result: the caller could not size
// the buffer from the signature.
// CHECK-LABEL: func.func @dynamic_result
// CHECK-SAME: (%[[Y:.+]]: memref<?xf32>) -> memref<?xf32>
// CHECK: return %{{.+}} : memref<?xf32>
func.func @dynamic_result(%y: memref<?xf32>) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %n = memref.dim %y, %c0 : memref<?xf32>
  %a = memref.alloc(%n) : memref<?xf32>
  linalg.copy ins(%y : memref<?xf32>) outs(%a : memref<?xf32>)
  return %a : memref<?xf32>
}
