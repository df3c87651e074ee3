//===- BuilderFuzzer.cpp - builder API on random shapes and attributes ----===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// attn-fuzz-builder: the input chooses an attn.attention or
// attn.projected_attention problem (sizes from a table that includes 0, 1,
// dynamic, 2^31, 2^32 + 1, 2^62 and INT64_MAX), perturbs the operand types
// (a wrong size, a wrong rank, a dynamic size, a wrong element type), and
// chooses every modifier and attribute, including invalid values (negative
// windows, infinite or NaN scales). The op is built with the C++ builders
// (include/attn/IR/AttnBuilders.h) inside a func.func and verified. The
// properties:
//  - building and verifying never crashes or trips a sanitizer, whatever the
//    combination (invalid ones end with a diagnostic);
//  - an op that verifies lowers to linalg in every form (naive, fused,
//    decode; random tile sizes and splits) with the passes of
//    addAttnFormPasses, and the result verifies.
//
// Input format (one decision per byte, see FuzzCommon.h and
// fuzz/make_corpus.py which writes the seeds):
//   op kind, element type, layout, B, Hkv, R (Hq = R * Hkv), Nq, Nk, Dqk, Dv,
//   D (projected), then per operand: rank change, per dimension: how it is
//   stated (static, dynamic, perturbed), then the modifiers, then the
//   lowering options.
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"

#include "attn/IR/AttnBuilders.h"
#include "attn/IR/AttnOps.h"
#include "attn/Pipelines/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Pass/PassManager.h"

#include <cmath>
#include <limits>
#include <optional>
#include <vector>

using namespace mlir;
using namespace mlir::attn;
using ::attn::fuzz::ByteReader;

namespace {

constexpr int64_t kDyn = ShapedType::kDynamic;
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

/// Sizes a problem is made of: mostly small, sometimes absurd.
const int64_t kSizes[] = {1,
                          2,
                          3,
                          4,
                          5,
                          8,
                          16,
                          0,
                          7,
                          64,
                          128,
                          int64_t(1) << 31,
                          12,
                          32,
                          13,
                          kMax,
                          int64_t(1) << 62,
                          (int64_t(1) << 32) + 1,
                          40,
                          256};
/// Sizes a perturbed dimension takes instead of the right one.
const int64_t kPerturbed[] = {0, 1, 2, 3, 5, 9, kDyn, kMax};
const int64_t kGroups[] = {1, 2, 3, 4, 8, 1, 1, 2};
const std::optional<int64_t> kWindows[] = {std::nullopt,
                                           0,
                                           1,
                                           5,
                                           64,
                                           -1,
                                           std::numeric_limits<int64_t>::min(),
                                           kMax,
                                           std::nullopt,
                                           32,
                                           2,
                                           int64_t(1) << 40};
const std::optional<double> kScales[] = {
    std::nullopt,
    1.0,
    0.5,
    1000.0,
    1e30,
    -2.0,
    0.0,
    INFINITY,
    NAN,
    1e-30,
    std::numeric_limits<double>::denorm_min(),
    -INFINITY,
    1e300,
    std::nullopt,
    std::nullopt,
    0.125};

int64_t mulSat(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    return kMax;
  return r;
}

struct Problem {
  int64_t B, Hkv, Hq, Nq, Nk, Dqk, Dv, D;
};

class Generator {
public:
  Generator(ByteReader &in, OpBuilder &b) : in(in), b(b) {}

  /// The element type of the float operands (sometimes not a valid one).
  Type floatType(unsigned code) {
    switch (code % 8) {
    case 1:
      return b.getF16Type();
    case 2:
      return b.getBF16Type();
    case 3:
      return b.getF64Type();
    case 4:
      return b.getI32Type();
    default:
      return b.getF32Type();
    }
  }

  /// A ranked tensor type with the given sizes, each possibly stated
  /// dynamically or perturbed, and the rank possibly changed.
  RankedTensorType type(std::vector<int64_t> dims, Type elt) {
    switch (in.pick(16)) {
    case 14:
      if (!dims.empty())
        dims.pop_back();
      break;
    case 15:
      dims.push_back(in.from(kSizes));
      break;
    default:
      break;
    }
    for (int64_t &d : dims) {
      uint8_t how = in.byte();
      if (how % 4 == 1)
        d = kDyn;
      else if (how % 16 == 2)
        d = kPerturbed[(how >> 4) % 8];
    }
    return RankedTensorType::get(dims, elt);
  }

  /// Trailing-aligned dims of a mask or bias of `rank` against [B, Hq, Nq,
  /// Nk]; some broadcast (size 1).
  std::vector<int64_t> broadcastDims(const Problem &p, unsigned rank) {
    const int64_t logical[4] = {p.B, p.Hq, p.Nq, p.Nk};
    std::vector<int64_t> dims;
    for (unsigned d = 0; d < rank; ++d) {
      int64_t l = d < 4 ? logical[4 - std::min(rank, 4u) + d] : 1;
      dims.push_back(in.pick(4) == 0 ? 1 : l);
    }
    return dims;
  }

  ByteReader &in;
  OpBuilder &b;
};

/// Builds `func.func @f(args) -> results` whose body is produced by `body`
/// from the block arguments.
func::FuncOp
buildFunc(OpBuilder &b, ModuleOp module, const std::vector<Type> &argTypes,
          llvm::function_ref<Operation *(ArrayRef<BlockArgument>)> body) {
  Location loc = b.getUnknownLoc();
  b.setInsertionPointToEnd(module.getBody());
  auto fn = func::FuncOp::create(b, loc, "f", b.getFunctionType(argTypes, {}));
  Block *block = fn.addEntryBlock();
  b.setInsertionPointToStart(block);
  Operation *op = body(block->getArguments());
  func::ReturnOp::create(b, loc, op->getResults());
  fn.setFunctionType(
      b.getFunctionType(argTypes, llvm::to_vector(op->getResultTypes())));
  return fn;
}

} // namespace

static std::string printOp(Operation *op) {
  std::string s;
  llvm::raw_string_ostream os(s);
  op->print(os, OpPrintingFlags().printGenericOpForm(false));
  return s;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ByteReader in(data, size);
  MLIRContext ctx(::attn::fuzz::fullRegistry(),
                  MLIRContext::Threading::DISABLED);
  ctx.loadDialect<AttnDialect, func::FuncDialect>();
  ::attn::fuzz::CollectDiagnostics diags(ctx);
  OpBuilder b(&ctx);
  Location loc = b.getUnknownLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  Generator gen(in, b);

  bool projected = in.pick(4) == 3;
  Type elt = gen.floatType(in.byte());
  Layout layout = in.flag() ? Layout::bnhd : Layout::bhnd;
  Problem p;
  p.B = in.from(kSizes);
  p.Hkv = in.from(kSizes);
  p.Hq = mulSat(p.Hkv, in.from(kGroups));
  p.Nq = in.from(kSizes);
  p.Nk = in.from(kSizes);
  p.Dqk = in.from(kSizes);
  p.Dv = in.from(kSizes);
  p.D = in.from(kSizes);
  if (projected) {
    // Head counts are attributes: positive or not, as the input says.
    const int64_t heads[] = {1, 2, 4, 8, 0, -1, 3, kMax};
    p.Hkv = in.from(heads);
    p.Hq = in.pick(3) == 0 ? in.from(heads) : mulSat(p.Hkv, in.from(kGroups));
  }

  // Operand types.
  auto physical = [&](int64_t bb, int64_t h, int64_t n, int64_t d) {
    return layout == Layout::bhnd ? std::vector<int64_t>{bb, h, n, d}
                                  : std::vector<int64_t>{bb, n, h, d};
  };
  std::vector<Type> types;
  if (!projected) {
    types.push_back(gen.type(physical(p.B, p.Hq, p.Nq, p.Dqk), elt));
    Type keyElt = in.pick(16) == 15 ? gen.floatType(in.byte()) : elt;
    types.push_back(gen.type(physical(p.B, p.Hkv, p.Nk, p.Dqk), keyElt));
    types.push_back(gen.type(physical(p.B, p.Hkv, p.Nk, p.Dv), elt));
  } else {
    bool cross = in.flag();
    types.push_back(gen.type({p.B, p.Nq, p.D}, elt));
    types.push_back(cross ? Type(gen.type({p.B, p.Nk, p.D}, elt)) : Type());
    types.push_back(gen.type({p.D, mulSat(p.Hq, p.Dqk)}, elt));
    types.push_back(gen.type({p.D, mulSat(p.Hkv, p.Dqk)}, elt));
    types.push_back(gen.type({p.D, mulSat(p.Hkv, p.Dv)}, elt));
    types.push_back(gen.type({mulSat(p.Hq, p.Dv), p.D}, elt));
    if (!cross)
      p.Nk = p.Nq;
  }

  // Modifiers.
  AttentionConfig cfg;
  unsigned modifierBits = in.byte();
  Type kvLenType, maskType, biasType, alibiType;
  if (modifierBits & 1) {
    const unsigned intBits[] = {32, 64, 16, 32};
    Type intType = b.getIntegerType(in.from(intBits));
    kvLenType = in.pick(8) == 7 ? Type(gen.type({p.B}, b.getF32Type()))
                                : Type(gen.type({p.B}, intType));
  }
  if (modifierBits & 2) {
    unsigned rank = in.pick(6);
    std::vector<int64_t> dims = gen.broadcastDims(p, rank);
    Type maskElt = in.pick(8) == 7 ? b.getI8Type() : b.getI1Type();
    maskType = gen.type(dims, maskElt);
  }
  if (modifierBits & 4) {
    unsigned rank = in.pick(6);
    std::vector<int64_t> dims = gen.broadcastDims(p, rank);
    Type biasElt = gen.floatType(in.byte());
    biasType = gen.type(dims, biasElt);
  }
  if (modifierBits & 8) {
    Type slopeElt = in.pick(8) == 7 ? b.getF16Type() : b.getF32Type();
    alibiType = gen.type({p.Hq}, slopeElt);
  }
  if (modifierBits & 16)
    cfg.causal = in.flag() ? CausalAlign::bottom_right : CausalAlign::top_left;
  if (modifierBits & 32) {
    cfg.windowLeft = in.from(kWindows);
    cfg.windowRight = in.from(kWindows);
  }
  if (modifierBits & 64) {
    cfg.scale = in.from(kScales);
    cfg.softcap = in.from(kScales);
  }
  if (modifierBits & 128)
    cfg.norm = Normalization::sigmoid;
  cfg.layout = layout;
  cfg.withLse = in.flag();
  // Latent attention (drawn last, so that earlier inputs keep their
  // meaning): v is k and V its first Dv columns, Dv in range or not.
  bool latent = !projected && in.pick(8) == 7;
  if (latent) {
    const int64_t latentDv[] = {1, 16, 0, -3, kMax, 64, 2, 8};
    cfg.vFromK = in.pick(2) == 0 ? p.Dqk : in.from(latentDv);
  }

  // The function: q, k, v (or x, [kv_source], wq, wk, wv, wo), then the
  // modifier operands that are present.
  std::vector<Type> argTypes;
  for (Type t : types)
    if (t)
      argTypes.push_back(t);
  for (Type t : {kvLenType, maskType, biasType, alibiType})
    if (t)
      argTypes.push_back(t);
  const int64_t numHeadsQ = p.Hq, numHeadsKv = p.Hkv;
  buildFunc(b, *module, argTypes, [&](ArrayRef<BlockArgument> args) {
    size_t next = 0;
    auto take = [&](Type t) -> Value {
      return t ? Value(args[next++]) : Value();
    };
    std::vector<Value> main;
    for (Type t : types)
      main.push_back(take(t));
    cfg.kvLen = take(kvLenType);
    cfg.mask = take(maskType);
    cfg.bias = take(biasType);
    cfg.alibiSlopes = take(alibiType);
    if (!projected)
      return buildAttention(b, loc, main[0], main[1],
                            latent ? main[1] : main[2], cfg)
          .getOperation();
    AttentionModifiers mods = cfg;
    return buildProjectedAttention(b, loc, main[0], main[1], main[2], main[3],
                                   main[4], main[5], numHeadsQ, numHeadsKv,
                                   mods)
        .getOperation();
  });

  bool printSpec = std::getenv("ATTN_FUZZ_PRINT") != nullptr;
  if (failed(verify(*module))) {
    if (printSpec)
      llvm::errs() << printOp(*module) << diags.str();
    return 0; // Rejected with a diagnostic: fine.
  }
  std::string spec = printOp(*module);
  if (printSpec)
    llvm::errs() << spec << "(verifies)\n";

  // A verified op lowers to linalg in every form.
  const int64_t tiles[] = {0, 1, 2, 3, 8, 16, 64, 0};
  const int64_t splitCounts[] = {4, 1, 2, 3, 7, 64, -1, 4};
  for (AttentionForm form :
       {AttentionForm::Naive, AttentionForm::Fused, AttentionForm::Decode}) {
    OwningOpRef<ModuleOp> clone(cast<ModuleOp>((*module)->clone()));
    CpuPipelineOptions opts;
    opts.form = form;
    opts.tileQ = in.from(tiles);
    opts.tileK = in.from(tiles);
    opts.splits = in.from(splitCounts);
    PassManager pm(&ctx);
    addAttnFormPasses(pm, opts);
    if (failed(pm.run(*clone)))
      ::attn::fuzz::fail(
          std::string("a verified spec does not lower in form ") +
          attentionFormName(form).str() + " (tile-q " +
          std::to_string(opts.tileQ) + ", tile-k " +
          std::to_string(opts.tileK) + ", splits " +
          std::to_string(opts.splits) + "):\n" + spec + "\ndiagnostics:\n" +
          diags.str());
  }
  return 0;
}
