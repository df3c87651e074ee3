// RUN: attn-opt --convert-attn-to-gpu --split-input-file --verify-diagnostics %s

func.func @head_dim(%q: tensor<1x1x16x40xf16>, %k: tensor<1x1x16x40xf16>,
                    %v: tensor<1x1x16x40xf16>) -> tensor<1x1x16x40xf16> {
  // expected-error @+1 {{cannot be lowered to the GPU: head dimensions must be static multiples of 16 up to 256 (got Dqk = 40, Dv = 40)}}
  %o = attn.attention q(%q : tensor<1x1x16x40xf16>) k(%k : tensor<1x1x16x40xf16>)
      v(%v : tensor<1x1x16x40xf16>) -> tensor<1x1x16x40xf16>
  return %o : tensor<1x1x16x40xf16>
}

// -----

// A function of several ops (a serving step) takes kv_cache_append,
// elementwise arith ops and one attention; nothing else.
func.func @two_attentions(%q: tensor<1x1x16x64xf16>, %k: tensor<1x1x16x64xf16>,
                          %v: tensor<1x1x16x64xf16>) -> tensor<1x1x16x64xf16> {
  %o = attn.attention q(%q : tensor<1x1x16x64xf16>) k(%k : tensor<1x1x16x64xf16>)
      v(%v : tensor<1x1x16x64xf16>) -> tensor<1x1x16x64xf16>
  // expected-error @+1 {{cannot be lowered to the GPU: a function of several ops takes one attn.attention}}
  %o2 = attn.attention q(%o : tensor<1x1x16x64xf16>) k(%k : tensor<1x1x16x64xf16>)
      v(%v : tensor<1x1x16x64xf16>) -> tensor<1x1x16x64xf16>
  return %o2 : tensor<1x1x16x64xf16>
}

// -----

func.func @other_op(%q: tensor<1x1x16x64xf16>, %k: tensor<1x1x16x64xf16>,
                    %v: tensor<1x1x16x64xf16>) -> tensor<1x1x16x64xf16> {
  // expected-error @+1 {{cannot be lowered to the GPU: a function of several ops may hold attn.kv_cache_append, one attn.attention and elementwise arith ops on tensors}}
  %k2 = tensor.empty() : tensor<1x1x16x64xf16>
  %o = attn.attention q(%q : tensor<1x1x16x64xf16>) k(%k2 : tensor<1x1x16x64xf16>)
      v(%v : tensor<1x1x16x64xf16>) -> tensor<1x1x16x64xf16>
  return %o : tensor<1x1x16x64xf16>
}

// -----

func.func @dense_constant(%c: tensor<2x1x4x16xf16>, %u: tensor<2x1x1x16xf16>,
                          %p: tensor<2xi32>) -> tensor<2x1x4x16xf16> {
  // expected-error @+1 {{cannot be lowered to the GPU: a tensor constant in a function of several ops must be a splat operand of elementwise ops}}
  %at = arith.constant dense<[1, 2]> : tensor<2xi32>
  %p2 = arith.addi %p, %at : tensor<2xi32>
  %c2 = attn.kv_cache_append cache(%c : tensor<2x1x4x16xf16>)
      update(%u : tensor<2x1x1x16xf16>) at(%p2 : tensor<2xi32>)
      -> tensor<2x1x4x16xf16>
  return %c2 : tensor<2x1x4x16xf16>
}

// -----

func.func @returns_argument(%c: tensor<2x1x4x16xf16>, %u: tensor<2x1x1x16xf16>,
                            %p: tensor<2xi32>)
    -> (tensor<2x1x4x16xf16>, tensor<2xi32>) {
  %c2 = attn.kv_cache_append cache(%c : tensor<2x1x4x16xf16>)
      update(%u : tensor<2x1x1x16xf16>) at(%p : tensor<2xi32>)
      -> tensor<2x1x4x16xf16>
  // expected-error @+1 {{cannot be lowered to the GPU: a function of several ops must return results of its ops (not arguments or constants)}}
  return %c2, %p : tensor<2x1x4x16xf16>, tensor<2xi32>
}

// -----

func.func @returns_twice(%c: tensor<2x1x4x16xf16>, %u: tensor<2x1x1x16xf16>,
                         %p: tensor<2xi32>)
    -> (tensor<2x1x4x16xf16>, tensor<2x1x4x16xf16>) {
  %c2 = attn.kv_cache_append cache(%c : tensor<2x1x4x16xf16>)
      update(%u : tensor<2x1x1x16xf16>) at(%p : tensor<2xi32>)
      -> tensor<2x1x4x16xf16>
  // expected-error @+1 {{cannot be lowered to the GPU: a function of several ops must return each value once}}
  return %c2, %c2 : tensor<2x1x4x16xf16>, tensor<2x1x4x16xf16>
}

// -----

func.func @step_head_dim(%q: tensor<1x1x1x40xf16>, %c: tensor<1x1x16x40xf16>,
                         %u: tensor<1x1x1x40xf16>, %p: tensor<1xi32>)
    -> tensor<1x1x1x40xf16> {
  %c2 = attn.kv_cache_append cache(%c : tensor<1x1x16x40xf16>)
      update(%u : tensor<1x1x1x40xf16>) at(%p : tensor<1xi32>)
      -> tensor<1x1x16x40xf16>
  // expected-error @+1 {{cannot be lowered to the GPU: head dimensions must be static multiples of 16 up to 256 (got Dqk = 40, Dv = 40)}}
  %o = attn.attention q(%q : tensor<1x1x1x40xf16>) k(%c2 : tensor<1x1x16x40xf16>)
      v(%c2 : tensor<1x1x16x40xf16>) -> tensor<1x1x1x40xf16>
  return %o : tensor<1x1x1x40xf16>
}

// -----

func.func @projected_dynamic_weights(%x: tensor<1x16x64xf16>, %w: tensor<64x?xf16>,
                                     %wo: tensor<64x64xf16>) -> tensor<1x16x64xf16> {
  // expected-error @+1 {{cannot be lowered to the GPU: the projection weights must have static shapes}}
  %y = attn.projected_attention x(%x : tensor<1x16x64xf16>)
      wq(%w : tensor<64x?xf16>) wk(%w : tensor<64x?xf16>)
      wv(%w : tensor<64x?xf16>) wo(%wo : tensor<64x64xf16>)
      heads(1, 1) -> tensor<1x16x64xf16>
  return %y : tensor<1x16x64xf16>
}

// -----

func.func @projected_model_dim(%x: tensor<1x16x?xf16>, %w: tensor<64x64xf16>) -> tensor<1x16x64xf16> {
  // expected-error @+1 {{cannot be lowered to the GPU: the model dimension of x (and kv_source) must be static}}
  %y = attn.projected_attention x(%x : tensor<1x16x?xf16>)
      wq(%w : tensor<64x64xf16>) wk(%w : tensor<64x64xf16>)
      wv(%w : tensor<64x64xf16>) wo(%w : tensor<64x64xf16>)
      heads(1, 1) -> tensor<1x16x64xf16>
  return %y : tensor<1x16x64xf16>
}

// -----

func.func @projected_odd(%x: tensor<1x16x60xf16>, %w: tensor<60x64xf16>,
                         %wo: tensor<64x60xf16>) -> tensor<1x16x60xf16> {
  // expected-error @+1 {{cannot be lowered to the GPU: the projection weights' sizes must be multiples of 8 (got 60x64)}}
  %y = attn.projected_attention x(%x : tensor<1x16x60xf16>)
      wq(%w : tensor<60x64xf16>) wk(%w : tensor<60x64xf16>)
      wv(%w : tensor<60x64xf16>) wo(%wo : tensor<64x60xf16>)
      heads(1, 1) -> tensor<1x16x60xf16>
  return %y : tensor<1x16x60xf16>
}

// -----

func.func @projected_head_dim(%x: tensor<1x16x64xf16>, %wq: tensor<64x40xf16>,
                              %wv: tensor<64x32xf16>, %wo: tensor<32x64xf16>)
    -> tensor<1x16x64xf16> {
  // expected-error @+1 {{cannot be lowered to the GPU: head dimensions must be multiples of 16 up to 256 (got Dqk = 20, Dv = 16)}}
  %y = attn.projected_attention x(%x : tensor<1x16x64xf16>)
      wq(%wq : tensor<64x40xf16>) wk(%wq : tensor<64x40xf16>)
      wv(%wv : tensor<64x32xf16>) wo(%wo : tensor<32x64xf16>)
      heads(2, 2) -> tensor<1x16x64xf16>
  return %y : tensor<1x16x64xf16>
}

