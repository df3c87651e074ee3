// The fused form's tile sizes (attn::chooseTileSizes), recorded in
// attn.lowering: 128 keys; square tiles with causal or a window; 64 x 64
// when a window bounds the keys of each query to a band of at most 1024
// (the masked pairs a query tile computes grow with the tile), 128 x 128
// for wider or one-sided bands. A named CPU, so that no host cache size or
// core count changes the choice.
// RUN: attn-opt %s --convert-attn-to-fused-loops="target-cpu=znver4" --split-input-file | FileCheck %s

// Causal with a 512-key window: a band of 513 keys.
// CHECK-LABEL: func.func @causal_window_512(
// CHECK-SAME: tile_k = 64 : i64, tile_q = 64 : i64
func.func @causal_window_512(%q: tensor<1x2x?x64xf32>, %k: tensor<1x2x?x64xf32>,
                             %v: tensor<1x2x?x64xf32>) -> tensor<1x2x?x64xf32> {
  %o = attn.attention q(%q : tensor<1x2x?x64xf32>) k(%k : tensor<1x2x?x64xf32>)
      v(%v : tensor<1x2x?x64xf32>) causal(top_left) window_left(512)
      -> tensor<1x2x?x64xf32>
  return %o : tensor<1x2x?x64xf32>
}

// -----

// Windows on both sides, no causal: a band of 201 keys.
// CHECK-LABEL: func.func @two_sided_window(
// CHECK-SAME: tile_k = 64 : i64, tile_q = 64 : i64
func.func @two_sided_window(%q: tensor<1x2x?x64xf32>, %k: tensor<1x2x?x64xf32>,
                            %v: tensor<1x2x?x64xf32>) -> tensor<1x2x?x64xf32> {
  %o = attn.attention q(%q : tensor<1x2x?x64xf32>) k(%k : tensor<1x2x?x64xf32>)
      v(%v : tensor<1x2x?x64xf32>) window_left(100) window_right(100)
      -> tensor<1x2x?x64xf32>
  return %o : tensor<1x2x?x64xf32>
}

// -----

// A band of 2049 keys: 128 x 128.
// CHECK-LABEL: func.func @causal_window_2048(
// CHECK-SAME: tile_k = 128 : i64, tile_q = 128 : i64
func.func @causal_window_2048(%q: tensor<1x2x?x64xf32>, %k: tensor<1x2x?x64xf32>,
                              %v: tensor<1x2x?x64xf32>) -> tensor<1x2x?x64xf32> {
  %o = attn.attention q(%q : tensor<1x2x?x64xf32>) k(%k : tensor<1x2x?x64xf32>)
      v(%v : tensor<1x2x?x64xf32>) causal(top_left) window_left(2048)
      -> tensor<1x2x?x64xf32>
  return %o : tensor<1x2x?x64xf32>
}

// -----

// A window on the left only, no causal: the band is unbounded on the right.
// CHECK-LABEL: func.func @left_window_only(
// CHECK-SAME: tile_k = 128 : i64, tile_q = 128 : i64
func.func @left_window_only(%q: tensor<1x2x?x64xf32>, %k: tensor<1x2x?x64xf32>,
                            %v: tensor<1x2x?x64xf32>) -> tensor<1x2x?x64xf32> {
  %o = attn.attention q(%q : tensor<1x2x?x64xf32>) k(%k : tensor<1x2x?x64xf32>)
      v(%v : tensor<1x2x?x64xf32>) window_left(100) -> tensor<1x2x?x64xf32>
  return %o : tensor<1x2x?x64xf32>
}

// -----

// Causal without a window, 4 query heads per K/V head: 128 x 128.
// CHECK-LABEL: func.func @causal_gqa(
// CHECK-SAME: tile_k = 128 : i64, tile_q = 128 : i64
func.func @causal_gqa(%q: tensor<1x8x?x64xf32>, %k: tensor<1x2x?x64xf32>,
                      %v: tensor<1x2x?x64xf32>) -> tensor<1x8x?x64xf32> {
  %o = attn.attention q(%q : tensor<1x8x?x64xf32>) k(%k : tensor<1x2x?x64xf32>)
      v(%v : tensor<1x2x?x64xf32>) causal(top_left) -> tensor<1x8x?x64xf32>
  return %o : tensor<1x8x?x64xf32>
}

// -----

// No mask: 256 score rows per tile (R = 1), 128 keys.
// CHECK-LABEL: func.func @unmasked(
// CHECK-SAME: tile_k = 128 : i64, tile_q = 256 : i64
func.func @unmasked(%q: tensor<1x2x?x64xf32>, %k: tensor<1x2x?x64xf32>,
                    %v: tensor<1x2x?x64xf32>) -> tensor<1x2x?x64xf32> {
  %o = attn.attention q(%q : tensor<1x2x?x64xf32>) k(%k : tensor<1x2x?x64xf32>)
      v(%v : tensor<1x2x?x64xf32>) -> tensor<1x2x?x64xf32>
  return %o : tensor<1x2x?x64xf32>
}
