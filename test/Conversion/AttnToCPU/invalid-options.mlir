// REQUIRES: x86_64-host
// Pass options out of range: a diagnostic and a non-zero exit, no crash.
// RUN: not attn-opt %s --convert-attn-to-fused-loops="tile-q=-1" 2>&1 | FileCheck %s --check-prefix=TQ
// RUN: not attn-opt %s --convert-attn-to-fused-loops="tile-k=-8" 2>&1 | FileCheck %s --check-prefix=TK
// RUN: not attn-opt %s --convert-attn-to-split-kv="splits=0" 2>&1 | FileCheck %s --check-prefix=SPLITS
// RUN: not attn-opt %s --convert-attn-to-split-kv="splits=-2" 2>&1 | FileCheck %s --check-prefix=SPLITS2
// RUN: not attn-opt %s --convert-attn-to-split-kv="tile-q=-2" 2>&1 | FileCheck %s --check-prefix=DTQ
// tile-q = tile-k = 0 means "chosen from the shape" (attn::chooseTileSizes).
// (The target is named, so the choice does not depend on this host's cores
// and caches.)
// RUN: attn-opt %s --convert-attn-to-fused-loops="tile-q=0 tile-k=0 target-cpu=haswell" --canonicalize | FileCheck %s --check-prefix=AUTO
// Unknown targets.
// RUN: not attn-opt %s --convert-attn-to-fused-loops="target-cpu=bogus" 2>&1 | FileCheck %s --check-prefix=CPU
// RUN: not attn-opt %s --convert-attn-to-split-kv="target-cpu=haswell target-features=+nosuchfeature" 2>&1 | FileCheck %s --check-prefix=FEATURE

// TQ: error: attn: tile sizes must be positive (or 0 for the default); got tile-q = -1, tile-k = 0
// TK: error: attn: tile sizes must be positive (or 0 for the default); got tile-q = 0, tile-k = -8
// SPLITS: error: attn: splits must be positive, or -1 (chosen at run time); got 0
// SPLITS2: error: attn: splits must be positive, or -1 (chosen at run time); got -2
// DTQ: error: attn: tile sizes must be positive (or 0 for the default); got tile-q = -2, tile-k = 0
// CPU: error: attn: unknown target CPU 'bogus'
// FEATURE: error: attn: unknown target feature '+nosuchfeature'

// MHA, no mask: 256 query rows per tile, 128 keys; 4 query tiles.
// AUTO-LABEL: func.func @f
// AUTO: scf.forall (%{{.+}}, %[[QT:.+]]) in (4, 4)
// AUTO: arith.muli %[[QT]], %c256
// AUTO: scf.for %[[KT:.+]] = %c0 to %c8 step %c1
// AUTO: arith.muli %[[KT]], %c128
func.func @f(%q: tensor<1x4x1024x64xf32>) -> tensor<1x4x1024x64xf32> {
  %0 = attn.attention q(%q : tensor<1x4x1024x64xf32>) k(%q : tensor<1x4x1024x64xf32>)
      v(%q : tensor<1x4x1024x64xf32>) -> tensor<1x4x1024x64xf32>
  return %0 : tensor<1x4x1024x64xf32>
}
