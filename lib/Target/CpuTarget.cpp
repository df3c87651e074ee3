//===- CpuTarget.cpp - what code generation knows of a CPU ----------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Target/CpuTarget.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/TargetParser/X86TargetParser.h"

#include <memory>
#include <mutex>
#include <thread>

#include <unistd.h>

using namespace mlir::attn;

static void initializeTargets() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargetMCs();
  });
}

/// The subtarget LLVM builds for (triple, cpu, features), or an error.
static llvm::Expected<std::unique_ptr<llvm::MCSubtargetInfo>>
makeSubtarget(const llvm::Triple &triple, llvm::StringRef cpu,
              llvm::StringRef features) {
  initializeTargets();
  std::string err;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, err);
  if (!target)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "target triple '" + triple.str() +
                                       "': " + err);
  std::unique_ptr<llvm::MCSubtargetInfo> sti(
      target->createMCSubtargetInfo(triple, cpu, features));
  if (!sti)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "no subtarget information for '" +
                                       triple.str() + "'");
  return std::move(sti);
}

/// Fills the feature flags and register file of `t` from LLVM's subtarget.
static void describeFrom(CpuTarget &t, const llvm::MCSubtargetInfo &sti,
                         const llvm::Triple &triple) {
  auto has = [&](const char *f) {
    return sti.checkFeatures(std::string("+") + f);
  };
  if (triple.isX86()) {
    t.fma = has("fma");
    t.avx2 = has("avx2");
    t.avx512f = has("avx512f");
    t.avx512bf16 = has("avx512bf16");
    t.avx512fp16 = has("avx512fp16");
    t.amx = has("amx-tile");
    t.amxBf16 = t.amx && has("amx-bf16");
    if (t.avx512f) {
      t.vectorBits = 512;
      t.vectorRegisters = 32;
    } else if (has("avx")) {
      t.vectorBits = 256;
      t.vectorRegisters = 16;
    } else {
      t.vectorBits = 128; // SSE2 is part of x86-64
      t.vectorRegisters = 16;
    }
    t.fmaPerCycle = t.fma ? 2 : 0;
    t.bf16DotAtFmaRate = t.avx512bf16 && sti.getCPU() == "znver4";
  } else if (triple.isAArch64()) {
    t.neon = has("neon");
    t.sve = has("sve");
    t.fma = t.neon;
    t.vectorBits = 128;
    t.vectorRegisters = 32;
    t.fmaPerCycle = t.neon ? 2 : 0;
  } else {
    // Anything else: 128-bit vectors that LLVM legalizes to whatever the
    // target has (scalar code at worst), and a small register tile.
    t.vectorBits = 128;
    t.vectorRegisters = 16;
  }
}

bool mlir::attn::usesBf16DotProducts(const CpuTarget &target,
                                     Bf16DotProducts choice) {
  if (!target.avx512bf16 || target.vectorBits != 512)
    return false;
  return choice == Bf16DotProducts::On ||
         (choice == Bf16DotProducts::Auto && target.bf16DotAtFmaRate);
}

std::string CpuTarget::isaName() const {
  if (avx512f)
    return "AVX-512";
  if (avx2 && fma)
    return "AVX2+FMA";
  if (vectorBits == 256)
    return "AVX";
  if (neon)
    return sve ? "NEON+SVE" : "NEON";
  if (llvm::Triple(triple).isX86())
    return "SSE2";
  return "scalar";
}

std::string CpuTarget::describe() const {
  std::string s = (cpu.empty() ? std::string("generic") : cpu) + " (" +
                  isaName() + ", " + std::to_string(vectorRegisters) + " x " +
                  std::to_string(vectorBits) + "-bit vector registers";
  auto kib = [](int64_t b) { return std::to_string(b / 1024) + " KiB"; };
  if (l1dBytes)
    s += ", L1d " + kib(*l1dBytes);
  if (l2Bytes)
    s += ", L2 " + kib(*l2Bytes);
  if (cores)
    s += ", " + std::to_string(cores) + " cores";
  return s + (isHost ? ", host)" : ")");
}

/// A cache size from sysconf, when the OS reports one.
static std::optional<int64_t> cacheSize(int name) {
  long v = sysconf(name);
  if (v <= 0)
    return std::nullopt;
  return static_cast<int64_t>(v);
}

CpuTarget mlir::attn::getHostCpuTarget() {
  CpuTarget t;
  t.isHost = true;
  t.triple = llvm::sys::getProcessTriple();
  t.cpu = llvm::sys::getHostCPUName().str();
  llvm::SmallVector<std::string> feats;
  for (const auto &f : llvm::sys::getHostCPUFeatures())
    feats.push_back((f.second ? "+" : "-") + f.first().str());
  llvm::sort(feats);
  t.features = llvm::join(feats, ",");
  llvm::Triple triple(t.triple);
  if (auto sti = makeSubtarget(triple, t.cpu, t.features))
    describeFrom(t, **sti, triple);
  else
    llvm::consumeError(sti.takeError());
#ifdef _SC_LEVEL1_DCACHE_SIZE
  t.l1dBytes = cacheSize(_SC_LEVEL1_DCACHE_SIZE);
  t.l2Bytes = cacheSize(_SC_LEVEL2_CACHE_SIZE);
  t.l3Bytes = cacheSize(_SC_LEVEL3_CACHE_SIZE);
#endif
  t.cores = std::thread::hardware_concurrency();
  return t;
}

llvm::Expected<CpuTarget> mlir::attn::resolveCpuTarget(llvm::StringRef cpu,
                                                       llvm::StringRef features,
                                                       llvm::StringRef triple) {
  if ((cpu.empty() || cpu == "host") && features.empty() &&
      (triple.empty() ||
       llvm::Triple::normalize(triple) ==
           llvm::Triple::normalize(llvm::sys::getProcessTriple())))
    return getHostCpuTarget();
  // The feature list as given, without blanks ("+avx2, -fma").
  llvm::SmallVector<std::string> featureList;
  for (llvm::StringRef f : llvm::split(features, ','))
    if (!f.trim().empty())
      featureList.push_back(f.trim().str());
  std::string trimmed = llvm::join(featureList, ",");
  features = trimmed;
  CpuTarget t;
  // Another architecture than this machine's: its generic CPU unless named
  // (the host's CPU and features mean nothing there).
  bool foreign = !triple.empty() &&
                 llvm::Triple(triple).getArch() !=
                     llvm::Triple(llvm::sys::getProcessTriple()).getArch();
  if (foreign && cpu == "host")
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "target CPU 'host' is this machine's CPU, not one for " +
            llvm::Triple::normalize(triple) +
            ": name a CPU of that architecture, or leave the CPU out for its "
            "generic CPU");
  if (foreign && cpu.empty())
    cpu = "generic";
  if (cpu.empty() || cpu == "host") {
    // The host with features changed on top of its own.
    t = getHostCpuTarget();
    t.isHost = false;
    if (!features.empty())
      t.features += "," + features.str();
  } else {
    t.cpu = cpu.str();
    t.features = features.str();
    t.triple = llvm::sys::getProcessTriple();
  }
  if (!triple.empty())
    t.triple = llvm::Triple::normalize(triple); // aarch64-unknown-linux-gnu
  for (llvm::StringRef f : llvm::split(features, ',')) {
    f = f.trim();
    if (f.empty())
      continue;
    if (f.size() < 2 || (f[0] != '+' && f[0] != '-'))
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "target feature '" + f.str() +
              "' must start with '+' or '-' (for example +avx2,-avx512f)");
  }
  llvm::Triple tt(t.triple);
  // Check the names on a generic subtarget first: LLVM prints a warning of
  // its own for an unknown CPU or feature.
  auto generic = makeSubtarget(tt, "", "");
  if (!generic)
    return generic.takeError();
  if (!(*generic)->isCPUStringValid(t.cpu))
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "unknown target CPU '" + t.cpu + "' for " + tt.str() +
            (tt.isAArch64() ? " (LLVM names such as neoverse-n1, neoverse-v1, "
                              "neoverse-v2, apple-m1, generic)"
                            : " (LLVM names such as haswell, znver3, znver4, "
                              "skylake-avx512, sapphirerapids, x86-64-v3)"));
  for (llvm::StringRef f : llvm::split(features, ',')) {
    f = f.trim();
    if (f.empty())
      continue;
    if (!llvm::any_of((*generic)->getAllProcessorFeatures(),
                      [&](const llvm::SubtargetFeatureKV &kv) {
                        return f.drop_front() == kv.Key;
                      }))
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "unknown target feature '" + f.str() +
                                         "' for " + tt.str());
  }
  auto sti = makeSubtarget(tt, t.cpu, t.features);
  if (!sti)
    return sti.takeError();
  describeFrom(t, **sti, tt);
  // A named CPU says nothing of the machine the code will run on: no core
  // count and no cache sizes (the host with changed features keeps its own).
  return t;
}

/// Whether `name` is an instruction-set extension (as opposed to a tuning
/// flag such as `slow-3ops-lea`) that generated code may use; for targets
/// other than x86, whose CPUs' features LLVM lists without tuning flags.
static bool isInstructionSetFeature(llvm::StringRef name) {
  static const char *prefixes[] = {"neon",     "sve",  "fp-armv8",
                                   "fullfp16", "bf16", "dotprod",
                                   "i8mm",     "sme",  "crypto"};
  return llvm::any_of(prefixes,
                      [&](const char *p) { return name.starts_with(p); });
}

/// Applies a `+a,-b` list over `enabled`.
static void applyFeatures(llvm::StringSet<> &enabled, llvm::StringRef list) {
  for (llvm::StringRef f : llvm::split(list, ',')) {
    f = f.trim();
    if (f.size() < 2)
      continue;
    if (f[0] == '+')
      enabled.insert(f.drop_front());
    else if (f[0] == '-')
      enabled.erase(f.drop_front());
  }
}

llvm::SmallVector<std::string>
mlir::attn::featuresMissingOnHost(const CpuTarget &target) {
  llvm::SmallVector<std::string> missing;
  if (target.isHost)
    return missing;
  CpuTarget host = getHostCpuTarget();
  llvm::Triple tt(target.triple), ht(host.triple);
  if (tt.getArch() != ht.getArch()) {
    missing.push_back("architecture " + tt.getArchName().str());
    return missing;
  }
  // The same instructions for another operating system (another calling
  // convention, object format and C library) do not run here either; a
  // triple that names none ("x86_64") means this one, and Darwin's names
  // (darwin, macosx) are one system.
  bool sameOS = tt.getOS() == llvm::Triple::UnknownOS ||
                tt.getOS() == ht.getOS() ||
                (tt.isOSDarwin() && ht.isOSDarwin());
  if (!sameOS || (tt.getOS() != llvm::Triple::UnknownOS &&
                  tt.getObjectFormat() != ht.getObjectFormat())) {
    missing.push_back("operating system " + tt.getOSName().str());
    return missing;
  }
  if (tt.isX86()) {
    // The instruction sets of the target (its CPU's, from LLVM's x86 CPU
    // table, which has no tuning flags, then its feature list) against the
    // host's (every feature the host reports).
    llvm::StringSet<> want;
    // A target made from the host (its features changed) lists every host
    // feature itself; a named CPU implies its own.
    bool fromHost = llvm::StringRef(target.features).starts_with(host.features);
    if (!target.cpu.empty() && !fromHost) {
      llvm::SmallVector<llvm::StringRef> cpuFeatures;
      llvm::X86::getFeaturesForCPU(target.cpu, cpuFeatures);
      for (llvm::StringRef f : cpuFeatures)
        want.insert(f);
    }
    applyFeatures(want, target.features);
    // What the host reports as absent ("-avx512f"); features it does not
    // report at all (x87, cmov, ...) belong to every x86-64 CPU.
    llvm::StringSet<> absent;
    for (llvm::StringRef f : llvm::split(host.features, ','))
      if (f.starts_with("-"))
        absent.insert(f.drop_front());
    for (const auto &f : want)
      if (absent.contains(f.getKey()))
        missing.push_back(f.getKey().str());
    llvm::sort(missing);
    return missing;
  }
  auto want = makeSubtarget(tt, target.cpu, target.features);
  auto have = makeSubtarget(ht, host.cpu, host.features);
  if (!want || !have) {
    llvm::consumeError(want.takeError());
    llvm::consumeError(have.takeError());
    missing.push_back("unknown subtarget");
    return missing;
  }
  for (const llvm::SubtargetFeatureKV &kv :
       (*want)->getAllProcessorFeatures()) {
    llvm::StringRef key = kv.Key;
    if (!isInstructionSetFeature(key))
      continue;
    std::string plus = "+" + key.str();
    if ((*want)->checkFeatures(plus) && !(*have)->checkFeatures(plus))
      missing.push_back(key.str());
  }
  return missing;
}
