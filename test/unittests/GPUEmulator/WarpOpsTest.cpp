//===- WarpOpsTest.cpp - warp-level ops against the PTX ISA's definitions -===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// Each test runs one warp-level op in an emulated kernel and checks every
// lane's registers against a scalar definition written from the PTX ISA's
// fragment tables (in the ISA's own case-by-case form, not the emulator's
// arithmetic).
//
//===----------------------------------------------------------------------===//

#include "EmulatorTestUtil.h"

#include <cmath>
#include <random>

using namespace emutest;
using mlir::attn::EmulatedBuffer;

namespace {

// PTX ISA, "Matrix Fragments for mma.m16n8k16 with floating point type":
// groupID = %laneid >> 2, threadID_in_group = %laneid % 4.
void isaA16816(int lane, int i, int &row, int &col) {
  int groupID = lane >> 2, tig = lane % 4;
  row = (i < 2 || (i >= 4 && i < 6)) ? groupID : groupID + 8;
  col = (i < 4) ? tig * 2 + (i & 0x1) : tig * 2 + (i & 0x1) + 8;
}
void isaB16816(int lane, int i, int &row, int &col) {
  int groupID = lane >> 2, tig = lane % 4;
  row = (i < 2) ? tig * 2 + (i & 0x1) : tig * 2 + (i & 0x1) + 8;
  col = groupID;
}
void isaC16816(int lane, int i, int &row, int &col) {
  int groupID = lane >> 2, tig = lane % 4;
  row = (i < 2) ? groupID : groupID + 8;
  col = tig * 2 + (i & 0x1);
}
// "Matrix Fragments for mma.m16n8k8" with .f16 / .bf16.
void isaA1688f16(int lane, int i, int &row, int &col) {
  int groupID = lane >> 2, tig = lane % 4;
  row = (i < 2) ? groupID : groupID + 8;
  col = tig * 2 + (i & 0x1);
}
void isaB1688f16(int lane, int i, int &row, int &col) {
  int groupID = lane >> 2, tig = lane % 4;
  row = tig * 2 + i;
  col = groupID;
}
// "Matrix Fragments for mma.m16n8k8" with .tf32.
void isaA1688tf32(int lane, int i, int &row, int &col) {
  int groupID = lane >> 2, tig = lane % 4;
  row = (i == 0 || i == 2) ? groupID : groupID + 8;
  col = (i == 0 || i == 1) ? tig : tig + 4;
}
void isaB1688tf32(int lane, int i, int &row, int &col) {
  int groupID = lane >> 2, tig = lane % 4;
  row = (i == 0) ? tig : tig + 4;
  col = groupID;
}

const char *kMmaKernel = R"(
  func.func @mma(%a: memref<$Wx32x$NAx$PAx$T>, %b: memref<$Wx32x$NBx$PAx$T>,
                 %c: memref<$Wx32x2x2xf32>, %d: memref<$Wx32x2x2xf32>) {
$LAUNCH
    return
  }
)";
const char *kMmaBody = R"(
      %c0 = arith.constant 0 : index
      %c32 = arith.constant 32 : index
      %w = arith.divui %tx, %c32 : index
      %l = arith.remui %tx, %c32 : index
      %va = vector.load %a[%w, %l, %c0, %c0] : memref<$Wx32x$NAx$PAx$T>, vector<$NAx$PAx$T>
      %vb = vector.load %b[%w, %l, %c0, %c0] : memref<$Wx32x$NBx$PAx$T>, vector<$NBx$PAx$T>
      %vc = vector.load %c[%w, %l, %c0, %c0] : memref<$Wx32x2x2xf32>, vector<2x2xf32>
      %vd = nvgpu.mma.sync (%va, %vb, %vc) {mmaShape = [16, 8, $K]$TF32} : (vector<$NAx$PAx$T>, vector<$NBx$PAx$T>, vector<2x2xf32>) -> vector<2x2xf32>
      vector.store %vd, %d[%w, %l, %c0, %c0] : memref<$Wx32x2x2xf32>, vector<2x2xf32>
)";

enum class MmaType { F16, BF16, TF32, F16K8 };

void checkMma(MmaType type, int warps, unsigned seed) {
  const bool k8 = type == MmaType::TF32 || type == MmaType::F16K8;
  const int K = k8 ? 8 : 16;
  const int nA = k8 ? 4 : 8; // elements per lane
  const int nB = k8 ? 2 : 4;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2, 2);
  // Matrices per warp, and the values as the element type holds them.
  std::vector<double> A(warps * 16 * K), B(warps * K * 8), C(warps * 16 * 8);
  std::vector<uint16_t> a16(warps * 32 * nA), b16(warps * 32 * nB);
  std::vector<float> a32(warps * 32 * nA), b32(warps * 32 * nB);
  std::vector<float> c(warps * 32 * 4), d(warps * 32 * 4, -7.0f);
  auto make = [&](uint16_t &bits, float &f32) -> double {
    float x = dist(rng);
    if (type == MmaType::F16 || type == MmaType::F16K8) {
      bits = f16Bits(x);
      return f16Value(bits);
    }
    if (type == MmaType::BF16) {
      uint32_t u;
      std::memcpy(&u, &x, 4);
      bits = static_cast<uint16_t>(u >> 16); // truncation: any bf16 value
      return bf16Value(bits);
    }
    uint32_t u; // an exact tf32 value: 10 fraction bits
    std::memcpy(&u, &x, 4);
    u &= 0xffffe000u;
    std::memcpy(&f32, &u, 4);
    return f32;
  };
  for (int w = 0; w < warps; ++w)
    for (int lane = 0; lane < 32; ++lane) {
      int row, col;
      for (int i = 0; i < nA; ++i) {
        if (type == MmaType::TF32)
          isaA1688tf32(lane, i, row, col);
        else if (type == MmaType::F16K8)
          isaA1688f16(lane, i, row, col);
        else
          isaA16816(lane, i, row, col);
        size_t at = (w * 32 + lane) * nA + i;
        A[(w * 16 + row) * K + col] = make(a16[at], a32[at]);
      }
      for (int i = 0; i < nB; ++i) {
        if (type == MmaType::TF32)
          isaB1688tf32(lane, i, row, col);
        else if (type == MmaType::F16K8)
          isaB1688f16(lane, i, row, col);
        else
          isaB16816(lane, i, row, col);
        size_t at = (w * 32 + lane) * nB + i;
        B[(w * K + row) * 8 + col] = make(b16[at], b32[at]);
      }
      for (int i = 0; i < 4; ++i) {
        isaC16816(lane, i, row, col);
        float x = dist(rng);
        c[(w * 32 + lane) * 4 + i] = x;
        C[(w * 16 + row) * 8 + col] = x;
      }
    }
  int pa = type == MmaType::TF32 ? 1 : 2;
  std::string t = type == MmaType::BF16   ? "bf16"
                  : type == MmaType::TF32 ? "f32"
                                          : "f16";
  std::vector<std::pair<std::string, std::string>> kv = {
      {"W", std::to_string(warps)},
      {"NA", std::to_string(nA / pa)},
      {"NB", std::to_string(nB / pa)},
      {"PA", std::to_string(pa)},
      {"K", std::to_string(K)},
      {"TF32", type == MmaType::TF32 ? ", tf32Enabled" : ""},
      {"T", t}};
  std::string text =
      subst(subst(kMmaKernel, {{"LAUNCH", launch(32 * warps, kMmaBody)}}), kv);
  std::vector<int64_t> shA = {warps, 32, nA / pa, pa},
                       shB = {warps, 32, nB / pa, pa}, shC = {warps, 32, 2, 2};
  EmulatedBuffer ba = type == MmaType::TF32 ? buf(a32, shA) : buf(a16, shA);
  EmulatedBuffer bb = type == MmaType::TF32 ? buf(b32, shB) : buf(b16, shB);
  ASSERT_EQ(run(text, "mma", {ba, bb, buf(c, shC), buf(d, shC)}), "");
  for (int w = 0; w < warps; ++w)
    for (int lane = 0; lane < 32; ++lane)
      for (int i = 0; i < 4; ++i) {
        int row, col;
        isaC16816(lane, i, row, col);
        double ref = C[(w * 16 + row) * 8 + col], mag = std::fabs(ref);
        for (int k = 0; k < K; ++k) {
          double p = A[(w * 16 + row) * K + k] * B[(w * K + k) * 8 + col];
          ref += p;
          mag += std::fabs(p);
        }
        double got = d[(w * 32 + lane) * 4 + i];
        EXPECT_NEAR(got, ref, 1e-6 * mag)
            << "warp " << w << " lane " << lane << " d" << i << " (row " << row
            << ", col " << col << "), seed " << seed;
      }
}

} // namespace

TEST(GPUEmulatorMma, F16m16n8k16EqualsMatrixProduct) {
  for (unsigned seed = 1; seed <= 3; ++seed)
    checkMma(MmaType::F16, 1, seed);
}
TEST(GPUEmulatorMma, BF16m16n8k16TwoWarps) { checkMma(MmaType::BF16, 2, 7); }
TEST(GPUEmulatorMma, TF32m16n8k8) { checkMma(MmaType::TF32, 1, 11); }
TEST(GPUEmulatorMma, F16m16n8k8) { checkMma(MmaType::F16K8, 2, 13); }

//===----------------------------------------------------------------------===//
// ldmatrix
//===----------------------------------------------------------------------===//

namespace {
const char *kLdMatrixKernel = R"(
  func.func @ldm(%src: memref<32x8xf16>, %out: memref<32x$Tx2xf16>) {
$LAUNCH
    return
  }
)";
const char *kLdMatrixBody = R"(
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8 = arith.constant 8 : index
      scf.for %j = %c0 to %c8 step %c1 {
        %v = memref.load %src[%tx, %j] : memref<32x8xf16>
        memref.store %v, %sm[%tx, %j] : memref<32x8xf16, #gpu.address_space<workgroup>>
      }
      gpu.barrier
      %rows = arith.constant $ROWS : index
      %row = arith.remui %tx, %rows : index
      %r = nvgpu.ldmatrix %sm[%row, %c0] {numTiles = $T : i32, transpose = $TR} : memref<32x8xf16, #gpu.address_space<workgroup>> -> vector<$Tx2xf16>
      vector.store %r, %out[%tx, %c0, %c0] : memref<32x$Tx2xf16>, vector<$Tx2xf16>
)";

void checkLdMatrix(int tiles, bool trans) {
  // Matrix i is rows 8i..8i+7 of `src`; element (r, c) holds 8r + c.
  std::vector<uint16_t> src(32 * 8), out(32 * tiles * 2, 0);
  for (int r = 0; r < 32; ++r)
    for (int c = 0; c < 8; ++c)
      src[r * 8 + c] = f16Bits(static_cast<float>(r * 8 + c));
  std::string text =
      subst(subst(kLdMatrixKernel,
                  {{"LAUNCH", launch(32, kLdMatrixBody,
                                     "workgroup(%sm : memref<32x8xf16, "
                                     "#gpu.address_space<workgroup>>)")}}),
            {{"ROWS", std::to_string(8 * tiles)},
             {"TR", trans ? "true" : "false"},
             {"T", std::to_string(tiles)}});
  ASSERT_EQ(run(text, "ldm", {buf(src, {32, 8}), buf(out, {32, tiles, 2})}),
            "");
  // PTX ISA, ldmatrix: for .m8n8 .b16, thread `laneid` holds elements
  // (row = laneid >> 2, col = (laneid % 4) * 2 + j) of each matrix; with
  // .trans the matrix is read column-major: element (row, col) of the
  // fragment is element (col, row) of the stored matrix.
  for (int lane = 0; lane < 32; ++lane)
    for (int i = 0; i < tiles; ++i)
      for (int j = 0; j < 2; ++j) {
        int row = lane >> 2, col = (lane % 4) * 2 + j;
        int sr = trans ? col : row, sc = trans ? row : col;
        float want = static_cast<float>((8 * i + sr) * 8 + sc);
        EXPECT_EQ(f16Value(out[(lane * tiles + i) * 2 + j]), want)
            << "x" << tiles << (trans ? ".trans" : "") << " lane " << lane
            << " matrix " << i << " element " << j;
      }
}
} // namespace

TEST(GPUEmulatorLdMatrix, X1) { checkLdMatrix(1, false); }
TEST(GPUEmulatorLdMatrix, X2) { checkLdMatrix(2, false); }
TEST(GPUEmulatorLdMatrix, X4) { checkLdMatrix(4, false); }
TEST(GPUEmulatorLdMatrix, X1Trans) { checkLdMatrix(1, true); }
TEST(GPUEmulatorLdMatrix, X2Trans) { checkLdMatrix(2, true); }
TEST(GPUEmulatorLdMatrix, X4Trans) { checkLdMatrix(4, true); }

TEST(GPUEmulatorLdMatrix, MisalignedRowIsReported) {
  std::string body = R"(
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %r = nvgpu.ldmatrix %sm[%c0, %c1] {numTiles = 1 : i32, transpose = false} : memref<32x16xf16, #gpu.address_space<workgroup>> -> vector<1x2xf16>
)";
  std::string text = "func.func @f() {\n" +
                     launch(32, body,
                            "workgroup(%sm : memref<32x16xf16, "
                            "#gpu.address_space<workgroup>>)") +
                     "    return\n  }\n";
  std::string err = run(text, "f", {});
  EXPECT_NE(err.find("not 16-byte aligned"), std::string::npos) << err;
}

//===----------------------------------------------------------------------===//
// Shuffles
//===----------------------------------------------------------------------===//

TEST(GPUEmulatorShuffle, AllModes) {
  const char *kernel = R"(
  func.func @shfl(%in: memref<64xi32>, %out: memref<64xi32>, %valid: memref<64xi1>) {
$LAUNCH
    return
  }
)";
  const char *body = R"(
      %v = memref.load %in[%tx] : memref<64xi32>
      %off = arith.constant $OFF : i32
      %w = arith.constant 32 : i32
      %r, %ok = gpu.shuffle $MODE %v, %off, %w : i32
      memref.store %r, %out[%tx] : memref<64xi32>
      memref.store %ok, %valid[%tx] : memref<64xi1>
)";
  std::vector<int32_t> in(64);
  for (int i = 0; i < 64; ++i)
    in[i] = 1000 + i;
  for (std::string mode : {"xor", "down", "up", "idx"})
    for (int off : {1, 2, 5, 16, 31}) {
      std::vector<int32_t> out(64, -1);
      std::vector<uint8_t> valid(64, 7);
      std::string text = subst(subst(kernel, {{"LAUNCH", launch(64, body)}}),
                               {{"OFF", std::to_string(off)}, {"MODE", mode}});
      ASSERT_EQ(
          run(text, "shfl", {buf(in, {64}), buf(out, {64}), buf(valid, {64})}),
          "");
      for (int t = 0; t < 64; ++t) {
        // shfl.sync: the source lane within the thread's warp; out of
        // range keeps the thread's own value.
        int lane = t % 32, src;
        if (mode == "xor")
          src = lane ^ off;
        else if (mode == "down")
          src = lane + off;
        else if (mode == "up")
          src = lane - off;
        else
          src = off;
        bool ok = src >= 0 && src <= 31;
        int32_t want = ok ? in[t - lane + src] : in[t];
        EXPECT_EQ(out[t], want) << mode << " " << off << " thread " << t;
        EXPECT_EQ(valid[t], ok ? 1 : 0)
            << mode << " " << off << " thread " << t;
      }
    }
}

TEST(GPUEmulatorShuffle, DivergentShuffleIsReported) {
  const char *body = R"(
      %c16 = arith.constant 16 : index
      %lo = arith.cmpi ult, %tx, %c16 : index
      scf.if %lo {
        %v = arith.constant 1.0 : f32
        %o = arith.constant 1 : i32
        %w = arith.constant 32 : i32
        %r, %ok = gpu.shuffle xor %v, %o, %w : f32
      }
)";
  std::string text =
      "func.func @f() {\n" + launch(32, body) + "    return\n  }\n";
  std::string err = run(text, "f", {});
  EXPECT_NE(err.find("16 of the 32 threads of a warp"), std::string::npos)
      << err;
}
