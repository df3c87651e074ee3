// RUN: attn-opt %s --attn-check-allocations --canonicalize --cse | FileCheck %s
// RUN: attn-opt %s --attn-check-allocations="after-deallocation" --canonicalize --cse | FileCheck %s --check-prefix=CLONE

// A buffer sized by the call: its size in bytes (256 * %n) checked for
// overflow and its pointer for null, each recorded through the run-time
// check channel (28: AllocSizeOverflow, 27: AllocFailed with the bytes), and
// the rest of the block runs only when both held.
// CHECK-LABEL: func.func @scratch
// CHECK:       %[[CTX:.*]] = call @attn_rt_error_context()
// CHECK:       %[[S:.*]] = memref.alloc(%[[N:.*]]) : memref<?x64xf32>
// CHECK:       %[[OVER:.*]] = arith.cmpi ugt, %[[N]], %c36028797018963967
// CHECK:       %[[BYTES:.*]] = arith.muli %[[N]], %c256
// CHECK:       %[[P:.*]] = memref.extract_aligned_pointer_as_index %[[S]]
// CHECK:       arith.cmpi eq, %[[P]], %c0
// CHECK:       scf.if %[[OVER]] {
// CHECK-NEXT:    func.call @attn_rt_check_failed(%[[CTX]], %c28_i32,
// CHECK:       scf.if
// CHECK-NEXT:    %[[B64:.*]] = arith.index_cast %[[BYTES]]
// CHECK-NEXT:    func.call @attn_rt_check_failed(%[[CTX]], %c27_i32, %[[B64]],
// CHECK:       scf.if
// CHECK-NEXT:    linalg.fill {{.*}} outs(%[[S]]
// CHECK-NEXT:  }
// CHECK-NEXT:  return
func.func @scratch(%n: index, %x: f32) {
  %s = memref.alloc(%n) : memref<?x64xf32>
  linalg.fill ins(%x : f32) outs(%s : memref<?x64xf32>)
  return
}

// A returned buffer is returned as it is (null after a failure: the caller
// reads no output of a failed call, and free(null) does nothing).
// CHECK-LABEL: func.func @returned
// CHECK:       %[[O:.*]] = memref.alloc
// CHECK:       func.call @attn_rt_check_failed({{.*}}, %c27_i32
// CHECK:       scf.if
// CHECK-NEXT:    linalg.fill {{.*}} outs(%[[O]]
// CHECK-NEXT:  }
// CHECK-NEXT:  return %[[O]]
func.func @returned(%n: index, %x: f32) -> memref<?x4xf32> {
  %o = memref.alloc(%n) : memref<?x4xf32>
  linalg.fill ins(%x : f32) outs(%o : memref<?x4xf32>)
  return %o : memref<?x4xf32>
}

// A value the skipped ops would have made: a view of an empty allocation
// with the type's static sizes and strides, 0 for the dynamic ones.
// CHECK-LABEL: func.func @yielded
// CHECK:       %[[R:.*]] = scf.if %{{.*}} -> (memref<?x4xf32, strided<[?, 1], offset: ?>>) {
// CHECK:         linalg.fill
// CHECK:         %[[C:.*]] = memref.cast
// CHECK:         scf.yield %[[C]]
// CHECK:       } else {
// CHECK:         %[[E:.*]] = memref.alloc() : memref<0xf32>
// CHECK:         %[[V:.*]] = memref.reinterpret_cast %[[E]] to offset: [0], sizes: [0, 4], strides: [0, 1]
// CHECK:         scf.yield %[[V]]
// CHECK:       return %[[R]]
func.func @yielded(%n: index, %x: f32)
    -> memref<?x4xf32, strided<[?, 1], offset: ?>> {
  %s = memref.alloc(%n) : memref<?x4xf32>
  linalg.fill ins(%x : f32) outs(%s : memref<?x4xf32>)
  %c = memref.cast %s
      : memref<?x4xf32> to memref<?x4xf32, strided<[?, 1], offset: ?>>
  return %c : memref<?x4xf32, strided<[?, 1], offset: ?>>
}

// In a parallel loop: each iteration's scratch is checked (a static size:
// no overflow check), and the rest of the enclosing block runs only when no
// thread of the call recorded a failure.
// CHECK-LABEL: func.func @in_parallel
// CHECK:       %[[CTX:.*]] = call @attn_rt_error_context()
// CHECK:       scf.forall
// CHECK:         %[[T:.*]] = memref.alloc() : memref<8xf32>
// CHECK:         memref.extract_aligned_pointer_as_index %[[T]]
// CHECK:         func.call @attn_rt_check_failed(%[[CTX]], %c27_i32, %c32_i64,
// CHECK:         scf.if
// CHECK-NEXT:      memref.store %{{.*}}, %[[T]]
// CHECK:       %[[F:.*]] = call @attn_rt_has_failed(%[[CTX]])
// CHECK:       %[[OK:.*]] = arith.cmpi eq, %[[F]], %c0_i32
// CHECK:       scf.if %[[OK]] {
// CHECK-NEXT:    memref.store
// CHECK-NEXT:  }
func.func @in_parallel(%n: index, %out: memref<?x8xf32>) {
  %c0 = arith.constant 0 : index
  scf.forall (%i) in (%n) {
    %t = memref.alloc() : memref<8xf32>
    %one = arith.constant 1.0 : f32
    memref.store %one, %t[%c0] : memref<8xf32>
    %v = memref.load %t[%c0] : memref<8xf32>
    memref.store %v, %out[%i, %c0] : memref<?x8xf32>
  }
  %two = arith.constant 2.0 : f32
  memref.store %two, %out[%c0, %c0] : memref<?x8xf32>
  return
}

// After deallocation: a clone becomes a checked allocation and a copy that
// runs only when it succeeded.
// CLONE-LABEL: func.func @clone
// CLONE:       %[[D:.*]] = memref.dim %[[M:.*]], %c0
// CLONE:       %[[A:.*]] = memref.alloc(%[[D]]) : memref<?x4xf32>
// CLONE:       memref.extract_aligned_pointer_as_index %[[A]]
// CLONE:       func.call @attn_rt_check_failed({{.*}}, %c27_i32
// CLONE:       scf.if
// CLONE-NEXT:    memref.copy %[[M]], %[[A]]
// CLONE-NEXT:  }
// CLONE-NEXT:  return %[[A]]
// CLONE-NOT:   bufferization.clone
func.func @clone(%m: memref<?x4xf32>) -> memref<?x4xf32> {
  %c = bufferization.clone %m : memref<?x4xf32> to memref<?x4xf32>
  return %c : memref<?x4xf32>
}

// A clone of a strided view (a function that returns its strided argument):
// a dense copy, cast to the clone's layout.
// CLONE-LABEL: func.func @clone_strided
// CLONE:       %[[D:.*]] = memref.dim %[[M:.*]], %c0
// CLONE:       %[[A:.*]] = memref.alloc(%[[D]]) : memref<?x4xf32>
// CLONE:       func.call @attn_rt_check_failed({{.*}}, %c27_i32
// CLONE:       scf.if
// CLONE-NEXT:    memref.copy %[[M]], %[[A]] : memref<?x4xf32, strided<[?, 1], offset: ?>> to memref<?x4xf32>
// CLONE-NEXT:  }
// CLONE-NEXT:  %[[C:.*]] = memref.cast %[[A]] : memref<?x4xf32> to memref<?x4xf32, strided<[?, 1], offset: ?>>
// CLONE-NEXT:  return %[[C]]
// CLONE-NOT:   bufferization.clone
func.func @clone_strided(%m: memref<?x4xf32, strided<[?, 1], offset: ?>>)
    -> memref<?x4xf32, strided<[?, 1], offset: ?>> {
  %c = bufferization.clone %m : memref<?x4xf32, strided<[?, 1], offset: ?>> to memref<?x4xf32, strided<[?, 1], offset: ?>>
  return %c : memref<?x4xf32, strided<[?, 1], offset: ?>>
}
