// The kernels attn-fuzz-abi calls through the C ABI (fuzz/AbiFuzzer.cpp):
// attn-compile builds them into one shared library per form
// (fuzz/CMakeLists.txt). Dynamic sizes everywhere the ABI allows, so the
// fuzzer chooses them, and every kind of data the kernel alone can judge:
// kv_len, page tables, ragged offsets, a region's reads.

// Dense, dynamic B, Nq and Nk, GQA 2/1, causal bottom-right, kv_len, lse;
// the outputs are dynamically shaped (the kernel allocates them).
func.func @dense(%q: tensor<?x2x?x8xf32>, %k: tensor<?x1x?x8xf32>,
                 %v: tensor<?x1x?x8xf32>, %len: tensor<?xi32>)
    -> (tensor<?x2x?x8xf32>, tensor<?x2x?xf32>) {
  %o, %l = attn.attention q(%q : tensor<?x2x?x8xf32>)
      k(%k : tensor<?x1x?x8xf32>) v(%v : tensor<?x1x?x8xf32>)
      kv_len(%len : tensor<?xi32>) causal(bottom_right)
      -> tensor<?x2x?x8xf32>, tensor<?x2x?xf32>
  return %o, %l : tensor<?x2x?x8xf32>, tensor<?x2x?xf32>
}

// Paged decode: pools of a dynamic number of pages of 4 tokens, a dynamic
// page table (B x max pages).
func.func @paged(%q: tensor<?x2x1x8xf32>, %kp: tensor<?x1x4x8xf32>,
                 %vp: tensor<?x1x4x8xf32>, %pt: tensor<?x?xi32>,
                 %len: tensor<?xi32>) -> tensor<?x2x1x8xf32> {
  %o = attn.attention q(%q : tensor<?x2x1x8xf32>)
      k(%kp : tensor<?x1x4x8xf32>) v(%vp : tensor<?x1x4x8xf32>)
      page_table(%pt : tensor<?x?xi32>) kv_len(%len : tensor<?xi32>)
      -> tensor<?x2x1x8xf32>
  return %o : tensor<?x2x1x8xf32>
}

// Ragged batch: packed tokens, dynamic offsets.
func.func @ragged(%q: tensor<1x2x?x8xf32>, %k: tensor<1x1x?x8xf32>,
                  %v: tensor<1x1x?x8xf32>, %cq: tensor<?xi32>,
                  %ck: tensor<?xi32>) -> tensor<1x2x?x8xf32> {
  %o = attn.attention q(%q : tensor<1x2x?x8xf32>)
      k(%k : tensor<1x1x?x8xf32>) v(%v : tensor<1x1x?x8xf32>)
      ragged(%cq, %ck : tensor<?xi32>, tensor<?xi32>) causal(bottom_right)
      -> tensor<1x2x?x8xf32>
  return %o : tensor<1x2x?x8xf32>
}

// A mask region reading document ids (entry t + 1 is token t's document).
func.func @documents(%q: tensor<1x2x?x8xf32>, %k: tensor<1x2x?x8xf32>,
                     %v: tensor<1x2x?x8xf32>, %doc: tensor<?xi32>)
    -> tensor<1x2x?x8xf32> {
  %o = attn.attention q(%q : tensor<1x2x?x8xf32>)
      k(%k : tensor<1x2x?x8xf32>) v(%v : tensor<1x2x?x8xf32>)
      mod_inputs(%doc : tensor<?xi32>)
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %d: tensor<?xi32>):
        %c1 = arith.constant 1 : index
        %i1 = arith.addi %i, %c1 : index
        %j1 = arith.addi %j, %c1 : index
        %di = tensor.extract %d[%i1] : tensor<?xi32>
        %dj = tensor.extract %d[%j1] : tensor<?xi32>
        %same = arith.cmpi eq, %di, %dj : i32
        attn.yield %same : i1
      } -> tensor<1x2x?x8xf32>
  return %o : tensor<1x2x?x8xf32>
}
