/*===- npy-kernel-driver.c - one compiled kernel on .npy inputs ----------===*\
|*                                                                            *|
|* Part of the attn project.                                                  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
/*
 * Runs the first kernel of an attn-compile'd library (attn_kernels()) on
 * inputs read from .npy files and compares each output with a reference
 * read from a .npy file (attn-run --reference-output: the f64 reference).
 * Written for kernels cross-compiled to another architecture and run under
 * an emulator (qemu-aarch64), where neither the JIT nor the reference runs;
 * plain C99 with no dependency beyond libattn_runtime, sharing no code with
 * the compiler.
 *
 *   driver IN.npy... -- REF.npy... [--atol A] [--rtol R]
 *
 * Inputs in the kernel's tensor order; float .npy data ('<f4', '<f2',
 * '<f8') is converted to the tensor's dtype (f32, f16 or bf16, rounding to
 * nearest even), integer data ('<i4', '<i8') to i32 or i64, and '|b1' /
 * '|u1' is taken as it is. Outputs take their shapes from the references.
 * Prints one line per output and exits 0 when every element satisfies
 * |out - ref| <= atol + rtol |ref| (infinities equal to the reference's, NaN
 * only where the reference is NaN).
 */

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"

typedef struct {
  char descr[8];
  int ndim;
  int64_t shape[8];
  int64_t count;
  unsigned char *data; /* the array's bytes, little-endian C order */
} Npy;

static void die(const char *what, const char *path) {
  fprintf(stderr, "npy-kernel-driver: %s: %s\n", path, what);
  exit(2);
}

/* Reads a version 1-3 .npy file of a plain little-endian dtype. */
static Npy readNpy(const char *path) {
  Npy a;
  memset(&a, 0, sizeof a);
  FILE *f = fopen(path, "rb");
  if (!f)
    die("cannot open", path);
  unsigned char magic[10];
  if (fread(magic, 1, 8, f) != 8 || memcmp(magic, "\x93NUMPY", 6) != 0)
    die("not a .npy file", path);
  uint32_t headerLen = 0;
  if (magic[6] == 1) {
    unsigned char b[2];
    if (fread(b, 1, 2, f) != 2)
      die("truncated header", path);
    headerLen = b[0] | (uint32_t)b[1] << 8;
  } else {
    unsigned char b[4];
    if (fread(b, 1, 4, f) != 4)
      die("truncated header", path);
    headerLen = b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
                (uint32_t)b[3] << 24;
  }
  char *header = calloc(headerLen + 1, 1);
  if (!header || fread(header, 1, headerLen, f) != headerLen)
    die("truncated header", path);
  const char *d = strstr(header, "'descr':");
  const char *s = strstr(header, "'shape':");
  if (!d || !s || strstr(header, "'fortran_order': True"))
    die("unsupported header", path);
  d = strchr(d + 8, '\'');
  if (!d || sscanf(d + 1, "%7[^']", a.descr) != 1)
    die("unsupported descr", path);
  s = strchr(s, '(');
  if (!s)
    die("unsupported shape", path);
  a.count = 1;
  for (++s; *s && *s != ')';) {
    char *end;
    long long v = strtoll(s, &end, 10);
    if (end == s) {
      ++s;
      continue;
    }
    if (a.ndim == 8)
      die("too many dimensions", path);
    a.shape[a.ndim++] = v;
    a.count *= v;
    s = end;
  }
  free(header);
  size_t item = (size_t)atoi(a.descr + 2);
  a.data = malloc(a.count * item + 1);
  if (!a.data || fread(a.data, item, a.count, f) != (size_t)a.count)
    die("truncated data", path);
  fclose(f);
  return a;
}

/* Element i of a float array as a double. */
static double floatAt(const Npy *a, int64_t i) {
  if (!strcmp(a->descr, "<f4"))
    return ((const float *)a->data)[i];
  if (!strcmp(a->descr, "<f8"))
    return ((const double *)a->data)[i];
  if (!strcmp(a->descr, "<f2"))
    return (double)((const _Float16 *)a->data)[i];
  die("not a float array", a->descr);
  return 0;
}

static uint16_t toBf16(float x) {
  uint32_t u;
  memcpy(&u, &x, 4);
  if (isnan(x))
    return (uint16_t)((u >> 16) | 0x40);
  u += 0x7fff + ((u >> 16) & 1);
  return (uint16_t)(u >> 16);
}

static double fromBf16(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float x;
  memcpy(&x, &u, 4);
  return x;
}

/* A DLTensor of `dtype` and `a`'s shape holding `a` converted. */
static DLTensor *makeInput(const Npy *a, DLDataType dtype, const char *path) {
  DLTensor *t = calloc(1, sizeof *t);
  int64_t *shape = calloc(a->ndim ? a->ndim : 1, sizeof *shape);
  memcpy(shape, a->shape, a->ndim * sizeof *shape);
  size_t item = (dtype.bits + 7) / 8;
  unsigned char *data = malloc(a->count * item + 1);
  for (int64_t i = 0; i < a->count; ++i) {
    if (dtype.code == kDLFloat && dtype.bits == 32)
      ((float *)data)[i] = (float)floatAt(a, i);
    else if (dtype.code == kDLFloat && dtype.bits == 16)
      ((_Float16 *)data)[i] = (_Float16)floatAt(a, i);
    else if (dtype.code == kDLBfloat && dtype.bits == 16)
      ((uint16_t *)data)[i] = toBf16((float)floatAt(a, i));
    else if (dtype.code == kDLInt && (dtype.bits == 32 || dtype.bits == 64)) {
      int64_t v;
      if (!strcmp(a->descr, "<i4"))
        v = ((const int32_t *)a->data)[i];
      else if (!strcmp(a->descr, "<i8"))
        v = ((const int64_t *)a->data)[i];
      else
        die("expected an integer array", path);
      if (dtype.bits == 32)
        ((int32_t *)data)[i] = (int32_t)v;
      else
        ((int64_t *)data)[i] = v;
    } else if (item == 1 && atoi(a->descr + 2) == 1)
      data[i] = a->data[i];
    else
      die("unsupported tensor dtype", path);
  }
  t->data = data;
  t->device.device_type = kDLCPU;
  t->ndim = a->ndim;
  t->dtype = dtype;
  t->shape = shape;
  return t;
}

static double outputAt(const DLTensor *t, int64_t i) {
  if (t->dtype.code == kDLFloat && t->dtype.bits == 32)
    return ((const float *)t->data)[i];
  if (t->dtype.code == kDLFloat && t->dtype.bits == 16)
    return (double)((const _Float16 *)t->data)[i];
  if (t->dtype.code == kDLBfloat && t->dtype.bits == 16)
    return fromBf16(((const uint16_t *)t->data)[i]);
  die("unsupported output dtype", "output");
  return 0;
}

int main(int argc, char **argv) {
  double atol = 1e-5, rtol = 1e-5;
  const char *inputs[32], *refs[32];
  int numIn = 0, numRef = 0, afterDashes = 0;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--")) {
      afterDashes = 1;
    } else if (!strcmp(argv[i], "--atol") && i + 1 < argc) {
      atol = atof(argv[++i]);
    } else if (!strcmp(argv[i], "--rtol") && i + 1 < argc) {
      rtol = atof(argv[++i]);
    } else if (afterDashes ? numRef < 32 : numIn < 32) {
      if (afterDashes)
        refs[numRef++] = argv[i];
      else
        inputs[numIn++] = argv[i];
    }
  }
  int32_t count = 0;
  const attn_kernel_info_t *const *kernels = attn_kernels(&count);
  if (!kernels || count < 1) {
    fprintf(stderr, "npy-kernel-driver: the library has no kernel\n");
    return 2;
  }
  const attn_kernel_info_t *kernel = kernels[0];
  if (numIn != kernel->num_inputs || numRef != kernel->num_outputs) {
    fprintf(stderr,
            "npy-kernel-driver: %s takes %d inputs and %d outputs; got %d "
            "and %d files\n",
            kernel->name, kernel->num_inputs, kernel->num_outputs, numIn,
            numRef);
    return 2;
  }
  DLTensor *tensors[64];
  Npy refArrays[32];
  for (int i = 0; i < numIn; ++i) {
    Npy a = readNpy(inputs[i]);
    tensors[i] = makeInput(&a, kernel->tensors[i].dtype, inputs[i]);
  }
  for (int i = 0; i < numRef; ++i) {
    refArrays[i] = readNpy(refs[i]);
    const attn_tensor_info_t *info = &kernel->tensors[numIn + i];
    Npy zeros = refArrays[i];
    zeros.descr[1] = 'f';
    zeros.descr[2] = '8';
    zeros.descr[3] = 0;
    zeros.data = calloc(zeros.count + 1, sizeof(double));
    tensors[numIn + i] = makeInput(&zeros, info->dtype, refs[i]);
  }
  attn_status_t status =
      attn_kernel_call(kernel, tensors, numIn + numRef, NULL);
  if (status != ATTN_STATUS_OK) {
    printf("%s: %s: %s\n", kernel->name, attn_status_name(status),
           attn_last_error());
    return 1;
  }
  int bad = 0;
  for (int i = 0; i < numRef; ++i) {
    const Npy *ref = &refArrays[i];
    const DLTensor *out = tensors[numIn + i];
    double maxErr = 0;
    int64_t mismatches = 0;
    for (int64_t j = 0; j < ref->count; ++j) {
      double want = floatAt(ref, j), got = outputAt(out, j);
      double err = got == want ? 0 : fabs(got - want); /* inf == inf */
      int ok = isnan(want)   ? isnan(got)
               : isinf(want) ? got == want
                             : err <= atol + rtol * fabs(want);
      if (!ok) {
        if (mismatches < 5)
          printf("  %s[%lld]: %.9g, reference %.9g\n",
                 kernel->tensors[numIn + i].name, (long long)j, got, want);
        ++mismatches;
      }
      if (!isnan(want) && (err > maxErr || isnan(err)))
        maxErr = err;
    }
    printf("%s %s: %lld values, max abs err %.3g, %lld beyond tolerance: %s\n",
           kernel->name, kernel->tensors[numIn + i].name, (long long)ref->count,
           maxErr, (long long)mismatches, mismatches ? "MISMATCH" : "ok");
    bad += mismatches != 0;
  }
  return bad ? 1 : 0;
}
