// Windows as wide as INT64_MAX are valid (test/Dialect/Attn/malformed.mlir)
// and mean "unbounded" (docs/Robustness.md): the result must equal the one
// without a window.
//
// The lowerings treat window bounds of 2^61 and more as unbounded
// (AttentionOp::getEffectiveWindowLeft/Right), so the key-range arithmetic
// p + window_right + 1 cannot wrap.
//
// RUN: attn-run %s --entry=right --form=naive --verify --reps=0 | FileCheck %s
// RUN: attn-run %s --entry=right --form=fused --verify --reps=0 | FileCheck %s
// RUN: attn-run %s --entry=right --form=decode --splits=4 --verify --reps=0 | FileCheck %s
// RUN: attn-run %s --entry=left_bottom_right --form=naive --verify --reps=0 | FileCheck %s
// RUN: attn-run %s --entry=left_bottom_right --form=fused --verify --reps=0 | FileCheck %s
// RUN: attn-run %s --entry=left_bottom_right --form=decode --splits=4 --verify --reps=0 | FileCheck %s
// CHECK: out: {{.*}} [ok
// CHECK: lse: {{.*}} [ok

func.func @right(%q: tensor<1x1x5x2xf32>, %k: tensor<1x1x7x2xf32>,
                 %v: tensor<1x1x7x1xf32>)
    -> (tensor<1x1x5x1xf32>, tensor<1x1x5xf32>) {
  %out, %lse = attn.attention q(%q : tensor<1x1x5x2xf32>)
      k(%k : tensor<1x1x7x2xf32>) v(%v : tensor<1x1x7x1xf32>)
      window_left(9223372036854775807) window_right(9223372036854775807)
      -> tensor<1x1x5x1xf32>, tensor<1x1x5xf32>
  return %out, %lse : tensor<1x1x5x1xf32>, tensor<1x1x5xf32>
}

// Nq = 5 > Nk = 3: p(i) = i - 2 is negative for the first rows, and
// p - INT64_MAX wraps.
func.func @left_bottom_right(%q: tensor<1x1x5x2xf32>, %k: tensor<1x1x3x2xf32>,
                             %v: tensor<1x1x3x1xf32>)
    -> (tensor<1x1x5x1xf32>, tensor<1x1x5xf32>) {
  %out, %lse = attn.attention q(%q : tensor<1x1x5x2xf32>)
      k(%k : tensor<1x1x3x2xf32>) v(%v : tensor<1x1x3x1xf32>)
      causal(bottom_right) window_left(9223372036854775807)
      -> tensor<1x1x5x1xf32>, tensor<1x1x5xf32>
  return %out, %lse : tensor<1x1x5x1xf32>, tensor<1x1x5xf32>
}
