//===- SpecBinding.cpp - entry lookup, argument roles, size binding -------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Execution/SpecBinding.h"

#include "attn/IR/AttnOps.h"
#include "attn/Support/Npy.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <optional>

#include <unistd.h>

using namespace mlir;
using namespace mlir::attn;

static llvm::Error makeError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

std::string mlir::attn::shapeStr(llvm::ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string mlir::attn::npyDtype(ElementKind kind) {
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
    return "|i1";
  case ElementKind::F8E4M3:
  case ElementKind::F8E5M2:
    // numpy has no fp8: the bits, as uint8 (ml_dtypes' .view(np.uint8)).
    return "|u1";
  case ElementKind::I32:
    return "<i4";
  case ElementKind::I64:
    return "<i8";
  }
  return "<f4";
}

//===----------------------------------------------------------------------===//
// Introspection
//===----------------------------------------------------------------------===//

llvm::Expected<func::FuncOp>
mlir::attn::findEntryFunction(ModuleOp module, llvm::StringRef name,
                              llvm::StringRef source) {
  if (!name.empty()) {
    auto fn = module.lookupSymbol<func::FuncOp>(name);
    if (!fn || fn.isExternal())
      return makeError("no function @" + name + " with a body in " + source);
    return fn;
  }
  func::FuncOp fn;
  for (auto f : module.getOps<func::FuncOp>()) {
    if (f.isExternal() || f.isPrivate())
      continue;
    if (fn)
      return makeError("several public functions in " + source +
                       "; choose one with --entry");
    fn = f;
  }
  if (!fn)
    return makeError("no public function with a body in " + source);
  return fn;
}

void mlir::attn::eraseOtherFunctions(ModuleOp module, llvm::StringRef entry) {
  // The functions reached through symbol uses, transitively, from the entry
  // and from every top-level op that is not a func.func (globals, llvm.func,
  // constructors' lists: what they name stays).
  SymbolTable table(module);
  llvm::SmallPtrSet<Operation *, 8> live;
  llvm::SmallVector<Operation *> worklist;
  if (Operation *fn = table.lookup(entry))
    worklist.push_back(fn);
  for (Operation &op : module.getBody()->getOperations())
    if (!isa<func::FuncOp>(op))
      worklist.push_back(&op);
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (!live.insert(op).second)
      continue;
    std::optional<SymbolTable::UseRange> uses = SymbolTable::getSymbolUses(op);
    if (!uses)
      return; // Uses it cannot see (unknown ops): erase nothing.
    for (const SymbolTable::SymbolUse &use : *uses)
      if (Operation *callee =
              table.lookup(use.getSymbolRef().getRootReference()))
        worklist.push_back(callee);
  }
  for (auto f : llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
    if (!live.contains(f))
      f.erase();
}

Operation *mlir::attn::findAttnOp(func::FuncOp fn) {
  Operation *found = nullptr;
  fn.walk([&](Operation *op) {
    if (isa<AttentionOp, ProjectedAttentionOp>(op) && !found)
      found = op;
  });
  return found;
}

/// The entry block of an optional region, or null.
static Block *firstBlock(Region &r) { return r.empty() ? nullptr : &r.front(); }

/// Names the dimensions of mod_inputs #`input` from the regions' reads: a
/// dimension indexed directly by the block argument b, h, i or j is B, Hq, Nq
/// or Nk (the first such read wins); the others stay unnamed.
static std::vector<std::string> modInputDimNames(Block *score, Block *mask,
                                                 size_t input, int64_t rank) {
  std::vector<std::string> names(rank);
  static const char *const kIndexNames[] = {"B", "Hq", "Nq", "Nk"};
  for (auto [block, numScalars] :
       {std::pair<Block *, unsigned>{score, 5}, {mask, 4}}) {
    if (!block || block->getNumArguments() <= numScalars + input)
      continue;
    Value tensor = block->getArgument(numScalars + input);
    // In op order (a use list is in no particular order).
    for (Operation &op : *block) {
      auto extract = dyn_cast<tensor::ExtractOp>(op);
      if (!extract || extract.getTensor() != tensor)
        continue;
      for (auto [d, index] : llvm::enumerate(extract.getIndices())) {
        auto arg = dyn_cast<BlockArgument>(index);
        if (d < names.size() && names[d].empty() && arg &&
            arg.getOwner() == block && arg.getArgNumber() < 4)
          names[d] = kIndexNames[arg.getArgNumber()];
      }
    }
  }
  return names;
}

std::vector<ArgRole> mlir::attn::argRoles(func::FuncOp fn, Operation *op) {
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
    assign(o.getKvStart(), "kv_start", {"B"});
    assign(o.getKeyMask(), "key_mask", {"B", "Nk"});
    // A ragged batch's kv_len and kv_start have an entry per sequence (Seqs).
    if constexpr (std::is_same_v<decltype(o), AttentionOp>)
      if (o.isRagged()) {
        assign(o.getKvLen(), "kv_len", {"Seqs"});
        assign(o.getKvStart(), "kv_start", {"Seqs"});
      }
    if (o.getMask())
      assign(o.getMask(), "mask", broadcast(o.getMask()));
    if (o.getBias())
      assign(o.getBias(), "bias", broadcast(o.getBias()));
    assign(o.getAlibiSlopes(), "alibi", {"Hq"});
    assign(o.getSink(), "sink", {"Hq"});
    assign(o.getRuntimeScale(), "scale", {});
    for (auto [k, v] : llvm::enumerate(o.getModInputs()))
      assign(v, "mod_input" + std::to_string(k),
             modInputDimNames(firstBlock(o.getScoreMod()),
                              firstBlock(o.getMaskMod()), k,
                              cast<RankedTensorType>(v.getType()).getRank()));
  };
  if (auto a = dyn_cast_or_null<AttentionOp>(op)) {
    auto order = [&](std::vector<std::string> logical) {
      std::vector<std::string> phys(4);
      for (int64_t l = 0; l < 4; ++l)
        phys[a.getPhysicalDim(l)] = logical[l];
      return phys;
    };
    assign(a.getQuery(), "q", order({"B", "Hq", "Nq", "Dqk"}));
    if (a.isPaged()) {
      // Page pools [Pages, Hkv, PageSize, D] and the [B, MaxPages] table.
      assign(a.getKey(), "k", order({"Pages", "Hkv", "PageSize", "Dqk"}));
      if (!a.getVFromK())
        assign(a.getValue(), "v", order({"Pages", "Hkv", "PageSize", "Dv"}));
      assign(a.getPageTable(), "page_table",
             {a.isRagged() ? "Seqs" : "B", "MaxPages"});
    } else {
      assign(a.getKey(), "k", order({"B", "Hkv", "Nk", "Dqk"}));
      // (Latent attention reads V from k: the argument stays k.)
      if (!a.getVFromK())
        assign(a.getValue(), "v", order({"B", "Hkv", "Nk", "Dv"}));
    }
    // Quantized K/V: scales per token and head (the cache's dims without
    // D) or per page (batch entry) and head.
    for (auto [name, scale] :
         {std::pair<const char *, Value>{"k_scale", a.getKScale()},
          {"v_scale", a.getVScale()}}) {
      if (!scale)
        continue;
      std::vector<std::string> rows =
          a.isPaged() ? order({"Pages", "Hkv", "PageSize", ""})
                      : order({"B", "Hkv", "Nk", ""});
      rows.pop_back();
      if (cast<RankedTensorType>(scale.getType()).getRank() == 2)
        rows = {rows[0], "Hkv"};
      assign(scale, name, rows);
    }
    if (a.isRagged()) {
      // B + 1 offsets of the sequences packed along N (B = 1 in q, k, v).
      assign(a.getCuSeqlensQ(), "cu_seqlens_q", {"Seqs1"});
      assign(a.getCuSeqlensK(), "cu_seqlens_k", {"Seqs1"});
    }
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

std::vector<std::string> mlir::attn::resultDimNames(Value v) {
  auto result = dyn_cast<OpResult>(v);
  if (!result)
    return {};
  Operation *op = result.getOwner();
  if (auto a = dyn_cast<AttentionOp>(op)) {
    if (result.getResultNumber() == 1)
      return {"B", "Hq", "Nq"};
    std::vector<std::string> phys(4);
    std::string logical[4] = {"B", "Hq", "Nq", "Dv"};
    for (int64_t l = 0; l < 4; ++l)
      phys[a.getPhysicalDim(l)] = logical[l];
    return phys;
  }
  if (isa<ProjectedAttentionOp>(op) && result.getResultNumber() == 0)
    return {"B", "Nq", "D"};
  return {};
}

int mlir::attn::findArg(llvm::ArrayRef<ArgRole> roles, llvm::StringRef key) {
  unsigned n;
  if (!key.getAsInteger(10, n))
    return n < roles.size() ? static_cast<int>(n) : -1;
  for (size_t i = 0; i < roles.size(); ++i)
    if (roles[i].name == key)
      return static_cast<int>(i);
  return -1;
}

int SpecInfo::findArg(llvm::StringRef key) const {
  return mlir::attn::findArg(roles, key);
}

llvm::Expected<SpecInfo> mlir::attn::introspectSpec(ModuleOp module,
                                                    llvm::StringRef entry,
                                                    llvm::StringRef source) {
  auto fn = findEntryFunction(module, entry, source);
  if (!fn)
    return fn.takeError();
  SpecInfo info;
  info.entry = *fn;
  info.attnOp = findAttnOp(*fn);
  info.roles = argRoles(*fn, info.attnOp);
  return info;
}

//===----------------------------------------------------------------------===//
// Size binding
//===----------------------------------------------------------------------===//

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

/// Reads `ARG=path.npy` into argument `a` of `binding`, checking its dtype
/// and shape against the spec's type.
static llvm::Error loadInput(func::FuncOp fn, StringRef key, StringRef path,
                             unsigned a, HostTensor &t) {
  ::attn::npy::Array arr;
  std::string err = ::attn::npy::read(path.str(), arr);
  if (!err.empty())
    return makeError("input " + key + ": " + err);
  auto type = dyn_cast<RankedTensorType>(fn.getArgumentTypes()[a]);
  ElementKind kind;
  if (!type || !getElementKind(type.getElementType(), kind))
    return makeError("argument " + llvm::Twine(a) +
                     " has an unsupported element type");
  std::string want = npyDtype(kind);
  // int8 may come as uint8 bits too.
  bool sameBits =
      arr.dtype == want || (kind == ElementKind::I8 && arr.dtype == "|u1");
  bool ok = sameBits || (kind == ElementKind::BF16 && arr.dtype == "<f4") ||
            (kind == ElementKind::I1 && arr.dtype == "|u1");
  if (!ok)
    return makeError("input " + key + ": " + path + " has dtype '" + arr.dtype +
                     "', the spec takes " + elementName(kind) + " ('" + want +
                     "')");
  if (static_cast<int64_t>(arr.shape.size()) != type.getRank())
    return makeError("input " + key + ": " + path + " has shape " +
                     shapeStr(arr.shape) + ", the spec takes rank " +
                     llvm::Twine(type.getRank()));
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (!type.isDynamicDim(d) && type.getDimSize(d) != arr.shape[d])
      return makeError("input " + key + ": " + path + " has shape " +
                       shapeStr(arr.shape) + ", the spec takes size " +
                       llvm::Twine(type.getDimSize(d)) + " in dimension " +
                       llvm::Twine(d));
  t.resize(kind, arr.shape);
  if (sameBits && kind != ElementKind::BF16 &&
      arr.bytes.size() == t.bytes.size()) {
    // The file holds the exact in-memory format: copy it bit for bit
    // (through double, i64 values beyond 2^53 would be rounded).
    std::memcpy(t.bytes.data(), arr.bytes.data(), t.bytes.size());
  } else {
    std::vector<double> values;
    err = ::attn::npy::toDoubles(arr, values);
    if (!err.empty())
      return makeError("input " + key + ": " + err);
    for (size_t i = 0; i < values.size(); ++i)
      t.set(static_cast<int64_t>(i), values[i]);
  }
  return llvm::Error::success();
}

llvm::Expected<SpecBinding>
mlir::attn::bindSizes(const SpecInfo &spec, const BindingOptions &options) {
  func::FuncOp fn = spec.entry;
  const std::vector<ArgRole> &roles = spec.roles;
  unsigned numArgs = fn.getNumArguments();
  SpecBinding binding;
  llvm::StringMap<int64_t> &known = binding.sizes;

  // Sizes and shapes given.
  for (const std::string &s : options.sizes) {
    auto [key, val] = StringRef(s).split('=');
    int64_t n;
    static const char *names[] = {"B",     "Hq",       "Hkv",      "Nq",
                                  "Nk",    "Dqk",      "Dv",       "D",
                                  "Pages", "PageSize", "MaxPages", "Seqs"};
    if (!llvm::is_contained(names, key) || val.getAsInteger(10, n) || n < 0)
      return makeError("bad --size '" + s +
                       "': expected NAME=N with NAME one of B, Hq, Hkv, Nq, "
                       "Nk, Dqk, Dv, D (paged K/V: Pages, PageSize, "
                       "MaxPages; ragged batches: Seqs) and N >= 0");
    known[key] = n;
    if (key == "Seqs")
      known["Seqs1"] = n + 1;
  }
  std::vector<std::optional<std::vector<int64_t>>> argShapes(numArgs);
  for (const std::string &s : options.shapes) {
    auto [key, val] = StringRef(s).split('=');
    int a = findArg(roles, key);
    std::vector<int64_t> shape;
    if (a < 0)
      return makeError("bad --shape '" + s + "': no argument named '" + key +
                       "'");
    if (!parseShape(val, shape))
      return makeError("bad --shape '" + s + "': expected ARG=AxBxC");
    argShapes[a] = shape;
  }

  // .npy inputs fix their argument's shape.
  binding.args.resize(numArgs);
  binding.loaded.assign(numArgs, false);
  for (const std::string &s : options.inputs) {
    auto [key, path] = StringRef(s).split('=');
    int a = findArg(roles, key);
    if (a < 0 || path.empty())
      return makeError("bad --input '" + s +
                       "': expected ARG=path.npy with ARG " +
                       "an argument name or number");
    HostTensor &t = binding.args[a];
    if (llvm::Error err = loadInput(fn, key, path, a, t))
      return std::move(err);
    binding.loaded[a] = true;
    argShapes[a] = t.shape;
    // Learn the named sizes this file fixes.
    for (size_t d = 0; d < roles[a].dimNames.size(); ++d) {
      const std::string &name = roles[a].dimNames[d];
      if (!name.empty() && t.shape[d] != 1 && !known.count(name))
        known[name] = t.shape[d];
    }
  }
  // Learn sizes from static types too.
  for (unsigned a = 0; a < numArgs; ++a) {
    auto type = dyn_cast<RankedTensorType>(fn.getArgumentTypes()[a]);
    if (!type)
      continue; // reported below
    for (size_t d = 0; d < roles[a].dimNames.size(); ++d) {
      const std::string &name = roles[a].dimNames[d];
      if (!name.empty() && !type.isDynamicDim(d) && type.getDimSize(d) != 1 &&
          !known.count(name))
        known[name] = type.getDimSize(d);
    }
  }

  // Paged K/V: Nk = MaxPages * PageSize; a table wide enough for Nk keys; a
  // pool with a page for every table entry unless stated.
  // Ragged batches: Seqs sequences, Seqs + 1 offsets.
  if (!known.count("Seqs") && known.count("Seqs1"))
    known["Seqs"] = known.lookup("Seqs1") - 1;
  if (!known.count("Seqs1") && known.count("Seqs"))
    known["Seqs1"] = known.lookup("Seqs") + 1;
  if (auto a = dyn_cast_or_null<AttentionOp>(spec.attnOp); a && a.isPaged()) {
    if (known.count("PageSize") && known.lookup("PageSize") > 0) {
      int64_t ps = known.lookup("PageSize");
      if (!known.count("MaxPages") && known.count("Nk"))
        known["MaxPages"] = llvm::divideCeil(known.lookup("Nk"), ps);
      if (known.count("MaxPages"))
        known["Nk"] = known.lookup("MaxPages") * ps;
    }
    StringRef rowsName = a.isRagged() ? "Seqs" : "B";
    if (!known.count("Pages") && known.count(rowsName) &&
        known.count("MaxPages"))
      known["Pages"] = known.lookup(rowsName) * known.lookup("MaxPages");
  }

  // A projected self-attention reads its keys from x: Nk is Nq (mask, bias
  // and mod_inputs dimensions may be named Nk).
  if (auto p = dyn_cast_or_null<ProjectedAttentionOp>(spec.attnOp))
    if (!p.getXkv() && !known.count("Nk") && known.count("Nq"))
      known["Nk"] = known.lookup("Nq");

  // Resolve every argument's shape.
  binding.shapes.resize(numArgs);
  binding.kinds.resize(numArgs);
  for (unsigned a = 0; a < numArgs; ++a) {
    auto type = dyn_cast<RankedTensorType>(fn.getArgumentTypes()[a]);
    ElementKind kind;
    if (!type || !getElementKind(type.getElementType(), kind))
      return makeError("argument " + llvm::Twine(a) +
                       " is not a ranked tensor of f32, f16, bf16, f64, i1, "
                       "i8, i32, i64, f8E4M3FN or f8E5M2");
    std::vector<int64_t> shape;
    if (argShapes[a]) {
      shape = *argShapes[a];
      if (static_cast<int64_t>(shape.size()) != type.getRank())
        return makeError("--shape for argument " + llvm::Twine(a) +
                         " has rank " + llvm::Twine(shape.size()) +
                         ", the spec takes rank " +
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
          return makeError("dimension " + llvm::Twine(d) + " of argument " +
                           llvm::Twine(a) +
                           " is dynamic and has no name; give it with "
                           "--shape " +
                           llvm::Twine(a) + "=AxBx...");
        auto it = known.find(*name);
        if (it == known.end())
          return makeError("size " + *name + " is dynamic in the spec; give " +
                           "it with --size " + *name + "=N");
        shape.push_back(it->second);
      }
    }
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (!type.isDynamicDim(d) && type.getDimSize(d) != shape[d])
        return makeError("argument " + llvm::Twine(a) + " shape " +
                         shapeStr(shape) + " does not match the spec's type");
    binding.shapes[a] = binding.loaded[a] ? binding.args[a].shape : shape;
    binding.kinds[a] = kind;
  }

  // Check the concrete sizes against the op's rules: a clone with static
  // argument types goes through the verifier.
  if (spec.attnOp) {
    OwningOpRef<func::FuncOp> probe(cast<func::FuncOp>(fn->clone()));
    for (unsigned a = 0; a < numArgs; ++a) {
      auto type = cast<RankedTensorType>(fn.getArgumentTypes()[a]);
      probe->getArgument(a).setType(
          RankedTensorType::get(binding.shapes[a], type.getElementType()));
    }
    Operation *probeOp = findAttnOp(*probe);
    // The regions take the mod_inputs as block arguments of the same types.
    auto retypeRegions = [](auto op) {
      for (auto [region, numScalars] :
           {std::pair<Region *, unsigned>{&op.getScoreMod(), 5},
            {&op.getMaskMod(), 4}}) {
        Block *block = firstBlock(*region);
        if (!block)
          continue;
        for (auto [k, v] : llvm::enumerate(op.getModInputs()))
          if (numScalars + k < block->getNumArguments())
            block->getArgument(numScalars + k).setType(v.getType());
      }
    };
    if (auto a = dyn_cast<AttentionOp>(probeOp))
      retypeRegions(a);
    else if (auto p = dyn_cast<ProjectedAttentionOp>(probeOp))
      retypeRegions(p);
    if (failed(mlir::verify(probeOp)))
      return makeError("the given sizes are inconsistent with the spec (see "
                       "the diagnostic above)");
  }
  return binding;
}

//===----------------------------------------------------------------------===//
// Memory guard
//===----------------------------------------------------------------------===//

int64_t mlir::attn::physicalMemoryBytes() {
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || pageSize <= 0)
    return 0;
  return static_cast<int64_t>(pages) * pageSize;
}

/// Bytes of a dense tensor, saturated at INT64_MAX.
static int64_t bytesOf(llvm::ArrayRef<int64_t> shape, int64_t eltBytes) {
  int64_t n = eltBytes;
  for (int64_t d : shape)
    if (llvm::MulOverflow(n, d, n))
      return std::numeric_limits<int64_t>::max();
  return n;
}

llvm::Error mlir::attn::checkMemory(const SpecInfo &spec,
                                    const SpecBinding &binding,
                                    int64_t memoryBytes) {
  if (memoryBytes <= 0)
    return llvm::Error::success();
  auto tooLarge = [&](const llvm::Twine &what, int64_t bytes) {
    return makeError(what + " would need " + llvm::Twine(bytes) +
                     " bytes, more than this machine's " +
                     llvm::Twine(memoryBytes) + " bytes of memory");
  };
  for (unsigned a = 0; a < binding.shapes.size(); ++a) {
    if (binding.loaded[a])
      continue;
    int64_t bytes = bytesOf(binding.shapes[a], elementBytes(binding.kinds[a]));
    if (bytes > memoryBytes)
      return tooLarge("argument " + llvm::Twine(a) + " " +
                          shapeStr(binding.shapes[a]),
                      bytes);
  }
  if (auto a = dyn_cast_or_null<AttentionOp>(spec.attnOp)) {
    func::FuncOp fn = spec.entry;
    auto size = [&](Value v, int64_t logical) -> int64_t {
      auto arg = dyn_cast<BlockArgument>(v);
      if (!arg || arg.getOwner() != &fn.front())
        return 1;
      return binding.shapes[arg.getArgNumber()][a.getPhysicalDim(logical)];
    };
    ElementKind outKind;
    getElementKind(a.getOut().getType().getElementType(), outKind);
    int64_t outBytes = bytesOf(
        {size(a.getQuery(), 0), size(a.getQuery(), 1), size(a.getQuery(), 2),
         std::optional<int64_t>(a.getVFromK()).value_or(size(a.getValue(), 3))},
        elementBytes(outKind));
    if (outBytes > memoryBytes)
      return tooLarge("the output", outBytes);
  }
  return llvm::Error::success();
}
