// Key padding (kv_start, key_mask), executed and checked against numbers computed by
// hand. q = 0, so a row's output is the mean of the v rows it may read and its
// lse is log(number of allowed keys). Every batch entry has v = [1], [2], [4].
//
// RUN: attn-run %s --entry=kv_start_only --print --reps=1 | FileCheck %s --check-prefix=START
// RUN: attn-run %s --entry=kv_start_only --form=naive --print --reps=1 | FileCheck %s --check-prefix=START
// RUN: attn-run %s --entry=kv_start_only --form=decode --splits=2 --print --reps=1 | FileCheck %s --check-prefix=START
// RUN: attn-run %s --entry=left_padded --print --reps=1 | FileCheck %s --check-prefix=LEFT
// RUN: attn-run %s --entry=left_padded --form=naive --print --reps=1 | FileCheck %s --check-prefix=LEFT
// RUN: attn-run %s --entry=key_mask --print --reps=1 | FileCheck %s --check-prefix=KEYS
// RUN: attn-run %s --entry=key_mask --form=naive --print --reps=1 | FileCheck %s --check-prefix=KEYS
// RUN: attn-run %s --entry=key_mask --form=decode --splits=2 --print --reps=1 | FileCheck %s --check-prefix=KEYS

// kv_start = [0, 1, 2, 3], no causal mask, Nq = 2, Nk = 3:
//   batch 0: keys 0..2 -> out 7/3 twice  lse log 3 = 1.09861 twice
//   batch 1: keys 1, 2 -> out 3 twice    lse log 2 = 0.693147 twice
//   batch 2: key 2     -> out 4 twice    lse 0 twice
//   batch 3: no key    -> out 0 twice    lse -inf twice
// START:      out: f32 [4, 1, 2, 1]
// START-NEXT: {{^}}2.33333 2.33333 3 3 4 4 0 0{{$}}
// START-NEXT: lse: f32 [4, 1, 2]
// START-NEXT: {{^}}1.09861 1.09861 0.693147 0.693147 0 0 -inf -inf{{$}}
func.func @kv_start_only() -> (tensor<4x1x2x1xf32>, tensor<4x1x2xf32>) {
  %q = arith.constant dense<0.0> : tensor<4x1x2x1xf32>
  %k = arith.constant dense<1.0> : tensor<4x1x3x1xf32>
  %v = arith.constant dense<[[[[1.0], [2.0], [4.0]]], [[[1.0], [2.0], [4.0]]], [[[1.0], [2.0], [4.0]]], [[[1.0], [2.0], [4.0]]]]> : tensor<4x1x3x1xf32>
  %first = arith.constant dense<[0, 1, 2, 3]> : tensor<4xi32>
  %out, %lse = attn.attention q(%q : tensor<4x1x2x1xf32>) k(%k : tensor<4x1x3x1xf32>)
      v(%v : tensor<4x1x3x1xf32>) kv_start(%first : tensor<4xi32>)
      -> tensor<4x1x2x1xf32>, tensor<4x1x2xf32>
  return %out, %lse : tensor<4x1x2x1xf32>, tensor<4x1x2xf32>
}

// Left-padded prompts with causal top-left, kv_start = [-1, 1] (i64) and
// kv_len = [2, 3], Nq = Nk = 3; positions stay p(i) = i:
//   batch 0 (keys 0, 1): row 0 key 0 -> 1 (lse 0); rows 1, 2 keys 0, 1 ->
//     1.5 (log 2)
//   batch 1 (keys 1, 2): row 0 reads nothing (a padded query) -> 0, -inf;
//     row 1 key 1 -> 2 (0); row 2 keys 1, 2 -> 3 (log 2)
// LEFT:      out: f32 [2, 1, 3, 1]
// LEFT-NEXT: {{^}}1 1.5 1.5 0 2 3{{$}}
// LEFT-NEXT: lse: f32 [2, 1, 3]
// LEFT-NEXT: {{^}}0 0.693147 0.693147 -inf 0 0.693147{{$}}
func.func @left_padded() -> (tensor<2x1x3x1xf32>, tensor<2x1x3xf32>) {
  %q = arith.constant dense<0.0> : tensor<2x1x3x1xf32>
  %k = arith.constant dense<1.0> : tensor<2x1x3x1xf32>
  %v = arith.constant dense<[[[[1.0], [2.0], [4.0]]], [[[1.0], [2.0], [4.0]]]]> : tensor<2x1x3x1xf32>
  %first = arith.constant dense<[-1, 1]> : tensor<2xi64>
  %len = arith.constant dense<[2, 3]> : tensor<2xi32>
  %out, %lse = attn.attention q(%q : tensor<2x1x3x1xf32>) k(%k : tensor<2x1x3x1xf32>)
      v(%v : tensor<2x1x3x1xf32>) kv_len(%len : tensor<2xi32>)
      kv_start(%first : tensor<2xi64>) causal(top_left)
      -> tensor<2x1x3x1xf32>, tensor<2x1x3xf32>
  return %out, %lse : tensor<2x1x3x1xf32>, tensor<2x1x3xf32>
}

// key_mask = [[1, 0, 1], [0, 0, 1], [0, 0, 0]], no causal mask, Nq = 2:
//   batch 0: keys 0, 2 -> out 2.5 twice  lse log 2 twice
//   batch 1: key 2     -> out 4 twice    lse 0 twice
//   batch 2: no key    -> out 0 twice    lse -inf twice
// KEYS:      out: f32 [3, 1, 2, 1]
// KEYS-NEXT: {{^}}2.5 2.5 4 4 0 0{{$}}
// KEYS-NEXT: lse: f32 [3, 1, 2]
// KEYS-NEXT: {{^}}0.693147 0.693147 0 0 -inf -inf{{$}}
func.func @key_mask() -> (tensor<3x1x2x1xf32>, tensor<3x1x2xf32>) {
  %q = arith.constant dense<0.0> : tensor<3x1x2x1xf32>
  %k = arith.constant dense<1.0> : tensor<3x1x3x1xf32>
  %v = arith.constant dense<[[[[1.0], [2.0], [4.0]]], [[[1.0], [2.0], [4.0]]], [[[1.0], [2.0], [4.0]]]]> : tensor<3x1x3x1xf32>
  %m = arith.constant dense<[[true, false, true], [false, false, true], [false, false, false]]> : tensor<3x3xi1>
  %out, %lse = attn.attention q(%q : tensor<3x1x2x1xf32>) k(%k : tensor<3x1x3x1xf32>)
      v(%v : tensor<3x1x3x1xf32>) key_mask(%m : tensor<3x3xi1>)
      -> tensor<3x1x2x1xf32>, tensor<3x1x2xf32>
  return %out, %lse : tensor<3x1x2x1xf32>, tensor<3x1x2xf32>
}
