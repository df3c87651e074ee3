// RUN: attn-opt %s -split-input-file -verify-diagnostics | attn-opt -split-input-file | FileCheck %s
// RUN: attn-opt %s -split-input-file -verify-diagnostics -canonicalize | FileCheck %s --check-prefix=CANON

// attn.grid_work round-trips; canonicalization keeps it in the body of an
// scf.forall (nothing uses it and it has no result, yet it is not dead) and
// erases it anywhere else (the grid became a loop nest).

// CHECK-LABEL: func.func @in_grid(
// CHECK: scf.forall
// CHECK-NEXT: attn.grid_work %{{.*}}
// CANON-LABEL: func.func @in_grid(
// CANON: scf.forall
// CANON-NEXT: attn.grid_work %{{.*}}
func.func @in_grid(%m: memref<4xf32>, %x: f32, %w: index) {
  scf.forall (%i) in (4) {
    attn.grid_work %w
    memref.store %x, %m[%i] : memref<4xf32>
  }
  return
}

// -----

// CHECK-LABEL: func.func @in_loop(
// CHECK: attn.grid_work
// CANON-LABEL: func.func @in_loop(
// CANON-NOT: attn.grid_work
// CANON: memref.store
func.func @in_loop(%m: memref<4xf32>, %x: f32, %w: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    attn.grid_work %w
    memref.store %x, %m[%i] : memref<4xf32>
  }
  return
}

// -----

// The thread choice is made before the grid runs: its work comes from above.
func.func @work_inside(%m: memref<4xf32>, %x: f32) {
  scf.forall (%i) in (4) {
    // expected-error @below {{'attn.grid_work' op work must be defined above its scf.forall}}
    attn.grid_work %i
    memref.store %x, %m[%i] : memref<4xf32>
  }
  return
}
