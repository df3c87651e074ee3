// Kernels of the C ABI tests (test/Consumers/c-kernel/c-kernel-test.c): a prefill with
// GQA and a causal mask returning out and lse, a decode step against a KV
// cache with kv_len, a spec with dynamic sizes (its output is allocated
// by the kernel and copied out by the runtime), and a KV-cache append.
func.func @prefill(%q: tensor<1x4x6x8xf32>, %k: tensor<1x2x6x8xf32>,
                   %v: tensor<1x2x6x8xf32>)
    -> (tensor<1x4x6x8xf32>, tensor<1x4x6xf32>) {
  %out, %lse = attn.attention q(%q : tensor<1x4x6x8xf32>)
      k(%k : tensor<1x2x6x8xf32>) v(%v : tensor<1x2x6x8xf32>)
      causal(top_left) -> tensor<1x4x6x8xf32>, tensor<1x4x6xf32>
  return %out, %lse : tensor<1x4x6x8xf32>, tensor<1x4x6xf32>
}

func.func @decode(%q: tensor<2x4x1x8xf32>, %k: tensor<2x2x16x8xf32>,
                  %v: tensor<2x2x16x8xf32>, %kv_len: tensor<2xi32>)
    -> tensor<2x4x1x8xf32> {
  %out = attn.attention q(%q : tensor<2x4x1x8xf32>)
      k(%k : tensor<2x2x16x8xf32>) v(%v : tensor<2x2x16x8xf32>)
      kv_len(%kv_len : tensor<2xi32>) causal(bottom_right)
      -> tensor<2x4x1x8xf32>
  return %out : tensor<2x4x1x8xf32>
}

func.func @dynamic(%q: tensor<1x2x?x8xf32>, %k: tensor<1x2x?x8xf32>,
                   %v: tensor<1x2x?x8xf32>) -> tensor<1x2x?x8xf32> {
  %out = attn.attention q(%q : tensor<1x2x?x8xf32>)
      k(%k : tensor<1x2x?x8xf32>) v(%v : tensor<1x2x?x8xf32>)
      causal(bottom_right) -> tensor<1x2x?x8xf32>
  return %out : tensor<1x2x?x8xf32>
}

// Dynamic head counts and a boolean mask that broadcasts over B and Hq.
func.func @heads(%q: tensor<2x?x4x8xf32>, %k: tensor<2x?x4x8xf32>,
                 %v: tensor<2x?x4x8xf32>, %mask: tensor<1x1x4x4xi1>)
    -> tensor<2x?x4x8xf32> {
  %out = attn.attention q(%q : tensor<2x?x4x8xf32>)
      k(%k : tensor<2x?x4x8xf32>) v(%v : tensor<2x?x4x8xf32>)
      mask(%mask : tensor<1x1x4x4xi1>) -> tensor<2x?x4x8xf32>
  return %out : tensor<2x?x4x8xf32>
}

// A KV-cache append: the kernel writes its cache input in place when the
// caller passes the cache's own tensor as the result (so the runtime copies
// a strided cache into the workspace and back, docs/Embedding.md).
func.func @append(%cache: tensor<2x2x6x4xf32>, %new: tensor<2x2x1x4xf32>,
                  %pos: tensor<2xi32>) -> tensor<2x2x6x4xf32> {
  %c = attn.kv_cache_append cache(%cache : tensor<2x2x6x4xf32>)
      update(%new : tensor<2x2x1x4xf32>) at(%pos : tensor<2xi32>)
      -> tensor<2x2x6x4xf32>
  return %c : tensor<2x2x6x4xf32>
}

// The same append with the cache's capacity dynamic.
func.func @append_dynamic(%cache: tensor<2x2x?x4xf32>, %new: tensor<2x2x1x4xf32>,
                          %pos: tensor<2xi32>) -> tensor<2x2x?x4xf32> {
  %c = attn.kv_cache_append cache(%cache : tensor<2x2x?x4xf32>)
      update(%new : tensor<2x2x1x4xf32>) at(%pos : tensor<2xi32>)
      -> tensor<2x2x?x4xf32>
  return %c : tensor<2x2x?x4xf32>
}
