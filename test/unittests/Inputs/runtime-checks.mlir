// The kernels of RuntimeChecksTest's ABI cases: attn-compile builds them
// into one shared library per form (test/unittests/CMakeLists.txt).
func.func @paged(%q: tensor<2x2x3x8xf32>, %kp: tensor<4x2x2x8xf32>,
                 %vp: tensor<4x2x2x8xf32>, %pt: tensor<2x3xi32>,
                 %len: tensor<2xi32>) -> tensor<2x2x3x8xf32> {
  %o = attn.attention q(%q : tensor<2x2x3x8xf32>)
      k(%kp : tensor<4x2x2x8xf32>) v(%vp : tensor<4x2x2x8xf32>)
      kv_len(%len : tensor<2xi32>) page_table(%pt : tensor<2x3xi32>)
      causal(bottom_right) -> tensor<2x2x3x8xf32>
  return %o : tensor<2x2x3x8xf32>
}
func.func @documents(%q: tensor<1x2x8x8xf32>, %k: tensor<1x2x8x8xf32>,
                     %v: tensor<1x2x8x8xf32>, %doc: tensor<?xi32>)
    -> tensor<1x2x8x8xf32> {
  %o = attn.attention q(%q : tensor<1x2x8x8xf32>)
      k(%k : tensor<1x2x8x8xf32>) v(%v : tensor<1x2x8x8xf32>)
      mod_inputs(%doc : tensor<?xi32>)
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %d: tensor<?xi32>):
        // Entry 0 is a header: token t's document is d[t + 1].
        %c1 = arith.constant 1 : index
        %i1 = arith.addi %i, %c1 : index
        %j1 = arith.addi %j, %c1 : index
        %di = tensor.extract %d[%i1] : tensor<?xi32>
        %dj = tensor.extract %d[%j1] : tensor<?xi32>
        %same = arith.cmpi eq, %di, %dj : i32
        attn.yield %same : i1
      } -> tensor<1x2x8x8xf32>
  return %o : tensor<1x2x8x8xf32>
}
func.func @relbias(%q: tensor<1x2x8x8xf32>, %k: tensor<1x2x8x8xf32>,
                   %v: tensor<1x2x8x8xf32>, %t: tensor<?xf32>)
    -> tensor<1x2x8x8xf32> {
  %o = attn.attention q(%q : tensor<1x2x8x8xf32>)
      k(%k : tensor<1x2x8x8xf32>) v(%v : tensor<1x2x8x8xf32>)
      mod_inputs(%t : tensor<?xf32>)
      score_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32,
           %tab: tensor<?xf32>):
        %c7 = arith.constant 7 : index
        %d = arith.subi %i, %j : index
        %x = arith.addi %d, %c7 : index
        %r = tensor.extract %tab[%x] : tensor<?xf32>
        %y = arith.addf %s, %r : f32
        attn.yield %y : f32
      } -> tensor<1x2x8x8xf32>
  return %o : tensor<1x2x8x8xf32>
}
func.func @ragged(%q: tensor<1x2x10x8xf32>, %k: tensor<1x2x8x8xf32>,
                  %cq: tensor<3xi32>, %ck: tensor<3xi32>)
    -> tensor<1x2x10x8xf32> {
  %o = attn.attention q(%q : tensor<1x2x10x8xf32>)
      k(%k : tensor<1x2x8x8xf32>) v(%k : tensor<1x2x8x8xf32>)
      causal(bottom_right) ragged(%cq, %ck : tensor<3xi32>, tensor<3xi32>)
      -> tensor<1x2x10x8xf32>
  return %o : tensor<1x2x10x8xf32>
}
func.func @append(%c: tensor<2x2x6x4xf32>, %u: tensor<2x2x2x4xf32>,
                  %p: tensor<2xi32>) -> tensor<2x2x6x4xf32> {
  %0 = attn.kv_cache_append cache(%c : tensor<2x2x6x4xf32>)
      update(%u : tensor<2x2x2x4xf32>) at(%p : tensor<2xi32>)
      -> tensor<2x2x6x4xf32>
  return %0 : tensor<2x2x6x4xf32>
}
func.func @paged_append(%c: tensor<3x1x2x4xf32>, %u: tensor<2x1x2x4xf32>,
                        %p: tensor<2xi32>, %pt: tensor<2x2xi32>)
    -> tensor<3x1x2x4xf32> {
  %0 = attn.kv_cache_append cache(%c : tensor<3x1x2x4xf32>)
      update(%u : tensor<2x1x2x4xf32>) at(%p : tensor<2xi32>)
      page_table(%pt : tensor<2x2xi32>) -> tensor<3x1x2x4xf32>
  return %0 : tensor<3x1x2x4xf32>
}
