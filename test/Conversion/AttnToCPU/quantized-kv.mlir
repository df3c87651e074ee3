// RUN: attn-opt %s --convert-attn-to-split-kv="splits=2 target-cpu=skylake-avx512" --canonicalize --cse --split-input-file | FileCheck %s
// RUN: attn-opt %s --convert-attn-to-fused-loops="tile-q=64 tile-k=64 target-cpu=skylake-avx512" --canonicalize --cse --split-input-file | FileCheck %s --check-prefix=PREFILL

// Decode over a paged int8 cache with per-token scales: the row-wise kernels
// read the raw rows in place and decode them in registers (no f32 copy of a
// tile); a key's scale multiplies its finished dot product and its weight.
// While key j is computed, the K and V rows of key j + 16 (the next page,
// capped at the sequence's last key) are asked for. Q K^T takes four keys a
// step (rows decoded in registers bound it by instructions, and each query
// chunk then serves four keys), then the rest one by one.

// CHECK-LABEL: func.func @decode_i8
// CHECK: scf.forall
// Q K^T, keys j .. j + 3: each key's page and scale and the next page's
// rows, then the raw rows.
// CHECK: scf.for
// CHECK: scf.for %[[J:.+]] = %c0 to %{{.+}} step %c4
// CHECK: tensor.extract %arg5
// CHECK-NEXT: %[[PAGE:.+]] = arith.index_cast
// CHECK: %[[KS:.+]] = tensor.extract %arg3[%[[PAGE]], %{{.+}}, %{{.+}}] : tensor<32x2x16xf32>
// CHECK: %[[LAST:.+]] = arith.subi %{{.+}}, %c1
// CHECK: %[[AHEAD:.+]] = arith.addi %{{.+}}, %c16
// CHECK: arith.minsi %[[AHEAD]], %[[LAST]]
// CHECK: %[[KB:.+]] = bufferization.to_buffer %arg1 read_only
// CHECK-NEXT: memref.prefetch %[[KB]]
// CHECK: %[[VB:.+]] = bufferization.to_buffer %arg2 read_only
// CHECK-NEXT: memref.prefetch %[[VB]]
// CHECK: %[[KS1:.+]] = tensor.extract %arg3
// CHECK: %[[KS2:.+]] = tensor.extract %arg3
// CHECK: %[[KS3:.+]] = tensor.extract %arg3
// CHECK: %[[RAW:.+]] = vector.transfer_read %arg1[%[[PAGE]], {{.+}} : tensor<32x2x16x64xi8>, vector<16xi8>
// CHECK-NEXT: arith.sitofp %[[RAW]] : vector<16xi8> to vector<16xf32>
// The four query heads' sums of the four keys in one shuffle tree; each
// head's four logits times the keys' scales, written as one vector.
// CHECK: vector.shuffle
// CHECK: %[[ROW:.+]] = vector.from_elements %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : vector<4xf32>
// CHECK-NEXT: %[[SCALES:.+]] = vector.from_elements %[[KS]], %[[KS1]], %[[KS2]], %[[KS3]] : vector<4xf32>
// CHECK-NEXT: %[[L:.+]] = arith.mulf %[[ROW]], %[[SCALES]] : vector<4xf32>
// CHECK-NEXT: vector.transfer_write %[[L]], %{{.+}}[%c0, %c0, %[[J]]] {in_bounds = [true]}
// The keys left, one a step: each sum times its key's scale.
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %c1
// CHECK: %[[KSR:.+]] = tensor.extract %arg3
// CHECK: vector.shuffle
// CHECK: %[[SUM:.+]] = vector.extract %{{.+}}[0] : f32 from vector<16xf32>
// CHECK: arith.mulf %[[SUM]], %[[KSR]] : f32
// P V: once per tile, each weight times its key's v scale (looked up once
// per key; a weight of 0 stays 0); then the passes over Dv broadcast the
// scaled weights against the raw rows.
// CHECK: %[[VS:.+]] = tensor.extract %arg4[{{.+}}] : tensor<32x2x16xf32>
// CHECK-NEXT: scf.for
// CHECK-NEXT: %[[W:.+]] = tensor.extract
// CHECK-NEXT: %[[ZERO:.+]] = arith.cmpf oeq, %[[W]]
// CHECK-NEXT: %[[WS:.+]] = arith.mulf %[[W]], %[[VS]] : f32
// CHECK-NEXT: %[[WQ:.+]] = arith.select %[[ZERO]], %[[W]], %[[WS]] : f32
// CHECK-NEXT: tensor.insert %[[WQ]] into
// CHECK: arith.sitofp %{{.+}} : vector<16xi8> to vector<16xf32>
// CHECK-NOT: tensor.extract %arg4
// CHECK: %[[PW:.+]] = tensor.extract
// CHECK-NEXT: %[[SPLAT:.+]] = vector.broadcast %[[PW]]
// CHECK-NEXT: vector.fma %[[SPLAT]]
func.func @decode_i8(%q: tensor<2x8x1x64xf32>, %k: tensor<32x2x16x64xi8>, %v: tensor<32x2x16x64xi8>, %ks: tensor<32x2x16xf32>, %vs: tensor<32x2x16xf32>, %pt: tensor<2x16xi32>, %len: tensor<2xi32>) -> tensor<2x8x1x64xf32> {
  %o = attn.attention q(%q : tensor<2x8x1x64xf32>) k(%k : tensor<32x2x16x64xi8>) v(%v : tensor<32x2x16x64xi8>) k_scale(%ks : tensor<32x2x16xf32>) v_scale(%vs : tensor<32x2x16xf32>) page_table(%pt : tensor<2x16xi32>) kv_len(%len : tensor<2xi32>) causal(bottom_right) -> tensor<2x8x1x64xf32>
  return %o : tensor<2x8x1x64xf32>
}

// -----

// fp8 e4m3 is decoded through f16 bit patterns as 2^-8 times its value; the
// 2^8 goes on the key's scale, once per key.

// CHECK-LABEL: func.func @decode_e4m3
// CHECK: %[[KS:.+]] = tensor.extract %arg3
// CHECK-NEXT: %[[KS8:.+]] = arith.mulf %[[KS]], %cst{{.*}} : f32
// CHECK: arith.bitcast %{{.+}} : vector<16xi16> to vector<16xf16>
// CHECK: %[[SC:.+]] = vector.from_elements %[[KS8]], %[[KS8]], %[[KS8]], %[[KS8]] : vector<4xf32>
// CHECK-NEXT: arith.mulf %{{.+}}, %[[SC]] : vector<4xf32>
func.func @decode_e4m3(%q: tensor<2x8x1x64xf32>, %k: tensor<2x2x64x64xf8E4M3FN>, %v: tensor<2x2x64x64xf8E4M3FN>, %ks: tensor<2x2xf32>, %vs: tensor<2x2xf32>) -> tensor<2x8x1x64xf32> {
  %o = attn.attention q(%q : tensor<2x8x1x64xf32>) k(%k : tensor<2x2x64x64xf8E4M3FN>) v(%v : tensor<2x2x64x64xf8E4M3FN>) k_scale(%ks : tensor<2x2xf32>) v_scale(%vs : tensor<2x2xf32>) -> tensor<2x8x1x64xf32>
  return %o : tensor<2x8x1x64xf32>
}

// -----

// Prefill tiles (64 query rows) take the packed kernels, which read an f32
// tile of the key tile's rows times their scales, decoded once per key tile.

// PREFILL-LABEL: func.func @prefill_i8
// PREFILL: scf.if
// PREFILL: %[[S:.+]] = tensor.extract %arg3
// PREFILL: %[[RAW:.+]] = vector.transfer_read %arg1{{.+}} : tensor<1x2x256x64xi8>, vector<16xi8>
// PREFILL-NEXT: %[[F:.+]] = arith.sitofp %[[RAW]]
// PREFILL-NEXT: %[[Y:.+]] = arith.mulf %[[F]], %{{.+}} : vector<16xf32>
// PREFILL-NEXT: vector.transfer_write %[[Y]]
func.func @prefill_i8(%q: tensor<1x8x256x64xf32>, %k: tensor<1x2x256x64xi8>, %v: tensor<1x2x256x64xi8>, %ks: tensor<1x2x256xf32>, %vs: tensor<1x2x256xf32>) -> tensor<1x8x256x64xf32> {
  %o = attn.attention q(%q : tensor<1x8x256x64xf32>) k(%k : tensor<1x2x256x64xi8>) v(%v : tensor<1x2x256x64xi8>) k_scale(%ks : tensor<1x2x256xf32>) v_scale(%vs : tensor<1x2x256xf32>) causal(top_left) -> tensor<1x8x256x64xf32>
  return %o : tensor<1x8x256x64xf32>
}

// -----

// P V over int8 rows of 128: two passes of 64 columns (64 bytes of a row
// each), each over the whole key tile. Quantized rows take no key chunks
// (bf16 rows of 128 would, in chunks of 16 keys; AVX2's f32 rows do:
// rowwise-prefetch.mlir): decoding bounds them, not reading a row twice. An
// int8 row of 128 would go in chunks of 32 keys.

// CHECK-LABEL: func.func @decode_i8_d128
// CHECK-NOT: step %c32
// CHECK: scf.for %{{.+}} = %c0 to %c128 step %c64
// CHECK-NOT: step %c32
// CHECK: return
func.func @decode_i8_d128(%q: tensor<1x8x1x128xf32>, %k: tensor<1x2x256x128xi8>, %v: tensor<1x2x256x128xi8>, %ks: tensor<1x2x256xf32>, %vs: tensor<1x2x256xf32>) -> tensor<1x8x1x128xf32> {
  %o = attn.attention q(%q : tensor<1x8x1x128xf32>) k(%k : tensor<1x2x256x128xi8>) v(%v : tensor<1x2x256x128xi8>) k_scale(%ks : tensor<1x2x256xf32>) v_scale(%vs : tensor<1x2x256xf32>) -> tensor<1x8x1x128xf32>
  return %o : tensor<1x8x1x128xf32>
}
