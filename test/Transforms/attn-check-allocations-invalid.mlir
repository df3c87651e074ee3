// RUN: attn-opt %s --attn-check-allocations -verify-diagnostics -allow-unregistered-dialect

// A block that yields a value of a type the skip path cannot make.
func.func @tuple_yield(%n: index) -> tuple<f32> {
  %s = memref.alloc(%n) : memref<?xf32>
  %c0 = arith.constant 0 : index
  %v = memref.load %s[%c0] : memref<?xf32>
  %t = "test.make_tuple"(%v) : (f32) -> tuple<f32>
  // expected-error @below {{'func.return' op yields a value of type 'tuple<f32>' that attn-check-allocations cannot make when it skips the work after a failed allocation}}
  return %t : tuple<f32>
}
