// attn-run's error paths for dynamic sizes and shapes given on the command
// line; each must fail with a non-zero exit status and a clear message.
//
// The happy path: every dynamic size given.
// RUN: attn-run %s --size Nq=2,Hkv=1,Nk=3 --verify --reps=1 | FileCheck %s --check-prefix=OK
// OK: out: f32 [1, 1, 2, 2] {{.*}} [ok
//
// RUN: not attn-run %s 2>&1 | FileCheck %s --check-prefix=NOSIZE
// NOSIZE: attn-run: error: size Nq is dynamic in the spec; give it with --size Nq=N
//
// RUN: not attn-run %s --size Nq=2 2>&1 | FileCheck %s --check-prefix=NOSIZE2
// NOSIZE2: attn-run: error: size Hkv is dynamic in the spec; give it with --size Hkv=N
//
// Hq = 1 (static) is not a multiple of Hkv = 2:
// RUN: not attn-run %s --size Nq=2,Hkv=2,Nk=3 2>&1 | FileCheck %s --check-prefix=HEADS
// HEADS: query heads must be a multiple of K/V heads: Hq = 1 is not divisible by Hkv = 2
// HEADS: attn-run: error: the given sizes are inconsistent with the spec
//
// k and v disagree on Nk:
// RUN: not attn-run %s --size Nq=2 --shape k=1x1x3x2 --shape v=1x1x4x2 2>&1 | FileCheck %s --check-prefix=NK
// NK: k and v must have the same sequence length (Nk): k has 3, v has 4
// NK: attn-run: error: the given sizes are inconsistent with the spec
//
// RUN: not attn-run %s --size Hkv=1,Nk=3 --shape q=1x2 2>&1 | FileCheck %s --check-prefix=SHAPERANK
// SHAPERANK: attn-run: error: --shape for argument 0 has rank 2, the spec takes rank 4
//
// RUN: not attn-run %s --size Hkv=1,Nk=3 --shape q=1x1x2x3 2>&1 | FileCheck %s --check-prefix=STATIC
// STATIC: attn-run: error: argument 0 shape [1, 1, 2, 3] does not match the spec's type
//
// RUN: not attn-run %s --shape nosuch=1x2 2>&1 | FileCheck %s --check-prefix=SHAPENAME
// SHAPENAME: attn-run: error: bad --shape 'nosuch=1x2': no argument named 'nosuch'

func.func @f(%q: tensor<1x1x?x2xf32>, %k: tensor<1x?x?x2xf32>,
             %v: tensor<1x?x?x2xf32>) -> tensor<1x1x?x2xf32> {
  %out = attn.attention q(%q : tensor<1x1x?x2xf32>) k(%k : tensor<1x?x?x2xf32>)
      v(%v : tensor<1x?x?x2xf32>) -> tensor<1x1x?x2xf32>
  return %out : tensor<1x1x?x2xf32>
}
