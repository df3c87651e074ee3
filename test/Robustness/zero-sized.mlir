// Zero-sized dimensions (docs/Robustness.md): B = 0, Nq = 0 and Nk = 0, with
// static and with dynamic sizes, in every form. B = 0 and Nq = 0 give empty
// outputs; Nk = 0 leaves every row without a key: out = 0 and lse = -inf
// exactly (docs/Semantics.md), never NaN.
//
// RUN: attn-run %s --entry=nq0 --form=naive --verify --reps=0 --print | FileCheck %s --check-prefix=NQ0
// RUN: attn-run %s --entry=nq0 --form=fused --verify --reps=0 --print | FileCheck %s --check-prefix=NQ0
// RUN: attn-run %s --entry=nq0 --form=decode --splits=4 --verify --reps=0 --print | FileCheck %s --check-prefix=NQ0
// NQ0:      out: f32 [2, 1, 0, 4] sum 0 abs-sum 0 | vs reference: {{.*}} [ok
// NQ0-NEXT: lse: f32 [2, 1, 0] sum 0 abs-sum 0 | vs reference: {{.*}} [ok
func.func @nq0(%q: tensor<2x1x0x4xf32>, %k: tensor<2x1x5x4xf32>,
               %v: tensor<2x1x5x4xf32>)
    -> (tensor<2x1x0x4xf32>, tensor<2x1x0xf32>) {
  %out, %lse = attn.attention q(%q : tensor<2x1x0x4xf32>)
      k(%k : tensor<2x1x5x4xf32>) v(%v : tensor<2x1x5x4xf32>)
      causal(bottom_right) -> tensor<2x1x0x4xf32>, tensor<2x1x0xf32>
  return %out, %lse : tensor<2x1x0x4xf32>, tensor<2x1x0xf32>
}

// RUN: attn-run %s --entry=nk0 --form=naive --verify --reps=0 --print | FileCheck %s --check-prefix=NK0
// RUN: attn-run %s --entry=nk0 --form=fused --verify --reps=0 --print | FileCheck %s --check-prefix=NK0
// RUN: attn-run %s --entry=nk0 --form=decode --splits=4 --verify --reps=0 --print | FileCheck %s --check-prefix=NK0
// RUN: attn-run %s --entry=nk0 --form=fused --tile-q=1 --tile-k=1 --verify --reps=0 --print | FileCheck %s --check-prefix=NK0
// NK0:      out: f32 [1, 2, 2, 3] sum 0 abs-sum 0 | vs reference: {{.*}} [ok
// NK0-NEXT: {{^}}0 0 0 0 0 0 0 0{{$}}
// NK0-NEXT: {{^}}0 0 0 0{{$}}
// NK0-NEXT: lse: f32 [1, 2, 2] sum 0 abs-sum 0 | vs reference: {{.*}} [ok
// NK0-NEXT: {{^}}-inf -inf -inf -inf{{$}}
func.func @nk0(%q: tensor<1x2x2x4xf32>, %k: tensor<1x1x0x4xf32>,
               %v: tensor<1x1x0x3xf32>, %kv_len: tensor<1xi32>)
    -> (tensor<1x2x2x3xf32>, tensor<1x2x2xf32>) {
  %out, %lse = attn.attention q(%q : tensor<1x2x2x4xf32>)
      k(%k : tensor<1x1x0x4xf32>) v(%v : tensor<1x1x0x3xf32>)
      kv_len(%kv_len : tensor<1xi32>) causal(bottom_right)
      -> tensor<1x2x2x3xf32>, tensor<1x2x2xf32>
  return %out, %lse : tensor<1x2x2x3xf32>, tensor<1x2x2xf32>
}

// RUN: attn-run %s --entry=b0 --form=naive --verify --reps=0 | FileCheck %s --check-prefix=B0
// RUN: attn-run %s --entry=b0 --form=fused --verify --reps=0 | FileCheck %s --check-prefix=B0
// RUN: attn-run %s --entry=b0 --form=decode --splits=4 --verify --reps=0 | FileCheck %s --check-prefix=B0
// B0: out: f16 [0, 3, 2, 4] sum 0 abs-sum 0 | vs reference: {{.*}} [ok
func.func @b0(%q: tensor<0x3x2x4xf16>, %k: tensor<0x3x2x4xf16>,
              %v: tensor<0x3x2x4xf16>, %kv_len: tensor<0xi64>,
              %mask: tensor<0x1x3x3xi1>) -> tensor<0x3x2x4xf16> {
  %out = attn.attention q(%q : tensor<0x3x2x4xf16>) k(%k : tensor<0x3x2x4xf16>)
      v(%v : tensor<0x3x2x4xf16>) layout(bnhd) kv_len(%kv_len : tensor<0xi64>)
      mask(%mask : tensor<0x1x3x3xi1>) -> tensor<0x3x2x4xf16>
  return %out : tensor<0x3x2x4xf16>
}

// The same with every size dynamic, given at run time.
// RUN: attn-run %s --entry=dynamic --size B=1,Hq=2,Hkv=1,Nq=0,Nk=3,Dqk=4,Dv=4 --form=naive --verify --reps=0 | FileCheck %s --check-prefix=DYN-NQ0
// RUN: attn-run %s --entry=dynamic --size B=1,Hq=2,Hkv=1,Nq=0,Nk=3,Dqk=4,Dv=4 --form=fused --verify --reps=0 | FileCheck %s --check-prefix=DYN-NQ0
// RUN: attn-run %s --entry=dynamic --size B=1,Hq=2,Hkv=1,Nq=0,Nk=3,Dqk=4,Dv=4 --form=decode --splits=4 --verify --reps=0 | FileCheck %s --check-prefix=DYN-NQ0
// DYN-NQ0:      out: f32 [1, 2, 0, 4] sum 0 {{.*}} [ok
// DYN-NQ0-NEXT: lse: f32 [1, 2, 0] sum 0 {{.*}} [ok
// RUN: attn-run %s --entry=dynamic --size B=1,Hq=2,Hkv=1,Nq=3,Nk=0,Dqk=4,Dv=4 --form=naive --verify --reps=0 --print | FileCheck %s --check-prefix=DYN-NK0
// RUN: attn-run %s --entry=dynamic --size B=1,Hq=2,Hkv=1,Nq=3,Nk=0,Dqk=4,Dv=4 --form=fused --verify --reps=0 --print | FileCheck %s --check-prefix=DYN-NK0
// RUN: attn-run %s --entry=dynamic --size B=1,Hq=2,Hkv=1,Nq=3,Nk=0,Dqk=4,Dv=4 --form=decode --splits=4 --verify --reps=0 --print | FileCheck %s --check-prefix=DYN-NK0
// DYN-NK0:      out: f32 [1, 2, 3, 4] sum 0 abs-sum 0 {{.*}} [ok
// DYN-NK0-NEXT: {{^}}0 0 0 0 0 0 0 0{{$}}
// DYN-NK0-NEXT: {{^}}0 0 0 0 0 0 0 0{{$}}
// DYN-NK0-NEXT: {{^}}0 0 0 0 0 0 0 0{{$}}
// DYN-NK0-NEXT: lse: f32 [1, 2, 3] sum 0 abs-sum 0 {{.*}} [ok
// DYN-NK0-NEXT: {{^}}-inf -inf -inf -inf -inf -inf{{$}}
// RUN: attn-run %s --entry=dynamic --size B=0,Hq=2,Hkv=1,Nq=3,Nk=5,Dqk=4,Dv=4 --form=naive --verify --reps=0 | FileCheck %s --check-prefix=DYN-B0
// RUN: attn-run %s --entry=dynamic --size B=0,Hq=2,Hkv=1,Nq=3,Nk=5,Dqk=4,Dv=4 --form=fused --verify --reps=0 | FileCheck %s --check-prefix=DYN-B0
// RUN: attn-run %s --entry=dynamic --size B=0,Hq=2,Hkv=1,Nq=3,Nk=5,Dqk=4,Dv=4 --form=decode --splits=4 --verify --reps=0 | FileCheck %s --check-prefix=DYN-B0
// DYN-B0:      out: f32 [0, 2, 3, 4] sum 0 {{.*}} [ok
// DYN-B0-NEXT: lse: f32 [0, 2, 3] sum 0 {{.*}} [ok
func.func @dynamic(%q: tensor<?x?x?x?xf32>, %k: tensor<?x?x?x?xf32>,
                   %v: tensor<?x?x?x?xf32>, %kv_len: tensor<?xi32>)
    -> (tensor<?x?x?x?xf32>, tensor<?x?x?xf32>) {
  %out, %lse = attn.attention q(%q : tensor<?x?x?x?xf32>)
      k(%k : tensor<?x?x?x?xf32>) v(%v : tensor<?x?x?x?xf32>)
      kv_len(%kv_len : tensor<?xi32>) causal(top_left) window_left(1)
      -> tensor<?x?x?x?xf32>, tensor<?x?x?xf32>
  return %out, %lse : tensor<?x?x?x?xf32>, tensor<?x?x?xf32>
}
