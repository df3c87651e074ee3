//===- MemoryAndControlTest.cpp - async copies, checks and divergence -----===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "EmulatorTestUtil.h"

#include <cmath>
#include <random>

using namespace emutest;
using mlir::attn::EmulatorOptions;

namespace {

//===----------------------------------------------------------------------===//
// Asynchronous copies
//===----------------------------------------------------------------------===//

const char *kAsyncKernel = R"(
  func.func @cp(%g: memref<32x4xf32>, %out: memref<32x4xf32>) {
$LAUNCH
    return
  }
)";
// Shared memory starts at -1; the copies write $COPIES; then each thread
// reads row ($READ) of shared memory into its row of `out`.
const char *kAsyncBody = R"(
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c4 = arith.constant 4 : index
      %c32 = arith.constant 32 : index
      %m1 = arith.constant -1.0 : f32
      scf.for %j = %c0 to %c4 step %c1 {
        memref.store %m1, %sm[%tx, %j] : memref<32x4xf32, #gpu.address_space<workgroup>>
      }
      gpu.barrier
$COPIES
      %t1 = arith.addi %tx, %c1 : index
      %next = arith.remui %t1, %c32 : index
      scf.for %j = %c0 to %c4 step %c1 {
        %v = memref.load %sm[$READ, %j] : memref<32x4xf32, #gpu.address_space<workgroup>>
        memref.store %v, %out[%tx, %j] : memref<32x4xf32>
      }
)";

struct AsyncResult {
  std::string error;
  std::vector<float> out;
};

AsyncResult runAsync(const std::string &copies, const std::string &read,
                     bool reportHazards = true) {
  std::vector<float> g(32 * 4);
  for (int i = 0; i < 128; ++i)
    g[i] = static_cast<float>(i);
  AsyncResult r;
  r.out.assign(128, 99.0f);
  std::string text =
      subst(subst(kAsyncKernel,
                  {{"LAUNCH", launch(32, kAsyncBody,
                                     "workgroup(%sm : memref<32x4xf32, "
                                     "#gpu.address_space<workgroup>>)")}}),
            {{"COPIES", copies}, {"READ", read}});
  EmulatorOptions opts;
  opts.reportAsyncHazards = reportHazards;
  r.error = run(text, "cp", {buf(g, {32, 4}), buf(r.out, {32, 4})}, opts);
  return r;
}

const char *kCopyAll = R"(
      %t = nvgpu.device_async_copy %g[%tx, %c0], %sm[%tx, %c0], 4 {bypassL1} : memref<32x4xf32> to memref<32x4xf32, #gpu.address_space<workgroup>>
      %grp = nvgpu.device_async_create_group %t
)";

} // namespace

TEST(GPUEmulatorAsyncCopy, WaitMakesTheCopyVisible) {
  AsyncResult r = runAsync(
      std::string(kCopyAll) + "      nvgpu.device_async_wait %grp\n", "%tx");
  ASSERT_EQ(r.error, "");
  for (int i = 0; i < 128; ++i)
    EXPECT_EQ(r.out[i], static_cast<float>(i)) << i;
}

TEST(GPUEmulatorAsyncCopy, ReadBeforeWaitIsReported) {
  AsyncResult r = runAsync(kCopyAll, "%tx");
  EXPECT_NE(r.error.find("missing nvgpu.device_async_wait"), std::string::npos)
      << r.error;
}

TEST(GPUEmulatorAsyncCopy, ReadBeforeWaitSeesOldContents) {
  AsyncResult r = runAsync(kCopyAll, "%tx", /*reportHazards=*/false);
  ASSERT_EQ(r.error, "");
  for (int i = 0; i < 128; ++i)
    EXPECT_EQ(r.out[i], -1.0f) << i;
}

TEST(GPUEmulatorAsyncCopy, WaitGroupKeepsTheNewestGroupsInFlight) {
  // Two groups (elements 0-1, then 2-3); wait_group 1 retires the first.
  std::string copies = R"(
      %t0 = nvgpu.device_async_copy %g[%tx, %c0], %sm[%tx, %c0], 2 : memref<32x4xf32> to memref<32x4xf32, #gpu.address_space<workgroup>>
      %g0 = nvgpu.device_async_create_group %t0
      %tc1 = nvgpu.device_async_copy %g[%tx, %c2], %sm[%tx, %c2], 2 : memref<32x4xf32> to memref<32x4xf32, #gpu.address_space<workgroup>>
      %g1 = nvgpu.device_async_create_group %tc1
      nvgpu.device_async_wait %g1 {numGroups = 1 : i32}
)";
  AsyncResult r = runAsync(copies, "%tx", /*reportHazards=*/false);
  ASSERT_EQ(r.error, "");
  for (int t = 0; t < 32; ++t)
    for (int j = 0; j < 4; ++j)
      EXPECT_EQ(r.out[t * 4 + j], j < 2 ? static_cast<float>(t * 4 + j) : -1)
          << t << " " << j;
  // The same with reports on: reading the second half is the error.
  r = runAsync(copies, "%tx");
  EXPECT_NE(r.error.find("missing nvgpu.device_async_wait"), std::string::npos)
      << r.error;
}

TEST(GPUEmulatorAsyncCopy, SrcElementsZeroFills) {
  std::string copies = R"(
      %t = nvgpu.device_async_copy %g[%tx, %c0], %sm[%tx, %c0], 4, %c1 : memref<32x4xf32> to memref<32x4xf32, #gpu.address_space<workgroup>>
      %grp = nvgpu.device_async_create_group %t
      nvgpu.device_async_wait %grp
)";
  AsyncResult r = runAsync(copies, "%tx");
  ASSERT_EQ(r.error, "");
  for (int t = 0; t < 32; ++t)
    for (int j = 0; j < 4; ++j)
      EXPECT_EQ(r.out[t * 4 + j], j == 0 ? static_cast<float>(t * 4) : 0.0f);
}

TEST(GPUEmulatorAsyncCopy, OtherThreadsNeedABarrierAfterTheWait) {
  // The wait makes the copy visible to the issuing thread only.
  AsyncResult r = runAsync(
      std::string(kCopyAll) + "      nvgpu.device_async_wait %grp\n", "%next");
  EXPECT_NE(r.error.find("missing gpu.barrier"), std::string::npos) << r.error;
  r = runAsync(std::string(kCopyAll) +
                   "      nvgpu.device_async_wait %grp\n      gpu.barrier\n",
               "%next");
  ASSERT_EQ(r.error, "");
  for (int t = 0; t < 32; ++t)
    EXPECT_EQ(r.out[t * 4], static_cast<float>(((t + 1) % 32) * 4));
}

//===----------------------------------------------------------------------===//
// Checks: bounds, races, unknown ops
//===----------------------------------------------------------------------===//

TEST(GPUEmulatorChecks, OutOfBoundsNamesTheThreadAndTheLocation) {
  const char *text = R"(
  func.func @f(%g: memref<32xf32>) {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
      %i = arith.addi %tx, %c1 : index
      %v = memref.load %g[%i] : memref<32xf32> loc("kernel.mlir":7:12)
      gpu.terminator
    }
    return
  }
)";
  std::vector<float> g(32, 0);
  std::string err = run(text, "f", {buf(g, {32})});
  EXPECT_NE(err.find("kernel.mlir:7:12"), std::string::npos) << err;
  EXPECT_NE(err.find("out-of-bounds"), std::string::npos) << err;
  EXPECT_NE(err.find("index [32]"), std::string::npos) << err;
  EXPECT_NE(err.find("thread (31, 0, 0)"), std::string::npos) << err;
}

TEST(GPUEmulatorChecks, SharedMemoryRaceWithoutBarrier) {
  const char *body = R"(
      %c1 = arith.constant 1 : index
      %c32 = arith.constant 32 : index
      %v = arith.constant 1.0 : f32
      memref.store %v, %sm[%tx] : memref<32xf32, #gpu.address_space<workgroup>>
      $BARRIER
      %t1 = arith.addi %tx, %c1 : index
      %n = arith.remui %t1, %c32 : index
      %r = memref.load %sm[%n] : memref<32xf32, #gpu.address_space<workgroup>>
)";
  for (bool barrier : {false, true}) {
    std::string text =
        "func.func @f() {\n" +
        launch(32, subst(body, {{"BARRIER", barrier ? "gpu.barrier" : ""}}),
               "workgroup(%sm : memref<32xf32, "
               "#gpu.address_space<workgroup>>)") +
        "    return\n  }\n";
    std::string err = run(text, "f", {});
    if (barrier)
      EXPECT_EQ(err, "");
    else
      EXPECT_NE(err.find("missing gpu.barrier"), std::string::npos) << err;
  }
}

TEST(GPUEmulatorChecks, WriteAfterReadRaceWithoutBarrier) {
  // Thread t reads element t+1, then thread t+1 overwrites it: on a GPU the
  // write may come first.
  const char *body = R"(
      %c1 = arith.constant 1 : index
      %c32 = arith.constant 32 : index
      %t1 = arith.addi %tx, %c1 : index
      %n = arith.remui %t1, %c32 : index
      %r = memref.load %sm[%n] : memref<32xf32, #gpu.address_space<workgroup>>
      memref.store %r, %sm[%tx] : memref<32xf32, #gpu.address_space<workgroup>>
)";
  std::string text = "func.func @f() {\n" +
                     launch(32, body,
                            "workgroup(%sm : memref<32xf32, "
                            "#gpu.address_space<workgroup>>)") +
                     "    return\n  }\n";
  EmulatorOptions opts;
  opts.detectUninitializedReads = false; // the reads are of nothing
  std::string err = run(text, "f", {}, opts);
  EXPECT_NE(err.find("read since the last barrier"), std::string::npos) << err;
  // With the default options the first read is the error.
  err = run(text, "f", {});
  EXPECT_NE(err.find("that no thread of the block has written"),
            std::string::npos)
      << err;
}

TEST(GPUEmulatorChecks, UnknownOpIsNamed) {
  const char *text = R"(
  func.func @f(%g: memref<4xf32>) {
    %c0 = arith.constant 0 : index
    %v = memref.load %g[%c0] : memref<4xf32>
    %s = math.sin %v : f32
    memref.store %s, %g[%c0] : memref<4xf32>
    return
  }
)";
  std::vector<float> g(4, 0.5f);
  std::string err = run(text, "f", {buf(g, {4})});
  EXPECT_NE(err.find("'math.sin'"), std::string::npos) << err;
  EXPECT_NE(err.find("does not support"), std::string::npos) << err;
}

//===----------------------------------------------------------------------===//
// Divergence
//===----------------------------------------------------------------------===//

TEST(GPUEmulatorDivergence, IfMergesPerThreadResults) {
  const char *body = R"(
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c5 = arith.constant 5 : index
      %lo = arith.cmpi ult, %tx, %c5 : index
      %r = scf.if %lo -> (index) {
        %a = arith.muli %tx, %c5 : index
        scf.yield %a : index
      } else {
        scf.yield %c1 : index
      }
      // A loop with a per-thread trip count: sum of 0 .. tx-1.
      %s = scf.for %i = %c0 to %tx step %c1 iter_args(%acc = %r) -> (index) {
        %n = arith.addi %acc, %i : index
        scf.yield %n : index
      }
      memref.store %s, %out[%tx] : memref<64xindex>
)";
  std::string text = "func.func @f(%out: memref<64xindex>) {\n" +
                     launch(64, body) + "    return\n  }\n";
  std::vector<int64_t> out(64, -1);
  ASSERT_EQ(run(text, "f", {buf(out, {64})}), "");
  for (int64_t t = 0; t < 64; ++t)
    EXPECT_EQ(out[t], (t < 5 ? t * 5 : 1) + t * (t - 1) / 2) << t;
}

TEST(GPUEmulatorDivergence, BarrierInDivergentCodeIsReported) {
  const char *body = R"(
      %c3 = arith.constant 3 : index
      %lo = arith.cmpi ult, %tx, %c3 : index
      scf.if %lo {
        gpu.barrier
      }
)";
  std::string text =
      "func.func @f() {\n" + launch(64, body) + "    return\n  }\n";
  std::string err = run(text, "f", {});
  EXPECT_NE(err.find("gpu.barrier not reached by every thread"),
            std::string::npos)
      << err;
}

TEST(GPUEmulatorDivergence, WarpUniformBranchMayHoldWarpOps) {
  // Warp 1 alone shuffles: legal, every warp is converged.
  const char *body = R"(
      %c32 = arith.constant 32 : index
      %hi = arith.cmpi uge, %tx, %c32 : index
      %i = arith.index_cast %tx : index to i32
      scf.if %hi {
        %o = arith.constant 1 : i32
        %w = arith.constant 32 : i32
        %r, %ok = gpu.shuffle xor %i, %o, %w : i32
        memref.store %r, %out[%tx] : memref<64xi32>
      }
)";
  std::string text = "func.func @f(%out: memref<64xi32>) {\n" +
                     launch(64, body) + "    return\n  }\n";
  std::vector<int32_t> out(64, -1);
  ASSERT_EQ(run(text, "f", {buf(out, {64})}), "");
  for (int t = 0; t < 64; ++t)
    EXPECT_EQ(out[t], t < 32 ? -1 : (t ^ 1));
}

//===----------------------------------------------------------------------===//
// Numerics: conversions round to nearest even (host code, no launch)
//===----------------------------------------------------------------------===//

TEST(GPUEmulatorNumerics, TruncFRoundsToNearestEven) {
  const char *text = R"(
  func.func @f(%in: memref<4096xf32>, %h: memref<4096xf16>, %b: memref<4096xbf16>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = arith.constant 4096 : index
    scf.for %i = %c0 to %n step %c1 {
      %v = memref.load %in[%i] : memref<4096xf32>
      %x = arith.truncf %v : f32 to f16
      %y = arith.truncf %v : f32 to bf16
      memref.store %x, %h[%i] : memref<4096xf16>
      memref.store %y, %b[%i] : memref<4096xbf16>
    }
    return
  }
)";
  std::mt19937 rng(3);
  std::vector<float> in(4096);
  for (size_t i = 0; i < in.size(); ++i) {
    // Random bit patterns over a wide range, and exact ties.
    uint32_t u = (rng() & 0x80ffffffu) | ((100 + rng() % 60) << 23);
    if (i % 4 == 0)
      u = (u & ~0x1fffu) | 0x1000u; // f16 tie (13 dropped bits)
    if (i % 4 == 1)
      u = (u & ~0xffffu) | 0x8000u; // bf16 tie
    std::memcpy(&in[i], &u, 4);
  }
  std::vector<uint16_t> h(4096), b(4096);
  ASSERT_EQ(run(text, "f", {buf(in, {4096}), buf(h, {4096}), buf(b, {4096})}),
            "");
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(h[i], f16Bits(in[i])) << in[i];
    uint32_t u;
    std::memcpy(&u, &in[i], 4);
    uint32_t lsb = (u >> 16) & 1;
    uint16_t want = static_cast<uint16_t>((u + 0x7fff + lsb) >> 16);
    EXPECT_EQ(b[i], want) << in[i];
  }
}

//===----------------------------------------------------------------------===//
// Dynamic shared memory, assertions, f16 accumulation
//===----------------------------------------------------------------------===//

TEST(GPUEmulatorChecks, DynamicSharedMemoryViewIsBoundsChecked) {
  // 256 bytes of dynamic shared memory viewed as 32 f32 (128 bytes) from
  // byte 128 fit; from byte 160 the last 8 elements lie past the buffer.
  const char *text = R"(
  func.func @f(%out: memref<32xf32>) {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %bytes = arith.constant 256 : i32
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
               dynamic_shared_memory_size %bytes {
      %raw = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %shift = arith.constant $SHIFT : index
      %v = memref.view %raw[%shift][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<32xf32, #gpu.address_space<workgroup>>
      %x = arith.constant 3.0 : f32
      memref.store %x, %v[%tx] : memref<32xf32, #gpu.address_space<workgroup>>
      %r = memref.load %v[%tx] : memref<32xf32, #gpu.address_space<workgroup>>
      memref.store %r, %out[%tx] : memref<32xf32>
      gpu.terminator
    }
    return
  }
)";
  std::vector<float> out(32, 0);
  ASSERT_EQ(run(subst(text, {{"SHIFT", "128"}}), "f", {buf(out, {32})}), "");
  for (float x : out)
    EXPECT_EQ(x, 3.0f);
  std::string err = run(subst(text, {{"SHIFT", "160"}}), "f", {buf(out, {32})});
  EXPECT_NE(err.find("outside the buffer's 256"), std::string::npos) << err;
  EXPECT_NE(err.find("dynamic shared memory"), std::string::npos) << err;
}

TEST(GPUEmulatorChecks, FailedAssertionNamesTheThread) {
  const char *body = R"(
      %c7 = arith.constant 7 : index
      %ok = arith.cmpi ne, %tx, %c7 : index
      cf.assert %ok, "thread 7 is not welcome"
)";
  std::string text =
      "func.func @f() {\n" + launch(32, body) + "    return\n  }\n";
  std::string err = run(text, "f", {});
  EXPECT_NE(err.find("assertion failed: thread 7 is not welcome"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("thread (7, 0, 0)"), std::string::npos) << err;
}

TEST(GPUEmulatorMma, F16Accumulator) {
  // Ones times ones over k = 16 plus C = 0.5: 16.5 everywhere, in f16.
  const char *body = R"(
      %c0 = arith.constant 0 : index
      %a = arith.constant dense<1.0> : vector<4x2xf16>
      %b = arith.constant dense<1.0> : vector<2x2xf16>
      %c = arith.constant dense<0.5> : vector<2x2xf16>
      %d = nvgpu.mma.sync (%a, %b, %c) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf16>) -> vector<2x2xf16>
      vector.store %d, %out[%tx, %c0, %c0] : memref<32x2x2xf16>, vector<2x2xf16>
)";
  std::string text = "func.func @f(%out: memref<32x2x2xf16>) {\n" +
                     launch(32, body) + "    return\n  }\n";
  std::vector<uint16_t> out(128, 0);
  ASSERT_EQ(run(text, "f", {buf(out, {32, 2, 2})}), "");
  for (uint16_t x : out)
    EXPECT_EQ(f16Value(x), 16.5f);
}

//===----------------------------------------------------------------------===//
// Atomics and host copies (the device-side error word)
//===----------------------------------------------------------------------===//

// Threads 5, 9 and 20 (of 32) fail a check: each adds 1 to the count; the
// one that found it at 0 (the first in lane order) writes its lane. The
// host code zeroes the word on the "device" with a copy, and copies it back
// and fills a buffer with gpu.memset afterwards.
TEST(GPUEmulatorAtomics, CountAndFirstWriter) {
  const char *text = R"(
  func.func @word(%host: memref<3xi64>, %fill: memref<4xf32>) {
    %c0 = arith.constant 0 : index
    %t0 = gpu.wait async
    %dev, %t1 = gpu.alloc async [%t0] () : memref<3xi64>
    %t2 = gpu.memcpy async [%t1] %dev, %host : memref<3xi64>, memref<3xi64>
    %c1_l = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %t3 = gpu.launch async [%t2] blocks(%bx, %by, %bz) in (%gx = %c1_l, %gy = %c1_l, %gz = %c1_l) threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1_l, %sz = %c1_l) {
      %c0k = arith.constant 0 : index
      %c1k = arith.constant 1 : index
      %c2k = arith.constant 2 : index
      %c5 = arith.constant 5 : index
      %c9 = arith.constant 9 : index
      %c20 = arith.constant 20 : index
      %one = arith.constant 1 : i64
      %zero = arith.constant 0 : i64
      %a = arith.cmpi eq, %tx, %c5 : index
      %b = arith.cmpi eq, %tx, %c9 : index
      %c = arith.cmpi eq, %tx, %c20 : index
      %ab = arith.ori %a, %b : i1
      %bad = arith.ori %ab, %c : i1
      scf.if %bad {
        %old = memref.atomic_rmw addi %one, %dev[%c0k] : (i64, memref<3xi64>) -> i64
        %first = arith.cmpi eq, %old, %zero : i64
        scf.if %first {
          %lane = arith.index_cast %tx : index to i64
          memref.store %lane, %dev[%c1k] : memref<3xi64>
        }
        %mx = memref.atomic_rmw maxs %old, %dev[%c2k] : (i64, memref<3xi64>) -> i64
      }
      gpu.terminator
    }
    %t4 = gpu.memcpy async [%t3] %host, %dev : memref<3xi64>, memref<3xi64>
    %zf = arith.constant 0.0 : f32
    %t5 = gpu.memset async [%t4] %fill, %zf : memref<4xf32>, f32
    gpu.wait [%t5]
    return
  }
)";
  std::vector<int64_t> host = {0, 0, 0};
  std::vector<float> fill = {1, 2, 3, 4};
  ASSERT_EQ(run(text, "word", {buf(host, {3}), buf(fill, {4})}), "");
  EXPECT_EQ(host[0], 3);
  EXPECT_EQ(host[1], 5);
  // maxs over the old counts 0, 1, 2 (starting from 0 after the copy).
  EXPECT_EQ(host[2], 2);
  for (float x : fill)
    EXPECT_EQ(x, 0.0f);
}
