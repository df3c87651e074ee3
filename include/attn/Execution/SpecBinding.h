//===- SpecBinding.h - entry lookup, roles, size binding --------*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// What a driver needs before it can compile and call a spec with concrete
// tensors: the entry function and its attn op, the role and dimension names of
// each argument (`q` is [B, Hq, Nq, Dqk] in its physical layout, ...), the
// binding of every dynamic size from named sizes (`Nq=128`), explicit shapes
// and .npy inputs, a check of the concrete sizes through the op's verifier, a
// guard against sizes the machine cannot hold, and seeded random inputs.
// Shared by attn-run, the C API and the ahead-of-time compiler. Errors come
// back as llvm::Error with the message text attn-run prints after
// "attn-run: error: ".
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_EXECUTION_SPECBINDING_H
#define ATTN_EXECUTION_SPECBINDING_H

#include "attn/Execution/HostTensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace mlir {
namespace attn {

/// The role an entry argument plays for the attn op that reads it (`q`, `k`,
/// `v`, `kv_len`, `mask`, `bias`, `alibi`, `sink`, `scale`, `x`, `kv_source`,
/// `wq`, `wk`, `wv`, `wo`, `mod_input0`, `mod_input1`, ... for the op's
/// mod_inputs in order; empty when the op does not read it directly), and the
/// logical size name of each of its dimensions (B, Hq, Hkv, Nq, Nk, Dqk, Dv, D;
/// empty when the dimension has no name). A mod_inputs dimension is named after
/// the block argument (b, h, i, j -> B, Hq, Nq, Nk) that indexes it directly in
/// a tensor.extract of the regions.
struct ArgRole {
  std::string name = "";
  std::vector<std::string> dimNames;
};

/// An entry function of a spec, its attn op and the roles of its arguments.
struct SpecInfo {
  func::FuncOp entry;
  /// The first attn.attention or attn.projected_attention in `entry`, or
  /// null when it has none.
  Operation *attnOp = nullptr;
  /// One per entry argument.
  std::vector<ArgRole> roles;

  unsigned numArgs() const { return roles.size(); }
  /// The argument named `key` (a role name or an argument number), or -1.
  int findArg(llvm::StringRef key) const;
};

/// The function `name` of `module`, or when `name` is empty its only public
/// function with a body. `source` names the module in error messages.
llvm::Expected<func::FuncOp> findEntryFunction(ModuleOp module,
                                               llvm::StringRef name,
                                               llvm::StringRef source);

/// Erases the functions of `module` that neither `entry` nor a top-level op
/// other than a func.func reaches through symbol uses (calls and the like,
/// transitively): compiling one entry of a file with many specs need not
/// lower the others. Other top-level ops stay; nothing is erased where an
/// op's symbol uses are unknown.
/// Used on the clones the CPU JIT, the GPU runner and the emulator lower.
void eraseOtherFunctions(ModuleOp module, llvm::StringRef entry);

/// The first attn.attention or attn.projected_attention op in `fn`, or null.
Operation *findAttnOp(func::FuncOp fn);

/// Names the dimensions of each argument of `fn` from its use by `attnOp`
/// (which may be null: no roles).
std::vector<ArgRole> argRoles(func::FuncOp fn, Operation *attnOp);

/// The dimension names of `v` when it is a result of an attn.attention (out:
/// q's B, Hq, Nq and Dv in the op's layout; lse: B, Hq, Nq) or of an
/// attn.projected_attention (B, Nq, D), the names argRoles gives the inputs
/// they come from; empty otherwise.
std::vector<std::string> resultDimNames(Value v);

/// The argument named `key` (a role name or an argument number), or -1.
int findArg(llvm::ArrayRef<ArgRole> roles, llvm::StringRef key);

/// Entry lookup (findEntryFunction), its attn op and argument roles.
llvm::Expected<SpecInfo> introspectSpec(ModuleOp module, llvm::StringRef entry,
                                        llvm::StringRef source);

/// The sizes and inputs of one run, in attn-run's option syntax.
struct BindingOptions {
  /// `NAME=N` with NAME one of B, Hq, Hkv, Nq, Nk, Dqk, Dv, D (--size).
  std::vector<std::string> sizes;
  /// `ARG=AxBxC` with ARG an argument name or number (--shape).
  std::vector<std::string> shapes;
  /// `ARG=path.npy`: the argument's value, which also fixes its shape
  /// (--input).
  std::vector<std::string> inputs;
};

/// Concrete shapes for every argument of a spec's entry function.
struct SpecBinding {
  /// Named sizes: given, learned from .npy inputs and from static types.
  llvm::StringMap<int64_t> sizes;
  /// Per argument: its concrete shape and element kind.
  std::vector<std::vector<int64_t>> shapes;
  std::vector<ElementKind> kinds;
  /// Per argument: its value. Arguments read from .npy files are filled in
  /// (`loaded`); the others stay empty until fillRandomInputs.
  std::vector<HostTensor> args;
  std::vector<bool> loaded;

  /// The named size `name`, or `otherwise` when it is unknown.
  int64_t size(llvm::StringRef name, int64_t otherwise = 0) const {
    auto it = sizes.find(name);
    return it == sizes.end() ? otherwise : it->second;
  }
};

/// Paged K/V: a consistent page table [B, MaxPages] and kv_len [B] for a
/// pool of `pages` pages of `pageSize` tokens: random lengths with edge cases
/// (empty sequences, lengths on a page boundary, the whole table, partial
/// last pages) trimmed so that every sequence's pages fit in the pool,
/// distinct pages in shuffled order, -1 in the entries past a sequence's
/// last page (never read). A given table keeps its entries (lengths read only
/// its leading valid ones); given lengths are kept. `newTokens` (a paged
/// ragged batch: each sequence's query rows) makes most lengths at least
/// the sequence's new tokens, as in chunked prefill.
void randomPaging(HostTensor &table, HostTensor &kvLen, bool tableGiven,
                  bool kvLenGiven, int64_t pages, int64_t pageSize,
                  std::mt19937_64 &rng, llvm::ArrayRef<int64_t> newTokens = {});

/// A ragged batch's kv_len over packed keys: per sequence mostly its whole
/// length (`cuK[s + 1] - cuK[s]`), sometimes fewer keys, none, or more than
/// it has (which reads all of them).
void randomRaggedKvLen(HostTensor &kvLen, const HostTensor &cuK,
                       std::mt19937_64 &rng);

/// Ragged batches: B + 1 random non-decreasing offsets into `tokens` packed
/// tokens (some sequences empty; usually from 0 to `tokens`).
void randomOffsets(HostTensor &cu, int64_t tokens, std::mt19937_64 &rng);

/// Binds every argument of `spec`'s entry to a concrete shape: explicit
/// shapes and .npy inputs first, then named sizes (given ones win over those
/// learned from files and static types). Then checks the concrete sizes
/// against the op's rules by running the verifier on a clone of the entry
/// with static argument types (its diagnostics go to the context's handler).
llvm::Expected<SpecBinding> bindSizes(const SpecInfo &spec,
                                      const BindingOptions &options);

/// Bytes of physical memory of this machine (0 when unknown).
int64_t physicalMemoryBytes();

/// Refuses a binding whose random inputs or attention output would need more
/// than `memoryBytes` (no limit when 0): the compiled code allocates its
/// output without a way to report failure.
llvm::Error checkMemory(const SpecInfo &spec, const SpecBinding &binding,
                        int64_t memoryBytes = physicalMemoryBytes());

/// Fills `t` with deterministic pseudo-random data suited to its role:
/// kv_len in [0, Nk], ALiBi's geometric slopes, 80% true masks, small
/// integers, or uniform [-1, 1). Integer mod_inputs: a rank-1 tensor of
/// length Nq or Nk gets sorted segment ids (1 to 8 documents of random
/// lengths, for document masks), others values in [0, their smallest
/// dimension) (usable as indices); float and i1 mod_inputs are filled like
/// other tensors of their type.
void randomFill(HostTensor &t, const ArgRole &role,
                const llvm::StringMap<int64_t> &sizes, std::mt19937_64 &rng);

/// Allocates and fills every argument not loaded from a file, in argument
/// order from one generator seeded with `seed`.
void fillRandomInputs(const SpecInfo &spec, SpecBinding &binding,
                      uint64_t seed);

/// The .npy dtype of a HostTensor element kind ("<f4", "|b1", ...; bf16 is
/// stored as f32).
std::string npyDtype(ElementKind kind);

/// "[A, B, C]".
std::string shapeStr(llvm::ArrayRef<int64_t> shape);

} // namespace attn
} // namespace mlir

#endif // ATTN_EXECUTION_SPECBINDING_H
