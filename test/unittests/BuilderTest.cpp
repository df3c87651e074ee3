//===- BuilderTest.cpp - tests of the attn C++ builder API ----------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// What lit cannot reach: the C++ builders (type inference, attributes), the
// verifier as an embedding sees it (mlir::verify on a built op, diagnostics
// caught by a handler), and the expand-projections pass run from C++.
//
//===----------------------------------------------------------------------===//

#include "attn/IR/AttnBuilders.h"
#include "attn/IR/AttnOps.h"
#include "attn/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <type_traits>
#include <utility>

using namespace mlir;
using namespace mlir::attn;

namespace {

constexpr int64_t kDyn = ShapedType::kDynamic;

//===----------------------------------------------------------------------===//
// Compile-time API checks
//===----------------------------------------------------------------------===//

/// True when buildProjectedAttention accepts a `Cfg` as its modifiers.
template <typename Cfg, typename = void>
struct CanBuildProjected : std::false_type {};
template <typename Cfg>
struct CanBuildProjected<
    Cfg, std::void_t<decltype(buildProjectedAttention(
             std::declval<OpBuilder &>(), std::declval<Location>(), Value(),
             Value(), Value(), Value(), Value(), Value(), 1, 1,
             std::declval<const Cfg &>()))>> : std::true_type {};

static_assert(CanBuildProjected<AttentionModifiers>::value,
              "the projection-level op takes the shared modifiers");
static_assert(!CanBuildProjected<AttentionConfig>::value,
              "a full AttentionConfig (layout, lse) must not be sliced "
              "silently into the projection-level op");

//===----------------------------------------------------------------------===//
// Fixture
//===----------------------------------------------------------------------===//

class BuilderTest : public ::testing::Test {
protected:
  BuilderTest() : builder(&ctx), loc(UnknownLoc::get(&ctx)) {
    ctx.loadDialect<AttnDialect, func::FuncDialect, tensor::TensorDialect,
                    arith::ArithDialect>();
    module = ModuleOp::create(loc);
  }

  Type f32() { return builder.getF32Type(); }
  Type f16() { return builder.getF16Type(); }
  Type bf16() { return builder.getBF16Type(); }

  RankedTensorType tensor(ArrayRef<int64_t> shape, Type elt = nullptr) {
    return RankedTensorType::get(shape, elt ? elt : f32());
  }

  /// Adds `func.func @name(types...)` to the module, leaves the builder
  /// before its `return` and gives back its arguments.
  SmallVector<Value> makeFunc(ArrayRef<Type> types) {
    builder.setInsertionPointToEnd(module->getBody());
    std::string name = "f" + std::to_string(numFuncs++);
    auto func = func::FuncOp::create(builder, loc, name,
                                     builder.getFunctionType(types, {}));
    Block *body = func.addEntryBlock();
    builder.setInsertionPointToEnd(body);
    auto ret = func::ReturnOp::create(builder, loc);
    builder.setInsertionPoint(ret);
    return SmallVector<Value>(body->getArguments().begin(),
                              body->getArguments().end());
  }

  /// Makes the function being built return `values`, so that passes do not
  /// erase the (pure) ops that compute them.
  void returnValues(ValueRange values) {
    Block *body = builder.getInsertionBlock();
    auto func = cast<func::FuncOp>(body->getParentOp());
    body->getTerminator()->erase();
    builder.setInsertionPointToEnd(body);
    func::ReturnOp::create(builder, loc, values);
    func.setFunctionType(builder.getFunctionType(
        func.getArgumentTypes(), TypeRange(ValueRange(values))));
  }

  /// Runs the full verifier (ODS constraints, then the op's rules) on `op`
  /// and returns the error messages, empty when it verifies.
  std::string verifyError(Operation *op) {
    std::string messages;
    ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &diag) {
      if (diag.getSeverity() == DiagnosticSeverity::Error)
        messages += diag.str() + "\n";
      return success();
    });
    if (succeeded(mlir::verify(op))) {
      EXPECT_TRUE(messages.empty()) << messages;
      return "";
    }
    EXPECT_FALSE(messages.empty()) << "verification failed with no error";
    return messages;
  }

  /// Builds attn.attention over fresh arguments of the given types.
  AttentionOp attention(Type q, Type k, Type v,
                        const AttentionConfig &config = {}) {
    SmallVector<Value> a = makeFunc({q, k, v});
    return buildAttention(builder, loc, a[0], a[1], a[2], config);
  }

  static std::string print(Operation *op, bool generic = false) {
    std::string s;
    llvm::raw_string_ostream os(s);
    OpPrintingFlags flags;
    if (generic)
      flags.printGenericOpForm();
    op->print(os, flags);
    return s;
  }

  MLIRContext ctx;
  OpBuilder builder;
  Location loc;
  OwningOpRef<ModuleOp> module;
  int numFuncs = 0;
};

#define EXPECT_VERIFIES(op) EXPECT_EQ(verifyError((op).getOperation()), "")
#define EXPECT_VERIFY_ERROR(op, substr)                                        \
  do {                                                                         \
    std::string err = verifyError((op).getOperation());                        \
    EXPECT_NE(err.find(substr), std::string::npos)                             \
        << "expected an error containing\n  " << (substr) << "\ngot\n  "       \
        << err;                                                                \
  } while (false)

//===----------------------------------------------------------------------===//
// attn.attention: type inference
//===----------------------------------------------------------------------===//

TEST_F(BuilderTest, MultiHead) {
  auto t = tensor({2, 4, 16, 32});
  AttentionOp op = attention(t, t, t);
  EXPECT_EQ(op.getOut().getType(), t);
  EXPECT_FALSE(op.getLse());
  EXPECT_EQ(op.getLayout(), Layout::bhnd);
  EXPECT_EQ(op.getNormalization(), Normalization::softmax);
  EXPECT_FALSE(op.getCausal());
  EXPECT_EQ(op.getNumQueryHeads(), 4);
  EXPECT_EQ(op.getNumKvHeads(), 4);
  EXPECT_EQ(op.getHeadDimQK(), 32);
  EXPECT_VERIFIES(op);
}

// The seed's example: H = 8 query heads share G = 2 K/V heads.
TEST_F(BuilderTest, SeedGroupedQuery) {
  AttentionConfig cfg;
  cfg.causal = CausalAlign::top_left;
  cfg.withLse = true;
  AttentionOp op = attention(tensor({2, 8, 5, 64}), tensor({2, 2, 5, 64}),
                             tensor({2, 2, 5, 64}), cfg);
  EXPECT_EQ(op.getOut().getType(), tensor({2, 8, 5, 64}));
  ASSERT_TRUE(op.getLse());
  EXPECT_EQ(op.getLse().getType(), tensor({2, 8, 5}));
  EXPECT_EQ(op.getCausal(), CausalAlign::top_left);
  EXPECT_EQ(op.getNumQueryHeads(), 8);
  EXPECT_EQ(op.getNumKvHeads(), 2);
  // Default scale 1/sqrt(Dqk).
  ASSERT_TRUE(op.getEffectiveScale());
  EXPECT_DOUBLE_EQ(*op.getEffectiveScale(), 0.125);
  EXPECT_VERIFIES(op);
}

TEST_F(BuilderTest, MultiQuery) {
  AttentionOp op =
      attention(tensor({1, 8, 32, 64}, f16()), tensor({1, 1, 32, 64}, f16()),
                tensor({1, 1, 32, 64}, f16()));
  EXPECT_EQ(op.getOut().getType(), tensor({1, 8, 32, 64}, f16()));
  EXPECT_EQ(op.getNumKvHeads(), 1);
  EXPECT_VERIFIES(op);
}

// [B, N, H, D] with cross-attention (Nq = 5, Nk = 7) and Dv != Dqk: out is
// [B, Nq, Hq, Dv] stored, lse is logical [B, Hq, Nq] whatever the layout.
TEST_F(BuilderTest, CrossAttentionBnhd) {
  AttentionConfig cfg;
  cfg.layout = Layout::bnhd;
  cfg.withLse = true;
  AttentionOp op = attention(tensor({2, 5, 8, 64}), tensor({2, 7, 2, 64}),
                             tensor({2, 7, 2, 48}), cfg);
  EXPECT_EQ(op.getOut().getType(), tensor({2, 5, 8, 48}));
  EXPECT_EQ(op.getLse().getType(), tensor({2, 8, 5}));
  EXPECT_EQ(op.getLayout(), Layout::bnhd);
  EXPECT_EQ(op.getQuerySeqLen(), 5);
  EXPECT_EQ(op.getKvSeqLen(), 7);
  EXPECT_EQ(op.getNumQueryHeads(), 8);
  EXPECT_EQ(op.getHeadDimV(), 48);
  EXPECT_EQ(op.getPhysicalDim(1), 2);
  EXPECT_VERIFIES(op);
}

TEST_F(BuilderTest, DynamicSizes) {
  AttentionConfig cfg;
  cfg.withLse = true;
  // B is dynamic in q but static in k: the out type takes the static one.
  AttentionOp op =
      attention(tensor({kDyn, 8, kDyn, 64}), tensor({2, 2, kDyn, 64}),
                tensor({kDyn, 2, kDyn, kDyn}), cfg);
  EXPECT_EQ(op.getOut().getType(), tensor({2, 8, kDyn, kDyn}));
  EXPECT_EQ(op.getLse().getType(), tensor({2, 8, kDyn}));
  EXPECT_VERIFIES(op);

  auto dyn = tensor({kDyn, kDyn, kDyn, kDyn});
  AttentionOp all = attention(dyn, dyn, dyn, cfg);
  EXPECT_EQ(all.getOut().getType(), dyn);
  EXPECT_EQ(all.getLse().getType(), tensor({kDyn, kDyn, kDyn}));
  EXPECT_FALSE(all.getEffectiveScale());
  EXPECT_VERIFIES(all);
}

TEST_F(BuilderTest, ElementTypes) {
  for (Type elt : {f32(), f16(), bf16()}) {
    AttentionConfig cfg;
    cfg.withLse = true;
    auto t = tensor({1, 2, 8, 16}, elt);
    AttentionOp op = attention(t, t, t, cfg);
    EXPECT_EQ(op.getOut().getType(), t);
    // lse is f32 whatever the input precision.
    EXPECT_EQ(op.getLse().getType(), tensor({1, 2, 8}, f32()));
    EXPECT_VERIFIES(op);
  }
}

TEST_F(BuilderTest, EveryModifier) {
  SmallVector<Value> a = makeFunc(
      {tensor({2, 8, 4, 16}, bf16()), tensor({2, 12, 2, 16}, bf16()),
       tensor({2, 12, 2, 16}, bf16()), tensor({2}, builder.getI32Type()),
       tensor({2, 1, 8, 12}, builder.getI1Type()), tensor({4, 8, 12}, f16()),
       tensor({4})});
  AttentionConfig cfg;
  cfg.layout = Layout::bnhd;
  cfg.kvLen = a[3];
  cfg.mask = a[4];
  cfg.bias = a[5];
  cfg.alibiSlopes = a[6];
  cfg.causal = CausalAlign::bottom_right;
  cfg.windowLeft = 6;
  cfg.windowRight = 0;
  cfg.scale = 0.25;
  cfg.softcap = 30.0;
  cfg.withLse = true;
  AttentionOp op = buildAttention(builder, loc, a[0], a[1], a[2], cfg);
  EXPECT_EQ(op.getOut().getType(), tensor({2, 8, 4, 16}, bf16()));
  EXPECT_EQ(op.getLse().getType(), tensor({2, 4, 8}));
  EXPECT_EQ(op.getKvLen(), a[3]);
  EXPECT_EQ(op.getMask(), a[4]);
  EXPECT_EQ(op.getBias(), a[5]);
  EXPECT_EQ(op.getAlibiSlopes(), a[6]);
  EXPECT_EQ(op.getCausal(), CausalAlign::bottom_right);
  EXPECT_EQ(op.getWindowLeft(), 6u);
  EXPECT_EQ(op.getWindowRight(), 0u);
  EXPECT_EQ(op.getScaleAttr().getValueAsDouble(), 0.25);
  EXPECT_EQ(op.getSoftcapAttr().getValueAsDouble(), 30.0);
  EXPECT_DOUBLE_EQ(*op.getEffectiveScale(), 0.25);
  EXPECT_VERIFIES(op);

  std::string text = print(op);
  for (StringRef part :
       {"layout(bnhd)", "kv_len(", "mask(", "bias(", "alibi(",
        "causal(bottom_right)", "window_left(6)", "window_right(0)",
        "scale(2.500000e-01)", "softcap(3.000000e+01)"})
    EXPECT_NE(text.find(part.str()), std::string::npos) << part.str();
}

// User regions from C++: a document mask reading ids through mod_inputs and
// a score region, with align(bottom_right) and a window.
TEST_F(BuilderTest, Regions) {
  auto t = tensor({1, 2, kDyn, 16});
  auto ids = tensor({kDyn}, builder.getI32Type());
  SmallVector<Value> a = makeFunc({t, t, t, ids});
  AttentionConfig cfg;
  cfg.align = CausalAlign::bottom_right;
  cfg.windowLeft = 8;
  cfg.modInputs = {a[3]};
  AttentionOp op = buildAttention(builder, loc, a[0], a[1], a[2], cfg);
  buildMaskMod(builder, op, [](OpBuilder &b, Location l, ValueRange args) {
    Value di = tensor::ExtractOp::create(b, l, args[4], args[2]);
    Value dj = tensor::ExtractOp::create(b, l, args[4], args[3]);
    return Value(arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, di, dj));
  });
  buildScoreMod(builder, op, [](OpBuilder &b, Location l, ValueRange args) {
    return Value(arith::MulFOp::create(b, l, args[4], args[4]));
  });
  EXPECT_VERIFIES(op);
  EXPECT_TRUE(op.isBottomRightAligned());
  ASSERT_TRUE(op.getMaskModBlock());
  EXPECT_EQ(op.getMaskModBlock()->getNumArguments(), 5u);
  ASSERT_TRUE(op.getScoreModBlock());
  EXPECT_EQ(op.getScoreModBlock()->getNumArguments(), 6u);
  std::string text = print(op);
  EXPECT_NE(text.find("mod_inputs("), std::string::npos) << text;
  EXPECT_NE(text.find("align(bottom_right) window_left(8) score_mod {"),
            std::string::npos)
      << text;
  // Round trip through the generic form.
  returnValues(op->getResults());
  std::string generic = print(*module, /*generic=*/true);
  OwningOpRef<ModuleOp> parsed = parseSourceString<ModuleOp>(generic, &ctx);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(print(*parsed), print(*module));
}

// A region whose body yields the wrong type is reported by the verifier.
TEST_F(BuilderTest, RejectsRegionYieldType) {
  auto t = tensor({1, 2, 8, 16});
  AttentionOp op = attention(t, t, t);
  buildMaskMod(builder, op, [](OpBuilder &b, Location l, ValueRange args) {
    return Value(arith::AddIOp::create(b, l, args[2], args[3]));
  });
  EXPECT_VERIFY_ERROR(op, "mask_mod must yield whether the key may be read "
                          "(i1); got 'index'");
}

TEST_F(BuilderTest, SigmoidNoLse) {
  AttentionConfig cfg;
  cfg.norm = Normalization::sigmoid;
  auto t = tensor({1, 2, 8, 16});
  AttentionOp op = attention(t, t, t, cfg);
  EXPECT_EQ(op.getNormalization(), Normalization::sigmoid);
  EXPECT_NE(print(op).find("norm(sigmoid)"), std::string::npos);
  EXPECT_VERIFIES(op);
}

//===----------------------------------------------------------------------===//
// attn.attention: the verifier rejects what the contract rejects
//===----------------------------------------------------------------------===//

TEST_F(BuilderTest, RejectsHeadsNotDivisible) {
  AttentionOp op = attention(tensor({2, 6, 8, 64}), tensor({2, 4, 8, 64}),
                             tensor({2, 4, 8, 64}));
  EXPECT_VERIFY_ERROR(op, "query heads must be a multiple of K/V heads: Hq = "
                          "6 is not divisible by Hkv = 4");
}

TEST_F(BuilderTest, RejectsHeadDimMismatch) {
  AttentionOp op = attention(tensor({2, 8, 8, 64}), tensor({2, 2, 8, 32}),
                             tensor({2, 2, 8, 64}));
  EXPECT_VERIFY_ERROR(op, "q and k must have the same head dimension (Dqk): "
                          "q has 64, k has 32");
}

TEST_F(BuilderTest, RejectsBadMaskBroadcast) {
  SmallVector<Value> a = makeFunc(
      {tensor({2, 8, 4, 64}), tensor({2, 2, 16, 64}), tensor({2, 2, 16, 64}),
       tensor({2, 2, 4, 16}, builder.getI1Type())});
  AttentionConfig cfg;
  cfg.mask = a[3];
  AttentionOp op = buildAttention(builder, loc, a[0], a[1], a[2], cfg);
  EXPECT_VERIFY_ERROR(op, "mask of shape [2, 2, 4, 16] is not broadcastable "
                          "to [B, Hq, Nq, Nk] = [2, 8, 4, 16]: dimension 1 "
                          "has size 2, expected 1 or Hq = 8");
}

TEST_F(BuilderTest, RejectsNegativeWindow) {
  AttentionConfig cfg;
  cfg.causal = CausalAlign::top_left;
  cfg.windowLeft = -3;
  auto t = tensor({1, 2, 8, 16});
  EXPECT_VERIFY_ERROR(attention(t, t, t, cfg),
                      "window_left must be non-negative; got -3");
  AttentionConfig right;
  right.windowRight = -1;
  EXPECT_VERIFY_ERROR(attention(t, t, t, right),
                      "window_right must be non-negative; got -1");
}

TEST_F(BuilderTest, RejectsLseWithSigmoid) {
  AttentionConfig cfg;
  cfg.norm = Normalization::sigmoid;
  cfg.withLse = true;
  auto t = tensor({1, 2, 8, 16});
  EXPECT_VERIFY_ERROR(attention(t, t, t, cfg),
                      "lse is defined only for softmax normalization; got "
                      "norm(sigmoid)");
}

TEST_F(BuilderTest, RejectsBadModifierOperands) {
  SmallVector<Value> a = makeFunc(
      {tensor({2, 8, 4, 64}), tensor({2, 2, 4, 64}), tensor({2, 2, 4, 64}),
       tensor({3}, builder.getI64Type()), tensor({2})});
  AttentionConfig lens;
  lens.kvLen = a[3];
  EXPECT_VERIFY_ERROR(buildAttention(builder, loc, a[0], a[1], a[2], lens),
                      "kv_len must be a rank-1 tensor with one length per "
                      "batch entry (B = 2); got 'tensor<3xi64>'");
  AttentionConfig slopes;
  slopes.alibiSlopes = a[4];
  EXPECT_VERIFY_ERROR(buildAttention(builder, loc, a[0], a[1], a[2], slopes),
                      "alibi slopes must be a rank-1 tensor with one slope "
                      "per query head (Hq = 8); got 'tensor<2xf32>'");
}

TEST_F(BuilderTest, RejectsBadScalars) {
  auto t = tensor({1, 2, 8, 16});
  AttentionConfig cap;
  cap.softcap = -1.0;
  EXPECT_VERIFY_ERROR(attention(t, t, t, cap),
                      "softcap must be positive and finite");
  AttentionConfig scale;
  scale.scale = std::numeric_limits<double>::infinity();
  EXPECT_VERIFY_ERROR(attention(t, t, t, scale), "scale must be finite");
}

TEST_F(BuilderTest, RejectsMixedElementTypes) {
  AttentionOp op =
      attention(tensor({1, 2, 8, 16}), tensor({1, 2, 8, 16}, f16()),
                tensor({1, 2, 8, 16}));
  EXPECT_VERIFY_ERROR(
      op, "q, k, v and out must share one element type (k and v may "
          "share an 8-bit quantized one); got "
          "'f32', 'f16', 'f32', 'f32'");
}

// Nothing is inferred from a rank-3 q: out takes q's type and the verifier
// names the rule.
TEST_F(BuilderTest, RejectsWrongRank) {
  auto q = tensor({2, 8, 64});
  AttentionOp op = attention(q, tensor({2, 2, 8, 64}), tensor({2, 2, 8, 64}));
  EXPECT_EQ(op.getOut().getType(), q);
  EXPECT_VERIFY_ERROR(op, "q must have rank 4");
}

TEST_F(BuilderTest, RejectsUnsupportedElementType) {
  auto t = tensor({1, 2, 8, 16}, builder.getF64Type());
  EXPECT_VERIFY_ERROR(attention(t, t, t),
                      "operand #0 must be ranked tensor of 32-bit float or "
                      "16-bit float or bfloat16 type values");
}

//===----------------------------------------------------------------------===//
// attn.projected_attention
//===----------------------------------------------------------------------===//

// The seed's GQA example at the projection level: D = 512, Hq = 8, Hkv = 2.
TEST_F(BuilderTest, ProjectedSelfAttention) {
  SmallVector<Value> a =
      makeFunc({tensor({2, 5, 512}), tensor({512, 512}), tensor({512, 128}),
                tensor({512, 128}), tensor({512, 512})});
  AttentionModifiers mods;
  mods.causal = CausalAlign::top_left;
  ProjectedAttentionOp op = buildProjectedAttention(
      builder, loc, a[0], /*xkv=*/Value(), a[1], a[2], a[3], a[4], 8, 2, mods);
  EXPECT_EQ(op.getResult().getType(), tensor({2, 5, 512}));
  EXPECT_FALSE(op.getXkv());
  EXPECT_EQ(op.getKvSource(), a[0]);
  EXPECT_EQ(op.getNumQueryHeads(), 8u);
  EXPECT_EQ(op.getNumKvHeads(), 2u);
  EXPECT_EQ(op.getCausal(), CausalAlign::top_left);
  EXPECT_VERIFIES(op);
}

TEST_F(BuilderTest, ProjectedCrossAttention) {
  SmallVector<Value> a =
      makeFunc({tensor({2, 6, 64}), tensor({2, 20, 64}), tensor({64, 64}),
                tensor({64, 16}), tensor({64, 8}), tensor({32, 64}),
                tensor({2}, builder.getI64Type()),
                tensor({6, 20}, builder.getI1Type())});
  AttentionModifiers mods;
  mods.kvLen = a[6];
  mods.mask = a[7];
  mods.windowLeft = 4;
  mods.softcap = 20.0;
  ProjectedAttentionOp op = buildProjectedAttention(
      builder, loc, a[0], a[1], a[2], a[3], a[4], a[5], 4, 1, mods);
  EXPECT_EQ(op.getResult().getType(), tensor({2, 6, 64}));
  EXPECT_EQ(op.getKvSource(), a[1]);
  EXPECT_EQ(op.getKvLen(), a[6]);
  EXPECT_EQ(op.getMask(), a[7]);
  EXPECT_VERIFIES(op);
}

TEST_F(BuilderTest, ProjectedDynamic) {
  // D comes from the first static width: here wq's rows.
  SmallVector<Value> a =
      makeFunc({tensor({kDyn, kDyn, kDyn}, f16()), tensor({32, 32}, f16()),
                tensor({32, 16}, f16()), tensor({32, 16}, f16()),
                tensor({kDyn, kDyn}, f16())});
  ProjectedAttentionOp op = buildProjectedAttention(
      builder, loc, a[0], Value(), a[1], a[2], a[3], a[4], 4, 2);
  EXPECT_EQ(op.getResult().getType(), tensor({kDyn, kDyn, 32}, f16()));
  EXPECT_VERIFIES(op);
}

TEST_F(BuilderTest, ProjectedRejects) {
  SmallVector<Value> a =
      makeFunc({tensor({2, 5, 96}), tensor({96, 96}), tensor({96, 64}),
                tensor({96, 32}), tensor({96, 96})});
  EXPECT_VERIFY_ERROR(buildProjectedAttention(builder, loc, a[0], Value(), a[1],
                                              a[2], a[2], a[4], 6, 4),
                      "query heads must be a multiple of K/V heads: Hq = 6 is "
                      "not divisible by Hkv = 4");
  // Hq = 8: Dqk = 96/8 = 12 from wq but 64/2 = 32 from wk.
  EXPECT_VERIFY_ERROR(buildProjectedAttention(builder, loc, a[0], Value(), a[1],
                                              a[2], a[2], a[4], 8, 2),
                      "wq and wk give different head dimensions (Dqk): 12 "
                      "from wq (Hq = 8), 32 from wk (Hkv = 2)");
  // Zero heads are caught by the attribute constraint, before the op's own
  // rules divide by the head count.
  EXPECT_VERIFY_ERROR(buildProjectedAttention(builder, loc, a[0], Value(), a[1],
                                              a[3], a[3], a[4], 4, 0),
                      "attribute 'num_kv_heads' failed to satisfy constraint");
  // The op's own rule guards a direct call of verify(), which skips the
  // attribute constraints, against the division by zero.
  {
    auto zero = buildProjectedAttention(builder, loc, a[0], Value(), a[1], a[3],
                                        a[3], a[4], 4, 0);
    std::string messages;
    ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &diag) {
      messages += diag.str();
      return success();
    });
    EXPECT_TRUE(failed(zero.verify()));
    EXPECT_NE(
        messages.find("head counts must be positive; got Hq = 4, Hkv = 0"),
        std::string::npos)
        << messages;
  }
  AttentionModifiers neg;
  neg.windowRight = -2;
  EXPECT_VERIFY_ERROR(buildProjectedAttention(builder, loc, a[0], Value(), a[1],
                                              a[3], a[3], a[4], 3, 1, neg),
                      "window_right must be non-negative; got -2");
}

//===----------------------------------------------------------------------===//
// Round trip and the expand-projections pass
//===----------------------------------------------------------------------===//

TEST_F(BuilderTest, PrintParseRoundTrip) {
  {
    AttentionConfig cfg;
    cfg.causal = CausalAlign::bottom_right;
    cfg.windowLeft = 16;
    cfg.withLse = true;
    AttentionOp op = attention(tensor({2, 8, 5, 64}), tensor({2, 2, 9, 64}),
                               tensor({2, 2, 9, 64}), cfg);
    returnValues(op->getResults());
  }
  {
    SmallVector<Value> a = makeFunc(
        {tensor({kDyn, 4, 8, 16}, bf16()), tensor({kDyn, 12, 2, 16}, bf16()),
         tensor({kDyn, 12, 2, 8}, bf16()), tensor({kDyn}, builder.getI32Type()),
         tensor({4, 12}, builder.getI1Type()), tensor({8, 4, 12}, f16()),
         tensor({8})});
    AttentionConfig cfg;
    cfg.layout = Layout::bnhd;
    cfg.kvLen = a[3];
    cfg.mask = a[4];
    cfg.bias = a[5];
    cfg.alibiSlopes = a[6];
    cfg.scale = 0.5;
    cfg.softcap = 50.0;
    cfg.windowRight = 0;
    returnValues(
        buildAttention(builder, loc, a[0], a[1], a[2], cfg)->getResults());
  }
  {
    SmallVector<Value> a =
        makeFunc({tensor({2, 6, 64}), tensor({2, 20, 64}), tensor({64, 64}),
                  tensor({64, 16}), tensor({64, 16}), tensor({64, 64})});
    AttentionModifiers mods;
    mods.norm = Normalization::sigmoid;
    buildProjectedAttention(builder, loc, a[0], a[1], a[2], a[3], a[4], a[5], 4,
                            1, mods);
  }
  ASSERT_TRUE(succeeded(mlir::verify(*module)));

  for (bool generic : {false, true}) {
    std::string text = print(*module, generic);
    OwningOpRef<ModuleOp> parsed = parseSourceString<ModuleOp>(text, &ctx);
    ASSERT_TRUE(parsed) << text;
    EXPECT_EQ(print(*parsed), print(*module));
    EXPECT_EQ(print(*parsed, generic), text);
  }
}

TEST_F(BuilderTest, ExpandProjectionsPass) {
  ctx.loadDialect<linalg::LinalgDialect>();
  {
    SmallVector<Value> a =
        makeFunc({tensor({2, 5, 512}), tensor({512, 512}), tensor({512, 128}),
                  tensor({512, 128}), tensor({512, 512})});
    AttentionModifiers mods;
    mods.causal = CausalAlign::top_left;
    mods.windowLeft = 2;
    returnValues(buildProjectedAttention(builder, loc, a[0], Value(), a[1],
                                         a[2], a[3], a[4], 8, 2, mods)
                     ->getResults());
  }
  {
    SmallVector<Value> a =
        makeFunc({tensor({2, 6, 64}, f16()), tensor({2, 20, 64}, f16()),
                  tensor({64, 64}, f16()), tensor({64, 16}, f16()),
                  tensor({64, 16}, f16()), tensor({64, 64}, f16())});
    returnValues(buildProjectedAttention(builder, loc, a[0], a[1], a[2], a[3],
                                         a[4], a[5], 4, 1)
                     ->getResults());
  }
  ASSERT_TRUE(succeeded(mlir::verify(*module)));

  PassManager pm(&ctx);
  pm.addPass(createAttnExpandProjections());
  ASSERT_TRUE(succeeded(pm.run(*module)));

  int numAttention = 0, numProjected = 0;
  module->walk([&](AttentionOp op) {
    ++numAttention;
    EXPECT_EQ(op.getLayout(), Layout::bnhd);
  });
  module->walk([&](ProjectedAttentionOp) { ++numProjected; });
  EXPECT_EQ(numAttention, 2);
  EXPECT_EQ(numProjected, 0);

  // The self-attention case: heads split as [B, N, H, Dh] with no transpose,
  // modifiers carried over.
  std::string text = print(*module);
  EXPECT_NE(text.find("attn.attention"), std::string::npos);
  EXPECT_NE(text.find("layout(bnhd)"), std::string::npos);
  EXPECT_NE(text.find("causal(top_left) window_left(2)"), std::string::npos);
  EXPECT_NE(text.find("-> tensor<2x5x8x64xf32>"), std::string::npos) << text;
  EXPECT_NE(text.find("-> tensor<2x6x4x16xf16>"), std::string::npos) << text;
  EXPECT_EQ(text.find("projected_attention"), std::string::npos);
  EXPECT_EQ(text.find("transpose"), std::string::npos);
}

} // namespace

// Paged K/V: k and v are page pools, the batch comes from q (and the table),
// the result types are inferred from q and v.
TEST_F(BuilderTest, PagedKv) {
  Type i32 = builder.getI32Type();
  SmallVector<Value> a = makeFunc(
      {tensor({kDyn, 8, 1, 64}), tensor({256, 2, 16, 64}),
       tensor({256, 2, 16, 32}), tensor({4, 64}, i32), tensor({4}, i32)});
  AttentionConfig cfg;
  cfg.pageTable = a[3];
  cfg.kvLen = a[4];
  cfg.causal = CausalAlign::bottom_right;
  cfg.withLse = true;
  AttentionOp op = buildAttention(builder, loc, a[0], a[1], a[2], cfg);
  EXPECT_TRUE(op.isPaged());
  EXPECT_EQ(op.getOut().getType(), tensor({kDyn, 8, 1, 32}));
  EXPECT_EQ(op.getLse().getType(), tensor({kDyn, 8, 1}));
  EXPECT_EQ(op.getPageSize(), 16);
  EXPECT_EQ(op.getNumPages(), 256);
  EXPECT_EQ(op.getKvSeqLen(), 64 * 16);
  EXPECT_VERIFIES(op);

  // Without kv_len the op does not verify (same message as textual IR).
  cfg.kvLen = Value();
  AttentionOp bad = buildAttention(builder, loc, a[0], a[1], a[2], cfg);
  EXPECT_EQ(verifyError(bad), "'attn.attention' op page_table needs kv_len: "
                              "the number of valid tokens of each sequence\n");
}

// Ragged batches: packed B = 1 tensors and two offset vectors.
TEST_F(BuilderTest, RaggedBatch) {
  Type i64 = builder.getI64Type();
  SmallVector<Value> a =
      makeFunc({tensor({1, kDyn, 8, 64}), tensor({1, kDyn, 2, 64}),
                tensor({9}, i64), tensor({9}, i64)});
  AttentionConfig cfg;
  cfg.layout = Layout::bnhd;
  cfg.cuSeqlensQ = a[2];
  cfg.cuSeqlensK = a[3];
  cfg.causal = CausalAlign::bottom_right;
  AttentionOp op = buildAttention(builder, loc, a[0], a[1], a[1], cfg);
  EXPECT_TRUE(op.isRagged());
  EXPECT_EQ(op.getOut().getType(), tensor({1, kDyn, 8, 64}));
  EXPECT_VERIFIES(op);
}

// Chunked prefill over a paged cache: query offsets only, a page table row
// and a kv_len entry per sequence.
TEST_F(BuilderTest, RaggedChunkedPrefill) {
  Type i32 = builder.getI32Type();
  SmallVector<Value> a =
      makeFunc({tensor({1, 8, kDyn, 64}), tensor({64, 2, 16, 64}),
                tensor({5}, i32), tensor({4, 16}, i32), tensor({4}, i32)});
  AttentionConfig cfg;
  cfg.cuSeqlensQ = a[2];
  cfg.pageTable = a[3];
  cfg.kvLen = a[4];
  cfg.causal = CausalAlign::bottom_right;
  AttentionOp op = buildAttention(builder, loc, a[0], a[1], a[1], cfg);
  EXPECT_TRUE(op.isRagged());
  EXPECT_TRUE(op.isPaged());
  EXPECT_EQ(op.getNumSequences(), 4);
  EXPECT_EQ(op.getOut().getType(), tensor({1, 8, kDyn, 64}));
  EXPECT_VERIFIES(op);
}

// Latent attention: v is k, out has vFromK columns; a width outside
// [1, Dqk] builds and is rejected by the verifier.
TEST_F(BuilderTest, LatentAttention) {
  SmallVector<Value> a =
      makeFunc({tensor({2, 16, 1, 576}), tensor({2, 1, 256, 576})});
  AttentionConfig cfg;
  cfg.vFromK = 512;
  AttentionOp op = buildAttention(builder, loc, a[0], a[1], a[1], cfg);
  EXPECT_EQ(op.getOut().getType(), tensor({2, 16, 1, 512}));
  EXPECT_EQ(op.getHeadDimV(), 512);
  EXPECT_VERIFIES(op);
  cfg.vFromK = -3;
  AttentionOp bad = buildAttention(builder, loc, a[0], a[1], a[1], cfg);
  EXPECT_EQ(verifyError(bad), "'attn.attention' op v_from_k(-3) must take "
                              "between 1 and Dqk = 576 columns of k\n");
}
