// Left padding with every form and modifier it meets: used by
// key-padding-forms.test.

// Causal GQA over left-padded prompts (dynamic lengths).
func.func @causal(%q: tensor<2x4x?x32xf32>, %k: tensor<2x2x?x32xf32>,
                  %v: tensor<2x2x?x32xf32>, %first: tensor<2xi32>)
    -> tensor<2x4x?x32xf32> {
  %o = attn.attention q(%q : tensor<2x4x?x32xf32>) k(%k : tensor<2x2x?x32xf32>)
      v(%v : tensor<2x2x?x32xf32>) kv_start(%first : tensor<2xi32>)
      causal(top_left) -> tensor<2x4x?x32xf32>
  return %o : tensor<2x4x?x32xf32>
}

// A decode step over a left-padded cache: kv_len and kv_start, bottom-right,
// a window, lse.
func.func @decode(%q: tensor<3x8x1x64xf32>, %k: tensor<3x2x?x64xf32>,
                  %v: tensor<3x2x?x64xf32>, %len: tensor<3xi32>,
                  %first: tensor<3xi64>)
    -> (tensor<3x8x1x64xf32>, tensor<3x8x1xf32>) {
  %o, %l = attn.attention q(%q : tensor<3x8x1x64xf32>)
      k(%k : tensor<3x2x?x64xf32>) v(%v : tensor<3x2x?x64xf32>)
      kv_len(%len : tensor<3xi32>) kv_start(%first : tensor<3xi64>)
      causal(bottom_right) window_left(300)
      -> tensor<3x8x1x64xf32>, tensor<3x8x1xf32>
  return %o, %l : tensor<3x8x1x64xf32>, tensor<3x8x1xf32>
}

// kv_start beside the user's own regions (document mask, soft cap as a
// score_mod) and a bias: the start is and-ed with the mask region.
func.func @regions(%q: tensor<2x2x48x16xf32>, %k: tensor<2x2x80x16xf32>,
                   %v: tensor<2x2x80x16xf32>, %first: tensor<2xi32>,
                   %doc: tensor<80xi32>, %bias: tensor<2x1x1x80xf32>)
    -> tensor<2x2x48x16xf32> {
  %o = attn.attention q(%q : tensor<2x2x48x16xf32>)
      k(%k : tensor<2x2x80x16xf32>) v(%v : tensor<2x2x80x16xf32>)
      kv_start(%first : tensor<2xi32>) bias(%bias : tensor<2x1x1x80xf32>)
      mod_inputs(%doc : tensor<80xi32>)
      score_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32,
           %d: tensor<80xi32>):
        %c = arith.constant 20.0 : f32
        %x = arith.divf %s, %c : f32
        %t = math.tanh %x : f32
        %y = arith.mulf %t, %c : f32
        attn.yield %y : f32
      } mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %d: tensor<80xi32>):
        %dj = tensor.extract %d[%j] : tensor<80xi32>
        %c1 = arith.constant 1 : i32
        %ok = arith.cmpi ne, %dj, %c1 : i32
        attn.yield %ok : i1
      } -> tensor<2x2x48x16xf32>
  return %o : tensor<2x2x48x16xf32>
}

// Ragged batch (one start per sequence, counted in its own keys) and a
// paged cache.
func.func @ragged(%q: tensor<1x4x64x16xf32>, %k: tensor<1x2x80x16xf32>,
                  %v: tensor<1x2x80x16xf32>, %cq: tensor<4xi32>,
                  %ck: tensor<4xi32>, %first: tensor<3xi32>)
    -> tensor<1x4x64x16xf32> {
  %o = attn.attention q(%q : tensor<1x4x64x16xf32>)
      k(%k : tensor<1x2x80x16xf32>) v(%v : tensor<1x2x80x16xf32>)
      ragged(%cq, %ck : tensor<4xi32>, tensor<4xi32>)
      kv_start(%first : tensor<3xi32>) causal(bottom_right)
      -> tensor<1x4x64x16xf32>
  return %o : tensor<1x4x64x16xf32>
}

func.func @paged(%q: tensor<3x4x2x16xf16>, %kp: tensor<20x2x8x16xf16>,
                 %vp: tensor<20x2x8x16xf16>, %pt: tensor<3x6xi32>,
                 %len: tensor<3xi32>, %first: tensor<3xi32>)
    -> tensor<3x4x2x16xf16> {
  %o = attn.attention q(%q : tensor<3x4x2x16xf16>)
      k(%kp : tensor<20x2x8x16xf16>) v(%vp : tensor<20x2x8x16xf16>)
      page_table(%pt : tensor<3x6xi32>) kv_len(%len : tensor<3xi32>)
      kv_start(%first : tensor<3xi32>) causal(bottom_right)
      -> tensor<3x4x2x16xf16>
  return %o : tensor<3x4x2x16xf16>
}

// The projection-level op.
func.func @projected(%x: tensor<2x24x64xf32>, %wq: tensor<64x64xf32>,
                     %wk: tensor<64x32xf32>, %wv: tensor<64x32xf32>,
                     %wo: tensor<64x64xf32>, %first: tensor<2xi32>)
    -> tensor<2x24x64xf32> {
  %y = attn.projected_attention x(%x : tensor<2x24x64xf32>)
      wq(%wq : tensor<64x64xf32>) wk(%wk : tensor<64x32xf32>)
      wv(%wv : tensor<64x32xf32>) wo(%wo : tensor<64x64xf32>)
      heads(4, 2) kv_start(%first : tensor<2xi32>) causal(top_left)
      -> tensor<2x24x64xf32>
  return %y : tensor<2x24x64xf32>
}

// A key-padding mask ([B, Nk] booleans, the 2-D mask frameworks pass) with
// causal bottom-right and lse; and beside kv_start and a paged cache.
func.func @key_mask(%q: tensor<2x4x?x32xf32>, %k: tensor<2x2x?x32xf32>,
                    %v: tensor<2x2x?x32xf32>, %m: tensor<2x?xi1>)
    -> (tensor<2x4x?x32xf32>, tensor<2x4x?xf32>) {
  %o, %l = attn.attention q(%q : tensor<2x4x?x32xf32>)
      k(%k : tensor<2x2x?x32xf32>) v(%v : tensor<2x2x?x32xf32>)
      key_mask(%m : tensor<2x?xi1>) causal(bottom_right)
      -> tensor<2x4x?x32xf32>, tensor<2x4x?xf32>
  return %o, %l : tensor<2x4x?x32xf32>, tensor<2x4x?xf32>
}

func.func @paged_key_mask(%q: tensor<3x4x2x16xf32>, %kp: tensor<20x2x8x16xf32>,
                          %vp: tensor<20x2x8x16xf32>, %pt: tensor<3x6xi32>,
                          %len: tensor<3xi32>, %first: tensor<3xi32>,
                          %m: tensor<3x48xi1>) -> tensor<3x4x2x16xf32> {
  %o = attn.attention q(%q : tensor<3x4x2x16xf32>)
      k(%kp : tensor<20x2x8x16xf32>) v(%vp : tensor<20x2x8x16xf32>)
      page_table(%pt : tensor<3x6xi32>) kv_len(%len : tensor<3xi32>)
      kv_start(%first : tensor<3xi32>) key_mask(%m : tensor<3x48xi1>)
      causal(bottom_right) -> tensor<3x4x2x16xf32>
  return %o : tensor<3x4x2x16xf32>
}

func.func @key_mask_plain(%q: tensor<2x2x?x16xf32>, %k: tensor<2x2x?x16xf32>,
                          %v: tensor<2x2x?x16xf32>, %m: tensor<2x?xi1>)
    -> tensor<2x2x?x16xf32> {
  %o = attn.attention q(%q : tensor<2x2x?x16xf32>)
      k(%k : tensor<2x2x?x16xf32>) v(%v : tensor<2x2x?x16xf32>)
      key_mask(%m : tensor<2x?xi1>) -> tensor<2x2x?x16xf32>
  return %o : tensor<2x2x?x16xf32>
}
