// Hand-written kernels on the warp-level emulator through attn-run: lane-level
// results that the PTX ISA fixes.
// RUN: attn-run %s --device=gpu-emulate --entry=ldmatrix_trans --print | FileCheck %s --check-prefix=LDM
// RUN: attn-run %s --device=gpu-emulate --entry=shuffle_sum --print | FileCheck %s --check-prefix=SHFL
// RUN: attn-run %s --device=gpu-emulate --entry=cp_async --print | FileCheck %s --check-prefix=CP

// ldmatrix .x1 .trans of the 8x8 matrix M[r][c] = 8r + c: lane l gets
// M[2 (l % 4) + j][l / 4], j = 0, 1.
// LDM: emulate: {{.*}}1 launch, 1 blocks, 32 threads; 0 mma.sync, 1 ldmatrix
// LDM-NEXT: arg0: f16 [32, 2] sum 2016
// LDM-NEXT: 0 8 16 24 32 40 48 56
// LDM-NEXT: 1 9 17 25 33 41 49 57
func.func @ldmatrix_trans(%out: memref<32x2xf16>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             workgroup(%sm : memref<8x8xf16, #gpu.address_space<workgroup>>) {
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    // Thread t writes elements 2t and 2t + 1 (row t / 4).
    %r = arith.divui %tx, %c4 : index
    %c0i = arith.remui %tx, %c4 : index
    %col = arith.muli %c0i, %c2 : index
    %e = arith.muli %tx, %c2 : index
    %ei = arith.index_cast %e : index to i32
    %v0 = arith.sitofp %ei : i32 to f16
    %one = arith.constant 1.0 : f16
    %v1 = arith.addf %v0, %one : f16
    %col1 = arith.addi %col, %c1 : index
    memref.store %v0, %sm[%r, %col] : memref<8x8xf16, #gpu.address_space<workgroup>>
    memref.store %v1, %sm[%r, %col1] : memref<8x8xf16, #gpu.address_space<workgroup>>
    gpu.barrier
    %row = arith.remui %tx, %c8 : index
    %m = nvgpu.ldmatrix %sm[%row, %c0] {numTiles = 1 : i32, transpose = true} : memref<8x8xf16, #gpu.address_space<workgroup>> -> vector<1x2xf16>
    %flat = vector.shape_cast %m : vector<1x2xf16> to vector<2xf16>
    vector.store %flat, %out[%tx, %c0] : memref<32x2xf16>, vector<2xf16>
    gpu.terminator
  }
  return
}

// A butterfly sum over the warp: every lane ends with 0 + 1 + ... + 31.
// SHFL: 5 shuffles
// SHFL: arg0: i32 [32] sum 15872
// SHFL-NEXT: 496 496 496 496 496 496 496 496
func.func @shuffle_sum(%out: memref<32xi32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %w = arith.constant 32 : i32
    %x0 = arith.index_cast %tx : index to i32
    %o1 = arith.constant 1 : i32
    %s1, %v1 = gpu.shuffle xor %x0, %o1, %w : i32
    %x1 = arith.addi %x0, %s1 : i32
    %o2 = arith.constant 2 : i32
    %s2, %v2 = gpu.shuffle xor %x1, %o2, %w : i32
    %x2 = arith.addi %x1, %s2 : i32
    %o4 = arith.constant 4 : i32
    %s4, %v4 = gpu.shuffle xor %x2, %o4, %w : i32
    %x4 = arith.addi %x2, %s4 : i32
    %o8 = arith.constant 8 : i32
    %s8, %v8 = gpu.shuffle xor %x4, %o8, %w : i32
    %x8 = arith.addi %x4, %s8 : i32
    %o16 = arith.constant 16 : i32
    %s16, %v16 = gpu.shuffle xor %x8, %o16, %w : i32
    %x16 = arith.addi %x8, %s16 : i32
    memref.store %x16, %out[%tx] : memref<32xi32>
    gpu.terminator
  }
  return
}

// cp.async with zero fill: each thread copies 4 floats of which the first
// `t % 5` come from global memory (here 1.0), the rest are zeros.
// CP: 32 cp.async
// CP: arg1: f32 [32, 4] sum 61
// CP-NEXT: 0 0 0 0 1 0 0 0
// CP-NEXT: 1 1 0 0 1 1 1 0
// CP-NEXT: 1 1 1 1 0 0 0 0
func.func @cp_async(%g: memref<32x4xf32>, %out: memref<32x4xf32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             workgroup(%sm : memref<32x4xf32, #gpu.address_space<workgroup>>) {
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %c5 = arith.constant 5 : index
    %f1 = arith.constant 1.0 : f32
    scf.for %j = %c0 to %c4 step %c1 {
      memref.store %f1, %g[%tx, %j] : memref<32x4xf32>
    }
    %n = arith.remui %tx, %c5 : index
    %t = nvgpu.device_async_copy %g[%tx, %c0], %sm[%tx, %c0], 4, %n {bypassL1} : memref<32x4xf32> to memref<32x4xf32, #gpu.address_space<workgroup>>
    %grp = nvgpu.device_async_create_group %t
    nvgpu.device_async_wait %grp {numGroups = 0 : i32}
    scf.for %j = %c0 to %c4 step %c1 {
      %v = memref.load %sm[%tx, %j] : memref<32x4xf32, #gpu.address_space<workgroup>>
      memref.store %v, %out[%tx, %j] : memref<32x4xf32>
    }
    gpu.terminator
  }
  return
}
