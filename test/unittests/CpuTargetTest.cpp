//===- CpuTargetTest.cpp - tests of the CPU target description ------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// resolveCpuTarget and featuresMissingOnHost (attn/Target/CpuTarget.h), the
// checks the JIT makes before generating code for a chosen CPU, on CPUs whose
// features LLVM's tables fix whatever machine runs the test.
//
//===----------------------------------------------------------------------===//

#include "attn/Target/CpuTarget.h"

#include "llvm/TargetParser/Triple.h"

#include <gtest/gtest.h>

#include <string>

using namespace mlir::attn;

namespace {

constexpr const char *kX86 = "x86_64-unknown-linux-gnu";

CpuTarget resolve(const char *cpu, const char *features = "") {
  auto t = resolveCpuTarget(cpu, features, kX86);
  EXPECT_TRUE(static_cast<bool>(t)) << llvm::toString(t.takeError());
  return t ? *t : CpuTarget();
}

std::string errorOf(const char *cpu, const char *features) {
  auto t = resolveCpuTarget(cpu, features, kX86);
  if (t)
    return "";
  return llvm::toString(t.takeError());
}

TEST(CpuTargetTest, Haswell) {
  CpuTarget t = resolve("haswell");
  EXPECT_EQ(t.cpu, "haswell");
  EXPECT_FALSE(t.isHost);
  EXPECT_TRUE(t.avx2);
  EXPECT_TRUE(t.fma);
  EXPECT_FALSE(t.avx512f);
  EXPECT_EQ(t.vectorBits, 256u);
  EXPECT_EQ(t.vectorRegisters, 16u);
  EXPECT_EQ(t.isaName(), "AVX2+FMA");
}

TEST(CpuTargetTest, Znver4) {
  CpuTarget t = resolve("znver4");
  EXPECT_TRUE(t.avx512f);
  EXPECT_EQ(t.vectorBits, 512u);
  EXPECT_EQ(t.vectorRegisters, 32u);
  EXPECT_EQ(t.isaName(), "AVX-512");
  // One vdpbf16ps issues as often as one f32 FMA on Zen 4: bf16 takes the
  // dot products by default.
  EXPECT_TRUE(t.avx512bf16);
  EXPECT_TRUE(t.bf16DotAtFmaRate);
  EXPECT_TRUE(usesBf16DotProducts(t, Bf16DotProducts::Auto));
  EXPECT_FALSE(usesBf16DotProducts(t, Bf16DotProducts::Off));
  // Without the feature, never, even when asked for.
  CpuTarget noBf16 = resolve("znver4", "-avx512bf16");
  EXPECT_FALSE(noBf16.bf16DotAtFmaRate);
  EXPECT_FALSE(usesBf16DotProducts(noBf16, Bf16DotProducts::On));
}

/// Intel's AVX-512 BF16 issues a dot product at half the FMA's rate: the
/// dot products only when asked for.
TEST(CpuTargetTest, SapphireRapidsDotProductsOnlyWhenAsked) {
  CpuTarget t = resolve("sapphirerapids");
  EXPECT_TRUE(t.avx512bf16);
  EXPECT_FALSE(t.bf16DotAtFmaRate);
  EXPECT_FALSE(usesBf16DotProducts(t, Bf16DotProducts::Auto));
  EXPECT_TRUE(usesBf16DotProducts(t, Bf16DotProducts::On));
  // Nor on a CPU without the feature.
  EXPECT_FALSE(usesBf16DotProducts(resolve("haswell"), Bf16DotProducts::On));
}

TEST(CpuTargetTest, BaselineX86_64) {
  CpuTarget t = resolve("x86-64");
  EXPECT_FALSE(t.avx2);
  EXPECT_FALSE(t.fma);
  EXPECT_EQ(t.vectorBits, 128u);
  EXPECT_EQ(t.isaName(), "SSE2");
}

TEST(CpuTargetTest, FeaturesOverTheCpu) {
  CpuTarget t = resolve("haswell", "-avx2,-fma");
  EXPECT_FALSE(t.avx2);
  EXPECT_FALSE(t.fma);
  EXPECT_EQ(t.features, "-avx2,-fma");
  EXPECT_EQ(t.isaName(), "AVX");
}

/// The AArch64 description, from LLVM's AArch64 tables: NEON's 32 x 128-bit
/// registers on every CPU, SVE where the CPU has it; the triple normalized;
/// an empty CPU the architecture's generic one, never the host's.
TEST(CpuTargetTest, AArch64) {
  auto n1 = resolveCpuTarget("neoverse-n1", "", "aarch64-linux-gnu");
  ASSERT_TRUE(static_cast<bool>(n1)) << llvm::toString(n1.takeError());
  EXPECT_EQ(n1->triple, "aarch64-unknown-linux-gnu");
  EXPECT_TRUE(n1->neon);
  EXPECT_FALSE(n1->sve);
  EXPECT_FALSE(n1->avx2);
  EXPECT_EQ(n1->vectorBits, 128u);
  EXPECT_EQ(n1->vectorRegisters, 32u);
  EXPECT_EQ(n1->f32Lanes(), 4);
  EXPECT_EQ(n1->isaName(), "NEON");
  auto v1 = resolveCpuTarget("neoverse-v1", "", "aarch64-linux-gnu");
  ASSERT_TRUE(static_cast<bool>(v1)) << llvm::toString(v1.takeError());
  EXPECT_TRUE(v1->sve);
  EXPECT_EQ(v1->isaName(), "NEON+SVE");
  auto generic = resolveCpuTarget("", "", "aarch64-linux-gnu");
  ASSERT_TRUE(static_cast<bool>(generic))
      << llvm::toString(generic.takeError());
  EXPECT_EQ(generic->cpu, "generic");
  EXPECT_FALSE(generic->isHost);
  EXPECT_TRUE(generic->neon);
  auto noNeon = resolveCpuTarget("neoverse-n1", "-neon", "aarch64-linux-gnu");
  ASSERT_TRUE(static_cast<bool>(noNeon)) << llvm::toString(noNeon.takeError());
  EXPECT_FALSE(noNeon->neon);
  auto x86Cpu = resolveCpuTarget("haswell", "", "aarch64-linux-gnu");
  ASSERT_FALSE(static_cast<bool>(x86Cpu));
  EXPECT_NE(llvm::toString(x86Cpu.takeError()).find("neoverse-n1"),
            std::string::npos);
  auto badTriple = resolveCpuTarget("", "", "bogus-thing");
  ASSERT_FALSE(static_cast<bool>(badTriple));
  EXPECT_NE(llvm::toString(badTriple.takeError()).find("bogus-thing"),
            std::string::npos);
}

TEST(CpuTargetTest, Errors) {
  EXPECT_NE(errorOf("nosuchcpu", "").find("unknown target CPU 'nosuchcpu'"),
            std::string::npos);
  EXPECT_NE(errorOf("haswell", "avx2")
                .find("target feature 'avx2' must start with '+' or '-'"),
            std::string::npos);
  EXPECT_NE(errorOf("haswell", "+nosuchfeature")
                .find("unknown target feature '+nosuchfeature'"),
            std::string::npos);
}

TEST(CpuTargetTest, Host) {
  auto t = resolveCpuTarget("", "", "");
  ASSERT_TRUE(static_cast<bool>(t)) << llvm::toString(t.takeError());
  EXPECT_TRUE(t->isHost);
  EXPECT_TRUE(featuresMissingOnHost(*t).empty());
}

TEST(CpuTargetTest, MissingOnHost) {
  // The baseline every x86-64 machine runs.
  if (!llvm::Triple(getHostCpuTarget().triple).isX86())
    GTEST_SKIP() << "not an x86-64 host";
  EXPECT_TRUE(featuresMissingOnHost(resolve("x86-64")).empty());
  // AVX10.2 (Diamond Rapids): none of today's usual hosts (Sapphire /
  // Emerald Rapids, Zen 3 / Zen 4) has it.
  CpuTarget future = resolve("x86-64", "+avx10.2");
  llvm::SmallVector<std::string> missing = featuresMissingOnHost(future);
  if (getHostCpuTarget().features.find("+avx10.2") == std::string::npos) {
    EXPECT_NE(llvm::find(missing, "avx10.2"), missing.end());
  }
  // Another architecture never runs here.
  auto arm = resolveCpuTarget("neoverse-v1", "", "aarch64-unknown-linux-gnu");
  ASSERT_TRUE(static_cast<bool>(arm)) << llvm::toString(arm.takeError());
  EXPECT_TRUE(arm->neon);
  missing = featuresMissingOnHost(*arm);
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(missing[0], "architecture aarch64");
}

} // namespace
