// RUN: attn-opt %s --attn-forall-to-parallel-or-sequential -split-input-file -verify-diagnostics | FileCheck %s
// RUN: attn-opt %s --attn-forall-to-parallel-or-sequential=min-parallel-work=4096 -split-input-file -verify-diagnostics | FileCheck %s --check-prefix=MIN
// RUN: attn-opt %s --attn-forall-to-parallel-or-sequential=min-parallel-work=0 -split-input-file -verify-diagnostics | FileCheck %s --check-prefix=ZERO

// The grid's body moves into one private function (constants cloned into
// it, everything else it uses passed); the loop becomes an scf.parallel
// where omp_get_max_threads() > 1 and a new parallel region would be active
// (omp_get_active_level() < omp_get_max_active_levels(): not inside a
// caller's region at one active level), and an scf.for nest otherwise, both
// calling that function.

// CHECK-DAG: func.func private @omp_get_max_active_levels() -> i32
// CHECK-DAG: func.func private @omp_get_active_level() -> i32
// CHECK-LABEL: func.func private @omp_get_max_threads() -> i32
// CHECK-LABEL: func.func private @__attn_grid_grid(
// CHECK-SAME: %[[I:.*]]: index, %[[J:.*]]: index, %[[D:.*]]: index, %[[X:.*]]: f32, %[[M:.*]]: memref<?x8xf32>)
// CHECK-SAME: attributes {llvm.linkage = #llvm.linkage<internal>}
// CHECK-NEXT: %[[C3:.*]] = arith.constant 3 : index
// CHECK-NEXT: %[[S:.*]] = arith.addi %[[I]], %[[D]] : index
// CHECK-NEXT: %[[T:.*]] = arith.addi %[[S]], %[[C3]] : index
// CHECK-NEXT: memref.store %[[X]], %[[M]][%[[T]], %[[J]]]
// CHECK-NEXT: return
// CHECK-LABEL: func.func @grid(
// CHECK-SAME: %[[ARG:.*]]: memref<?x8xf32>, %[[N:.*]]: index, %[[V:.*]]: f32)
// CHECK: %[[DIM:.*]] = memref.dim
// CHECK: %[[T:.*]] = call @omp_get_max_threads() : () -> i32
// CHECK: %[[MANY:.*]] = arith.cmpi sgt, %[[T]], %{{.*}} : i32
// CHECK: %[[LEVEL:.*]] = call @omp_get_active_level() : () -> i32
// CHECK: %[[MAXLEVELS:.*]] = call @omp_get_max_active_levels() : () -> i32
// CHECK: %[[NESTABLE:.*]] = arith.cmpi slt, %[[LEVEL]], %[[MAXLEVELS]] : i32
// CHECK: %[[SEVERAL:.*]] = arith.andi %[[MANY]], %[[NESTABLE]] : i1
// CHECK: scf.if %[[SEVERAL]] {
// CHECK: scf.parallel (%[[PI:.*]], %[[PJ:.*]]) =
// CHECK-NEXT: func.call @__attn_grid_grid(%[[PI]], %[[PJ]], %[[DIM]], %[[V]], %[[ARG]])
// CHECK: } else {
// CHECK: scf.for %[[SI:.*]] =
// CHECK-NEXT: scf.for %[[SJ:.*]] =
// CHECK-NEXT: func.call @__attn_grid_grid(%[[SI]], %[[SJ]], %[[DIM]], %[[V]], %[[ARG]])
// CHECK-NOT: scf.forall
func.func @grid(%m: memref<?x8xf32>, %n: index, %x: f32) {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %d = memref.dim %m, %c0 : memref<?x8xf32>
  scf.forall (%i, %j) in (%n, 8) {
    %s = arith.addi %i, %d : index
    %t = arith.addi %s, %c3 : index
    memref.store %x, %m[%t, %j] : memref<?x8xf32>
  }
  return
}

// -----

// Two grids in one function get a function each; a grid nested in another
// runs as a loop nest inside its parent's function; a name already taken
// is made unique.

// CHECK-LABEL: func.func private @__attn_grid_two_0(
// CHECK-NOT: scf.forall
// CHECK: scf.for
// CHECK: memref.store
// CHECK-LABEL: func.func private @__attn_grid_two_1(
// CHECK: memref.store
// CHECK-LABEL: func.func @two(
// CHECK-COUNT-2: call @omp_get_max_threads()
// CHECK-LABEL: func.func private @__attn_grid_two()
func.func @two(%m: memref<4x4xf32>, %x: f32) {
  scf.forall (%i) in (4) {
    scf.forall (%j) in (4) {
      memref.store %x, %m[%i, %j] : memref<4x4xf32>
    }
  }
  scf.forall (%i) in (4) {
    memref.store %x, %m[%i, %i] : memref<4x4xf32>
  }
  return
}
func.func private @__attn_grid_two()

// -----

// A grid in a nested module: its function and the declaration go into that
// module's symbol table.

// CHECK-LABEL: module @outer
// CHECK-NOT: omp_get_max_threads
// CHECK: module @inner
// CHECK: func.func private @omp_get_max_threads() -> i32
// CHECK: func.func private @__attn_grid_nested(
// CHECK: func.func @nested(
// CHECK: call @omp_get_max_threads()
// CHECK: call @__attn_grid_nested(
module @outer {
  module @inner {
    func.func @nested(%m: memref<4xf32>, %x: f32) {
      scf.forall (%i) in (4) {
        memref.store %x, %m[%i] : memref<4xf32>
      }
      return
    }
  }
}

// -----

// With attn.grid_work, the parallel branch also needs the grid's work to be
// at least min-parallel-work (2^19 by default; 0: no such condition); the
// grid's own marker counts, and every marker, the grid's and those of
// nested grids, is erased.

// CHECK-LABEL: func.func private @__attn_grid_worked(
// CHECK-NOT: attn.grid_work
// CHECK: return
// CHECK-LABEL: func.func @worked(
// CHECK-SAME: %{{.*}}: memref<4x4xf32>, %{{.*}}: f32, %[[W:.*]]: index, %{{.*}}: index)
// CHECK-NOT: attn.grid_work
// CHECK: %[[T:.*]] = call @omp_get_max_threads() : () -> i32
// CHECK: %[[MANY:.*]] = arith.cmpi sgt, %[[T]], %{{.*}} : i32
// CHECK: %[[NESTABLE:.*]] = arith.cmpi slt
// CHECK: %[[SEVERAL:.*]] = arith.andi %[[MANY]], %[[NESTABLE]] : i1
// CHECK: %[[LEAST:.*]] = arith.constant 524288 : index
// CHECK: %[[ENOUGH:.*]] = arith.cmpi sge, %[[W]], %[[LEAST]] : index
// CHECK: %[[BOTH:.*]] = arith.andi %[[SEVERAL]], %[[ENOUGH]] : i1
// CHECK: scf.if %[[BOTH]] {
// CHECK: scf.parallel
// CHECK: } else {
// CHECK: scf.for
// CHECK-NOT: attn.grid_work
// MIN-LABEL: func.func @worked(
// MIN: arith.constant 4096 : index
// ZERO-LABEL: func.func @worked(
// ZERO-NOT: arith.cmpi sge
// ZERO: scf.if
func.func @worked(%m: memref<4x4xf32>, %x: f32, %w0: index, %w1: index) {
  scf.forall (%i) in (4) {
    attn.grid_work %w0
    scf.forall (%j) in (4) {
      attn.grid_work %w1
      memref.store %x, %m[%i, %j] : memref<4x4xf32>
    }
  }
  return
}

// -----

// attn.grid_threads %w before a grid: the threads a grid of %w
// multiply-adds gets, the same choice as the grid's own (threads, a region
// that may open, the work threshold) as a value: omp_get_max_threads() or
// 1. Inside another grid (a loop nest once outlined) it is 1.

// CHECK-LABEL: func.func private @__attn_grid_threads(
// CHECK-NOT: attn.grid_threads
// CHECK: %[[ONE:.*]] = arith.constant 1 : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[ONE]]
// CHECK-LABEL: func.func @threads(
// CHECK-SAME: %{{.*}}: memref<?xindex>, %[[W:.*]]: index)
// CHECK: %[[T:.*]] = call @omp_get_max_threads() : () -> i32
// CHECK: %[[MANY:.*]] = arith.cmpi sgt, %[[T]], %{{.*}} : i32
// CHECK: %[[NESTABLE:.*]] = arith.cmpi slt
// CHECK: %[[SEVERAL:.*]] = arith.andi %[[MANY]], %[[NESTABLE]] : i1
// CHECK: %[[ENOUGH:.*]] = arith.cmpi sge, %[[W]], %{{.*}} : index
// CHECK: %[[BOTH:.*]] = arith.andi %[[SEVERAL]], %[[ENOUGH]] : i1
// CHECK: %[[TI:.*]] = arith.index_cast %[[T]] : i32 to index
// CHECK: %[[C1:.*]] = arith.constant 1 : index
// CHECK: %[[N:.*]] = arith.select %[[BOTH]], %[[TI]], %[[C1]] : index
// CHECK: scf.if
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%[[N]])
// CHECK: } else {
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[N]]
// MIN-LABEL: func.func @threads(
// MIN: %[[ENOUGH:.*]] = arith.cmpi sge, %{{.*}}, %{{.*}} : index
// ZERO-LABEL: func.func @threads(
// ZERO-NOT: arith.cmpi sge
// ZERO: arith.select
func.func @threads(%m: memref<?xindex>, %w: index) {
  %n = attn.grid_threads %w
  scf.forall (%i) in (%n) {
    attn.grid_work %w
    %inner = attn.grid_threads %w
    scf.forall (%j) in (%inner) {
      memref.store %n, %m[%i] : memref<?xindex>
    }
  }
  return
}

// -----

// No grid, nothing declared.

// CHECK-LABEL: func.func @none
// CHECK-NOT: omp_get_max_threads
func.func @none() {
  return
}

// -----

func.func @with_results(%t: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{'scf.forall' op with results cannot become a parallel loop}}
  %r = scf.forall (%i) in (4) shared_outs(%o = %t) -> tensor<4xf32> {
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %o into %o[0] [4] [1] : tensor<4xf32> into tensor<4xf32>
    }
  }
  return %r : tensor<4xf32>
}

// -----

// expected-error @below {{'func.func' op is not the OpenMP runtime's `i32 omp_get_max_threads()`}}
func.func private @omp_get_max_threads() -> i64
func.func @wrong_declaration(%m: memref<4xf32>, %x: f32) {
  scf.forall (%i) in (4) {
    memref.store %x, %m[%i] : memref<4xf32>
  }
  return
}

// -----

// expected-error @below {{'func.func' op is not the OpenMP runtime's `i32 omp_get_active_level()`}}
func.func private @omp_get_active_level(i32) -> i32
func.func @wrong_level_declaration(%m: memref<4xf32>, %x: f32) {
  scf.forall (%i) in (4) {
    memref.store %x, %m[%i] : memref<4xf32>
  }
  return
}
