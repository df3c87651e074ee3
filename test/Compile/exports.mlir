// RUN: attn-compile %attn_src_root/test/Consumers/c-kernel/kernels.mlir --emit=obj -o %t.o --prefix=my_
// RUN: llvm-nm --extern-only --defined-only --format=just-symbols %t.o | FileCheck %s --match-full-lines
// RUN: llvm-nm --extern-only --defined-only --format=just-symbols %t.o | count 20
// RUN: llvm-nm --undefined-only --format=just-symbols %t.o | FileCheck %s --check-prefix=UNDEF
//
// Only the prefixed ABI symbols are exported: 3 per kernel, `kernels` and
// `dispatch`; the MLIR-generated functions (_mlir_ciface_*, the kernels'
// bodies, OpenMP outlined regions) are internal. The object needs no MLIR
// runtime library: its undefined symbols are libattn_runtime's, libomp's
// and libc's.

// CHECK-DAG: my_append
// CHECK-DAG: my_append_info
// CHECK-DAG: my_append_workspace_size
// CHECK-DAG: my_append_dynamic
// CHECK-DAG: my_append_dynamic_info
// CHECK-DAG: my_append_dynamic_workspace_size
// CHECK-DAG: my_decode
// CHECK-DAG: my_decode_info
// CHECK-DAG: my_decode_workspace_size
// CHECK-DAG: my_dispatch
// CHECK-DAG: my_dynamic
// CHECK-DAG: my_dynamic_info
// CHECK-DAG: my_dynamic_workspace_size
// CHECK-DAG: my_heads
// CHECK-DAG: my_heads_info
// CHECK-DAG: my_heads_workspace_size
// CHECK-DAG: my_kernels
// CHECK-DAG: my_prefill
// CHECK-DAG: my_prefill_info
// CHECK-DAG: my_prefill_workspace_size

// UNDEF-NOT: memrefCopy
// UNDEF-NOT: _mlir
// UNDEF-DAG: attn_kernel_call
// UNDEF-DAG: attn_kernel_dispatch
// UNDEF-DAG: __kmpc_fork_call
