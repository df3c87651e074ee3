// RUN: attn-opt %s --attn-forall-to-parallel-or-sequential=parallel=false -split-input-file -verify-diagnostics | FileCheck %s

// A serial build (parallel=false): every grid, nested ones too, becomes a
// loop nest; attn.grid_threads is 1; no OpenMP function is declared or
// called.

// CHECK-NOT: omp_get
// CHECK-LABEL: func.func @threads(
// CHECK-NOT: attn.grid_threads
// CHECK: %[[ONE:.*]] = arith.constant 1 : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[ONE]] step
// CHECK: %[[INNER:.*]] = arith.constant 1 : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[INNER]] step
// CHECK: memref.store %[[ONE]]
// CHECK-NOT: scf.forall
// CHECK-NOT: omp_get
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

// Nested ones too.
func.func @with_results(%t: tensor<4xf32>) -> tensor<4xf32> {
  scf.forall (%j) in (4) {
    // expected-error @below {{'scf.forall' op with results cannot become a loop nest}}
    %r = scf.forall (%i) in (4) shared_outs(%o = %t) -> tensor<4xf32> {
      scf.forall.in_parallel {
        tensor.parallel_insert_slice %o into %o[0] [4] [1] : tensor<4xf32> into tensor<4xf32>
      }
    }
  }
  return %t : tensor<4xf32>
}

// -----

func.func @with_results_outer(%t: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{'scf.forall' op with results cannot become a loop nest}}
  %r = scf.forall (%i) in (4) shared_outs(%o = %t) -> tensor<4xf32> {
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %o into %o[0] [4] [1] : tensor<4xf32> into tensor<4xf32>
    }
  }
  return %r : tensor<4xf32>
}
