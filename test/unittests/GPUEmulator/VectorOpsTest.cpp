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
