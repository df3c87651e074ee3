// region-edge-cases.test: a score region that makes key 0 weigh exactly 0.
func.func @f(%q: tensor<1x1x?x16xf32>, %k: tensor<1x1x?x16xf32>,
             %v: tensor<1x1x?x16xf32>) -> tensor<1x1x?x16xf32> {
  %out = attn.attention q(%q : tensor<1x1x?x16xf32>)
      k(%k : tensor<1x1x?x16xf32>) v(%v : tensor<1x1x?x16xf32>)
      causal(top_left)
      score_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32):
        %ninf = arith.constant 0xFF800000 : f32
        %z = arith.constant 0 : index
        %c = arith.cmpi eq, %j, %z : index
        %r = arith.select %c, %ninf, %s : f32
        attn.yield %r : f32
      } -> tensor<1x1x?x16xf32>
  return %out : tensor<1x1x?x16xf32>
}
