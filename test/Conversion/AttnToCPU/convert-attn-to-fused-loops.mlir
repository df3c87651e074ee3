// REQUIRES: x86_64-host
// RUN: attn-opt %s --convert-attn-to-fused-loops="tile-q=64 tile-k=64 target-cpu=skylake-avx512" --canonicalize --cse --split-input-file | FileCheck %s
// RUN: attn-opt %s --convert-attn-to-fused-loops="tile-q=32 tile-k=16 target-cpu=skylake-avx512" --canonicalize --split-input-file | FileCheck %s --check-prefix=TILES
// RUN: attn-opt %s --convert-attn-to-fused-loops="target-cpu=skylake-avx512" --canonicalize --split-input-file | FileCheck %s --check-prefix=NOBIG --implicit-check-not=256x256
// RUN: attn-opt %s --convert-attn-to-fused-loops="tile-q=64 tile-k=64 target-cpu=haswell" --canonicalize --cse --split-input-file | FileCheck %s --check-prefix=AVX2
// RUN: attn-opt %s --convert-attn-to-fused-loops="instrument-tiles=true" --split-input-file | FileCheck %s --check-prefix=INSTR

// Causal GQA (Hq = 8 shares Hkv = 2, R = 4) at Nq = Nk = 256: one parallel
// iteration per (K/V head, query tile); the key-tile loop stops at the causal
// bound min(Nk, q0 + qs), so tiles above the diagonal are never visited. No
// [Nq, Nk] = 256x256 buffer exists anywhere: the largest temporary is one
// [R, 64, 64] score tile.

// NOBIG-LABEL: func.func @causal_gqa
// NOBIG: scf.forall
// CHECK-LABEL: func.func @causal_gqa
// CHECK-DAG: %[[EIGHTH:.+]] = arith.constant dense<1.250000e-01> : vector<16xf32>
// CHECK: %[[OUT:.+]] = scf.forall (%[[G:.+]], %[[QT:.+]]) in (2, 4)
// The grid's work for the thread choice: Hq Nq Nk (Dqk + Dv) multiply-adds.
// CHECK-NEXT:   attn.grid_work %c67108864
// CHECK:   %[[Q0:.+]] = arith.muli %[[QT]], %c64
// CHECK:   %[[QEND:.+]] = arith.addi %[[Q0]], %{{.+}}
// CHECK:   %[[HI:.+]] = arith.minsi %[[QEND]], %c256
// CHECK:   %[[KTHI:.+]] = arith.ceildivsi %{{.+}}, %c64
// The R = 4 query heads of the group are read as one tile...
// CHECK:   tensor.extract_slice %{{.+}}[0, %{{.+}}, %[[Q0]], 0] [1, 4, %{{.+}}, 64]
// CHECK:   scf.for %[[KT:.+]] = %c0 to %{{.+}} step %c1
// ...against each K tile, read once per group.
// CHECK:     %[[KTILE:.+]] = tensor.extract_slice %{{.+}}[0, %[[G]], %{{.+}}, 0] [1, 1, %{{.+}}, 64]
// Whole register tiles (rows % 8 == 0, keys % 32 == 0) pack K^T [64, ks]
// once, in 16 x 16 blocks transposed in registers, and run the vector
// microkernel: an 8 x 32 block of S stays in registers across d. Other tiles
// take dot products on the K tile as it is.
// CHECK:     arith.remsi
// CHECK:     scf.if
// CHECK:       %[[KT:.+]] = scf.for
// CHECK:         scf.for
// CHECK-COUNT-16:  vector.transfer_read %[[KTILE]]
// transposed in registers by a network of 64 two-source shuffles (unpack
// 32- and 64-bit pairs, interleave 128-bit blocks: one instruction each)
// CHECK-COUNT-64:  vector.shuffle
// CHECK-COUNT-16:  vector.transfer_write
// A block runs only where its rows read one of its 32 keys (a causal
// diagonal tile skips the blocks above the diagonal, about half); a skipped
// block leaves its scores unwritten, and the softmax masks them to -inf.
// CHECK:       %[[READS:.+]] = arith.andi %{{.+}}, %{{.+}} : i1
// CHECK-NEXT:  scf.if %[[READS]] -> (tensor<?x?x?xf32>)
// CHECK:         vector.transfer_read %[[KT]]
// CHECK-COUNT-8: vector.fma {{.*}} : vector<32xf32>
// CHECK:       } else {
// CHECK-NEXT:    scf.yield %{{.+}} : tensor<?x?x?xf32>
// The rows left over, one by one, skip the same way.
// CHECK:       scf.if
// CHECK:         vector.fma {{.*}} : vector<32xf32>
// CHECK:       } else {
// Other tiles (decode rows, tails): per key row, a 16-lane dot product with
// each query row of the tile (d unrolled into independent chains), one
// horizontal sum per logit.
// CHECK:     } else {
// CHECK:       scf.for %[[J:.+]] = %c0 to %{{.+}} step %c1
// CHECK:         vector.transfer_read %[[KTILE]][%c0, %c0, %[[J]], %c0]
// CHECK:         vector.fma {{.*}} : vector<16xf32>
// CHECK:         vector.reduction <add>
// CHECK:         tensor.insert
// Whether the tile is full (no structural mask cuts into it) decides only
// whether P V must be guarded against masked keys.
// CHECK:     %[[FULL:.+]] = arith.andi
// The online softmax as vector code, in blocks of 16 rows. (1a) Row by row,
// the row's maxima lane by lane, into a row of a 16 x 16 scratch tile. The
// scale (1/8) is a positive constant, so the max is taken over the raw
// scores and scaled once. A row whose readable keys [lo, hi) are the whole
// tile (a multiple of 16 wide) reads every lane as a logit...
// Whether the tile is whole vectors wide (every tile but a last, partial
// one):
// CHECK:     %[[KS:.+]] = tensor.dim %{{.+}}, %c2 : tensor<?x?x?xf32>
// CHECK-NEXT: %[[KSREM:.+]] = arith.remsi %[[KS]], %c16
// CHECK-NEXT: %[[WHOLEV:.+]] = arith.cmpi eq, %[[KSREM]], %c0
// CHECK:     scf.for %[[R:.+]] = %c0 to %c4 step %c1
// CHECK:       scf.for %[[I0:.+]] = %c0 to %{{.+}} step %c16
// CHECK:         %[[ROWS:.+]] = arith.minsi %{{.+}}, %c16
// CHECK:         %[[RMASK:.+]] = vector.create_mask %[[ROWS]] : vector<16xi1>
// CHECK:         %[[SCRATCH:.+]] = tensor.empty() : tensor<16x16xf32>
// CHECK:         %[[MAXES:.+]] = scf.for %[[II:.+]] = %c0 to %[[ROWS]] step %c1 iter_args(%{{.+}} = %[[SCRATCH]]) -> (tensor<16x16xf32>)
// CHECK:           %[[I:.+]] = arith.addi %[[I0]], %[[II]]
// CHECK:           %[[PART:.+]] = scf.if %{{.+}} -> (vector<16xf32>)
// CHECK:             scf.for %[[J:.+]] = %c0 to %{{.+}} step %c16 iter_args(%{{.+}} = %{{.+}}) -> (vector<16xf32>)
// CHECK-NOT:           vector.create_mask
// CHECK:               vector.transfer_read %{{.+}}[%[[R]], %[[I]], %[[J]]]{{.*}}{in_bounds = [true]}
// CHECK-NEXT:          arith.cmpf ogt, {{.*}} : vector<16xf32>
// CHECK-NEXT:          arith.select {{.*}} : vector<16xi1>, vector<16xf32>
// ...other rows mask the lanes outside [lo, hi) (two lane masks) to -inf
// (which also hides the scores of the blocks Q K^T skipped), reading whole
// vectors where the tile is whole vectors wide (a masked load is slow on
// AVX2) and only the partial last vector's lanes otherwise.
// CHECK:           } else {
// CHECK-NEXT:        scf.if %[[WHOLEV]] -> (vector<16xf32>)
// CHECK-NEXT:          scf.for %[[J2:.+]] = %c0 to %{{.+}} step %c16 iter_args(%{{.+}} = %{{.+}}) -> (vector<16xf32>)
// CHECK:                 vector.create_mask
// CHECK:                 vector.create_mask
// CHECK:                 vector.transfer_read %{{.+}}[%[[R]], %[[I]], %[[J2]]], %{{[^ ]+}} {in_bounds = [true]}
// CHECK-NEXT:            arith.select {{.*}} : vector<16xi1>, vector<16xf32>
// CHECK:                 arith.cmpf ogt
// CHECK:                 arith.select {{.*}} : vector<16xi1>, vector<16xf32>
// CHECK:             } else {
// CHECK-NEXT:          scf.for %[[J3:.+]] = %c0 to %{{.+}} step %c16 iter_args(%{{.+}} = %{{.+}}) -> (vector<16xf32>)
// CHECK:                 vector.transfer_read %{{.+}}[%[[R]], %[[I]], %[[J3]]], %{{[^ ]+}} : tensor<?x?x?xf32>, vector<16xf32>
// CHECK-NEXT:            arith.select {{.*}} : vector<16xi1>, vector<16xf32>
// CHECK:           vector.transfer_write %[[PART]], %{{.+}}[%[[II]], %c0] {in_bounds = [true]} : vector<16xf32>, tensor<16x16xf32>
// The block's 16 row maxima at once, one lane per row: the scratch rows
// (those past the block's rows read as -inf) through a transpose-and-reduce
// tree of 15 combinations, no horizontal reduction per row; then m' and
// safe for the 16 rows.
// CHECK-COUNT-16: vector.transfer_read %[[MAXES]][%c{{[0-9]+}}, %c0], %{{.+}}, %{{.+}} {in_bounds = [true]}
// CHECK:         vector.shuffle %{{.+}}, %{{.+}} [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23]
// CHECK-NEXT:    vector.shuffle %{{.+}}, %{{.+}} [8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31]
// CHECK-NEXT:    arith.cmpf ogt
// CHECK-NEXT:    arith.select
// CHECK:         vector.shuffle %{{.+}}, %{{.+}} [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30]
// CHECK-NEXT:    vector.shuffle %{{.+}}, %{{.+}} [1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31]
// CHECK-NEXT:    arith.cmpf ogt
// CHECK-NEXT:    %[[TMAX:.+]] = arith.select
// CHECK-NEXT:    %[[TMAXS:.+]] = arith.mulf %[[TMAX]], %[[EIGHTH]] : vector<16xf32>
// CHECK-NEXT:    %[[MOLD:.+]] = vector.transfer_read %{{.+}}[%[[R]], %[[I0]]], %{{.+}}, %[[RMASK]]
// CHECK-NEXT:    arith.maxnumf %[[MOLD]], %[[TMAXS]] : vector<16xf32>
// (1b) Row by row, P = exp(x - safe) in place and its sums lane by lane,
// into the scratch tile. While |safe| < 2^16, P = 2^(x (c log2 e) -
// safe log2 e): one FMA per lane before the exponential; beyond (large
// logits, or one that overflowed to inf) exp(x c - safe).
// CHECK:         %[[SUMS:.+]]:2 = scf.for %[[II3:.+]] = %c0 to %[[ROWS]] step %c1 iter_args({{.*}}) -> (tensor<?x?x?xf32>, tensor<16x16xf32>)
// CHECK:           %[[SAFE:.+]] = vector.extract %{{.+}}[%[[II3]]] : f32 from vector<16xf32>
// CHECK:           scf.if %{{.+}} -> (vector<16xf32>, tensor<?x?x?xf32>)
// CHECK:             %[[ABS:.+]] = math.absf %[[SAFE]]
// CHECK-NEXT:        %[[INRANGE:.+]] = arith.cmpf olt, %[[ABS]], %{{.+}} : f32
// CHECK-NEXT:        scf.if %[[INRANGE]]
// CHECK:               scf.for
// CHECK-NEXT:            vector.transfer_read
// CHECK-NEXT:            %[[Y:.+]] = math.fma %{{.+}}, %{{.+}}, %{{.+}} : vector<16xf32>
// CHECK-NEXT:            math.exp2 %[[Y]] {attn.exp_nonpositive} : vector<16xf32>
// CHECK-NEXT:            vector.transfer_write
// CHECK:             } else {
// CHECK:               scf.for
// CHECK:                 arith.mulf {{.*}} : vector<16xf32>
// CHECK-NEXT:            arith.addf {{.*}} : vector<16xf32>
// CHECK-NEXT:            math.exp %{{.+}} {attn.exp_nonpositive} : vector<16xf32>
// CHECK:                 vector.transfer_write
// CHECK:           } else {
// CHECK-NEXT:        scf.if %[[WHOLEV]]
// CHECK:               scf.if
// CHECK:                 scf.for
// CHECK:                   math.fma
// CHECK-NEXT:              math.exp2 %{{.+}} {attn.exp_nonpositive} : vector<16xf32>
// CHECK-NEXT:              arith.select
// CHECK-NEXT:              vector.transfer_write {{.*}} {in_bounds = [true]}
// CHECK:             } else {
// CHECK:               scf.for
// CHECK:                 arith.mulf {{.*}} : vector<16xf32>
// CHECK:                 math.exp %{{.+}} {attn.exp_nonpositive} : vector<16xf32>
// CHECK-NEXT:            arith.select
// CHECK-NEXT:            vector.transfer_write
// CHECK:           vector.transfer_write %{{.+}}, %{{.+}}[%[[II3]], %c0] {in_bounds = [true]} : vector<16xf32>, tensor<16x16xf32>
// The block's 16 row sums at once (rows past the block's read as 0).
// CHECK-COUNT-16: vector.transfer_read %[[SUMS]]#1[%c{{[0-9]+}}, %c0], %{{.+}}, %{{.+}} {in_bounds = [true]}
// CHECK:         vector.shuffle
// CHECK:         arith.addf {{.*}} fastmath<reassoc,contract> : vector<16xf32>
// (2) The block's statistics, one lane per row: alpha = exp(m - m') for 16
// rows at once, l' = alpha l + sum, written under a mask of the block's rows.
// CHECK:         vector.transfer_read %{{.+}}[%[[R]], %[[I0]]], %{{.+}}, %[[RMASK]]
// CHECK:         %[[ALPHA:.+]] = math.exp %{{.+}} : vector<16xf32>
// CHECK:         %[[AL:.+]] = arith.mulf %[[ALPHA]], %[[LOLD:.+]] : vector<16xf32>
// CHECK:         %[[LNEW:.+]] = arith.addf %[[AL]], %{{.+}} : vector<16xf32>
// CHECK:         vector.transfer_write %{{.+}}, %{{.+}}[%[[R]], %[[I0]]], %[[RMASK]]
// CHECK:         vector.transfer_write %[[LNEW]], %{{.+}}[%[[R]], %[[I0]]], %[[RMASK]]
// The scales: s' from l' (exponent arithmetic), alpha s' / s.
// CHECK:         arith.bitcast %[[LNEW]] : vector<16xf32> to vector<16xi32>
// CHECK:         %[[SNEW:.+]] = arith.bitcast %{{.+}} : vector<16xi32> to vector<16xf32>
// CHECK:         arith.bitcast %[[LOLD]] : vector<16xf32> to vector<16xi32>
// CHECK:         %[[W:.+]] = arith.mulf %[[ALPHA]], %{{.+}} : vector<16xf32>
// (3) Row by row: P *= s' and acc *= alpha s' / s, each factor from the
// row's lane.
// Whole vectors where the tile is a multiple of 16 wide (and the 64 values
// of an accumulator row).
// CHECK:         scf.for %[[II2:.+]] = %c0 to %[[ROWS]] step %c1
// CHECK:           vector.extract %[[SNEW]][%[[II2]]] : f32 from vector<16xf32>
// CHECK:           scf.if %[[WHOLEV]]
// CHECK-NEXT:        scf.for
// CHECK-NEXT:          vector.transfer_read {{.*}} {in_bounds = [true]}
// CHECK-NEXT:          arith.mulf {{.*}} : vector<16xf32>
// CHECK-NEXT:          vector.transfer_write {{.*}} {in_bounds = [true]}
// CHECK:           } else {
// CHECK-NEXT:        scf.for
// CHECK-NEXT:          vector.transfer_read %{{.+}}, %{{[^ ]+}} : tensor<?x?x?xf32>, vector<16xf32>
// CHECK:           vector.extract %[[W]][%[[II2]]] : f32 from vector<16xf32>
// CHECK:           scf.for %{{.+}} = %c0 to %c64 step %c16
// CHECK-NEXT:        vector.transfer_read {{.*}} {in_bounds = [true]}
// CHECK-NEXT:        arith.mulf {{.*}} : vector<16xf32>
// P V: unguarded on full tiles and on boundary tiles whose V tile is all
// finite (the sum of v * 0 over the tile is 0); guarded (a zero weight adds
// nothing, even against NaN in v) otherwise.
// CHECK:     %[[UNGUARDED:.+]] = scf.if %[[FULL]] -> (i1)
// CHECK:       scf.yield %true
// CHECK:     } else {
// CHECK:       arith.mulf {{.*}} : vector<16xf32>
// CHECK:       vector.reduction <add>
// CHECK:       arith.cmpf oeq
// CHECK:     scf.if %[[UNGUARDED]]
// Each 8-row block's k loop runs over the keys its rows read, not the whole
// tile (the other weights are 0): from lo - k0 (lo = 0 under a causal mask)
// to hi - k0, within the tile.
// CHECK:       %[[LOK:.+]] = arith.subi %c0, %{{.+}} : index
// CHECK-NEXT:  %[[KLO:.+]] = arith.maxsi %[[LOK]], %c0 : index
// CHECK-NEXT:  %[[KHI:.+]] = arith.minsi %{{.+}}, %{{.+}} : index
// CHECK:       scf.for %{{.+}} = %[[KLO]] to %[[KHI]] step %c1
// CHECK-COUNT-8: vector.fma
// CHECK-NOT:     arith.select
// CHECK:       } else {
// CHECK:         vector.fma
// CHECK-NEXT:    arith.cmpf oeq
// CHECK-NEXT:    arith.select
// CHECK:     scf.yield
// CHECK:   scf.forall.in_parallel
// CHECK:     tensor.parallel_insert_slice
func.func @causal_gqa(%q: tensor<1x8x256x64xf32>, %k: tensor<1x2x256x64xf32>,
                      %v: tensor<1x2x256x64xf32>) -> tensor<1x8x256x64xf32> {
  %o = attn.attention q(%q : tensor<1x8x256x64xf32>)
      k(%k : tensor<1x2x256x64xf32>) v(%v : tensor<1x2x256x64xf32>)
      causal(top_left) -> tensor<1x8x256x64xf32>
  return %o : tensor<1x8x256x64xf32>
}

// The register tile and vector width come from the target description: on
// AVX2 (16 ymm registers) K is packed in 8 x 8 blocks and the microkernel
// keeps a 6 x 16 block of S (12 ymm accumulators) in registers, the rows
// left over (64 = 10 x 6 + 4) one at a time.
// AVX2-LABEL: func.func @causal_gqa
// AVX2:     arith.remsi %{{.+}}, %c16
// AVX2-COUNT-8: vector.transfer_read {{.*}} vector<8xf32>
// AVX2-COUNT-24: vector.shuffle
// AVX2:     scf.for %{{.+}} = %c0 to %{{.+}} step %c6
// AVX2:       scf.for
// AVX2-COUNT-6: vector.fma {{.*}} : vector<16xf32>
// AVX2-NOT:     vector<32xf32>
// AVX2:     scf.for %{{.+}} = %{{.+}} to %{{.+}} step %c1
// AVX2:       scf.for
// AVX2:         vector.fma {{.*}} : vector<16xf32>
// AVX2-NEXT:    scf.yield
// The softmax in blocks of 8 rows (one per ymm lane): an 8 x 8 scratch tile
// and a transpose-and-reduce tree of three levels.
// AVX2:     tensor.empty() : tensor<8x8xf32>
// AVX2-COUNT-8: vector.transfer_read %{{.+}}[%c{{[0-9]}}, %c0], %{{.+}}, %{{.+}} {in_bounds = [true]} : tensor<8x8xf32>, vector<8xf32>
// AVX2-NEXT: vector.shuffle %{{.+}}, %{{.+}} [0, 1, 2, 3, 8, 9, 10, 11]
// AVX2-NEXT: vector.shuffle %{{.+}}, %{{.+}} [4, 5, 6, 7, 12, 13, 14, 15]
// AVX2:     vector.shuffle %{{.+}}, %{{.+}} [0, 1, 4, 5, 8, 9, 12, 13]
// AVX2-NEXT: vector.shuffle %{{.+}}, %{{.+}} [2, 3, 6, 7, 10, 11, 14, 15]
// AVX2:     vector.shuffle %{{.+}}, %{{.+}} [0, 2, 4, 6, 8, 10, 12, 14]
// AVX2-NEXT: vector.shuffle %{{.+}}, %{{.+}} [1, 3, 5, 7, 9, 11, 13, 15]

// TILES-LABEL: func.func @causal_gqa
// TILES: scf.forall (%{{.+}}, %{{.+}}) in (2, 8)
// TILES: arith.ceildivsi %{{.+}}, %c16

// -----

// Dynamic lengths: one kernel serves every Nq, Nk and kv_len. The readable key
// range comes from run-time values: [max(0, p(q0) - left), min(kv_len, ...)]
// with p(i) = i + kv_len - Nq (bottom-right).

// CHECK-LABEL: func.func @dynamic_window_kvlen
// CHECK-DAG: %[[NQ:.+]] = tensor.dim %{{.+}}, %c2 : tensor<2x4x?x32xf16>
// CHECK-DAG: %[[NK:.+]] = tensor.dim %{{.+}}, %c2 : tensor<2x4x?x32xf16>
// CHECK: scf.forall (%[[B:.+]], %[[G:.+]], %[[QT:.+]]) in (2, 4, %{{.+}})
// CHECK:   %[[LEN:.+]] = tensor.extract %{{.+}}[%[[B]]] : tensor<2xi32>
// CHECK:   arith.index_cast %[[LEN]]
// CHECK:   arith.subi %{{.+}}, %c16
// CHECK:   scf.for
// CHECK:     arith.extf
// CHECK:   arith.truncf
func.func @dynamic_window_kvlen(%q: tensor<2x4x?x32xf16>, %k: tensor<2x4x?x32xf16>,
    %v: tensor<2x4x?x32xf16>, %l: tensor<2xi32>) -> tensor<2x4x?x32xf16> {
  %o = attn.attention q(%q : tensor<2x4x?x32xf16>) k(%k : tensor<2x4x?x32xf16>)
      v(%v : tensor<2x4x?x32xf16>) kv_len(%l : tensor<2xi32>)
      causal(bottom_right) window_left(16) -> tensor<2x4x?x32xf16>
  return %o : tensor<2x4x?x32xf16>
}

// -----

// bnhd layout, lse and instrumentation: each visited key tile reports itself.

// INSTR-LABEL: func.func private @attn_tile_visit(i64, i64, i64, i64, i1)
// INSTR-LABEL: func.func @bnhd_lse
// INSTR: scf.for
// INSTR:   call @attn_tile_visit

// CHECK-LABEL: func.func @bnhd_lse
// CHECK: scf.forall {{.*}} -> (tensor<1x?x4x16xf32>, tensor<1x4x?xf32>)
// CHECK:   tensor.extract_slice %{{.+}}[0, %{{.+}}, %{{.+}}, 0] [1, %{{.+}}, 2, 16]
// CHECK:   math.log
// CHECK:   tensor.parallel_insert_slice {{.*}} into %{{.+}}[0, %{{.+}}, %{{.+}}, 0] [1, %{{.+}}, 2, 16]
// CHECK:   tensor.parallel_insert_slice {{.*}} into %{{.+}}[0, %{{.+}}, %{{.+}}] [1, 2, %{{.+}}]
func.func @bnhd_lse(%q: tensor<1x?x4x16xf32>, %k: tensor<1x?x2x16xf32>,
    %v: tensor<1x?x2x16xf32>) -> (tensor<1x?x4x16xf32>, tensor<1x4x?xf32>) {
  %o, %lse = attn.attention q(%q : tensor<1x?x4x16xf32>)
      k(%k : tensor<1x?x2x16xf32>) v(%v : tensor<1x?x2x16xf32>) layout(bnhd)
      -> tensor<1x?x4x16xf32>, tensor<1x4x?xf32>
  return %o, %lse : tensor<1x?x4x16xf32>, tensor<1x4x?xf32>
}
