// RUN: attn-opt %s --attn-check-allocations="after-deallocation" -split-input-file -verify-diagnostics

// A clone read after it is made: its allocation could fail and nothing
// would skip the read.
func.func @clone_read(%m: memref<?x4xf32>) -> f32 {
  %c = bufferization.clone %m : memref<?x4xf32> to memref<?x4xf32>
  %c0 = arith.constant 0 : index
  // expected-error @below {{reads a copy that deallocation made to return a buffer; attn-check-allocations cannot skip this read when the copy's allocation fails}}
  %v = memref.load %c[%c0, %c0] : memref<?x4xf32>
  memref.dealloc %c : memref<?x4xf32>
  return %v : f32
}

// -----

// A clone with a layout no dense buffer can be cast to (rows 8 apart).
func.func @clone_layout(%m: memref<?x4xf32, strided<[8, 1]>>)
    -> memref<?x4xf32, strided<[8, 1]>> {
  // expected-error @below {{clones a buffer with a layout that a dense copy cannot be cast to; attn-check-allocations cannot lower it}}
  %c = bufferization.clone %m : memref<?x4xf32, strided<[8, 1]>> to memref<?x4xf32, strided<[8, 1]>>
  return %c : memref<?x4xf32, strided<[8, 1]>>
}
