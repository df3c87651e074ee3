// Document masking over packed sequences: several documents are packed into
// one sequence of N tokens, doc[t] is the document of token t, and a query
// reads only keys of its own document (and, causally, not the future). The
// mask reads the document ids, so the fused form classifies each tile from
// the smallest and largest id of its query rows and of its keys: tiles
// between different documents are skipped, tiles inside one document need no
// mask arithmetic. One compiled kernel serves every N and every packing.
//   attn-run examples/variants/document_mask.mlir --size Nq=2048,Nk=2048 \
//     --verify --tile-map
// The same region in the GPU kernel (the ids read from global memory, each
// tile classified from the ids it reads, reads out of bounds reported
// through the kernel's error word), run on the warp-level emulator:
//   attn-run examples/variants/document_mask.mlir --device=gpu-emulate \
//     --size Nq=256,Nk=256 --verify
func.func @document_mask(%q: tensor<1x8x?x64xf32>, %k: tensor<1x8x?x64xf32>,
                         %v: tensor<1x8x?x64xf32>, %doc: tensor<?xi32>)
    -> tensor<1x8x?x64xf32> {
  %out = attn.attention q(%q : tensor<1x8x?x64xf32>)
      k(%k : tensor<1x8x?x64xf32>) v(%v : tensor<1x8x?x64xf32>)
      causal(top_left) mod_inputs(%doc : tensor<?xi32>)
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %d: tensor<?xi32>):
        %di = tensor.extract %d[%i] : tensor<?xi32>
        %dj = tensor.extract %d[%j] : tensor<?xi32>
        %same = arith.cmpi eq, %di, %dj : i32
        attn.yield %same : i1
      } -> tensor<1x8x?x64xf32>
  return %out : tensor<1x8x?x64xf32>
}
