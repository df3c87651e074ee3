//===- VectorOpsTest.cpp - vector ops on per-thread vectors ---------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// The vector ops that rearrange fragments (slices, shuffles, transposes,
// bit casts, reductions), checked on host code against hand-computed values.
//
//===----------------------------------------------------------------------===//

#include "EmulatorTestUtil.h"

#include <cmath>

using namespace emutest;

TEST(GPUEmulatorVector, RearrangementsAndReductions) {
  const char *text = R"(
  func.func @v(%out: memref<16xf32>, %outi: memref<2xi32>) {
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c12 = arith.constant 12 : index
    %a = arith.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]> : vector<4x2xf32>
    %s = vector.extract_strided_slice %a {offsets = [1, 0], sizes = [2, 2], strides = [1, 1]} : vector<4x2xf32> to vector<2x2xf32>
    %z = arith.constant dense<0.0> : vector<4x4xf32>
    %ins = vector.insert_strided_slice %s, %z {offsets = [2, 1], strides = [1, 1]} : vector<2x2xf32> into vector<4x4xf32>
    %sh = vector.shuffle %a, %a [3, 4] : vector<4x2xf32>, vector<4x2xf32>
    %t = vector.transpose %s, [1, 0] : vector<2x2xf32> to vector<2x2xf32>
    %shf = vector.shape_cast %sh : vector<2x2xf32> to vector<4xf32>
    vector.store %shf, %out[%c0] : memref<16xf32>, vector<4xf32>
    %tf = vector.shape_cast %t : vector<2x2xf32> to vector<4xf32>
    vector.store %tf, %out[%c4] : memref<16xf32>, vector<4xf32>
    %row = vector.extract %ins[2] : vector<4xf32> from vector<4x4xf32>
    vector.store %row, %out[%c8] : memref<16xf32>, vector<4xf32>
    %flat = vector.shape_cast %a : vector<4x2xf32> to vector<8xf32>
    %sum = vector.reduction <add>, %flat : vector<8xf32> into f32
    %max = vector.reduction <maximumf>, %flat : vector<8xf32> into f32
    %e = vector.extract %a[2, 1] : f32 from vector<4x2xf32>
    %nine = arith.constant 9.0 : f32
    %ten = arith.constant 10.0 : f32
    %fe = vector.from_elements %nine, %ten : vector<2xf32>
    %i1 = arith.constant 1 : index
    %x = vector.extract %fe[%i1] : f32 from vector<2xf32>
    %tail = vector.from_elements %sum, %max, %e, %x : vector<4xf32>
    vector.store %tail, %out[%c12] : memref<16xf32>, vector<4xf32>
    %h = arith.constant dense<[1.0, 2.0]> : vector<2xf16>
    %bits = vector.bitcast %h : vector<2xf16> to vector<1xi32>
    %b = vector.broadcast %nine : f32 to vector<2x2xf32>
    %bb = vector.extract %b[1, 1] : f32 from vector<2x2xf32>
    %bi = arith.fptosi %bb : f32 to i32
    %two = vector.insert %bi, %bits [0] : i32 into vector<1xi32>
    %pair = vector.from_elements %bi, %bi : vector<2xi32>
    %both = vector.insert_strided_slice %bits, %pair {offsets = [0], strides = [1]} : vector<1xi32> into vector<2xi32>
    vector.store %both, %outi[%c0] : memref<2xi32>, vector<2xi32>
    return
  }
)";
  std::vector<float> out(16, -1);
  std::vector<int32_t> outi(2, -1);
  ASSERT_EQ(run(text, "v", {buf(out, {16}), buf(outi, {2})}), "");
  std::vector<float> want = {7, 8, 1, 2, 3, 5, 4, 6, 0, 3, 4, 0, 36, 8, 6, 10};
  for (int i = 0; i < 16; ++i)
    EXPECT_EQ(out[i], want[i]) << i;
  // f16 1.0 is 0x3C00, 2.0 is 0x4000; element 0 in the low half.
  EXPECT_EQ(outi[0], 0x40003C00);
  EXPECT_EQ(outi[1], 9);
}

TEST(GPUEmulatorControlFlow, WhileWithPerThreadTripCounts) {
  // Each thread halves its id until it is below 2, counting the steps.
  const char *body = R"(
      %c2 = arith.constant 2 : index
      %c1 = arith.constant 1 : index
      %c0 = arith.constant 0 : index
      %r:2 = scf.while (%x = %tx, %n = %c0) : (index, index) -> (index, index) {
        %go = arith.cmpi uge, %x, %c2 : index
        scf.condition(%go) %x, %n : index, index
      } do {
      ^bb0(%x: index, %n: index):
        %h = arith.divui %x, %c2 : index
        %m = arith.addi %n, %c1 : index
        scf.yield %h, %m : index, index
      }
      memref.store %r#1, %out[%tx] : memref<64xindex>
)";
  std::string text = "func.func @f(%out: memref<64xindex>) {\n" +
                     launch(64, body) + "    return\n  }\n";
  std::vector<int64_t> out(64, -1);
  ASSERT_EQ(run(text, "f", {buf(out, {64})}), "");
  for (int64_t t = 0; t < 64; ++t) {
    int64_t n = 0;
    for (int64_t x = t; x >= 2; x /= 2)
      ++n;
    EXPECT_EQ(out[t], n) << t;
  }
}

TEST(GPUEmulatorArith, IntegerAndConversionSemantics) {
  // Host code (no launch): each result against its definition in the arith
  // dialect's documentation.
  const char *text = R"(
  func.func @a(%out: memref<20xi64>, %fout: memref<6xf32>) {
    %m7 = arith.constant -7 : i32
    %c2 = arith.constant 2 : i32
    %c3 = arith.constant 3 : i32
    %m1i8 = arith.constant -1 : i8
    %t = arith.constant true
    %r0 = arith.floordivsi %m7, %c2 : i32
    %r1 = arith.ceildivsi %m7, %c2 : i32
    %r2 = arith.divsi %m7, %c2 : i32
    %r3 = arith.remsi %m7, %c3 : i32
    %r4 = arith.divui %m7, %c2 : i32
    %r5 = arith.shrsi %m7, %c2 : i32
    %r6 = arith.shrui %m7, %c2 : i32
    %r7 = arith.shli %m7, %c3 : i32
    %b8 = arith.cmpi ult, %c2, %m7 : i32
    %r8 = arith.extui %b8 : i1 to i32
    %r9 = arith.extsi %t : i1 to i32
    %r10 = arith.extui %m1i8 : i8 to i32
    %r11 = arith.extsi %m1i8 : i8 to i32
    %big = arith.constant 300 : i32
    %tr = arith.trunci %big : i32 to i8
    %r12 = arith.extsi %tr : i8 to i32
    %r13 = arith.maxui %m7, %c2 : i32
    %r14 = arith.minsi %m7, %c2 : i32
    %r15 = arith.xori %m7, %c3 : i32
    %i16 = arith.index_castui %m7 : i32 to index
    %i17 = arith.index_cast %m7 : i32 to index
    %rs = arith.constant 2.75 : f32
    %ms = arith.constant -2.75 : f32
    %r18 = arith.fptosi %ms : f32 to i32
    %r19 = arith.fptoui %rs : f32 to i32
    %vals = vector.from_elements %r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8, %r9, %r10, %r11, %r12, %r13, %r14, %r15, %r18, %r19 : vector<18xi32>
    %wide = arith.extsi %vals : vector<18xi32> to vector<18xi64>
    %c0 = arith.constant 0 : index
    vector.store %wide, %out[%c0] : memref<20xi64>, vector<18xi64>
    %w16 = arith.index_cast %i16 : index to i64
    %w17 = arith.index_cast %i17 : index to i64
    %c18 = arith.constant 18 : index
    %c19 = arith.constant 19 : index
    memref.store %w16, %out[%c18] : memref<20xi64>
    memref.store %w17, %out[%c19] : memref<20xi64>
    %f0 = arith.uitofp %m1i8 : i8 to f32
    %f1 = arith.sitofp %m1i8 : i8 to f32
    %h = arith.constant 65519.0 : f32
    %hh = arith.truncf %h : f32 to f16
    %f2 = arith.extf %hh : f16 to f32
    %hi = arith.constant 65520.0 : f32
    %hi16 = arith.truncf %hi : f32 to f16
    %f3 = arith.extf %hi16 : f16 to f32
    %nan = arith.constant 0x7FC00000 : f32
    %one = arith.constant 1.0 : f32
    %f4 = arith.maximumf %nan, %one : f32
    %f5 = arith.maxnumf %nan, %one : f32
    %fv = vector.from_elements %f0, %f1, %f2, %f3, %f4, %f5 : vector<6xf32>
    vector.store %fv, %fout[%c0] : memref<6xf32>, vector<6xf32>
    return
  }
)";
  std::vector<int64_t> out(20, 0);
  std::vector<float> fout(6, 0);
  ASSERT_EQ(run(text, "a", {buf(out, {20}), buf(fout, {6})}), "");
  uint32_t u = static_cast<uint32_t>(-7);
  std::vector<int64_t> want = {
      -4,                           // floordivsi rounds down
      -3,                           // ceildivsi rounds up
      -3,                           // divsi truncates
      -1,                           // remsi takes the dividend's sign
      static_cast<int32_t>(u / 2),  // divui on the bits
      -2,                           // shrsi
      static_cast<int32_t>(u >> 2), // shrui
      -56,                          // shli
      1,                            // 2 <u 0xFFFFFFF9
      -1,                           // extsi true
      255,                          // extui i8 -1
      -1,                           // extsi i8 -1
      44,                           // trunci 300 to i8
      -7,                           // maxui picks 0xFFFFFFF9
      -7,                           // minsi
      -7 ^ 3,                       // xori
      -2,                           // fptosi truncates
      2,                            // fptoui truncates
      static_cast<int64_t>(u),      // index_castui zero-extends
      -7};                          // index_cast sign-extends
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_EQ(out[i], want[i]) << i;
  EXPECT_EQ(fout[0], 255.0f);
  EXPECT_EQ(fout[1], -1.0f);
  EXPECT_EQ(fout[2], 65504.0f);     // rounds to the largest f16
  EXPECT_TRUE(std::isinf(fout[3])); // the tie at 65520 rounds to inf
  EXPECT_TRUE(std::isnan(fout[4])); // maximumf propagates NaN
  EXPECT_EQ(fout[5], 1.0f);         // maxnumf ignores it
}
