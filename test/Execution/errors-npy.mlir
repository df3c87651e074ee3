// attn-run's error paths for files, options and .npy inputs; each must fail
// with a non-zero exit status and a message that names the problem.
//
// RUN: %python %S/Inputs/write_npy.py %t.q.npy f4 1x1x2x2 1,0,0,1
// RUN: %python %S/Inputs/write_npy.py %t.len.npy i4 1 2
// RUN: %python %S/Inputs/write_npy.py %t.q_f8.npy f8 1x1x2x2 1,0,0,1
// RUN: %python %S/Inputs/write_npy.py %t.len_i8.npy i8 1 2
// RUN: %python %S/Inputs/write_npy.py %t.q_shape.npy f4 1x1x3x2 zeros
// RUN: %python %S/Inputs/write_npy.py %t.q_rank.npy f4 2x2 zeros
//
// The happy path first: .npy inputs for q and kv_len, the rest random.
// RUN: attn-run %s --input q=%t.q.npy --input kv_len=%t.len.npy --verify --reps=1 | FileCheck %s --check-prefix=OK
// OK: out: f32 [1, 1, 2, 2] {{.*}} [ok
//
// RUN: not attn-run %t.does-not-exist.mlir 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: attn-run: error: cannot open input file '{{.*}}does-not-exist.mlir'
//
// RUN: not attn-run %s --no-such-option 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: Unknown command line argument '--no-such-option'
//
// RUN: not attn-run %s --input q=%t.q_f8.npy 2>&1 | FileCheck %s --check-prefix=DTYPE
// DTYPE: attn-run: error: input q: {{.*}}q_f8.npy has dtype '<f8', the spec takes f32 ('<f4')
//
// RUN: not attn-run %s --input kv_len=%t.len_i8.npy 2>&1 | FileCheck %s --check-prefix=DTYPE-INT
// DTYPE-INT: attn-run: error: input kv_len: {{.*}}len_i8.npy has dtype '<i8', the spec takes i32 ('<i4')
//
// RUN: not attn-run %s --input q=%t.q_shape.npy 2>&1 | FileCheck %s --check-prefix=SHAPE
// SHAPE: attn-run: error: input q: {{.*}}q_shape.npy has shape [1, 1, 3, 2], the spec takes size 2 in dimension 2
//
// RUN: not attn-run %s --input q=%t.q_rank.npy 2>&1 | FileCheck %s --check-prefix=RANK
// RANK: attn-run: error: input q: {{.*}}q_rank.npy has shape [2, 2], the spec takes rank 4
//
// RUN: not attn-run %s --input q=%t.no-such-file.npy 2>&1 | FileCheck %s --check-prefix=NONPY
// NONPY: attn-run: error: input q: {{.*}}no-such-file.npy
//
// RUN: not attn-run %s --input nosuch=%t.q.npy 2>&1 | FileCheck %s --check-prefix=BADARG
// BADARG: attn-run: error: bad --input 'nosuch={{.*}}': expected ARG=path.npy
//
// RUN: not attn-run %s --size X=3 2>&1 | FileCheck %s --check-prefix=BADSIZE
// BADSIZE: attn-run: error: bad --size 'X=3'
//
// RUN: not attn-run %s --output nosuch=%t.out.npy 2>&1 | FileCheck %s --check-prefix=BADOUT
// BADOUT: attn-run: error: bad --output 'nosuch={{.*}}': no result named 'nosuch'

func.func @f(%q: tensor<1x1x2x2xf32>, %k: tensor<1x1x3x2xf32>,
             %v: tensor<1x1x3x2xf32>, %kv_len: tensor<1xi32>)
    -> tensor<1x1x2x2xf32> {
  %out = attn.attention q(%q : tensor<1x1x2x2xf32>) k(%k : tensor<1x1x3x2xf32>)
      v(%v : tensor<1x1x3x2xf32>) kv_len(%kv_len : tensor<1xi32>)
      -> tensor<1x1x2x2xf32>
  return %out : tensor<1x1x2x2xf32>
}
