// A page table entry outside the page pool, for a page a sequence reads, is a
// run-time error naming the entry and its value instead of a read outside the
// pool, in every form: attn-run prints it and exits 1, without a crash (the
// reference's own check: ReferenceTest, PagedBadEntry).
// Entries past a sequence's last page are never read (the -7 below is
// harmless).
// RUN: %python %S/Inputs/write_npy.py %t.pt.npy i4 2x3 1,3,-7,0,2,5
// RUN: %python %S/Inputs/write_npy.py %t.len.npy i4 2 5,6
// RUN: not attn-run %s --form=naive --reps=0 --input page_table=%t.pt.npy --input kv_len=%t.len.npy 2>&1 | FileCheck %s
// RUN: not attn-run %s --form=fused --reps=0 --input page_table=%t.pt.npy --input kv_len=%t.len.npy 2>&1 | FileCheck %s
// RUN: not attn-run %s --form=decode --reps=0 --input page_table=%t.pt.npy --input kv_len=%t.len.npy 2>&1 | FileCheck %s
// CHECK: attn-run: error: run failed: attn: a page_table entry that a sequence reads lies outside the page pool: page_table[0, 2] = -7, the pool has 4 pages
// CHECK-NOT: PLEASE submit a bug report
//
// With lengths that stay within the valid entries everything runs.
// RUN: %python %S/Inputs/write_npy.py %t.len2.npy i4 2 4,4
// RUN: attn-run %s --verify --reps=1 --input page_table=%t.pt.npy --input kv_len=%t.len2.npy | FileCheck %s --check-prefix=OK
// OK: vs reference: {{.*}} [ok
func.func @bad_page(%q: tensor<2x2x3x8xf32>, %kp: tensor<4x2x2x8xf32>,
                    %vp: tensor<4x2x2x8xf32>, %pt: tensor<2x3xi32>,
                    %len: tensor<2xi32>) -> tensor<2x2x3x8xf32> {
  %o = attn.attention q(%q : tensor<2x2x3x8xf32>)
      k(%kp : tensor<4x2x2x8xf32>) v(%vp : tensor<4x2x2x8xf32>)
      page_table(%pt : tensor<2x3xi32>) kv_len(%len : tensor<2xi32>)
      -> tensor<2x2x3x8xf32>
  return %o : tensor<2x2x3x8xf32>
}
