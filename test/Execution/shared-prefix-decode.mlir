// Shared-prefix (cascade) decode as a pattern of ops: the sequences'
// queries against the shared prefix at once (the batch folded into the
// query rows), each sequence's suffix through its page table, and
// attn.combine; checked in every form against an f64 reference computed
// from the saved inputs (one softmax over prefix and suffix keys), with
// suffix lengths 0 (prefix only), 1, a page boundary, and a full table.
// RUN: %python %S/Inputs/write_npy.py %t.pt.npy i4 6x4 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23
// RUN: %python %S/Inputs/write_npy.py %t.len.npy i4 6 0,1,8,9,17,32
// RUN: rm -rf %t.d && mkdir -p %t.d
// RUN: attn-run %s --entry=cascade --form=fused --reps=0 --input 5=%t.pt.npy --input 6=%t.len.npy --save-input 0=%t.d/q.npy --save-input 1=%t.d/kp.npy --save-input 2=%t.d/vp.npy --save-input 3=%t.d/ks.npy --save-input 4=%t.d/vs.npy --output 0=%t.d/out.npy --output 1=%t.d/lse.npy
// RUN: cp %t.pt.npy %t.d/pt.npy && cp %t.len.npy %t.d/len.npy
// RUN: %python %S/Inputs/cascade_check.py %t.d 1e-5 | FileCheck %s
// RUN: attn-run %s --entry=cascade --form=decode --reps=0 --input 5=%t.pt.npy --input 6=%t.len.npy --input 0=%t.d/q.npy --input 1=%t.d/kp.npy --input 2=%t.d/vp.npy --input 3=%t.d/ks.npy --input 4=%t.d/vs.npy --output 0=%t.d/out.npy --output 1=%t.d/lse.npy
// RUN: %python %S/Inputs/cascade_check.py %t.d 1e-5 | FileCheck %s
// RUN: attn-run %s --entry=cascade --form=naive --reps=0 --input 5=%t.pt.npy --input 6=%t.len.npy --input 0=%t.d/q.npy --input 1=%t.d/kp.npy --input 2=%t.d/vp.npy --input 3=%t.d/ks.npy --input 4=%t.d/vs.npy --output 0=%t.d/out.npy --output 1=%t.d/lse.npy
// RUN: %python %S/Inputs/cascade_check.py %t.d 1e-5 | FileCheck %s
// CHECK: cascade vs f64 reference: {{.*}} [ok
//
// A wrong merge is caught: the suffix's result alone fails the check.
// RUN: attn-run %s --entry=suffix_only --form=fused --reps=0 --input 5=%t.pt.npy --input 6=%t.len.npy --input 0=%t.d/q.npy --input 1=%t.d/kp.npy --input 2=%t.d/vp.npy --input 3=%t.d/ks.npy --input 4=%t.d/vs.npy --output 0=%t.d/out.npy --output 1=%t.d/lse.npy
// RUN: not %python %S/Inputs/cascade_check.py %t.d 1e-5 | FileCheck %s --check-prefix=WRONG
// WRONG: [FAIL
//
// The bundled example at its full size (64 sequences, 8192-token prefix,
// bf16) compiles and runs in the decode form:
// RUN: attn-run %attn_src_root/examples/serving/shared_prefix_decode.mlir --form=fused --reps=0 | FileCheck %s --check-prefix=EXAMPLE
// EXAMPLE: out: bf16 [64, 1, 32, 128]
func.func @cascade(%q: tensor<6x1x8x32xf32>, %kp: tensor<1x40x2x32xf32>,
                   %vp: tensor<1x40x2x32xf32>, %ks: tensor<24x8x2x32xf32>,
                   %vs: tensor<24x8x2x32xf32>, %pt: tensor<6x4xi32>,
                   %len: tensor<6xi32>)
    -> (tensor<6x1x8x32xf32>, tensor<6x8x1xf32>) {
  %q2 = tensor.collapse_shape %q [[0, 1], [2], [3]]
      : tensor<6x1x8x32xf32> into tensor<6x8x32xf32>
  %qp = tensor.expand_shape %q2 [[0, 1], [2], [3]] output_shape [1, 6, 8, 32]
      : tensor<6x8x32xf32> into tensor<1x6x8x32xf32>
  %op, %lp = attn.attention q(%qp : tensor<1x6x8x32xf32>)
      k(%kp : tensor<1x40x2x32xf32>) v(%vp : tensor<1x40x2x32xf32>)
      layout(bnhd) -> tensor<1x6x8x32xf32>, tensor<1x8x6xf32>
  %op2 = tensor.collapse_shape %op [[0, 1], [2], [3]]
      : tensor<1x6x8x32xf32> into tensor<6x8x32xf32>
  %op3 = tensor.expand_shape %op2 [[0, 1], [2], [3]] output_shape [6, 1, 8, 32]
      : tensor<6x8x32xf32> into tensor<6x1x8x32xf32>
  %lp2 = tensor.collapse_shape %lp [[0, 1], [2]]
      : tensor<1x8x6xf32> into tensor<8x6xf32>
  %init = tensor.empty() : tensor<6x8xf32>
  %lpt = linalg.transpose ins(%lp2 : tensor<8x6xf32>)
      outs(%init : tensor<6x8xf32>) permutation = [1, 0]
  %lp3 = tensor.expand_shape %lpt [[0], [1, 2]] output_shape [6, 8, 1]
      : tensor<6x8xf32> into tensor<6x8x1xf32>
  %os, %ls = attn.attention q(%q : tensor<6x1x8x32xf32>)
      k(%ks : tensor<24x8x2x32xf32>) v(%vs : tensor<24x8x2x32xf32>)
      layout(bnhd) page_table(%pt : tensor<6x4xi32>)
      kv_len(%len : tensor<6xi32>)
      -> tensor<6x1x8x32xf32>, tensor<6x8x1xf32>
  %o, %l = attn.combine a(%op3, %lp3 : tensor<6x1x8x32xf32>, tensor<6x8x1xf32>)
      b(%os, %ls : tensor<6x1x8x32xf32>, tensor<6x8x1xf32>) layout(bnhd)
      -> tensor<6x1x8x32xf32>, tensor<6x8x1xf32>
  return %o, %l : tensor<6x1x8x32xf32>, tensor<6x8x1xf32>
}

func.func @suffix_only(%q: tensor<6x1x8x32xf32>, %kp: tensor<1x40x2x32xf32>,
                       %vp: tensor<1x40x2x32xf32>, %ks: tensor<24x8x2x32xf32>,
                       %vs: tensor<24x8x2x32xf32>, %pt: tensor<6x4xi32>,
                       %len: tensor<6xi32>)
    -> (tensor<6x1x8x32xf32>, tensor<6x8x1xf32>) {
  %os, %ls = attn.attention q(%q : tensor<6x1x8x32xf32>)
      k(%ks : tensor<24x8x2x32xf32>) v(%vs : tensor<24x8x2x32xf32>)
      layout(bnhd) page_table(%pt : tensor<6x4xi32>)
      kv_len(%len : tensor<6xi32>)
      -> tensor<6x1x8x32xf32>, tensor<6x8x1xf32>
  return %os, %ls : tensor<6x1x8x32xf32>, tensor<6x8x1xf32>
}
