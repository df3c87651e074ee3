//===- AbiFuzzer.cpp - the kernel ABI on arbitrary DLPack tensors ---------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// attn-fuzz-abi: calls kernels compiled ahead of time (fuzz/abi-kernels.mlir:
// dense with dynamic sizes and kv_len, paged, ragged, a mask region reading
// document ids; one shared library per form, built by attn-compile) through
// attn_kernel_call with tensors the input chooses: sizes, dtypes, ranks,
// devices, strides (padded, permuted, negative), byte offsets (also
// misaligned), null data or a null tensor, and the values of kv_len, page
// tables, ragged offsets and document ids (also out of range). Properties:
//  - every call returns: a status with a message, or ATTN_STATUS_OK;
//  - ATTN_STATUS_OK: every output equals the f64 reference of the spec on
//    the same inputs (attn/Execution/ReferenceBridge.h) within
//    defaultTolerance; the reference accepting the inputs (it checks page
//    tables and offsets itself), except for region reads the kernel never
//    evaluated (docs/Semantics.md: reads in tiles the classification skips
//    or finds full);
//  - nothing is written outside the outputs' elements: inputs and the
//    padding around strided outputs keep their bytes (canary pattern);
//  - no sanitizer report (the fuzz build runs under ASan and UBSan).
//
// Input format: one decision per byte (FuzzCommon.h): form, kernel, the
// dynamic sizes by name, then per tensor a mutation byte and a layout byte,
// then values.
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"

#include "attn-c/Kernel.h"
#include "attn/Execution/HostTensor.h"
#include "attn/Execution/ReferenceBridge.h"
#include "attn/IR/AttnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/MemoryBuffer.h"

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

using namespace mlir;
using namespace mlir::attn;
using ::attn::fuzz::ByteReader;

namespace {

const char *const kForms[] = {"naive", "fused", "decode"};
const char *const kKernels[] = {"dense", "paged", "ragged", "documents"};
constexpr unsigned kNumKernels = 4;

struct State {
  MLIRContext ctx;
  OwningOpRef<ModuleOp> module;
  /// [form][kernel]
  const attn_kernel_info_t *kernels[3][kNumKernels] = {};
};

State *state = nullptr;

/// Calls by outcome, printed at exit: how many good calls were compared.
struct Counts {
  int64_t calls = 0, ok = 0, refused = 0, unevaluated = 0;
} counts;

void printCounts() {
  llvm::errs() << "attn-fuzz-abi: " << counts.calls << " calls: " << counts.ok
               << " ok and equal to the reference, " << counts.refused
               << " refused with a status, " << counts.unevaluated
               << " ok with a region read out of bounds never evaluated\n";
}

std::string dirOfExecutable() {
  Dl_info info;
  if (!dladdr(reinterpret_cast<void *>(&dirOfExecutable), &info) ||
      !info.dli_fname)
    return ".";
  std::string path = info.dli_fname;
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

/// Bytes per element of a kernel tensor's dtype (bool is one byte).
int64_t elementBytes(DLDataType t) { return std::max<int64_t>(1, t.bits / 8); }

ElementKind kindOf(DLDataType t) {
  if (t.code == kDLInt)
    return t.bits == 64 ? ElementKind::I64 : ElementKind::I32;
  if (t.code == kDLBfloat)
    return ElementKind::BF16;
  if (t.code == kDLFloat && t.bits == 16)
    return ElementKind::F16;
  return ElementKind::F32;
}

/// One DLTensor the fuzzer passes, with the buffer behind it.
struct Tensor {
  DLTensor dl{};
  std::vector<int64_t> shape, strides;
  std::vector<uint8_t> buffer;   // what dl.data points into
  std::vector<uint8_t> original; // the buffer before the call
  bool null = false;             // passed as a null DLTensor pointer
  bool truthful = true;          // the buffer backs every element described
  int64_t elemBytes = 4;

  /// Byte offset in `buffer` of element `idx` (row-major index) or -1.
  int64_t byteOf(int64_t idx) const {
    int64_t off = static_cast<int64_t>(dl.byte_offset);
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      int64_t i = idx % shape[d];
      idx /= shape[d];
      off += i * strides[d] * elemBytes;
    }
    return off;
  }
  int64_t numElements() const {
    int64_t n = 1;
    for (int64_t s : shape)
      n *= s;
    return n;
  }
};

constexpr uint8_t kCanary = 0xA5;
constexpr int64_t kMaxBytes = int64_t(1) << 22;

/// Lays out `t` with the strides the layout byte chooses and allocates a
/// buffer that backs exactly the elements described (plus an offset).
void layOut(Tensor &t, uint8_t layout, ByteReader &r) {
  int64_t rank = static_cast<int64_t>(t.shape.size());
  std::vector<int64_t> order(rank);
  for (int64_t d = 0; d < rank; ++d)
    order[d] = d;
  int64_t pad = 0;
  bool negate = false;
  switch (layout % 8) {
  case 1: // padded rows
    pad = 1 + r.pick(3);
    break;
  case 2: // the two last dimensions swapped in memory
    if (rank >= 2)
      std::swap(order[rank - 1], order[rank - 2]);
    break;
  case 3: // reversed dimension order
    std::reverse(order.begin(), order.end());
    break;
  case 4: // a negative stride on the first dimension
    negate = true;
    break;
  default:
    break;
  }
  t.strides.assign(rank, 0);
  int64_t stride = 1;
  for (int64_t k = rank - 1; k >= 0; --k) {
    int64_t d = order[k];
    t.strides[d] = stride;
    stride *= std::max<int64_t>(t.shape[d], 1) + (k == rank - 1 ? pad : 0);
  }
  if (negate && rank > 0)
    t.strides[0] = -t.strides[0];
  // The range of element offsets the tensor describes.
  int64_t lo = 0, hi = 0;
  bool empty = false;
  for (int64_t d = 0; d < rank; ++d) {
    if (t.shape[d] <= 0) {
      empty = true;
      continue;
    }
    int64_t reach = (t.shape[d] - 1) * t.strides[d];
    (reach < 0 ? lo : hi) += reach;
  }
  int64_t misalign = (layout & 8) ? 1 + r.pick(3) : 0;
  int64_t extra = (layout & 16) ? 1 + r.pick(5) : 0; // whole elements
  int64_t offsetElems = -lo + extra;
  int64_t elems = empty ? 0 : hi - lo + 1;
  int64_t bytes = (offsetElems + elems) * t.elemBytes + misalign + 8;
  if (bytes > kMaxBytes) {
    t.truthful = false;
    bytes = 64;
  }
  t.buffer.assign(static_cast<size_t>(bytes), kCanary);
  t.dl.byte_offset =
      static_cast<uint64_t>(offsetElems * t.elemBytes + misalign);
  // Contiguous tensors pass null strides half of the time.
  bool contiguous = layout % 8 == 0 || layout % 8 >= 5;
  t.dl.strides = contiguous && (layout & 32) ? nullptr : t.strides.data();
}

/// Values of one tensor by its role.
void fill(Tensor &t, const attn_tensor_info_t &info,
          const std::map<std::string, int64_t> &sizes, ByteReader &r) {
  if (!t.truthful || t.dl.data == nullptr)
    return;
  std::string name = info.name;
  int64_t n = t.numElements();
  auto size = [&](const char *s) {
    auto it = sizes.find(s);
    return it == sizes.end() ? int64_t(4) : it->second;
  };
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = t.byteOf(i);
    uint8_t *p = t.buffer.data() + off;
    int64_t v = 0;
    if (name == "kv_len") {
      v = static_cast<int64_t>(r.pick(static_cast<unsigned>(size("Nk") + 4))) -
          1;
    } else if (name == "page_table") {
      v = static_cast<int64_t>(
              r.pick(static_cast<unsigned>(size("Pages") + 2))) -
          1;
    } else if (name.rfind("cu_seqlens", 0) == 0) {
      int64_t tokens = name == "cu_seqlens_q" ? size("Nq") : size("Nk");
      // Mostly non-decreasing offsets ending at the packed tokens.
      v = i == n - 1 && r.pick(8) ? tokens
                                  : (i * tokens) / std::max<int64_t>(n - 1, 1);
      if (r.pick(8) == 0)
        v += static_cast<int64_t>(r.pick(5)) - 2;
    } else if (name.rfind("mod_input", 0) == 0) {
      v = r.pick(3);
    }
    if (t.dl.dtype.code == kDLInt && t.dl.dtype.bits == 32) {
      int32_t x = static_cast<int32_t>(v);
      std::memcpy(p, &x, 4);
    } else if (t.dl.dtype.code == kDLInt && t.dl.dtype.bits == 64) {
      std::memcpy(p, &v, 8);
    } else if (t.dl.dtype.code == kDLFloat && t.dl.dtype.bits == 32) {
      float x = (static_cast<int>(r.byte()) - 128) / 64.0f;
      std::memcpy(p, &x, 4);
    } else {
      // Another dtype (a mutation): any bytes.
      for (int64_t b = 0; b < t.elemBytes; ++b)
        p[b] = r.byte();
    }
  }
}

/// The elements of `t` as a dense host tensor of the kernel's dtype.
HostTensor gather(const Tensor &t, ElementKind kind) {
  HostTensor h;
  h.resize(kind, t.shape);
  int64_t n = t.numElements();
  for (int64_t i = 0; i < n; ++i)
    std::memcpy(h.bytes.data() + i * t.elemBytes, t.buffer.data() + t.byteOf(i),
                t.elemBytes);
  return h;
}

std::string describe(const std::vector<Tensor> &ts,
                     const attn_kernel_info_t *k) {
  std::string s = std::string(k->name) + " (" + k->form + "):";
  for (size_t i = 0; i < ts.size(); ++i) {
    s += std::string(" ") + k->tensors[i].name + "[";
    for (size_t d = 0; d < ts[i].shape.size(); ++d)
      s += (d ? "," : "") + std::to_string(ts[i].shape[d]);
    s += "]";
  }
  return s;
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  state = new State;
  std::atexit(printCounts);
  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registry.insert<AttnDialect>();
  state->ctx.appendDialectRegistry(registry);
  state->ctx.loadAllAvailableDialects();
  std::string dir = dirOfExecutable();
  auto file = llvm::MemoryBuffer::getFile(dir + "/abi-kernels.mlir");
  if (!file)
    ::attn::fuzz::fail("attn-fuzz-abi: no abi-kernels.mlir next to " + dir);
  state->module =
      parseSourceString<ModuleOp>((*file)->getBuffer(), &state->ctx);
  if (!state->module)
    ::attn::fuzz::fail("attn-fuzz-abi: abi-kernels.mlir does not parse");
  for (unsigned f = 0; f < 3; ++f) {
    std::string path = dir + "/libabi_" + kForms[f] + ".so";
    void *h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h)
      ::attn::fuzz::fail(std::string("attn-fuzz-abi: ") + dlerror());
    for (unsigned k = 0; k < kNumKernels; ++k) {
      std::string sym = std::string("abi_") + kKernels[k] + "_info";
      auto get = reinterpret_cast<const attn_kernel_info_t *(*)()>(
          dlsym(h, sym.c_str()));
      if (!get)
        ::attn::fuzz::fail("attn-fuzz-abi: no " + sym + " in " + path);
      state->kernels[f][k] = get();
    }
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ByteReader r(data, size);
  unsigned form = r.pick(3), which = r.pick(kNumKernels);
  const attn_kernel_info_t *k = state->kernels[form][which];
  int32_t n = k->num_inputs + k->num_outputs;

  // Dynamic sizes by name ("" names: one size per occurrence).
  static const int64_t kSizes[] = {1, 2, 3, 4, 5, 8, 9, 0, 16, 17, 6, 7};
  std::map<std::string, int64_t> sizes;
  auto sizeOf = [&](const std::string &name) {
    if (name.empty())
      return kSizes[r.pick(12)];
    auto it = sizes.find(name);
    if (it != sizes.end())
      return it->second;
    int64_t v = kSizes[r.pick(12)];
    if (name == "Seqs")
      v = r.pick(4);
    if (name == "B" || name == "Pages" || name == "MaxPages")
      v = 1 + r.pick(4);
    return sizes[name] = v;
  };

  std::vector<Tensor> ts(n);
  for (int32_t i = 0; i < n; ++i) {
    const attn_tensor_info_t &info = k->tensors[i];
    Tensor &t = ts[i];
    t.dl.device = {kDLCPU, 0};
    t.dl.dtype = info.dtype;
    for (int32_t d = 0; d < info.ndim; ++d) {
      int64_t s = info.shape[d];
      if (s < 0) {
        std::string name =
            info.dim_names && info.dim_names[d] ? info.dim_names[d] : "";
        s = sizeOf(name);
      }
      t.shape.push_back(s);
    }
  }
  // Mutations, one byte per tensor; about one tensor in eight is mutated.
  for (int32_t i = 0; i < n; ++i) {
    Tensor &t = ts[i];
    uint8_t m = r.byte();
    switch (m < 224 ? 255 : m % 16) {
    case 0:
      t.dl.dtype = {kDLFloat, 64, 1};
      break;
    case 1:
      t.dl.dtype = {kDLInt, 64, 1};
      break;
    case 2:
      t.shape.push_back(1);
      break;
    case 3:
      if (!t.shape.empty())
        t.shape.pop_back();
      break;
    case 4:
      if (!t.shape.empty())
        t.shape[r.pick(static_cast<unsigned>(t.shape.size()))] += 1;
      break;
    case 5:
      if (!t.shape.empty())
        t.shape[r.pick(static_cast<unsigned>(t.shape.size()))] = -1;
      break;
    case 6:
      if (!t.shape.empty())
        t.shape[0] = int64_t(1) << 40;
      break;
    case 7:
      t.dl.device = {kDLCUDA, 0};
      break;
    case 8:
      t.null = true;
      break;
    case 9:
      t.dl.device = {kDLCPU, 1 + static_cast<int32_t>(r.pick(3))};
      break;
    case 10:
      t.dl.dtype.lanes = 2;
      break;
    default:
      break;
    }
    t.elemBytes =
        elementBytes(t.dl.dtype) * std::max<int64_t>(t.dl.dtype.lanes, 1);
    bool negative = std::any_of(t.shape.begin(), t.shape.end(),
                                [](int64_t s) { return s < 0; });
    if (negative) {
      t.truthful = false;
      t.strides.assign(t.shape.size(), 1);
      t.buffer.assign(64, kCanary);
    } else {
      layOut(t, r.byte(), r);
    }
    t.dl.ndim = static_cast<int32_t>(t.shape.size());
    t.dl.shape = t.shape.data();
    if (!t.truthful)
      t.dl.strides = t.strides.data();
    // Null data for tensors the buffer cannot back, and sometimes anyway.
    t.dl.data = (!t.truthful || m == 223) ? nullptr : t.buffer.data();
  }
  for (int32_t i = 0; i < k->num_inputs; ++i)
    fill(ts[i], k->tensors[i], sizes, r);
  for (Tensor &t : ts)
    t.original = t.buffer;

  std::vector<DLTensor *> ptrs;
  for (Tensor &t : ts)
    ptrs.push_back(t.null ? nullptr : &t.dl);
  attn_exec_options_t opts;
  attn_exec_options_init(&opts);
  opts.num_threads = 1 + static_cast<int32_t>(r.pick(2));
  attn_status_t status = attn_kernel_call(k, ptrs.data(), n, &opts);
  ++counts.calls;
  std::string message = attn_last_error();

  // Nothing written outside the outputs' elements.
  for (int32_t i = 0; i < n; ++i) {
    Tensor &t = ts[i];
    bool output = i >= k->num_inputs;
    std::vector<uint8_t> allowed(t.buffer.size(), 0);
    if (output && t.truthful && t.dl.data)
      for (int64_t e = 0; e < t.numElements(); ++e)
        std::fill_n(allowed.begin() + t.byteOf(e), t.elemBytes, 1);
    for (size_t b = 0; b < t.buffer.size(); ++b)
      if (!allowed[b] && t.buffer[b] != t.original[b])
        ::attn::fuzz::fail(
            "byte " + std::to_string(b) + " of tensor " + k->tensors[i].name +
            " changed outside the outputs' elements: " + describe(ts, k) +
            "; status " + attn_status_name(status));
  }
  if (status != ATTN_STATUS_OK) {
    if (message.empty())
      ::attn::fuzz::fail(std::string("status ") + attn_status_name(status) +
                         " without a message: " + describe(ts, k));
    ++counts.refused;
    return 0;
  }

  // A good call: the outputs are the reference's.
  func::FuncOp fn = state->module->lookupSymbol<func::FuncOp>(k->name);
  Operation *op = nullptr;
  fn.walk([&](AttentionOp a) { op = a; });
  std::vector<HostTensor> args;
  for (int32_t i = 0; i < k->num_inputs; ++i)
    args.push_back(gather(ts[i], kindOf(k->tensors[i].dtype)));
  std::vector<const HostTensor *> argPtrs;
  for (const HostTensor &h : args)
    argPtrs.push_back(&h);
  std::vector<::attn::ref::Tensor> expected;
  llvm::Error err = runReference(op, argPtrs, expected, nullptr);
  if (err) {
    std::string why = llvm::toString(std::move(err));
    // A region read the kernel's tile classification never evaluated.
    if (why.find("mod_inputs") != std::string::npos &&
        std::string(k->name) == "documents") {
      ++counts.unevaluated;
      return 0;
    }
    ::attn::fuzz::fail("the kernel accepted what the reference rejects (" +
                       why + "): " + describe(ts, k));
  }
  for (int32_t o = 0; o < k->num_outputs; ++o) {
    HostTensor out = gather(ts[k->num_inputs + o], ElementKind::F32);
    double atol, rtol;
    defaultTolerance(ElementKind::F32, atol, rtol);
    Comparison c = compare(out, expected[o], atol, rtol);
    if (c.mismatches)
      ::attn::fuzz::fail("output " + std::to_string(o) +
                         " differs from the "
                         "reference (max abs error " +
                         std::to_string(c.maxAbsError) + ", first mismatch " +
                         std::to_string(c.firstMismatch) +
                         "): " + describe(ts, k));
  }
  ++counts.ok;
  return 0;
}
