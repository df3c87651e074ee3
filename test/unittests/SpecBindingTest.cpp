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
#include "attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

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
    ctx.loadDialect<AttnDialect, func::FuncDialect, arith::ArithDialect>();
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
            "Nq, Nk, Dqk, Dv, D and N >= 0");
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

} // namespace
