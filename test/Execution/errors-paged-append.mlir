// The paged kv_cache_append checks every write before the first: a page
// table entry outside the pool and a position past the page table are a
// run-time error naming the entry (or position) and its value, and nothing
// is written; attn-run prints it and exits 1, without a crash.
// RUN: %python %S/Inputs/write_npy.py %t.pt.npy i4 2x2 0,1,2,4
// RUN: %python %S/Inputs/write_npy.py %t.pos_pool.npy i4 2 1,2
// RUN: %python %S/Inputs/write_npy.py %t.pos_table.npy i4 2 3,3
// RUN: %python %S/Inputs/write_npy.py %t.pos_neg.npy i4 2 -1,0
// RUN: %python %S/Inputs/write_npy.py %t.pos_ok.npy i4 2 0,0
// RUN: not attn-run %s --reps=0 --input 3=%t.pt.npy --input 2=%t.pos_pool.npy 2>&1 | FileCheck %s --check-prefix=POOL
// RUN: not attn-run %s --reps=0 --input 3=%t.pt.npy --input 2=%t.pos_table.npy 2>&1 | FileCheck %s --check-prefix=TABLE
// RUN: not attn-run %s --reps=0 --input 3=%t.pt.npy --input 2=%t.pos_neg.npy 2>&1 | FileCheck %s --check-prefix=TABLE
// RUN: attn-run %s --reps=0 --input 3=%t.pt.npy --input 2=%t.pos_ok.npy | FileCheck %s --check-prefix=OK
// POOL: attn: kv_cache_append: a page_table entry lies outside the page pool: page_table[1, 1] = 4, the pool has 3 pages
// TABLE: attn: kv_cache_append writes past the page table (positions[b] + Nnew > max_pages * S): positions[{{[01]}}] = {{-1|3}} with 2 new rows, the table holds 4
// OK: result0: f32 [3, 1, 2, 4]
//
// Batch 1 writes tokens at positions p, p + 1 of pages [2, 4] (S = 2): p = 2
// reaches entry 4 of a 3-page pool; p = 3 runs past the 2-page table.
func.func @append(%kp: tensor<3x1x2x4xf32>, %kn: tensor<2x1x2x4xf32>,
                  %pos: tensor<2xi32>, %pt: tensor<2x2xi32>) -> tensor<3x1x2x4xf32> {
  %0 = attn.kv_cache_append cache(%kp : tensor<3x1x2x4xf32>)
      update(%kn : tensor<2x1x2x4xf32>) at(%pos : tensor<2xi32>)
      page_table(%pt : tensor<2x2xi32>) -> tensor<3x1x2x4xf32>
  return %0 : tensor<3x1x2x4xf32>
}
