// RUN: attn-opt %s --attn-omp-dynamic-schedule | FileCheck %s

// A worksharing loop without a schedule (what convert-scf-to-openmp emits)
// gets schedule(dynamic); one whose schedule is already chosen keeps it.

// CHECK-LABEL: func.func @unscheduled
// CHECK: omp.wsloop schedule(dynamic)
// CHECK-NEXT: omp.loop_nest
func.func @unscheduled(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
        omp.yield
      }
    }
    omp.terminator
  }
  return
}

// CHECK-LABEL: func.func @scheduled
// CHECK: omp.wsloop schedule(static)
// CHECK-NOT: dynamic
func.func @scheduled(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  omp.parallel {
    omp.wsloop schedule(static) {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
        omp.yield
      }
    }
    omp.terminator
  }
  return
}
