// RUN: attn-opt %s --attn-inline-alloca-scopes --split-input-file | FileCheck %s

// A scope without stack allocations is inlined; its results forward.
// CHECK-LABEL: func.func @no_alloca
// CHECK-NOT: memref.alloca_scope
// CHECK: %[[V:.+]] = arith.addf
// CHECK: return %[[V]]
func.func @no_alloca(%x: f32) -> f32 {
  %r = memref.alloca_scope -> (f32) {
    %v = arith.addf %x, %x : f32
    memref.alloca_scope.return %v : f32
  }
  return %r : f32
}

// -----

// A scope that holds an alloca stays: it releases the stack memory.
// CHECK-LABEL: func.func @with_alloca
// CHECK: memref.alloca_scope
// CHECK:   memref.alloca
func.func @with_alloca() {
  memref.alloca_scope {
    %a = memref.alloca() : memref<4xf32>
  }
  return
}
