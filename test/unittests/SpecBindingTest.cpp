//===- SpecBindingTest.cpp - tests of spec introspection and binding ------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// The library side of attn-run's size handling (attn/Execution/SpecBinding.h)
// as the C API and the ahead-of-time compiler use it: specs parsed from a
// string, argument roles, sizes bound from --size-style text, and its errors
// returned as llvm::Error rather than printed.
//
//===----------------------------------------------------------------------===//

#include "attn/Execution/SpecBinding.h"
#include "attn/Execution/ReferenceBridge.h"
#include "attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <string>
#include <vector>

using namespace mlir;
using namespace mlir::attn;

namespace {

/// q [1, 1, Nq, 2], k and v [1, Hkv, Nk, 2], all but B, Hq, D dynamic.
const char *kDynamicSpec = R"mlir(
func.func @f(%q: tensor<1x1x?x2xf32>, %k: tensor<1x?x?x2xf32>,
             %v: tensor<1x?x?x2xf32>) -> tensor<1x1x?x2xf32> {
  %out = attn.attention q(%q : tensor<1x1x?x2xf32>) k(%k : tensor<1x?x?x2xf32>)
      v(%v : tensor<1x?x?x2xf32>) -> tensor<1x1x?x2xf32>
  return %out : tensor<1x1x?x2xf32>
}
)mlir";

const char *kProjectedSpec = R"mlir(
func.func @p(%x: tensor<?x?x4xf32>, %wq: tensor<4x4xf32>,
             %wk: tensor<4x2xf32>, %wv: tensor<4x2xf32>,
             %wo: tensor<4x4xf32>, %kv_len: tensor<?xi32>) -> tensor<?x?x4xf32> {
  %y = attn.projected_attention x(%x : tensor<?x?x4xf32>)
      wq(%wq : tensor<4x4xf32>) wk(%wk : tensor<4x2xf32>)
      wv(%wv : tensor<4x2xf32>) wo(%wo : tensor<4x4xf32>) heads(2, 1)
      kv_len(%kv_len : tensor<?xi32>) -> tensor<?x?x4xf32>
  return %y : tensor<?x?x4xf32>
}
)mlir";

class SpecBindingTest : public ::testing::Test {
protected:
  SpecBindingTest() {
    ctx.loadDialect<AttnDialect, func::FuncDialect, arith::ArithDialect,
                    math::MathDialect, tensor::TensorDialect>();
  }

  /// Parses `source` and introspects its only public function.
  SpecInfo parse(const char *source) {
    module = parseSourceString<ModuleOp>(source, &ctx);
    EXPECT_TRUE(module) << "could not parse the spec";
    if (!module)
      return {};
    auto spec = introspectSpec(*module, "", "spec.mlir");
    EXPECT_TRUE(static_cast<bool>(spec)) << llvm::toString(spec.takeError());
    return spec ? *spec : SpecInfo();
  }

  /// Binds `sizes` (--size-style text) and returns the error message, or ""
  /// on success (the binding then in `bound`). Diagnostics of the verifier
  /// go to `diagnostics`.
  std::string bind(const SpecInfo &spec, std::vector<std::string> sizes,
                   std::vector<std::string> shapes = {}) {
    BindingOptions opts;
    opts.sizes = std::move(sizes);
    opts.shapes = std::move(shapes);
    diagnostics.clear();
    ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &diag) {
      diagnostics += diag.str() + "\n";
      return success();
    });
    auto binding = bindSizes(spec, opts);
    if (!binding)
      return llvm::toString(binding.takeError());
    bound = std::move(*binding);
    return "";
  }

  MLIRContext ctx;
  OwningOpRef<ModuleOp> module;
  SpecBinding bound;
  std::string diagnostics;
};

TEST_F(SpecBindingTest, IntrospectsAttention) {
  SpecInfo spec = parse(kDynamicSpec);
  ASSERT_TRUE(spec.entry);
  EXPECT_EQ(spec.entry.getSymName(), "f");
  ASSERT_TRUE(spec.attnOp && isa<AttentionOp>(spec.attnOp));
  ASSERT_EQ(spec.numArgs(), 3u);
  EXPECT_EQ(spec.roles[0].name, "q");
  EXPECT_EQ(spec.roles[0].dimNames,
            (std::vector<std::string>{"B", "Hq", "Nq", "Dqk"}));
  EXPECT_EQ(spec.roles[1].dimNames,
            (std::vector<std::string>{"B", "Hkv", "Nk", "Dqk"}));
  EXPECT_EQ(spec.roles[2].dimNames,
            (std::vector<std::string>{"B", "Hkv", "Nk", "Dv"}));
  EXPECT_EQ(spec.findArg("k"), 1);
  EXPECT_EQ(spec.findArg("2"), 2);
  EXPECT_EQ(spec.findArg("3"), -1);
  EXPECT_EQ(spec.findArg("mask"), -1);
}

TEST_F(SpecBindingTest, EntryLookupErrors) {
  module = parseSourceString<ModuleOp>(kDynamicSpec, &ctx);
  ASSERT_TRUE(module);
  auto missing = introspectSpec(*module, "g", "spec.mlir");
  ASSERT_FALSE(static_cast<bool>(missing));
  EXPECT_EQ(llvm::toString(missing.takeError()),
            "no function @g with a body in spec.mlir");
  auto named = introspectSpec(*module, "f", "spec.mlir");
  ASSERT_TRUE(static_cast<bool>(named)) << llvm::toString(named.takeError());
  EXPECT_EQ(named->entry.getSymName(), "f");
}

TEST_F(SpecBindingTest, BindsSizes) {
  SpecInfo spec = parse(kDynamicSpec);
  ASSERT_EQ(bind(spec, {"Nq=5", "Hkv=1", "Nk=7"}), "");
  EXPECT_EQ(bound.shapes[0], (std::vector<int64_t>{1, 1, 5, 2}));
  EXPECT_EQ(bound.shapes[1], (std::vector<int64_t>{1, 1, 7, 2}));
  EXPECT_EQ(bound.shapes[2], (std::vector<int64_t>{1, 1, 7, 2}));
  EXPECT_EQ(bound.size("Nq"), 5);
  EXPECT_EQ(bound.size("Dqk"), 2); // learned from the static types
  EXPECT_EQ(bound.size("Dv"), 2);
  EXPECT_EQ(bound.size("B", -1), -1); // static 1: not learned
  EXPECT_EQ(bound.kinds[0], ElementKind::F32);
  EXPECT_FALSE(bound.loaded[0]);
  EXPECT_TRUE(bound.args[0].bytes.empty());

  // Memory guard and random inputs.
  EXPECT_FALSE(static_cast<bool>(checkMemory(spec, bound, 1 << 20)));
  llvm::Error tooSmall = checkMemory(spec, bound, 16);
  ASSERT_TRUE(static_cast<bool>(tooSmall));
  EXPECT_EQ(llvm::toString(std::move(tooSmall)),
            "argument 0 [1, 1, 5, 2] would need 40 bytes, more than this "
            "machine's 16 bytes of memory");
  fillRandomInputs(spec, bound, 7);
  ASSERT_EQ(bound.args[1].numElements(), 14);
  for (int64_t i = 0; i < 14; ++i) {
    EXPECT_GE(bound.args[1].get(i), -1.0);
    EXPECT_LT(bound.args[1].get(i), 1.0);
  }
  SpecBinding again = bound;
  fillRandomInputs(spec, again, 7);
  EXPECT_EQ(again.args[2].bytes, bound.args[2].bytes) << "seeded";
}

TEST_F(SpecBindingTest, ShapesFixTheirArguments) {
  SpecInfo spec = parse(kDynamicSpec);
  ASSERT_EQ(bind(spec, {"Nq=3"}, {"k=1x1x4x2", "v=1x1x4x2"}), "");
  EXPECT_EQ(bound.shapes[0], (std::vector<int64_t>{1, 1, 3, 2}));
  EXPECT_EQ(bound.shapes[1], (std::vector<int64_t>{1, 1, 4, 2}));
}

TEST_F(SpecBindingTest, MissingSize) {
  SpecInfo spec = parse(kDynamicSpec);
  EXPECT_EQ(bind(spec, {"Nq=2"}),
            "size Hkv is dynamic in the spec; give it with --size Hkv=N");
  EXPECT_EQ(bind(spec, {}),
            "size Nq is dynamic in the spec; give it with --size Nq=N");
}

TEST_F(SpecBindingTest, BadSizeText) {
  SpecInfo spec = parse(kDynamicSpec);
  EXPECT_EQ(bind(spec, {"Nx=2"}),
            "bad --size 'Nx=2': expected NAME=N with NAME one of B, Hq, Hkv, "
            "Nq, Nk, Dqk, Dv, D (paged K/V: Pages, PageSize, MaxPages; ragged "
            "batches: Seqs) and N >= 0");
  EXPECT_EQ(bind(spec, {"Nq=-1"}).rfind("bad --size 'Nq=-1'", 0), 0u);
  EXPECT_EQ(bind(spec, {"Nq=2"}, {"nosuch=1x2"}),
            "bad --shape 'nosuch=1x2': no argument named 'nosuch'");
}

TEST_F(SpecBindingTest, InconsistentSizes) {
  SpecInfo spec = parse(kDynamicSpec);
  // Hq = 1 (static) is not a multiple of Hkv = 2: the verifier on the
  // concrete types says why, the error says that the sizes are at fault.
  EXPECT_EQ(bind(spec, {"Nq=2", "Hkv=2", "Nk=3"}),
            "the given sizes are inconsistent with the spec (see the "
            "diagnostic above)");
  EXPECT_NE(diagnostics.find("query heads must be a multiple of K/V heads"),
            std::string::npos)
      << diagnostics;
  // A shape that contradicts the static type.
  EXPECT_EQ(bind(spec, {"Hkv=1", "Nk=3"}, {"q=1x1x2x3"}),
            "argument 0 shape [1, 1, 2, 3] does not match the spec's type");
}

TEST_F(SpecBindingTest, ProjectedRoles) {
  SpecInfo spec = parse(kProjectedSpec);
  ASSERT_TRUE(spec.attnOp && isa<ProjectedAttentionOp>(spec.attnOp));
  ASSERT_EQ(spec.numArgs(), 6u);
  const char *names[] = {"x", "wq", "wk", "wv", "wo", "kv_len"};
  for (unsigned a = 0; a < 6; ++a)
    EXPECT_EQ(spec.roles[a].name, names[a]) << "argument " << a;
  EXPECT_EQ(spec.roles[0].dimNames, (std::vector<std::string>{"B", "Nq", "D"}));
  EXPECT_EQ(spec.roles[1].dimNames, (std::vector<std::string>{"D", ""}));
  EXPECT_EQ(spec.roles[4].dimNames, (std::vector<std::string>{"", "D"}));
  EXPECT_EQ(spec.roles[5].dimNames, (std::vector<std::string>{"B"}));
  EXPECT_EQ(spec.findArg("wo"), 4);

  ASSERT_EQ(bind(spec, {"B=2", "Nq=3"}), "");
  EXPECT_EQ(bound.shapes[0], (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(bound.shapes[5], (std::vector<int64_t>{2}));
  EXPECT_EQ(bound.size("D"), 4);
  EXPECT_EQ(bound.kinds[5], ElementKind::I32);
}

//===----------------------------------------------------------------------===//
// score_mod / mask_mod: roles and random inputs of mod_inputs
//===----------------------------------------------------------------------===//

/// Document mask (ids read at i and j) plus a per-head relative-position
/// table read at [h, clamp(j - i + 2)] and a tensor of offsets read at a
/// computed index (no dimension name).
const char *kRegionSpec = R"mlir(
func.func @r(%q: tensor<1x2x?x4xf32>, %k: tensor<1x1x?x4xf32>,
             %v: tensor<1x1x?x4xf32>, %doc: tensor<?xi32>,
             %table: tensor<2x5xf32>, %offs: tensor<3x?xi64>)
    -> tensor<1x2x?x4xf32> {
  %out = attn.attention q(%q : tensor<1x2x?x4xf32>) k(%k : tensor<1x1x?x4xf32>)
      v(%v : tensor<1x1x?x4xf32>)
      mod_inputs(%doc, %table, %offs : tensor<?xi32>, tensor<2x5xf32>, tensor<3x?xi64>)
      score_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32,
           %d: tensor<?xi32>, %t: tensor<2x5xf32>, %o: tensor<3x?xi64>):
        %c0 = arith.constant 0 : index
        %c2 = arith.constant 2 : index
        %c4 = arith.constant 4 : index
        %r = arith.subi %j, %i : index
        %r2 = arith.addi %r, %c2 : index
        %lo = arith.maxsi %r2, %c0 : index
        %at = arith.minsi %lo, %c4 : index
        %x = tensor.extract %t[%h, %at] : tensor<2x5xf32>
        %y = arith.addf %s, %x : f32
        attn.yield %y : f32
      }
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index,
           %d: tensor<?xi32>, %t: tensor<2x5xf32>, %o: tensor<3x?xi64>):
        %di = tensor.extract %d[%i] : tensor<?xi32>
        %dj = tensor.extract %d[%j] : tensor<?xi32>
        %same = arith.cmpi eq, %di, %dj : i32
        %c0 = arith.constant 0 : index
        %off = tensor.extract %o[%c0, %c0] : tensor<3x?xi64>
        %pos = arith.cmpi sge, %off, %off : i64
        %ok = arith.andi %same, %pos : i1
        attn.yield %ok : i1
      } -> tensor<1x2x?x4xf32>
  return %out : tensor<1x2x?x4xf32>
}
)mlir";

TEST_F(SpecBindingTest, ModInputRoles) {
  SpecInfo spec = parse(kRegionSpec);
  ASSERT_EQ(spec.numArgs(), 6u);
  EXPECT_EQ(spec.roles[3].name, "mod_input0");
  EXPECT_EQ(spec.roles[4].name, "mod_input1");
  EXPECT_EQ(spec.roles[5].name, "mod_input2");
  // Named from the regions' reads: %d[%i] (and %d[%j]) -> Nq (first read),
  // %t[%h, ...] -> Hq, unnamed; %o[%c0, %c0] -> unnamed.
  EXPECT_EQ(spec.roles[3].dimNames, (std::vector<std::string>{"Nq"}));
  EXPECT_EQ(spec.roles[4].dimNames, (std::vector<std::string>{"Hq", ""}));
  EXPECT_EQ(spec.roles[5].dimNames, (std::vector<std::string>{"", ""}));
  EXPECT_EQ(spec.findArg("mod_input1"), 4);
  EXPECT_EQ(spec.findArg("mod_input3"), -1);

  // The document ids take Nq; the unnamed dynamic dimension needs --shape.
  EXPECT_EQ(bind(spec, {"Nq=6", "Nk=6"}),
            "dimension 1 of argument 5 is dynamic and has no name; give it "
            "with --shape 5=AxBx...");
  ASSERT_EQ(bind(spec, {"Nq=6", "Nk=6"}, {"mod_input2=3x2"}), "");
  EXPECT_EQ(bound.shapes[3], (std::vector<int64_t>{6}));
  EXPECT_EQ(bound.shapes[5], (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(bound.kinds[3], ElementKind::I32);
  EXPECT_EQ(bound.kinds[5], ElementKind::I64);
}

TEST_F(SpecBindingTest, ModInputRandomFill) {
  SpecInfo spec = parse(kRegionSpec);
  ASSERT_EQ(bind(spec, {"Nq=40", "Nk=40"}, {"mod_input2=3x2"}), "");
  std::set<int64_t> docCounts;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    SpecBinding b = bound;
    fillRandomInputs(spec, b, seed);
    // Document ids: sorted, starting at 0, consecutive, 1 to 8 documents.
    const HostTensor &doc = b.args[3];
    ASSERT_EQ(doc.numElements(), 40);
    EXPECT_EQ(doc.get(0), 0.0);
    for (int64_t i = 1; i < 40; ++i) {
      double step = doc.get(i) - doc.get(i - 1);
      EXPECT_TRUE(step == 0.0 || step == 1.0) << "seed " << seed << " at " << i;
    }
    int64_t docs = static_cast<int64_t>(doc.get(39)) + 1;
    EXPECT_GE(docs, 1);
    EXPECT_LE(docs, 8);
    docCounts.insert(docs);
    // The float table: the usual uniform [-1, 1).
    for (int64_t i = 0; i < b.args[4].numElements(); ++i) {
      EXPECT_GE(b.args[4].get(i), -1.0);
      EXPECT_LT(b.args[4].get(i), 1.0);
    }
    // Other integers: [0, smallest dimension) = [0, 2).
    for (int64_t i = 0; i < b.args[5].numElements(); ++i) {
      EXPECT_GE(b.args[5].get(i), 0.0);
      EXPECT_LT(b.args[5].get(i), 2.0);
    }
  }
  // Several document counts over the seeds, more than one document often.
  EXPECT_GE(docCounts.size(), 4u);
  EXPECT_GT(*docCounts.rbegin(), 1);

  // A one-element sequence is a single document; an integer tensor whose
  // length is neither Nq nor Nk is not made of document ids.
  std::mt19937_64 rng(3);
  HostTensor one;
  one.resize(ElementKind::I32, {1});
  llvm::StringMap<int64_t> sizes;
  sizes["Nq"] = 1;
  randomFill(one, ArgRole{"mod_input0", {"Nq"}}, sizes, rng);
  EXPECT_EQ(one.get(0), 0.0);
  HostTensor other;
  other.resize(ElementKind::I64, {5});
  sizes["Nq"] = 7;
  randomFill(other, ArgRole{"mod_input0", {""}}, sizes, rng);
  for (int64_t i = 0; i < 5; ++i)
    EXPECT_LT(other.get(i), 5.0);
  // Existing roles are unchanged: a non-mod integer tensor gets 0..8.
  HostTensor plain;
  plain.resize(ElementKind::I32, {64});
  randomFill(plain, ArgRole{}, sizes, rng);
  double maxValue = 0;
  for (int64_t i = 0; i < 64; ++i)
    maxValue = std::max(maxValue, plain.get(i));
  EXPECT_GT(maxValue, 5.0);
  EXPECT_LE(maxValue, 8.0);
}

TEST_F(SpecBindingTest, ProjectedSelfAttentionNkIsNq) {
  // A projected self-attention mask_mod reading ids at j: the dimension is
  // named Nk, which is Nq here.
  SpecInfo spec = parse(R"mlir(
func.func @p(%x: tensor<1x?x4xf32>, %wq: tensor<4x4xf32>,
             %wk: tensor<4x2xf32>, %wv: tensor<4x2xf32>,
             %wo: tensor<4x4xf32>, %ids: tensor<?xi64>) -> tensor<1x?x4xf32> {
  %y = attn.projected_attention x(%x : tensor<1x?x4xf32>)
      wq(%wq : tensor<4x4xf32>) wk(%wk : tensor<4x2xf32>)
      wv(%wv : tensor<4x2xf32>) wo(%wo : tensor<4x4xf32>) heads(2, 1)
      mod_inputs(%ids : tensor<?xi64>) mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %d: tensor<?xi64>):
        %dj = tensor.extract %d[%j] : tensor<?xi64>
        %c0 = arith.constant 0 : i64
        %ok = arith.cmpi sge, %dj, %c0 : i64
        attn.yield %ok : i1
      } -> tensor<1x?x4xf32>
  return %y : tensor<1x?x4xf32>
}
)mlir");
  EXPECT_EQ(spec.roles[5].name, "mod_input0");
  EXPECT_EQ(spec.roles[5].dimNames, (std::vector<std::string>{"Nk"}));
  ASSERT_EQ(bind(spec, {"Nq=9"}), "");
  EXPECT_EQ(bound.shapes[5], (std::vector<int64_t>{9}));
}

//===----------------------------------------------------------------------===//
// The reference bridge: regions, mod_inputs and align
//===----------------------------------------------------------------------===//

/// Runs the reference on the only attn op of `source` with `args`.
std::string runRef(MLIRContext &ctx, const char *source,
                   const std::vector<HostTensor> &args,
                   std::vector<::attn::ref::Tensor> &outs,
                   double *flops = nullptr) {
  OwningOpRef<ModuleOp> m = parseSourceString<ModuleOp>(source, &ctx);
  if (!m)
    return "parse error";
  Operation *op = nullptr;
  m->walk([&](Operation *o) {
    if (isa<AttentionOp, ProjectedAttentionOp>(o))
      op = o;
  });
  std::vector<const HostTensor *> ptrs;
  for (const HostTensor &t : args)
    ptrs.push_back(&t);
  if (llvm::Error err = runReference(op, ptrs, outs, flops))
    return llvm::toString(std::move(err));
  return "";
}

HostTensor filled(ElementKind kind, std::vector<int64_t> shape,
                  std::vector<double> values) {
  HostTensor t;
  t.resize(kind, shape);
  EXPECT_EQ(static_cast<int64_t>(values.size()), t.numElements())
      << "filled: as many values as elements";
  for (size_t i = 0; i < values.size(); ++i)
    t.set(static_cast<int64_t>(i), values[i]);
  return t;
}

HostTensor randomF32(std::vector<int64_t> shape, uint64_t seed) {
  HostTensor t;
  t.resize(ElementKind::F32, shape);
  std::mt19937_64 rng(seed);
  randomFill(t, ArgRole{}, {}, rng);
  return t;
}

void expectClose(const std::vector<::attn::ref::Tensor> &a,
                 const std::vector<::attn::ref::Tensor> &b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t r = 0; r < a.size(); ++r) {
    ASSERT_EQ(a[r].shape, b[r].shape);
    for (size_t i = 0; i < a[r].data.size(); ++i) {
      if (std::isinf(b[r].data[i]))
        EXPECT_EQ(a[r].data[i], b[r].data[i]);
      else
        EXPECT_NEAR(a[r].data[i], b[r].data[i], 1e-12)
            << "result " << r << " at " << i;
    }
  }
}

const char *kDocMaskSpec = R"mlir(
func.func @f(%q: tensor<1x2x6x4xf32>, %k: tensor<1x1x6x4xf32>,
             %v: tensor<1x1x6x4xf32>, %doc: tensor<6xi32>)
    -> (tensor<1x2x6x4xf32>, tensor<1x2x6xf32>) {
  %out, %lse = attn.attention q(%q : tensor<1x2x6x4xf32>)
      k(%k : tensor<1x1x6x4xf32>) v(%v : tensor<1x1x6x4xf32>)
      mod_inputs(%doc : tensor<6xi32>) causal(top_left) mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %d: tensor<6xi32>):
        %di = tensor.extract %d[%i] : tensor<6xi32>
        %dj = tensor.extract %d[%j] : tensor<6xi32>
        %same = arith.cmpi eq, %di, %dj : i32
        attn.yield %same : i1
      } score_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32, %d: tensor<6xi32>):
        %c = arith.constant 2.0 : f32
        %x = arith.divf %s, %c : f32
        %y = math.tanh %x : f32
        %z = arith.mulf %y, %c : f32
        attn.yield %z : f32
      } -> tensor<1x2x6x4xf32>, tensor<1x2x6xf32>
  return %out, %lse : tensor<1x2x6x4xf32>, tensor<1x2x6xf32>
}
)mlir";

const char *kDenseMaskSpec = R"mlir(
func.func @f(%q: tensor<1x2x6x4xf32>, %k: tensor<1x1x6x4xf32>,
             %v: tensor<1x1x6x4xf32>, %mask: tensor<6x6xi1>)
    -> (tensor<1x2x6x4xf32>, tensor<1x2x6xf32>) {
  %out, %lse = attn.attention q(%q : tensor<1x2x6x4xf32>)
      k(%k : tensor<1x1x6x4xf32>) v(%v : tensor<1x1x6x4xf32>)
      mask(%mask : tensor<6x6xi1>) causal(top_left) softcap(2.0)
      -> tensor<1x2x6x4xf32>, tensor<1x2x6xf32>
  return %out, %lse : tensor<1x2x6x4xf32>, tensor<1x2x6xf32>
}
)mlir";

TEST_F(SpecBindingTest, BridgeTranslatesRegions) {
  std::vector<double> ids = {0, 0, 1, 1, 1, 2};
  std::vector<double> dense;
  for (double a : ids)
    for (double b : ids)
      dense.push_back(a == b);
  HostTensor q = randomF32({1, 2, 6, 4}, 1), k = randomF32({1, 1, 6, 4}, 2),
             v = randomF32({1, 1, 6, 4}, 3);
  for (int64_t i = 0; i < q.numElements(); ++i)
    q.set(i, 4 * q.get(i)); // large enough logits for the cap to matter
  std::vector<::attn::ref::Tensor> got, want;
  double flopsGot = 0, flopsWant = 0;
  ASSERT_EQ(runRef(ctx, kDocMaskSpec,
                   {q, k, v, filled(ElementKind::I32, {6}, ids)}, got,
                   &flopsGot),
            "");
  ASSERT_EQ(runRef(ctx, kDenseMaskSpec,
                   {q, k, v, filled(ElementKind::I1, {6, 6}, dense)}, want,
                   &flopsWant),
            "");
  expectClose(got, want);
  // FLOPs count mask_mod (causal and document: 1+2+1+2+3+1 = 10 pairs per
  // head, 2 heads, 2 * (4 + 4) per pair).
  EXPECT_EQ(flopsGot, 10 * 2 * 16.0);
  // (a mask tensor's content is not counted: causal alone, 21 pairs)
  EXPECT_EQ(flopsWant, 21 * 2 * 16.0);
  // Out-of-range ids in the mod_inputs tensor are fine; an index outside it
  // is the reference's error.
  std::string shortSpec = kDocMaskSpec;
  for (size_t at; (at = shortSpec.find("tensor<6xi32>")) != std::string::npos;)
    shortSpec.replace(at, 13, "tensor<5xi32>");
  EXPECT_EQ(runRef(ctx, shortSpec.c_str(),
                   {q, k, v,
                    filled(ElementKind::I32, {5},
                           std::vector<double>(ids.begin(), ids.begin() + 5))},
                   got),
            "reference: mask_mod reads mod_inputs #0 at [5] outside its shape "
            "[5] at (b, h, i, j) = (0, 0, 0, 5)");
}

TEST_F(SpecBindingTest, BridgePassesAlign) {
  // align(bottom_right) window without causal equals the dense mask.
  const char *aligned = R"mlir(
func.func @f(%q: tensor<2x1x3x2xf32>, %k: tensor<2x1x6x2xf32>,
             %v: tensor<2x1x6x2xf32>, %len: tensor<2xi64>)
    -> tensor<2x1x3x2xf32> {
  %out = attn.attention q(%q : tensor<2x1x3x2xf32>) k(%k : tensor<2x1x6x2xf32>)
      v(%v : tensor<2x1x6x2xf32>) kv_len(%len : tensor<2xi64>)
      align(bottom_right) window_left(1) window_right(0) -> tensor<2x1x3x2xf32>
  return %out : tensor<2x1x3x2xf32>
}
)mlir";
  const char *masked = R"mlir(
func.func @f(%q: tensor<2x1x3x2xf32>, %k: tensor<2x1x6x2xf32>,
             %v: tensor<2x1x6x2xf32>, %len: tensor<2xi64>,
             %m: tensor<2x1x3x6xi1>) -> tensor<2x1x3x2xf32> {
  %out = attn.attention q(%q : tensor<2x1x3x2xf32>) k(%k : tensor<2x1x6x2xf32>)
      v(%v : tensor<2x1x6x2xf32>) kv_len(%len : tensor<2xi64>)
      mask(%m : tensor<2x1x3x6xi1>) -> tensor<2x1x3x2xf32>
  return %out : tensor<2x1x3x2xf32>
}
)mlir";
  std::vector<double> lens = {6, 4}, dense;
  for (int b = 0; b < 2; ++b)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 6; ++j) {
        double p = i + lens[b] - 3;
        dense.push_back(p - j <= 1 && j - p <= 0);
      }
  HostTensor q = randomF32({2, 1, 3, 2}, 4), k = randomF32({2, 1, 6, 2}, 5),
             v = randomF32({2, 1, 6, 2}, 6);
  HostTensor len = filled(ElementKind::I64, {2}, lens);
  std::vector<::attn::ref::Tensor> got, want, topLeft;
  ASSERT_EQ(runRef(ctx, aligned, {q, k, v, len}, got), "");
  ASSERT_EQ(runRef(ctx, masked,
                   {q, k, v, len, filled(ElementKind::I1, {2, 1, 3, 6}, dense)},
                   want),
            "");
  expectClose(got, want);
  // Without align (top-left), the result differs.
  std::string plain = aligned;
  plain.replace(plain.find("align(bottom_right) "), 20, "");
  ASSERT_EQ(runRef(ctx, plain.c_str(), {q, k, v, len}, topLeft), "");
  double diff = 0;
  for (size_t i = 0; i < got[0].data.size(); ++i)
    diff = std::max(diff, std::fabs(got[0].data[i] - topLeft[0].data[i]));
  EXPECT_GT(diff, 1e-3);
}

TEST_F(SpecBindingTest, BridgeNamesUnsupportedOps) {
  const char *spec = R"mlir(
func.func @f(%q: tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32> {
  %out = attn.attention q(%q : tensor<1x1x2x2xf32>) k(%q : tensor<1x1x2x2xf32>)
      v(%q : tensor<1x1x2x2xf32>) mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %sum, %carry = arith.addui_extended %i, %j : index, i1
        attn.yield %carry : i1
      } -> tensor<1x1x2x2xf32>
  return %out : tensor<1x1x2x2xf32>
}
)mlir";
  std::vector<::attn::ref::Tensor> outs;
  EXPECT_EQ(runRef(ctx, spec, {randomF32({1, 1, 2, 2}, 7)}, outs),
            "the reference cannot evaluate mask_mod: ops with 2 results are "
            "not supported ('arith.addui_extended')");
  const char *unknown = R"mlir(
func.func @f(%q: tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32> {
  %out = attn.attention q(%q : tensor<1x1x2x2xf32>) k(%q : tensor<1x1x2x2xf32>)
      v(%q : tensor<1x1x2x2xf32>) score_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32):
        %n = math.isnormal %s : f32
        %z = arith.constant 0.0 : f32
        %r = arith.select %n, %s, %z : f32
        attn.yield %r : f32
      } -> tensor<1x1x2x2xf32>
  return %out : tensor<1x1x2x2xf32>
}
)mlir";
  EXPECT_EQ(runRef(ctx, unknown, {randomF32({1, 1, 2, 2}, 8)}, outs),
            "the reference cannot evaluate score_mod: the op is not supported "
            "('math.isnormal')");
}

} // namespace

// Random page tables are consistent with their lengths: every page a
// sequence reads lies in the pool and belongs to one sequence only; entries
// past a sequence's last page are -1; lengths fit the table; the edge cases
// (an empty sequence, a length on a page boundary, the whole table) appear.
TEST(RandomServingInputs, PagingIsConsistent) {
  bool empty = false, boundary = false, whole = false;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    std::mt19937_64 rng(seed);
    const int64_t b = 4, maxPages = 6, pageSize = 4, pages = 20;
    HostTensor table, lens;
    table.resize(ElementKind::I32, {b, maxPages});
    lens.resize(ElementKind::I32, {b});
    randomPaging(table, lens, false, false, pages, pageSize, rng);
    std::set<int64_t> used;
    for (int64_t s = 0; s < b; ++s) {
      int64_t len = lens.getInt(s);
      ASSERT_GE(len, 0);
      ASSERT_LE(len, maxPages * pageSize);
      empty |= len == 0;
      boundary |= len > 0 && len < maxPages * pageSize && len % pageSize == 0;
      whole |= len == maxPages * pageSize;
      int64_t need = (len + pageSize - 1) / pageSize;
      for (int64_t p = 0; p < maxPages; ++p) {
        int64_t e = table.getInt(s * maxPages + p);
        if (p < need) {
          EXPECT_GE(e, 0);
          EXPECT_LT(e, pages);
          EXPECT_TRUE(used.insert(e).second) << "page " << e << " shared";
        } else {
          EXPECT_EQ(e, -1);
        }
      }
    }
  }
  EXPECT_TRUE(empty && boundary && whole);
}

// Given lengths are kept, and a given table gets lengths within its valid
// leading entries.
TEST(RandomServingInputs, PagingKeepsGivenInputs) {
  std::mt19937_64 rng(1);
  HostTensor table, lens;
  table.resize(ElementKind::I32, {2, 3});
  lens.resize(ElementKind::I32, {2});
  lens.set(0, 5);
  lens.set(1, 0);
  randomPaging(table, lens, false, true, 8, 2, rng);
  EXPECT_EQ(lens.getInt(0), 5);
  EXPECT_EQ(lens.getInt(1), 0);
  EXPECT_EQ(table.getInt(3), -1);
  for (int64_t p = 0; p < 3; ++p)
    EXPECT_GE(table.getInt(p), 0);
  // Table [[1, 9, 0], [2, 3, 4]] over a pool of 5 pages: entry 9 is outside,
  // so sequence 0 may read its first page only.
  const double given[6] = {1, 9, 0, 2, 3, 4};
  for (int i = 0; i < 6; ++i)
    table.set(i, given[i]);
  for (uint64_t seed = 0; seed < 20; ++seed) {
    std::mt19937_64 r(seed);
    randomPaging(table, lens, true, false, 5, 2, r);
    EXPECT_LE(lens.getInt(0), 2);
    EXPECT_LE(lens.getInt(1), 6);
  }
}

// Random ragged offsets are non-decreasing and within the packed tokens.
TEST(RandomServingInputs, OffsetsAreValid) {
  bool emptySeq = false;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    std::mt19937_64 rng(seed);
    HostTensor cu;
    cu.resize(ElementKind::I64, {6});
    randomOffsets(cu, 30, rng);
    EXPECT_GE(cu.getInt(0), 0);
    EXPECT_LE(cu.getInt(5), 30);
    for (int64_t i = 0; i < 5; ++i) {
      EXPECT_LE(cu.getInt(i), cu.getInt(i + 1));
      emptySeq |= cu.getInt(i) == cu.getInt(i + 1);
    }
  }
  EXPECT_TRUE(emptySeq);
}
