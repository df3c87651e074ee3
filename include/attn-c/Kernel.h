/*===- attn-c/Kernel.h - C ABI of compiled attn kernels -----------*- C -*-===*\
|*                                                                            *|
|* Part of the attn project.                                                  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
/*
 * The stable C ABI of the kernels `attn-compile` emits (and the C API's JIT
 * returns). Plain C99; needs only DLPack's dlpack.h and libattn_runtime, not
 * MLIR. See docs/Embedding.md.
 *
 * Tensors are DLPack DLTensors (data, device, dtype, shape, strides in
 * elements, byte_offset): any framework passes its tensors without copies.
 * Dynamic sizes are read from the shapes and checked against the spec;
 * sizes the spec names alike (Nk of k and v, ...) must agree. Inputs and
 * outputs may be strided: the kernels read dense row-major buffers, so a
 * non-contiguous tensor is copied into (or, for outputs, out of) a
 * workspace, which the caller may provide (see *_workspace_size).
 *
 * Booleans (masks) are one byte per element: DLPack's kDLBool (code 6, 8
 * bits) or kDLUInt with 8 bits.
 *
 * An attention kernel's optional second output `lse` [B, Hq, Nq] (always
 * f32) is the natural-log log-sum-exp of each row's final logits over its
 * allowed keys, ln(sum_j exp(s_ij)), as PyTorch's torch.logsumexp and
 * FlashAttention's softmax_lse: out and lse of two key ranges merge exactly
 * (docs/Semantics.md); a row without allowed keys has lse = -inf.
 *
 * Every call returns an attn_status_t; on failure attn_last_error() (one
 * message per calling thread) says what was wrong, naming the argument and
 * what was expected. Nothing is printed, nothing exits.
 */

#ifndef ATTN_C_KERNEL_H
#define ATTN_C_KERNEL_H

#include <dlpack/dlpack.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version of this ABI: of attn_exec_options_t and attn_kernel_info_t. The
   GPU additions (ATTN_KERNEL_GPU, ATTN_STATUS_DEVICE_ERROR) kept version 1:
   they change no layout, and a runtime from before them refuses a GPU
   kernel's device tensors (ATTN_STATUS_UNSUPPORTED_DEVICE). See
   docs/Embedding.md. */
#define ATTN_KERNEL_ABI_VERSION 1

typedef enum attn_status_t {
  ATTN_STATUS_OK = 0,
  /* A null tensor, options or out-pointer, or a wrong number of tensors. */
  ATTN_STATUS_INVALID_ARGUMENT = 1,
  /* A tensor's dtype is not the one the kernel was compiled for. */
  ATTN_STATUS_DTYPE_MISMATCH = 2,
  /* A tensor's rank or size does not match the spec, or sizes that the spec
     names alike disagree. */
  ATTN_STATUS_SHAPE_MISMATCH = 3,
  /* A tensor is not where the kernel runs (kDLCPU memory for CPU kernels;
     kDLCUDA memory of one device, contiguous, for GPU kernels), or its data
     is misaligned. */
  ATTN_STATUS_UNSUPPORTED_DEVICE = 4,
  /* The caller's workspace is smaller than *_workspace_size says. */
  ATTN_STATUS_WORKSPACE_TOO_SMALL = 5,
  /* options->abi_version or options->struct_size is not one this runtime
     knows. */
  ATTN_STATUS_ABI_MISMATCH = 6,
  /* The dispatcher found no compiled specialization for these tensors. */
  ATTN_STATUS_NO_SPECIALIZATION = 7,
  /* A workspace allocation by the runtime failed. */
  ATTN_STATUS_OUT_OF_MEMORY = 8,
  /* A GPU kernel could not run: no usable GPU, or a CUDA driver call of the
     kernel failed (the message names the call and the driver's error). */
  ATTN_STATUS_DEVICE_ERROR = 9
} attn_status_t;

/* Execution options of one call. Zero-initialize, then set struct_size and
   abi_version (attn_exec_options_init does); a null pointer means all
   defaults. */
typedef struct attn_exec_options_t {
  /* sizeof(attn_exec_options_t) as the caller compiled it. */
  uint32_t struct_size;
  /* ATTN_KERNEL_ABI_VERSION as the caller compiled it. */
  uint32_t abi_version;
  /* OpenMP threads for this call (0: the runtime's default, which
     OMP_NUM_THREADS sets). Scoped to the call and the calling thread.
     No effect on GPU kernels. */
  int32_t num_threads;
  int32_t reserved0;
  /* Scratch memory for strided tensors (null: the runtime allocates what it
     needs per call). */
  void *workspace;
  size_t workspace_size;
  /* The CUstream a GPU kernel runs on (null: CUDA's default stream); the
     call returns once the work is queued on it. Must be null for CPU
     kernels. */
  void *stream;
} attn_exec_options_t;

/* What a kernel was compiled for: one entry per tensor, inputs first. */
typedef struct attn_tensor_info_t {
  const char *name; /* role: "q", "k", "kv_len", "out", ... */
  DLDataType dtype;
  int32_t ndim;
  int32_t is_output;
  const int64_t *shape;         /* -1 where the spec leaves a size dynamic */
  const char *const *dim_names; /* "B", "Nk", ...; "" when unnamed */
} attn_tensor_info_t;

typedef struct attn_kernel_info_t {
  uint32_t abi_version;
  /* ATTN_KERNEL_RETURNS_OUTPUTS: the outputs are dynamically shaped and
     not all of them an attention op's own results; the kernel allocates
     them and the runtime copies them into the caller's tensors (whose
     shapes are checked after the call). Without it every output is written
     in place, dynamically shaped attention results included (their sizes
     follow from the inputs: dim_names).
     ATTN_KERNEL_GPU: the kernel runs on an NVIDIA GPU; target_cpu names the
     chip ("sm_90a").
     ATTN_KERNEL_STRIDED_INPUTS: inputs may be strided views (below). */
  uint32_t flags;
  const char *name;   /* the spec's function name */
  const char *symbol; /* the public symbol (prefix + name) */
  int32_t num_inputs;
  int32_t num_outputs;
  const attn_tensor_info_t *tensors; /* num_inputs + num_outputs */
  const char *target_cpu; /* LLVM CPU name the code is for (GPU: the chip) */
  const char *form;       /* naive, fused or decode */
  /* Internal entry points, called by the runtime only. */
  void (*invoke_packed)(void **args);
  int32_t (*set_num_threads)(int32_t n); /* null: sequential kernel */
} attn_kernel_info_t;

#define ATTN_KERNEL_RETURNS_OUTPUTS 1u
/* GPU kernels take kDLCUDA tensors, all on one device and contiguous; the
   runtime makes that device and options->stream current for the call (see
   attn-c/Gpu.h) and reports a failed driver call as
   ATTN_STATUS_DEVICE_ERROR. Errors the GPU raises while the kernel runs
   (after the call returned) surface at the next synchronization; with the
   environment variable ATTN_GPU_SYNC=1 every call synchronizes its stream
   and reports them itself. */
#define ATTN_KERNEL_GPU 2u
/* The kernel reads its inputs of a dynamic size (a -1 in their
   attn_tensor_info_t shape) as strided views: the runtime passes such an
   input in place when the stride of its innermost dimension is 1 (or that
   dimension has one element), and gathers other strided tensors into a
   dense copy in the workspace (negative strides are refused). Fully static
   inputs (whose strides the code folds as constants) and every input of a
   kernel without the flag (one that writes an input, such as a KV cache
   append, or reshapes one) are gathered when strided. Outputs are written
   in place when contiguous, through the workspace otherwise. */
#define ATTN_KERNEL_STRIDED_INPUTS 4u

/* Runtime (libattn_runtime). */

/* The message of the last failed call on this thread ("" if none). Valid
   until the next call on this thread. */
const char *attn_last_error(void);

/* The ABI version this runtime implements. */
uint32_t attn_runtime_abi_version(void);

/* Sets struct_size, abi_version and zeroes the rest. */
void attn_exec_options_init(attn_exec_options_t *options);

/* Calls `kernel` on `tensors` (num_inputs inputs, then num_outputs outputs,
   in attn_kernel_info_t order). */
attn_status_t attn_kernel_call(const attn_kernel_info_t *kernel,
                               DLTensor *const *tensors, int32_t num_tensors,
                               const attn_exec_options_t *options);

/* Bytes of workspace a call with these tensors needs (0 when every tensor is
   contiguous). */
attn_status_t attn_kernel_workspace_size(const attn_kernel_info_t *kernel,
                                         DLTensor *const *tensors,
                                         int32_t num_tensors, size_t *bytes);

/* Calls the first of `kernels` that accepts the tensors' dtypes and shapes;
   otherwise ATTN_STATUS_NO_SPECIALIZATION with a message listing what was
   compiled. */
attn_status_t attn_kernel_dispatch(const attn_kernel_info_t *const *kernels,
                                   int32_t num_kernels,
                                   DLTensor *const *tensors,
                                   int32_t num_tensors,
                                   const attn_exec_options_t *options);

/* The status's name ("ATTN_STATUS_SHAPE_MISMATCH"). */
const char *attn_status_name(attn_status_t status);

/* Run-time checks of generated code (docs/Robustness.md). Data only the
   kernel sees (dynamic sizes, page tables, ragged offsets, cache positions,
   region reads) is checked where the kernel reads it; a failed check records
   itself in the calling thread's error record (the first failure of a call
   wins), the kernel skips the work that depends on it and returns, and
   attn_kernel_call returns the check's status with its message in
   attn_last_error(). Code that calls a compiled `_mlir_ciface_` entry itself
   (attn-compile --emit=obj without the wrapper, the C++ JIT) uses: */

/* Clears the calling thread's error record; call before the kernel. */
void attn_rt_clear_error(void);
/* The status of the calling thread's record after a call (ATTN_STATUS_OK if
   no check failed), with its message in attn_last_error(); clears it. */
attn_status_t attn_rt_take_error(void);

/* Called by generated code only. */
intptr_t attn_rt_error_context(void);
void attn_rt_check_failed(intptr_t context, int32_t check, int64_t a0,
                          int64_t a1, int64_t a2, int64_t a3);
int32_t attn_rt_has_failed(intptr_t context);
/* Records a failure with a message of its own (copied; at most 511 bytes
   kept) and the status attn_kernel_call returns for it; the first failure of
   a call wins, as for the checks. For kernels whose body is not generated
   code (the GPU emulator's kernels of the C API). */
void attn_rt_report_error(intptr_t context, attn_status_t status,
                          const char *message);

#ifdef __cplusplus
}
#endif

#endif /* ATTN_C_KERNEL_H */
