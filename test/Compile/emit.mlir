// RUN: attn-compile %S/Inputs/small.mlir --emit=header -o - | FileCheck %s --check-prefix=HEADER
// RUN: attn-compile %S/Inputs/small.mlir --emit=mlir | FileCheck %s --check-prefix=MLIR
// RUN: attn-compile %S/Inputs/small.mlir --emit=llvm --prefix=k_ | FileCheck %s --check-prefix=LLVM
// RUN: attn-compile %S/Inputs/small.mlir --emit=asm --target-cpu=haswell | FileCheck %s --check-prefix=ASM
// RUN: attn-compile %S/Inputs/small.mlir --emit=obj -o %t.o --header=%t.h
// RUN: llvm-nm --extern-only --defined-only %t.o | FileCheck %s --check-prefix=NM
// RUN: FileCheck %s --check-prefix=HEADER < %t.h
// RUN: attn-compile %S/Inputs/small.mlir --emit=lib -o %t.a
// RUN: llvm-nm --extern-only --defined-only %t.a | FileCheck %s --check-prefix=NM
// RUN: attn-compile %S/Inputs/small.mlir --emit=shared -o %t.so --parallel=false
// RUN: llvm-nm --dynamic --extern-only --defined-only %t.so | FileCheck %s --check-prefix=NM
//
// Every --emit of attn-compile on one small spec.

// HEADER: #include <attn-c/Kernel.h>
// HEADER: q: f32[1,2,4,8] (DLPack code 2, 32 bits) B,Hq,Nq,Dqk, input
// HEADER: out: f32[1,2,4,8] (DLPack code 2, 32 bits) B,Hq,Nq,Dv, output
// HEADER: attn_status_t attn_small(const DLTensor *q, const DLTensor *k, const DLTensor *v, DLTensor *out, const attn_exec_options_t *options);
// HEADER: attn_status_t attn_small_workspace_size(const DLTensor *q, const DLTensor *k, const DLTensor *v, DLTensor *out, size_t *bytes);
// HEADER: const attn_kernel_info_t *attn_small_info(void);
// HEADER: const attn_kernel_info_t *const *attn_kernels(int32_t *count);
// HEADER: attn_status_t attn_dispatch(

// MLIR: llvm.func @_mlir_ciface_small(

// LLVM-DAG: define i32 @k_small(ptr {{.*}}, ptr {{.*}}, ptr {{.*}}, ptr {{.*}}, ptr {{.*}})
// LLVM-DAG: define i32 @k_small_workspace_size(
// LLVM-DAG: define {{.*}}ptr @k_small_info()
// LLVM-DAG: define {{.*}}ptr @k_kernels(ptr
// LLVM-DAG: define i32 @k_dispatch(ptr
// LLVM-DAG: declare {{.*}}i32 @attn_kernel_call(ptr, ptr, i32, ptr)
// LLVM-DAG: define internal void @__attn_packed_small(ptr
// LLVM-NOT: define {{.*}}@_mlir_ciface_small(

// ASM: attn_small:

// NM-DAG: T attn_dispatch
// NM-DAG: T attn_kernels
// NM-DAG: T attn_small
// NM-DAG: T attn_small_info
// NM-DAG: T attn_small_workspace_size
