// RUN: attn-opt %s --attn-lower-amx-tile-matmuls --split-input-file | FileCheck %s

// A marked product on buffers: C[r, i, j] += A[r, i, p, e] B[p, j, e] with
// 32 pairs (k = 64) becomes 16 x 16 output tiles, each loaded, multiplied
// twice (k in steps of 32, unrolled) and stored, under the run-time check
// (AMX granted to the process, rows and columns whole tiles); the else
// branch keeps the generic's own loops, unmarked. The columns go four tiles
// at a time (four accumulators, each A tile loaded once for the four), then
// the columns past the last whole block of four one tile at a time.

#a = affine_map<(r, i, j, p, e) -> (r, i, p, e)>
#b = affine_map<(r, i, j, p, e) -> (p, j, e)>
#c = affine_map<(r, i, j, p, e) -> (r, i, j)>

// CHECK:       memref.global "private" @__attn_amx_state : memref<i32> = dense<0>
// CHECK-LABEL: func.func private @__attn_amx_ready() -> i1
// CHECK:         llvm.inline_asm has_side_effects "syscall"
// CHECK-LABEL: func.func @qk(
// CHECK:         %[[OK:.*]] = call @__attn_amx_ready() : () -> i1
// CHECK:         scf.if
// CHECK:           %[[REM:.*]] = arith.remui %[[COLS:.*]], %c64
// CHECK:           %[[MAIN:.*]] = arith.subi %[[COLS]], %[[REM]]
// CHECK:           scf.for
// CHECK:             scf.for {{.*}} step %c16
// CHECK:               scf.for %[[J:.*]] = %c0 to %[[MAIN]] step %c64
// CHECK:                 amx.tile_load %{{.*}}[%{{.*}}, %{{.*}}, %[[J]]]{{.*}} into !amx.tile<16x16xf32>
// CHECK:                 %[[J1:.*]] = arith.addi %[[J]], %{{.*}}
// CHECK:                 amx.tile_load %{{.*}}[%{{.*}}, %{{.*}}, %[[J1]]]{{.*}} into !amx.tile<16x16xf32>
// CHECK:                 %[[J2:.*]] = arith.addi %[[J]], %{{.*}}
// CHECK:                 amx.tile_load %{{.*}}[%{{.*}}, %{{.*}}, %[[J2]]]{{.*}} into !amx.tile<16x16xf32>
// CHECK:                 %[[J3:.*]] = arith.addi %[[J]], %{{.*}}
// CHECK:                 amx.tile_load %{{.*}}[%{{.*}}, %{{.*}}, %[[J3]]]{{.*}} into !amx.tile<16x16xf32>
// One A tile per 32 of k, and per output tile its B tile and product.
// CHECK:                 amx.tile_load {{.*}} into !amx.tile<16x32xbf16>
// CHECK:                 amx.tile_load %{{.*}}[%{{.*}}, %[[J]], %{{.*}}]{{.*}} into !amx.tile<16x32xbf16>
// CHECK:                 amx.tile_mulf
// CHECK:                 amx.tile_load %{{.*}}[%{{.*}}, %[[J1]], %{{.*}}]{{.*}} into !amx.tile<16x32xbf16>
// CHECK:                 amx.tile_mulf
// CHECK:                 amx.tile_load %{{.*}}[%{{.*}}, %[[J2]], %{{.*}}]{{.*}} into !amx.tile<16x32xbf16>
// CHECK:                 amx.tile_mulf
// CHECK:                 amx.tile_load %{{.*}}[%{{.*}}, %[[J3]], %{{.*}}]{{.*}} into !amx.tile<16x32xbf16>
// CHECK:                 amx.tile_mulf
// CHECK:                 amx.tile_load {{.*}} into !amx.tile<16x32xbf16>
// CHECK-COUNT-4:         amx.tile_mulf
// CHECK-NOT:             amx.tile_mulf
// CHECK:                 amx.tile_store %{{.*}}[%{{.*}}, %{{.*}}, %[[J]]]
// CHECK:                 amx.tile_store %{{.*}}[%{{.*}}, %{{.*}}, %[[J1]]]
// CHECK:                 amx.tile_store %{{.*}}[%{{.*}}, %{{.*}}, %[[J2]]]
// CHECK:                 amx.tile_store %{{.*}}[%{{.*}}, %{{.*}}, %[[J3]]]
// CHECK:               scf.for {{.*}} = %[[MAIN]] to %[[COLS]] step %c16
// CHECK:                 amx.tile_load {{.*}} into !amx.tile<16x16xf32>
// CHECK:                 amx.tile_load {{.*}} into !amx.tile<16x32xbf16>
// CHECK:                 amx.tile_load {{.*}} into !amx.tile<16x32xbf16>
// CHECK:                 amx.tile_mulf
// CHECK:                 amx.tile_load {{.*}} into !amx.tile<16x32xbf16>
// CHECK:                 amx.tile_load {{.*}} into !amx.tile<16x32xbf16>
// CHECK:                 amx.tile_mulf
// CHECK-NOT:             amx.tile_mulf
// CHECK:                 amx.tile_store
// CHECK:         } else {
// CHECK:           linalg.generic
// CHECK-NOT:       attn.amx_tile_matmul
func.func @qk(%a: memref<2x?x32x2xbf16>, %b: memref<32x?x2xbf16>,
              %c: memref<2x?x?xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c],
                  iterator_types = ["parallel", "parallel", "parallel",
                                    "reduction", "reduction"]}
      ins(%a, %b : memref<2x?x32x2xbf16>, memref<32x?x2xbf16>)
      outs(%c : memref<2x?x?xf32>) attrs = {attn.amx_tile_matmul} {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %m = arith.mulf %xf, %yf : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A reduction that is not a static multiple of 32 stays the generic's loops
// (unmarked, no check, no AMX).

#a = affine_map<(r, i, j, p, e) -> (r, i, p, e)>
#b = affine_map<(r, i, j, p, e) -> (p, j, e)>
#c = affine_map<(r, i, j, p, e) -> (r, i, j)>

// CHECK-LABEL: func.func @odd(
// CHECK-NOT:     amx.
// CHECK-NOT:     scf.if
// CHECK:         linalg.generic
// CHECK-NOT:     attn.amx_tile_matmul
func.func @odd(%a: memref<2x?x24x2xbf16>, %b: memref<24x?x2xbf16>,
               %c: memref<2x?x?xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c],
                  iterator_types = ["parallel", "parallel", "parallel",
                                    "reduction", "reduction"]}
      ins(%a, %b : memref<2x?x24x2xbf16>, memref<24x?x2xbf16>)
      outs(%c : memref<2x?x?xf32>) attrs = {attn.amx_tile_matmul} {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %m = arith.mulf %xf, %yf : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// C zeroed just before the product (Q K^T's S): the tiles start from
// tilezero, not from memory, and only the fallback zeroes C (the fill moves
// into the else branch).

#a = affine_map<(r, i, j, p, e) -> (r, i, p, e)>
#b = affine_map<(r, i, j, p, e) -> (p, j, e)>
#c = affine_map<(r, i, j, p, e) -> (r, i, j)>

// CHECK-LABEL: func.func @zeroed(
// CHECK-NOT:     linalg.fill
// CHECK:         scf.if
// CHECK-NOT:       amx.tile_load {{.*}} into !amx.tile<16x16xf32>
// CHECK:           amx.tile_zero : !amx.tile<16x16xf32>
// CHECK-NOT:       amx.tile_load {{.*}} into !amx.tile<16x16xf32>
// CHECK:           amx.tile_mulf
// CHECK:           amx.tile_store
// CHECK:         } else {
// CHECK-NEXT:      linalg.fill
// CHECK-NEXT:      linalg.generic
func.func @zeroed(%a: memref<2x?x16x2xbf16>, %b: memref<16x?x2xbf16>,
                  %c: memref<2x?x?xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<2x?x?xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c],
                  iterator_types = ["parallel", "parallel", "parallel",
                                    "reduction", "reduction"]}
      ins(%a, %b : memref<2x?x16x2xbf16>, memref<16x?x2xbf16>)
      outs(%c : memref<2x?x?xf32>) attrs = {attn.amx_tile_matmul} {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %m = arith.mulf %xf, %yf : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}
