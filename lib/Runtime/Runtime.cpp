//===- Runtime.cpp - the runtime compiled attn kernels call through -------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// libattn_runtime: checks the caller's DLTensors against the descriptor
// attn-compile emits with each kernel (attn_kernel_info_t), builds the memref
// descriptors the compiled `_mlir_ciface_` entry takes, gathers strided
// tensors into a dense workspace (and scatters strided outputs back; the
// copy and attn_rt_memref_copy are in StridedCopy.cpp), scopes
// the OpenMP thread count to the call, and reports errors through a status
// and a thread-local message. GPU kernels (ATTN_KERNEL_GPU) take device
// tensors; the runtime makes their device and the caller's stream current
// in libattn_gpu_runtime around the call and turns a failed driver call
// into ATTN_STATUS_DEVICE_ERROR. Plain C++ with no LLVM or MLIR dependency:
// it is what a machine without MLIR needs to run compiled kernels.
//
//===----------------------------------------------------------------------===//

#include "attn-c/Kernel.h"

#include "attn-c/Gpu.h"

#include "StridedCopy.h"

#include <algorithm>
#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define ATTN_RT_EXPORT __attribute__((visibility("default")))

namespace {

using attn::runtime::stridedCopy;

thread_local std::string lastError;

/// The run-time checks of generated code (attn/Runtime/RuntimeChecks.def).
struct CheckInfo {
  attn_status_t status;
  const char *format;
};
constexpr CheckInfo kChecks[] = {
#define ATTN_RUNTIME_CHECK(Name, STATUS, FORMAT) {STATUS, FORMAT},
#include "attn/Runtime/RuntimeChecks.def"
};
constexpr int32_t kNumChecks = sizeof(kChecks) / sizeof(kChecks[0]);

/// What the checks of one call record: the first failure wins. Generated
/// code takes the address of the calling thread's record once per call
/// (attn_rt_error_context) and passes it to the OpenMP workers, so every
/// thread of the call records into the caller's.
struct ErrorRecord {
  /// -1: no failure; -2: a failure is being written; kMessageCheck: a
  /// failure with its own message (attn_rt_report_error); else the check.
  std::atomic<int32_t> check{-1};
  int64_t args[4] = {0, 0, 0, 0};
  attn_status_t status = ATTN_STATUS_OK;
  char message[512] = {0};
};
constexpr int32_t kMessageCheck = 1 << 20;
thread_local ErrorRecord errorRecord;

void clearErrorRecord() { errorRecord.check.store(-1); }

/// The status of the calling thread's record (and its message in
/// lastError); clears the record.
attn_status_t takeErrorRecord() {
  int32_t check = errorRecord.check.load(std::memory_order_acquire);
  errorRecord.check.store(-1);
  if (check == -1)
    return ATTN_STATUS_OK;
  if (check == kMessageCheck) {
    lastError = errorRecord.message;
    return errorRecord.status;
  }
  if (check < 0 || check >= kNumChecks) {
    lastError = "attn: a run-time check failed (unknown check " +
                std::to_string(check) + ")";
    return ATTN_STATUS_INVALID_ARGUMENT;
  }
  const int64_t *a = errorRecord.args;
  char buf[1024];
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
  std::snprintf(buf, sizeof(buf), kChecks[check].format,
                static_cast<long long>(a[0]), static_cast<long long>(a[1]),
                static_cast<long long>(a[2]), static_cast<long long>(a[3]));
#pragma GCC diagnostic pop
  lastError = buf;
  return kChecks[check].status;
}

/// DLPack's bool code (kDLBool, DLPack >= 0.8); 0.6 headers lack the name.
constexpr uint8_t kBoolCode = 6;

attn_status_t fail(attn_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

attn_status_t fail(attn_status_t status, const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  lastError = buf;
  return status;
}

std::string dtypeName(DLDataType t) {
  const char *code = "?";
  switch (t.code) {
  case kDLInt:
    code = "i";
    break;
  case kDLUInt:
    code = "u";
    break;
  case kDLFloat:
    code = "f";
    break;
  case kDLBfloat:
    code = "bf";
    break;
  case kBoolCode:
    return "bool";
  default:
    break;
  }
  std::string s = code + std::to_string(t.bits);
  if (t.lanes != 1)
    s += "x" + std::to_string(t.lanes);
  return s;
}

std::string shapeName(const int64_t *shape, int32_t ndim) {
  std::string s = "[";
  for (int32_t d = 0; d < ndim; ++d) {
    if (d)
      s += ",";
    s += shape[d] < 0 ? std::string("?") : std::to_string(shape[d]);
  }
  return s + "]";
}

std::string describeKernel(const attn_kernel_info_t *k) {
  std::string s = std::string(k->name) + "(";
  int32_t n = k->num_inputs + k->num_outputs;
  for (int32_t i = 0; i < n; ++i) {
    const attn_tensor_info_t &t = k->tensors[i];
    if (i)
      s += ", ";
    s += std::string(t.name) + ": " + dtypeName(t.dtype) +
         shapeName(t.shape, t.ndim);
  }
  return s + ")";
}

/// Bytes per element in the kernel's buffers (bool is one byte).
int64_t elementBytes(DLDataType t) {
  if (t.code == kBoolCode || t.bits == 1)
    return 1;
  return (t.bits * t.lanes + 7) / 8;
}

bool sameDtype(DLDataType want, DLDataType got) {
  if (got.lanes != 1)
    return false;
  if (want.code == kBoolCode)
    return (got.code == kBoolCode && got.bits == 8) ||
           (got.code == kDLUInt && got.bits == 8);
  return want.code == got.code && want.bits == got.bits;
}

int64_t numElements(const DLTensor *t) {
  int64_t n = 1;
  for (int32_t d = 0; d < t->ndim; ++d)
    n *= t->shape[d];
  return n;
}

bool isContiguous(const DLTensor *t) {
  if (!t->strides)
    return true;
  int64_t expect = 1;
  for (int32_t d = t->ndim - 1; d >= 0; --d) {
    if (t->shape[d] != 1 && t->strides[d] != expect)
      return false;
    expect *= t->shape[d];
  }
  return true;
}

/// Whether the kernel reads `t` (its tensor `i`) where it is: contiguous, or
/// an input of a dynamic size of a kernel that takes strided views, whose
/// innermost stride is 1 (checkAll refused negative strides already).
bool readsInPlace(const attn_kernel_info_t *k, int32_t i, const DLTensor *t) {
  if (isContiguous(t))
    return true;
  const attn_tensor_info_t &info = k->tensors[i];
  if (!(k->flags & ATTN_KERNEL_STRIDED_INPUTS) || info.is_output ||
      std::find(info.shape, info.shape + info.ndim, -1) ==
          info.shape + info.ndim)
    return false;
  return t->ndim == 0 || t->shape[t->ndim - 1] == 1 ||
         t->strides[t->ndim - 1] == 1;
}

int64_t alignUp(int64_t n) { return (n + 63) / 64 * 64; }

/// The workspace a call needs: one dense copy of each tensor the kernel
/// neither reads in place nor returns.
int64_t workspaceBytes(const attn_kernel_info_t *k, DLTensor *const *tensors,
                       int32_t n) {
  bool returnsOutputs = k->flags & ATTN_KERNEL_RETURNS_OUTPUTS;
  int64_t needed = 0;
  for (int32_t i = 0; i < n; ++i) {
    bool returned = returnsOutputs && k->tensors[i].is_output;
    if (!returned && !readsInPlace(k, i, tensors[i]))
      needed +=
          alignUp(numElements(tensors[i]) * elementBytes(k->tensors[i].dtype));
  }
  return needed;
}

bool isGpu(const attn_kernel_info_t *k) { return k->flags & ATTN_KERNEL_GPU; }

/// Where a kernel's tensors must be: the host, or one CUDA device (the first
/// tensor's, once seen).
struct Placement {
  const attn_kernel_info_t *kernel;
  int32_t cudaDevice = -1;
};

/// The sizes named dimensions ("B", "Nk", ...) take in one call, and the
/// tensor that gave each first: a handful of names, so a linear search over
/// an array with no allocation (a call's checks run on every call).
struct NamedSizes {
  struct Entry {
    const char *name;
    int64_t size;
    const char *tensor;
  };
  static constexpr int kInline = 32;
  Entry inlineEntries[kInline];
  std::vector<Entry> more; // past kInline names (never seen in practice)
  int count = 0;

  const Entry *find(const char *name) const {
    for (int i = 0; i < count; ++i) {
      const Entry &e = i < kInline ? inlineEntries[i] : more[i - kInline];
      if (std::strcmp(e.name, name) == 0)
        return &e;
    }
    return nullptr;
  }
  void add(const char *name, int64_t size, const char *tensor) {
    if (count < kInline)
      inlineEntries[count] = {name, size, tensor};
    else
      more.push_back({name, size, tensor});
    ++count;
  }
};

/// Checks one tensor against its info; `names` collects the sizes named
/// dimensions take. Sets the error message unless `quiet`.
attn_status_t checkTensor(const attn_tensor_info_t &info, const DLTensor *t,
                          NamedSizes &names, Placement &where, bool quiet) {
  auto err = [&](attn_status_t s, const std::string &msg) {
    if (!quiet)
      fail(s, "%s %s: %s", info.is_output ? "output" : "input", info.name,
           msg.c_str());
    return s;
  };
  if (!t)
    return err(ATTN_STATUS_INVALID_ARGUMENT, "null tensor");
  bool gpu = isGpu(where.kernel);
  if (!gpu && t->device.device_type != kDLCPU)
    return err(ATTN_STATUS_UNSUPPORTED_DEVICE,
               "device type " + std::to_string(t->device.device_type) +
                   ", expected kDLCPU (" + std::to_string(kDLCPU) + ")");
  if (gpu && t->device.device_type != kDLCUDA)
    return err(ATTN_STATUS_UNSUPPORTED_DEVICE,
               "device type " + std::to_string(t->device.device_type) +
                   ", expected kDLCUDA (" + std::to_string(kDLCUDA) +
                   "): kernel " + where.kernel->name + " runs on the GPU (" +
                   where.kernel->target_cpu + ")");
  if (gpu && where.cudaDevice >= 0 && t->device.device_id != where.cudaDevice)
    return err(ATTN_STATUS_UNSUPPORTED_DEVICE,
               "on CUDA device " + std::to_string(t->device.device_id) +
                   ", the tensors before it on CUDA device " +
                   std::to_string(where.cudaDevice));
  if (gpu)
    where.cudaDevice = t->device.device_id;
  if (!sameDtype(info.dtype, t->dtype))
    return err(ATTN_STATUS_DTYPE_MISMATCH, "dtype " + dtypeName(t->dtype) +
                                               ", expected " +
                                               dtypeName(info.dtype));
  if (t->ndim != info.ndim)
    return err(ATTN_STATUS_SHAPE_MISMATCH,
               "rank " + std::to_string(t->ndim) + ", expected " +
                   std::to_string(info.ndim) + " " +
                   shapeName(info.shape, info.ndim));
  if (t->ndim > 0 && !t->shape)
    return err(ATTN_STATUS_INVALID_ARGUMENT, "null shape");
  int64_t bytes = elementBytes(info.dtype), total = bytes;
  for (int32_t d = 0; d < t->ndim; ++d) {
    int64_t size = t->shape[d];
    if (size < 0)
      return err(ATTN_STATUS_SHAPE_MISMATCH,
                 "negative size in dimension " + std::to_string(d));
    if (__builtin_mul_overflow(total, size, &total))
      return err(ATTN_STATUS_SHAPE_MISMATCH,
                 "shape " + shapeName(t->shape, t->ndim) +
                     " has more bytes than an int64_t counts");
    if (info.shape[d] >= 0 && info.shape[d] != size)
      return err(ATTN_STATUS_SHAPE_MISMATCH,
                 "shape " + shapeName(t->shape, t->ndim) + ", expected " +
                     shapeName(info.shape, info.ndim) + " (dimension " +
                     std::to_string(d) + ")");
    const char *dimName = info.dim_names ? info.dim_names[d] : "";
    if (!dimName || !*dimName)
      continue;
    const NamedSizes::Entry *seen = names.find(dimName);
    if (!seen) {
      names.add(dimName, size, info.name);
      continue;
    }
    if (seen->size != size)
      return err(ATTN_STATUS_SHAPE_MISMATCH,
                 std::string("size ") + dimName + " = " + std::to_string(size) +
                     " (dimension " + std::to_string(d) + ") disagrees with " +
                     dimName + " = " + std::to_string(seen->size) + " of " +
                     seen->tensor);
  }
  uintptr_t p = reinterpret_cast<uintptr_t>(t->data) + t->byte_offset;
  if (!t->data && numElements(t) > 0)
    return err(ATTN_STATUS_INVALID_ARGUMENT, "null data");
  if (p % static_cast<uintptr_t>(bytes))
    return err(ATTN_STATUS_UNSUPPORTED_DEVICE,
               "data + byte_offset is not aligned to the element size (" +
                   std::to_string(bytes) + " bytes)");
  if (t->strides)
    for (int32_t d = 0; d < t->ndim; ++d)
      if (t->strides[d] < 0)
        return err(ATTN_STATUS_SHAPE_MISMATCH,
                   "negative stride in dimension " + std::to_string(d));
  if (gpu && !isContiguous(t))
    return err(ATTN_STATUS_UNSUPPORTED_DEVICE,
               "strides " + shapeName(t->strides, t->ndim) +
                   " are not dense row-major; GPU kernels take contiguous "
                   "tensors");
  return ATTN_STATUS_OK;
}

attn_status_t checkOptions(const attn_exec_options_t *o,
                           const attn_kernel_info_t *k) {
  if (!o)
    return ATTN_STATUS_OK;
  if (o->abi_version != ATTN_KERNEL_ABI_VERSION)
    return fail(ATTN_STATUS_ABI_MISMATCH,
                "options->abi_version is %u, this runtime implements %d",
                o->abi_version, ATTN_KERNEL_ABI_VERSION);
  if (o->struct_size < sizeof(attn_exec_options_t))
    return fail(ATTN_STATUS_ABI_MISMATCH,
                "options->struct_size is %u, expected at least %zu",
                o->struct_size, sizeof(attn_exec_options_t));
  if (o->num_threads < 0)
    return fail(ATTN_STATUS_INVALID_ARGUMENT,
                "options->num_threads is %d, expected >= 0", o->num_threads);
  if (o->stream && !(k && isGpu(k)))
    return fail(ATTN_STATUS_UNSUPPORTED_DEVICE,
                "options->stream is set, but this is a CPU kernel");
  if (o->workspace_size && !o->workspace)
    return fail(ATTN_STATUS_INVALID_ARGUMENT,
                "options->workspace_size is %zu with a null workspace",
                o->workspace_size);
  return ATTN_STATUS_OK;
}

attn_status_t checkAll(const attn_kernel_info_t *k, DLTensor *const *tensors,
                       int32_t n, bool quiet) {
  if (!k)
    return quiet ? ATTN_STATUS_INVALID_ARGUMENT
                 : fail(ATTN_STATUS_INVALID_ARGUMENT, "null kernel");
  if (k->abi_version != ATTN_KERNEL_ABI_VERSION)
    return quiet ? ATTN_STATUS_ABI_MISMATCH
                 : fail(ATTN_STATUS_ABI_MISMATCH,
                        "kernel %s was compiled for ABI version %u, this "
                        "runtime implements %d",
                        k->name, k->abi_version, ATTN_KERNEL_ABI_VERSION);
  int32_t want = k->num_inputs + k->num_outputs;
  if (!tensors || n != want)
    return quiet ? ATTN_STATUS_INVALID_ARGUMENT
                 : fail(ATTN_STATUS_INVALID_ARGUMENT,
                        "kernel %s takes %d tensors (%d inputs, %d "
                        "outputs), got %d",
                        k->name, want, k->num_inputs, k->num_outputs,
                        tensors ? n : 0);
  if (isGpu(k) && (k->flags & ATTN_KERNEL_RETURNS_OUTPUTS))
    return quiet ? ATTN_STATUS_UNSUPPORTED_DEVICE
                 : fail(ATTN_STATUS_UNSUPPORTED_DEVICE,
                        "kernel %s runs on the GPU and returns dynamically "
                        "shaped outputs, which GPU kernels cannot",
                        k->name);
  NamedSizes names;
  Placement where{k};
  for (int32_t i = 0; i < n; ++i)
    if (attn_status_t s =
            checkTensor(k->tensors[i], tensors[i], names, where, quiet))
      return s;
  // Grouped heads: each K/V head serves Hq / Hkv query heads.
  const NamedSizes::Entry *hq = names.find("Hq"), *hkv = names.find("Hkv");
  if (hq && hkv && (hkv->size == 0 || hq->size % hkv->size))
    return quiet ? ATTN_STATUS_SHAPE_MISMATCH
                 : fail(ATTN_STATUS_SHAPE_MISMATCH,
                        "Hq = %lld query heads (%s) are not a multiple of "
                        "Hkv = %lld K/V heads (%s)",
                        static_cast<long long>(hq->size), hq->tensor,
                        static_cast<long long>(hkv->size), hkv->tensor);
  return ATTN_STATUS_OK;
}

/// data + byte_offset; null for null data (allowed for empty tensors, whose
/// byte offset is then never applied: arithmetic on null is undefined).
char *tensorBase(const DLTensor *t) {
  if (!t->data)
    return nullptr;
  return static_cast<char *>(t->data) + t->byte_offset;
}

/// n zero-initialized values: inline for the usual handful of tensors of a
/// call, on the heap beyond (a call allocates nothing of its own otherwise).
template <typename T, size_t N> class CallBuffer {
  T inlineValues[N];
  std::vector<T> heap;
  T *values;

public:
  explicit CallBuffer(size_t n) {
    if (n > N) {
      heap.assign(n, T());
      values = heap.data();
    } else {
      std::fill(inlineValues, inlineValues + n, T());
      values = inlineValues;
    }
  }
  CallBuffer(const CallBuffer &) = delete;
  CallBuffer &operator=(const CallBuffer &) = delete;
  T *data() { return values; }
  T &operator[](size_t i) { return values[i]; }
};

/// Restores the OpenMP thread count of the calling thread on scope exit.
struct ThreadScope {
  const attn_kernel_info_t *k;
  int32_t old = -1;
  ThreadScope(const attn_kernel_info_t *k, int32_t n) : k(k) {
    if (n > 0 && k->set_num_threads)
      old = k->set_num_threads(n);
  }
  ~ThreadScope() {
    if (old > 0)
      k->set_num_threads(old);
  }
};

/// ATTN_GPU_SYNC=1 (read once): GPU calls synchronize their stream.
bool syncEveryGpuCall() {
  static const bool sync = [] {
    const char *e = std::getenv("ATTN_GPU_SYNC");
    return e && *e && std::strcmp(e, "0") != 0;
  }();
  return sync;
}

/// For a GPU kernel's call: the tensors' device and the caller's stream
/// current in libattn_gpu_runtime (the generated host code launches on
/// them), the thread's previous ones restored on scope exit.
struct GpuScope {
  bool active;
  void *stream = nullptr, *oldStream = nullptr;
  uint32_t oldFlags = 0;
  int hadStream = 0, oldDevice = 0;

  GpuScope(const attn_kernel_info_t *k, DLTensor *const *tensors,
           const attn_exec_options_t *o)
      : active(isGpu(k)) {
    if (!active)
      return;
    stream = o ? o->stream : nullptr;
    hadStream = attn_gpu_get_current_stream(&oldStream, &oldFlags);
    oldDevice = attn_gpu_get_device();
    attn_gpu_take_error(); // an earlier call's error is not this call's
    attn_gpu_set_device(tensors[0]->device.device_id);
    attn_gpu_set_current_stream(
        stream, syncEveryGpuCall() ? 0u : ATTN_GPU_STREAM_ASYNC);
  }
  ~GpuScope() {
    if (!active)
      return;
    if (hadStream)
      attn_gpu_set_current_stream(oldStream, oldFlags);
    else
      attn_gpu_clear_current_stream();
    attn_gpu_set_device(oldDevice);
  }
  /// The first failed driver call of the kernel, as the call's status.
  attn_status_t finish(const attn_kernel_info_t *k) {
    if (!active)
      return ATTN_STATUS_OK;
    if (syncEveryGpuCall())
      attn_gpu_stream_synchronize(stream);
    if (const char *e = attn_gpu_take_error())
      return fail(ATTN_STATUS_DEVICE_ERROR, "kernel %s: %s", k->name, e);
    return ATTN_STATUS_OK;
  }
};

attn_status_t callChecked(const attn_kernel_info_t *k, DLTensor *const *tensors,
                          int32_t n, const attn_exec_options_t *o) {
  if (isGpu(k) && !attn_gpu_available())
    return fail(ATTN_STATUS_DEVICE_ERROR, "kernel %s runs on the GPU (%s): %s",
                k->name, k->target_cpu, attn_gpu_unavailable_reason());
  bool returnsOutputs = k->flags & ATTN_KERNEL_RETURNS_OUTPUTS;
  int64_t needed = workspaceBytes(k, tensors, n);
  char *workspace = nullptr;
  void *owned = nullptr;
  if (needed > 0) {
    if (o && o->workspace) {
      if (o->workspace_size < static_cast<size_t>(needed))
        return fail(ATTN_STATUS_WORKSPACE_TOO_SMALL,
                    "kernel %s needs %lld bytes of workspace for these "
                    "tensors, options->workspace_size is %zu",
                    k->name, static_cast<long long>(needed), o->workspace_size);
      workspace = static_cast<char *>(o->workspace);
    } else {
      owned = std::aligned_alloc(64, static_cast<size_t>(needed));
      if (!owned)
        return fail(ATTN_STATUS_OUT_OF_MEMORY,
                    "cannot allocate %lld bytes of workspace",
                    static_cast<long long>(needed));
      workspace = static_cast<char *>(owned);
    }
  }

  // Memref descriptors: {allocated, aligned, offset, sizes..., strides...},
  // one after another in `words`; args[] points at the result buffer (for
  // kernels that return outputs), then at each descriptor.
  size_t descWords = 0, resultWords = 0;
  for (int32_t i = 0; i < n; ++i) {
    size_t w = 3 + 2 * static_cast<size_t>(tensors[i]->ndim);
    if (returnsOutputs && k->tensors[i].is_output)
      resultWords += 3 + 2 * static_cast<size_t>(k->tensors[i].ndim);
    else
      descWords += w;
  }
  CallBuffer<int64_t, 256> words(descWords);
  CallBuffer<int64_t, 128> results(resultWords + 1);
  CallBuffer<void *, 32> args(static_cast<size_t>(n) + 1);
  CallBuffer<char *, 32> dense(static_cast<size_t>(n));
  size_t numArgs = 0;
  if (returnsOutputs)
    args[numArgs++] = results.data();
  int64_t *desc = words.data();
  char *next = workspace;
  for (int32_t i = 0; i < n; ++i) {
    const attn_tensor_info_t &info = k->tensors[i];
    DLTensor *t = tensors[i];
    if (returnsOutputs && info.is_output)
      continue;
    int64_t bytes = elementBytes(info.dtype);
    char *base = tensorBase(t);
    bool inPlace = readsInPlace(k, i, t);
    if (!inPlace) {
      dense[i] = next;
      next += alignUp(numElements(t) * bytes);
      if (!info.is_output)
        stridedCopy(base, t->strides, dense[i], nullptr, t->shape, t->ndim,
                    bytes);
      base = dense[i];
    }
    args[numArgs++] = desc;
    desc[0] = desc[1] = reinterpret_cast<int64_t>(base);
    desc[2] = 0;
    int64_t *sizes = desc + 3, *strides = desc + 3 + t->ndim;
    std::copy(t->shape, t->shape + t->ndim, sizes);
    int64_t stride = 1;
    for (int32_t dd = t->ndim - 1; dd >= 0; --dd) {
      // A strided view's own strides (in elements), except where a
      // dimension has one element (its index is always 0) or is last (1).
      bool own = inPlace && t->strides && t->shape[dd] != 1;
      strides[dd] = own ? t->strides[dd] : stride;
      stride *= t->shape[dd];
    }
    desc += 3 + 2 * t->ndim;
  }
  attn_status_t status = ATTN_STATUS_OK;
  clearErrorRecord();
  {
    ThreadScope threads(k, o ? o->num_threads : 0);
    GpuScope gpu(k, tensors, o);
    k->invoke_packed(args.data());
    status = gpu.finish(k);
  }
  // A failed run-time check of the kernel: its status and message.
  if (attn_status_t checked = takeErrorRecord())
    status = checked;

  if (!returnsOutputs) {
    for (int32_t i = k->num_inputs; i < n; ++i)
      if (dense[i])
        stridedCopy(dense[i], nullptr, tensorBase(tensors[i]),
                    tensors[i]->strides, tensors[i]->shape, tensors[i]->ndim,
                    elementBytes(k->tensors[i].dtype));
  } else {
    // Copy the kernel's results into the caller's tensors, then free them.
    size_t off = 0;
    std::vector<int64_t> freed;
    for (int32_t i = k->num_inputs; i < n; ++i) {
      int32_t r = k->tensors[i].ndim;
      const int64_t *d = results.data() + off;
      off += 3 + 2 * r;
      DLTensor *t = tensors[i];
      if (status == ATTN_STATUS_OK &&
          std::memcmp(d + 3, t->shape, r * sizeof(int64_t)))
        status = fail(ATTN_STATUS_SHAPE_MISMATCH,
                      "output %s: shape %s, the kernel computed %s",
                      k->tensors[i].name, shapeName(t->shape, r).c_str(),
                      shapeName(d + 3, r).c_str());
      int64_t bytes = elementBytes(k->tensors[i].dtype);
      if (status == ATTN_STATUS_OK)
        stridedCopy(reinterpret_cast<const char *>(d[1]) + d[2] * bytes,
                    d + 3 + r, tensorBase(t), t->strides, t->shape, r, bytes);
      int64_t alloc = d[0];
      bool isInput = false;
      for (int32_t j = 0; j < k->num_inputs; ++j)
        isInput |= alloc == reinterpret_cast<int64_t>(tensorBase(tensors[j]));
      bool seen = false;
      for (int64_t f : freed)
        seen |= f == alloc;
      // 0xdeadbeef: the allocated pointer of a constant global.
      if (!alloc || alloc == 0xdeadbeef || isInput || seen)
        continue;
      freed.push_back(alloc);
      std::free(reinterpret_cast<void *>(alloc));
    }
  }
  std::free(owned);
  return status;
}

} // namespace

extern "C" {

ATTN_RT_EXPORT const char *attn_last_error(void) { return lastError.c_str(); }

ATTN_RT_EXPORT uint32_t attn_runtime_abi_version(void) {
  return ATTN_KERNEL_ABI_VERSION;
}

ATTN_RT_EXPORT void attn_exec_options_init(attn_exec_options_t *options) {
  if (!options)
    return;
  std::memset(options, 0, sizeof(*options));
  options->struct_size = sizeof(*options);
  options->abi_version = ATTN_KERNEL_ABI_VERSION;
}

ATTN_RT_EXPORT const char *attn_status_name(attn_status_t status) {
  switch (status) {
  case ATTN_STATUS_OK:
    return "ATTN_STATUS_OK";
  case ATTN_STATUS_INVALID_ARGUMENT:
    return "ATTN_STATUS_INVALID_ARGUMENT";
  case ATTN_STATUS_DTYPE_MISMATCH:
    return "ATTN_STATUS_DTYPE_MISMATCH";
  case ATTN_STATUS_SHAPE_MISMATCH:
    return "ATTN_STATUS_SHAPE_MISMATCH";
  case ATTN_STATUS_UNSUPPORTED_DEVICE:
    return "ATTN_STATUS_UNSUPPORTED_DEVICE";
  case ATTN_STATUS_WORKSPACE_TOO_SMALL:
    return "ATTN_STATUS_WORKSPACE_TOO_SMALL";
  case ATTN_STATUS_ABI_MISMATCH:
    return "ATTN_STATUS_ABI_MISMATCH";
  case ATTN_STATUS_NO_SPECIALIZATION:
    return "ATTN_STATUS_NO_SPECIALIZATION";
  case ATTN_STATUS_OUT_OF_MEMORY:
    return "ATTN_STATUS_OUT_OF_MEMORY";
  case ATTN_STATUS_DEVICE_ERROR:
    return "ATTN_STATUS_DEVICE_ERROR";
  }
  return "(unknown status)";
}

ATTN_RT_EXPORT attn_status_t
attn_kernel_call(const attn_kernel_info_t *kernel, DLTensor *const *tensors,
                 int32_t num_tensors, const attn_exec_options_t *options) {
  lastError.clear();
  if (attn_status_t s = checkOptions(options, kernel))
    return s;
  if (attn_status_t s = checkAll(kernel, tensors, num_tensors, false))
    return s;
  return callChecked(kernel, tensors, num_tensors, options);
}

ATTN_RT_EXPORT attn_status_t attn_kernel_workspace_size(
    const attn_kernel_info_t *kernel, DLTensor *const *tensors,
    int32_t num_tensors, size_t *bytes) {
  lastError.clear();
  if (!bytes)
    return fail(ATTN_STATUS_INVALID_ARGUMENT, "null bytes pointer");
  *bytes = 0;
  if (attn_status_t s = checkAll(kernel, tensors, num_tensors, false))
    return s;
  *bytes = static_cast<size_t>(workspaceBytes(kernel, tensors, num_tensors));
  return ATTN_STATUS_OK;
}

ATTN_RT_EXPORT attn_status_t
attn_kernel_dispatch(const attn_kernel_info_t *const *kernels,
                     int32_t num_kernels, DLTensor *const *tensors,
                     int32_t num_tensors, const attn_exec_options_t *options) {
  lastError.clear();
  if (!kernels || num_kernels <= 0)
    return fail(ATTN_STATUS_INVALID_ARGUMENT, "no kernels to dispatch to");
  for (int32_t i = 0; i < num_kernels; ++i)
    if (checkAll(kernels[i], tensors, num_tensors, true) == ATTN_STATUS_OK)
      return attn_kernel_call(kernels[i], tensors, num_tensors, options);
  std::string got;
  for (int32_t i = 0; tensors && i < num_tensors; ++i) {
    if (i)
      got += ", ";
    const DLTensor *t = tensors[i];
    got += t ? dtypeName(t->dtype) + shapeName(t->shape, t->ndim) : "null";
  }
  std::string compiled;
  for (int32_t i = 0; i < num_kernels; ++i)
    compiled += (i ? "; " : "") + describeKernel(kernels[i]);
  return fail(ATTN_STATUS_NO_SPECIALIZATION,
              "no compiled specialization takes (%s); compiled: %s",
              got.c_str(), compiled.c_str());
}

ATTN_RT_EXPORT intptr_t attn_rt_error_context(void) {
  return reinterpret_cast<intptr_t>(&errorRecord);
}

static ErrorRecord *recordAt(intptr_t context) {
  return context ? reinterpret_cast<ErrorRecord *>(context) : &errorRecord;
}

ATTN_RT_EXPORT void attn_rt_check_failed(intptr_t context, int32_t check,
                                         int64_t a0, int64_t a1, int64_t a2,
                                         int64_t a3) {
  ErrorRecord *r = recordAt(context);
  int32_t expected = -1;
  if (!r->check.compare_exchange_strong(expected, -2))
    return;
  r->args[0] = a0;
  r->args[1] = a1;
  r->args[2] = a2;
  r->args[3] = a3;
  r->check.store(check, std::memory_order_release);
}

ATTN_RT_EXPORT void attn_rt_report_error(intptr_t context, attn_status_t status,
                                         const char *message) {
  ErrorRecord *r = recordAt(context);
  int32_t expected = -1;
  if (!r->check.compare_exchange_strong(expected, -2))
    return;
  r->status = status == ATTN_STATUS_OK ? ATTN_STATUS_INVALID_ARGUMENT : status;
  std::snprintf(r->message, sizeof(r->message), "%s", message ? message : "");
  r->check.store(kMessageCheck, std::memory_order_release);
}

ATTN_RT_EXPORT int32_t attn_rt_has_failed(intptr_t context) {
  ErrorRecord *r = recordAt(context);
  return r->check.load(std::memory_order_acquire) != -1;
}

ATTN_RT_EXPORT void attn_rt_clear_error(void) { clearErrorRecord(); }

ATTN_RT_EXPORT attn_status_t attn_rt_take_error(void) {
  lastError.clear();
  return takeErrorRecord();
}

} // extern "C"
