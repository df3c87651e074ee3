//===- ApproximateMath.cpp - polynomial exp/log/tanh ----------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/IR/AttnDialect.h"
#include "attn/Transforms/Passes.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/Transforms/Approximation.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>
#include <type_traits>

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNAPPROXIMATEMATH
#include "attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

namespace {

/// exp(t) (or, for math.exp2, 2^t) for f32 t known to be <= 0 or NaN (the
/// softmax's x - max), marked by the lowering with
/// `attn::kExpNonPositiveAttr`. Against the general approximation it drops
/// the upper clamp and the special cases of large arguments:
///   exp:  k = roundeven(t log2(e)),  r = t - k ln2 (two-constant
///         Cody-Waite), exp(r) by a degree-6 Taylor polynomial;
///   exp2: k = roundeven(t),  r = t - k (exact), 2^r = exp(r ln2) by the
///         same polynomial in r (coefficients ln2^n / n!);
///   either way |r ln2| <= ln2/2, error < 1e-7 relative, times 2^k built in
///   the exponent field. Results below the normal range (exp(t) < 1.7e-38:
///   t < -87, or 2^t with t < -125.5) give 0 (as the general approximation
///   flushes), so -inf gives exactly 0; NaN stays NaN.
///   With `avx512`, on vector<16xf32>: p 2^k as one vscalefps
///   (`llvm.x86.avx512.mask.scalef.ps.512`), write-masked to 0 below the
///   normal range.
template <typename ExpLikeOp>
struct ExpNonPositive : public OpRewritePattern<ExpLikeOp> {
  static constexpr bool base2 = std::is_same_v<ExpLikeOp, math::Exp2Op>;
  ExpNonPositive(MLIRContext *ctx, bool avx512)
      : OpRewritePattern<ExpLikeOp>(ctx, /*benefit=*/2), avx512(avx512) {}
  bool avx512;
  LogicalResult matchAndRewrite(ExpLikeOp op,
                                PatternRewriter &rewriter) const override {
    if (!op->hasAttr(attn::kExpNonPositiveAttr))
      return failure();
    Type type = op.getType();
    auto vecTy = dyn_cast<VectorType>(type);
    if (getElementTypeOrSelf(type) != rewriter.getF32Type())
      return failure();
    Location loc = op.getLoc();
    ImplicitLocOpBuilder b(loc, rewriter);
    auto cst = [&](double v) -> Value {
      return createScalarOrSplatConstant(b, loc, type, APFloat(float(v)));
    };
    Type intTy = b.getI32Type();
    if (vecTy)
      intTy = VectorType::get(vecTy.getShape(), intTy);
    auto icst = [&](int32_t v) -> Value {
      return createScalarOrSplatConstant(b, loc, intTy, v);
    };
    Value t = op.getOperand();
    Value k, r;
    // The polynomial's coefficients, highest first: 1/n! for exp(r), and
    // ln2^n/n! for 2^r = exp(r ln2).
    const double factorial[7] = {1, 1, 2, 6, 24, 120, 720};
    double coeff[7];
    for (int n = 0; n <= 6; ++n)
      coeff[6 - n] =
          (base2 ? std::pow(0.69314718055994530942, n) : 1.0) / factorial[n];
    if (base2) {
      k = math::RoundEvenOp::create(b, t);
      r = arith::SubFOp::create(b, t, k);
    } else {
      k = math::RoundEvenOp::create(
          b, arith::MulFOp::create(b, t, cst(1.44269504088896341)));
      r = math::FmaOp::create(b, k, cst(-0.693359375), t);
      r = math::FmaOp::create(b, k, cst(2.12194440e-4), r);
    }
    Value p = cst(coeff[0]);
    for (double c : ArrayRef<double>(coeff).drop_front())
      p = math::FmaOp::create(b, p, r, cst(c));
    // The smallest argument whose result is kept (normal).
    double lowest = base2 ? -125.5 : -87.0;
    if (avx512 && vecTy && vecTy.getShape() == ArrayRef<int64_t>{16} &&
        !vecTy.isScalable()) {
      // Lanes with t >= lowest or NaN (unordered): p 2^k (NaN stays NaN);
      // the others 0.
      Value keep =
          arith::CmpFOp::create(b, arith::CmpFPredicate::UGE, t, cst(lowest));
      Value mask = vector::ExtractOp::create(
          b,
          vector::BitCastOp::create(b, VectorType::get({1}, b.getI16Type()),
                                    keep),
          ArrayRef<int64_t>{0});
      // The intrinsic itself (operands a, b, src, mask, rounding):
      // x86vector.avx512.mask.scalef of MLIR 22 passes its operands to it
      // in its own order (src first), which computes something else.
      Value e =
          LLVM::CallIntrinsicOp::create(
              b, type, b.getStringAttr("llvm.x86.avx512.mask.scalef.ps.512"),
              ValueRange{p, k, cst(0.0), mask,
                         arith::ConstantOp::create(b, b.getI32IntegerAttr(4))})
              .getResult(0);
      rewriter.replaceOp(op, e);
      return success();
    }
    Value tiny =
        arith::CmpFOp::create(b, arith::CmpFPredicate::OLT, t, cst(lowest));
    // k clamped below at -127 (as one max instruction; NaN and -inf give
    // -127), so that the conversion is defined: 2^-127 is built as 0.
    Value kc = arith::SelectOp::create(
        b, arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, k, cst(-127.0)),
        k, cst(-127.0));
    Value bits = arith::ShLIOp::create(
        b,
        arith::AddIOp::create(b, arith::FPToSIOp::create(b, intTy, kc),
                              icst(127)),
        icst(23));
    Value e =
        arith::MulFOp::create(b, p, arith::BitcastOp::create(b, type, bits));
    rewriter.replaceOpWithNewOp<arith::SelectOp>(op, tiny, cst(0.0), e);
    return success();
  }
};

struct AttnApproximateMathPass
    : public attn::impl::AttnApproximateMathBase<AttnApproximateMathPass> {
  using AttnApproximateMathBase::AttnApproximateMathBase;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    auto wanted = [](StringRef name) {
      return name == math::ExpOp::getOperationName() ||
             name == math::LogOp::getOperationName() ||
             name == math::TanhOp::getOperationName();
    };
    patterns.add<ExpNonPositive<math::ExpOp>, ExpNonPositive<math::Exp2Op>>(
        &getContext(), avx512);
    populateMathPolynomialApproximationPatterns(patterns, wanted);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
