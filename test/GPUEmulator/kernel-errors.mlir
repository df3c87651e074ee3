// What the emulator reports in hand-written kernels: the op's location, the
// block and the thread, and the rule broken.
// RUN: not attn-run %s --device=gpu-emulate --entry=oob 2>&1 | FileCheck %s --check-prefix=OOB
// RUN: not attn-run %s --device=gpu-emulate --entry=missing_wait 2>&1 | FileCheck %s --check-prefix=WAIT
// RUN: not attn-run %s --device=gpu-emulate --entry=missing_barrier 2>&1 | FileCheck %s --check-prefix=RACE
// RUN: attn-run %s --device=gpu-emulate --entry=missing_barrier --emulate-no-race-check | FileCheck %s --check-prefix=NORACE
// RUN: not attn-run %s --device=gpu-emulate --entry=divergent_mma 2>&1 | FileCheck %s --check-prefix=DIV
// RUN: not attn-run %s --device=gpu-emulate --entry=unsupported 2>&1 | FileCheck %s --check-prefix=UNSUP

// OOB: kernel-errors.mlir:[[@LINE+10]]:10: 'memref.load': out-of-bounds access of argument #0: index [64] in a memref of shape [64] (block (1, 0, 0), thread (31, 0, 0) [warp 0, lane 31])
func.func @oob(%g: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %base = arith.muli %bx, %c32 : index
    %i0 = arith.addi %base, %tx : index
    %i = arith.addi %i0, %c1 : index
    %v = memref.load %g[%i] : memref<64xf32>
    gpu.terminator
  }
  return
}

// WAIT: 'memref.load': reads shared memory (workgroup attribution 0, byte 0) that an asynchronous copy still in flight will write: a missing nvgpu.device_async_wait (block (0, 0, 0), thread (0, 0, 0)
func.func @missing_wait(%g: memref<32x4xf32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             workgroup(%sm : memref<32x4xf32, #gpu.address_space<workgroup>>) {
    %c0 = arith.constant 0 : index
    %t = nvgpu.device_async_copy %g[%tx, %c0], %sm[%tx, %c0], 4 : memref<32x4xf32> to memref<32x4xf32, #gpu.address_space<workgroup>>
    %grp = nvgpu.device_async_create_group %t
    %v = memref.load %sm[%tx, %c0] : memref<32x4xf32, #gpu.address_space<workgroup>>
    gpu.terminator
  }
  return
}

// RACE: 'memref.load': reads shared memory (workgroup attribution 0, byte 4) that thread 1 wrote since the last barrier: a missing gpu.barrier (block (0, 0, 0), thread (0, 0, 0)
// NORACE: emulate:
func.func @missing_barrier(%out: memref<32xf32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             workgroup(%sm : memref<32xf32, #gpu.address_space<workgroup>>) {
    %x = arith.constant 2.0 : f32
    memref.store %x, %sm[%tx] : memref<32xf32, #gpu.address_space<workgroup>>
    %n0 = arith.addi %tx, %c1 : index
    %n = arith.remui %n0, %c32 : index
    %v = memref.load %sm[%n] : memref<32xf32, #gpu.address_space<workgroup>>
    memref.store %v, %out[%tx] : memref<32xf32>
    gpu.terminator
  }
  return
}

// DIV: 'nvgpu.mma.sync': a warp-level op executed by 8 of the 32 threads of a warp (divergent control flow) (block (0, 0, 0), thread (0, 0, 0)
func.func @divergent_mma(%out: memref<32x2x2xf32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %c8 = arith.constant 8 : index
    %lo = arith.cmpi ult, %tx, %c8 : index
    scf.if %lo {
      %a = arith.constant dense<1.0> : vector<4x2xf16>
      %b = arith.constant dense<1.0> : vector<2x2xf16>
      %c = arith.constant dense<0.0> : vector<2x2xf32>
      %d = nvgpu.mma.sync (%a, %b, %c) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
    }
    gpu.terminator
  }
  return
}

// UNSUP: 'math.sin': the GPU emulator does not support this op
func.func @unsupported(%g: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %c0 = arith.constant 0 : index
    %v = memref.load %g[%c0] : memref<4xf32>
    %s = math.sin %v : f32
    gpu.terminator
  }
  return
}
