// REQUIRES: x86_64-host
// bf16 attention with `bf16-dot-products` on a target with AVX-512 BF16
// (Cooper Lake, Sapphire Rapids and later, Zen 4 and later): the fused form's
// Q K^T and P V microkernels read bf16 pairs as i32 words and accumulate
// `vdpbf16ps` dot products in f32 (x86vector.avx512.dot) instead of
// converting the tiles to f32. By default (`auto`) the target description
// decides: on AMD Zen 4 (`znver4`), where one dot product issues as often as
// one f32 FMA, it takes them; on Intel, where it issues at half the FMA's
// rate, it does not (docs/Targets.md). `true` and `false` override it.
// Targets without the feature, the feature removed, and f32 specs keep the
// f32 FMA kernels even when it is asked for. Targets with AMX BF16 take AMX
// tiles instead (test/Target/amx.mlir), so Sapphire Rapids is tested here
// with amx-bf16 removed.

// RUN: attn-opt %s --convert-attn-to-fused-loops="target-cpu=sapphirerapids target-features=-amx-bf16 bf16-dot-products=true" \
// RUN:   | FileCheck %s --check-prefix=DOT
// RUN: attn-opt %s --convert-attn-to-fused-loops="target-cpu=znver4 bf16-dot-products=true" \
// RUN:   | FileCheck %s --check-prefix=DOT
// Zen 4 takes them by default, and through the CPU pipeline.
// RUN: attn-opt %s --convert-attn-to-fused-loops="target-cpu=znver4" \
// RUN:   | FileCheck %s --check-prefix=DOT
// RUN: attn-opt %s --convert-attn-to-fused-loops="target-cpu=znver4 bf16-dot-products=auto" \
// RUN:   | FileCheck %s --check-prefix=DOT
// RUN: attn-opt %s --attn-to-llvm-cpu="parallel=false target-cpu=znver4" \
// RUN:   | FileCheck %s --check-prefix=PIPE-DOT
// What the lowering chose says so (attn.lowering; attn-run's report): both
// products for @f; none for the f32 spec and for bf16 queries against an
// int8 cache (no bf16 product there); only P V for @d48.
// PIPE-DOT-LABEL: llvm.func @f(
// PIPE-DOT-SAME: attn.lowering = [{bf16_products = "vdpbf16ps", form = "fused"
// PIPE-DOT: llvm.x86.avx512bf16.dpbf16ps.512
// PIPE-DOT-LABEL: llvm.func @f32(
// PIPE-DOT-NOT: bf16_products
// PIPE-DOT-LABEL: llvm.func @d48(
// PIPE-DOT-SAME: attn.lowering = [{bf16_products = "f32 for Q K^T, vdpbf16ps for P V", form = "fused"
// PIPE-DOT-LABEL: llvm.func @quantized(
// PIPE-DOT-NOT: bf16_products
// The query tile as words of pairs, K packed as words of pairs, P rounded
// to bf16 for P V (both on whole tiles of 32 keys).
// DOT-LABEL: func.func @f(
// DOT:       vector.bitcast {{.*}} : vector<32xbf16> to vector<16xi32>
// DOT:       x86vector.avx512.dot {{.*}} : vector<32xbf16> -> vector<16xf32>
// DOT:       arith.truncf {{.*}} : vector<32xf32> to vector<32xbf16>
// DOT:       x86vector.avx512.dot {{.*}} : vector<32xbf16> -> vector<16xf32>

// RUN: attn-opt %s --convert-attn-to-fused-loops="target-cpu=sapphirerapids" \
// RUN:   | FileCheck %s --check-prefix=NODOT
// RUN: attn-opt %s --convert-attn-to-fused-loops="target-cpu=sapphirerapids target-features=-amx-bf16" \
// RUN:   | FileCheck %s --check-prefix=NODOT
// RUN: attn-opt %s --convert-attn-to-fused-loops="target-cpu=znver4 bf16-dot-products=false" \
// RUN:   | FileCheck %s --check-prefix=NODOT
// RUN: attn-opt %s --attn-to-llvm-cpu="parallel=false target-cpu=znver4 bf16-dot-products=false" \
// RUN:   | FileCheck %s --check-prefix=PIPE-NODOT
// PIPE-NODOT-NOT: dpbf16ps
// PIPE-NODOT-NOT: bf16_products
// The same words everywhere: the pass options and the tools' flag take auto,
// true / 1 / on and false / 0 / off, the flag alone meaning true.
// RUN: attn-opt %s --convert-attn-to-fused-loops="target-cpu=sapphirerapids target-features=-amx-bf16 bf16-dot-products=1" \
// RUN:   | FileCheck %s --check-prefix=DOT
// RUN: attn-opt %s --convert-attn-to-fused-loops="target-cpu=znver4 bf16-dot-products=off" \
// RUN:   | FileCheck %s --check-prefix=NODOT
// RUN: attn-compile %s --emit=mlir --parallel=false --target-cpu=sapphirerapids --target-features=-amx-bf16 --bf16-dot-products -o - \
// RUN:   | FileCheck %s --check-prefix=PIPE-DOT
// RUN: attn-compile %s --emit=mlir --parallel=false --target-cpu=sapphirerapids --target-features=-amx-bf16 --bf16-dot-products=on -o - \
// RUN:   | FileCheck %s --check-prefix=PIPE-DOT
// RUN: attn-compile %s --emit=mlir --parallel=false --target-cpu=znver4 --bf16-dot-products=auto -o - \
// RUN:   | FileCheck %s --check-prefix=PIPE-DOT
// RUN: attn-compile %s --emit=mlir --parallel=false --target-cpu=znver4 --bf16-dot-products=0 -o - \
// RUN:   | FileCheck %s --check-prefix=PIPE-NODOT
// RUN: not attn-compile %s --emit=mlir --bf16-dot-products=maybe -o - 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BAD-FLAG
// BAD-FLAG: for the --bf16-dot-products option: Cannot find option named 'maybe'
// A Zen 4 without the feature.
// RUN: attn-opt %s --convert-attn-to-fused-loops="target-cpu=znver4 target-features=-avx512bf16" \
// RUN:   | FileCheck %s --check-prefix=NODOT
// RUN: attn-opt %s --convert-attn-to-fused-loops="target-cpu=sapphirerapids target-features=-avx512bf16 bf16-dot-products=true" \
// RUN:   | FileCheck %s --check-prefix=NODOT
// RUN: attn-opt %s --convert-attn-to-fused-loops="target-cpu=icelake-server bf16-dot-products=true" \
// RUN:   | FileCheck %s --check-prefix=NODOT
// RUN: attn-opt %s --convert-attn-to-fused-loops="target-cpu=haswell bf16-dot-products=true" \
// RUN:   | FileCheck %s --check-prefix=NODOT
// NODOT-LABEL: func.func @f(
// NODOT-NOT:   x86vector.avx512.dot
// NODOT:       vector.fma
// NODOT-NOT:   x86vector.avx512.dot

// The assembly: the Q K^T and P V inner loops are dot products on zmm
// registers (an 8-row register tile: 16 dot products per step for Q K^T's
// 32 keys and P V's 32 columns), with no spill.
// RUN: attn-opt %s --attn-to-llvm-cpu="parallel=false target-cpu=sapphirerapids target-features=-amx-bf16 bf16-dot-products=true" \
// RUN:   | mlir-translate --mlir-to-llvmir | opt -O3 -S | llc -O3 \
// RUN:   | %python %S/Inputs/asm-loops.py --min-fma 8 \
// RUN:   | FileCheck %s --check-prefix=ASM
// ASM:     loop: fma=0 spills=0 width=zmm dot={{16|32}}
// ASM:     loop: fma=0 spills=0 width=zmm dot={{16|32}}
// ASM-NOT: spills={{[1-9][0-9]*}} width={{.*}} dot={{[1-9]}}

// f32 specs and head dimensions that are not a multiple of 32 keep f32 Q K^T
// (the latter still rounds P to bf16 for a bf16 V).
// RUN: attn-opt %s --convert-attn-to-fused-loops="target-cpu=sapphirerapids target-features=-amx-bf16 bf16-dot-products=true" \
// RUN:   | FileCheck %s --check-prefix=F32
// F32-LABEL: func.func @f32(
// F32-NOT:   x86vector.avx512.dot
// F32-LABEL: func.func @d48(
// F32:       vector.fma
// F32:       arith.truncf {{.*}} : vector<32xf32> to vector<32xbf16>
// F32:       x86vector.avx512.dot {{.*}} : vector<32xbf16> -> vector<16xf32>

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

func.func @d48(%q: tensor<1x4x256x48xbf16>, %k: tensor<1x4x256x48xbf16>,
               %v: tensor<1x4x256x32xbf16>) -> tensor<1x4x256x32xbf16> {
  %o = attn.attention q(%q : tensor<1x4x256x48xbf16>)
      k(%k : tensor<1x4x256x48xbf16>) v(%v : tensor<1x4x256x32xbf16>)
      -> tensor<1x4x256x32xbf16>
  return %o : tensor<1x4x256x32xbf16>
}

func.func @quantized(%q: tensor<1x4x4x64xbf16>, %k: tensor<1x2x256x64xi8>,
                     %v: tensor<1x2x256x64xi8>, %ks: tensor<1x2x256xf32>,
                     %vs: tensor<1x2xf32>) -> tensor<1x4x4x64xbf16> {
  %o = attn.attention q(%q : tensor<1x4x4x64xbf16>)
      k(%k : tensor<1x2x256x64xi8>) v(%v : tensor<1x2x256x64xi8>)
      k_scale(%ks : tensor<1x2x256xf32>) v_scale(%vs : tensor<1x2xf32>)
      -> tensor<1x4x4x64xbf16>
  return %o : tensor<1x4x4x64xbf16>
}
