// attn-run compiles the entry it runs and what the entry reaches through
// calls, not the other functions of the file: @other below calls a function
// no library defines, so compiling it would fail symbol resolution, and @big
// would cost its lowering and LLVM's code generation. A helper the entry
// calls (@scale_by_two, from @doubled) is kept and runs.
//
// RUN: attn-run %s --entry=small --verify --reps=1 | FileCheck %s
// RUN: attn-run %s --entry=small --form=fused --verify --reps=1 | FileCheck %s
// CHECK: out: f32 [1, 2, 16, 8]
// CHECK-SAME: [ok
//
// RUN: %python %S/Inputs/write_npy.py %t.x.npy f4 4 1,-2.5,3,0.25
// RUN: attn-run %s --entry=doubled --input 0=%t.x.npy --reps=1 --print \
// RUN:   | FileCheck %s --check-prefix=HELPER
// HELPER: {{^}}2 -5 6 0.5{{$}}
//
// The other function alone still fails, with the missing symbol named.
// RUN: not attn-run %s --entry=other 2>&1 | FileCheck %s --check-prefix=OTHER
// OTHER: attn_no_such_function
// OTHER: attn-run: error:

func.func private @attn_no_such_function(tensor<4xf32>) -> tensor<4xf32>

func.func @other(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = func.call @attn_no_such_function(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

func.func private @scale_by_two(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.add ins(%x, %x : tensor<4xf32>, tensor<4xf32>)
      outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

func.func @doubled(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = func.call @scale_by_two(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

func.func @small(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x24x8xf32>,
                 %v: tensor<1x2x24x8xf32>) -> tensor<1x2x16x8xf32> {
  %out = attn.attention q(%q : tensor<1x2x16x8xf32>)
      k(%k : tensor<1x2x24x8xf32>) v(%v : tensor<1x2x24x8xf32>)
      causal(bottom_right) -> tensor<1x2x16x8xf32>
  return %out : tensor<1x2x16x8xf32>
}

func.func @big(%q: tensor<2x8x?x64xf32>, %k: tensor<2x8x?x64xf32>,
               %v: tensor<2x8x?x64xf32>) -> tensor<2x8x?x64xf32> {
  %out = attn.attention q(%q : tensor<2x8x?x64xf32>)
      k(%k : tensor<2x8x?x64xf32>) v(%v : tensor<2x8x?x64xf32>)
      window_left(32) -> tensor<2x8x?x64xf32>
  return %out : tensor<2x8x?x64xf32>
}
