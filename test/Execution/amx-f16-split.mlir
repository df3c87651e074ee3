// REQUIRES: x86_64-host
// f16 attention in the fused form against the f64 reference, with values
// that are not finite. On a host with AMX BF16, whole tiles take the split
// of each f16 value into two bf16 (docs/Targets.md): a Q, K or V tile that
// holds an infinity or a NaN must take the f32 kernels instead, or the low
// part (0) of an infinity would multiply another infinity into a NaN. On
// other hosts the f32 kernels run every tile and the results are the same.
// Shapes: 64 query rows, 256 keys, d 64: whole 16 x 16 tiles, two key tiles.
//
// RUN: %python %S/Inputs/f16_nonfinite.py %t.base base
// RUN: %python %S/Inputs/f16_nonfinite.py %t.ik inf_k
// RUN: %python %S/Inputs/f16_nonfinite.py %t.iq inf_q
// RUN: %python %S/Inputs/f16_nonfinite.py %t.iv inf_v
// RUN: %python %S/Inputs/f16_nonfinite.py %t.nt nan_tail
// DEFINE: %{run} = attn-run %s --form=fused --verify --reps=0
//
// On an AMX host the tiles do take the split:
// RUN: %if amx-host %{ %{run} --entry=plain --input q=%t.base.q.npy --input k=%t.base.k.npy --input v=%t.base.v.npy | FileCheck %s --check-prefix=AMX %}
// AMX: lowering: form fused, {{.*}}bf16 products on amx-f16-split
//
// Finite values: within f16's tolerance of the reference.
// RUN: %{run} --entry=plain --input q=%t.base.q.npy --input k=%t.base.k.npy --input v=%t.base.v.npy | FileCheck %s
// CHECK: out: f16 [1, 1, 64, 64] {{.*}} [ok
// And within 1.2e-4 + 2e-3 |ref| (the split's error is f16's own output
// rounding, 6e-5 here; Q, K, V and the weights rounded to bf16 alone, the
// low parts dropped, were off by 3.6e-4 and failed this in 256 places).
// RUN: %{run} --entry=plain --input q=%t.base.q.npy --input k=%t.base.k.npy --input v=%t.base.v.npy --atol=1.2e-4 --rtol=2e-3 | FileCheck %s
//
// k[3, 0] = +inf against q[:, 0] < 0: key 3's logits are -inf (weight 0);
// the outputs stay finite.
// RUN: %{run} --entry=plain --input q=%t.ik.q.npy --input k=%t.ik.k.npy --input v=%t.ik.v.npy --print | FileCheck %s --check-prefix=FINITE
// FINITE:     out: f16 [1, 1, 64, 64] {{.*}} [ok
// FINITE-NOT: {{nan|inf}}
//
// q[7, 2] = -inf against k[:, 2] > 0: every logit of row 7 is -inf, so
// row 7 is 0 (docs/Semantics.md) and the other rows are finite.
// RUN: %{run} --entry=plain --input q=%t.iq.q.npy --input k=%t.iq.k.npy --input v=%t.iq.v.npy --print | FileCheck %s --check-prefix=FINITE
//
// v[5, 1] = +inf: column 1 of every row is +inf, the others finite.
// RUN: %{run} --entry=plain --input q=%t.iv.q.npy --input k=%t.iv.k.npy --input v=%t.iv.v.npy --print | FileCheck %s --check-prefix=INFV
// INFV:     out: f16 [1, 1, 64, 64] {{.*}} [ok
// INFV-NOT: nan
//
// kv_len 200, K NaN and V inf past it: nothing of them reaches the output.
// RUN: %{run} --entry=cache --input q=%t.nt.q.npy --input k=%t.nt.k.npy --input v=%t.nt.v.npy --input kv_len=%t.nt.len.npy --print | FileCheck %s --check-prefix=TAIL
// TAIL:     out: f16 [1, 1, 64, 64] {{.*}} [ok
// TAIL-NOT: {{nan|inf}}

func.func @plain(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x256x64xf16>,
                 %v: tensor<1x1x256x64xf16>) -> tensor<1x1x64x64xf16> {
  %o = attn.attention q(%q : tensor<1x1x64x64xf16>)
      k(%k : tensor<1x1x256x64xf16>) v(%v : tensor<1x1x256x64xf16>)
      -> tensor<1x1x64x64xf16>
  return %o : tensor<1x1x64x64xf16>
}

func.func @cache(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x256x64xf16>,
                 %v: tensor<1x1x256x64xf16>, %kv_len: tensor<1xi32>)
    -> tensor<1x1x64x64xf16> {
  %o = attn.attention q(%q : tensor<1x1x64x64xf16>)
      k(%k : tensor<1x1x256x64xf16>) v(%v : tensor<1x1x256x64xf16>)
      kv_len(%kv_len : tensor<1xi32>) -> tensor<1x1x64x64xf16>
  return %o : tensor<1x1x64x64xf16>
}
