// Specs that need every kind of run-time check: dynamic sizes of every
// operand, a page table, ragged offsets, regions reading mod_inputs, and
// both kinds of kv_cache_append (no-abort.test).
func.func @dynamic(%q: tensor<?x?x?x?xf32>, %k: tensor<?x?x?x?xf32>,
                   %v: tensor<?x?x?x?xf32>, %m: tensor<?x?xi1>,
                   %b: tensor<?x?x?x?xf32>, %len: tensor<?xi32>,
                   %s: tensor<?xf32>)
    -> (tensor<?x?x?x?xf32>, tensor<?x?x?xf32>) {
  %o, %l = attn.attention q(%q : tensor<?x?x?x?xf32>)
      k(%k : tensor<?x?x?x?xf32>) v(%v : tensor<?x?x?x?xf32>)
      mask(%m : tensor<?x?xi1>) bias(%b : tensor<?x?x?x?xf32>)
      kv_len(%len : tensor<?xi32>) alibi(%s : tensor<?xf32>)
      causal(bottom_right) -> tensor<?x?x?x?xf32>, tensor<?x?x?xf32>
  return %o, %l : tensor<?x?x?x?xf32>, tensor<?x?x?xf32>
}
func.func @paged(%q: tensor<?x4x1x16xf32>, %kp: tensor<?x2x8x16xf32>,
                 %vp: tensor<?x2x8x16xf32>, %pt: tensor<?x?xi32>,
                 %len: tensor<?xi32>) -> tensor<?x4x1x16xf32> {
  %o = attn.attention q(%q : tensor<?x4x1x16xf32>)
      k(%kp : tensor<?x2x8x16xf32>) v(%vp : tensor<?x2x8x16xf32>)
      page_table(%pt : tensor<?x?xi32>) kv_len(%len : tensor<?xi32>)
      -> tensor<?x4x1x16xf32>
  return %o : tensor<?x4x1x16xf32>
}
func.func @ragged(%q: tensor<1x2x?x16xf32>, %k: tensor<1x2x?x16xf32>,
                  %cq: tensor<?xi32>, %ck: tensor<?xi32>)
    -> tensor<1x2x?x16xf32> {
  %o = attn.attention q(%q : tensor<1x2x?x16xf32>)
      k(%k : tensor<1x2x?x16xf32>) v(%k : tensor<1x2x?x16xf32>)
      ragged(%cq, %ck : tensor<?xi32>, tensor<?xi32>) causal(bottom_right)
      -> tensor<1x2x?x16xf32>
  return %o : tensor<1x2x?x16xf32>
}
func.func @regions(%q: tensor<1x2x?x16xf32>, %k: tensor<1x2x?x16xf32>,
                   %doc: tensor<?xi32>, %tab: tensor<?xf32>)
    -> tensor<1x2x?x16xf32> {
  %o = attn.attention q(%q : tensor<1x2x?x16xf32>)
      k(%k : tensor<1x2x?x16xf32>) v(%k : tensor<1x2x?x16xf32>)
      mod_inputs(%doc, %tab : tensor<?xi32>, tensor<?xf32>)
      score_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32,
           %d: tensor<?xi32>, %t: tensor<?xf32>):
        %x = arith.subi %i, %j : index
        %r = tensor.extract %t[%x] : tensor<?xf32>
        %y = arith.addf %s, %r : f32
        attn.yield %y : f32
      }
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %d: tensor<?xi32>,
           %t: tensor<?xf32>):
        %di = tensor.extract %d[%i] : tensor<?xi32>
        %dj = tensor.extract %d[%j] : tensor<?xi32>
        %same = arith.cmpi eq, %di, %dj : i32
        attn.yield %same : i1
      } -> tensor<1x2x?x16xf32>
  return %o : tensor<1x2x?x16xf32>
}
func.func @append(%c: tensor<?x2x?x16xf32>, %u: tensor<?x2x?x16xf32>,
                  %p: tensor<?xi32>) -> tensor<?x2x?x16xf32> {
  %0 = attn.kv_cache_append cache(%c : tensor<?x2x?x16xf32>)
      update(%u : tensor<?x2x?x16xf32>) at(%p : tensor<?xi32>)
      -> tensor<?x2x?x16xf32>
  return %0 : tensor<?x2x?x16xf32>
}
func.func @paged_append(%c: tensor<?x2x8x16xf32>, %u: tensor<?x2x?x16xf32>,
                        %p: tensor<?xi32>, %pt: tensor<?x?xi32>)
    -> tensor<?x2x8x16xf32> {
  %0 = attn.kv_cache_append cache(%c : tensor<?x2x8x16xf32>)
      update(%u : tensor<?x2x?x16xf32>) at(%p : tensor<?xi32>)
      page_table(%pt : tensor<?x?xi32>) -> tensor<?x2x8x16xf32>
  return %0 : tensor<?x2x8x16xf32>
}
