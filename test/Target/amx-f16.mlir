// REQUIRES: x86_64-host
// f16 attention on a target with AMX BF16: each f16 value is split exactly
// into two bf16, x = hi + lo, and a product a . b runs as one tile product
// over three times the reduction, ah . bh + ah . bl + al . bh: the A operand
// (the query tile, the weights) holds [hi, hi, lo] along k, the B operand
// (K packed in pairs, V as pairs of rows) [hi, lo, hi]. A tile whose Q, K
// or V holds an infinity or a NaN takes the f32 kernels instead (x - hi is
// NaN exactly there). Without AMX, f16 keeps the f32 kernels.

// RUN: attn-opt %s --convert-attn-to-fused-loops="target-cpu=sapphirerapids" \
// RUN:   | FileCheck %s --check-prefix=SPLIT
// The query tile split once per query tile: [R, qs, 3 x 64] bf16, hi twice
// and lo once, with the check that every value is finite (the sum of x - hi
// is not NaN).
// SPLIT-LABEL: func.func @f(
// SPLIT:       arith.truncf {{.*}} : vector<16xf32> to vector<16xbf16>
// SPLIT-COUNT-3: vector.transfer_write {{.*}} : vector<16xbf16>, tensor<?x?x192xbf16>
// SPLIT:       arith.cmpf ord
// Q K^T: K split into [96, 2 ks] pairs (hi, lo, hi), the product over 96
// pairs on the tiles where Q and K are finite, else the f32 kernel.
// SPLIT:       tensor.expand_shape {{.*}} into tensor<96x?x2xbf16>
// SPLIT:       scf.if
// SPLIT:       tensor.expand_shape {{.*}} into tensor<?x?x96x2xbf16>
// SPLIT:       linalg.generic {{.*}} ins({{.*}} : tensor<?x?x96x2xbf16>, tensor<96x?x2xbf16>) {{.*}} attrs = {attn.amx_tile_matmul}
// SPLIT:       } else {
// SPLIT:       vector.fma
// P V: the weights and V split over 3 x 128 keys, the product where V is
// finite, else the f32 kernel.
// SPLIT:       tensor.expand_shape {{.*}} into tensor<192x64x2xbf16>
// SPLIT:       scf.if
// SPLIT:       linalg.generic {{.*}} ins({{.*}} : tensor<?x?x192x2xbf16>, tensor<192x64x2xbf16>) {{.*}} attrs = {attn.amx_tile_matmul}
// SPLIT:       } else {
// GQA (4 query heads a group) in the bnhd layout: the split query tile is
// [R, qs, 192] whatever the layout.
// SPLIT-LABEL: func.func @gqa_bnhd(
// SPLIT:       vector.transfer_write {{.*}} : vector<16xbf16>, tensor<?x?x192xbf16>
// SPLIT:       linalg.generic {{.*}} ins({{.*}} : tensor<?x?x96x2xbf16>, tensor<96x?x2xbf16>) {{.*}} attrs = {attn.amx_tile_matmul}
// SPLIT:       linalg.generic {{.*}} ins({{.*}} : tensor<?x?x192x2xbf16>, tensor<192x64x2xbf16>) {{.*}} attrs = {attn.amx_tile_matmul}
// SPLIT-LABEL: func.func @bf16(
// SPLIT:       linalg.generic {{.*}} ins({{.*}} : tensor<?x?x32x2xbf16>, tensor<32x?x2xbf16>) {{.*}} attrs = {attn.amx_tile_matmul}

// RUN: attn-opt %s --attn-to-llvm-cpu="parallel=false target-cpu=sapphirerapids" \
// RUN:   | FileCheck %s --check-prefix=CHOICE
// CHOICE: attn.lowering = [{bf16_products = "amx-f16-split", form = "fused"
// CHOICE: attn.lowering = [{bf16_products = "amx-f16-split", form = "fused"
// CHOICE: attn.lowering = [{bf16_products = "amx", form = "fused"

// RUN: attn-opt %s --convert-attn-to-fused-loops="target-cpu=sapphirerapids target-features=-amx-bf16" \
// RUN:   | FileCheck %s --check-prefix=NOAMX
// RUN: attn-opt %s --convert-attn-to-fused-loops="target-cpu=znver4" \
// RUN:   | FileCheck %s --check-prefix=NOAMX
// NOAMX-NOT: attn.amx_tile_matmul

// The machine code of the f16 function: tile products.
// RUN: attn-opt %s --attn-to-llvm-cpu="parallel=false target-cpu=sapphirerapids" \
// RUN:   | mlir-translate --mlir-to-llvmir | opt -O3 -S | llc -O3 \
// RUN:   | FileCheck %s --check-prefix=ASM
// ASM-LABEL: {{^}}f:
// ASM:       tileloadd
// ASM:       tdpbf16ps
// ASM:       tilestored
// ASM-LABEL: {{^}}bf16:

func.func @f(%q: tensor<1x4x256x64xf16>, %k: tensor<1x4x256x64xf16>,
             %v: tensor<1x4x256x64xf16>) -> tensor<1x4x256x64xf16> {
  %o = attn.attention q(%q : tensor<1x4x256x64xf16>)
      k(%k : tensor<1x4x256x64xf16>) v(%v : tensor<1x4x256x64xf16>)
      causal(top_left) -> tensor<1x4x256x64xf16>
  return %o : tensor<1x4x256x64xf16>
}

func.func @gqa_bnhd(%q: tensor<1x256x8x64xf16>, %k: tensor<1x256x2x64xf16>,
                    %v: tensor<1x256x2x64xf16>) -> tensor<1x256x8x64xf16> {
  %o = attn.attention q(%q : tensor<1x256x8x64xf16>)
      k(%k : tensor<1x256x2x64xf16>) v(%v : tensor<1x256x2x64xf16>)
      layout(bnhd) -> tensor<1x256x8x64xf16>
  return %o : tensor<1x256x8x64xf16>
}

func.func @bf16(%q: tensor<1x4x256x64xbf16>, %k: tensor<1x4x256x64xbf16>,
                %v: tensor<1x4x256x64xbf16>) -> tensor<1x4x256x64xbf16> {
  %o = attn.attention q(%q : tensor<1x4x256x64xbf16>)
      k(%k : tensor<1x4x256x64xbf16>) v(%v : tensor<1x4x256x64xbf16>)
      -> tensor<1x4x256x64xbf16>
  return %o : tensor<1x4x256x64xbf16>
}
