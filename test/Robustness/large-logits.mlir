// Large-magnitude logits (docs/Robustness.md): with the row maximum
// subtracted before exp (docs/Semantics.md), outputs stay finite and exact
// for logits up to the f32 limit, in every form. The inputs are chosen so
// that every logit is exact in f32 and the expected values are exact:
// k = [1,0], [0,1], [1,1], [-1,-1]; v = 1, 2, 3, 4; q = [1,0], [0,1], [1,1]
// (scaled below). Row 0 ties keys 0 and 2 (out 2), row 1 ties keys 1 and 2
// (out 2.5), row 2 reads key 2 alone (out 3); every other weight is exp(-s)
// with s >= 1000, i.e. exactly 0 in f32.
//
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.q.npy f4 1x1x3x2 1,0,0,1,1,1
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.q1000.npy f4 1x1x3x2 1000,0,0,1000,1000,1000
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.k.npy f4 1x1x4x2 1,0,0,1,1,1,-1,-1
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.qtiny.npy f4 1x1x3x2 2e-38,0,0,2e-38,2e-38,2e-38
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.v.npy f4 1x1x4x1 1,2,3,4
// DEFINE: %{in} = --input q=%t.q.npy --input k=%t.k.npy --input v=%t.v.npy
// DEFINE: %{in1000} = --input q=%t.q1000.npy --input k=%t.k.npy --input v=%t.v.npy
//
// scale(1000): logits +-1000, +-2000.
// RUN: attn-run %s --entry=scale1000 --form=naive %{in} --verify --reps=0 --print | FileCheck %s --check-prefix=S1000
// RUN: attn-run %s --entry=scale1000 --form=fused %{in} --verify --reps=0 --print | FileCheck %s --check-prefix=S1000
// RUN: attn-run %s --entry=scale1000 --form=fused --tile-q=1 --tile-k=1 %{in} --verify --reps=0 --print | FileCheck %s --check-prefix=S1000
// RUN: attn-run %s --entry=scale1000 --form=decode --splits=4 --tile-k=1 %{in} --verify --reps=0 --print | FileCheck %s --check-prefix=S1000
// S1000:      out: f32 [1, 1, 3, 1] {{.*}} [ok
// S1000-NEXT: {{^}}2 2.5 3{{$}}
// S1000-NEXT: lse: f32 [1, 1, 3] {{.*}} [ok
// S1000-NEXT: {{^}}1000.69 1000.69 2000{{$}}
func.func @scale1000(%q: tensor<1x1x3x2xf32>, %k: tensor<1x1x4x2xf32>,
                     %v: tensor<1x1x4x1xf32>)
    -> (tensor<1x1x3x1xf32>, tensor<1x1x3xf32>) {
  %out, %lse = attn.attention q(%q : tensor<1x1x3x2xf32>)
      k(%k : tensor<1x1x4x2xf32>) v(%v : tensor<1x1x4x1xf32>) scale(1000.0)
      -> tensor<1x1x3x1xf32>, tensor<1x1x3xf32>
  return %out, %lse : tensor<1x1x3x1xf32>, tensor<1x1x3xf32>
}

// q values ~1e3 with the default scale 1/sqrt(2): logits ~707 apart.
// RUN: attn-run %s --entry=default_scale --form=naive %{in1000} --verify --reps=0 --print | FileCheck %s --check-prefix=Q1000
// RUN: attn-run %s --entry=default_scale --form=fused %{in1000} --verify --reps=0 --print | FileCheck %s --check-prefix=Q1000
// RUN: attn-run %s --entry=default_scale --form=decode --splits=4 %{in1000} --verify --reps=0 --print | FileCheck %s --check-prefix=Q1000
// Q1000:      out: f32 [1, 1, 3, 1] {{.*}} [ok
// Q1000-NEXT: {{^}}2 2.5 3{{$}}
// Q1000-NEXT: lse: f32 [1, 1, 3] {{.*}} [ok
// Q1000-NEXT: {{^}}707.8 707.8 1414.21{{$}}
func.func @default_scale(%q: tensor<1x1x3x2xf32>, %k: tensor<1x1x4x2xf32>,
                         %v: tensor<1x1x4x1xf32>)
    -> (tensor<1x1x3x1xf32>, tensor<1x1x3xf32>) {
  %out, %lse = attn.attention q(%q : tensor<1x1x3x2xf32>)
      k(%k : tensor<1x1x4x2xf32>) v(%v : tensor<1x1x4x1xf32>)
      -> tensor<1x1x3x1xf32>, tensor<1x1x3xf32>
  return %out, %lse : tensor<1x1x3x1xf32>, tensor<1x1x3xf32>
}

// Logits up to 2e38, near the f32 limit (3.4e38): still exact.
// RUN: attn-run %s --entry=near_max --form=naive %{in} --verify --reps=0 --print | FileCheck %s --check-prefix=NEARMAX
// RUN: attn-run %s --entry=near_max --form=fused %{in} --verify --reps=0 --print | FileCheck %s --check-prefix=NEARMAX
// RUN: attn-run %s --entry=near_max --form=decode --splits=4 %{in} --verify --reps=0 --print | FileCheck %s --check-prefix=NEARMAX
// NEARMAX:      out: f32 [1, 1, 3, 1] {{.*}} [ok
// NEARMAX-NEXT: {{^}}2 2.5 3{{$}}
// NEARMAX-NEXT: lse: f32 [1, 1, 3] {{.*}} [ok
// NEARMAX-NEXT: {{^}}1e+38 1e+38 2e+38{{$}}
func.func @near_max(%q: tensor<1x1x3x2xf32>, %k: tensor<1x1x4x2xf32>,
                    %v: tensor<1x1x4x1xf32>)
    -> (tensor<1x1x3x1xf32>, tensor<1x1x3xf32>) {
  %out, %lse = attn.attention q(%q : tensor<1x1x3x2xf32>)
      k(%k : tensor<1x1x4x2xf32>) v(%v : tensor<1x1x4x1xf32>) scale(1.0e38)
      -> tensor<1x1x3x1xf32>, tensor<1x1x3xf32>
  return %out, %lse : tensor<1x1x3x1xf32>, tensor<1x1x3xf32>
}

// A soft cap bounds the same logits to +-30 (tanh of +-1e38 is +-1 exactly).
// RUN: attn-run %s --entry=softcap --form=naive %{in} --verify --reps=0 --print | FileCheck %s --check-prefix=CAP
// RUN: attn-run %s --entry=softcap --form=fused %{in} --verify --reps=0 --print | FileCheck %s --check-prefix=CAP
// RUN: attn-run %s --entry=softcap --form=decode --splits=4 %{in} --verify --reps=0 --print | FileCheck %s --check-prefix=CAP
// CAP:      out: f32 [1, 1, 3, 1] {{.*}} [ok
// CAP-NEXT: {{^}}2 2.5 2{{$}}
// CAP-NEXT: lse: f32 [1, 1, 3] {{.*}} [ok
// CAP-NEXT: {{^}}30.6931 30.6931 31.0986{{$}}
func.func @softcap(%q: tensor<1x1x3x2xf32>, %k: tensor<1x1x4x2xf32>,
                   %v: tensor<1x1x4x1xf32>)
    -> (tensor<1x1x3x1xf32>, tensor<1x1x3xf32>) {
  %out, %lse = attn.attention q(%q : tensor<1x1x3x2xf32>)
      k(%k : tensor<1x1x4x2xf32>) v(%v : tensor<1x1x4x1xf32>) scale(1.0e38)
      softcap(30.0) -> tensor<1x1x3x1xf32>, tensor<1x1x3xf32>
  return %out, %lse : tensor<1x1x3x1xf32>, tensor<1x1x3xf32>
}

// A scale beyond f32's max / log2(e) (2.36e38) on tiny scores: ordinary
// logits (5, 0, 10, -10 and so on), which the forms must not turn into inf or
// NaN when they fold the scale into an exponential of base 2.
// RUN: attn-run %s --entry=huge_scale --form=naive --input q=%t.qtiny.npy --input k=%t.k.npy --input v=%t.v.npy --verify --reps=0 --print | FileCheck %s --check-prefix=HUGESCALE
// RUN: attn-run %s --entry=huge_scale --form=fused --input q=%t.qtiny.npy --input k=%t.k.npy --input v=%t.v.npy --verify --reps=0 --print | FileCheck %s --check-prefix=HUGESCALE
// RUN: attn-run %s --entry=huge_scale --form=decode --splits=4 --input q=%t.qtiny.npy --input k=%t.k.npy --input v=%t.v.npy --verify --reps=0 --print | FileCheck %s --check-prefix=HUGESCALE
// HUGESCALE:      out: f32 [1, 1, 3, 1] {{.*}} [ok
// HUGESCALE:      lse: f32 [1, 1, 3] {{.*}} [ok
func.func @huge_scale(%q: tensor<1x1x3x2xf32>, %k: tensor<1x1x4x2xf32>,
                      %v: tensor<1x1x4x1xf32>)
    -> (tensor<1x1x3x1xf32>, tensor<1x1x3xf32>) {
  %out, %lse = attn.attention q(%q : tensor<1x1x3x2xf32>)
      k(%k : tensor<1x1x4x2xf32>) v(%v : tensor<1x1x4x1xf32>) scale(2.5e38)
      -> tensor<1x1x3x1xf32>, tensor<1x1x3xf32>
  return %out, %lse : tensor<1x1x3x1xf32>, tensor<1x1x3xf32>
}

// Beyond the limit: scale(2e38) makes row 2's logit 4e38, which is inf in
// f32, and inf - inf in the softmax makes that row NaN (rows 0 and 1 keep
// finite logits). The f64 reference has no overflow, so no --verify.
// RUN: attn-run %s --entry=overflow --form=naive %{in} --reps=0 --print | FileCheck %s --check-prefix=OVERFLOW
// RUN: attn-run %s --entry=overflow --form=fused %{in} --reps=0 --print | FileCheck %s --check-prefix=OVERFLOW
// RUN: attn-run %s --entry=overflow --form=decode --splits=4 %{in} --reps=0 --print | FileCheck %s --check-prefix=OVERFLOW
// OVERFLOW:      out: f32 [1, 1, 3, 1]
// OVERFLOW-NEXT: {{^}}2 2.5 {{-?nan}}{{$}}
func.func @overflow(%q: tensor<1x1x3x2xf32>, %k: tensor<1x1x4x2xf32>,
                    %v: tensor<1x1x4x1xf32>) -> tensor<1x1x3x1xf32> {
  %out = attn.attention q(%q : tensor<1x1x3x2xf32>)
      k(%k : tensor<1x1x4x2xf32>) v(%v : tensor<1x1x4x1xf32>) scale(2.0e38)
      -> tensor<1x1x3x1xf32>
  return %out : tensor<1x1x3x1xf32>
}
