// attn-run --device=gpu over the fake CUDA driver (FakeCuda.cpp): the whole
// path runs (lowering, the JIT'd host code, device buffers, the module load,
// the launches on attn-run's stream, event timing, the copies back), but the
// fake driver executes no kernel: the outputs keep the NaN bit patterns
// attn-run fills them with, and --verify fails. FAKE_CUDA_TRACE=1 prints the
// driver calls to stderr. Needs the CUDA toolkit's libdevice for lowering.
// REQUIRES: cuda-toolkit

// RUN: env ATTN_CUDA_DRIVER=%fake_cuda FAKE_CUDA_TRACE=1 not attn-run %s \
// RUN:   --entry=gqa_causal --device=gpu --verify --reps=2 \
// RUN:   --report=%t-gqa.json > %t-gqa.out 2> %t-gqa.err
// RUN: FileCheck %s --check-prefix=GQA < %t-gqa.out
// RUN: FileCheck %s --check-prefix=GQA-TRACE < %t-gqa.err
// RUN: FileCheck %s --check-prefix=GQA-REPORT < %t-gqa.json
// GQA: device: 0: Fake GPU 0, sm_90, 132 SMs, 141.0 GiB
// GQA-NEXT: compile: {{[0-9.]+}} s (chip sm_90a, PTX compiled by the driver at the first launch, warps 4, tile-k 64)
// The fake clock advances 1.5 ms per event record.
// GQA-NEXT: run: 0.001500 s median of 2 (min 0.001500, max 0.001500; CUDA events), {{[0-9.]+}} TFLOP/s, {{[0-9.]+}} GB/s ({{[0-9.]+}}% of 4023 GB/s); first call {{[0-9.]+}} s
// GQA-NEXT: out: f16 [2, 8, 37, 64] sum 0 abs-sum 0 | vs reference: max abs err inf, {{.*}} [FAIL atol 0.002 rtol 0.01, 37888 mismatches, first at 0: got nan, expected
// GQA-NEXT: lse: f32 [2, 8, 37] sum 0 abs-sum 0 | vs reference: {{.*}} [FAIL atol 0.0001 rtol 0.001, 592 mismatches
// Inputs in, outputs NaN-filled, on one stream the generated code uses.
// GQA-TRACE-COUNT-3: fake-cuda: cuMemcpyHtoD
// GQA-TRACE-NEXT: fake-cuda: cuStreamSynchronize s0
// GQA-TRACE-NEXT: fake-cuda: cuStreamCreate s1
// GQA-TRACE-NOT: cuStreamCreate
// GQA-TRACE: fake-cuda: cuMemsetD8Async 75776 s1
// GQA-TRACE: fake-cuda: cuMemsetD8Async 2368 s1
// The first call loads the PTX (the driver's JIT) and launches on s1.
// GQA-TRACE: fake-cuda: cuModuleLoadDataEx // O{{[0-4]}}
// GQA-TRACE: fake-cuda: cuModuleGetFunction [[KERNEL:gqa_causal[a-z0-9_]*]]
// GQA-TRACE-NEXT: fake-cuda: cuLaunchKernel [[KERNEL]] grid={{[0-9]+,[0-9]+,[0-9]+}} block={{[0-9]+}},1,1 smem={{[0-9]+}} stream=s1
// GQA-TRACE: fake-cuda: cuStreamSynchronize s1
// GQA-TRACE: fake-cuda: cuMemcpyDtoH 75776
// GQA-TRACE: fake-cuda: cuMemcpyDtoH 2368
// Two timed calls between event records; the module stays loaded.
// GQA-TRACE: fake-cuda: cuEventRecord s1
// GQA-TRACE-NOT: cuStreamSynchronize
// GQA-TRACE: fake-cuda: cuLaunchKernel [[KERNEL]] {{.*}} stream=s1
// GQA-TRACE-NEXT: fake-cuda: cuEventRecord s1
// GQA-TRACE-NEXT: fake-cuda: cuEventSynchronize
// GQA-TRACE-NEXT: fake-cuda: cuEventElapsedTime
// GQA-TRACE-NEXT: fake-cuda: cuEventRecord s1
// GQA-TRACE-NOT: cuStreamSynchronize
// GQA-TRACE: fake-cuda: cuLaunchKernel [[KERNEL]] {{.*}} stream=s1
// GQA-TRACE-NEXT: fake-cuda: cuEventRecord s1
// GQA-TRACE-NOT: cuModuleLoad
// GQA-TRACE: attn-run: error: outputs differ from the reference beyond tolerance
// Everything is released: the stream, the five buffers, the module.
// GQA-TRACE-NEXT: fake-cuda: cuStreamDestroy s1
// GQA-TRACE-COUNT-5: fake-cuda: cuMemFree
// GQA-TRACE-NEXT: fake-cuda: cuModuleUnload
// GQA-REPORT: "device": "gpu",
// What the lowering chose (--gpu-warps 0: four warps, 64 query rows).
// GQA-REPORT: "lowering": [
// GQA-REPORT: "form": "gpu",
// GQA-REPORT-NEXT: "tile_q": 64,
// GQA-REPORT-NEXT: "tile_k": 64,
// GQA-REPORT: "chip": "sm_90a",
// GQA-REPORT: "warps": 4,
// GQA-REPORT: "tile_k": 64
// GQA-REPORT: "median_s": 0.0015
// GQA-REPORT: "verified": false,
// GQA-REPORT-NEXT: "max_abs_error": [
// GQA-REPORT-NEXT: null,

// Decoding against a 256-entry cache: the split-KV kernel, then the merge.
// RUN: env ATTN_CUDA_DRIVER=%fake_cuda FAKE_CUDA_TRACE=1 not attn-run %s \
// RUN:   --entry=decode --device=gpu --verify --reps=1 2>&1 \
// RUN:   | FileCheck %s --check-prefix=DEC
// The partial results' workspace is allocated and freed on s1 too.
// DEC: fake-cuda: cuMemAllocAsync {{[0-9]+}} s1
// DEC: fake-cuda: cuLaunchKernel {{decode[a-z0-9_]*split[a-z0-9_]*}} {{.*}} stream=s1
// DEC-NEXT: fake-cuda: cuModuleGetFunction [[MERGE:decode[a-z0-9_]*merge[a-z0-9_]*]]
// DEC-NEXT: fake-cuda: cuLaunchKernel [[MERGE]] {{.*}} stream=s1
// DEC-NEXT: fake-cuda: cuMemFreeAsync s1
// DEC: out: f16 [2, 8, 1, 64] sum 0 abs-sum 0 | vs reference: {{.*}} [FAIL

// An f32 spec is held to bf16's tolerance (the kernels stage f32 as bf16);
// without --verify the mismatches are not an error. --gpu-chip and the
// emulator's --gpu-warps / --gpu-tile-k reach the lowering.
// RUN: env ATTN_CUDA_DRIVER=%fake_cuda attn-run %s --entry=f32_window \
// RUN:   --device=gpu --gpu-chip=sm_80 --gpu-warps=2 --gpu-tile-k=32 \
// RUN:   --reps=0 | FileCheck %s --check-prefix=F32
// F32: compile: {{.*}} (chip sm_80, PTX compiled by the driver at the first launch, warps 2, tile-k 32)
// F32: run: {{.*}} median of 1 {{.*}}first call, host clock)
// F32: out: f32 [1, 4, 64, 32] sum 0 abs-sum 0 | vs reference: max abs err inf
// RUN: env ATTN_CUDA_DRIVER=%fake_cuda not attn-run %s --entry=f32_window \
// RUN:   --device=gpu --verify --reps=0 | FileCheck %s --check-prefix=F32V
// F32V: out: f32 {{.*}} [FAIL atol 0.02 rtol 0.04,

// A driver error in the generated code's calls is reported, not ignored.
// RUN: env ATTN_CUDA_DRIVER=%fake_cuda FAKE_CUDA_FAIL=cuLaunchKernel=700 \
// RUN:   not attn-run %s --entry=gqa_causal --device=gpu 2>&1 \
// RUN:   | FileCheck %s --check-prefix=LAUNCH
// LAUNCH: attn-run: error: --device=gpu: the run failed: cuLaunchKernel: CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)
// RUN: env ATTN_CUDA_DRIVER=%fake_cuda FAKE_CUDA_FAIL=cuModuleLoadDataEx=218 \
// RUN:   not attn-run %s --entry=gqa_causal --device=gpu 2>&1 \
// RUN:   | FileCheck %s --check-prefix=LOAD
// LOAD: attn-run: error: --device=gpu: the run failed: cuModuleLoadDataEx (PTX JIT): CUDA_ERROR_INVALID_PTX

// Code the device cannot run is refused before anything is loaded.
// RUN: env ATTN_CUDA_DRIVER=%fake_cuda not attn-run %s --entry=f32_window \
// RUN:   --device=gpu --gpu-chip=sm_100a 2>&1 | FileCheck %s --check-prefix=NEWER
// NEWER: attn-run: error: --device=gpu: code for sm_100a (format isa) cannot run on device 0 (Fake GPU 0, sm_90)
// RUN: env ATTN_CUDA_DRIVER=%fake_cuda not attn-run %s --entry=f32_window \
// RUN:   --device=gpu --gpu-device=3 2>&1 | FileCheck %s --check-prefix=DEVNUM
// DEVNUM: attn-run: error: --device=gpu: CUDA device 3: there are 1 CUDA devices

// The host code of every kind of GPU form JIT-compiles and runs over the
// fake driver (its kernels do nothing): the error word's copies and fills
// (regions reading mod_inputs, paged K/V, ragged batches) and the
// projections' buffers and GEMM launches.
// RUN: for f in "variants/document_mask.mlir --size Nq=128,Nk=128" \
// RUN:   "gpu/paged_decode_f16.mlir --size B=2,Pages=24,MaxPages=8" \
// RUN:   "gpu/ragged_prefill_bf16.mlir --size Seqs=3,Nq=200,Nk=300" \
// RUN:   "projected_self_attention.mlir"; do \
// RUN:   env ATTN_CUDA_DRIVER=%fake_cuda attn-run %attn_src_root/examples/$f \
// RUN:     --device=gpu --reps=1 || exit 1; done 2>&1 | FileCheck %s --check-prefix=HOSTS
// HOSTS-COUNT-4: run: {{.*}}; CUDA events)

// A spec the GPU form does not support.
// RUN: env ATTN_CUDA_DRIVER=%fake_cuda not attn-run %s --entry=head_dim_40 \
// RUN:   --device=gpu 2>&1 | FileCheck %s --check-prefix=NOTGPU
// NOTGPU: error: 'attn.attention' op cannot be lowered to the GPU: head dimensions must be static multiples of 16 up to 256 (got Dqk = 40, Dv = 40)
// NOTGPU-NOT: see current operation
// NOTGPU: attn-run: error: --device=gpu: lowering to GPU kernels failed

func.func @gqa_causal(%q: tensor<2x8x37x64xf16>, %k: tensor<2x2x37x64xf16>,
                      %v: tensor<2x2x37x64xf16>)
    -> (tensor<2x8x37x64xf16>, tensor<2x8x37xf32>) {
  %out, %lse = attn.attention q(%q : tensor<2x8x37x64xf16>)
      k(%k : tensor<2x2x37x64xf16>) v(%v : tensor<2x2x37x64xf16>)
      causal(top_left) -> tensor<2x8x37x64xf16>, tensor<2x8x37xf32>
  return %out, %lse : tensor<2x8x37x64xf16>, tensor<2x8x37xf32>
}

func.func @decode(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x256x64xf16>,
                  %v: tensor<2x2x256x64xf16>, %kv_len: tensor<2xi32>)
    -> (tensor<2x8x1x64xf16>, tensor<2x8x1xf32>) {
  %out, %lse = attn.attention q(%q : tensor<2x8x1x64xf16>)
      k(%k : tensor<2x2x256x64xf16>) v(%v : tensor<2x2x256x64xf16>)
      kv_len(%kv_len : tensor<2xi32>) causal(bottom_right)
      -> tensor<2x8x1x64xf16>, tensor<2x8x1xf32>
  return %out, %lse : tensor<2x8x1x64xf16>, tensor<2x8x1xf32>
}

func.func @f32_window(%q: tensor<1x4x64x32xf32>, %k: tensor<1x4x64x32xf32>,
                      %v: tensor<1x4x64x32xf32>) -> tensor<1x4x64x32xf32> {
  %out = attn.attention q(%q : tensor<1x4x64x32xf32>)
      k(%k : tensor<1x4x64x32xf32>) v(%v : tensor<1x4x64x32xf32>)
      causal(top_left) window_left(16) -> tensor<1x4x64x32xf32>
  return %out : tensor<1x4x64x32xf32>
}

func.func @head_dim_40(%q: tensor<1x2x16x40xf16>) -> tensor<1x2x16x40xf16> {
  %o = attn.attention q(%q : tensor<1x2x16x40xf16>)
      k(%q : tensor<1x2x16x40xf16>) v(%q : tensor<1x2x16x40xf16>)
      -> tensor<1x2x16x40xf16>
  return %o : tensor<1x2x16x40xf16>
}
