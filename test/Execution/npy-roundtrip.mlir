// .npy round trip: one run writes its outputs with --output, a second run
// reads them back as inputs (out as v, lse as a bias) and is checked both by
// hand and against the reference (--verify).
//
// RUN: attn-run %s --entry=produce --reps=1 --output out=%t.out.npy --output lse=%t.lse.npy | FileCheck %s --check-prefix=PRODUCE
// RUN: %python %S/Inputs/write_npy.py %t.q.npy f4 1x1x1x2 zeros
// RUN: %python %S/Inputs/write_npy.py %t.k.npy f4 1x1x3x2 zeros
// RUN: attn-run %s --entry=consume --reps=1 --print --verify --input q=%t.q.npy --input k=%t.k.npy --input v=%t.out.npy --input bias=%t.lse.npy | FileCheck %s --check-prefix=CONSUME
// Outputs can also be named by number.
// RUN: attn-run %s --entry=produce --reps=1 --output 0=%t.out0.npy --output 1=%t.lse1.npy
// RUN: attn-run %s --entry=consume --reps=1 --print --input q=%t.q.npy --input k=%t.k.npy --input v=%t.out0.npy --input bias=%t.lse1.npy | FileCheck %s --check-prefix=CONSUME

// produce: causal top-left, q = 0, v = [1, 10], [2, 20], [4, 40]:
//   out = [1, 10], [1.5, 15], [7/3, 70/3]; lse = log 1, log 2, log 3
// PRODUCE: out: f32 [1, 1, 3, 2]
// PRODUCE: lse: f32 [1, 1, 3]
func.func @produce() -> (tensor<1x1x3x2xf32>, tensor<1x1x3xf32>) {
  %q = arith.constant dense<0.0> : tensor<1x1x3x1xf32>
  %k = arith.constant dense<0.0> : tensor<1x1x3x1xf32>
  %v = arith.constant dense<[[[[1.0, 10.0], [2.0, 20.0], [4.0, 40.0]]]]> : tensor<1x1x3x2xf32>
  %out, %lse = attn.attention q(%q : tensor<1x1x3x1xf32>) k(%k : tensor<1x1x3x1xf32>)
      v(%v : tensor<1x1x3x2xf32>) causal(top_left)
      -> tensor<1x1x3x2xf32>, tensor<1x1x3xf32>
  return %out, %lse : tensor<1x1x3x2xf32>, tensor<1x1x3xf32>
}

// consume: one query (q = 0, k = 0), v = produce's out, bias = produce's lse
// read as a [Hq, Nq, Nk] = [1, 1, 3] bias, i.e. logits log 1, log 2, log 3:
// weights 1/6, 2/6, 3/6.
//   out = (1 [1, 10] + 2 [1.5, 15] + 3 [7/3, 70/3]) / 6 = [11/6, 110/6]
//       = [1.83333, 18.3333]
//   lse = log(1 + 2 + 3) = log 6 = 1.79176
// CONSUME:      out: f32 [1, 1, 1, 2] {{.*}}
// CONSUME-NEXT: {{^}}1.83333 18.3333{{$}}
// CONSUME-NEXT: lse: f32 [1, 1, 1]
// CONSUME-NEXT: {{^}}1.79176{{$}}
func.func @consume(%q: tensor<1x1x1x2xf32>, %k: tensor<1x1x3x2xf32>,
                   %v: tensor<1x1x3x2xf32>, %bias: tensor<1x1x3xf32>)
    -> (tensor<1x1x1x2xf32>, tensor<1x1x1xf32>) {
  %out, %lse = attn.attention q(%q : tensor<1x1x1x2xf32>) k(%k : tensor<1x1x3x2xf32>)
      v(%v : tensor<1x1x3x2xf32>) bias(%bias : tensor<1x1x3xf32>)
      -> tensor<1x1x1x2xf32>, tensor<1x1x1xf32>
  return %out, %lse : tensor<1x1x1x2xf32>, tensor<1x1x1xf32>
}
