// Ragged batches with every other modifier in the GPU kernel, on the
// warp-level emulator against the f64 reference: chunked prefill over a
// paged cache (a block's sequence picks its page table row and kv_len),
// kv_len over packed keys, masks and biases by packed rows, regions that see
// the sequence as b (the same specs as test/Execution/ragged-modifiers.mlir).
//
// RUN: attn-run %s --device=gpu-emulate --entry=chunked_prefill --verify | FileCheck %s
// RUN: attn-run %s --device=gpu-emulate --entry=chunked_vllm --verify --seed=7 | FileCheck %s
// RUN: attn-run %s --device=gpu-emulate --entry=packed_kv_len --verify --seed=2 | FileCheck %s
// RUN: attn-run %s --device=gpu-emulate --entry=mask_bias --verify --seed=9 | FileCheck %s
// RUN: attn-run %s --device=gpu-emulate --entry=paged_mask --verify | FileCheck %s
// RUN: attn-run %s --device=gpu-emulate --entry=regions --verify --seed=12 | FileCheck %s
// RUN: attn-run %s --device=gpu-emulate --entry=dynamic --size Seqs=5,Nq=60,MaxPages=6,Pages=40 --verify | FileCheck %s
// RUN: attn-run %attn_src_root/examples/serving/chunked_prefill.mlir --device=gpu-emulate --size Nq=100 --verify | FileCheck %s
// CHECK: out: {{.*}} [ok

// Chunked prefill: 4 sequences' new tokens (packed) attend to their cached
// pages (the new tokens already appended), bottom-right causal per
// sequence, GQA, lse, sinks.
func.func @chunked_prefill(%q: tensor<1x8x96x32xf32>, %kp: tensor<40x2x16x32xf32>,
                           %vp: tensor<40x2x16x32xf32>, %cq: tensor<5xi32>,
                           %pt: tensor<4x10xi32>, %len: tensor<4xi32>,
                           %sink: tensor<8xf32>)
    -> (tensor<1x8x96x32xf32>, tensor<1x8x96xf32>) {
  %o, %l = attn.attention q(%q : tensor<1x8x96x32xf32>)
      k(%kp : tensor<40x2x16x32xf32>) v(%vp : tensor<40x2x16x32xf32>)
      ragged(%cq : tensor<5xi32>) page_table(%pt : tensor<4x10xi32>)
      kv_len(%len : tensor<4xi32>) causal(bottom_right)
      sink(%sink : tensor<8xf32>)
      -> tensor<1x8x96x32xf32>, tensor<1x8x96xf32>
  return %o, %l : tensor<1x8x96x32xf32>, tensor<1x8x96xf32>
}

// vLLM's pool order, f16, i64 offsets and lengths, a window.
func.func @chunked_vllm(%q: tensor<1x70x4x16xf16>, %kp: tensor<24x8x2x16xf16>,
                        %vp: tensor<24x8x2x16xf16>, %cq: tensor<4xi64>,
                        %pt: tensor<3x8xi64>, %len: tensor<3xi64>)
    -> tensor<1x70x4x16xf16> {
  %o = attn.attention q(%q : tensor<1x70x4x16xf16>)
      k(%kp : tensor<24x8x2x16xf16>) v(%vp : tensor<24x8x2x16xf16>)
      layout(bnhd) ragged(%cq : tensor<4xi64>) page_table(%pt : tensor<3x8xi64>)
      kv_len(%len : tensor<3xi64>) causal(bottom_right) window_left(20)
      -> tensor<1x70x4x16xf16>
  return %o : tensor<1x70x4x16xf16>
}

// kv_len over packed keys (FlashAttention's seqused_k): each sequence reads
// the first kv_len[b] of its keys, the diagonal at kv_len[b].
func.func @packed_kv_len(%q: tensor<1x4x80x16xf32>, %k: tensor<1x2x120x16xf32>,
                         %v: tensor<1x2x120x16xf32>, %cq: tensor<6xi32>,
                         %ck: tensor<6xi32>, %len: tensor<5xi32>)
    -> (tensor<1x4x80x16xf32>, tensor<1x4x80xf32>) {
  %o, %l = attn.attention q(%q : tensor<1x4x80x16xf32>)
      k(%k : tensor<1x2x120x16xf32>) v(%v : tensor<1x2x120x16xf32>)
      ragged(%cq, %ck : tensor<6xi32>, tensor<6xi32>)
      kv_len(%len : tensor<5xi32>) causal(bottom_right)
      -> tensor<1x4x80x16xf32>, tensor<1x4x80xf32>
  return %o, %l : tensor<1x4x80x16xf32>, tensor<1x4x80xf32>
}

// A boolean mask and a bias over packed rows and keys (per head and
// broadcast over heads), ALiBi, soft cap.
func.func @mask_bias(%q: tensor<1x4x64x16xf32>, %k: tensor<1x4x72x16xf32>,
                     %v: tensor<1x4x72x16xf32>, %cq: tensor<4xi32>,
                     %ck: tensor<4xi32>, %m: tensor<1x4x64x72xi1>,
                     %bias: tensor<64x72xf32>, %s: tensor<4xf32>)
    -> tensor<1x4x64x16xf32> {
  %o = attn.attention q(%q : tensor<1x4x64x16xf32>)
      k(%k : tensor<1x4x72x16xf32>) v(%v : tensor<1x4x72x16xf32>)
      ragged(%cq, %ck : tensor<4xi32>, tensor<4xi32>)
      mask(%m : tensor<1x4x64x72xi1>) bias(%bias : tensor<64x72xf32>)
      alibi(%s : tensor<4xf32>) softcap(8.0) causal(top_left)
      -> tensor<1x4x64x16xf32>
  return %o : tensor<1x4x64x16xf32>
}

// A paged ragged batch with a mask over [packed rows, key positions].
func.func @paged_mask(%q: tensor<1x2x40x16xf32>, %kp: tensor<20x1x8x16xf32>,
                      %vp: tensor<20x1x8x16xf32>, %cq: tensor<4xi32>,
                      %pt: tensor<3x6xi32>, %len: tensor<3xi32>,
                      %m: tensor<1x1x40x48xi1>) -> tensor<1x2x40x16xf32> {
  %o = attn.attention q(%q : tensor<1x2x40x16xf32>)
      k(%kp : tensor<20x1x8x16xf32>) v(%vp : tensor<20x1x8x16xf32>)
      ragged(%cq : tensor<4xi32>) page_table(%pt : tensor<3x6xi32>)
      kv_len(%len : tensor<3xi32>) mask(%m : tensor<1x1x40x48xi1>)
      causal(bottom_right) -> tensor<1x2x40x16xf32>
  return %o : tensor<1x2x40x16xf32>
}

// Regions with per-sequence indices: a score_mod that reads a table per
// (sequence, head) and a mask_mod that keeps keys of the same parity as the
// sequence index or within 4 of the query row.
func.func @regions(%q: tensor<1x4x64x16xf32>, %k: tensor<1x2x80x16xf32>,
                   %v: tensor<1x2x80x16xf32>, %cq: tensor<5xi32>,
                   %ck: tensor<5xi32>, %tab: tensor<4x4xf32>)
    -> (tensor<1x4x64x16xf32>, tensor<1x4x64xf32>) {
  %o, %l = attn.attention q(%q : tensor<1x4x64x16xf32>)
      k(%k : tensor<1x2x80x16xf32>) v(%v : tensor<1x2x80x16xf32>)
      ragged(%cq, %ck : tensor<5xi32>, tensor<5xi32>) causal(bottom_right)
      mod_inputs(%tab : tensor<4x4xf32>)
      score_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32, %t: tensor<4x4xf32>):
        %w = tensor.extract %t[%b, %h] : tensor<4x4xf32>
        %r = arith.addf %s, %w : f32
        attn.yield %r : f32
      }
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %t: tensor<4x4xf32>):
        %c2 = arith.constant 2 : index
        %c4 = arith.constant 4 : index
        %bp = arith.remui %b, %c2 : index
        %jp = arith.remui %j, %c2 : index
        %same = arith.cmpi eq, %bp, %jp : index
        %near = arith.addi %j, %c4 : index
        %close = arith.cmpi uge, %near, %i : index
        %ok = arith.ori %same, %close : i1
        attn.yield %ok : i1
      }
      -> tensor<1x4x64x16xf32>, tensor<1x4x64xf32>
  return %o, %l : tensor<1x4x64x16xf32>, tensor<1x4x64xf32>
}

// Dynamic token count, sequences and table width.
func.func @dynamic(%q: tensor<1x4x?x16xf32>, %kp: tensor<?x2x8x16xf32>,
                   %vp: tensor<?x2x8x16xf32>, %cq: tensor<?xi32>,
                   %pt: tensor<?x?xi32>, %len: tensor<?xi32>)
    -> tensor<1x4x?x16xf32> {
  %o = attn.attention q(%q : tensor<1x4x?x16xf32>)
      k(%kp : tensor<?x2x8x16xf32>) v(%vp : tensor<?x2x8x16xf32>)
      ragged(%cq : tensor<?xi32>) page_table(%pt : tensor<?x?xi32>)
      kv_len(%len : tensor<?xi32>) causal(bottom_right)
      -> tensor<1x4x?x16xf32>
  return %o : tensor<1x4x?x16xf32>
}
