//===- TmaTest.cpp - nvgpu.tma.* on the emulator --------------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// Hopper's tensor memory accelerator on the emulator. Host code builds a
// tensor map of a global tensor; one thread of the block issues TMA loads
// of boxes into dynamic shared memory, signalling an mbarrier with their
// bytes; the block waits on the barrier and reads the boxes.
// - The layout test dumps the raw shared-memory bytes and compares them
//   with an independent statement of the 128-byte swizzle (row r of the box
//   at r * 128 bytes, its 16-byte chunk c at chunk c ^ (r % 8)) and of the
//   out-of-bounds fill (zero or NaN, boxes reaching past the end and before
//   the start of the tensor; coordinates innermost first).
// - The integration test loads Q and K tiles of bf16 with 128-byte swizzle
//   and multiplies them with wgmma (Q K^T, K-major descriptors), as
//   FlashAttention-3 does; products of small integers are exact.
// - The errors: reading the bytes without a wait that saw the phase
//   complete, reading them while the load is in flight, a transaction count
//   that never completes (a deadlock, not a hang), a misaligned
//   destination, a box row wider than the swizzle.
//
//===----------------------------------------------------------------------===//

#include "EmulatorTestUtil.h"

#include <cmath>

using namespace emutest;

namespace {

const char *kWg = "#gpu.address_space<workgroup>";

std::string mapType(const std::string &tile, const std::string &oob) {
  return "!nvgpu.tensormap.descriptor<tensor = memref<" + tile + ", " + kWg +
         ">, swizzle = swizzle_128b, l2promo = none, oob = " + oob +
         ", interleave = none>";
}

std::string groupType() {
  return std::string("!nvgpu.mbarrier.group<memorySpace = ") + kWg +
         ", num_barriers = 1>";
}

/// The start of both kernels: constants, the dynamic shared memory %smem,
/// one mbarrier (%bars[0]) expecting one arrival, initialized by thread 0
/// (%first) before a barrier.
const char *kPrologue = R"(
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c1000 = arith.constant 1000 : index
      %false = arith.constant false
      %first = arith.cmpi eq, %tx, %c0 : index
      %smem = gpu.dynamic_shared_memory : memref<?xi8, $WG>
      %bars = nvgpu.mbarrier.create -> $G
      nvgpu.mbarrier.init %bars[%c0], %c1, predicate = %first : $G
      gpu.barrier
)";

struct LayoutCase {
  bool nanFill = false;
  int64_t boxCols = 32; // f32 elements per box row (the create op's value;
                        // the descriptor type keeps 16 x 32)
  int64_t expectTx = 0; // 0: the loads' bytes
  int64_t secondAt = 2048;
  bool wait = true;
};

constexpr int64_t kRows = 20, kCols = 100, kBoxRows = 16;

/// Two loads of a 16 x 32 f32 box (128 bytes a row) of a 20 x 100 tensor
/// holding r * 1000 + c: box 0 at rows 8.., columns 64.. (past both ends),
/// box 1 at rows -4.., columns -8.. (before both starts), at shared bytes 0
/// and `secondAt`. `out` receives the first 1024 floats of shared memory.
std::string runLayout(const LayoutCase &c, std::vector<float> &out) {
  std::vector<float> g(kRows * kCols);
  for (int64_t r = 0; r < kRows; ++r)
    for (int64_t col = 0; col < kCols; ++col)
      g[r * kCols + col] = static_cast<float>(r * 1000 + col);
  std::string tile = std::to_string(kBoxRows) + "x32xf32";
  int64_t boxBytes = kBoxRows * 32 * 4;
  std::string body = std::string(kPrologue) + R"(
      %c8 = arith.constant 8 : index
      %c64 = arith.constant 64 : index
      %cm4 = arith.constant -4 : index
      %cm8 = arith.constant -8 : index
      %c1024 = arith.constant 1024 : index
      %second = arith.constant $SECOND : index
      %tx_bytes = arith.constant $TX : index
      %b0 = memref.view %smem[%c0][] : memref<?xi8, $WG> to memref<$TILE, $WG>
      %b1 = memref.view %smem[%second][] : memref<?xi8, $WG> to memref<$TILE, $WG>
      nvgpu.mbarrier.arrive.expect_tx %bars[%c0], %tx_bytes, predicate = %first : $G
      nvgpu.tma.async.load %map[%c64, %c8], %bars[%c0] to %b0, predicate = %first : $M, $G -> memref<$TILE, $WG>
      nvgpu.tma.async.load %map[%cm8, %cm4], %bars[%c0] to %b1, predicate = %first : $M, $G -> memref<$TILE, $WG>
$WAIT
      %flat = memref.view %smem[%c0][] : memref<?xi8, $WG> to memref<1024xf32, $WG>
      scf.for %i = %tx to %c1024 step %sx {
        %v = memref.load %flat[%i] : memref<1024xf32, $WG>
        memref.store %v, %out[%i] : memref<1024xf32>
      }
)";
  std::string text = R"(
  func.func @k(%g: memref<20x100xf32>, %out: memref<1024xf32>) {
    %box_r = arith.constant 16 : index
    %box_c = arith.constant $BOXC : index
    %shm = arith.constant 8192 : i32
    %u = memref.cast %g : memref<20x100xf32> to memref<*xf32>
    %map = nvgpu.tma.create.descriptor %u box[%box_r, %box_c] : memref<*xf32> -> $M
$LAUNCH
    return
  }
)";
  text = subst(
      text, {{"LAUNCH", launch(32, body, "dynamic_shared_memory_size %shm")}});
  text = subst(
      text,
      {{"WAIT",
        c.wait ? "      nvgpu.mbarrier.try_wait.parity %bars[%c0], %false, "
                 "%c1000 : $G"
               : ""},
       {"M", mapType(tile, c.nanFill ? "nan" : "zero")},
       {"G", groupType()},
       {"WG", kWg},
       {"TILE", tile},
       {"BOXC", std::to_string(c.boxCols)},
       {"SECOND", std::to_string(c.secondAt)},
       {"TX", std::to_string(c.expectTx ? c.expectTx : 2 * boxBytes)}});
  out.assign(1024, -1.0f);
  return run(text, "k", {buf(g, {kRows, kCols}), buf(out, {1024})});
}

/// The float at byte `at` of shared memory should be element (r, c) of the
/// box whose first element is global (r0, c0): checks value or fill.
int checkBox(const std::vector<float> &out, int64_t base, int64_t r0,
             int64_t c0, bool nanFill) {
  int bad = 0;
  for (int64_t r = 0; r < kBoxRows; ++r)
    for (int64_t c = 0; c < 32; ++c) {
      // 128-byte swizzle: 16-byte chunk (c * 4) / 16 of row r moves to
      // chunk ((c * 4) / 16) ^ (r % 8); the box at a 1024-byte boundary.
      int64_t chunk = (c * 4) / 16, in = (c * 4) % 16;
      int64_t at = base + r * 128 + ((chunk ^ (r % 8)) * 16) + in;
      float got = out[static_cast<size_t>(at / 4)];
      int64_t gr = r0 + r, gc = c0 + c;
      bool inside = gr >= 0 && gr < kRows && gc >= 0 && gc < kCols;
      bool ok;
      if (inside)
        ok = got == static_cast<float>(gr * 1000 + gc);
      else
        ok = nanFill ? std::isnan(got) : got == 0.0f;
      if (!ok && ++bad <= 5)
        ADD_FAILURE() << "box at byte " << base << ", element (" << r << ", "
                      << c << ") = global (" << gr << ", " << gc
                      << "): " << got;
    }
  return bad;
}

/// Q K^T of a 64 x 64 Q and a 64 x 64 K (bf16, head dimension 64 = one
/// 128-byte row), both TMA-loaded with 128-byte swizzle; four k16 steps
/// 32 bytes apart. `out[t * 32 + e]` is accumulator register e of thread t.
std::string runQK(std::vector<uint16_t> &q, std::vector<uint16_t> &k,
                  std::vector<float> &out) {
  std::string st = accumulatorType(64);
  std::string body = std::string(kPrologue) + R"(
      %c8192 = arith.constant 8192 : index
      %c16384 = arith.constant 16384 : index
      %c4_64 = arith.constant 4 : i64
      %c3fff = arith.constant 16383 : i64
      %qs = memref.view %smem[%c0][] : memref<?xi8, $WG> to memref<64x64xbf16, $WG>
      %ks = memref.view %smem[%c8192][] : memref<?xi8, $WG> to memref<64x64xbf16, $WG>
      nvgpu.mbarrier.arrive.expect_tx %bars[%c0], %c16384, predicate = %first : $G
      nvgpu.tma.async.load %qmap[%c0, %c0], %bars[%c0] to %qs, predicate = %first : $M, $G -> memref<64x64xbf16, $WG>
      nvgpu.tma.async.load %kmap[%c0, %c0], %bars[%c0] to %ks, predicate = %first : $M, $G -> memref<64x64xbf16, $WG>
      nvgpu.mbarrier.try_wait.parity %bars[%c0], %false, %c1000 : $G
      %baseIdx = memref.extract_aligned_pointer_as_index %smem : memref<?xi8, $WG> -> index
      %base64 = arith.index_cast %baseIdx : index to i64
      %acc0 = llvm.mlir.zero : $ST
      nvvm.wgmma.fence.aligned
)";
  for (int s = 0; s < 4; ++s) {
    std::string ss = std::to_string(s);
    body += wgmmaDescriptor("dq" + ss, 32 * s, 16, 1024, 1) +
            wgmmaDescriptor("dk" + ss, 8192 + 32 * s, 16, 1024, 1);
    body += "      %acc" + std::to_string(s + 1) +
            " = nvvm.wgmma.mma_async %dq" + ss + ", %dk" + ss + ", %acc" + ss +
            ", <m = 64, n = 64, k = 16>, D [<f32>, <" + (s ? "one" : "zero") +
            ">], A [<bf16>, <one>, <row>], B [<bf16>, <one>, <col>] : $ST -> "
            "$ST\n";
  }
  body += "      nvvm.wgmma.commit.group.sync.aligned\n"
          "      nvvm.wgmma.wait.group.sync.aligned 0\n";
  for (int e = 0; e < 32; ++e) {
    std::string es = std::to_string(e);
    body += "      %x" + es + " = llvm.extractvalue %acc4[" + es +
            "] : $ST\n      %i" + es + " = arith.constant " + es +
            " : index\n      memref.store %x" + es + ", %out[%tx, %i" + es +
            "] : memref<128x32xf32>\n";
  }
  std::string text = R"(
  func.func @k(%q: memref<64x64xbf16>, %k: memref<64x64xbf16>, %out: memref<128x32xf32>) {
    %c64h = arith.constant 64 : index
    %shm = arith.constant 16384 : i32
    %qu = memref.cast %q : memref<64x64xbf16> to memref<*xbf16>
    %ku = memref.cast %k : memref<64x64xbf16> to memref<*xbf16>
    %qmap = nvgpu.tma.create.descriptor %qu box[%c64h, %c64h] : memref<*xbf16> -> $M
    %kmap = nvgpu.tma.create.descriptor %ku box[%c64h, %c64h] : memref<*xbf16> -> $M
$LAUNCH
    return
  }
)";
  text = subst(
      text, {{"LAUNCH", launch(128, body, "dynamic_shared_memory_size %shm")}});
  text = subst(text, {{"M", mapType("64x64xbf16", "zero")},
                      {"G", groupType()},
                      {"WG", kWg},
                      {"ST", st}});
  out.assign(128 * 32, -1.0f);
  return run(text, "k",
             {buf(q, {64, 64}), buf(k, {64, 64}), buf(out, {128, 32})});
}

} // namespace

TEST(GPUEmulatorTma, SwizzledBoxesWithZeroFill) {
  std::vector<float> out;
  LayoutCase c;
  ASSERT_EQ(runLayout(c, out), "");
  EXPECT_EQ(checkBox(out, 0, 8, 64, false), 0);
  EXPECT_EQ(checkBox(out, 2048, -4, -8, false), 0);
}

TEST(GPUEmulatorTma, NanFill) {
  std::vector<float> out;
  LayoutCase c;
  c.nanFill = true;
  ASSERT_EQ(runLayout(c, out), "");
  EXPECT_EQ(checkBox(out, 0, 8, 64, true), 0);
  EXPECT_EQ(checkBox(out, 2048, -4, -8, true), 0);
}

// TMA-loaded Q and K tiles read by wgmma through 128-byte swizzle
// descriptors give Q K^T exactly.
TEST(GPUEmulatorTma, FeedsWgmma) {
  std::vector<uint16_t> q(64 * 64), k(64 * 64);
  std::vector<float> qv(q.size()), kv(k.size());
  uint32_t s = 777u;
  auto next = [&] {
    s = s * 1664525u + 1013904223u;
    return static_cast<float>(static_cast<int>((s >> 24) % 9) - 4);
  };
  for (size_t i = 0; i < q.size(); ++i)
    q[i] = bf16Bits(qv[i] = next());
  for (size_t i = 0; i < k.size(); ++i)
    k[i] = bf16Bits(kv[i] = next());
  std::vector<float> out;
  ASSERT_EQ(runQK(q, k, out), "");
  int bad = 0;
  for (int t = 0; t < 128; ++t)
    for (int e = 0; e < 32; ++e) {
      int warp = t / 32, lane = t % 32, i = e / 4, j = e % 4;
      int row = 16 * warp + lane / 4 + 8 * (j / 2);
      int col = 8 * i + 2 * (lane % 4) + j % 2;
      double want = 0;
      for (int d = 0; d < 64; ++d)
        want += double(qv[row * 64 + d]) * double(kv[col * 64 + d]);
      if (out[t * 32 + e] != want && ++bad <= 5)
        ADD_FAILURE() << "S[" << row << ", " << col << "] = " << out[t * 32 + e]
                      << ", expected " << want;
    }
  EXPECT_EQ(bad, 0);
}

TEST(GPUEmulatorTma, ReadingWithoutAWaitIsReported) {
  std::vector<float> out;
  LayoutCase c;
  c.wait = false;
  std::string err = runLayout(c, out);
  EXPECT_NE(err.find("that a TMA load wrote, without a wait that saw phase 0 "
                     "of mbarrier 0 complete"),
            std::string::npos)
      << err;
}

TEST(GPUEmulatorTma, ReadingInFlightIsReported) {
  std::vector<float> out;
  LayoutCase c;
  c.wait = false;
  c.expectTx = 8192; // more than the loads bring: the phase stays open
  std::string err = runLayout(c, out);
  EXPECT_NE(err.find("a TMA load still in flight will write"),
            std::string::npos)
      << err;
}

TEST(GPUEmulatorTma, TransactionCountThatNeverCompletesIsADeadlock) {
  std::vector<float> out;
  LayoutCase c;
  c.expectTx = 8192;
  std::string err = runLayout(c, out);
  EXPECT_NE(err.find("deadlock"), std::string::npos) << err;
  EXPECT_NE(err.find("4096 transaction bytes pending"), std::string::npos)
      << err;
}

TEST(GPUEmulatorTma, MisalignedDestinationIsReported) {
  std::vector<float> out;
  LayoutCase c;
  c.secondAt = 2048 + 64;
  std::string err = runLayout(c, out);
  EXPECT_NE(err.find("must be 128-byte aligned"), std::string::npos) << err;
}

TEST(GPUEmulatorTma, BoxRowWiderThanTheSwizzleIsReported) {
  std::vector<float> out;
  LayoutCase c;
  c.boxCols = 64; // 256 bytes with a 128-byte swizzle
  std::string err = runLayout(c, out);
  EXPECT_NE(err.find("exceeds the swizzle width (128 bytes)"),
            std::string::npos)
      << err;
}
