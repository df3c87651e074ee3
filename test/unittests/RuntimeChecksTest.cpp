//===- RuntimeChecksTest.cpp - run-time checks are statuses, not aborts ---===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// Every run-time check of generated code (attn/Runtime/RuntimeChecks.def) on
// real input: a bad call returns the check's status with its message (the
// operand, the index and the offending value), and a good call of the same
// compiled code in the same process then computes what the f64 reference
// does. Two paths reach the generated code:
//  - the kernel ABI (attn_kernel_call on kernels attn-compile built into a
//    shared library, Inputs/runtime-checks.mlir): data only the kernel can
//    judge (page tables, ragged offsets, region reads, cache positions);
//    sizes the runtime checks on the host first;
//  - the C++ JIT (JitFunction::invoke), which passes dynamic sizes straight
//    to the code: the size relations the verifier could not check.
// Each case runs in the naive, fused and decode forms.
//
//===----------------------------------------------------------------------===//

#include "attn-c/Kernel.h"
#include "attn/Execution/HostTensor.h"
#include "attn/Execution/Jit.h"
#include "attn/Execution/ReferenceBridge.h"
#include "attn/Execution/Runner.h"
#include "attn/GPUEmulator/SpecEmulation.h"
#include "attn/IR/AttnDialect.h"
#include "attn/IR/AttnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"

#include <dlfcn.h>

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

using namespace mlir;
using namespace mlir::attn;

namespace {

const char *const kForms[] = {"naive", "fused", "decode"};

/// A spec parsed here (for the reference and the argument types).
struct Spec {
  MLIRContext ctx;
  OwningOpRef<ModuleOp> module;
  std::string text;

  explicit Spec(const std::string &source) : text(source) {
    DialectRegistry registry;
    registerAllDialects(registry);
    registerAllExtensions(registry);
    registry.insert<AttnDialect>();
    ctx.appendDialectRegistry(registry);
    ctx.loadAllAvailableDialects();
    module = parseSourceString<ModuleOp>(source, &ctx);
  }

  func::FuncOp fn(StringRef name) {
    return module->lookupSymbol<func::FuncOp>(name);
  }
};

HostTensor filled(ElementKind kind, std::vector<int64_t> shape,
                  const std::function<double(int64_t)> &value) {
  HostTensor t;
  t.resize(kind, std::move(shape));
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.set(i, value(i));
  return t;
}

HostTensor randomF32(std::vector<int64_t> shape, unsigned seed) {
  return filled(ElementKind::F32, std::move(shape), [seed](int64_t i) {
    uint64_t x = (static_cast<uint64_t>(i) + 1) * 0x9E3779B97F4A7C15ull ^
                 (seed * 0xBF58476D1CE4E5B9ull);
    x ^= x >> 31;
    return static_cast<double>(x % 2001) / 1000.0 - 1.0;
  });
}

HostTensor ints(ElementKind kind, std::vector<int64_t> shape,
                std::vector<int64_t> values) {
  return filled(kind, std::move(shape),
                [&](int64_t i) { return static_cast<double>(values[i]); });
}

/// The reference's outputs for the attention op in `fn` on `args`, compared
/// with `outputs`.
void expectMatchesReference(func::FuncOp fn,
                            const std::vector<HostTensor> &args,
                            const std::vector<HostTensor> &outputs) {
  Operation *op = nullptr;
  fn.walk([&](AttentionOp a) { op = a; });
  ASSERT_TRUE(op);
  std::vector<const HostTensor *> ptrs;
  for (const HostTensor &t : args)
    ptrs.push_back(&t);
  std::vector<::attn::ref::Tensor> expected;
  llvm::Error err = runReference(op, ptrs, expected, nullptr);
  ASSERT_FALSE(err) << llvm::toString(std::move(err));
  ASSERT_EQ(expected.size(), outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    double atol, rtol;
    defaultTolerance(outputs[i].kind, atol, rtol);
    Comparison c = compare(outputs[i], expected[i], atol, rtol);
    EXPECT_EQ(c.mismatches, 0)
        << "output " << i << ": max abs error " << c.maxAbsError;
  }
}

//===----------------------------------------------------------------------===//
// The C++ JIT: sizes that disagree at run time
//===----------------------------------------------------------------------===//

struct JitCase {
  const char *name;
  const char *fn;
  /// The bad call's arguments; the good call's are `good`.
  std::function<std::vector<HostTensor>()> bad, good;
  int status;
  const char *message;
  /// Checks the good call's outputs (null: against the f64 reference).
  std::function<void(const std::vector<HostTensor> &,
                     const std::vector<HostTensor> &)>
      verify = nullptr;
};

// q, k, v fully dynamic, with a mask, kv_len, ALiBi and lse: every size
// relation is a run-time check.
const char *const kDynamicSpec = R"mlir(
func.func @dyn(%q: tensor<?x?x?x?xf32>, %k: tensor<?x?x?x?xf32>,
               %v: tensor<?x?x?x?xf32>, %m: tensor<?x?xi1>,
               %len: tensor<?xi32>, %s: tensor<?xf32>)
    -> (tensor<?x?x?x?xf32>, tensor<?x?x?xf32>) {
  %o, %l = attn.attention q(%q : tensor<?x?x?x?xf32>)
      k(%k : tensor<?x?x?x?xf32>) v(%v : tensor<?x?x?x?xf32>)
      mask(%m : tensor<?x?xi1>) kv_len(%len : tensor<?xi32>)
      alibi(%s : tensor<?xf32>)
      -> tensor<?x?x?x?xf32>, tensor<?x?x?xf32>
  return %o, %l : tensor<?x?x?x?xf32>, tensor<?x?x?xf32>
}
func.func @sink_dyn(%q: tensor<1x?x4x8xf32>, %k: tensor<1x2x6x8xf32>,
                    %v: tensor<1x2x6x8xf32>, %s: tensor<?xf32>)
    -> (tensor<1x?x4x8xf32>, tensor<1x?x4xf32>) {
  %o, %l = attn.attention q(%q : tensor<1x?x4x8xf32>)
      k(%k : tensor<1x2x6x8xf32>) v(%v : tensor<1x2x6x8xf32>)
      sink(%s : tensor<?xf32>) causal(top_left)
      -> tensor<1x?x4x8xf32>, tensor<1x?x4xf32>
  return %o, %l : tensor<1x?x4x8xf32>, tensor<1x?x4xf32>
}
func.func @static_lse(%q: tensor<?x2x4x8xf32>, %k: tensor<?x2x6x8xf32>,
                      %v: tensor<?x2x6x8xf32>)
    -> (tensor<?x2x4x8xf32>, tensor<2x2x4xf32>) {
  %o, %l = attn.attention q(%q : tensor<?x2x4x8xf32>)
      k(%k : tensor<?x2x6x8xf32>) v(%v : tensor<?x2x6x8xf32>)
      -> tensor<?x2x4x8xf32>, tensor<2x2x4xf32>
  return %o, %l : tensor<?x2x4x8xf32>, tensor<2x2x4xf32>
}
func.func @paged_dyn(%q: tensor<?x2x1x8xf32>, %kp: tensor<?x2x4x8xf32>,
                     %vp: tensor<?x2x4x8xf32>, %pt: tensor<?x?xi32>,
                     %len: tensor<?xi32>) -> tensor<?x2x1x8xf32> {
  %o = attn.attention q(%q : tensor<?x2x1x8xf32>)
      k(%kp : tensor<?x2x4x8xf32>) v(%vp : tensor<?x2x4x8xf32>)
      page_table(%pt : tensor<?x?xi32>) kv_len(%len : tensor<?xi32>)
      -> tensor<?x2x1x8xf32>
  return %o : tensor<?x2x1x8xf32>
}
func.func @ragged_dyn(%q: tensor<1x2x?x8xf32>, %k: tensor<1x2x?x8xf32>,
                      %cq: tensor<?xi32>, %ck: tensor<?xi32>)
    -> tensor<1x2x?x8xf32> {
  %o = attn.attention q(%q : tensor<1x2x?x8xf32>)
      k(%k : tensor<1x2x?x8xf32>) v(%k : tensor<1x2x?x8xf32>)
      ragged(%cq, %ck : tensor<?xi32>, tensor<?xi32>) -> tensor<1x2x?x8xf32>
  return %o : tensor<1x2x?x8xf32>
}
func.func @chunked_dyn(%q: tensor<1x2x?x8xf32>, %kp: tensor<4x2x4x8xf32>,
                       %vp: tensor<4x2x4x8xf32>, %cq: tensor<?xi32>,
                       %pt: tensor<?x2xi32>, %len: tensor<?xi32>)
    -> tensor<1x2x?x8xf32> {
  %o = attn.attention q(%q : tensor<1x2x?x8xf32>)
      k(%kp : tensor<4x2x4x8xf32>) v(%vp : tensor<4x2x4x8xf32>)
      ragged(%cq : tensor<?xi32>) page_table(%pt : tensor<?x2xi32>)
      kv_len(%len : tensor<?xi32>) causal(bottom_right)
      -> tensor<1x2x?x8xf32>
  return %o : tensor<1x2x?x8xf32>
}
func.func @pad_dyn(%q: tensor<2x2x3x8xf32>, %k: tensor<2x2x?x8xf32>,
                   %v: tensor<2x2x?x8xf32>, %first: tensor<?xi32>,
                   %m: tensor<?x?xi1>) -> tensor<2x2x3x8xf32> {
  %o = attn.attention q(%q : tensor<2x2x3x8xf32>) k(%k : tensor<2x2x?x8xf32>)
      v(%v : tensor<2x2x?x8xf32>) kv_start(%first : tensor<?xi32>)
      key_mask(%m : tensor<?x?xi1>) -> tensor<2x2x3x8xf32>
  return %o : tensor<2x2x3x8xf32>
}
func.func @quant_dyn(%q: tensor<1x4x3x8xf32>, %k: tensor<1x2x?x8xi8>,
                     %v: tensor<1x2x?x8xi8>, %ks: tensor<1x2x?xf32>,
                     %vs: tensor<?x2xf32>) -> tensor<1x4x3x8xf32> {
  %o = attn.attention q(%q : tensor<1x4x3x8xf32>) k(%k : tensor<1x2x?x8xi8>)
      v(%v : tensor<1x2x?x8xi8>) k_scale(%ks : tensor<1x2x?xf32>)
      v_scale(%vs : tensor<?x2xf32>) causal(bottom_right)
      -> tensor<1x4x3x8xf32>
  return %o : tensor<1x4x3x8xf32>
}
func.func @append_dyn(%c: tensor<?x2x?x4xf32>, %u: tensor<?x2x?x4xf32>,
                      %p: tensor<?xi32>) -> tensor<?x2x?x4xf32> {
  %0 = attn.kv_cache_append cache(%c : tensor<?x2x?x4xf32>)
      update(%u : tensor<?x2x?x4xf32>) at(%p : tensor<?xi32>)
      -> tensor<?x2x?x4xf32>
  return %0 : tensor<?x2x?x4xf32>
}
func.func @combine_dyn(%oa: tensor<1x2x?x4xf32>, %la: tensor<1x2x?xf32>,
                       %ob: tensor<1x2x?x4xf32>, %lb: tensor<1x2x?xf32>)
    -> (tensor<1x2x?x4xf32>, tensor<1x2x?xf32>) {
  %o, %l = attn.combine a(%oa, %la : tensor<1x2x?x4xf32>, tensor<1x2x?xf32>)
      b(%ob, %lb : tensor<1x2x?x4xf32>, tensor<1x2x?xf32>)
      -> tensor<1x2x?x4xf32>, tensor<1x2x?xf32>
  return %o, %l : tensor<1x2x?x4xf32>, tensor<1x2x?xf32>
}
func.func @static_out(%q: tensor<?x2x4x8xf32>, %k: tensor<?x2x6x8xf32>,
                      %v: tensor<?x2x6x8xf32>)
    -> (tensor<2x2x4x8xf32>, tensor<2x2x4xf32>) {
  %o, %l = attn.attention q(%q : tensor<?x2x4x8xf32>)
      k(%k : tensor<?x2x6x8xf32>) v(%v : tensor<?x2x6x8xf32>)
      -> tensor<2x2x4x8xf32>, tensor<2x2x4xf32>
  return %o, %l : tensor<2x2x4x8xf32>, tensor<2x2x4xf32>
}
)mlir";

/// Arguments of @dyn: B, Hq, Hkv, Nq, Nk, D with per-operand overrides.
struct DynSizes {
  int64_t b = 2, hq = 4, hkv = 2, nq = 3, nk = 5, d = 8;
  int64_t kB = -1, vB = -1, vH = -1, kD = -1, vN = -1, maskNq = -1, lenN = -1,
          slopes = -1;
};

std::vector<HostTensor> dynArgs(DynSizes s) {
  auto pick = [](int64_t o, int64_t d) { return o >= 0 ? o : d; };
  std::vector<HostTensor> a;
  a.push_back(randomF32({s.b, s.hq, s.nq, s.d}, 1));
  a.push_back(randomF32({pick(s.kB, s.b), s.hkv, s.nk, pick(s.kD, s.d)}, 2));
  a.push_back(randomF32(
      {pick(s.vB, s.b), pick(s.vH, s.hkv), pick(s.vN, s.nk), s.d}, 3));
  int64_t mq = pick(s.maskNq, s.nq);
  a.push_back(filled(ElementKind::I1, {mq, s.nk},
                     [](int64_t i) { return (i % 7) != 3 ? 1.0 : 0.0; }));
  int64_t nl = pick(s.lenN, s.b);
  a.push_back(filled(ElementKind::I32, {nl},
                     [&](int64_t i) { return double(s.nk - (i % 2)); }));
  int64_t ns = pick(s.slopes, s.hq);
  a.push_back(filled(ElementKind::F32, {ns},
                     [](int64_t i) { return 0.125 * double(i + 1); }));
  return a;
}

std::vector<HostTensor> staticOutArgs(int64_t batch) {
  return {randomF32({batch, 2, 4, 8}, 4), randomF32({batch, 2, 6, 8}, 5),
          randomF32({batch, 2, 6, 8}, 6)};
}

std::vector<JitCase> jitCases() {
  auto dyn = [](DynSizes s) { return [s] { return dynArgs(s); }; };
  DynSizes good;
  std::vector<JitCase> cases;
  auto add = [&](const char *name, DynSizes bad, int status,
                 const char *message) {
    cases.push_back({name, "dyn", dyn(bad), dyn(good), status, message});
  };
  DynSizes s;
  s = {};
  s.kB = 3;
  add("BatchQK", s, ATTN_STATUS_SHAPE_MISMATCH,
      "attn: batch sizes of q and k differ (q: 2, k: 3)");
  s = {};
  s.vB = 1;
  add("BatchQV", s, ATTN_STATUS_SHAPE_MISMATCH,
      "attn: batch sizes of q and v differ (q: 2, v: 1)");
  s = {};
  s.vH = 1;
  add("HeadsKV", s, ATTN_STATUS_SHAPE_MISMATCH,
      "attn: k and v have different numbers of heads (k: 2, v: 1)");
  s = {};
  s.kD = 4;
  add("HeadDimQK", s, ATTN_STATUS_SHAPE_MISMATCH,
      "attn: q and k have different head dimensions (q: 8, k: 4)");
  s = {};
  s.vN = 7;
  add("LengthKV", s, ATTN_STATUS_SHAPE_MISMATCH,
      "attn: k and v have different lengths (k: 5, v: 7)");
  s = {};
  s.hkv = 0;
  add("NoKvHeads", s, ATTN_STATUS_SHAPE_MISMATCH,
      "attn: k and v have no heads (k: 0 heads)");
  s = {};
  s.hkv = 3;
  s.hq = 4;
  add("HeadGroups", s, ATTN_STATUS_SHAPE_MISMATCH,
      "attn: query heads are not a multiple of K/V heads (q: 4 heads, k/v: 3 "
      "heads)");
  s = {};
  s.maskNq = 2;
  add("MaskBiasDim", s, ATTN_STATUS_SHAPE_MISMATCH,
      "attn: a mask or bias dimension does not match [B, Hq, Nq, Nk] (a "
      "dynamic dimension is read at full size): operand #0, dimension 0 has "
      "size 2, expected 3");
  s = {};
  s.lenN = 1;
  add("KvLenEntries", s, ATTN_STATUS_SHAPE_MISMATCH,
      "attn: kv_len does not have one entry per batch (kv_len: 1, q: batch 2)");
  s = {};
  s.slopes = 3;
  add("AlibiSlopes", s, ATTN_STATUS_SHAPE_MISMATCH,
      "attn: alibi slopes do not have one entry per query head (3 slopes, 4 "
      "query heads)");
  // Attention sinks: one logit per query head (4 here).
  auto sinkArgs = [](int64_t logits) {
    return [logits] {
      return std::vector<HostTensor>{
          randomF32({1, 4, 4, 8}, 11), randomF32({1, 2, 6, 8}, 12),
          randomF32({1, 2, 6, 8}, 13), randomF32({logits}, 14)};
    };
  };
  cases.push_back({"SinkLength", "sink_dyn", sinkArgs(3), sinkArgs(4),
                   ATTN_STATUS_SHAPE_MISMATCH,
                   "attn: sink does not have one logit per query head (3 "
                   "logits, 4 query heads)"});
  cases.push_back({"ResultDim", "static_out", [] { return staticOutArgs(3); },
                   [] { return staticOutArgs(2); }, ATTN_STATUS_SHAPE_MISMATCH,
                   "attn: the result type's dimension 0 is 2, the inputs give "
                   "3"});
  cases.push_back({"LseDim", "static_lse", [] { return staticOutArgs(3); },
                   [] { return staticOutArgs(2); }, ATTN_STATUS_SHAPE_MISMATCH,
                   "attn: the lse type does not match the inputs (dimension 0 "
                   "is 2, the inputs give 3)"});
  // Paged: q batch 2, pools of 4 pages, two pages per sequence.
  auto paged = [](int64_t vPages, int64_t tableRows) {
    return [=] {
      std::vector<int64_t> table = {0, 1, 2, 3};
      table.resize(tableRows * 2);
      return std::vector<HostTensor>{
          randomF32({2, 2, 1, 8}, 30), randomF32({4, 2, 4, 8}, 31),
          randomF32({vPages, 2, 4, 8}, 32),
          ints(ElementKind::I32, {tableRows, 2}, table),
          ints(ElementKind::I32, {2}, {5, 8})};
    };
  };
  cases.push_back({"PagePoolsKV", "paged_dyn", paged(3, 2), paged(4, 2),
                   ATTN_STATUS_SHAPE_MISMATCH,
                   "attn: k and v page pools differ in pages (k: 4, v: 3)"});
  cases.push_back({"PageTableRows", "paged_dyn", paged(4, 1), paged(4, 2),
                   ATTN_STATUS_SHAPE_MISMATCH,
                   "attn: page_table does not have one row per batch entry "
                   "(page_table: 1 rows, q: batch 2)"});
  auto ragged = [](std::vector<int64_t> cq, std::vector<int64_t> ck) {
    return [=] {
      return std::vector<HostTensor>{
          randomF32({1, 2, 10, 8}, 33), randomF32({1, 2, 8, 8}, 34),
          ints(ElementKind::I32, {int64_t(cq.size())}, cq),
          ints(ElementKind::I32, {int64_t(ck.size())}, ck)};
    };
  };
  cases.push_back({"RaggedLengths", "ragged_dyn",
                   ragged({0, 2, 5, 10}, {0, 4, 8}),
                   ragged({0, 5, 10}, {0, 4, 8}), ATTN_STATUS_SHAPE_MISMATCH,
                   "attn: ragged cu_seqlens_q and cu_seqlens_k differ in "
                   "length (4, 3)"});
  cases.push_back({"RaggedNoSequences", "ragged_dyn", ragged({}, {}),
                   ragged({0, 5, 10}, {0, 4, 8}), ATTN_STATUS_SHAPE_MISMATCH,
                   "attn: ragged offsets need at least one entry (0)"});
  // Chunked prefill: 5 packed queries of 2 sequences over pools of 4 pages.
  auto chunked = [](int64_t lens, int64_t rows) {
    return [=] {
      std::vector<int64_t> table = {0, 1, 2, 3}, len = {6, 7};
      table.resize(rows * 2, -1);
      len.resize(lens, 1);
      return std::vector<HostTensor>{randomF32({1, 2, 5, 8}, 41),
                                     randomF32({4, 2, 4, 8}, 42),
                                     randomF32({4, 2, 4, 8}, 43),
                                     ints(ElementKind::I32, {3}, {0, 2, 5}),
                                     ints(ElementKind::I32, {rows, 2}, table),
                                     ints(ElementKind::I32, {lens}, len)};
    };
  };
  cases.push_back({"RaggedKvLenEntries", "chunked_dyn", chunked(3, 2),
                   chunked(2, 2), ATTN_STATUS_SHAPE_MISMATCH,
                   "attn: kv_len of a ragged batch does not have one entry "
                   "per sequence (kv_len: 3, sequences: 2)"});
  cases.push_back({"RaggedPageTableRows", "chunked_dyn", chunked(2, 1),
                   chunked(2, 2), ATTN_STATUS_SHAPE_MISMATCH,
                   "attn: page_table of a ragged batch does not have one row "
                   "per sequence (page_table: 1 rows, sequences: 2)"});
  // Key padding over 6 keys: kv_start [B], key_mask [B, Nk], both dynamic.
  auto padding = [](int64_t starts, int64_t maskRows, int64_t maskKeys) {
    return [=] {
      std::vector<int64_t> first = {1, 0, 2};
      first.resize(starts);
      HostTensor mask = filled(ElementKind::I1, {maskRows, maskKeys},
                               [](int64_t i) { return i % 5 != 3 ? 1 : 0; });
      return std::vector<HostTensor>{
          randomF32({2, 2, 3, 8}, 44), randomF32({2, 2, 6, 8}, 45),
          randomF32({2, 2, 6, 8}, 46), ints(ElementKind::I32, {starts}, first),
          mask};
    };
  };
  cases.push_back({"KvStartEntries", "pad_dyn", padding(3, 2, 6),
                   padding(2, 2, 6), ATTN_STATUS_SHAPE_MISMATCH,
                   "attn: kv_start does not have one entry per batch entry or "
                   "sequence (kv_start: 3, expected 2)"});
  cases.push_back({"KeyMaskDim", "pad_dyn", padding(2, 1, 6), padding(2, 2, 6),
                   ATTN_STATUS_SHAPE_MISMATCH,
                   "attn: key_mask must be [B, Nk]: dimension 0 has size 1, "
                   "expected 2"});
  cases.push_back({"KeyMaskDim", "pad_dyn", padding(2, 2, 5), padding(2, 2, 6),
                   ATTN_STATUS_SHAPE_MISMATCH,
                   "attn: key_mask must be [B, Nk]: dimension 1 has size 5, "
                   "expected 6"});
  cases.push_back({"KeyMaskDim", "pad_dyn", padding(2, 2, 7), padding(2, 2, 6),
                   ATTN_STATUS_SHAPE_MISMATCH,
                   "attn: key_mask must be [B, Nk]: dimension 1 has size 7, "
                   "expected 6"});
  // An int8 cache of 6 keys: k_scale per token, v_scale per batch entry.
  auto quant = [](int64_t kScaleKeys, int64_t vScaleRows) {
    return [=] {
      auto cache = [](unsigned seed) {
        return filled(ElementKind::I8, {1, 2, 6, 8}, [seed](int64_t i) {
          return static_cast<double>((i * 37 + seed) % 255) - 127.0;
        });
      };
      auto scales = [](std::vector<int64_t> shape) {
        return filled(ElementKind::F32, std::move(shape),
                      [](int64_t i) { return (1.0 + i % 3) / 127.0; });
      };
      return std::vector<HostTensor>{randomF32({1, 4, 3, 8}, 37), cache(1),
                                     cache(2), scales({1, 2, kScaleKeys}),
                                     scales({vScaleRows, 2})};
    };
  };
  cases.push_back({"KvScaleDim", "quant_dyn", quant(5, 1), quant(6, 1),
                   ATTN_STATUS_SHAPE_MISMATCH,
                   "attn: scale tensor 0 (0 = k_scale, 1 = v_scale) has size 5 "
                   "in dimension 2, its cache gives 6"});
  cases.push_back({"KvScaleDim", "quant_dyn", quant(6, 2), quant(6, 1),
                   ATTN_STATUS_SHAPE_MISMATCH,
                   "attn: scale tensor 1 (0 = k_scale, 1 = v_scale) has size 2 "
                   "in dimension 0, its cache gives 1"});
  auto append = [](int64_t positions) {
    return [=] {
      std::vector<int64_t> p = {0, 3};
      p.resize(positions);
      return std::vector<HostTensor>{randomF32({2, 2, 6, 4}, 35),
                                     randomF32({2, 2, 1, 4}, 36),
                                     ints(ElementKind::I32, {positions}, p)};
    };
  };
  cases.push_back(
      {"AppendSizes", "append_dyn", append(1), append(2),
       ATTN_STATUS_SHAPE_MISMATCH,
       "attn: kv_cache_append: the update's logical dimension 0 (B, H, N, D) "
       "is 2, the cache, positions or page_table give 1",
       [](const std::vector<HostTensor> &a, const std::vector<HostTensor> &o) {
         // cache[b, h, p[b], :] = update[b, h, 0, :], the rest unchanged.
         HostTensor want = a[0];
         for (int64_t b = 0; b < 2; ++b)
           for (int64_t h = 0; h < 2; ++h)
             for (int64_t d = 0; d < 4; ++d)
               want.set(((b * 2 + h) * 6 + a[2].getInt(b)) * 4 + d,
                        a[1].get((b * 2 + h) * 4 + d));
         ASSERT_EQ(o.size(), 1u);
         EXPECT_EQ(o[0].bytes, want.bytes);
       }});
  auto combine = [](int64_t nqB) {
    return [=] {
      return std::vector<HostTensor>{
          randomF32({1, 2, 4, 4}, 37), randomF32({1, 2, 4}, 38),
          randomF32({1, 2, nqB, 4}, 39), randomF32({1, 2, 4}, 40)};
    };
  };
  cases.push_back(
      {"CombineSizes", "combine_dyn", combine(3), combine(4),
       ATTN_STATUS_SHAPE_MISMATCH,
       "attn: combine: operand #2 has size 3 in dimension 2, out_a gives 4",
       [](const std::vector<HostTensor> &a, const std::vector<HostTensor> &o) {
         // out = (wa oa + wb ob) / (wa + wb), lse = m + log(wa + wb), with
         // w = exp(lse - m), m the larger lse (both finite here).
         ASSERT_EQ(o.size(), 2u);
         for (int64_t r = 0; r < 8; ++r) {
           double la = a[1].get(r), lb = a[3].get(r), m = std::max(la, lb);
           double wa = std::exp(la - m), wb = std::exp(lb - m);
           EXPECT_NEAR(o[1].get(r), m + std::log(wa + wb), 1e-5);
           for (int64_t e = 0; e < 4; ++e)
             EXPECT_NEAR(o[0].get(r * 4 + e),
                         (wa * a[0].get(r * 4 + e) + wb * a[2].get(r * 4 + e)) /
                             (wa + wb),
                         1e-5);
         }
       }});
  return cases;
}

class JitChecks : public ::testing::TestWithParam<const char *> {};

TEST_P(JitChecks, BadThenGood) {
  Spec spec(kDynamicSpec);
  ASSERT_TRUE(spec.module);
  for (const char *fnName :
       {"dyn", "static_out", "static_lse", "paged_dyn", "ragged_dyn",
        "chunked_dyn", "append_dyn", "combine_dyn", "sink_dyn", "pad_dyn"}) {
    JitOptions opts;
    opts.form = *parseAttentionForm(GetParam());
    opts.optLevel = 1; // correctness only: compile time matters here
    // Only this function (each compile lowers the whole module).
    OwningOpRef<ModuleOp> one = spec.module->clone();
    for (auto f : llvm::make_early_inc_range(one->getOps<func::FuncOp>()))
      if (f.getName() != fnName)
        f.erase();
    auto jit = JitFunction::compile(*one, fnName, opts);
    ASSERT_TRUE(static_cast<bool>(jit)) << llvm::toString(jit.takeError());
    for (const JitCase &c : jitCases()) {
      if (StringRef(c.fn) != fnName)
        continue;
      SCOPED_TRACE(std::string(c.name) + " (" + GetParam() + ")");
      std::vector<HostTensor> bad = c.bad(), good = c.good(), outs;
      std::vector<const HostTensor *> ptrs;
      for (const HostTensor &t : bad)
        ptrs.push_back(&t);
      llvm::Error err = (*jit)->invoke(ptrs, outs);
      ASSERT_TRUE(static_cast<bool>(err)) << "the bad call succeeded";
      EXPECT_EQ(llvm::toString(std::move(err)), c.message);
      EXPECT_EQ((*jit)->lastCheckStatus(), c.status);
      EXPECT_TRUE(outs.empty());
      ptrs.clear();
      for (const HostTensor &t : good)
        ptrs.push_back(&t);
      llvm::Error ok = (*jit)->invoke(ptrs, outs);
      ASSERT_FALSE(static_cast<bool>(ok)) << llvm::toString(std::move(ok));
      EXPECT_EQ((*jit)->lastCheckStatus(), ATTN_STATUS_OK);
      if (c.verify)
        c.verify(good, outs);
      else
        expectMatchesReference(spec.fn(fnName), good, outs);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Forms, JitChecks, ::testing::ValuesIn(kForms));

//===----------------------------------------------------------------------===//
// Allocations that fail inside generated code (attn-check-allocations)
//===----------------------------------------------------------------------===//

/// Compiles only `fnName` of `spec`.
std::unique_ptr<JitFunction> compileOne(Spec &spec, StringRef fnName,
                                        const char *form) {
  JitOptions opts;
  opts.form = *parseAttentionForm(form);
  opts.optLevel = 1;
  OwningOpRef<ModuleOp> one = spec.module->clone();
  for (auto f : llvm::make_early_inc_range(one->getOps<func::FuncOp>()))
    if (f.getName() != fnName)
      f.erase();
  auto jit = JitFunction::compile(*one, fnName, opts);
  if (!jit) {
    ADD_FAILURE() << llvm::toString(jit.takeError());
    return nullptr;
  }
  return std::move(*jit);
}

std::vector<const HostTensor *> pointers(const std::vector<HostTensor> &ts) {
  std::vector<const HostTensor *> ptrs;
  for (const HostTensor &t : ts)
    ptrs.push_back(&t);
  return ptrs;
}

/// Resets the JIT's allocation limit when a test ends, failed or not.
struct AllocationLimit {
  explicit AllocationLimit(int64_t bytes) {
    JitFunction::setAllocationLimit(bytes);
  }
  ~AllocationLimit() { JitFunction::setAllocationLimit(0); }
};

class JitOutOfMemory : public ::testing::TestWithParam<const char *> {};

// Every allocation of the compiled code fails (the JIT's allocation limit:
// malloc returns null, on the OpenMP workers too): the call fails with
// ATTN_STATUS_OUT_OF_MEMORY, nothing crashes, and the same code then runs a
// good call.
TEST_P(JitOutOfMemory, EveryAllocationFailsThenGood) {
  Spec spec(kDynamicSpec);
  ASSERT_TRUE(spec.module);
  for (const JitCase &c : jitCases()) {
    // One case per function: its good arguments.
    if (StringRef(c.name) != "BatchQK" && StringRef(c.name) != "ResultDim" &&
        StringRef(c.name) != "PagePoolsKV" &&
        StringRef(c.name) != "RaggedLengths" &&
        StringRef(c.name) != "AppendSizes" &&
        StringRef(c.name) != "CombineSizes")
      continue;
    SCOPED_TRACE(std::string(c.fn) + " (" + GetParam() + ")");
    std::unique_ptr<JitFunction> jit = compileOne(spec, c.fn, GetParam());
    ASSERT_TRUE(jit);
    std::vector<HostTensor> args = c.good(), outs;
    // attn.combine writes into the caller's destinations and allocates
    // nothing: every allocation failing changes nothing.
    if (StringRef(c.name) == "CombineSizes") {
      AllocationLimit limit(1);
      llvm::Error err = jit->invoke(pointers(args), outs);
      ASSERT_FALSE(static_cast<bool>(err)) << llvm::toString(std::move(err));
      c.verify(args, outs);
      outs.clear();
      continue;
    }
    {
      AllocationLimit limit(16);
      llvm::Error err = jit->invoke(pointers(args), outs);
      ASSERT_TRUE(static_cast<bool>(err)) << "the call succeeded";
      std::string message = llvm::toString(std::move(err));
      EXPECT_TRUE(StringRef(message).starts_with(
          "attn: out of memory: the kernel could not allocate "))
          << message;
      EXPECT_EQ(jit->lastCheckStatus(), ATTN_STATUS_OUT_OF_MEMORY);
      EXPECT_TRUE(outs.empty());
    }
    llvm::Error ok = jit->invoke(pointers(args), outs);
    ASSERT_FALSE(static_cast<bool>(ok)) << llvm::toString(std::move(ok));
    EXPECT_EQ(jit->lastCheckStatus(), ATTN_STATUS_OK);
    if (c.verify)
      c.verify(args, outs);
    else
      expectMatchesReference(spec.fn(c.fn), args, outs);
  }
}

INSTANTIATE_TEST_SUITE_P(Forms, JitOutOfMemory, ::testing::ValuesIn(kForms));

const char *const kScoresSpec = R"mlir(
func.func @scores(%q: tensor<1x1x?x1xf32>, %k: tensor<1x1x?x1xf32>,
                  %v: tensor<1x1x?x1xf32>) -> tensor<1x1x?x1xf32> {
  %o = attn.attention q(%q : tensor<1x1x?x1xf32>) k(%k : tensor<1x1x?x1xf32>)
      v(%v : tensor<1x1x?x1xf32>) -> tensor<1x1x?x1xf32>
  return %o : tensor<1x1x?x1xf32>
}
)mlir";

/// q, k, v of @scores with Nq and Nk rows; without data (`fake`), their
/// descriptors point nowhere: the call must read none of them.
std::vector<HostTensor> scoresArgs(int64_t nq, int64_t nk, bool fake) {
  std::vector<HostTensor> args(3);
  for (int i = 0; i < 3; ++i) {
    std::vector<int64_t> shape = {1, 1, i == 0 ? nq : nk, 1};
    if (fake)
      args[i].shape = shape;
    else
      args[i] = randomF32(shape, 50 + i);
  }
  return args;
}

// The naive form's score matrix [B, Hkv, G, Nq, Nk] of a real call that
// malloc refuses: Nq = Nk = 2^21 (8 MiB each for q, k and v) need 2^44 bytes
// of scores.
TEST(JitOutOfMemoryNaive, MallocFailsThenGood) {
  Spec spec(kScoresSpec);
  ASSERT_TRUE(spec.module);
  std::unique_ptr<JitFunction> jit = compileOne(spec, "scores", "naive");
  ASSERT_TRUE(jit);
  std::vector<HostTensor> big = scoresArgs(1 << 21, 1 << 21, false), outs;
  llvm::Error err = jit->invoke(pointers(big), outs);
  ASSERT_TRUE(static_cast<bool>(err)) << "the call succeeded";
  EXPECT_EQ(llvm::toString(std::move(err)),
            "attn: out of memory: the kernel could not allocate "
            "17592186044416 bytes for a scratch or output buffer");
  EXPECT_EQ(jit->lastCheckStatus(), ATTN_STATUS_OUT_OF_MEMORY);
  std::vector<HostTensor> good = scoresArgs(5, 7, false);
  llvm::Error ok = jit->invoke(pointers(good), outs);
  ASSERT_FALSE(static_cast<bool>(ok)) << llvm::toString(std::move(ok));
  expectMatchesReference(spec.fn("scores"), good, outs);
}

// Sizes whose score matrix does not fit in 64 bits (2^22 * 2^40 floats):
// the size is checked before anything is read (q, k and v have no data).
TEST(JitOutOfMemoryNaive, SizeOverflowThenGood) {
  Spec spec(kScoresSpec);
  ASSERT_TRUE(spec.module);
  std::unique_ptr<JitFunction> jit = compileOne(spec, "scores", "naive");
  ASSERT_TRUE(jit);
  std::vector<HostTensor> fake = scoresArgs(int64_t(1) << 22, int64_t(1) << 40,
                                            true),
                          outs;
  llvm::Error err = jit->invoke(pointers(fake), outs);
  ASSERT_TRUE(static_cast<bool>(err)) << "the call succeeded";
  EXPECT_EQ(llvm::toString(std::move(err)),
            "attn: out of memory: a scratch or output buffer of the call's "
            "sizes would need more than 2^63 bytes");
  EXPECT_EQ(jit->lastCheckStatus(), ATTN_STATUS_OUT_OF_MEMORY);
  std::vector<HostTensor> good = scoresArgs(5, 7, false);
  llvm::Error ok = jit->invoke(pointers(good), outs);
  ASSERT_FALSE(static_cast<bool>(ok)) << llvm::toString(std::move(ok));
  expectMatchesReference(spec.fn("scores"), good, outs);
}

//===----------------------------------------------------------------------===//
// The kernel ABI: data only the kernel sees
//===----------------------------------------------------------------------===//

DLDataType dtypeOf(ElementKind k) {
  switch (k) {
  case ElementKind::I1:
    return {kDLUInt, 8, 1};
  case ElementKind::I32:
    return {kDLInt, 32, 1};
  case ElementKind::I64:
    return {kDLInt, 64, 1};
  case ElementKind::F16:
    return {kDLFloat, 16, 1};
  case ElementKind::BF16:
    return {kDLBfloat, 16, 1};
  default:
    return {kDLFloat, 32, 1};
  }
}

/// A kernel of the library attn-compile built for `form` (ahead of time,
/// the C ABI; the C API's JIT compiles the same code and is tested by the
/// Python test).
struct AbiKernel {
  const attn_kernel_info_t *info = nullptr;
  std::string err;

  AbiKernel(const char *fn, const char *form) {
    std::string path =
        std::string(ATTN_CHECK_KERNELS_DIR) + "/libchecks_" + form + ".so";
    // Loaded once per process and never closed (the kernels' OpenMP
    // threads outlive a call).
    static std::map<std::string, void *> loaded;
    void *&handle = loaded[path];
    if (!handle)
      handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      err = dlerror();
      return;
    }
    std::string symbol = std::string("checks_") + fn + "_info";
    auto get = reinterpret_cast<const attn_kernel_info_t *(*)()>(
        dlsym(handle, symbol.c_str()));
    if (!get) {
      err = "no " + symbol + " in " + path;
      return;
    }
    info = get();
  }
  std::string error() { return err; }

  /// Calls the kernel on `ins`, writing `outs` (shaped by the caller).
  attn_status_t call(std::vector<HostTensor> &ins,
                     std::vector<HostTensor> &outs) {
    std::vector<DLTensor> ts;
    auto add = [&](HostTensor &t) {
      DLTensor d{};
      d.data = t.bytes.data();
      d.device = {kDLCPU, 0};
      d.ndim = static_cast<int32_t>(t.shape.size());
      d.dtype = dtypeOf(t.kind);
      d.shape = t.shape.data();
      ts.push_back(d);
    };
    for (HostTensor &t : ins)
      add(t);
    for (HostTensor &t : outs)
      add(t);
    std::vector<DLTensor *> ptrs;
    for (DLTensor &d : ts)
      ptrs.push_back(&d);
    return attn_kernel_call(info, ptrs.data(),
                            static_cast<int32_t>(ptrs.size()), nullptr);
  }
};

struct AbiCase {
  const char *name;
  const char *fn;
  std::function<std::vector<HostTensor>()> good;
  /// Makes the good arguments bad.
  std::function<void(std::vector<HostTensor> &)> spoil;
  attn_status_t status;
  const char *message;
  /// Output shapes of the call.
  std::vector<std::vector<int64_t>> outShapes;
  /// For kv_cache_append: the expected cache after the good call (and the
  /// cache is expected unchanged after the bad one); empty for attention.
  std::function<HostTensor(const std::vector<HostTensor> &)> appended;
};

/// Dense append: cache[b, h, p[b] + t, :] = update[b, h, t, :] (bhnd).
HostTensor denseAppended(const std::vector<HostTensor> &a) {
  HostTensor out = a[0];
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t t = 0; t < 2; ++t)
        for (int64_t d = 0; d < 4; ++d) {
          int64_t p = a[2].getInt(b) + t;
          out.set(((b * 2 + h) * 6 + p) * 4 + d,
                  a[1].get(((b * 2 + h) * 2 + t) * 4 + d));
        }
  return out;
}

/// Paged append (pool [P, 1, S=2, 4]): token t of b to row (p + t) % 2 of
/// page pt[b, (p + t) / 2].
HostTensor pagedAppended(const std::vector<HostTensor> &a) {
  HostTensor out = a[0];
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t t = 0; t < 2; ++t) {
      int64_t pos = a[2].getInt(b) + t;
      int64_t page = a[3].getInt(b * 2 + pos / 2);
      for (int64_t d = 0; d < 4; ++d)
        out.set((page * 2 + pos % 2) * 4 + d, a[1].get((b * 2 + t) * 4 + d));
    }
  return out;
}

std::vector<AbiCase> abiCases() {
  std::vector<AbiCase> cases;
  auto paged = [] {
    return std::vector<HostTensor>{
        randomF32({2, 2, 3, 8}, 7), randomF32({4, 2, 2, 8}, 8),
        randomF32({4, 2, 2, 8}, 9),
        // Batch 0 reads pages 1, 3, 0 (5 keys); batch 1 reads 2, 0 (3
        // keys); the -1 is never read.
        ints(ElementKind::I32, {2, 3}, {1, 3, 0, 2, 0, -1}),
        ints(ElementKind::I32, {2}, {5, 3})};
  };
  cases.push_back({"PageTableEntryPastPool",
                   "paged",
                   paged,
                   [](std::vector<HostTensor> &a) { a[3].set(4, 4); },
                   ATTN_STATUS_INVALID_ARGUMENT,
                   "attn: a page_table entry that a sequence reads lies "
                   "outside the page pool: page_table[1, 1] = 4, the pool "
                   "has 4 pages",
                   {{2, 2, 3, 8}},
                   {}});
  cases.push_back({"PageTableEntryNegative",
                   "paged",
                   paged,
                   [](std::vector<HostTensor> &a) { a[3].set(0, -2); },
                   ATTN_STATUS_INVALID_ARGUMENT,
                   "attn: a page_table entry that a sequence reads lies "
                   "outside the page pool: page_table[0, 0] = -2, the pool "
                   "has 4 pages",
                   {{2, 2, 3, 8}},
                   {}});
  auto docs = [](int64_t n) {
    return [n] {
      return std::vector<HostTensor>{
          randomF32({1, 2, 8, 8}, 10), randomF32({1, 2, 8, 8}, 11),
          randomF32({1, 2, 8, 8}, 12),
          filled(ElementKind::I32, {n},
                 [](int64_t i) { return double(i / 3); })};
    };
  };
  cases.push_back({"MaskModRead",
                   "documents",
                   docs(9),
                   // Only index 8 (query or key 7) is out of bounds.
                   [&](std::vector<HostTensor> &a) { a[3] = docs(8)()[3]; },
                   ATTN_STATUS_INVALID_ARGUMENT,
                   "attn: mask_mod reads a mod_inputs tensor out of bounds: "
                   "mod_inputs #0, index 8 in dimension 0 of size 8",
                   {{1, 2, 8, 8}},
                   {}});
  auto rel = [](int64_t n) {
    return [n] {
      return std::vector<HostTensor>{
          randomF32({1, 2, 8, 8}, 13), randomF32({1, 2, 8, 8}, 14),
          randomF32({1, 2, 8, 8}, 15), randomF32({n}, 16)};
    };
  };
  cases.push_back({"ScoreModRead",
                   "relbias",
                   rel(15),
                   // Only index 14 (i = 7, j = 0) is out of bounds.
                   [&](std::vector<HostTensor> &a) { a[3] = rel(14)()[3]; },
                   ATTN_STATUS_INVALID_ARGUMENT,
                   "attn: score_mod reads a mod_inputs tensor out of bounds: "
                   "mod_inputs #0, index 14 in dimension 0 of size 14",
                   {{1, 2, 8, 8}},
                   {}});
  auto ragged = [] {
    return std::vector<HostTensor>{randomF32({1, 2, 10, 8}, 17),
                                   randomF32({1, 2, 8, 8}, 18),
                                   ints(ElementKind::I32, {3}, {0, 5, 10}),
                                   ints(ElementKind::I32, {3}, {0, 4, 8})};
  };
  cases.push_back({"RaggedOffsetsQ",
                   "ragged",
                   ragged,
                   [](std::vector<HostTensor> &a) { a[2].set(2, 3); },
                   ATTN_STATUS_INVALID_ARGUMENT,
                   "attn: ragged cu_seqlens_q offsets must be non-decreasing "
                   "and within the packed tokens: cu_seqlens_q[2] = 3 (at "
                   "least 5, at most 10)",
                   {{1, 2, 10, 8}},
                   {}});
  cases.push_back({"RaggedOffsetsK",
                   "ragged",
                   ragged,
                   [](std::vector<HostTensor> &a) { a[3].set(1, 9); },
                   ATTN_STATUS_INVALID_ARGUMENT,
                   "attn: ragged cu_seqlens_k offsets must be non-decreasing "
                   "and within the packed tokens: cu_seqlens_k[1] = 9 (at "
                   "least 0, at most 8)",
                   {{1, 2, 10, 8}},
                   {}});
  auto append = [] {
    return std::vector<HostTensor>{randomF32({2, 2, 6, 4}, 19),
                                   randomF32({2, 2, 2, 4}, 20),
                                   ints(ElementKind::I32, {2}, {0, 4})};
  };
  cases.push_back({"AppendPastCache",
                   "append",
                   append,
                   [](std::vector<HostTensor> &a) { a[2].set(1, 5); },
                   ATTN_STATUS_INVALID_ARGUMENT,
                   "attn: kv_cache_append writes past the cache: "
                   "positions[1] = 5 with 2 new rows, the cache holds 6",
                   {{2, 2, 6, 4}},
                   denseAppended});
  cases.push_back({"AppendNegativePosition",
                   "append",
                   append,
                   [](std::vector<HostTensor> &a) { a[2].set(0, -1); },
                   ATTN_STATUS_INVALID_ARGUMENT,
                   "attn: kv_cache_append writes past the cache: "
                   "positions[0] = -1 with 2 new rows, the cache holds 6",
                   {{2, 2, 6, 4}},
                   denseAppended});
  auto pagedAppend = [] {
    return std::vector<HostTensor>{
        randomF32({3, 1, 2, 4}, 21), randomF32({2, 1, 2, 4}, 22),
        ints(ElementKind::I32, {2}, {0, 1}),
        ints(ElementKind::I32, {2, 2}, {0, 1, 2, 1})};
  };
  cases.push_back({"AppendPageEntry",
                   "paged_append",
                   pagedAppend,
                   [](std::vector<HostTensor> &a) { a[3].set(3, 3); },
                   ATTN_STATUS_INVALID_ARGUMENT,
                   "attn: kv_cache_append: a page_table entry lies outside "
                   "the page pool: page_table[1, 1] = 3, the pool has 3 pages",
                   {{3, 1, 2, 4}},
                   pagedAppended});
  cases.push_back({"AppendPastTable",
                   "paged_append",
                   pagedAppend,
                   [](std::vector<HostTensor> &a) { a[2].set(1, 3); },
                   ATTN_STATUS_INVALID_ARGUMENT,
                   "attn: kv_cache_append writes past the page table "
                   "(positions[b] + Nnew > max_pages * S): positions[1] = 3 "
                   "with 2 new rows, the table holds 4",
                   {{3, 1, 2, 4}},
                   pagedAppended});
  return cases;
}

class AbiChecks : public ::testing::TestWithParam<const char *> {};

TEST_P(AbiChecks, BadThenGood) {
  std::string text;
  {
    auto file = llvm::MemoryBuffer::getFile(ATTN_CHECK_KERNELS_SPEC);
    ASSERT_TRUE(static_cast<bool>(file)) << ATTN_CHECK_KERNELS_SPEC;
    text = (*file)->getBuffer().str();
  }
  Spec spec(text);
  ASSERT_TRUE(spec.module);
  std::string lastFn;
  std::unique_ptr<AbiKernel> kernel;
  for (const AbiCase &c : abiCases()) {
    SCOPED_TRACE(std::string(c.name) + " (" + GetParam() + ")");
    if (c.fn != lastFn) {
      kernel = std::make_unique<AbiKernel>(c.fn, GetParam());
      ASSERT_TRUE(kernel->info) << kernel->error();
      lastFn = c.fn;
    }
    auto makeOuts = [&] {
      std::vector<HostTensor> outs;
      for (const auto &shape : c.outShapes) {
        HostTensor t;
        t.resize(ElementKind::F32, shape);
        outs.push_back(std::move(t));
      }
      return outs;
    };
    std::vector<HostTensor> bad = c.good(), outs = makeOuts();
    c.spoil(bad);
    EXPECT_EQ(kernel->call(bad, outs), c.status);
    EXPECT_EQ(std::string(attn_last_error()), c.message);
    // Nothing is written outside the outputs; an append writes nothing.
    if (c.appended) {
      EXPECT_EQ(outs[0].bytes, bad[0].bytes);
    }
    // The same kernel, a good call.
    std::vector<HostTensor> good = c.good();
    outs = makeOuts();
    ASSERT_EQ(kernel->call(good, outs), ATTN_STATUS_OK) << attn_last_error();
    EXPECT_STREQ(attn_last_error(), "");
    if (c.appended) {
      EXPECT_EQ(outs[0].bytes, c.appended(good).bytes);
    } else {
      expectMatchesReference(spec.fn(c.fn), good, outs);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Forms, AbiChecks, ::testing::ValuesIn(kForms));

//===----------------------------------------------------------------------===//
// The GPU host code, on the warp-level emulator
//===----------------------------------------------------------------------===//

const char *const kGpuSpec = R"mlir(
func.func @gpu_dyn(%q: tensor<1x?x?x64xf16>, %k: tensor<1x?x?x64xf16>,
                   %v: tensor<1x?x?x64xf16>) -> tensor<1x?x?x64xf16> {
  %o = attn.attention q(%q : tensor<1x?x?x64xf16>)
      k(%k : tensor<1x?x?x64xf16>) v(%v : tensor<1x?x?x64xf16>)
      causal(bottom_right) -> tensor<1x?x?x64xf16>
  return %o : tensor<1x?x?x64xf16>
}
)mlir";

HostTensor randomF16(std::vector<int64_t> shape, unsigned seed) {
  HostTensor f = randomF32(shape, seed);
  HostTensor h;
  h.resize(ElementKind::F16, shape);
  for (int64_t i = 0; i < f.numElements(); ++i)
    h.set(i, f.get(i));
  return h;
}

TEST(GpuEmulatorChecks, BadThenGood) {
  Spec spec(kGpuSpec);
  ASSERT_TRUE(spec.module);
  struct GpuCase {
    int64_t hq, hkv, outNq;
    const char *message;
  } cases[] = {
      {3, 2, 16,
       "attn: query heads are not a multiple of K/V heads (q: 3 heads, k/v: "
       "2 heads)"},
      {4, 2, 8,
       "attn: output #0 has size 8 in dimension 2, the inputs give 16"},
  };
  for (const GpuCase &c : cases) {
    SCOPED_TRACE(c.message);
    std::vector<HostTensor> args = {randomF16({1, c.hq, 16, 64}, 40),
                                    randomF16({1, c.hkv, 16, 64}, 41),
                                    randomF16({1, c.hkv, 16, 64}, 42)};
    std::vector<HostTensor> results;
    llvm::Error err = emulateSpecOnGpu(*spec.module, "gpu_dyn", args,
                                       {{1, c.hq, c.outNq, 64}}, results);
    ASSERT_TRUE(static_cast<bool>(err)) << "the bad call succeeded";
    EXPECT_EQ(llvm::toString(std::move(err)), c.message);
  }
  // A good call of the same spec.
  std::vector<HostTensor> args = {randomF16({1, 4, 16, 64}, 43),
                                  randomF16({1, 2, 16, 64}, 44),
                                  randomF16({1, 2, 16, 64}, 45)};
  std::vector<HostTensor> results;
  llvm::Error ok = emulateSpecOnGpu(*spec.module, "gpu_dyn", args,
                                    {{1, 4, 16, 64}}, results);
  ASSERT_FALSE(static_cast<bool>(ok)) << llvm::toString(std::move(ok));
  expectMatchesReference(spec.fn("gpu_dyn"), args, results);
}

// The same through the emulator's Runner (what the C API's gpu-emulate
// kernels call): a failed check's status and message, then a good call.
TEST(GpuEmulatorChecks, RunnerStatusThenGood) {
  Spec spec(kGpuSpec);
  ASSERT_TRUE(spec.module);
  RunnerOptions options;
  options.device = RunDevice::GpuEmulator;
  auto runner = Runner::create(*spec.module, "gpu_dyn", options);
  ASSERT_TRUE(static_cast<bool>(runner)) << llvm::toString(runner.takeError());
  std::vector<HostTensor> bad = {randomF16({1, 3, 16, 64}, 46),
                                 randomF16({1, 2, 16, 64}, 47),
                                 randomF16({1, 2, 16, 64}, 48)};
  ASSERT_FALSE(static_cast<bool>((*runner)->bind({&bad[0], &bad[1], &bad[2]})));
  llvm::Error err = (*runner)->run();
  ASSERT_TRUE(static_cast<bool>(err)) << "the bad call succeeded";
  EXPECT_EQ(llvm::toString(std::move(err)),
            "attn: query heads are not a multiple of K/V heads (q: 3 heads, "
            "k/v: 2 heads)");
  EXPECT_EQ((*runner)->lastStatus(), ATTN_STATUS_SHAPE_MISMATCH);
  std::vector<HostTensor> args = {randomF16({1, 4, 16, 64}, 49),
                                  randomF16({1, 2, 16, 64}, 50),
                                  randomF16({1, 2, 16, 64}, 51)};
  // By name this time (an unknown name is an error).
  EXPECT_EQ(llvm::toString(
                (*runner)->bindByName({{"q", &args[0]}, {"key", &args[1]}})),
            "no argument named 'key' (the arguments: q, k, v)");
  EXPECT_EQ(llvm::toString((*runner)->bindByName(
                {{"q", &args[0]}, {"0", &args[0]}, {"k", &args[1]}})),
            "argument 'q' bound twice");
  EXPECT_EQ(
      llvm::toString((*runner)->bindByName({{"q", &args[0]}, {"k", &args[1]}})),
      "argument 'v' is not bound");
  llvm::Error bound = (*runner)->bindByName(
      {{"q", &args[0]}, {"k", &args[1]}, {"v", &args[2]}});
  ASSERT_FALSE(static_cast<bool>(bound)) << llvm::toString(std::move(bound));
  llvm::Error ok = (*runner)->run();
  ASSERT_FALSE(static_cast<bool>(ok)) << llvm::toString(std::move(ok));
  EXPECT_EQ((*runner)->lastStatus(), ATTN_STATUS_OK);
  std::vector<HostTensor> results;
  ASSERT_FALSE(static_cast<bool>((*runner)->fetch(results)));
  expectMatchesReference(spec.fn("gpu_dyn"), args, results);
  // The emulator has no GPU clock.
  auto times = (*runner)->time(1);
  EXPECT_FALSE(static_cast<bool>(times));
  llvm::consumeError(times.takeError());
}

/// On one GPU emulator runner of `fnName` in `specText`: `bad` fails with
/// `message` and ATTN_STATUS_INVALID_ARGUMENT (a check of the kernel's error
/// word), then `good` runs and matches the reference.
void expectEmulatorBadThenGood(const char *specText, llvm::StringRef fnName,
                               const std::vector<HostTensor> &bad,
                               llvm::StringRef message,
                               const std::vector<HostTensor> &good) {
  Spec spec(specText);
  ASSERT_TRUE(spec.module);
  RunnerOptions options;
  options.device = RunDevice::GpuEmulator;
  auto runner = Runner::create(*spec.module, fnName, options);
  ASSERT_TRUE(static_cast<bool>(runner)) << llvm::toString(runner.takeError());
  ASSERT_FALSE(static_cast<bool>((*runner)->bind(pointers(bad))));
  llvm::Error err = (*runner)->run();
  ASSERT_TRUE(static_cast<bool>(err)) << "the bad call succeeded";
  EXPECT_EQ(llvm::toString(std::move(err)), message.str());
  EXPECT_EQ((*runner)->lastStatus(), ATTN_STATUS_INVALID_ARGUMENT);
  ASSERT_FALSE(static_cast<bool>((*runner)->bind(pointers(good))));
  llvm::Error ok = (*runner)->run();
  ASSERT_FALSE(static_cast<bool>(ok)) << llvm::toString(std::move(ok));
  EXPECT_EQ((*runner)->lastStatus(), ATTN_STATUS_OK);
  std::vector<HostTensor> results;
  ASSERT_FALSE(static_cast<bool>((*runner)->fetch(results)));
  expectMatchesReference(spec.fn(fnName), good, results);
}

// A mask region that reads document ids in the GPU kernel: a read out of
// bounds is recorded in the kernel's error word and reported by the host
// code with the CPU's message and status, the outputs zeroed; then a good
// call of the same runner (f16, one query tile of 64 rows, Nk 16 + 64).
const char *const kGpuDocSpec = R"mlir(
func.func @gpu_docs(%q: tensor<1x2x?x64xf16>, %k: tensor<1x2x?x64xf16>,
                    %v: tensor<1x2x?x64xf16>, %doc: tensor<?xi32>)
    -> tensor<1x2x?x64xf16> {
  %o = attn.attention q(%q : tensor<1x2x?x64xf16>)
      k(%k : tensor<1x2x?x64xf16>) v(%v : tensor<1x2x?x64xf16>)
      mod_inputs(%doc : tensor<?xi32>)
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %d: tensor<?xi32>):
        %di = tensor.extract %d[%i] : tensor<?xi32>
        %dj = tensor.extract %d[%j] : tensor<?xi32>
        %same = arith.cmpi eq, %di, %dj : i32
        attn.yield %same : i1
      } -> tensor<1x2x?x64xf16>
  return %o : tensor<1x2x?x64xf16>
}
)mlir";

TEST(GpuEmulatorChecks, RegionReadThenGood) {
  // 80 queries and keys, ids for 72 tokens; then ids for every token: two
  // documents of 40.
  std::vector<int64_t> ids(80, 0);
  for (int64_t t = 40; t < 80; ++t)
    ids[t] = 1;
  expectEmulatorBadThenGood(
      kGpuDocSpec, "gpu_docs",
      {randomF16({1, 2, 80, 64}, 60), randomF16({1, 2, 80, 64}, 61),
       randomF16({1, 2, 80, 64}, 62),
       ints(ElementKind::I32, {72}, std::vector<int64_t>(72, 0))},
      "attn: mask_mod reads a mod_inputs tensor out of bounds: "
      "mod_inputs #0, index 72 in dimension 0 of size 72",
      {randomF16({1, 2, 80, 64}, 63), randomF16({1, 2, 80, 64}, 64),
       randomF16({1, 2, 80, 64}, 65), ints(ElementKind::I32, {80}, ids)});
}

// The emulated host code zeroes the outputs after a failed read (as the
// CPU forms do), whatever the kernel had written.
TEST(GpuEmulatorChecks, RegionReadZeroesOutputs) {
  Spec spec(kGpuDocSpec);
  ASSERT_TRUE(spec.module);
  std::vector<HostTensor> args = {
      randomF16({1, 2, 80, 64}, 66), randomF16({1, 2, 80, 64}, 67),
      randomF16({1, 2, 80, 64}, 68),
      ints(ElementKind::I32, {79}, std::vector<int64_t>(79, 3))};
  std::vector<HostTensor> results;
  llvm::Error err = emulateSpecOnGpu(*spec.module, "gpu_docs", args,
                                     {{1, 2, 80, 64}}, results);
  ASSERT_TRUE(static_cast<bool>(err)) << "the bad call succeeded";
  EXPECT_EQ(llvm::toString(std::move(err)),
            "attn: mask_mod reads a mod_inputs tensor out of bounds: "
            "mod_inputs #0, index 79 in dimension 0 of size 79");
  ASSERT_EQ(results.size(), 1u);
  for (int64_t i = 0; i < results[0].numElements(); ++i)
    ASSERT_EQ(results[0].get(i), 0.0) << "element " << i;
}

// Paged K/V in the GPU kernel: a page table entry a sequence reads that
// lies outside the pool is recorded in the kernel's error word (block 0 of
// each sequence checks them all) with the CPU's message and status; then a
// good call of the same runner.
const char *const kGpuPagedSpec = R"mlir(
func.func @gpu_paged(%q: tensor<?x4x1x64xf16>, %kp: tensor<?x2x16x64xf16>,
                     %vp: tensor<?x2x16x64xf16>, %pt: tensor<?x?xi32>,
                     %len: tensor<?xi32>) -> tensor<?x4x1x64xf16> {
  %o = attn.attention q(%q : tensor<?x4x1x64xf16>)
      k(%kp : tensor<?x2x16x64xf16>) v(%vp : tensor<?x2x16x64xf16>)
      page_table(%pt : tensor<?x?xi32>) kv_len(%len : tensor<?xi32>)
      -> tensor<?x4x1x64xf16>
  return %o : tensor<?x4x1x64xf16>
}
)mlir";

TEST(GpuEmulatorChecks, PageTableEntryThenGood) {
  // Two sequences of 40 and 16 keys over a pool of 6 pages: sequence 0
  // reads pages 0-2 and its third entry is 6, past the pool; the -1 past
  // sequence 1's only page is never read.
  auto call = [&](std::vector<int64_t> table) {
    return std::vector<HostTensor>{
        randomF16({2, 4, 1, 64}, 70), randomF16({6, 2, 16, 64}, 71),
        randomF16({6, 2, 16, 64}, 72), ints(ElementKind::I32, {2, 3}, table),
        ints(ElementKind::I32, {2}, {40, 16})};
  };
  expectEmulatorBadThenGood(
      kGpuPagedSpec, "gpu_paged", call({4, 1, 6, 5, -1, -1}),
      "attn: a page_table entry that a sequence reads lies outside the "
      "page pool: page_table[0, 2] = 6, the pool has 6 pages",
      call({4, 1, 0, 5, -1, -1}));
}

// Ragged batches in the GPU kernel: offsets that leave the packed tokens are
// recorded in the kernel's error word (block 0 checks them all) with the
// CPU's message and status; then a good call of the same runner.
const char *const kGpuRaggedSpec = R"mlir(
func.func @gpu_ragged(%q: tensor<1x4x?x64xf16>, %k: tensor<1x2x?x64xf16>,
                      %v: tensor<1x2x?x64xf16>, %cq: tensor<?xi32>,
                      %ck: tensor<?xi32>) -> tensor<1x4x?x64xf16> {
  %o = attn.attention q(%q : tensor<1x4x?x64xf16>)
      k(%k : tensor<1x2x?x64xf16>) v(%v : tensor<1x2x?x64xf16>)
      ragged(%cq, %ck : tensor<?xi32>, tensor<?xi32>) causal(bottom_right)
      -> tensor<1x4x?x64xf16>
  return %o : tensor<1x4x?x64xf16>
}
)mlir";

TEST(GpuEmulatorChecks, RaggedOffsetsThenGood) {
  // Three sequences over 50 packed queries and 70 packed keys.
  auto call = [&](std::vector<int64_t> cuK) {
    return std::vector<HostTensor>{randomF16({1, 4, 50, 64}, 80),
                                   randomF16({1, 2, 70, 64}, 81),
                                   randomF16({1, 2, 70, 64}, 82),
                                   ints(ElementKind::I32, {4}, {0, 10, 30, 50}),
                                   ints(ElementKind::I32, {4}, cuK)};
  };
  expectEmulatorBadThenGood(
      kGpuRaggedSpec, "gpu_ragged", call({0, 20, 45, 71}),
      "attn: ragged cu_seqlens_k offsets must be non-decreasing and within "
      "the packed tokens: cu_seqlens_k[3] = 71 (at least 45, at most 70)",
      call({0, 20, 45, 70}));
}

// A serving step on the GPU (StepHost.cpp): two paged kv_cache_appends,
// kv_len + 1 and the attention over the updated caches, f16, two sequences
// over a pool of 6 pages of 16 tokens.
const char *const kGpuStepSpec = R"mlir(
func.func @gpu_step(%q: tensor<2x4x1x64xf16>, %kn: tensor<2x2x1x64xf16>,
                    %vn: tensor<2x2x1x64xf16>, %kp: tensor<?x2x16x64xf16>,
                    %vp: tensor<?x2x16x64xf16>, %pt: tensor<2x?xi32>,
                    %len: tensor<2xi32>)
    -> (tensor<2x4x1x64xf16>, tensor<?x2x16x64xf16>, tensor<?x2x16x64xf16>) {
  %kp2 = attn.kv_cache_append cache(%kp : tensor<?x2x16x64xf16>)
      update(%kn : tensor<2x2x1x64xf16>) at(%len : tensor<2xi32>)
      page_table(%pt : tensor<2x?xi32>) -> tensor<?x2x16x64xf16>
  %vp2 = attn.kv_cache_append cache(%vp : tensor<?x2x16x64xf16>)
      update(%vn : tensor<2x2x1x64xf16>) at(%len : tensor<2xi32>)
      page_table(%pt : tensor<2x?xi32>) -> tensor<?x2x16x64xf16>
  %one = arith.constant dense<1> : tensor<2xi32>
  %len2 = arith.addi %len, %one : tensor<2xi32>
  %out = attn.attention q(%q : tensor<2x4x1x64xf16>)
      k(%kp2 : tensor<?x2x16x64xf16>) v(%vp2 : tensor<?x2x16x64xf16>)
      page_table(%pt : tensor<2x?xi32>) kv_len(%len2 : tensor<2xi32>)
      causal(bottom_right) -> tensor<2x4x1x64xf16>
  return %out, %kp2, %vp2
      : tensor<2x4x1x64xf16>, tensor<?x2x16x64xf16>, tensor<?x2x16x64xf16>
}
)mlir";

/// The step's arguments: sequence 0 (40 tokens) writes at row 8 of page
/// table[0, 2], sequence 1 (16 tokens) at row 0 of page table[1, 1].
std::vector<HostTensor> stepArgs(std::vector<int64_t> table,
                                 std::vector<int64_t> lens) {
  return {
      randomF16({2, 4, 1, 64}, 90),     randomF16({2, 2, 1, 64}, 91),
      randomF16({2, 2, 1, 64}, 92),     randomF16({6, 2, 16, 64}, 93),
      randomF16({6, 2, 16, 64}, 94),    ints(ElementKind::I32, {2, 3}, table),
      ints(ElementKind::I32, {2}, lens)};
}

/// The pool `pool` after appending `update` ([2, 2, 1, 64]) at the positions
/// through the page table (written from the op's definition).
HostTensor stepAppended(const HostTensor &pool, const HostTensor &update,
                        const HostTensor &table, const HostTensor &lens) {
  HostTensor out = pool;
  for (int64_t b = 0; b < 2; ++b) {
    int64_t pos = lens.getInt(b);
    int64_t page = table.getInt(b * 3 + pos / 16);
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t d = 0; d < 64; ++d)
        out.set(((page * 2 + h) * 16 + pos % 16) * 64 + d,
                update.get((b * 2 + h) * 64 + d));
  }
  return out;
}

void expectSameTensor(const HostTensor &got, const HostTensor &want,
                      const char *what) {
  ASSERT_EQ(got.shape, want.shape) << what;
  for (int64_t i = 0; i < want.numElements(); ++i)
    ASSERT_EQ(got.get(i), want.get(i)) << what << ", element " << i;
}

// A bad position and a bad page table entry: the CPU's message and status,
// nothing written (the caches come back as they were), the attention
// skipped and its output zeros; then a good call of the same runner appends
// and attends as the CPU form does.
TEST(GpuEmulatorChecks, AppendStepThenGood) {
  Spec spec(kGpuStepSpec);
  ASSERT_TRUE(spec.module);
  RunnerOptions options;
  options.device = RunDevice::GpuEmulator;
  auto runner = Runner::create(*spec.module, "gpu_step", options);
  ASSERT_TRUE(static_cast<bool>(runner)) << llvm::toString(runner.takeError());
  const std::vector<int64_t> goodTable = {4, 1, 0, 5, 2, -1};
  struct BadCall {
    std::vector<int64_t> table, lens;
    const char *message;
  } bad[] = {
      {goodTable,
       {40, 48},
       "attn: kv_cache_append writes past the page table (positions[b] + "
       "Nnew > max_pages * S): positions[1] = 48 with 1 new rows, the table "
       "holds 48"},
      {{4, 1, 6, 5, 2, -1},
       {40, 16},
       "attn: kv_cache_append: a page_table entry lies outside the page "
       "pool: page_table[0, 2] = 6, the pool has 6 pages"},
  };
  for (const BadCall &call : bad) {
    std::vector<HostTensor> args = stepArgs(call.table, call.lens);
    ASSERT_FALSE(static_cast<bool>((*runner)->bind(pointers(args))));
    llvm::Error err = (*runner)->run();
    ASSERT_TRUE(static_cast<bool>(err)) << "the bad call succeeded";
    EXPECT_EQ(llvm::toString(std::move(err)), call.message);
    EXPECT_EQ((*runner)->lastStatus(), ATTN_STATUS_INVALID_ARGUMENT);
    std::vector<HostTensor> results;
    ASSERT_FALSE(static_cast<bool>((*runner)->fetch(results)));
    ASSERT_EQ(results.size(), 3u);
    for (int64_t i = 0; i < results[0].numElements(); ++i)
      ASSERT_EQ(results[0].get(i), 0.0) << "out element " << i;
    expectSameTensor(results[1], args[3], "k cache after a failed append");
    expectSameTensor(results[2], args[4], "v cache after a failed append");
  }

  std::vector<HostTensor> args = stepArgs(goodTable, {40, 16});
  ASSERT_FALSE(static_cast<bool>((*runner)->bind(pointers(args))));
  llvm::Error ok = (*runner)->run();
  ASSERT_FALSE(static_cast<bool>(ok)) << llvm::toString(std::move(ok));
  std::vector<HostTensor> results;
  ASSERT_FALSE(static_cast<bool>((*runner)->fetch(results)));
  expectSameTensor(results[1], stepAppended(args[3], args[1], args[5], args[6]),
                   "k cache");
  expectSameTensor(results[2], stepAppended(args[4], args[2], args[5], args[6]),
                   "v cache");
  // The attention against the CPU form of the same spec (which the
  // reference tests check): f16 inputs, P rounded to f16 on the GPU.
  RunnerOptions cpuOptions;
  auto cpu = Runner::create(*spec.module, "gpu_step", cpuOptions);
  ASSERT_TRUE(static_cast<bool>(cpu)) << llvm::toString(cpu.takeError());
  std::vector<HostTensor> cpuArgs = stepArgs(goodTable, {40, 16}), expected;
  ASSERT_FALSE(static_cast<bool>((*cpu)->bind(pointers(cpuArgs))));
  ASSERT_FALSE(static_cast<bool>((*cpu)->run()));
  ASSERT_FALSE(static_cast<bool>((*cpu)->fetch(expected)));
  double worst = 0;
  for (int64_t i = 0; i < expected[0].numElements(); ++i)
    worst = std::max(worst, std::abs(results[0].get(i) - expected[0].get(i)));
  EXPECT_LT(worst, 1e-2);
  EXPECT_GT(std::abs(results[0].get(0)), 0.0);
}

// The in-place update a serving loop wants: the caller passes each cache's
// buffer as the result buffer too; the host code skips the copy and the
// kernel writes the new rows into the caller's pool.
TEST(GpuEmulatorChecks, AppendStepInPlace) {
  Spec spec(kGpuStepSpec);
  ASSERT_TRUE(spec.module);
  auto lowered = EmulatedSpec::lower(*spec.module, "gpu_step", {});
  ASSERT_TRUE(static_cast<bool>(lowered))
      << llvm::toString(lowered.takeError());
  std::vector<HostTensor> args = stepArgs({4, 1, 0, 5, 2, -1}, {40, 16});
  HostTensor kWant = stepAppended(args[3], args[1], args[5], args[6]);
  HostTensor vWant = stepAppended(args[4], args[2], args[5], args[6]);
  HostTensor out;
  out.resize(ElementKind::F16, {2, 4, 1, 64});
  std::vector<EmulatedBuffer> bufs;
  auto add = [&](HostTensor &t) {
    bufs.push_back(EmulatedBuffer::memref(
        t.bytes.data(), static_cast<int64_t>(t.bytes.size()), t.shape));
  };
  for (HostTensor &t : args)
    add(t);
  add(out);
  add(args[3]);
  add(args[4]);
  attn_rt_clear_error();
  llvm::Error err = emulate((*lowered)->module(), "gpu_step", bufs);
  ASSERT_FALSE(static_cast<bool>(err)) << llvm::toString(std::move(err));
  EXPECT_EQ(attn_rt_take_error(), ATTN_STATUS_OK);
  expectSameTensor(args[3], kWant, "k cache updated in place");
  expectSameTensor(args[4], vWant, "v cache updated in place");
  EXPECT_GT(std::abs(out.get(0)), 0.0);
}

// attn_rt_report_error: a failure with its own message; the first one of a
// call wins, over checks too.
TEST(ReportError, FirstWins) {
  attn_rt_clear_error();
  intptr_t context = attn_rt_error_context();
  attn_rt_report_error(context, ATTN_STATUS_DEVICE_ERROR, "first");
  attn_rt_report_error(context, ATTN_STATUS_INVALID_ARGUMENT, "second");
  attn_rt_check_failed(context, 0, 1, 2, 3, 4);
  EXPECT_EQ(attn_rt_has_failed(context), 1);
  EXPECT_EQ(attn_rt_take_error(), ATTN_STATUS_DEVICE_ERROR);
  EXPECT_STREQ(attn_last_error(), "first");
  EXPECT_EQ(attn_rt_take_error(), ATTN_STATUS_OK);
  EXPECT_EQ(attn_rt_has_failed(context), 0);
  // ATTN_STATUS_OK is not a failure's status.
  attn_rt_report_error(context, ATTN_STATUS_OK, "no status");
  EXPECT_EQ(attn_rt_take_error(), ATTN_STATUS_INVALID_ARGUMENT);
}

} // namespace

// The out-of-memory tests make malloc return null for a size no machine
// has; AddressSanitizer's allocator reports such a request as an error
// unless told to return null as malloc does.
extern "C" const char *__asan_default_options() {
  return "allocator_may_return_null=1";
}

int main(int argc, char **argv) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
