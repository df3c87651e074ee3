// REQUIRES: cuda-toolkit
// The PTX of the GPU form: tensor-core and asynchronous-copy instructions,
// exp2 as ex2.approx, libdevice linked (no unresolved externals).
// RUN: attn-compile %s --entry=gqa --gpu-chip=sm_80 --emit=ptx -o - | FileCheck %s
// RUN: attn-compile %s --entry=gqa_bf16 --gpu-chip=sm_90a --emit=ptx -o - | FileCheck %s --check-prefix=SM90
// RUN: not attn-compile %s --gpu-chip=sm_90a --emit=ptx -o - 2>&1 | FileCheck %s --check-prefix=TWO
// RUN: not attn-compile %s --entry=gqa --emit=ptx -o - 2>&1 | FileCheck %s --check-prefix=NOCHIP
// CUBIN: a cubin for the chip.
// RUN: attn-compile %s --entry=gqa --gpu-chip=sm_90a --emit=cubin -o %t.cubin
// RUN: od -A n -t x1 -N 4 %t.cubin | FileCheck %s --check-prefix=ELF

// CHECK: .target sm_80
// CHECK-NOT: .extern .func
// CHECK: .entry gqa_attention(
// CHECK: .maxntid 128, 1, 1
// CHECK: .minnctapersm 1
// CHECK-DAG: cp.async.cg.shared.global [{{.*}}], [{{.*}}], 16, {{.*}};
// CHECK-DAG: cp.async.commit_group;
// CHECK-DAG: cp.async.wait_group 0;
// CHECK-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK-DAG: cp.async.wait_group 1;
// CHECK-DAG: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// CHECK-DAG: shfl.sync.bfly.b32
// CHECK-DAG: ex2.approx
// CHECK-DAG: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// SM90: .target sm_90a
// SM90: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// ELF: 7f 45 4c 46
// TWO: attn-compile: error: expected one GPU binary, found 2 (compile one kernel at a time with --entry)
// NOCHIP: attn-compile: error: --emit=ptx and --emit=cubin need --gpu-chip

func.func @gqa(%q: tensor<2x8x200x64xf16>, %k: tensor<2x2x300x64xf16>,
               %v: tensor<2x2x300x64xf16>)
    -> (tensor<2x8x200x64xf16>, tensor<2x8x200xf32>) {
  %o, %lse = attn.attention q(%q : tensor<2x8x200x64xf16>)
      k(%k : tensor<2x2x300x64xf16>) v(%v : tensor<2x2x300x64xf16>)
      causal(bottom_right) -> tensor<2x8x200x64xf16>, tensor<2x8x200xf32>
  return %o, %lse : tensor<2x8x200x64xf16>, tensor<2x8x200xf32>
}

func.func @gqa_bf16(%q: tensor<1x4x64x128xbf16>, %k: tensor<1x1x64x128xbf16>,
                    %v: tensor<1x1x64x128xbf16>) -> tensor<1x4x64x128xbf16> {
  %o = attn.attention q(%q : tensor<1x4x64x128xbf16>)
      k(%k : tensor<1x1x64x128xbf16>) v(%v : tensor<1x1x64x128xbf16>)
      -> tensor<1x4x64x128xbf16>
  return %o : tensor<1x4x64x128xbf16>
}
