// score_mod and mask_mod regions in the GPU kernel (inlined through the
// shared logit builder; tiles classified by the shared MaskBounds rules: a
// tile the region may cut gets the mask arithmetic, one it denies entirely
// is skipped), run on the warp-level
// emulator and checked against the f64 reference. The randomized sweep
// (AttnGPUKernelSweepTests) covers the other modifiers.
// RUN: attn-run %s --device=gpu-emulate --entry=prefix_lm --verify | FileCheck %s --check-prefixes=PREFIX,SKIP
// RUN: attn-run %s --device=gpu-emulate --entry=prefix_lm --verify --gpu-warps=2 --gpu-tile-k=16 | FileCheck %s --check-prefix=PREFIX
// RUN: attn-run %s --device=gpu-emulate --entry=softcap_gqa --verify | FileCheck %s --check-prefix=CAP
// RUN: attn-run %s --device=gpu-emulate --entry=dilated_bf16 --verify --gpu-tile-k=32 | FileCheck %s --check-prefix=DIL
// RUN: attn-run %s --device=gpu-emulate --entry=per_head_decode --verify | FileCheck %s --check-prefix=HEAD
// A key tile the mask_mod denies entirely is neither loaded nor computed:
// query tile 0 (queries 0-63) skips key tile 1 (keys 64-79, past the prefix
// and in the future), so 6 of the 8 (row tile, key tile) pairs of the two
// heads run, 128 mma.sync each.
// SKIP: emulate: {{.*}} 768 mma.sync
// PREFIX: out: f32 [1, 2, 80, 32] {{.*}} [ok
// CAP: out: f16 [1, 4, 48, 64] {{.*}} [ok
// CAP: lse: f32 [1, 4, 48] {{.*}} [ok
// DIL: out: bf16 [1, 2, 96, 64] {{.*}} [ok
// HEAD: out: f16 [2, 4, 1, 64] {{.*}} [ok
// HEAD: lse: f32 [2, 4, 1] {{.*}} [ok

// Regions that read mod_inputs: the kernel reads the tensors in global
// memory and classifies each tile of a mask from the smallest and largest
// value of the box it reads. Two documents of 64 tokens each, 8 heads,
// causal: row tile 1 (queries 64-127) would read key tiles 0 and 1, and key
// tile 0 lies entirely in the other document, so it is skipped: 2 (row
// tile, key tile) pairs per head, 256 mma.sync each (4096). Documents of 60
// and 68 tokens cut key tile 0, which is then computed with the mask (6144).
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.doc.npy i4 128 0*64,1*64
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.doc2.npy i4 128 0*60,1*68
// RUN: attn-run %attn_src_root/examples/variants/document_mask.mlir \
// RUN:   --device=gpu-emulate --verify --size Nq=128,Nk=128 \
// RUN:   --input mod_input0=%t.doc.npy | FileCheck %s --check-prefix=DOC
// RUN: attn-run %attn_src_root/examples/variants/document_mask.mlir \
// RUN:   --device=gpu-emulate --verify --size Nq=128,Nk=128 \
// RUN:   --input mod_input0=%t.doc2.npy | FileCheck %s --check-prefix=DOC2
// DOC: emulate: {{.*}} 4096 mma.sync
// DOC: out: f32 [1, 8, 128, 64] {{.*}} [ok
// DOC2: emulate: {{.*}} 6144 mma.sync
// DOC2: out: f32 [1, 8, 128, 64] {{.*}} [ok
// The tile map of a mask that reads a tensor per head (a key limit per
// query head: 32, 32, 128, 128) is made per K/V head: K/V head 0 (query
// heads 0 and 1) skips key tile 1 (keys 64-127) in both row tiles, K/V head
// 1 computes both key tiles: 6 (row tile, key tile) pairs of 256 mma.sync
// (a map over all heads would have run 8).
// RUN: %python %S/../Execution/Inputs/write_npy.py %t.lim.npy i4 4 32,32,128,128
// RUN: attn-run %s --device=gpu-emulate --entry=per_head_limit --verify \
// RUN:   --input mod_input0=%t.lim.npy | FileCheck %s --check-prefix=LIM
// LIM: emulate: {{.*}} 1536 mma.sync
// LIM: out: f16 [1, 4, 64, 64] {{.*}} [ok
// A score_mod that reads a table (T5's relative position bias).
// RUN: attn-run %attn_src_root/examples/variants/relative_position_bias.mlir \
// RUN:   --device=gpu-emulate --verify | FileCheck %s --check-prefix=REL
// REL: out: f32 [1, 4, 256, 64] {{.*}} [ok

// Prefix-LM: every query reads the first 20 keys, and causally the rest.
func.func @prefix_lm(%q: tensor<1x2x80x32xf32>, %k: tensor<1x2x80x32xf32>,
                     %v: tensor<1x2x80x32xf32>) -> tensor<1x2x80x32xf32> {
  %out = attn.attention q(%q : tensor<1x2x80x32xf32>)
      k(%k : tensor<1x2x80x32xf32>) v(%v : tensor<1x2x80x32xf32>)
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %prefix = arith.constant 20 : index
        %in_prefix = arith.cmpi slt, %j, %prefix : index
        %past = arith.cmpi sle, %j, %i : index
        %ok = arith.ori %in_prefix, %past : i1
        attn.yield %ok : i1
      } -> tensor<1x2x80x32xf32>
  return %out : tensor<1x2x80x32xf32>
}

// A tanh soft cap written as a score_mod, with GQA and a causal mask.
func.func @softcap_gqa(%q: tensor<1x4x48x64xf16>, %k: tensor<1x2x48x64xf16>,
                       %v: tensor<1x2x48x64xf16>)
    -> (tensor<1x4x48x64xf16>, tensor<1x4x48xf32>) {
  %out, %lse = attn.attention q(%q : tensor<1x4x48x64xf16>)
      k(%k : tensor<1x2x48x64xf16>) v(%v : tensor<1x2x48x64xf16>)
      causal(top_left) score_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32):
        %cap = arith.constant 2.0 : f32
        %x = arith.divf %s, %cap : f32
        %t = math.tanh %x : f32
        %r = arith.mulf %t, %cap : f32
        attn.yield %r : f32
      } -> tensor<1x4x48x64xf16>, tensor<1x4x48xf32>
  return %out, %lse : tensor<1x4x48x64xf16>, tensor<1x4x48xf32>
}

// A dilated window: every second key of the last 24, in bf16.
func.func @dilated_bf16(%q: tensor<1x2x96x64xbf16>, %k: tensor<1x2x96x64xbf16>,
                        %v: tensor<1x2x96x64xbf16>) -> tensor<1x2x96x64xbf16> {
  %out = attn.attention q(%q : tensor<1x2x96x64xbf16>)
      k(%k : tensor<1x2x96x64xbf16>) v(%v : tensor<1x2x96x64xbf16>)
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %c0 = arith.constant 0 : index
        %c2 = arith.constant 2 : index
        %c24 = arith.constant 24 : index
        %d = arith.subi %i, %j : index
        %after = arith.cmpi sge, %d, %c0 : index
        %near = arith.cmpi sle, %d, %c24 : index
        %r = arith.remsi %d, %c2 : index
        %even = arith.cmpi eq, %r, %c0 : index
        %band = arith.andi %after, %near : i1
        %ok = arith.andi %band, %even : i1
        attn.yield %ok : i1
      } -> tensor<1x2x96x64xbf16>
  return %out : tensor<1x2x96x64xbf16>
}

// Decode (the split-KV kernel and its merge) with a mask that depends on the
// head and the batch entry: head h reads the keys j with j mod 4 != h mod 4,
// batch entry 1 only the first 100 keys; kv_len cuts further.
func.func @per_head_decode(%q: tensor<2x4x1x64xf16>, %k: tensor<2x2x256x64xf16>,
                           %v: tensor<2x2x256x64xf16>, %len: tensor<2xi32>)
    -> (tensor<2x4x1x64xf16>, tensor<2x4x1xf32>) {
  %out, %lse = attn.attention q(%q : tensor<2x4x1x64xf16>)
      k(%k : tensor<2x2x256x64xf16>) v(%v : tensor<2x2x256x64xf16>)
      kv_len(%len : tensor<2xi32>) causal(bottom_right) mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %c4 = arith.constant 4 : index
        %c100 = arith.constant 100 : index
        %c0 = arith.constant 0 : index
        %jm = arith.remsi %j, %c4 : index
        %hm = arith.remsi %h, %c4 : index
        %other = arith.cmpi ne, %jm, %hm : index
        %first = arith.cmpi eq, %b, %c0 : index
        %short = arith.cmpi slt, %j, %c100 : index
        %len_ok = arith.ori %first, %short : i1
        %ok = arith.andi %other, %len_ok : i1
        attn.yield %ok : i1
      } -> tensor<2x4x1x64xf16>, tensor<2x4x1xf32>
  return %out, %lse : tensor<2x4x1x64xf16>, tensor<2x4x1xf32>
}


// Each query head reads keys below its own limit.
func.func @per_head_limit(%q: tensor<1x4x64x64xf16>, %k: tensor<1x2x128x64xf16>,
                          %v: tensor<1x2x128x64xf16>, %lim: tensor<4xi32>)
    -> tensor<1x4x64x64xf16> {
  %o = attn.attention q(%q : tensor<1x4x64x64xf16>)
      k(%k : tensor<1x2x128x64xf16>) v(%v : tensor<1x2x128x64xf16>)
      mod_inputs(%lim : tensor<4xi32>)
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %l: tensor<4xi32>):
        %x = tensor.extract %l[%h] : tensor<4xi32>
        %xi = arith.index_cast %x : i32 to index
        %ok = arith.cmpi slt, %j, %xi : index
        attn.yield %ok : i1
      } -> tensor<1x4x64x64xf16>
  return %o : tensor<1x4x64x64xf16>
}
