/*===- attn-c/Compiler.h - C API of the attn compiler -------------*- C -*-===*\
|*                                                                            *|
|* Part of the attn project.                                                  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
/*
 * The compiler as a C library (libattn_compiler), in the style of MLIR's C
 * API: opaque handles passed by value, `Create` functions return handles the
 * caller owns and passes to the matching `Destroy`, results are
 * AttnLogicalResult, strings are AttnStringRef (not null-terminated unless
 * said) or come through an AttnStringCallback. Errors never print and never
 * abort: they go to the context's diagnostic callback (none set: they are
 * dropped, and attnContextGetLastError still returns the last one).
 *
 * A kernel the JIT compiles has the same C ABI (attn-c/Kernel.h) as the
 * symbol attn-compile emits ahead of time.
 */

#ifndef ATTN_C_COMPILER_H
#define ATTN_C_COMPILER_H

#include "attn-c/Kernel.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DEFINE_ATTN_HANDLE(name)                                               \
  typedef struct name {                                                        \
    void *ptr;                                                                 \
  } name

/* An MLIR context with the attn dialect, every upstream dialect, and the
   diagnostic callback. Not thread-safe: one thread at a time per context. */
DEFINE_ATTN_HANDLE(AttnContext);
/* A parsed spec (an MLIR module), owned by the caller. */
DEFINE_ATTN_HANDLE(AttnModule);
/* JIT-compiled kernels; their code lives until attnJitLibraryDestroy. */
DEFINE_ATTN_HANDLE(AttnJitLibrary);

#undef DEFINE_ATTN_HANDLE

typedef struct AttnStringRef {
  const char *data;
  size_t length;
} AttnStringRef;

typedef struct AttnLogicalResult {
  int8_t value;
} AttnLogicalResult;

typedef enum AttnDiagnosticSeverity {
  AttnDiagnosticError = 0,
  AttnDiagnosticWarning = 1,
  AttnDiagnosticNote = 2,
  AttnDiagnosticRemark = 3
} AttnDiagnosticSeverity;

/* `location` is "file:line:col" or "" when there is none. */
typedef void (*AttnDiagnosticCallback)(AttnDiagnosticSeverity severity,
                                       AttnStringRef location,
                                       AttnStringRef message, void *userData);
/* Receives a string (or bytes) in one or more pieces. */
typedef void (*AttnStringCallback)(AttnStringRef piece, void *userData);

static inline AttnStringRef attnStringRefCreateFromCString(const char *s) {
  AttnStringRef r;
  size_t n = 0;
  while (s && s[n])
    ++n;
  r.data = s;
  r.length = n;
  return r;
}
static inline bool attnLogicalResultIsSuccess(AttnLogicalResult r) {
  return r.value != 0;
}
static inline bool attnLogicalResultIsFailure(AttnLogicalResult r) {
  return r.value == 0;
}
static inline bool attnContextIsNull(AttnContext c) { return !c.ptr; }
static inline bool attnModuleIsNull(AttnModule m) { return !m.ptr; }
static inline bool attnJitLibraryIsNull(AttnJitLibrary j) { return !j.ptr; }

/* The version of this API and of the kernel ABI it produces. */
uint32_t attnGetKernelAbiVersion(void);

/* Registers the attn passes and named pipelines (attn-to-llvm-cpu) with the
   global pass registry, once; attnModuleRunPipeline calls it. */
void attnRegisterAllPasses(void);

AttnContext attnContextCreate(void);
void attnContextDestroy(AttnContext context);
/* Replaces the diagnostic callback (null: drop diagnostics). */
void attnContextSetDiagnosticCallback(AttnContext context,
                                      AttnDiagnosticCallback callback,
                                      void *userData);
/* The last error diagnostic of this context ("" if none), valid until the
   next call with this context. */
AttnStringRef attnContextGetLastError(AttnContext context);

/* Parses and verifies a spec; a null module on failure. `name` is the file
   name diagnostics show. */
AttnModule attnModuleCreateParse(AttnContext context, AttnStringRef source,
                                 AttnStringRef name);
AttnModule attnModuleCreateParseFile(AttnContext context, AttnStringRef path);
void attnModuleDestroy(AttnModule module);
/* Prints the module's IR. */
void attnModulePrint(AttnModule module, AttnStringCallback callback,
                     void *userData);
/* Runs a registered pass or pipeline on the module in place, e.g. name
   "attn-to-llvm-cpu" with options "form=naive parallel=false". */
AttnLogicalResult attnModuleRunPipeline(AttnModule module, AttnStringRef name,
                                        AttnStringRef options);

/* Options of ahead-of-time and JIT compilation (attn-compile's flags). */
typedef struct AttnCompileOptions {
  const char *form;       /* "naive", "fused" (default), "decode" or "auto" (per
                             call: decode up to max_decode_queries query rows,
                             fused beyond) */
  int64_t tile_q, tile_k; /* 0: the form's default */
  int64_t splits;         /* decode form's KV chunks: -1 (default) chosen at
                             run time from the threads, or a count >= 1 */
  bool parallel;          /* OpenMP threads (default true) */
  const char *target_cpu; /* null or "": the host */
  const char *target_features; /* null or "" */
  const char *prefix;          /* symbol prefix (default "attn_") */
  const char *entries;         /* comma-separated; null: all public */
  int32_t opt_level;           /* 0-3 (default 3) */
  /* Where the kernels run: "cpu" (null or "": the default); "gpu", an
     NVIDIA GPU through libattn_gpu_runtime (kDLCUDA tensors,
     ATTN_KERNEL_GPU); "gpu-emulate", the GPU kernels on the warp-level
     emulator over host tensors (JIT only; slow: for tests without a GPU). */
  const char *device;
  const char *gpu_chip;       /* "sm_80", "sm_90a", ...; null or "": the chip of
                                 CUDA device 0 (sm_90a on sm_90) */
  const char *gpu_format;     /* "isa" (PTX), "bin" (cubin) or "fatbin"; null or
                                 "": bin ahead of time, isa for the JIT */
  int64_t gpu_warps;          /* warps per block; 0 (default): the lowering's */
  int64_t gpu_tile_k;         /* keys per shared-memory tile (default 64) */
  int64_t gpu_splits;         /* decode's KV chunks: -1 (default) chosen at run
                                 time, 0 off */
  int64_t max_decode_queries; /* form "auto": the longest query length that
                                 runs the split-KV form (default 16) */
  const char *target_triple;  /* null or "": this machine's; another
                                 architecture's (aarch64-linux-gnu) ahead of
                                 time only */
} AttnCompileOptions;

void attnCompileOptionsInit(AttnCompileOptions *options);
/* sizeof(AttnCompileOptions) as the library was compiled: bindings that
   declare the struct themselves (Python's ctypes) check theirs against it. */
size_t attnCompileOptionsSize(void);

typedef enum AttnOutputKind {
  AttnOutputObject = 0,
  AttnOutputStaticLibrary = 1,
  AttnOutputAssembly = 2,
  AttnOutputLLVMIR = 3,
  AttnOutputHeader = 4
} AttnOutputKind;

/* Compiles the module's kernels; the output's bytes go to `callback`. The
   module is not changed. */
AttnLogicalResult attnCompile(AttnModule module,
                              const AttnCompileOptions *options,
                              AttnOutputKind kind, AttnStringCallback callback,
                              void *userData);
/* The same, written to the file `path`. */
AttnLogicalResult attnCompileToFile(AttnModule module,
                                    const AttnCompileOptions *options,
                                    AttnOutputKind kind, AttnStringRef path);

/* JIT-compiles the module's kernels for this host (options->device "cpu"),
   for the GPU ("gpu") or for the GPU emulator ("gpu-emulate"); a null
   library on failure. */
AttnJitLibrary attnJitLibraryCreate(AttnModule module,
                                    const AttnCompileOptions *options);
void attnJitLibraryDestroy(AttnJitLibrary library);
/* The kernel compiled from function `name` (call it with attn_kernel_call),
   or null. */
const attn_kernel_info_t *attnJitLibraryLookupKernel(AttnJitLibrary library,
                                                     AttnStringRef name);
/* The address of a public symbol ("attn_small", "attn_dispatch", ...): the
   same C signature as attn-compile's header declares. Null if absent. */
void *attnJitLibraryLookupSymbol(AttnJitLibrary library, AttnStringRef symbol);

#ifdef __cplusplus
}
#endif

#endif /* ATTN_C_COMPILER_H */
