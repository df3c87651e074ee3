/*===- capi-test.c - every function of the attn C API --------------------===*\
|*                                                                            *|
|* Part of the attn project.                                                  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
/*
 * Calls every function of attn-c/Compiler.h, success and error paths, from
 * C99: parse, print, run a pipeline, compile to every output kind in memory
 * and to a file, JIT-compile and call a kernel through the kernel ABI (the
 * info and the typed symbol), checked against this file's own reference.
 *   capi-test <small.mlir> <scratch directory>
 */

#include "attn-c/Compiler.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

#define CHECK(cond, ...)                                                       \
  do {                                                                         \
    if (!(cond)) {                                                             \
      printf("FAIL %s:%d: ", __FILE__, __LINE__);                              \
      printf(__VA_ARGS__);                                                     \
      printf("\n");                                                            \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

static AttnStringRef str(const char *s) {
  return attnStringRefCreateFromCString(s);
}

/* Collects what a callback receives. */
typedef struct {
  char *data;
  size_t length;
} Buffer;

static void append(AttnStringRef piece, void *userData) {
  Buffer *b = userData;
  b->data = realloc(b->data, b->length + piece.length + 1);
  memcpy(b->data + b->length, piece.data, piece.length);
  b->length += piece.length;
  b->data[b->length] = 0;
}

typedef struct {
  int errors;
  char location[256];
  char message[1024];
} Diagnostics;

static void onDiagnostic(AttnDiagnosticSeverity severity,
                         AttnStringRef location, AttnStringRef message,
                         void *userData) {
  Diagnostics *d = userData;
  if (severity != AttnDiagnosticError)
    return;
  if (d->errors++ == 0) {
    snprintf(d->location, sizeof(d->location), "%.*s", (int)location.length,
             location.data);
    snprintf(d->message, sizeof(d->message), "%.*s", (int)message.length,
             message.data);
  }
}

static const char *lastError(AttnContext ctx) {
  return attnContextGetLastError(ctx).data;
}

static const char *smallSpec =
    "func.func @small(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>,\n"
    "                 %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {\n"
    "  %out = attn.attention q(%q : tensor<1x2x4x8xf32>)\n"
    "      k(%k : tensor<1x2x4x8xf32>) v(%v : tensor<1x2x4x8xf32>)\n"
    "      causal(top_left) -> tensor<1x2x4x8xf32>\n"
    "  return %out : tensor<1x2x4x8xf32>\n"
    "}\n";

/* Causal top-left attention on [1, 2, 4, 8], scale 1/sqrt(8). */
static void reference(const float *q, const float *k, const float *v,
                      double *out) {
  for (int h = 0; h < 2; ++h)
    for (int i = 0; i < 4; ++i) {
      double s[4], m = -INFINITY, sum = 0;
      for (int j = 0; j <= i; ++j) {
        double dot = 0;
        for (int d = 0; d < 8; ++d)
          dot += (double)q[(h * 4 + i) * 8 + d] * k[(h * 4 + j) * 8 + d];
        s[j] = dot / sqrt(8.0);
        m = s[j] > m ? s[j] : m;
      }
      for (int j = 0; j <= i; ++j)
        sum += exp(s[j] - m);
      for (int d = 0; d < 8; ++d) {
        double acc = 0;
        for (int j = 0; j <= i; ++j)
          acc += exp(s[j] - m) / sum * v[(h * 4 + j) * 8 + d];
        out[(h * 4 + i) * 8 + d] = acc;
      }
    }
}

static DLTensor tensor(float *data, int64_t *shape) {
  DLTensor t;
  memset(&t, 0, sizeof(t));
  t.data = data;
  t.device.device_type = kDLCPU;
  t.ndim = 4;
  t.dtype.code = kDLFloat;
  t.dtype.bits = 32;
  t.dtype.lanes = 1;
  t.shape = shape;
  return t;
}

typedef attn_status_t (*SmallFn)(const DLTensor *, const DLTensor *,
                                 const DLTensor *, DLTensor *,
                                 const attn_exec_options_t *);

static void testJit(AttnContext ctx, AttnModule module) {
  float q[64], k[64], v[64], out[64];
  double ref[64];
  for (int i = 0; i < 64; ++i) {
    q[i] = (float)((i * 37) % 17) / 17.0f - 0.5f;
    k[i] = (float)((i * 11) % 13) / 13.0f - 0.5f;
    v[i] = (float)((i * 7) % 19) / 19.0f - 0.5f;
  }
  reference(q, k, v, ref);
  int64_t shape[4] = {1, 2, 4, 8};
  DLTensor tq = tensor(q, shape), tk = tensor(k, shape), tv = tensor(v, shape),
           to = tensor(out, shape);

  AttnCompileOptions opts;
  attnCompileOptionsInit(&opts);
  opts.prefix = "jit_";
  AttnJitLibrary lib = attnJitLibraryCreate(module, &opts);
  CHECK(!attnJitLibraryIsNull(lib), "JIT: %s", lastError(ctx));
  if (attnJitLibraryIsNull(lib))
    return;
  const attn_kernel_info_t *info =
      attnJitLibraryLookupKernel(lib, str("small"));
  CHECK(info && !strcmp(info->symbol, "jit_small"), "no kernel 'small'");
  CHECK(!attnJitLibraryLookupKernel(lib, str("nope")), "kernel 'nope'");
  CHECK(!attnJitLibraryLookupSymbol(lib, str("nope")), "symbol 'nope'");
  if (info) {
    DLTensor *all[4] = {&tq, &tk, &tv, &to};
    CHECK(attn_kernel_call(info, all, 4, NULL) == ATTN_STATUS_OK,
          "JIT call: %s", attn_last_error());
    double err = 0;
    for (int i = 0; i < 64; ++i)
      err = fmax(err, fabs(ref[i] - out[i]));
    CHECK(err < 1e-4, "JIT kernel: max error %g", err);
  }
  /* The typed symbol: the same signature as attn-compile's header. */
  SmallFn fn;
  void *addr = attnJitLibraryLookupSymbol(lib, str("jit_small"));
  CHECK(addr != NULL, "no symbol jit_small");
  if (addr) {
    memcpy(&fn, &addr, sizeof(fn));
    memset(out, 0, sizeof(out));
    attn_exec_options_t exec;
    attn_exec_options_init(&exec);
    exec.num_threads = 2;
    CHECK(fn(&tq, &tk, &tv, &to, &exec) == ATTN_STATUS_OK, "jit_small: %s",
          attn_last_error());
    double err = 0;
    for (int i = 0; i < 64; ++i)
      err = fmax(err, fabs(ref[i] - out[i]));
    CHECK(err < 1e-4, "jit_small: max error %g", err);
    /* Kernel errors come back as statuses, as ahead of time. */
    int64_t wrong[4] = {1, 2, 4, 9};
    DLTensor bad = tensor(q, wrong);
    CHECK(fn(&bad, &tk, &tv, &to, NULL) == ATTN_STATUS_SHAPE_MISMATCH,
          "jit_small took a wrong shape");
  }
  attnJitLibraryDestroy(lib);

  /* A target this host cannot run, and an unknown CPU. */
  opts.target_cpu = "not-a-cpu";
  lib = attnJitLibraryCreate(module, &opts);
  CHECK(attnJitLibraryIsNull(lib) && strstr(lastError(ctx), "not-a-cpu"),
        "JIT for not-a-cpu: %s", lastError(ctx));
  attnJitLibraryDestroy(lib);
}

/* Compiling with `opts` fails, and the context's last error contains
   `want`. */
static void expectCompileError(AttnContext ctx, AttnModule module,
                               const AttnCompileOptions *opts,
                               AttnOutputKind kind, const char *want) {
  Buffer b = {NULL, 0};
  CHECK(attnLogicalResultIsFailure(attnCompile(module, opts, kind, append, &b)),
        "compile accepted; expected an error with '%s'", want);
  CHECK(strstr(lastError(ctx), want) != NULL, "message: %s (expected '%s')",
        lastError(ctx), want);
  free(b.data);
}

static void testCompile(AttnContext ctx, AttnModule module,
                        const char *scratch) {
  AttnCompileOptions opts;
  attnCompileOptionsInit(&opts);
  CHECK(!strcmp(opts.form, "fused") && opts.parallel && opts.opt_level == 3,
        "default options");
  struct {
    AttnOutputKind kind;
    const char *starts;
  } kinds[] = {{AttnOutputObject, "\177ELF"},
               {AttnOutputStaticLibrary, "!<arch>\n"},
               {AttnOutputAssembly, ""},
               {AttnOutputLLVMIR, ""},
               {AttnOutputHeader, "/* Generated by attn-compile"}};
  for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); ++i) {
    Buffer b = {NULL, 0};
    CHECK(attnLogicalResultIsSuccess(
              attnCompile(module, &opts, kinds[i].kind, append, &b)),
          "compile kind %d: %s", (int)kinds[i].kind, lastError(ctx));
    CHECK(b.data && !strncmp(b.data, kinds[i].starts, strlen(kinds[i].starts)),
          "output kind %d starts wrong", (int)kinds[i].kind);
    if (kinds[i].kind == AttnOutputLLVMIR)
      CHECK(b.data && strstr(b.data, "define i32 @attn_small("),
            "no attn_small in the LLVM IR");
    free(b.data);
  }
  CHECK(attnCompileOptionsSize() == sizeof(AttnCompileOptions),
        "attnCompileOptionsSize %zu, sizeof %zu", attnCompileOptionsSize(),
        sizeof(AttnCompileOptions));
  /* Another architecture ahead of time: an AArch64 ELF object (e_machine
     183, EM_AARCH64) for a Neoverse V1; an unknown triple is an error. */
  opts.target_triple = "aarch64-linux-gnu";
  opts.target_cpu = "neoverse-v1";
  Buffer arm = {NULL, 0};
  CHECK(attnLogicalResultIsSuccess(
            attnCompile(module, &opts, AttnOutputObject, append, &arm)),
        "aarch64 object: %s", lastError(ctx));
  CHECK(arm.data && arm.length > 20 && !strncmp(arm.data, "\177ELF", 4) &&
            (unsigned char)arm.data[18] == 183 && arm.data[19] == 0,
        "not an AArch64 ELF object");
  free(arm.data);
  opts.target_triple = "bogus-thing";
  expectCompileError(ctx, module, &opts, AttnOutputObject, "bogus-thing");
  attnCompileOptionsInit(&opts);
  CHECK(opts.target_triple == NULL, "target_triple default");
  Buffer b = {NULL, 0};
  CHECK(attnLogicalResultIsFailure(
            attnCompile(module, &opts, (AttnOutputKind)42, append, &b)),
        "output kind 42 accepted");
  CHECK(attnLogicalResultIsFailure(
            attnCompile(module, &opts, AttnOutputObject, NULL, NULL)),
        "null callback accepted");
  opts.form = "tiled";
  expectCompileError(ctx, module, &opts, AttnOutputObject,
                     "unknown form 'tiled'");
  attnCompileOptionsInit(&opts);
  CHECK(opts.max_decode_queries == 16, "max_decode_queries default %lld",
        (long long)opts.max_decode_queries);
  opts.form = "auto";
  opts.max_decode_queries = -1;
  expectCompileError(ctx, module, &opts, AttnOutputObject,
                     "max_decode_queries must be >= 0");
  attnCompileOptionsInit(&opts);
  CHECK(opts.splits == -1, "splits default %lld", (long long)opts.splits);
  opts.form = "decode";
  opts.splits = 0;
  expectCompileError(ctx, module, &opts, AttnOutputObject,
                     "splits >= 1 or -1 (chosen at run time)");
  attnCompileOptionsInit(&opts);
  opts.opt_level = 9;
  CHECK(attnLogicalResultIsFailure(
            attnCompile(module, &opts, AttnOutputObject, append, &b)),
        "opt_level 9 accepted");
  attnCompileOptionsInit(&opts);
  opts.entries = "nope";
  expectCompileError(ctx, module, &opts, AttnOutputHeader, "no function @nope");
  free(b.data);

  attnCompileOptionsInit(&opts);
  char path[1024];
  snprintf(path, sizeof(path), "%s/capi-kernels.o", scratch);
  CHECK(attnLogicalResultIsSuccess(
            attnCompileToFile(module, &opts, AttnOutputObject, str(path))),
        "compile to %s: %s", path, lastError(ctx));
  FILE *f = fopen(path, "rb");
  char magic[4] = {0};
  CHECK(f && fread(magic, 1, 4, f) == 4 && !memcmp(magic, "\177ELF", 4),
        "%s is not an ELF object", path);
  if (f)
    fclose(f);
  CHECK(attnLogicalResultIsFailure(attnCompileToFile(
            module, &opts, AttnOutputObject, str("/no/such/dir/k.o"))),
        "wrote into a missing directory");
  CHECK(strstr(lastError(ctx), "cannot write /no/such/dir/k.o") != NULL,
        "message: %s", lastError(ctx));
  opts.opt_level = -1;
  CHECK(attnLogicalResultIsFailure(
            attnCompileToFile(module, &opts, AttnOutputObject, str(path))),
        "opt_level -1 accepted");
}

int main(int argc, char **argv) {
  if (argc != 3) {
    printf("usage: capi-test <small.mlir> <scratch directory>\n");
    return 2;
  }
  CHECK(attnGetKernelAbiVersion() == ATTN_KERNEL_ABI_VERSION, "ABI version");
  attnRegisterAllPasses();
  attnRegisterAllPasses(); /* idempotent */

  AttnContext ctx = attnContextCreate();
  CHECK(!attnContextIsNull(ctx), "no context");
  Diagnostics diags;
  memset(&diags, 0, sizeof(diags));
  attnContextSetDiagnosticCallback(ctx, onDiagnostic, &diags);

  /* Parse errors reach the callback with their location. */
  AttnModule bad = attnModuleCreateParse(
      ctx, str("func.func @f() {\n  %x = attn.nope\n}\n"), str("bad.mlir"));
  CHECK(attnModuleIsNull(bad), "bad spec parsed");
  CHECK(diags.errors > 0 && !strncmp(diags.location, "bad.mlir:2:", 11),
        "diagnostic at '%s': %s", diags.location, diags.message);
  CHECK(strstr(lastError(ctx), "bad.mlir:2:") != NULL, "last error: %s",
        lastError(ctx));
  /* A spec that parses but does not verify. */
  diags.errors = 0;
  bad = attnModuleCreateParse(
      ctx,
      str("func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x9xf32>)"
          " -> tensor<1x2x4x8xf32> {\n"
          "  %o = attn.attention q(%q : tensor<1x2x4x8xf32>) k(%k : "
          "tensor<1x2x4x9xf32>) v(%k : tensor<1x2x4x9xf32>) -> "
          "tensor<1x2x4x8xf32>\n  return %o : tensor<1x2x4x8xf32>\n}\n"),
      str("invalid.mlir"));
  CHECK(attnModuleIsNull(bad) && diags.errors > 0, "invalid spec accepted");
  /* A missing file. */
  bad = attnModuleCreateParseFile(ctx, str("/no/such/spec.mlir"));
  CHECK(attnModuleIsNull(bad) &&
            strstr(lastError(ctx), "cannot read /no/such/spec.mlir"),
        "missing file: %s", lastError(ctx));

  AttnModule fromFile = attnModuleCreateParseFile(ctx, str(argv[1]));
  CHECK(!attnModuleIsNull(fromFile), "parse %s: %s", argv[1], lastError(ctx));
  attnModuleDestroy(fromFile);

  AttnModule module =
      attnModuleCreateParse(ctx, str(smallSpec), str("small.mlir"));
  CHECK(!attnModuleIsNull(module), "parse: %s", lastError(ctx));
  if (attnModuleIsNull(module))
    return 1;
  Buffer printed = {NULL, 0};
  attnModulePrint(module, append, &printed);
  CHECK(printed.data && strstr(printed.data, "attn.attention"),
        "printed module has no attn.attention");
  free(printed.data);

  testCompile(ctx, module, argv[2]);
  testJit(ctx, module);

  /* Pipelines: unknown name, bad option, then the real one in place. */
  CHECK(attnLogicalResultIsFailure(
            attnModuleRunPipeline(module, str("no-such-pipeline"), str(""))),
        "unknown pipeline ran");
  CHECK(strstr(lastError(ctx), "no-such-pipeline") != NULL, "message: %s",
        lastError(ctx));
  CHECK(attnLogicalResultIsFailure(attnModuleRunPipeline(
            module, str("attn-to-llvm-cpu"), str("form=tiled"))),
        "form=tiled ran");
  CHECK(attnLogicalResultIsFailure(attnModuleRunPipeline(
            module, str("attn-to-llvm-cpu"), str("bf16-dot-products=maybe"))),
        "bf16-dot-products=maybe ran");
  CHECK(strstr(lastError(ctx),
               "expected auto, true (1, on) or false (0, off)") != NULL,
        "message: %s", lastError(ctx));
  CHECK(attnLogicalResultIsFailure(attnModuleRunPipeline(
            module, str("attn-to-llvm-cpu"), str("min-parallel-work=lots"))),
        "min-parallel-work=lots ran");
  CHECK(strstr(lastError(ctx), "min-parallel-work=lots: expected an integer") !=
            NULL,
        "message: %s", lastError(ctx));
  CHECK(attnLogicalResultIsFailure(attnModuleRunPipeline(
            module, str("attn-to-llvm-cpu"), str("strided-inputs=maybe"))),
        "strided-inputs=maybe ran");
  CHECK(strstr(lastError(ctx),
               "strided-inputs=maybe: expected true or false") != NULL,
        "message: %s", lastError(ctx));
  AttnModule lowered =
      attnModuleCreateParse(ctx, str(smallSpec), str("small.mlir"));
  CHECK(attnLogicalResultIsSuccess(attnModuleRunPipeline(
            lowered, str("attn-to-llvm-cpu"),
            str("form=naive parallel=false bf16-dot-products=off"))),
        "pipeline: %s", lastError(ctx));
  AttnModule autoForm =
      attnModuleCreateParse(ctx, str(smallSpec), str("small.mlir"));
  CHECK(attnLogicalResultIsSuccess(attnModuleRunPipeline(
            autoForm, str("attn-to-llvm-cpu"),
            str("form=auto max-decode-queries=4 min-parallel-work=4096"))),
        "pipeline form=auto: %s", lastError(ctx));
  attnModuleDestroy(autoForm);
  printed.data = NULL;
  printed.length = 0;
  attnModulePrint(lowered, append, &printed);
  CHECK(printed.data && strstr(printed.data, "llvm.func @small"),
        "lowered module has no llvm.func @small");
  free(printed.data);
  attnModuleDestroy(lowered);

  /* Null handles are refused quietly. */
  AttnContext none = {NULL};
  AttnModule noModule = {NULL};
  AttnJitLibrary noLib = {NULL};
  CHECK(attnModuleIsNull(attnModuleCreateParse(none, str(smallSpec), str(""))),
        "parse in a null context");
  CHECK(attnModuleIsNull(attnModuleCreateParseFile(none, str(argv[1]))),
        "parse a file in a null context");
  CHECK(attnContextGetLastError(none).length == 0, "null context error");
  CHECK(attnLogicalResultIsFailure(
            attnModuleRunPipeline(noModule, str("canonicalize"), str(""))),
        "pipeline on a null module");
  CHECK(attnLogicalResultIsFailure(attnCompileToFile(
            noModule, NULL, AttnOutputObject, str("/tmp/x.o"))),
        "compile a null module");
  CHECK(attnJitLibraryIsNull(attnJitLibraryCreate(noModule, NULL)),
        "JIT a null module");
  CHECK(!attnJitLibraryLookupKernel(noLib, str("small")), "null library");
  attnModulePrint(noModule, append, NULL);
  attnJitLibraryDestroy(noLib);
  attnModuleDestroy(noModule);
  attnContextSetDiagnosticCallback(none, NULL, NULL);

  /* Without a callback, errors are dropped (nothing printed) but kept. */
  attnContextSetDiagnosticCallback(ctx, NULL, NULL);
  bad = attnModuleCreateParse(ctx, str("garbage"), str("quiet.mlir"));
  CHECK(attnModuleIsNull(bad) && strstr(lastError(ctx), "quiet.mlir:1:"),
        "quiet error: %s", lastError(ctx));

  attnModuleDestroy(module);
  attnContextDestroy(ctx);
  attnContextDestroy(none);
  if (failures) {
    printf("capi-test: %d failures\n", failures);
    return 1;
  }
  printf("capi-test: all checks passed\n");
  return 0;
}
