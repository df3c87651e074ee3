//===- CpuTarget.h - what code generation knows of a CPU --------*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// The target description the CPU code generation reads instead of assuming an
// instruction set: vector width, register count, FMA units, cache sizes, and
// the features that change which code is fast (AVX2, AVX-512F, AVX-512 BF16 /
// FP16, AMX; NEON and SVE for AArch64). It comes from the host
// (llvm::sys::getHostCPUName / getHostCPUFeatures) or from an LLVM CPU name
// and feature string (`target-cpu`, `target-features` of the CPU pipeline),
// so a spec can be compiled for another CPU than the one running the
// compiler. Features are read from LLVM's own subtarget tables (a CPU name
// implies its features), never from a hand-written list of CPUs.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TARGET_CPUTARGET_H
#define ATTN_TARGET_CPUTARGET_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlir {
namespace attn {

/// What code generation needs to know of one CPU.
struct CpuTarget {
  /// LLVM target triple, CPU name and feature string. `features` is what the
  /// generated functions are stamped with (`+avx2,-avx512f,...`): for the
  /// host, every feature the host reports (so a VM that hides AVX-512 from a
  /// CPU model that has it is honored); for a named CPU, the user's string
  /// (the CPU name implies the rest).
  std::string triple, cpu, features;
  /// Whether this describes the machine running the compiler.
  bool isHost = false;

  bool fma = false, avx2 = false, avx512f = false, avx512bf16 = false,
       avx512fp16 = false, amx = false, neon = false, sve = false;
  /// AMX tile products of bf16 (`tdpbf16ps`; `amx` is the tile state).
  bool amxBf16 = false;
  /// Whether an AVX-512 BF16 dot product (`vdpbf16ps` zmm: 32 bf16
  /// multiply-adds) issues as often as an f32 FMA (`vfmadd231ps` zmm: 16),
  /// so that bf16 products on it take half the f32 kernels' time. A fact
  /// of the microarchitecture, not of the feature set, so it comes from the
  /// CPU name: AMD Zen 4 (`znver4`; bench/isa_rates measured 0.273 ns for
  /// either instruction on one core). Intel's CPUs issue it at half the
  /// FMA's rate (their fast bf16 route is AMX), and LLVM's scheduling model
  /// (reciprocal throughput 3.0 for znver4) cannot tell them apart. Zen 5 is
  /// not measured and not included.
  bool bf16DotAtFmaRate = false;

  /// Width in bits of the vector registers the f32 code uses, and how many
  /// there are (16 ymm on AVX2, 32 zmm on AVX-512, 32 q on NEON).
  unsigned vectorBits = 128;
  unsigned vectorRegisters = 16;
  /// Vector FMA instructions issued per cycle (0 when the CPU has no FMA).
  unsigned fmaPerCycle = 0;

  /// Data cache sizes in bytes where known (the host's, from the OS).
  std::optional<int64_t> l1dBytes, l2Bytes, l3Bytes;
  /// Cores the kernels may run on: the host's, or 0 when unknown.
  unsigned cores = 0;

  /// f32 lanes of one vector register.
  int64_t f32Lanes() const { return vectorBits / 32; }
  /// A short name of the instruction set the f32 code uses: "AVX-512",
  /// "AVX2+FMA", "AVX", "SSE2", "NEON", or "scalar".
  std::string isaName() const;
  /// One line: CPU, ISA, vector registers, caches.
  std::string describe() const;
};

/// Whether bf16 Q K^T and P V take AVX-512 BF16 dot products (`vdpbf16ps`)
/// instead of f32 FMAs on converted tiles: as the target description says
/// (Auto: where `bf16DotAtFmaRate`), or as asked (On, Off). Targets without
/// AVX-512 BF16 never take them.
enum class Bf16DotProducts { Auto, On, Off };

/// The values of an option of type Bf16DotProducts (`llvm::cl::values`):
/// `auto`, `true` (also `1`, `on`) and `false` (also `0`, `off`). The pass
/// options and the tools' `--bf16-dot-products` accept the same words.
#define ATTN_BF16_DOT_PRODUCTS_VALUES                                          \
  clEnumValN(::mlir::attn::Bf16DotProducts::Auto, "auto",                      \
             "where the target runs them faster"),                             \
      clEnumValN(::mlir::attn::Bf16DotProducts::On, "true",                    \
                 "wherever the target has them"),                              \
      clEnumValN(::mlir::attn::Bf16DotProducts::On, "1", "same as true"),      \
      clEnumValN(::mlir::attn::Bf16DotProducts::On, "on", "same as true"),     \
      clEnumValN(::mlir::attn::Bf16DotProducts::Off, "false", "never"),        \
      clEnumValN(::mlir::attn::Bf16DotProducts::Off, "0", "same as false"),    \
      clEnumValN(::mlir::attn::Bf16DotProducts::Off, "off", "same as false")

/// Whether code for `target` takes the dot products under `choice`.
bool usesBf16DotProducts(const CpuTarget &target, Bf16DotProducts choice);

/// The machine running the compiler.
CpuTarget getHostCpuTarget();

/// A CPU by LLVM name (`znver3`, `haswell`, `sapphirerapids`, `x86-64-v3`;
/// empty or "host" for this machine) with extra features (`+avx2,-fma`)
/// applied over the CPU's own, for `triple` (empty: this machine's; it is
/// normalized, so `aarch64-linux-gnu` works). For another architecture than
/// this machine's, an empty CPU means that architecture's `generic`.
/// Fails with a message for an unknown triple, CPU name or feature.
llvm::Expected<CpuTarget> resolveCpuTarget(llvm::StringRef cpu,
                                           llvm::StringRef features = "",
                                           llvm::StringRef triple = "");

/// The features `target` uses that this machine lacks: code compiled for it
/// would stop with an illegal instruction here ("architecture aarch64" for
/// another architecture, "operating system windows" for another operating
/// system of this one). Empty when it can run.
llvm::SmallVector<std::string> featuresMissingOnHost(const CpuTarget &target);

} // namespace attn
} // namespace mlir

#endif // ATTN_TARGET_CPUTARGET_H
