//===- DifferentialFuzzer.cpp - compiled specs vs the f64 reference -------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// attn-fuzz-diff: the input chooses a small valid attention problem (sizes
// including 0, every modifier, f32/f16/bf16, either layout, static, dynamic
// or mixed sizes, attn.attention or attn.projected_attention), the form it
// is compiled in (naive, fused, decode; tile sizes, splits, parallel or not,
// LLVM -O level) and the values of every input (q, k, v, kv_len including
// negative and larger-than-Nk lengths, mask bits, bias; optionally NaN in k
// and v beyond kv_len, which no row may read). The spec is built
// with the C++ builders, JIT-compiled (attn/Execution/Jit.h), run, and every
// output is compared with the independent f64 reference
// (attn/Execution/ReferenceBridge.h) within defaultTolerance; where the
// reference is not finite (lse = -inf of a fully masked row) the output must
// equal it exactly. A mismatch, a compile failure of a verified spec or a
// crash aborts; the spec and inputs are then written to $ATTN_FUZZ_DUMP (or
// the current directory) with the attn-run command line that replays them.
//
// Input values are multiples of 2^-7 (times a power-of-two amplitude), so
// logits are nearly exact in f32 and a mismatch is a bug, not rounding.
//
// Input format: one decision per byte (FuzzCommon.h), the header first (see
// the reads in LLVMFuzzerTestOneInput and fuzz/make_corpus.py), then the
// data bytes of the inputs; past the end of the input, data comes from a
// generator seeded by the header.
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"

#include "attn/Execution/HostTensor.h"
#include "attn/Execution/Jit.h"
#include "attn/Execution/ReferenceBridge.h"
#include "attn/IR/AttnBuilders.h"
#include "attn/IR/AttnOps.h"
#include "attn/Support/Npy.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <thread>

using namespace mlir;
using namespace mlir::attn;
using ::attn::fuzz::ByteReader;

namespace {

constexpr int64_t kDyn = ShapedType::kDynamic;

const int64_t kBatch[] = {1, 2, 1, 3, 0, 2, 1, 1};
const int64_t kKvHeads[] = {1, 2, 1, 3};
const int64_t kGroups[] = {1, 2, 4, 3, 1, 8, 2, 1};
const int64_t kSeqLens[] = {1, 2,  3,  5,  8, 13,  16, 17,
                            0, 33, 64, 65, 7, 130, 4,  1};
const int64_t kHeadDims[] = {1, 2, 3, 4, 8, 16, 5, 7, 32, 13};
const int64_t kModelDims[] = {4, 6, 8, 12, 16, 1, 2, 3};
const std::optional<int64_t> kWindows[] = {std::nullopt,
                                           0,
                                           1,
                                           2,
                                           3,
                                           5,
                                           8,
                                           16,
                                           int64_t(1) << 61,
                                           std::numeric_limits<int64_t>::max()};
const std::optional<double> kScales[] = {std::nullopt, 0.5,  1.0,          2.0,
                                         0.125,        0.25, std::nullopt, 4.0};
const std::optional<double> kSoftcaps[] = {std::nullopt, 1.0, 2.5,  10.0, 30.0,
                                           std::nullopt, 0.5, 100.0};
const int64_t kTiles[] = {0, 1, 2, 3, 4, 8, 16, 32, 0, 0, 5, 64};
const int64_t kSplits[] = {4, 1, 2, 3, 7, 16, -1, 4};
const double kAmplitudes[] = {1.0, 2.0, 4.0, 0.5, 8.0, 1.0, 1.0, 16.0};
const unsigned kOptLevels[] = {3, 2, 0, 3, 1, 3, 3, 2};

enum class Kind { F32, F16, BF16 };

struct Config {
  unsigned form = 0; // naive, fused, decode
  Kind dtype = Kind::F32;
  bool bnhd = false, lse = false, sigmoid = false, kvLen = false,
       kvLenI64 = false, alibi = false, parallel = false, projected = false,
       cross = false;
  int64_t B = 1, Hkv = 1, Hq = 1, Nq = 1, Nk = 1, Dqk = 1, Dv = 1, D = 4;
  std::optional<CausalAlign> causal;
  std::optional<int64_t> windowLeft, windowRight;
  std::optional<double> scale, softcap;
  unsigned maskRank = 0, maskBcast = 0, biasRank = 0, biasBcast = 0;
  Kind biasType = Kind::F32;
  /// Per size name: 0 static, 1 dynamic everywhere, 2 dynamic at some
  /// occurrences.
  std::map<std::string, unsigned> dyn;
  int64_t tileQ = 0, tileK = 0, splits = 4;
  unsigned optLevel = 3;
  double amplitude = 1.0;
  /// Fill k and v at the keys beyond each batch entry's kv_len with NaN:
  /// no row may read them (the unused part of a KV cache).
  bool poisonPadding = false;
};

const char *kFormNames[] = {"naive", "fused", "decode"};

Type elementType(OpBuilder &b, Kind k) {
  switch (k) {
  case Kind::F16:
    return b.getF16Type();
  case Kind::BF16:
    return b.getBF16Type();
  default:
    return b.getF32Type();
  }
}

ElementKind hostKind(Kind k) {
  switch (k) {
  case Kind::F16:
    return ElementKind::F16;
  case Kind::BF16:
    return ElementKind::BF16;
  default:
    return ElementKind::F32;
  }
}

/// The role of each function argument, to fill it.
struct Arg {
  std::string name;
  std::vector<int64_t> shape;
  RankedTensorType type;
  ElementKind kind;
};

class SpecBuilder {
public:
  SpecBuilder(const Config &c, ByteReader &in, OpBuilder &b)
      : c(c), in(in), b(b) {}

  /// A size as the type states it: static, or dynamic per the config.
  int64_t stated(int64_t size, const char *name) {
    if (!name)
      return size;
    auto it = c.dyn.find(name);
    unsigned mode = it == c.dyn.end() ? 0 : it->second;
    if (mode == 1 || (mode == 2 && in.flag()))
      return kDyn;
    return size;
  }

  void add(const std::string &name,
           std::vector<std::pair<int64_t, const char *>> dims, Type elt,
           ElementKind kind) {
    Arg a;
    a.name = name;
    std::vector<int64_t> typeDims;
    for (auto [size, dimName] : dims) {
      a.shape.push_back(size);
      typeDims.push_back(stated(size, dimName));
    }
    a.type = RankedTensorType::get(typeDims, elt);
    a.kind = kind;
    args.push_back(a);
  }

  std::vector<std::pair<int64_t, const char *>> broadcast(unsigned rank,
                                                          unsigned bcast) {
    const std::pair<int64_t, const char *> logical[4] = {
        {c.B, "B"},
        {c.Hq, c.projected ? nullptr : "Hq"},
        {c.Nq, "Nq"},
        {c.Nk, "Nk"}};
    std::vector<std::pair<int64_t, const char *>> dims;
    for (unsigned d = 4 - rank; d < 4; ++d)
      dims.push_back((bcast >> d) & 1 ? std::make_pair(int64_t(1), nullptr)
                                      : logical[d]);
    return dims;
  }

  void addModifiers() {
    if (c.kvLen)
      add("kv_len", {{c.B, "B"}}, c.kvLenI64 ? b.getI64Type() : b.getI32Type(),
          c.kvLenI64 ? ElementKind::I64 : ElementKind::I32);
    if (c.maskRank)
      add("mask", broadcast(c.maskRank, c.maskBcast), b.getI1Type(),
          ElementKind::I1);
    if (c.biasRank)
      add("bias", broadcast(c.biasRank, c.biasBcast),
          elementType(b, c.biasType), hostKind(c.biasType));
    if (c.alibi)
      add("alibi", {{c.Hq, c.projected ? nullptr : "Hq"}}, b.getF32Type(),
          ElementKind::F32);
  }

  void addOperands() {
    Type elt = elementType(b, c.dtype);
    ElementKind kind = hostKind(c.dtype);
    using D = std::pair<int64_t, const char *>;
    if (!c.projected) {
      auto order = [&](D bb, D h, D n, D d) {
        return c.bnhd ? std::vector<D>{bb, n, h, d}
                      : std::vector<D>{bb, h, n, d};
      };
      add("q", order({c.B, "B"}, {c.Hq, "Hq"}, {c.Nq, "Nq"}, {c.Dqk, "Dqk"}),
          elt, kind);
      add("k", order({c.B, "B"}, {c.Hkv, "Hkv"}, {c.Nk, "Nk"}, {c.Dqk, "Dqk"}),
          elt, kind);
      add("v", order({c.B, "B"}, {c.Hkv, "Hkv"}, {c.Nk, "Nk"}, {c.Dv, "Dv"}),
          elt, kind);
    } else {
      add("x", {{c.B, "B"}, {c.Nq, "Nq"}, {c.D, "D"}}, elt, kind);
      if (c.cross)
        add("kv_source", {{c.B, "B"}, {c.Nk, "Nk"}, {c.D, "D"}}, elt, kind);
      add("wq", {{c.D, "D"}, {c.Hq * c.Dqk, "W"}}, elt, kind);
      add("wk", {{c.D, "D"}, {c.Hkv * c.Dqk, "W"}}, elt, kind);
      add("wv", {{c.D, "D"}, {c.Hkv * c.Dv, "W"}}, elt, kind);
      add("wo", {{c.Hq * c.Dv, "W"}, {c.D, "D"}}, elt, kind);
    }
    addModifiers();
  }

  /// Builds func.func @f over the arguments, returning the op's results.
  Operation *build(ModuleOp module) {
    Location loc = b.getUnknownLoc();
    std::vector<Type> types;
    for (const Arg &a : args)
      types.push_back(a.type);
    b.setInsertionPointToEnd(module.getBody());
    auto fn = func::FuncOp::create(b, loc, "f", b.getFunctionType(types, {}));
    Block *block = fn.addEntryBlock();
    b.setInsertionPointToStart(block);
    auto argNamed = [&](const char *name) -> Value {
      for (size_t i = 0; i < args.size(); ++i)
        if (args[i].name == name)
          return block->getArgument(i);
      return Value();
    };
    AttentionConfig cfg;
    cfg.causal = c.causal;
    cfg.windowLeft = c.windowLeft;
    cfg.windowRight = c.windowRight;
    cfg.scale = c.scale;
    cfg.softcap = c.softcap;
    cfg.norm = c.sigmoid ? Normalization::sigmoid : Normalization::softmax;
    cfg.kvLen = argNamed("kv_len");
    cfg.mask = argNamed("mask");
    cfg.bias = argNamed("bias");
    cfg.alibiSlopes = argNamed("alibi");
    cfg.layout = c.bnhd ? Layout::bnhd : Layout::bhnd;
    cfg.withLse = c.lse;
    Operation *op;
    if (!c.projected) {
      op = buildAttention(b, loc, argNamed("q"), argNamed("k"), argNamed("v"),
                          cfg)
               .getOperation();
    } else {
      AttentionModifiers mods = cfg;
      op = buildProjectedAttention(b, loc, argNamed("x"), argNamed("kv_source"),
                                   argNamed("wq"), argNamed("wk"),
                                   argNamed("wv"), argNamed("wo"), c.Hq, c.Hkv,
                                   mods)
               .getOperation();
    }
    func::ReturnOp::create(b, loc, op->getResults());
    fn.setFunctionType(
        b.getFunctionType(types, llvm::to_vector(op->getResultTypes())));
    return op;
  }

  std::vector<Arg> args;

private:
  const Config &c;
  ByteReader &in;
  OpBuilder &b;
};

Config readConfig(ByteReader &in) {
  Config c;
  c.form = in.pick(3);
  unsigned t = in.pick(8);
  c.dtype = t < 5 ? Kind::F32 : (t < 7 ? Kind::F16 : Kind::BF16);
  unsigned flags = in.byte();
  c.bnhd = flags & 1;
  c.lse = flags & 2;
  c.sigmoid = flags & 4;
  c.kvLen = flags & 8;
  c.kvLenI64 = flags & 16;
  c.alibi = flags & 32;
  c.parallel = flags & 64;
  c.projected = flags & 128;
  c.B = in.from(kBatch);
  c.Hkv = in.from(kKvHeads);
  c.Hq = c.Hkv * in.from(kGroups);
  c.Nq = in.from(kSeqLens);
  c.Nk = in.from(kSeqLens);
  c.Dqk = in.from(kHeadDims);
  c.Dv = in.from(kHeadDims);
  c.D = in.from(kModelDims);
  switch (in.pick(4)) {
  case 1:
    c.causal = CausalAlign::top_left;
    break;
  case 2:
    c.causal = CausalAlign::bottom_right;
    break;
  default:
    break;
  }
  c.windowLeft = in.from(kWindows);
  c.windowRight = in.from(kWindows);
  c.scale = in.from(kScales);
  c.softcap = in.from(kSoftcaps);
  c.maskRank = in.pick(5);
  c.maskBcast = in.byte();
  c.biasRank = in.pick(5);
  c.biasBcast = in.byte();
  c.biasType = static_cast<Kind>(in.pick(3));
  unsigned dynBits = in.byte();
  const char *names[] = {"B", "Hq", "Hkv", "Nq", "Nk", "Dqk", "Dv"};
  for (unsigned i = 0; i < 7; ++i)
    if ((dynBits >> i) & 1)
      c.dyn[names[i]] = (dynBits >> 7) & 1 ? 2 : 1;
  c.tileQ = in.from(kTiles);
  c.tileK = in.from(kTiles);
  c.splits = in.from(kSplits);
  c.optLevel = in.from(kOptLevels);
  c.amplitude = in.from(kAmplitudes);
  c.poisonPadding = in.flag();

  // Make the combination valid.
  if (c.sigmoid)
    c.lse = false;
  if (c.projected) {
    c.cross = c.Nk != c.Nq && (flags & 1);
    if (!c.cross)
      c.Nk = c.Nq;
    c.bnhd = false;
    c.lse = false;
    // Projected problems: modest sizes (the projections are dense).
    c.Hkv = std::min<int64_t>(c.Hkv, 2);
    c.Hq = c.Hkv * std::min<int64_t>(c.Hq / std::max<int64_t>(c.Hkv, 1), 4);
    c.Dqk = std::min<int64_t>(c.Dqk, 8);
    c.Dv = std::min<int64_t>(c.Dv, 8);
    if (c.dyn.count("B") || c.dyn.count("Nq") || c.dyn.count("Nk") ||
        c.dyn.count("Dqk")) {
      std::map<std::string, unsigned> dyn;
      for (const char *n : {"B", "Nq", "Nk", "D", "W"})
        if (c.dyn.count(n) || c.dyn.count("Dqk"))
          dyn[n] = c.dyn.count("B") ? c.dyn["B"] : 1;
      c.dyn = dyn;
    } else {
      c.dyn.clear();
    }
  }
  return c;
}

/// A value from one data byte: a multiple of 2^-7 in [-1, 1), times `amp`.
double value(uint8_t byte, double amp) {
  return static_cast<int8_t>(byte) / 128.0 * amp;
}

std::vector<HostTensor> makeInputs(const Config &c,
                                   const std::vector<Arg> &args, ByteReader &in,
                                   uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto next = [&]() -> uint8_t {
    return in.exhausted() ? static_cast<uint8_t>(rng()) : in.byte();
  };
  std::vector<HostTensor> inputs;
  for (const Arg &a : args) {
    HostTensor t;
    t.resize(a.kind, a.shape);
    int64_t n = t.numElements();
    if (a.name == "q" || a.name == "k") {
      for (int64_t i = 0; i < n; ++i)
        t.set(i, value(next(), c.amplitude));
    } else if (a.name == "kv_len") {
      int64_t big = c.kvLenI64 ? std::numeric_limits<int64_t>::max()
                               : std::numeric_limits<int32_t>::max();
      int64_t small = c.kvLenI64 ? std::numeric_limits<int64_t>::min()
                                 : std::numeric_limits<int32_t>::min();
      for (int64_t i = 0; i < n; ++i) {
        uint8_t v = next();
        int64_t len;
        if (v < 224)
          len = v % (c.Nk + 1);
        else {
          const int64_t special[] = {-1,  c.Nk + 1, 2 * c.Nk + 5, -1000,
                                     big, small,    c.Nk,         0};
          len = special[v % 8];
        }
        // Large i64 values do not survive HostTensor's double round trip
        // exactly; store the integer bits directly.
        if (a.kind == ElementKind::I64)
          std::memcpy(t.bytes.data() + 8 * i, &len, 8);
        else
          t.set(i, static_cast<double>(len));
      }
    } else if (a.name == "mask") {
      for (int64_t i = 0; i < n; ++i)
        t.set(i, (next() & 0xC0) != 0 ? 1 : 0);
    } else if (a.name == "bias") {
      for (int64_t i = 0; i < n; ++i)
        t.set(i, value(next(), 2.0));
    } else if (a.name == "alibi") {
      for (int64_t h = 0; h < n; ++h)
        t.set(h, std::pow(2.0, -8.0 * (h + 1) / static_cast<double>(n)));
    } else if (a.name[0] == 'w') {
      // Weights: ~ 2/sqrt(fan-in), as powers of two times data.
      double r = std::ldexp(
          1.0, -static_cast<int>(
                   std::ceil(std::log2(std::max<int64_t>(a.shape[0], 1)) / 2)));
      for (int64_t i = 0; i < n; ++i)
        t.set(i, value(next(), 2 * r));
    } else { // v, x, kv_source
      for (int64_t i = 0; i < n; ++i)
        t.set(i, value(next(), 1.0));
    }
    inputs.push_back(std::move(t));
  }
  if (c.poisonPadding && c.kvLen && !c.projected) {
    const HostTensor *kvLen = nullptr;
    for (size_t a = 0; a < args.size(); ++a)
      if (args[a].name == "kv_len")
        kvLen = &inputs[a];
    for (size_t a = 0; a < args.size(); ++a) {
      if (args[a].name != "k" && args[a].name != "v")
        continue;
      HostTensor &t = inputs[a];
      const std::vector<int64_t> &s = t.shape; // [B, H, N, D] or [B, N, H, D]
      for (int64_t b = 0; b < s[0]; ++b) {
        int64_t len = std::clamp<int64_t>(kvLen->getInt(b), 0, c.Nk);
        for (int64_t x = 0; x < s[1]; ++x)
          for (int64_t y = 0; y < s[2]; ++y)
            for (int64_t d = 0; d < s[3]; ++d) {
              int64_t key = c.bnhd ? x : y;
              if (key >= len)
                t.set(((b * s[1] + x) * s[2] + y) * s[3] + d, NAN);
            }
      }
    }
  }
  return inputs;
}

const char *npyDtype(ElementKind kind) {
  switch (kind) {
  case ElementKind::F16:
    return "<f2";
  case ElementKind::I1:
    return "|b1";
  case ElementKind::I32:
    return "<i4";
  case ElementKind::I64:
    return "<i8";
  default:
    return "<f4";
  }
}

/// The multiply-adds below which a grid runs on one thread: none where the
/// decode form's split count is chosen at run time (small problems would
/// always get 1 chunk), else the default.
int64_t minParallelWorkFor(const Config &c) {
  return c.splits < 0 ? 0 : JitOptions().minParallelWork;
}

/// Writes the spec and inputs for attn-run; returns the replay command.
std::string dump(const std::string &spec, const Config &c,
                 const std::vector<Arg> &args,
                 const std::vector<HostTensor> &inputs) {
  const char *dir = std::getenv("ATTN_FUZZ_DUMP");
  std::string base = std::string(dir && *dir ? dir : ".") + "/attn-fuzz-diff";
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(base + ".mlir", ec);
    if (ec)
      return "(cannot write " + base + ".mlir)";
    os << spec;
  }
  std::ostringstream cmd;
  // A split count chosen at run time depends on the threads.
  if (c.splits < 0)
    cmd << "env OMP_NUM_THREADS=" << std::thread::hardware_concurrency() << " ";
  cmd << "attn-run " << base
      << ".mlir --verify --reps=0 --form=" << kFormNames[c.form]
      << " --tile-q=" << c.tileQ << " --tile-k=" << c.tileK
      << " --splits=" << c.splits << " -O" << c.optLevel
      << " --parallel=" << (c.parallel ? "true" : "false")
      << " --min-parallel-work=" << minParallelWorkFor(c);
  for (size_t a = 0; a < inputs.size(); ++a) {
    const HostTensor &t = inputs[a];
    ::attn::npy::Array arr;
    std::string err;
    if (t.kind == ElementKind::I64) {
      // Exact integer bits (not through double).
      arr.dtype = "<i8";
      arr.shape = t.shape;
      arr.bytes.assign(t.bytes.begin(), t.bytes.end());
    } else {
      std::vector<double> values(t.numElements());
      for (size_t i = 0; i < values.size(); ++i)
        values[i] = t.get(static_cast<int64_t>(i));
      err = ::attn::npy::fromDoubles(values, t.shape, npyDtype(t.kind), arr);
    }
    std::string path = base + ".arg" + std::to_string(a) + ".npy";
    if (err.empty())
      err = ::attn::npy::write(path, arr);
    if (!err.empty())
      return "(cannot write " + path + ": " + err + ")";
    cmd << " --input " << a << "=" << path;
  }
  return cmd.str();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ByteReader in(data, size);
  Config c = readConfig(in);

  MLIRContext ctx(::attn::fuzz::fullRegistry(),
                  MLIRContext::Threading::DISABLED);
  ctx.loadDialect<AttnDialect, func::FuncDialect>();
  ::attn::fuzz::CollectDiagnostics diags(ctx);
  OpBuilder b(&ctx);
  OwningOpRef<ModuleOp> module = ModuleOp::create(b.getUnknownLoc());
  SpecBuilder sb(c, in, b);
  sb.addOperands();
  Operation *op = sb.build(*module);
  std::string spec;
  {
    llvm::raw_string_ostream os(spec);
    module->print(os);
  }
  if (std::getenv("ATTN_FUZZ_PRINT"))
    llvm::errs() << "form " << kFormNames[c.form] << " tile-q " << c.tileQ
                 << " tile-k " << c.tileK << " splits " << c.splits
                 << " parallel " << c.parallel << " -O" << c.optLevel << "\n"
                 << spec;
  if (failed(verify(*module)))
    ::attn::fuzz::fail("the generated spec does not verify (a bug in the "
                       "fuzzer or the verifier):\n" +
                       spec + "\n" + diags.str());

  uint64_t seed = 0x9e3779b97f4a7c15ull;
  for (size_t i = 0; i < std::min<size_t>(size, 64); ++i)
    seed = (seed ^ data[i]) * 0x100000001b3ull;
  std::vector<HostTensor> inputs = makeInputs(c, sb.args, in, seed);
  std::vector<const HostTensor *> ptrs;
  for (const HostTensor &t : inputs)
    ptrs.push_back(&t);

  std::ostringstream what;
  what << "form " << kFormNames[c.form] << ", tile-q " << c.tileQ << ", tile-k "
       << c.tileK << ", splits " << c.splits << ", parallel " << c.parallel
       << ", -O" << c.optLevel << "\n"
       << spec;

  JitOptions opts;
  opts.form = *parseAttentionForm(kFormNames[c.form]);
  opts.tileQ = c.tileQ;
  opts.tileK = c.tileK;
  opts.splits = c.splits;
  opts.parallel = c.parallel;
  opts.minParallelWork = minParallelWorkFor(c);
  opts.optLevel = c.optLevel;
  auto jit = JitFunction::compile(*module, "f", opts);
  if (!jit)
    ::attn::fuzz::fail(
        "a verified spec does not compile: " + llvm::toString(jit.takeError()) +
        "\n" + what.str() + "\n" + diags.str());
  std::vector<HostTensor> outputs;
  if (llvm::Error err = (*jit)->invoke(ptrs, outputs))
    ::attn::fuzz::fail("the compiled spec failed: " +
                       llvm::toString(std::move(err)) + "\n" + what.str());
  std::vector<::attn::ref::Tensor> expected;
  if (llvm::Error err = runReference(op, ptrs, expected, nullptr))
    ::attn::fuzz::fail("the reference failed: " +
                       llvm::toString(std::move(err)) + "\n" + what.str());
  if (outputs.size() != expected.size())
    ::attn::fuzz::fail("result count differs from the reference\n" +
                       what.str());

  for (size_t o = 0; o < outputs.size(); ++o) {
    const HostTensor &actual = outputs[o];
    double atol, rtol;
    defaultTolerance(actual.kind, atol, rtol);
    Comparison cmp = compare(actual, expected[o], atol, rtol);
    int64_t bad = cmp.mismatches > 0 ? cmp.firstMismatch : -1;
    // compare() accepts anything where the reference is +-inf (its bound is
    // infinite there): non-finite reference values must match exactly.
    if (bad < 0 && actual.shape == expected[o].shape)
      for (int64_t i = 0, n = actual.numElements(); i < n && bad < 0; ++i) {
        double a = actual.get(i), e = expected[o].data[i];
        if (!std::isfinite(e) && !(std::isnan(e) && std::isnan(a)) && a != e)
          bad = i;
      }
    if (bad < 0)
      continue;
    std::ostringstream msg;
    msg << "output " << o << " differs from the reference: " << cmp.mismatches
        << " elements beyond atol " << atol << " rtol " << rtol
        << ", max abs err " << cmp.maxAbsError;
    if (actual.shape == expected[o].shape)
      msg << "; element " << bad << ": got " << actual.get(bad) << ", expected "
          << expected[o].data[bad];
    msg << "\n" << what.str() << "\nreplay: " << dump(spec, c, sb.args, inputs);
    ::attn::fuzz::fail(msg.str());
  }
  return 0;
}
