// RUN: attn-opt %s --attn-hoist-loop-buffers --split-input-file | FileCheck %s

// A buffer sized by loop-invariant values moves in front of the loop, out of
// every enclosing scf.for (and scf.if) while that holds.
// CHECK-LABEL: func.func @invariant
// CHECK-SAME: (%[[N:.+]]: index, %[[R:.+]]: index)
// CHECK: %[[A:.+]] = memref.alloc(%[[R]]) : memref<?x128xf32>
// CHECK-NEXT: scf.for
// CHECK-NEXT: scf.for
// CHECK-NEXT: scf.if
// CHECK-NEXT: linalg.fill ins(%{{.+}} : f32) outs(%[[A]] : memref<?x128xf32>)
func.func @invariant(%n: index, %r: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 0.0 : f32
  %t = arith.constant true
  scf.for %i = %c0 to %n step %c1 {
    scf.for %j = %c0 to %n step %c1 {
      scf.if %t {
        %a = memref.alloc(%r) : memref<?x128xf32>
        linalg.fill ins(%f : f32) outs(%a : memref<?x128xf32>)
      }
    }
  }
  return
}

// -----

// Sized by the inner loop's index: it leaves the outer loop's body only as
// far as its size is defined.
// CHECK-LABEL: func.func @variant_size
// CHECK: scf.for %[[I:.+]] =
// CHECK-NEXT: memref.alloc(%[[I]])
// CHECK-NEXT: scf.for
// CHECK-NEXT: }
// CHECK-NEXT: scf.for %[[K:.+]] =
// CHECK-NEXT: memref.alloc(%[[K]])
func.func @variant_size(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    scf.for %j = %c0 to %n step %c1 {
      %a = memref.alloc(%i) : memref<?xf32>
    }
    scf.for %k = %c0 to %n step %c1 {
      %b = memref.alloc(%k) : memref<?xf32>
    }
  }
  return
}

// -----

// A buffer carried to the next iteration stays: each iteration must get a
// fresh one (here the yielded value aliases it through a subview).
// CHECK-LABEL: func.func @carried
// CHECK: scf.for
// CHECK-NEXT: memref.alloc()
func.func @carried(%n: index, %init: memref<4xf32, strided<[1], offset: ?>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%x = %init)
      -> (memref<4xf32, strided<[1], offset: ?>>) {
    %a = memref.alloc() : memref<8xf32>
    %s = memref.subview %a[%c0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: ?>>
    scf.yield %s : memref<4xf32, strided<[1], offset: ?>>
  }
  return
}

// -----

// Never out of a parallel loop: each parallel iteration keeps its own
// buffer; out of the sequential loop inside it, yes.
// CHECK-LABEL: func.func @parallel
// CHECK: scf.forall
// CHECK-NEXT: memref.alloc() : memref<16xf32>
// CHECK-NEXT: scf.for
// CHECK: scf.parallel
// CHECK-NEXT: memref.alloc() : memref<32xf32>
func.func @parallel(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.forall (%i) in (4) {
    scf.for %j = %c0 to %n step %c1 {
      %a = memref.alloc() : memref<16xf32>
    }
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %b = memref.alloc() : memref<32xf32>
    scf.reduce
  }
  return
}

// -----

// A buffer the loop frees itself stays (moving it would free it in the first
// iteration and use it in the next).
// CHECK-LABEL: func.func @freed_in_loop
// CHECK: scf.for
// CHECK-NEXT: memref.alloc()
// CHECK-NEXT: memref.dealloc
func.func @freed_in_loop(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %a = memref.alloc() : memref<16xf32>
    memref.dealloc %a : memref<16xf32>
  }
  return
}
