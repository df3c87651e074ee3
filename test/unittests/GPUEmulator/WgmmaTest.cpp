//===- WgmmaTest.cpp - nvvm.wgmma.* on the emulator -----------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// Hopper's warpgroup MMA on the emulator: a kernel of one warpgroup copies a
// shared-memory image prepared here into dynamic shared memory, builds the
// matrix descriptors from the buffer's address, runs two k16 steps of
// `nvvm.wgmma.mma_async` (the second accumulating) and writes each thread's
// accumulator registers out. The images are laid out as the tensor memory
// accelerator writes tiles (rows of 128 bytes whose 16-byte chunks are
// XORed with the row index modulo 8, FlashAttention-3's K and V tiles) or
// as 8 x 16-byte core matrices with explicit strides, independently of the
// emulator's descriptor arithmetic; products of small integers are exact,
// so D must equal A B exactly. The ordering errors (a missing fence, a read
// before the wait, a write of shared memory being read, a block ending with
// work in flight) are reported, never silently computed.
//
//===----------------------------------------------------------------------===//

#include "EmulatorTestUtil.h"

#include <functional>

using namespace emutest;

namespace {

enum class Layout { KSwizzle128, KInterleave, MNSwizzle128, MNInterleave };

/// Where element (mn, k) of an operand with MN extent `mnSize` and K = 32
/// lies in a tile at byte 0, and the descriptor's LBO and SBO, and the byte
/// offset of the second k16 step's start address.
struct Placement {
  std::function<int64_t(int64_t, int64_t)> at;
  int64_t lbo, sbo, step, swizzle, bytes;
};

Placement place(Layout l, int64_t mnSize) {
  switch (l) {
  case Layout::KSwizzle128:
    // TMA with 128-byte swizzle: row mn at mn * 128, chunk c of it at chunk
    // c ^ (mn % 8); K = 32 takes the first 64 bytes of each row.
    return {[](int64_t mn, int64_t k) {
              int64_t chunk = (k * 2) / 16, in = (k * 2) % 16;
              return mn * 128 + ((chunk ^ (mn % 8)) * 16) + in;
            },
            16,
            1024,
            32,
            1,
            mnSize * 128};
  case Layout::KInterleave:
    // 8 rows x 8 elements core matrices, those along K adjacent (128 B
    // apart), groups of 8 rows 512 B apart.
    return {[](int64_t mn, int64_t k) {
              return (mn / 8) * 512 + (k / 8) * 128 + (mn % 8) * 16 +
                     (k % 8) * 2;
            },
            128,
            512,
            256,
            0,
            mnSize / 8 * 512};
  case Layout::MNSwizzle128:
    // TMA with 128-byte swizzle of a row-major [K, MN] tile in boxes of 64
    // MN elements: box b at b * 4096 (32 rows of 128 B), row k's chunk c at
    // chunk c ^ (k % 8).
    return {[](int64_t mn, int64_t k) {
              int64_t box = mn / 64, c = ((mn % 64) * 2) / 16,
                      in = ((mn % 64) * 2) % 16;
              return box * 4096 + k * 128 + ((c ^ (k % 8)) * 16) + in;
            },
            4096,
            1024,
            2048,
            1,
            (mnSize + 63) / 64 * 4096};
  case Layout::MNInterleave:
    // Core matrices of 8 K rows x 8 MN elements: along MN 128 B apart,
    // groups of 8 K rows (mnSize / 8) * 128 B apart.
    return {[mnSize](int64_t mn, int64_t k) {
              return (mn / 8) * 128 + (k / 8) * (mnSize / 8 * 128) +
                     (k % 8) * 16 + (mn % 8) * 2;
            },
            mnSize / 8 * 128,
            128,
            2 * (mnSize / 8 * 128),
            0,
            mnSize / 8 * 128 * 4};
  }
  return {};
}

bool kMajor(Layout l) {
  return l == Layout::KSwizzle128 || l == Layout::KInterleave;
}

std::string descriptor(const std::string &name, int64_t tileOff,
                       const Placement &p) {
  return wgmmaDescriptor(name, tileOff, p.lbo, p.sbo, p.swizzle);
}

struct Case {
  int n = 64;
  bool f16 = false;
  Layout a = Layout::KSwizzle128, b = Layout::KSwizzle128;
  bool negA = false;
  /// Error cases: what to leave out or add.
  bool noFence = false, readEarly = false, writeEarly = false, noWait = false;
  /// Leave out the fence.proxy.async between the threads' stores of the
  /// image and the wgmma reading it.
  bool noProxyFence = false;
};

/// Runs the case; `out[t * n/2 + e]` is register e of thread t.
std::string runCase(const Case &c, std::vector<uint16_t> &a,
                    std::vector<uint16_t> &b, std::vector<float> &out) {
  Placement pa = place(c.a, 64), pb = place(c.b, c.n);
  // A at 0, B at the next 1024-byte boundary.
  int64_t offB = (pa.bytes + 1023) / 1024 * 1024;
  int64_t bytes = offB + pb.bytes;
  std::vector<uint8_t> image(static_cast<size_t>(bytes), 0);
  auto put = [&](int64_t at, uint16_t v) {
    image[at] = static_cast<uint8_t>(v & 0xff);
    image[at + 1] = static_cast<uint8_t>(v >> 8);
  };
  for (int64_t m = 0; m < 64; ++m)
    for (int64_t k = 0; k < 32; ++k)
      put(pa.at(m, k), a[m * 32 + k]);
  for (int64_t j = 0; j < c.n; ++j)
    for (int64_t k = 0; k < 32; ++k)
      put(offB + pb.at(j, k), b[j * 32 + k]);
  std::string st = accumulatorType(c.n), ty = c.f16 ? "f16" : "bf16";
  std::string shape = "<m = 64, n = " + std::to_string(c.n) + ", k = 16>";
  std::string la = kMajor(c.a) ? "row" : "col",
              lb = kMajor(c.b) ? "col" : "row";
  auto mma = [&](const std::string &res, const std::string &da,
                 const std::string &db, const std::string &acc,
                 const std::string &scaleD) {
    return "      " + res + " = nvvm.wgmma.mma_async " + da + ", " + db + ", " +
           acc + ", " + shape + ", D [<f32>, <" + scaleD + ">], A [<" + ty +
           ">, <" + (c.negA ? "neg" : "one") + ">, <" + la + ">], B [<" + ty +
           ">, <one>, <" + lb + ">] : " + st + " -> " + st + "\n";
  };
  std::string body = R"(
      %c0 = arith.constant 0 : index
      %cbytes = arith.constant $BYTES : index
      %c4_64 = arith.constant 4 : i64
      %c3fff = arith.constant 16383 : i64
      %smem = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      scf.for %i = %tx to %cbytes step %sx {
        %v = memref.load %img[%i] : memref<$BYTESxi8>
        memref.store %v, %smem[%i] : memref<?xi8, #gpu.address_space<workgroup>>
      }
$PROXYFENCE
      gpu.barrier
      %baseIdx = memref.extract_aligned_pointer_as_index %smem : memref<?xi8, #gpu.address_space<workgroup>> -> index
      %base64 = arith.index_cast %baseIdx : index to i64
)";
  body += descriptor("dA0", 0, pa) + descriptor("dA1", pa.step, pa) +
          descriptor("dB0", offB, pb) + descriptor("dB1", offB + pb.step, pb);
  body += "      %zero = llvm.mlir.zero : " + st + "\n";
  if (!c.noFence)
    body += "      nvvm.wgmma.fence.aligned\n";
  body += mma("%r0", "%dA0", "%dB0", "%zero", "zero");
  if (c.readEarly)
    body += "      %early = llvm.extractvalue %r0[0] : " + st + "\n";
  body += mma("%r1", "%dA1", "%dB1", "%r0", "one");
  body += "      nvvm.wgmma.commit.group.sync.aligned\n";
  if (c.writeEarly)
    body += "      %byte = arith.constant 0 : i8\n"
            "      memref.store %byte, %smem[%c0] : memref<?xi8, "
            "#gpu.address_space<workgroup>>\n";
  if (c.noWait) {
    body += "";
  } else {
    body += "      nvvm.wgmma.wait.group.sync.aligned 0\n";
    for (int e = 0; e < c.n / 2; ++e) {
      std::string es = std::to_string(e);
      body += "      %x" + es + " = llvm.extractvalue %r1[" + es + "] : " + st +
              "\n      %i" + es + " = arith.constant " + es +
              " : index\n      memref.store %x" + es + ", %out[%tx, %i" + es +
              "] : memref<128x$HALFxf32>\n";
    }
  }
  std::string text = R"(
  func.func @k(%img: memref<$BYTESxi8>, %out: memref<128x$HALFxf32>) {
    %c1 = arith.constant 1 : index
    %c128 = arith.constant 128 : index
    %shm = arith.constant $BYTES : i32
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
        threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1)
        dynamic_shared_memory_size %shm {
$BODY
      gpu.terminator
    }
    return
  }
)";
  text = subst(text, {{"BODY", body}});
  text =
      subst(text, {{"PROXYFENCE",
                    c.noProxyFence ? ""
                                   : "      nvvm.fence.proxy {kind = "
                                     "#nvvm.proxy_kind<async.shared>, space = "
                                     "#nvvm.shared_space<cta>}"}});
  text = subst(text, {{"BYTES", std::to_string(bytes)},
                      {"HALF", std::to_string(c.n / 2)}});
  out.assign(static_cast<size_t>(128 * c.n / 2), -1.0f);
  return run(
      text, "k",
      {buf(image, {bytes}), buf(out, {128, static_cast<int64_t>(c.n / 2)})});
}

uint16_t bits(float x, bool f16) { return f16 ? f16Bits(x) : bf16Bits(x); }

/// Runs a valid case on small integers and compares D with A B (exact).
void checkProduct(const Case &c) {
  std::vector<uint16_t> a(64 * 32), b(static_cast<size_t>(c.n) * 32);
  std::vector<float> av(a.size()), bv(b.size());
  uint32_t s = 12345u + static_cast<uint32_t>(c.n);
  auto next = [&] {
    s = s * 1664525u + 1013904223u;
    return static_cast<float>(static_cast<int>((s >> 24) % 9) - 4);
  };
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = bits(av[i] = next(), c.f16);
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = bits(bv[i] = next(), c.f16);
  std::vector<float> out;
  ASSERT_EQ(runCase(c, a, b, out), "");
  // The accumulator layout of m64nNk16 (PTX ISA, "Matrix fragments for
  // wgmma.mma_async.m64nNk16", accumulator D).
  int bad = 0;
  for (int t = 0; t < 128; ++t)
    for (int e = 0; e < c.n / 2; ++e) {
      int warp = t / 32, lane = t % 32, i = e / 4, j = e % 4;
      int row = 16 * warp + lane / 4 + 8 * (j / 2);
      int col = 8 * i + 2 * (lane % 4) + j % 2;
      double want = 0;
      for (int k = 0; k < 32; ++k)
        want += double(av[row * 32 + k]) * (c.negA ? -1 : 1) *
                double(bv[col * 32 + k]);
      if (out[t * (c.n / 2) + e] != want && ++bad <= 5)
        ADD_FAILURE() << "thread " << t << " register " << e << " (row " << row
                      << ", column " << col << "): " << out[t * (c.n / 2) + e]
                      << ", expected " << want;
    }
  EXPECT_EQ(bad, 0);
}

std::string runError(const Case &c) {
  std::vector<uint16_t> a(64 * 32, 0), b(static_cast<size_t>(c.n) * 32, 0);
  std::vector<float> out;
  return runCase(c, a, b, out);
}

} // namespace

// Q K^T as FlashAttention-3 stages it: both operands K-major in 128-byte
// swizzled TMA tiles; the second k16 step starts 32 bytes further.
TEST(GPUEmulatorWgmma, KMajorSwizzled128) {
  Case c;
  c.n = 64;
  checkProduct(c);
}

// P V with P and V in shared memory: A K-major in core matrices, B (V) a
// row-major [keys, d] tile read N-major from 128-byte swizzled TMA boxes of
// 64 columns (two boxes for N = 128), f16.
TEST(GPUEmulatorWgmma, MNMajorSwizzled128TwoBoxesF16) {
  Case c;
  c.n = 128;
  c.f16 = true;
  c.a = Layout::KInterleave;
  c.b = Layout::MNSwizzle128;
  checkProduct(c);
}

// Interleaved (unswizzled) N-major B, a narrow N, A negated by scale-a.
TEST(GPUEmulatorWgmma, MNMajorInterleavedNegatedA) {
  Case c;
  c.n = 24;
  c.b = Layout::MNInterleave;
  c.negA = true;
  checkProduct(c);
}

TEST(GPUEmulatorWgmma, MissingFenceIsReported) {
  Case c;
  c.n = 8;
  c.noFence = true;
  std::string err = runError(c);
  EXPECT_NE(err.find("missing wgmma.fence"), std::string::npos) << err;
}

TEST(GPUEmulatorWgmma, ReadingAnAccumulatorInFlightIsReported) {
  Case c;
  c.n = 8;
  c.readEarly = true;
  std::string err = runError(c);
  EXPECT_NE(err.find("still in flight"), std::string::npos) << err;
  EXPECT_NE(err.find("llvm.extractvalue"), std::string::npos) << err;
}

TEST(GPUEmulatorWgmma, WritingSharedMemoryInFlightIsReported) {
  Case c;
  c.n = 8;
  c.writeEarly = true;
  std::string err = runError(c);
  EXPECT_NE(err.find("a wgmma.mma_async still in flight reads"),
            std::string::npos)
      << err;
}

TEST(GPUEmulatorWgmma, EndingTheBlockInFlightIsReported) {
  Case c;
  c.n = 8;
  c.noWait = true;
  std::string err = runError(c);
  EXPECT_NE(err.find("the block ends with wgmma.mma_async operations in "
                     "flight"),
            std::string::npos)
      << err;
}

// The image is written by the threads (the generic proxy) and read by wgmma
// (the async proxy): without fence.proxy.async between them the GPU may
// read stale bytes.
TEST(GPUEmulatorWgmma, MissingProxyFenceIsReported) {
  Case c;
  c.n = 8;
  c.noProxyFence = true;
  std::string err = runError(c);
  EXPECT_NE(err.find("with no fence.proxy.async after the write"),
            std::string::npos)
      << err;
}
