// Ragged batches in every form on random inputs (random sequence lengths
// including empty sequences, sometimes rows outside every sequence),
// checked against the f64 reference.
//
// RUN: attn-run %s --entry=prefill --form=naive --verify --reps=1 | FileCheck %s
// RUN: attn-run %s --entry=prefill --form=fused --verify --reps=1 | FileCheck %s
// RUN: attn-run %s --entry=prefill --form=decode --splits=3 --verify --reps=1 | FileCheck %s
// RUN: attn-run %s --entry=varlen_bnhd --form=naive --verify --reps=1 --seed=5 | FileCheck %s
// RUN: attn-run %s --entry=varlen_bnhd --form=fused --verify --reps=1 --seed=5 | FileCheck %s
// RUN: attn-run %s --entry=varlen_bnhd --form=decode --verify --reps=1 --seed=5 | FileCheck %s
// RUN: attn-run %s --entry=dynamic --size Seqs=5,Nq=77,Nk=90 --form=naive --verify --reps=1 | FileCheck %s
// RUN: attn-run %s --entry=dynamic --size Seqs=5,Nq=77,Nk=90 --form=fused --verify --reps=1 | FileCheck %s
// RUN: attn-run %s --entry=dynamic --size Seqs=5,Nq=77,Nk=90 --form=decode --verify --reps=1 | FileCheck %s
// CHECK: vs reference: {{.*}} [ok

// Chunked prefill: 8 sequences, bottom-right causal per sequence, GQA, lse.
func.func @prefill(%q: tensor<1x8x200x32xf32>, %k: tensor<1x2x300x32xf32>,
                   %v: tensor<1x2x300x32xf32>, %cq: tensor<9xi32>,
                   %ck: tensor<9xi32>) -> (tensor<1x8x200x32xf32>, tensor<1x8x200xf32>) {
  %o, %l = attn.attention q(%q : tensor<1x8x200x32xf32>)
      k(%k : tensor<1x2x300x32xf32>) v(%v : tensor<1x2x300x32xf32>)
      ragged(%cq, %ck : tensor<9xi32>, tensor<9xi32>) causal(bottom_right)
      -> tensor<1x8x200x32xf32>, tensor<1x8x200xf32>
  return %o, %l : tensor<1x8x200x32xf32>, tensor<1x8x200xf32>
}

// FlashAttention's packed order, f16, i64 offsets, window and ALiBi on each
// sequence's top-left diagonal, soft cap.
func.func @varlen_bnhd(%q: tensor<1x90x4x16xf16>, %k: tensor<1x90x4x16xf16>,
                       %v: tensor<1x90x4x16xf16>, %cq: tensor<4xi64>,
                       %ck: tensor<4xi64>, %s: tensor<4xf32>) -> tensor<1x90x4x16xf16> {
  %o = attn.attention q(%q : tensor<1x90x4x16xf16>)
      k(%k : tensor<1x90x4x16xf16>) v(%v : tensor<1x90x4x16xf16>)
      ragged(%cq, %ck : tensor<4xi64>, tensor<4xi64>) layout(bnhd)
      alibi(%s : tensor<4xf32>) causal(top_left) window_left(9) softcap(5.0)
      -> tensor<1x90x4x16xf16>
  return %o : tensor<1x90x4x16xf16>
}

// Dynamic token counts and number of sequences.
func.func @dynamic(%q: tensor<1x4x?x16xf32>, %k: tensor<1x1x?x16xf32>,
                   %v: tensor<1x1x?x8xf32>, %cq: tensor<?xi32>,
                   %ck: tensor<?xi32>) -> tensor<1x4x?x8xf32> {
  %o = attn.attention q(%q : tensor<1x4x?x16xf32>)
      k(%k : tensor<1x1x?x16xf32>) v(%v : tensor<1x1x?x8xf32>)
      ragged(%cq, %ck : tensor<?xi32>, tensor<?xi32>) align(bottom_right)
      window_left(4) window_right(3) -> tensor<1x4x?x8xf32>
  return %o : tensor<1x4x?x8xf32>
}
