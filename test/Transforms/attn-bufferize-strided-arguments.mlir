// RUN: attn-opt %s --attn-bufferize-strided-arguments -split-input-file | FileCheck %s
// RUN: attn-opt %s --attn-bufferize-strided-arguments --canonicalize -split-input-file | FileCheck %s --check-prefix=CANON
// RUN: attn-opt %s --attn-bufferize-strided-arguments=strided=false -split-input-file | FileCheck %s --check-prefix=OFF

// A public function's tensor arguments of a dynamic size become strided
// views with a unit innermost stride; fully static ones (rank 0 too) take
// the identity layout, whose strides are constants. The body sees the fully
// dynamic type through casts, which the canonicalizer folds into the uses.
// A result the function allocates keeps the identity layout.

// CHECK-LABEL: func.func @scale(
// CHECK-SAME: %[[Q:.*]]: memref<?x8xf32, strided<[?, 1], offset: ?>>,
// CHECK-SAME: %[[P:.*]]: memref<2x8xf32>,
// CHECK-SAME: %[[S:.*]]: memref<f32>)
// CHECK-SAME: -> memref<?x8xf32> attributes {attn.strided_arguments}
// CHECK: %[[CAST:.*]] = memref.cast %[[Q]] : memref<?x8xf32, strided<[?, 1], offset: ?>> to memref<?x8xf32, strided<[?, ?], offset: ?>>
// CHECK: linalg.generic {{.*}} ins(%[[CAST]] : memref<?x8xf32, strided<[?, ?], offset: ?>>)
// CANON-LABEL: func.func @scale(
// CANON-SAME: %[[Q:.*]]: memref<?x8xf32, strided<[?, 1], offset: ?>>,
// CANON-SAME: %[[P:.*]]: memref<2x8xf32>,
// CANON-NOT: memref.cast
// CANON: memref.load %[[P]]{{.*}} : memref<2x8xf32>
// CANON: linalg.generic {{.*}} ins(%[[Q]] : memref<?x8xf32, strided<[?, 1], offset: ?>>)
func.func @scale(%q: tensor<?x8xf32>, %p: tensor<2x8xf32>, %s: tensor<f32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %c = tensor.extract %s[] : tensor<f32>
  %c1 = tensor.extract %p[%c0, %c0] : tensor<2x8xf32>
  %n = tensor.dim %q, %c0 : tensor<?x8xf32>
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%q : tensor<?x8xf32>) outs(%e : tensor<?x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.mulf %x, %c : f32
    %m1 = arith.mulf %m, %c1 : f32
    linalg.yield %m1 : f32
  } -> tensor<?x8xf32>
  return %r : tensor<?x8xf32>
}

// -----

// A module that collapses an argument (directly or through a slice) keeps
// identity layouts at every boundary: bufferization would copy a strided
// source into a dense buffer on each call. No attribute.

// CHECK-LABEL: func.func @flatten(
// CHECK-SAME: %[[Q:.*]]: memref<?x1x8xf32>, %{{.*}}: memref<?xf32>) -> memref<?x8xf32> {
// CHECK-NOT: attn.strided_arguments
// CHECK-NOT: memref.copy
// CHECK: memref.collapse_shape %[[Q]]
func.func @flatten(%q: tensor<?x1x8xf32>, %other: tensor<?xf32>) -> tensor<?x8xf32> {
  %c = tensor.collapse_shape %q [[0, 1], [2]] : tensor<?x1x8xf32> into tensor<?x8xf32>
  return %c : tensor<?x8xf32>
}

// -----

// CHECK-LABEL: func.func @sliced(
// CHECK-SAME: %{{.*}}: memref<?x1x8xf32>)
// CHECK-NOT: attn.strided_arguments
func.func @sliced(%q: tensor<?x1x8xf32>) -> tensor<2x8xf32> {
  %s = tensor.extract_slice %q[0, 0, 0] [2, 1, 8] [1, 1, 1] : tensor<?x1x8xf32> to tensor<2x1x8xf32>
  %c = tensor.collapse_shape %s [[0, 1], [2]] : tensor<2x1x8xf32> into tensor<2x8xf32>
  return %c : tensor<2x8xf32>
}

// -----

// Private functions (their callers pass what they have) keep the fully
// dynamic layout bufferization gives them. A call that passes an input
// counts as a write of it (the callee is not analysed): no attribute.

// CHECK-LABEL: func.func private @helper(
// CHECK-SAME: memref<?xf32, strided<[?], offset: ?>>
// CHECK-NOT: attn.strided_arguments
// CHECK-LABEL: func.func @caller(
// CHECK-SAME: memref<?xf32, strided<[1], offset: ?>>) -> f32 {
func.func private @helper(%x: tensor<?xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %v = tensor.extract %x[%c0] : tensor<?xf32>
  return %v : f32
}
func.func @caller(%x: tensor<?xf32>) -> f32 {
  %v = func.call @helper(%x) : (tensor<?xf32>) -> f32
  return %v : f32
}

// -----

// A public function called inside the module: identity layouts.

// CHECK-LABEL: func.func @kernel(
// CHECK-SAME: %{{.*}}: memref<?xf32>) -> f32 {
// CHECK-LABEL: func.func @main(
func.func @kernel(%x: tensor<?xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %v = tensor.extract %x[%c0] : tensor<?xf32>
  return %v : f32
}
func.func @main(%x: tensor<?xf32>) -> f32 {
  %v = func.call @kernel(%x) : (tensor<?xf32>) -> f32
  return %v : f32
}

// -----

// A function that writes an input in place (as attn.kv_cache_append updates
// its cache) keeps the strided types but gets no attribute: the runtime
// gathers its strided inputs, so that it never writes through the caller's
// view (two batch entries may share a row of a broadcast).

// CHECK-LABEL: func.func @update(
// CHECK-SAME: %[[C:.*]]: memref<?x8xf32, strided<[?, 1], offset: ?>>, %{{.*}}: f32)
// CHECK-NOT: attn.strided_arguments
// CHECK: %[[V:.*]] = memref.cast %[[C]]
// CHECK: memref.store {{.*}}, %[[V]]
func.func @update(%c: tensor<?x8xf32>, %x: f32) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %r = tensor.insert %x into %c[%c0, %c0] : tensor<?x8xf32>
  return %r : tensor<?x8xf32>
}

// -----

// An argument that is a memref already keeps its type.

// CHECK-LABEL: func.func @memref_arg(
// CHECK-SAME: %{{.*}}: memref<4x4xf32, strided<[8, 1]>>,
// CHECK-SAME: %{{.*}}: memref<?xf32, strided<[1], offset: ?>>)
// CHECK-SAME: attributes {attn.strided_arguments}
func.func @memref_arg(%m: memref<4x4xf32, strided<[8, 1]>>, %t: tensor<?xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %a = memref.load %m[%c0, %c0] : memref<4x4xf32, strided<[8, 1]>>
  %b = tensor.extract %t[%c0] : tensor<?xf32>
  %s = arith.addf %a, %b : f32
  return %s : f32
}

// -----

// strided=false: identity layouts everywhere, no attribute.

// OFF-LABEL: func.func @off(
// OFF-SAME: %{{.*}}: memref<?x8xf32>) -> memref<?x8xf32> {
func.func @off(%q: tensor<?x8xf32>) -> tensor<?x8xf32> {
  return %q : tensor<?x8xf32>
}
