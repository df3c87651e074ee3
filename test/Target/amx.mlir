// REQUIRES: x86_64-host
// bf16 attention on a target with AMX BF16 (Sapphire Rapids and later): the
// fused form's Q K^T and P V become tile products on AMX. On tensors, a
// linalg.generic over bf16 pairs marked attn.amx_tile_matmul (the query tile
// read in place as pairs against K packed in pairs; the weights rounded to
// bf16 against V packed as pairs of rows); after bufferization,
// attn-lower-amx-tile-matmuls makes them tile loads, tdpbf16ps and tile
// stores. Targets without AMX BF16, the feature removed, f32 specs and
// head dimensions that are not a multiple of 32 keep the f32 kernels.

// RUN: attn-opt %s --convert-attn-to-fused-loops="target-cpu=sapphirerapids" \
// RUN:   | FileCheck %s --check-prefix=TILES
// RUN: attn-opt %s --convert-attn-to-fused-loops="target-cpu=graniterapids" \
// RUN:   | FileCheck %s --check-prefix=TILES
// Q K^T: S zeroed, then the query tile as pairs [R, qs, 32, 2] times K in
// pairs [32, ks, 2]; P V: the weights rounded to bf16, V as pairs of rows
// [64, 64, 2] (a tile of 128 keys), into the accumulator.
// TILES-LABEL: func.func @f(
// TILES:       tensor.expand_shape {{.*}} into tensor<32x?x2xbf16>
// TILES:       tensor.expand_shape {{.*}} into tensor<?x?x32x2xbf16>
// TILES:       linalg.fill
// TILES:       linalg.generic {{.*}} ins({{.*}} : tensor<?x?x32x2xbf16>, tensor<32x?x2xbf16>) {{.*}} attrs = {attn.amx_tile_matmul}
// TILES:       arith.truncf {{.*}} : vector<32xf32> to vector<32xbf16>
// TILES:       tensor.expand_shape {{.*}} into tensor<64x64x2xbf16>
// TILES:       linalg.generic {{.*}} ins({{.*}} : tensor<?x?x64x2xbf16>, tensor<64x64x2xbf16>) {{.*}} attrs = {attn.amx_tile_matmul}
// TILES-LABEL: func.func @f32(
// TILES-NOT:   attn.amx_tile_matmul
// TILES-LABEL: func.func @d48(
// TILES-COUNT-1: attn.amx_tile_matmul
// TILES-NOT:   attn.amx_tile_matmul

// RUN: attn-opt %s --attn-to-llvm-cpu="parallel=false target-cpu=sapphirerapids" \
// RUN:   | FileCheck %s --check-prefix=CHOICE
// CHOICE: attn.lowering = [{bf16_products = "amx", form = "fused"

// RUN: attn-opt %s --convert-attn-to-fused-loops="target-cpu=sapphirerapids target-features=-amx-bf16" \
// RUN:   | FileCheck %s --check-prefix=NOAMX
// RUN: attn-opt %s --convert-attn-to-fused-loops="target-cpu=znver4" \
// RUN:   | FileCheck %s --check-prefix=NOAMX
// RUN: attn-opt %s --convert-attn-to-fused-loops="target-cpu=icelake-server" \
// RUN:   | FileCheck %s --check-prefix=NOAMX
// NOAMX-NOT: attn.amx_tile_matmul

// The machine code: the tile configuration LLVM inserts, the products, the
// permission request (a system call), and no spill in the f32 microkernel
// loops that remain for partial tiles.
// RUN: attn-opt %s --attn-to-llvm-cpu="parallel=false target-cpu=sapphirerapids" \
// RUN:   | mlir-translate --mlir-to-llvmir | opt -O3 -S | llc -O3 \
// RUN:   | FileCheck %s --check-prefix=ASM
// ASM-LABEL: __attn_amx_ready:
// ASM:       syscall
// ASM-LABEL: {{^}}f:
// ASM:       ldtilecfg
// ASM:       tileloadd
// ASM:       tdpbf16ps
// ASM:       tilestored

func.func @f(%q: tensor<1x4x256x64xbf16>, %k: tensor<1x4x256x64xbf16>,
             %v: tensor<1x4x256x64xbf16>) -> tensor<1x4x256x64xbf16> {
  %o = attn.attention q(%q : tensor<1x4x256x64xbf16>)
      k(%k : tensor<1x4x256x64xbf16>) v(%v : tensor<1x4x256x64xbf16>)
      causal(top_left) -> tensor<1x4x256x64xbf16>
  return %o : tensor<1x4x256x64xbf16>
}

func.func @f32(%q: tensor<1x4x256x64xf32>, %k: tensor<1x4x256x64xf32>,
               %v: tensor<1x4x256x64xf32>) -> tensor<1x4x256x64xf32> {
  %o = attn.attention q(%q : tensor<1x4x256x64xf32>)
      k(%k : tensor<1x4x256x64xf32>) v(%v : tensor<1x4x256x64xf32>)
      -> tensor<1x4x256x64xf32>
  return %o : tensor<1x4x256x64xf32>
}

// Dqk = 48: Q K^T stays f32; P V (Dv = 32) takes the tiles.
func.func @d48(%q: tensor<1x4x256x48xbf16>, %k: tensor<1x4x256x48xbf16>,
               %v: tensor<1x4x256x32xbf16>) -> tensor<1x4x256x32xbf16> {
  %o = attn.attention q(%q : tensor<1x4x256x48xbf16>)
      k(%k : tensor<1x4x256x48xbf16>) v(%v : tensor<1x4x256x32xbf16>)
      -> tensor<1x4x256x32xbf16>
  return %o : tensor<1x4x256x32xbf16>
}
