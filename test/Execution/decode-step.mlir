// RUN: attn-run %s --print --reps=0 | FileCheck %s
// RUN: attn-run %s --print --reps=0 --form=decode --splits=2 | FileCheck %s
// RUN: attn-run %s --print --reps=0 --form=naive | FileCheck %s

// One decode step with a KV cache: append the new token's K and V at
// position kv_len, then attend with kv_len + 1, bottom-right causal.
// Cache capacity 4, D = 1, scale 1. Before the step the cache holds
// k = [0, 1], v = [10, 20] (kv_len = 2); the new token has k = 2, v = 30 and
// q = 1 (ln 1 = 0 keeps the numbers small). After the append the keys are
// [0, 1, 2] (row 3 is unused cache, masked by kv_len = 3):
//   logits = [0, 1, 2], weights = e^[0,1,2] / (1 + e + e^2)
//   out = (10 + 20 e + 30 e^2) / (1 + e + e^2) = 25.7521...
//   lse = log(1 + e + e^2) = 2.40760596...
// The returned cache shows the new row written at index 2.

// CHECK: result0: f32 [1, 1, 1, 1]
// CHECK-NEXT: {{^}}25.7521
// CHECK: result1: f32 [1, 1, 1]
// CHECK-NEXT: {{^}}2.40761
// CHECK: result2: f32 [1, 1, 4, 1]
// CHECK-NEXT: {{^}}0 1 2 0
// CHECK: result3: f32 [1, 1, 4, 1]
// CHECK-NEXT: {{^}}10 20 30 0
func.func @step() -> (tensor<1x1x1x1xf32>, tensor<1x1x1xf32>,
                      tensor<1x1x4x1xf32>, tensor<1x1x4x1xf32>) {
  %kc = arith.constant dense<[[[[0.0], [1.0], [0.0], [0.0]]]]> : tensor<1x1x4x1xf32>
  %vc = arith.constant dense<[[[[10.0], [20.0], [0.0], [0.0]]]]> : tensor<1x1x4x1xf32>
  %len = arith.constant dense<[2]> : tensor<1xi32>
  %q = arith.constant dense<[[[[1.0]]]]> : tensor<1x1x1x1xf32>
  %kn = arith.constant dense<[[[[2.0]]]]> : tensor<1x1x1x1xf32>
  %vn = arith.constant dense<[[[[30.0]]]]> : tensor<1x1x1x1xf32>
  %k = attn.kv_cache_append cache(%kc : tensor<1x1x4x1xf32>)
      update(%kn : tensor<1x1x1x1xf32>) at(%len : tensor<1xi32>)
      -> tensor<1x1x4x1xf32>
  %v = attn.kv_cache_append cache(%vc : tensor<1x1x4x1xf32>)
      update(%vn : tensor<1x1x1x1xf32>) at(%len : tensor<1xi32>)
      -> tensor<1x1x4x1xf32>
  %one = arith.constant dense<[1]> : tensor<1xi32>
  %len2 = arith.addi %len, %one : tensor<1xi32>
  %o, %lse = attn.attention q(%q : tensor<1x1x1x1xf32>) k(%k : tensor<1x1x4x1xf32>)
      v(%v : tensor<1x1x4x1xf32>) kv_len(%len2 : tensor<1xi32>)
      causal(bottom_right) scale(1.0)
      -> tensor<1x1x1x1xf32>, tensor<1x1x1xf32>
  return %o, %lse, %k, %v : tensor<1x1x1x1xf32>, tensor<1x1x1xf32>,
      tensor<1x1x4x1xf32>, tensor<1x1x4x1xf32>
}
