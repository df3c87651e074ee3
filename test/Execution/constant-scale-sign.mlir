// Constant scales of either sign in the fused form's softmax: with a positive
// constant the row max is taken over the raw scores and scaled once (exact:
// rounding is monotonic); a negative constant reverses the order of the
// scores, so there every score is scaled before the max. The negative
// scales are large (logits spread over hundreds), so a max taken the wrong
// way (the smallest logit subtracted) would overflow exp. Random inputs
// against the f64 reference, every form, f32 and bf16 (AMX where the host
// has it), with query rows that are not a multiple of the 16-row blocks.
// RUN: for e in neg pos neg_bf16; do for f in naive fused decode; do attn-run %s --entry=$e --form=$f --verify --reps=0 --seed=7 || echo FAIL $e $f; done; done | FileCheck %s
// CHECK-NOT: FAIL
// CHECK-COUNT-9: vs reference: {{.*}} [ok
// CHECK-NOT: FAIL

func.func @neg(%q: tensor<2x4x37x64xf32>, %k: tensor<2x2x75x64xf32>,
               %v: tensor<2x2x75x64xf32>) -> tensor<2x4x37x64xf32> {
  %o = attn.attention q(%q : tensor<2x4x37x64xf32>)
      k(%k : tensor<2x2x75x64xf32>) v(%v : tensor<2x2x75x64xf32>)
      scale(-40.0) causal(bottom_right) -> tensor<2x4x37x64xf32>
  return %o : tensor<2x4x37x64xf32>
}

func.func @pos(%q: tensor<2x4x37x64xf32>, %k: tensor<2x2x75x64xf32>,
               %v: tensor<2x2x75x64xf32>) -> tensor<2x4x37x64xf32> {
  %o = attn.attention q(%q : tensor<2x4x37x64xf32>)
      k(%k : tensor<2x2x75x64xf32>) v(%v : tensor<2x2x75x64xf32>)
      scale(0.375) causal(bottom_right) -> tensor<2x4x37x64xf32>
  return %o : tensor<2x4x37x64xf32>
}

func.func @neg_bf16(%q: tensor<1x4x48x64xbf16>, %k: tensor<1x2x160x64xbf16>,
                    %v: tensor<1x2x160x64xbf16>) -> tensor<1x4x48x64xbf16> {
  %o = attn.attention q(%q : tensor<1x4x48x64xbf16>)
      k(%k : tensor<1x2x160x64xbf16>) v(%v : tensor<1x2x160x64xbf16>)
      scale(-30.0) -> tensor<1x4x48x64xbf16>
  return %o : tensor<1x4x48x64xbf16>
}
