// The decode form's split count chosen at run time (--splits=-1, the
// default): 1 where the grid runs on one thread, else enough chunks for two
// work items per thread, at most one per key tile, and only as many as
// chunks of ceil(tiles / count) tiles fill. One (batch, K/V head) item here
// and 8 key tiles of 128 keys: 1 thread -> 1 split, 3 threads -> 6 wanted,
// chunks of 2 tiles -> 4 splits, 8 threads -> 8, 64 threads -> 8 (the cap). Every count gives the reference's output; the partial states
// (R 8 x Dv 128 f32 per split, 4 KiB) show the count in the kernel's peak
// memory: under 0.02 MiB for 1 split (with the kernel's other buffers),
// 0.02 MiB for 4, over 0.03 MiB for 8.
//
// RUN: env OMP_NUM_THREADS=1 attn-run %s --form=decode --verify --reps=1 | FileCheck %s --check-prefix=ONE
// RUN: env OMP_NUM_THREADS=8 attn-run %s --form=decode --verify --reps=1 | FileCheck %s --check-prefix=EIGHT
// RUN: env OMP_NUM_THREADS=64 attn-run %s --form=decode --verify --reps=1 | FileCheck %s --check-prefix=EIGHT
// RUN: env OMP_NUM_THREADS=3 attn-run %s --form=decode --verify --reps=1 | FileCheck %s --check-prefix=FOUR
// Grids that run on the calling thread get 1 split: below the work
// threshold, or built without OpenMP.
// RUN: env OMP_NUM_THREADS=8 attn-run %s --form=decode --min-parallel-work=1000000000 --verify --reps=1 | FileCheck %s --check-prefix=ONE
// RUN: env OMP_NUM_THREADS=8 attn-run %s --form=decode --parallel=false --verify --reps=1 | FileCheck %s --check-prefix=ONE
// Counts that are neither positive nor -1 are errors.
// RUN: not attn-run %s --form=decode --splits=0 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not attn-run %s --form=decode --splits=-2 2>&1 | FileCheck %s --check-prefix=NEG
// ZERO: --splits=0: expected a positive count or -1 (chosen at run time)
// NEG: --splits=-2: expected a positive count or -1 (chosen at run time)
// A fixed count stays fixed.
// RUN: env OMP_NUM_THREADS=1 attn-run %s --form=decode --splits=8 --verify --reps=1 | FileCheck %s --check-prefix=FIXED
//
// ONE: lowering: form decode, tiles 16 x 128, key splits chosen at run time
// ONE: memory: peak {{0\.0[01][0-9]}} MiB allocated by the kernel
// ONE: [ok
// EIGHT: memory: peak {{0\.0[3-9][0-9]}} MiB allocated by the kernel
// EIGHT: [ok
// FOUR: memory: peak {{0\.02[0-9]}} MiB allocated by the kernel
// FOUR: [ok
// FIXED: lowering: form decode, tiles 16 x 128, 8 key splits
// FIXED: memory: peak {{0\.0[3-9][0-9]}} MiB allocated by the kernel
// FIXED: [ok
func.func @decode(%q: tensor<1x8x1x128xf32>, %k: tensor<1x1x1024x128xf32>,
                  %v: tensor<1x1x1024x128xf32>) -> tensor<1x8x1x128xf32> {
  %o = attn.attention q(%q : tensor<1x8x1x128xf32>)
      k(%k : tensor<1x1x1024x128xf32>) v(%v : tensor<1x1x1024x128xf32>)
      -> tensor<1x8x1x128xf32>
  return %o : tensor<1x8x1x128xf32>
}
