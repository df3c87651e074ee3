// A projected self-attention reads its keys from x: attn-run's random kv_len
// lies in [0, rows of x]. (It used to be drawn from [0, 0], because no
// argument names Nk for such a spec: every row was empty, the output all
// zeros, and --verify passed on nothing.)
// RUN: attn-run %s --verify --reps=1 --save-input kv_len=%t.npy | FileCheck %s
// CHECK: result: f32 [4, 16, 64] sum {{.*}} abs-sum {{[1-9]}}
// CHECK-SAME: [ok
func.func @f(%x: tensor<4x16x64xf32>, %wq: tensor<64x64xf32>,
             %wk: tensor<64x32xf32>, %wv: tensor<64x32xf32>,
             %wo: tensor<64x64xf32>, %len: tensor<4xi64>)
    -> tensor<4x16x64xf32> {
  %y = attn.projected_attention x(%x : tensor<4x16x64xf32>)
      wq(%wq : tensor<64x64xf32>) wk(%wk : tensor<64x32xf32>)
      wv(%wv : tensor<64x32xf32>) wo(%wo : tensor<64x64xf32>)
      heads(4, 2) kv_len(%len : tensor<4xi64>) -> tensor<4x16x64xf32>
  return %y : tensor<4x16x64xf32>
}
