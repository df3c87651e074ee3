//===- attn-run.cpp - compile an attn spec for the host and run it --------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// attn-run SPEC.mlir [--entry=F] [--size Nq=128 ...] [--input q=q.npy ...]
//                    [--output out=out.npy ...] [--verify] [--reps=N]
//
// Compiles the entry function of a spec for the host CPU with the
// ExecutionEngine, feeds it seeded random tensors or .npy files, and prints
// compile time, run time (median over repetitions), GFLOP/s and a summary of
// each output. --verify compares every output with the independent f64
// reference and exits non-zero beyond tolerance.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/Passes.h"
#include "attn/Execution/Jit.h"
#include "attn/Execution/ReferenceBridge.h"
#include "attn/IR/AttnOps.h"
#include "attn/Support/Npy.h"
#include "attn/Target/CpuTarget.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include <unistd.h>

using namespace mlir;
using namespace mlir::attn;
namespace cl = llvm::cl;

static cl::OptionCategory category("attn-run options");
static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<spec.mlir>"),
                                      cl::Required, cl::cat(category));
static cl::opt<std::string>
    entryName("entry",
              cl::desc("Function to run (default: the only public "
                       "function with a body)"),
              cl::cat(category));
static cl::list<std::string>
    sizes("size",
          cl::desc("Value of a dynamic size: NAME=N with NAME one of "
                   "B, Hq, Hkv, Nq, Nk, Dqk, Dv, D (repeatable, or "
                   "comma-separated)"),
          cl::CommaSeparated, cl::cat(category));
static cl::list<std::string>
    shapes("shape",
           cl::desc("Shape of an argument: ARG=AxBxC where ARG is a "
                    "name (q, k, v, kv_len, mask, bias, alibi, x, "
                    "kv_source, wq, wk, wv, wo) or an argument "
                    "number"),
           cl::cat(category));
static cl::list<std::string>
    inputs("input", cl::desc("Read an argument from a .npy file: ARG=path"),
           cl::cat(category));
static cl::list<std::string>
    outputs("output",
            cl::desc("Write a result to a .npy file: RES=path, RES "
                     "one of out, lse, result or a result number"),
            cl::cat(category));
static cl::list<std::string> referenceOutputs(
    "reference-output",
    cl::desc("Write the f64 reference's value of a result to a .npy file "
             "(float64): RES=path"),
    cl::cat(category));
static cl::opt<std::string>
    reportFile("report",
               cl::desc("Write a JSON summary (times, GFLOP/s, memory, "
                        "errors) to this file"),
               cl::cat(category));
static cl::list<std::string> inputOutputs(
    "save-input",
    cl::desc("Write an argument (random or loaded) to a .npy file: ARG=path"),
    cl::cat(category));
static cl::opt<unsigned> seed("seed", cl::desc("Seed of the random inputs"),
                              cl::init(1), cl::cat(category));
static cl::opt<bool> verifyOpt("verify",
                               cl::desc("Compare every output with the f64 "
                                        "reference; exit 1 beyond tolerance"),
                               cl::cat(category));
static cl::opt<double> atolOpt("atol", cl::desc("Absolute tolerance override"),
                               cl::init(-1), cl::cat(category));
static cl::opt<double> rtolOpt("rtol", cl::desc("Relative tolerance override"),
                               cl::init(-1), cl::cat(category));
static cl::opt<unsigned> reps("reps",
                              cl::desc("Timed repetitions after one warm-up "
                                       "run"),
                              cl::init(3), cl::cat(category));
static cl::opt<std::string>
    form("form",
         cl::desc("Attention form: naive (materialized scores), fused "
                  "(tiled online softmax) or decode (split-KV)"),
         cl::init("fused"), cl::cat(category));
static cl::opt<int64_t> tileQ("tile-q",
                              cl::desc("Query rows per tile (0 = default)"),
                              cl::init(0), cl::cat(category));
static cl::opt<int64_t> tileK("tile-k", cl::desc("Keys per tile (0 = default)"),
                              cl::init(0), cl::cat(category));
static cl::opt<int64_t> splits("splits",
                               cl::desc("KV chunks of the decode form"),
                               cl::init(4), cl::cat(category));
static cl::opt<bool> tileMap(
    "tile-map",
    cl::desc("Print the fused form's key-tile map for the given sizes: full "
             "('#'), boundary ('+') and skipped ('.') tiles"),
    cl::cat(category));
static cl::opt<bool> countTiles(
    "count-tiles",
    cl::desc("Instrument the fused kernel, count the key tiles it computes "
             "and compare with the tile map"),
    cl::cat(category));
static cl::opt<unsigned> optLevel("O", cl::desc("LLVM optimization level"),
                                  cl::init(3), cl::Prefix, cl::cat(category));
static cl::opt<bool> printValues("print", cl::desc("Print every output value"),
                                 cl::cat(category));

namespace {

/// The role an entry argument plays for the attn op that reads it, and the
/// logical size name of each of its dimensions.
struct ArgRole {
  std::string name = "";
  std::vector<std::string> dimNames;
};

struct Failure {};

} // namespace

/// a + b clamped to the int64 range (windows may be as wide as INT64_MAX).
static int64_t satAdd(int64_t a, int64_t b) {
  int64_t r;
  if (!llvm::AddOverflow(a, b, r))
    return r;
  return b > 0 ? std::numeric_limits<int64_t>::max()
               : std::numeric_limits<int64_t>::min();
}

static int fail(const llvm::Twine &msg) {
  llvm::errs() << "attn-run: error: " << msg << "\n";
  return 1;
}

static Operation *findAttnOp(func::FuncOp fn) {
  Operation *found = nullptr;
  fn.walk([&](Operation *op) {
    if (isa<AttentionOp, ProjectedAttentionOp>(op) && !found)
      found = op;
  });
  return found;
}

/// Names the dimensions of each entry argument from its use by the attn op.
static std::vector<ArgRole> argRoles(func::FuncOp fn, Operation *op) {
  std::vector<ArgRole> roles(fn.getNumArguments());
  auto assign = [&](Value v, StringRef name, std::vector<std::string> dims) {
    auto arg = dyn_cast_or_null<BlockArgument>(v);
    if (!arg || arg.getOwner() != &fn.front())
      return;
    roles[arg.getArgNumber()] = {name.str(), std::move(dims)};
  };
  auto broadcast = [](Value v) {
    std::vector<std::string> all = {"B", "Hq", "Nq", "Nk"};
    int64_t rank = cast<RankedTensorType>(v.getType()).getRank();
    return std::vector<std::string>(all.end() - std::min<int64_t>(rank, 4),
                                    all.end());
  };
  auto modifiers = [&](auto o) {
    assign(o.getKvLen(), "kv_len", {"B"});
    if (o.getMask())
      assign(o.getMask(), "mask", broadcast(o.getMask()));
    if (o.getBias())
      assign(o.getBias(), "bias", broadcast(o.getBias()));
    assign(o.getAlibiSlopes(), "alibi", {"Hq"});
  };
  if (auto a = dyn_cast_or_null<AttentionOp>(op)) {
    auto order = [&](std::vector<std::string> logical) {
      std::vector<std::string> phys(4);
      for (int64_t l = 0; l < 4; ++l)
        phys[a.getPhysicalDim(l)] = logical[l];
      return phys;
    };
    assign(a.getQuery(), "q", order({"B", "Hq", "Nq", "Dqk"}));
    assign(a.getKey(), "k", order({"B", "Hkv", "Nk", "Dqk"}));
    assign(a.getValue(), "v", order({"B", "Hkv", "Nk", "Dv"}));
    modifiers(a);
  } else if (auto p = dyn_cast_or_null<ProjectedAttentionOp>(op)) {
    assign(p.getXq(), "x", {"B", "Nq", "D"});
    if (p.getXkv())
      assign(p.getXkv(), "kv_source", {"B", "Nk", "D"});
    assign(p.getWq(), "wq", {"D", ""});
    assign(p.getWk(), "wk", {"D", ""});
    assign(p.getWv(), "wv", {"D", ""});
    assign(p.getWo(), "wo", {"", "D"});
    modifiers(p);
  }
  return roles;
}

static int findArg(const std::vector<ArgRole> &roles, StringRef key) {
  unsigned n;
  if (!key.getAsInteger(10, n))
    return n < roles.size() ? static_cast<int>(n) : -1;
  for (size_t i = 0; i < roles.size(); ++i)
    if (roles[i].name == key)
      return static_cast<int>(i);
  return -1;
}

static bool parseShape(StringRef text, std::vector<int64_t> &shape) {
  shape.clear();
  if (text.empty())
    return true;
  llvm::SmallVector<StringRef> parts;
  text.split(parts, 'x');
  for (StringRef p : parts) {
    int64_t d;
    if (p.getAsInteger(10, d) || d < 0)
      return false;
    shape.push_back(d);
  }
  return true;
}

static std::string shapeStr(llvm::ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

/// Fills `t` with deterministic pseudo-random data suited to its role.
static void randomFill(HostTensor &t, const ArgRole &role,
                       const llvm::StringMap<int64_t> &known,
                       std::mt19937_64 &rng) {
  int64_t n = t.numElements();
  if (role.name == "kv_len") {
    int64_t nk = known.lookup("Nk");
    std::uniform_int_distribution<int64_t> d(0, std::max<int64_t>(nk, 0));
    for (int64_t i = 0; i < n; ++i)
      t.set(i, static_cast<double>(d(rng)));
    return;
  }
  if (role.name == "alibi") {
    // The usual geometric slopes 2^(-8 (h+1) / Hq).
    for (int64_t i = 0; i < n; ++i)
      t.set(i, std::pow(2.0, -8.0 * (i + 1) / static_cast<double>(n)));
    return;
  }
  if (t.kind == ElementKind::I1) {
    std::bernoulli_distribution d(0.8);
    for (int64_t i = 0; i < n; ++i)
      t.set(i, d(rng) ? 1 : 0);
    return;
  }
  if (t.kind == ElementKind::I32 || t.kind == ElementKind::I64 ||
      t.kind == ElementKind::I8) {
    std::uniform_int_distribution<int64_t> d(0, 8);
    for (int64_t i = 0; i < n; ++i)
      t.set(i, static_cast<double>(d(rng)));
    return;
  }
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  for (int64_t i = 0; i < n; ++i)
    t.set(i, d(rng));
}

static std::string npyDtype(ElementKind kind) {
  switch (kind) {
  case ElementKind::F32:
  case ElementKind::BF16:
    return "<f4";
  case ElementKind::F64:
    return "<f8";
  case ElementKind::F16:
    return "<f2";
  case ElementKind::I1:
    return "|b1";
  case ElementKind::I8:
    return "|u1";
  case ElementKind::I32:
    return "<i4";
  case ElementKind::I64:
    return "<i8";
  }
  return "<f4";
}

namespace {
struct TileCounts {
  int64_t full = 0, boundary = 0, skipped = 0;
};
} // namespace

/// The fused form's key-tile classification for concrete sizes, computed on
/// the host with the rules the lowering states (keyRange / isFullTile in
/// lib/Conversion/AttnToCPU/). Counts are per (batch,
/// K/V head) pair summed over batch; prints one map per distinct kv_len.
static TileCounts tileMapFor(AttentionOp op, int64_t batch, int64_t nq,
                             int64_t nk, const std::vector<int64_t> &kvLens,
                             int64_t tq, int64_t tk, bool print) {
  TileCounts total;
  std::vector<int64_t> printed;
  auto causal = op.getCausal();
  bool bottomRight = causal && *causal == CausalAlign::bottom_right;
  std::optional<int64_t> left = op.getEffectiveWindowLeft();
  std::optional<int64_t> right = op.getEffectiveWindowRight();
  int64_t nqt = (nq + tq - 1) / tq, nkt = (nk + tk - 1) / tk;
  auto floorDiv = [](int64_t a, int64_t b) {
    return a >= 0 ? a / b : -((-a + b - 1) / b);
  };
  auto ceilDiv = [&](int64_t a, int64_t b) { return -floorDiv(-a, b); };
  for (int64_t b = 0; b < batch; ++b) {
    int64_t kvl = kvLens.empty() ? nk : std::clamp<int64_t>(kvLens[b], 0, nk);
    bool show = print && !llvm::is_contained(printed, kvl);
    if (show) {
      printed.push_back(kvl);
      llvm::outs() << "tile map (batch " << b << ", kv_len " << kvl << ", "
                   << nqt << " query tiles x " << nkt << " key tiles of " << tq
                   << "x" << tk << "):\n";
    }
    for (int64_t qt = 0; qt < nqt; ++qt) {
      int64_t q0 = qt * tq, qs = std::min(tq, nq - q0);
      int64_t off = bottomRight ? kvl - nq : 0;
      int64_t pLo = q0 + off, pHi = q0 + qs - 1 + off;
      int64_t lo = 0, hi = kvl;
      if (causal)
        hi = std::min(hi, pHi + 1);
      if (left)
        lo = std::max(lo, satAdd(pLo, -*left));
      if (right)
        hi = std::min(hi, satAdd(satAdd(pHi, *right), 1));
      hi = std::max(hi, lo);
      int64_t ktLo = floorDiv(lo, tk);
      int64_t ktHi = lo < hi ? ceilDiv(hi, tk) : ktLo;
      std::string row;
      for (int64_t kt = 0; kt < nkt; ++kt) {
        if (kt < ktLo || kt >= ktHi) {
          ++total.skipped;
          row += '.';
          continue;
        }
        int64_t k0 = kt * tk, ks = std::min(tk, nk - k0), kEnd = k0 + ks - 1;
        bool full = kEnd < kvl;
        if (causal)
          full &= kEnd <= pLo;
        if (left)
          full &= satAdd(pHi, -k0) <= *left;
        if (right)
          full &= satAdd(kEnd, -pLo) <= *right;
        ++(full ? total.full : total.boundary);
        row += full ? '#' : '+';
      }
      if (show && nkt <= 128)
        llvm::outs() << "  " << row << "\n";
    }
  }
  int64_t all = total.full + total.boundary + total.skipped;
  if (print && all > 0)
    llvm::outs() << llvm::format(
        "tiles: %lld full, %lld boundary, %lld skipped of %lld per K/V head "
        "(%.1f%% skipped)\n",
        (long long)total.full, (long long)total.boundary,
        (long long)total.skipped, (long long)all, 100.0 * total.skipped / all);
  return total;
}

/// FLOPs the contract needs, (2 Dqk + 2 Dv) per structurally allowed
/// (query, key) pair per query head, counted row by row from kv_len, causal
/// and window (as the reference counts them, without the mask's content).
static double structuralFlops(AttentionOp op,
                              const std::vector<HostTensor> &args) {
  auto shapeOf = [&](Value v) -> const std::vector<int64_t> & {
    return args[cast<BlockArgument>(v).getArgNumber()].shape;
  };
  auto dim = [&](Value v, int64_t logical) {
    return shapeOf(v)[op.getPhysicalDim(logical)];
  };
  Value q = op.getQuery(), k = op.getKey(), v = op.getValue();
  if (!isa<BlockArgument>(q) || !isa<BlockArgument>(k) ||
      !isa<BlockArgument>(v))
    return 0;
  int64_t batch = dim(q, 0), hq = dim(q, 1), nq = dim(q, 2), nk = dim(k, 2);
  int64_t dqk = dim(q, 3), dv = dim(v, 3);
  const HostTensor *kvLen = nullptr;
  if (Value kv = op.getKvLen()) {
    if (!isa<BlockArgument>(kv))
      return 0;
    kvLen = &args[cast<BlockArgument>(kv).getArgNumber()];
  }
  auto causal = op.getCausal();
  bool bottomRight = causal && *causal == CausalAlign::bottom_right;
  std::optional<int64_t> left = op.getEffectiveWindowLeft();
  std::optional<int64_t> right = op.getEffectiveWindowRight();
  double pairs = 0;
  for (int64_t b = 0; b < batch; ++b) {
    int64_t kvl = kvLen ? std::clamp<int64_t>(kvLen->getInt(b), 0, nk) : nk;
    for (int64_t i = 0; i < nq; ++i) {
      int64_t p = bottomRight ? i + kvl - nq : i;
      int64_t lo = 0, hi = kvl;
      if (causal)
        hi = std::min(hi, p + 1);
      if (left)
        lo = std::max(lo, satAdd(p, -*left));
      if (right)
        hi = std::min(hi, satAdd(satAdd(p, *right), 1));
      pairs += static_cast<double>(std::max<int64_t>(hi - lo, 0));
    }
  }
  return pairs * static_cast<double>(hq) * (2.0 * dqk + 2.0 * dv);
}

static int runMain(MLIRContext &context) {
  // Parse and verify the spec.
  std::string errorMessage;
  auto file = openInputFile(inputFile, &errorMessage);
  if (!file)
    return fail(errorMessage);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return fail("could not parse " + inputFile);
  if (failed(mlir::verify(*module)))
    return fail(inputFile + " does not verify");

  func::FuncOp fn;
  if (!entryName.empty()) {
    fn = module->lookupSymbol<func::FuncOp>(entryName);
    if (!fn || fn.isExternal())
      return fail("no function @" + entryName + " with a body in " + inputFile);
  } else {
    for (auto f : module->getOps<func::FuncOp>()) {
      if (f.isExternal() || f.isPrivate())
        continue;
      if (fn)
        return fail("several public functions in " + inputFile +
                    "; choose one with --entry");
      fn = f;
    }
    if (!fn)
      return fail("no public function with a body in " + inputFile);
  }
  Operation *attnOp = findAttnOp(fn);
  std::vector<ArgRole> roles = argRoles(fn, attnOp);
  unsigned numArgs = fn.getNumArguments();

  // Sizes and shapes from the command line.
  llvm::StringMap<int64_t> known;
  for (const std::string &s : sizes) {
    auto [key, val] = StringRef(s).split('=');
    int64_t n;
    static const char *names[] = {"B",  "Hq",  "Hkv", "Nq",
                                  "Nk", "Dqk", "Dv",  "D"};
    if (!llvm::is_contained(names, key) || val.getAsInteger(10, n) || n < 0)
      return fail("bad --size '" + s +
                  "': expected NAME=N with NAME one of B, Hq, Hkv, Nq, Nk, "
                  "Dqk, Dv, D and N >= 0");
    known[key] = n;
  }
  std::vector<std::optional<std::vector<int64_t>>> argShapes(numArgs);
  for (const std::string &s : shapes) {
    auto [key, val] = StringRef(s).split('=');
    int a = findArg(roles, key);
    std::vector<int64_t> shape;
    if (a < 0)
      return fail("bad --shape '" + s + "': no argument named '" + key + "'");
    if (!parseShape(val, shape))
      return fail("bad --shape '" + s + "': expected ARG=AxBxC");
    argShapes[a] = shape;
  }

  // .npy inputs fix their argument's shape.
  std::vector<HostTensor> hostArgs(numArgs);
  std::vector<bool> loaded(numArgs, false);
  for (const std::string &s : inputs) {
    auto [key, path] = StringRef(s).split('=');
    int a = findArg(roles, key);
    if (a < 0 || path.empty())
      return fail("bad --input '" + s + "': expected ARG=path.npy with ARG " +
                  "an argument name or number");
    ::attn::npy::Array arr;
    std::string err = ::attn::npy::read(path.str(), arr);
    if (!err.empty())
      return fail("input " + key + ": " + err);
    auto type = cast<RankedTensorType>(fn.getArgumentTypes()[a]);
    ElementKind kind;
    if (!getElementKind(type.getElementType(), kind))
      return fail("argument " + llvm::Twine(a) +
                  " has an unsupported element type");
    std::string want = npyDtype(kind);
    bool ok = arr.dtype == want ||
              (kind == ElementKind::BF16 && arr.dtype == "<f4") ||
              (kind == ElementKind::I1 && arr.dtype == "|u1");
    if (!ok)
      return fail("input " + key + ": " + path + " has dtype '" + arr.dtype +
                  "', the spec takes " + elementName(kind) + " ('" + want +
                  "')");
    if (static_cast<int64_t>(arr.shape.size()) != type.getRank())
      return fail("input " + key + ": " + path + " has shape " +
                  shapeStr(arr.shape) + ", the spec takes rank " +
                  llvm::Twine(type.getRank()));
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (!type.isDynamicDim(d) && type.getDimSize(d) != arr.shape[d])
        return fail("input " + key + ": " + path + " has shape " +
                    shapeStr(arr.shape) + ", the spec takes size " +
                    llvm::Twine(type.getDimSize(d)) + " in dimension " +
                    llvm::Twine(d));
    HostTensor &t = hostArgs[a];
    t.resize(kind, arr.shape);
    if (arr.dtype == want && kind != ElementKind::BF16 &&
        arr.bytes.size() == t.bytes.size()) {
      // The file holds the exact in-memory format: copy it bit for bit
      // (through double, i64 values beyond 2^53 would be rounded).
      std::memcpy(t.bytes.data(), arr.bytes.data(), t.bytes.size());
    } else {
      std::vector<double> values;
      err = ::attn::npy::toDoubles(arr, values);
      if (!err.empty())
        return fail("input " + key + ": " + err);
      for (size_t i = 0; i < values.size(); ++i)
        t.set(static_cast<int64_t>(i), values[i]);
    }
    loaded[a] = true;
    argShapes[a] = arr.shape;
    // Learn the named sizes this file fixes.
    for (size_t d = 0; d < roles[a].dimNames.size(); ++d) {
      const std::string &name = roles[a].dimNames[d];
      if (!name.empty() && arr.shape[d] != 1 && !known.count(name))
        known[name] = arr.shape[d];
    }
  }
  // Learn sizes from static types too.
  for (unsigned a = 0; a < numArgs; ++a) {
    auto type = cast<RankedTensorType>(fn.getArgumentTypes()[a]);
    for (size_t d = 0; d < roles[a].dimNames.size(); ++d) {
      const std::string &name = roles[a].dimNames[d];
      if (!name.empty() && !type.isDynamicDim(d) && type.getDimSize(d) != 1 &&
          !known.count(name))
        known[name] = type.getDimSize(d);
    }
  }

  // Resolve every argument's shape (the random inputs are created once the
  // sizes have been checked, below).
  std::vector<std::vector<int64_t>> resolved(numArgs);
  std::vector<ElementKind> kinds(numArgs);
  for (unsigned a = 0; a < numArgs; ++a) {
    auto type = dyn_cast<RankedTensorType>(fn.getArgumentTypes()[a]);
    ElementKind kind;
    if (!type || !getElementKind(type.getElementType(), kind))
      return fail("argument " + llvm::Twine(a) +
                  " is not a ranked tensor of f32, f16, bf16, f64, i1, i8, "
                  "i32 or i64");
    std::vector<int64_t> shape;
    if (argShapes[a]) {
      shape = *argShapes[a];
      if (static_cast<int64_t>(shape.size()) != type.getRank())
        return fail("--shape for argument " + llvm::Twine(a) + " has rank " +
                    llvm::Twine(shape.size()) + ", the spec takes rank " +
                    llvm::Twine(type.getRank()));
    } else {
      for (int64_t d = 0; d < type.getRank(); ++d) {
        if (!type.isDynamicDim(d)) {
          shape.push_back(type.getDimSize(d));
          continue;
        }
        const std::string *name =
            d < static_cast<int64_t>(roles[a].dimNames.size())
                ? &roles[a].dimNames[d]
                : nullptr;
        if (!name || name->empty())
          return fail("dimension " + llvm::Twine(d) + " of argument " +
                      llvm::Twine(a) +
                      " is dynamic and has no name; give it with --shape " +
                      llvm::Twine(a) + "=AxBx...");
        auto it = known.find(*name);
        if (it == known.end())
          return fail("size " + *name + " is dynamic in the spec; give it " +
                      "with --size " + *name + "=N");
        shape.push_back(it->second);
      }
    }
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (!type.isDynamicDim(d) && type.getDimSize(d) != shape[d])
        return fail("argument " + llvm::Twine(a) + " shape " + shapeStr(shape) +
                    " does not match the spec's type");
    resolved[a] = loaded[a] ? hostArgs[a].shape : shape;
    kinds[a] = kind;
  }

  // Check the concrete sizes against the op's rules before running: a clone
  // with static argument types goes through the verifier.
  if (attnOp) {
    OwningOpRef<func::FuncOp> probe(cast<func::FuncOp>(fn->clone()));
    for (unsigned a = 0; a < numArgs; ++a) {
      auto type = cast<RankedTensorType>(fn.getArgumentTypes()[a]);
      probe->getArgument(a).setType(
          RankedTensorType::get(resolved[a], type.getElementType()));
    }
    Operation *probeOp = findAttnOp(*probe);
    if (failed(mlir::verify(probeOp)))
      return fail("the given sizes are inconsistent with the spec (see the "
                  "diagnostic above)");
  }

  // Refuse sizes this machine cannot hold before allocating anything: the
  // random inputs, and the attention output (which the compiled code
  // allocates without a way to report failure).
  const int64_t memoryBytes =
      static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
  auto bytesOf = [](llvm::ArrayRef<int64_t> shape, int64_t eltBytes) {
    int64_t n = eltBytes;
    for (int64_t d : shape)
      if (llvm::MulOverflow(n, d, n))
        return std::numeric_limits<int64_t>::max();
    return n;
  };
  auto tooLarge = [&](const llvm::Twine &what, int64_t bytes) {
    return fail(what + " would need " + llvm::Twine(bytes) +
                " bytes, more than this machine's " + llvm::Twine(memoryBytes) +
                " bytes of memory");
  };
  for (unsigned a = 0; a < numArgs; ++a)
    if (!loaded[a] && memoryBytes > 0 &&
        bytesOf(resolved[a], elementBytes(kinds[a])) > memoryBytes)
      return tooLarge("argument " + llvm::Twine(a) + " " +
                          shapeStr(resolved[a]),
                      bytesOf(resolved[a], elementBytes(kinds[a])));
  if (auto a = dyn_cast_or_null<AttentionOp>(attnOp); a && memoryBytes > 0) {
    auto size = [&](Value v, int64_t logical) -> int64_t {
      auto arg = dyn_cast<BlockArgument>(v);
      if (!arg || arg.getOwner() != &fn.front())
        return 1;
      return resolved[arg.getArgNumber()][a.getPhysicalDim(logical)];
    };
    ElementKind outKind;
    getElementKind(a.getOut().getType().getElementType(), outKind);
    int64_t outBytes = bytesOf({size(a.getQuery(), 0), size(a.getQuery(), 1),
                                size(a.getQuery(), 2), size(a.getValue(), 3)},
                               elementBytes(outKind));
    if (outBytes > memoryBytes)
      return tooLarge("the output", outBytes);
  }

  // The random inputs.
  std::mt19937_64 rng(seed);
  for (unsigned a = 0; a < numArgs; ++a) {
    if (loaded[a])
      continue;
    hostArgs[a].resize(kinds[a], resolved[a]);
    randomFill(hostArgs[a], roles[a], known, rng);
  }

  // Compile.
  // Tile map of the fused form for these sizes.
  TileCounts predicted;
  auto attention = dyn_cast_or_null<AttentionOp>(attnOp);
  if ((tileMap || countTiles) && !attention)
    return fail("--tile-map and --count-tiles need an attn.attention op");
  if (tileMap || countTiles) {
    int64_t nq = known.lookup("Nq"), nk = known.lookup("Nk"),
            batch = known.count("B") ? known.lookup("B") : 1;
    std::vector<int64_t> kvLens;
    if (Value kv = attention.getKvLen()) {
      const HostTensor &t = hostArgs[cast<BlockArgument>(kv).getArgNumber()];
      for (int64_t i = 0; i < t.numElements(); ++i)
        kvLens.push_back(t.getInt(i));
    }
    TileSizes tiles = chooseTileSizes(attention, getHostCpuTarget(),
                                      form == "decode", tileQ, tileK);
    predicted =
        tileMapFor(attention, batch, nq, nk, kvLens, tiles.q, tiles.k, tileMap);
  }

  JitOptions jitOpts;
  jitOpts.form = form;
  jitOpts.optLevel = optLevel;
  jitOpts.tileQ = tileQ;
  jitOpts.tileK = tileK;
  jitOpts.splits = splits;
  jitOpts.instrumentTiles = countTiles;
  if (countTiles && form != "fused")
    return fail("--count-tiles needs --form=fused");
  auto jit = JitFunction::compile(*module, fn.getSymName(), jitOpts);
  if (!jit)
    return fail("compilation failed: " + llvm::toString(jit.takeError()));
  llvm::outs() << llvm::format("compile: %.3f s (form %s)\n",
                               (*jit)->compileSeconds(), form.c_str());

  // Run.
  std::vector<const HostTensor *> argPtrs;
  for (auto &t : hostArgs)
    argPtrs.push_back(&t);
  std::vector<HostTensor> results;
  std::vector<double> times;
  // Warm-up run (first-call costs), which also measures memory and tiles.
  JitFunction::resetTileCounters();
  int64_t heapBefore = JitFunction::heapCurrentBytes();
  JitFunction::resetHeapPeak();
  if (llvm::Error err = (*jit)->invoke(argPtrs, results))
    return fail("run failed: " + llvm::toString(std::move(err)));
  int64_t peakHeap = JitFunction::heapPeakBytes() - heapBefore;
  int64_t outputBytes = 0;
  for (const HostTensor &t : results)
    outputBytes += static_cast<int64_t>(t.bytes.size());
  auto [visited, boundaryVisited] = JitFunction::tileCounters();
  // The time of a call is that of the compiled function itself (with the
  // allocation of its outputs), not of the copies into host arrays around it.
  double warmCall = (*jit)->lastCallSeconds();
  for (unsigned r = 0; r < unsigned(reps); ++r) {
    if (llvm::Error err = (*jit)->invoke(argPtrs, results))
      return fail("run failed: " + llvm::toString(std::move(err)));
    times.push_back((*jit)->lastCallSeconds());
  }
  if (times.empty())
    times.push_back(warmCall); // --reps=0: the single (warm-up) run
  std::sort(times.begin(), times.end());
  double median = times[times.size() / 2];

  // Reference: always for --verify and --reference-output; otherwise only
  // when it is cheap (the f64 reference runs at well under 1 GFLOP/s).
  std::vector<::attn::ref::Tensor> expected;
  double flops = 0;
  if (attention)
    flops = structuralFlops(attention, hostArgs);
  bool wantReference = verifyOpt || !referenceOutputs.empty() ||
                       (attnOp && (!attention || flops <= 2e9));
  llvm::Error refErr = llvm::Error::success();
  if (!attnOp)
    refErr = llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "the entry function has no attn op");
  else if (wantReference)
    refErr =
        runReference(attnOp, argPtrs, expected, attention ? nullptr : &flops);
  else
    refErr = llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "reference skipped (too expensive; --verify forces it)");
  llvm::outs() << llvm::format("run: %.6f s median of %zu (min %.6f, max "
                               "%.6f)",
                               median, times.size(), times.front(),
                               times.back());
  if (flops > 0 && median > 0)
    llvm::outs() << llvm::format(", %.2f GFLOP/s", flops / median * 1e-9);
  llvm::outs() << "\n";
  llvm::outs() << llvm::format(
      "memory: peak %.3f MiB allocated by the kernel, %.3f MiB of it "
      "outputs, %.3f MiB extra\n",
      peakHeap / 1048576.0, outputBytes / 1048576.0,
      std::max<int64_t>(peakHeap - outputBytes, 0) / 1048576.0);
  if (countTiles) {
    int64_t hkv = attention.getNumKvHeads();
    if (hkv == ShapedType::kDynamic)
      hkv = known.lookup("Hkv");
    int64_t wantVisited = hkv * (predicted.full + predicted.boundary);
    int64_t wantBoundary = hkv * predicted.boundary;
    bool match = visited == wantVisited && boundaryVisited == wantBoundary;
    llvm::outs() << "counted tiles: " << visited << " computed, "
                 << boundaryVisited << " with mask arithmetic; tile map "
                 << "predicts " << wantVisited << " and " << wantBoundary
                 << (match ? " [match]" : " [MISMATCH]") << "\n";
    if (!match)
      return fail("the kernel computed a different set of tiles than the "
                  "tile map predicts");
  }

  // Results: summary, optional files, verification.
  auto fnResults = fn.front().getTerminator()->getOperands();
  bool verified = true;
  bool canVerify = !refErr;
  if (verifyOpt && !canVerify)
    return fail("cannot verify: " + llvm::toString(std::move(refErr)));
  if (refErr)
    llvm::outs() << "reference: " << llvm::toString(std::move(refErr)) << "\n";
  if (canVerify) {
    // The reference knows the attn op's results; the function must return
    // them directly and in order.
    canVerify = fnResults.size() == attnOp->getNumResults();
    for (size_t i = 0; canVerify && i < fnResults.size(); ++i)
      canVerify = fnResults[i] == attnOp->getResult(i);
    if (verifyOpt && !canVerify)
      return fail("cannot verify: the entry function must return the attn "
                  "op's results, in order");
  }
  auto resultName = [&](size_t i) -> std::string {
    if (attnOp && isa<ProjectedAttentionOp>(attnOp))
      return "result";
    if (attnOp && fnResults.size() == attnOp->getNumResults())
      return i == 0 ? "out" : "lse";
    return "result" + std::to_string(i);
  };
  std::vector<double> maxAbsErrors;
  for (size_t i = 0; i < results.size(); ++i) {
    const HostTensor &t = results[i];
    double sum = 0, absSum = 0;
    for (int64_t e = 0, n = t.numElements(); e < n; ++e) {
      double v = t.get(e);
      if (std::isfinite(v)) {
        sum += v;
        absSum += std::fabs(v);
      }
    }
    llvm::outs() << resultName(i) << ": " << elementName(t.kind) << " "
                 << shapeStr(t.shape)
                 << llvm::format(" sum %.6g abs-sum %.6g", sum, absSum);
    if (canVerify) {
      double atol, rtol;
      defaultTolerance(t.kind, atol, rtol);
      if (atolOpt >= 0)
        atol = atolOpt;
      if (rtolOpt >= 0)
        rtol = rtolOpt;
      Comparison c = compare(t, expected[i], atol, rtol);
      maxAbsErrors.push_back(c.maxAbsError);
      llvm::outs() << llvm::format(
          " | vs reference: max abs err %.3g, max rel err %.3g", c.maxAbsError,
          c.maxRelError);
      if (verifyOpt) {
        bool ok = c.mismatches == 0;
        verified &= ok;
        llvm::outs() << (ok ? " [ok" : " [FAIL")
                     << llvm::format(" atol %g rtol %g", atol, rtol);
        if (!ok)
          llvm::outs() << ", " << c.mismatches << " mismatches, first at "
                       << c.firstMismatch << ": got " << t.get(c.firstMismatch)
                       << ", expected " << expected[i].data[c.firstMismatch];
        llvm::outs() << "]";
      }
    }
    llvm::outs() << "\n";
    if (printValues) {
      for (int64_t e = 0, n = t.numElements(); e < n; ++e)
        llvm::outs() << llvm::format("%.6g", t.get(e))
                     << ((e + 1) % 8 == 0 || e + 1 == n ? "\n" : " ");
    }
  }
  auto findResult = [&](StringRef key) {
    unsigned n;
    if (!key.getAsInteger(10, n))
      return n < results.size() ? static_cast<int>(n) : -1;
    for (size_t i = 0; i < results.size(); ++i)
      if (resultName(i) == key)
        return static_cast<int>(i);
    return -1;
  };
  auto writeNpy = [&](StringRef path, const std::vector<double> &values,
                      const std::vector<int64_t> &shape,
                      const std::string &dtype) {
    ::attn::npy::Array arr;
    std::string err = ::attn::npy::fromDoubles(values, shape, dtype, arr);
    if (err.empty())
      err = ::attn::npy::write(path.str(), arr);
    return err;
  };
  for (const std::string &s : outputs) {
    auto [key, path] = StringRef(s).split('=');
    int idx = findResult(key);
    if (idx < 0 || path.empty())
      return fail("bad --output '" + s + "': no result named '" + key + "'");
    const HostTensor &t = results[idx];
    std::vector<double> values(t.numElements());
    for (size_t e = 0; e < values.size(); ++e)
      values[e] = t.get(static_cast<int64_t>(e));
    std::string err = writeNpy(path, values, t.shape, npyDtype(t.kind));
    if (!err.empty())
      return fail("output " + key + ": " + err);
  }
  for (const std::string &s : referenceOutputs) {
    auto [key, path] = StringRef(s).split('=');
    int idx = findResult(key);
    if (idx < 0 || path.empty())
      return fail("bad --reference-output '" + s + "': no result named '" +
                  key + "'");
    if (!canVerify)
      return fail("--reference-output: the reference cannot compute this "
                  "function's results");
    std::string err =
        writeNpy(path, expected[idx].data, expected[idx].shape, "<f8");
    if (!err.empty())
      return fail("reference output " + key + ": " + err);
  }
  for (const std::string &s : inputOutputs) {
    auto [key, path] = StringRef(s).split('=');
    int a = findArg(roles, key);
    if (a < 0 || path.empty())
      return fail("bad --save-input '" + s + "': no argument named '" + key +
                  "'");
    const HostTensor &t = hostArgs[a];
    std::vector<double> values(t.numElements());
    for (size_t e = 0; e < values.size(); ++e)
      values[e] = t.get(static_cast<int64_t>(e));
    std::string err = writeNpy(path, values, t.shape, npyDtype(t.kind));
    if (!err.empty())
      return fail("input " + key + ": " + err);
  }
  if (!reportFile.empty()) {
    std::error_code ec;
    llvm::raw_fd_ostream os(reportFile, ec);
    if (ec)
      return fail("cannot write " + reportFile + ": " + ec.message());
    llvm::json::OStream j(os, 2);
    j.object([&] {
      j.attribute("spec", inputFile.getValue());
      j.attribute("form", form.getValue());
      j.attribute("compile_s", (*jit)->compileSeconds());
      j.attribute("median_s", median);
      j.attribute("min_s", times.front());
      j.attribute("max_s", times.back());
      j.attributeArray("times_s", [&] {
        for (double t : times)
          j.value(t);
      });
      j.attribute("flops", flops);
      j.attribute("gflops", median > 0 ? flops / median * 1e-9 : 0.0);
      j.attribute("peak_heap_bytes", peakHeap);
      j.attribute("output_bytes", outputBytes);
      j.attribute("extra_bytes", std::max<int64_t>(peakHeap - outputBytes, 0));
      j.attribute("verified", verifyOpt ? llvm::json::Value(verified)
                                        : llvm::json::Value(nullptr));
      j.attributeArray("max_abs_error", [&] {
        for (double e : maxAbsErrors)
          j.value(e);
      });
    });
    os << "\n";
  }
  if (verifyOpt && !verified) {
    llvm::errs() << "attn-run: error: outputs differ from the reference "
                    "beyond tolerance\n";
    return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "attn-run: compile an attn spec for the host CPU, run it, and check it "
      "against the f64 reference\n");
  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registry.insert<AttnDialect>();
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  return runMain(context);
}
