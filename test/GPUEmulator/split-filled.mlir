// The split-KV grid's chosen count launches only chunks that get key tiles.
// The emulated device answers no multiprocessor count, so the host assumes
// 132: 264 blocks wanted over B * Hkv = 48 (batch, K/V head) pairs is 6
// splits, but 512 keys are 8 key tiles of 64, and 6 chunks of
// ceil(8 / 6) = 2 tiles fill only 4: the split kernel runs 4 x 48 = 192
// blocks (with 6, 288), then the merge 64 x 48 = 3072. The result is checked
// against the f64 reference (kv_len random per batch entry).
// RUN: attn-run %s --device=gpu-emulate --verify --reps=0 | FileCheck %s
// A fixed count stays as given: 6 x 48 = 288 split blocks.
// RUN: attn-run %s --device=gpu-emulate --gpu-splits=6 --verify --reps=0 | FileCheck %s --check-prefix=FIXED
// CHECK: emulate: {{.*}} (2 launches, 3264 blocks,
// CHECK: out: f32 [8, 6, 1, 32] {{.*}} [ok
// CHECK: lse: f32 [8, 6, 1] {{.*}} [ok
// FIXED: emulate: {{.*}} (2 launches, 3360 blocks,
// FIXED: out: f32 [8, 6, 1, 32] {{.*}} [ok
func.func @f(%q: tensor<8x6x1x32xf32>, %k: tensor<8x6x512x32xf32>,
             %v: tensor<8x6x512x32xf32>, %l: tensor<8xi32>)
    -> (tensor<8x6x1x32xf32>, tensor<8x6x1xf32>) {
  %o, %lse = attn.attention q(%q : tensor<8x6x1x32xf32>)
      k(%k : tensor<8x6x512x32xf32>) v(%v : tensor<8x6x512x32xf32>)
      kv_len(%l : tensor<8xi32>) causal(bottom_right)
      -> tensor<8x6x1x32xf32>, tensor<8x6x1xf32>
  return %o, %lse : tensor<8x6x1x32xf32>, tensor<8x6x1xf32>
}
