//===- NpyTest.cpp - tests for .npy reading and writing -------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// The fixtures below are the exact bytes NumPy 2.4 writes (np.save, and
// np.lib.format.write_array with version=(2, 0)), each file dumped into a
// C string literal; the comment above each says what was saved.
//
//===----------------------------------------------------------------------===//

#include "attn/Support/Npy.h"
#include "attn/Reference/Reference.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>

using namespace attn::npy;

namespace {

// clang-format off
// kF4_2x3: 152 bytes, np.save of [[0.0, 0.5, 1.0], [1.5, 2.0, 2.5]]
static const char kF4_2x3[] =
    "\x93NUMPY\x01\x00v\x00{'desc"
    "r': '<f4', 'fort"
    "ran_order': Fals"
    "e, 'shape': (2, "
    "3), }           "
    "                "
    "                "
    "               \x0a"
    "\x00\x00\x00\x00\x00\x00\x00?\x00\x00\x80?\x00\x00\xc0?"
    "\x00\x00\x00@\x00\x00 @"
;
// kF8Scalar: 136 bytes, np.save of -2.25
static const char kF8Scalar[] =
    "\x93NUMPY\x01\x00v\x00{'desc"
    "r': '<f8', 'fort"
    "ran_order': Fals"
    "e, 'shape': (), "
    "}               "
    "                "
    "                "
    "               \x0a"
    "\x00\x00\x00\x00\x00\x00\x02\xc0"
;
// kF2_5: 138 bytes, np.save of [1.0, -0.0, 65504.0, inf, 5.960464477539063e-08]
static const char kF2_5[] =
    "\x93NUMPY\x01\x00v\x00{'desc"
    "r': '<f2', 'fort"
    "ran_order': Fals"
    "e, 'shape': (5,)"
    ", }             "
    "                "
    "                "
    "               \x0a"
    "\x00<\x00\x80\xff{\x00|\x01\x00"
;
// kI4_2x2: 144 bytes, np.save of [[1, -2], [2147483647, -2147483648]]
static const char kI4_2x2[] =
    "\x93NUMPY\x01\x00v\x00{'desc"
    "r': '<i4', 'fort"
    "ran_order': Fals"
    "e, 'shape': (2, "
    "2), }           "
    "                "
    "                "
    "               \x0a"
    "\x01\x00\x00\x00\xfe\xff\xff\xff\xff\xff\xff\x7f\x00\x00\x00\x80"
;
// kI8Empty: 128 bytes, np.save of []
static const char kI8Empty[] =
    "\x93NUMPY\x01\x00v\x00{'desc"
    "r': '<i8', 'fort"
    "ran_order': Fals"
    "e, 'shape': (0, "
    "3), }           "
    "                "
    "                "
    "               \x0a"
;
// kB1_3: 131 bytes, np.save of [True, False, True]
static const char kB1_3[] =
    "\x93NUMPY\x01\x00v\x00{'desc"
    "r': '|b1', 'fort"
    "ran_order': Fals"
    "e, 'shape': (3,)"
    ", }             "
    "                "
    "                "
    "               \x0a"
    "\x01\x00\x01"
;
// kU1_2x2x1: 132 bytes, np.save of [[[0], [1]], [[254], [255]]]
static const char kU1_2x2x1[] =
    "\x93NUMPY\x01\x00v\x00{'desc"
    "r': '|u1', 'fort"
    "ran_order': Fals"
    "e, 'shape': (2, "
    "2, 1), }        "
    "                "
    "                "
    "               \x0a"
    "\x00\x01\xfe\xff"
;
// kF4V2: 136 bytes, np.save of [1.5, -3.0]
static const char kF4V2[] =
    "\x93NUMPY\x02\x00t\x00\x00\x00{'de"
    "scr': '<f4', 'fo"
    "rtran_order': Fa"
    "lse, 'shape': (2"
    ",), }           "
    "                "
    "                "
    "               \x0a"
    "\x00\x00\xc0?\x00\x00@\xc0"
;
// kFortran: 152 bytes, np.save of [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
static const char kFortran[] =
    "\x93NUMPY\x01\x00v\x00{'desc"
    "r': '<f4', 'fort"
    "ran_order': True"
    ", 'shape': (2, 3"
    "), }            "
    "                "
    "                "
    "               \x0a"
    "\x00\x00\x00\x00\x00\x00@@\x00\x00\x80?\x00\x00\x80@"
    "\x00\x00\x00@\x00\x00\xa0@"
;
// kBigEndian: 132 bytes, np.save of [1.0]
static const char kBigEndian[] =
    "\x93NUMPY\x01\x00v\x00{'desc"
    "r': '>f4', 'fort"
    "ran_order': Fals"
    "e, 'shape': (1,)"
    ", }             "
    "                "
    "                "
    "               \x0a"
    "?\x80\x00\x00"
;
// clang-format on

template <size_t N> std::vector<char> bytesOf(const char (&s)[N]) {
  return std::vector<char>(s, s + N - 1); // drop the literal's NUL
}

Array parseOk(const std::vector<char> &file) {
  Array a;
  EXPECT_EQ(parse(file.data(), file.size(), a), "");
  return a;
}

std::vector<double> doublesOf(const Array &a) {
  std::vector<double> v;
  EXPECT_EQ(toDoubles(a, v), "");
  return v;
}

std::string tempPath(const std::string &name) {
  return ::testing::TempDir() + "attn_npy_test_" + name + ".npy";
}

void writeFile(const std::string &path, const std::vector<char> &bytes) {
  std::FILE *f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  if (!bytes.empty()) {
    ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), f), bytes.size());
  }
  std::fclose(f);
}

/// Error from reading `bytes` both from memory and through a file; the two
/// must agree on success or failure.
std::string errorOf(const std::vector<char> &bytes) {
  Array a, b;
  std::string e1 = parse(bytes.data(), bytes.size(), a);
  std::string path = tempPath("malformed");
  writeFile(path, bytes);
  std::string e2 = read(path, b);
  std::remove(path.c_str());
  EXPECT_EQ(e1.empty(), e2.empty()) << e1 << " | " << e2;
  return e1;
}

/// A numpy-style file with an arbitrary header dict and data.
std::vector<char> handMade(const std::string &dict, size_t dataBytes,
                           int major = 1) {
  std::vector<char> f = {
      '\x93', 'N', 'U', 'M', 'P', 'Y', static_cast<char>(major), 0};
  std::string h = dict + "\n";
  if (major == 1) {
    f.push_back(static_cast<char>(h.size() & 0xff));
    f.push_back(static_cast<char>(h.size() >> 8));
  } else {
    for (int i = 0; i < 4; ++i)
      f.push_back(static_cast<char>((h.size() >> (8 * i)) & 0xff));
  }
  f.insert(f.end(), h.begin(), h.end());
  f.insert(f.end(), dataBytes, '\0');
  return f;
}

//===----------------------------------------------------------------------===//
// NumPy-written files
//===----------------------------------------------------------------------===//

TEST(Npy, ReadsNumpyF4) {
  Array a = parseOk(bytesOf(kF4_2x3));
  EXPECT_EQ(a.dtype, "<f4");
  EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(doublesOf(a), (std::vector<double>{0, 0.5, 1, 1.5, 2, 2.5}));
  std::vector<float> f;
  ASSERT_EQ(toFloats(a, f), "");
  EXPECT_EQ(f, (std::vector<float>{0, 0.5f, 1, 1.5f, 2, 2.5f}));
}

TEST(Npy, ReadsNumpyScalarF8) {
  Array a = parseOk(bytesOf(kF8Scalar));
  EXPECT_EQ(a.dtype, "<f8");
  EXPECT_TRUE(a.shape.empty());
  EXPECT_EQ(doublesOf(a), (std::vector<double>{-2.25}));
}

TEST(Npy, ReadsNumpyF2) {
  Array a = parseOk(bytesOf(kF2_5));
  EXPECT_EQ(a.dtype, "<f2");
  EXPECT_EQ(a.shape, (std::vector<int64_t>{5}));
  std::vector<double> v = doublesOf(a);
  EXPECT_EQ(v[0], 1.0);
  EXPECT_EQ(v[1], 0.0);
  EXPECT_TRUE(std::signbit(v[1]));
  EXPECT_EQ(v[2], 65504.0);
  EXPECT_EQ(v[3], std::numeric_limits<double>::infinity());
  EXPECT_EQ(v[4], std::ldexp(1.0, -24));
}

TEST(Npy, ReadsNumpyIntegers) {
  Array a = parseOk(bytesOf(kI4_2x2));
  EXPECT_EQ(a.dtype, "<i4");
  EXPECT_EQ(doublesOf(a),
            (std::vector<double>{1, -2, 2147483647.0, -2147483648.0}));
  Array e = parseOk(bytesOf(kI8Empty));
  EXPECT_EQ(e.dtype, "<i8");
  EXPECT_EQ(e.shape, (std::vector<int64_t>{0, 3}));
  EXPECT_TRUE(e.bytes.empty());
  EXPECT_TRUE(doublesOf(e).empty());
}

TEST(Npy, ReadsNumpyBoolAndU8) {
  Array b = parseOk(bytesOf(kB1_3));
  EXPECT_EQ(b.dtype, "|b1");
  EXPECT_EQ(doublesOf(b), (std::vector<double>{1, 0, 1}));
  Array u = parseOk(bytesOf(kU1_2x2x1));
  EXPECT_EQ(u.dtype, "|u1");
  EXPECT_EQ(u.shape, (std::vector<int64_t>{2, 2, 1}));
  EXPECT_EQ(doublesOf(u), (std::vector<double>{0, 1, 254, 255}));
}

TEST(Npy, ReadsNumpyVersion2) {
  Array a = parseOk(bytesOf(kF4V2));
  EXPECT_EQ(a.dtype, "<f4");
  EXPECT_EQ(doublesOf(a), (std::vector<double>{1.5, -3.0}));
}

TEST(Npy, WritesExactlyWhatNumpyWrites) {
  for (const std::vector<char> &file :
       {bytesOf(kF4_2x3), bytesOf(kF8Scalar), bytesOf(kF2_5), bytesOf(kI4_2x2),
        bytesOf(kI8Empty), bytesOf(kB1_3), bytesOf(kU1_2x2x1)}) {
    Array a = parseOk(file);
    std::vector<char> out;
    ASSERT_EQ(serialize(a, out), "");
    EXPECT_EQ(out, file) << "dtype " << a.dtype;
    EXPECT_EQ(out.size() - a.bytes.size(), 128u); // header aligned to 64
  }
}

TEST(Npy, RejectsFortranOrderAndBigEndian) {
  std::string err = errorOf(bytesOf(kFortran));
  EXPECT_NE(err.find("fortran_order"), std::string::npos) << err;
  err = errorOf(bytesOf(kBigEndian));
  EXPECT_NE(err.find("big-endian"), std::string::npos) << err;
}

//===----------------------------------------------------------------------===//
// Round trips
//===----------------------------------------------------------------------===//

TEST(Npy, RoundTripEveryDtypeThroughFiles) {
  struct Case {
    std::string dtype;
    std::vector<int64_t> shape;
    std::vector<double> values;
  };
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<Case> cases = {
      {"<f8", {2, 2}, {0.1, -1e300, inf, std::ldexp(1.0, -1074)}},
      {"<f4", {3}, {0.5, -inf, static_cast<double>(3.0e38f)}},
      {"<f2", {2, 1, 2}, {0.5, -65504, std::ldexp(1.0, -24), 1.0 / 1024}},
      {"<i4", {4}, {0, -1, 2147483647.0, -2147483648.0}},
      {"<i8", {2}, {-9007199254740992.0, 9007199254740992.0}},
      {"|b1", {2, 2}, {1, 0, 0, 1}},
      {"|u1", {3}, {0, 128, 255}},
      {"|i1", {4}, {-128, -1, 0, 127}},
      {"<f8", {}, {42.0}},
      {"<f4", {0}, {}},
      {"<i4", {2, 0, 3}, {}},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.dtype);
    Array a;
    ASSERT_EQ(fromDoubles(c.values, c.shape, c.dtype, a), "");
    std::string path = tempPath("roundtrip");
    ASSERT_EQ(write(path, a), "");
    Array b;
    ASSERT_EQ(read(path, b), "");
    EXPECT_EQ(b.dtype, c.dtype);
    EXPECT_EQ(b.shape, c.shape);
    EXPECT_EQ(b.bytes, a.bytes);
    std::vector<double> back;
    std::vector<int64_t> shape;
    ASSERT_EQ(readDoubles(path, back, shape), "");
    EXPECT_EQ(shape, c.shape);
    EXPECT_EQ(back, c.values);
    std::remove(path.c_str());
  }
}

TEST(Npy, FloatHelpers) {
  Array a;
  ASSERT_EQ(fromFloats({1.5f, -0.25f}, {2}, "<f4", a), "");
  std::vector<float> f;
  ASSERT_EQ(toFloats(a, f), "");
  EXPECT_EQ(f, (std::vector<float>{1.5f, -0.25f}));
  // Doubles round to nearest even on the way to f4, and past the float
  // range to inf.
  ASSERT_EQ(fromDoubles({0.1, 1e39, -1e39}, {3}, "<f4", a), "");
  ASSERT_EQ(toFloats(a, f), "");
  EXPECT_EQ(f[0], 0.1f);
  EXPECT_EQ(f[1], std::numeric_limits<float>::infinity());
  EXPECT_EQ(f[2], -std::numeric_limits<float>::infinity());
  // f8 -> float conversion also saturates to inf instead of misbehaving.
  ASSERT_EQ(fromDoubles({1e300}, {1}, "<f8", a), "");
  ASSERT_EQ(toFloats(a, f), "");
  EXPECT_EQ(f[0], std::numeric_limits<float>::infinity());
  // i8 beyond 2^24 rounds once to the nearest float.
  ASSERT_EQ(fromDoubles({16777217.0}, {1}, "<i8", a), "");
  ASSERT_EQ(toFloats(a, f), "");
  EXPECT_EQ(f[0], 16777216.0f);
}

TEST(Npy, ConversionErrors) {
  Array a;
  EXPECT_NE(fromDoubles({1.5}, {1}, "<i4", a), "");
  EXPECT_NE(fromDoubles({2147483648.0}, {1}, "<i4", a), "");
  EXPECT_NE(fromDoubles({256}, {1}, "|u1", a), "");
  EXPECT_NE(fromDoubles({-1}, {1}, "|u1", a), "");
  EXPECT_NE(fromDoubles({128}, {1}, "|i1", a), "");
  EXPECT_NE(fromDoubles({std::nan("")}, {1}, "<i8", a), "");
  EXPECT_NE(fromDoubles({1, 2}, {3}, "<f8", a), "");
  EXPECT_NE(fromDoubles({1}, {1}, "<c8", a), "");
  EXPECT_NE(fromDoubles({}, {-1}, "<f8", a), "");
  // '|b1' stores any nonzero as true.
  ASSERT_EQ(fromDoubles({0, -3, std::nan("")}, {3}, "|b1", a), "");
  EXPECT_EQ(a.bytes, (std::vector<char>{0, 1, 1}));

  Array bad{"<f4", {2}, std::vector<char>(7)};
  std::vector<double> d;
  EXPECT_NE(toDoubles(bad, d), "");
  std::vector<char> out;
  EXPECT_NE(serialize(bad, out), "");
  EXPECT_NE(write(tempPath("bad"), bad), "");
  Array badType{"<c8", {1}, std::vector<char>(8)};
  EXPECT_NE(write(tempPath("bad"), badType), "");
  Array ok{"<f4", {1}, std::vector<char>(4)};
  EXPECT_NE(write("/nonexistent-dir/x.npy", ok), "");
}

//===----------------------------------------------------------------------===//
// f16
//===----------------------------------------------------------------------===//

TEST(NpyHalf, KnownValues) {
  EXPECT_EQ(halfToFloat(0x3c00), 1.0f);
  EXPECT_EQ(halfToFloat(0xc000), -2.0f);
  EXPECT_EQ(halfToFloat(0x7bff), 65504.0f);
  EXPECT_EQ(halfToFloat(0x0400), std::ldexp(1.0f, -14));
  EXPECT_EQ(halfToFloat(0x03ff), std::ldexp(1023.0f, -24));
  EXPECT_EQ(halfToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(halfToFloat(0x3555), 0.333251953125f);
  EXPECT_TRUE(std::signbit(halfToFloat(0x8000)));
  EXPECT_EQ(halfToFloat(0xfc00), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(halfToFloat(0x7e00)));
  EXPECT_TRUE(std::isnan(halfToFloat(0xfc01)));

  EXPECT_EQ(floatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(65519.99f), 0x7bff);
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00);
  EXPECT_EQ(floatToHalf(-1e10f), 0xfc00);
  EXPECT_EQ(floatToHalf(0.1f), 0x2e66);
  EXPECT_EQ(floatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -25)), 0x0000); // tie -> even 0
  EXPECT_EQ(floatToHalf(std::ldexp(3.0f, -25)), 0x0002); // tie -> even 2
  EXPECT_EQ(floatToHalf(std::ldexp(1023.5f, -24)), 0x0400);
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(3.0f, -11)), 0x3c02);
  EXPECT_EQ(floatToHalf(std::numeric_limits<float>::infinity()), 0x7c00);
  uint16_t nan = floatToHalf(std::nanf(""));
  EXPECT_EQ(nan & 0x7c00, 0x7c00);
  EXPECT_NE(nan & 0x03ff, 0);
  // From double, rounding happens once: 1 + 2^-11 + 2^-40 is above the tie
  // (via float it would first become the tie 1 + 2^-11 and then 1.0).
  EXPECT_EQ(doubleToHalf(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)),
            0x3c01);
  EXPECT_EQ(doubleToHalf(std::ldexp(1.0, -30)), 0x0000);
  EXPECT_EQ(doubleToHalf(1e300), 0x7c00);
}

TEST(NpyHalf, EveryHalfRoundTrips) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float f = halfToFloat(static_cast<uint16_t>(h));
    if (std::isnan(f)) {
      EXPECT_TRUE((h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0);
      continue;
    }
    ASSERT_EQ(floatToHalf(f), static_cast<uint16_t>(h)) << std::hex << h;
    // Independent implementation in attn::ref agrees.
    ASSERT_EQ(attn::ref::roundToF16(f), f);
  }
}

TEST(NpyHalf, RoundingMatchesBruteForceNearest) {
  // All finite positive halves in increasing order (bit order is value
  // order for non-negative halves).
  std::vector<double> halves;
  for (uint32_t h = 0; h <= 0x7bff; ++h)
    halves.push_back(halfToFloat(static_cast<uint16_t>(h)));
  uint64_t s = 12345;
  for (int iter = 0; iter < 200000; ++iter) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    // Bias the exponent towards the half range (and a bit beyond it).
    uint32_t bits = static_cast<uint32_t>(s >> 32);
    uint32_t exp = 96 + static_cast<uint32_t>((s >> 20) % 48); // 2^-31..2^16
    bits = (bits & 0x807fffffu) | (exp << 23);
    if (iter % 4 == 0)
      bits &= 0xffffe000u | (1u << 12); // many exact ties
    float x;
    std::memcpy(&x, &bits, sizeof x);
    double a = std::fabs(static_cast<double>(x));
    // Brute force: nearest half, ties to the even encoding.
    auto it = std::upper_bound(halves.begin(), halves.end(), a);
    uint16_t want;
    if (it == halves.end()) {
      want = a >= 65520.0 ? 0x7c00 : 0x7bff;
    } else {
      size_t hi = static_cast<size_t>(it - halves.begin());
      size_t lo = hi - 1;
      double dlo = a - halves[lo], dhi = halves[hi] - a;
      if (dlo < dhi)
        want = static_cast<uint16_t>(lo);
      else if (dhi < dlo)
        want = static_cast<uint16_t>(hi);
      else
        want = static_cast<uint16_t>(lo % 2 == 0 ? lo : hi);
    }
    if (std::signbit(x))
      want |= 0x8000;
    ASSERT_EQ(floatToHalf(x), want) << x;
    ASSERT_EQ(attn::ref::roundToF16(x), halfToFloat(want)) << x;
  }
}

//===----------------------------------------------------------------------===//
// Malformed files
//===----------------------------------------------------------------------===//

TEST(NpyMalformed, MissingAndEmptyFiles) {
  Array a;
  std::string err = read(tempPath("does_not_exist"), a);
  EXPECT_NE(err.find("cannot open"), std::string::npos) << err;
  EXPECT_NE(errorOf({}), "");
}

TEST(NpyMalformed, BadMagic) {
  std::vector<char> f = bytesOf(kF4_2x3);
  f[1] = 'X';
  EXPECT_NE(errorOf(f).find("magic"), std::string::npos);
  std::vector<char> text = {'h', 'e', 'l', 'l', 'o'};
  EXPECT_NE(errorOf(text).find("magic"), std::string::npos);
}

TEST(NpyMalformed, Truncated) {
  std::vector<char> f = bytesOf(kF4_2x3);
  std::vector<char> cutData(f.begin(), f.end() - 1);
  std::string err = errorOf(cutData);
  EXPECT_NE(err.find("truncated data"), std::string::npos) << err;
  std::vector<char> cutHeader(f.begin(), f.begin() + 60);
  err = errorOf(cutHeader);
  EXPECT_NE(err.find("truncated header"), std::string::npos) << err;
  std::vector<char> extra = f;
  extra.push_back(0);
  err = errorOf(extra);
  EXPECT_NE(err.find("size mismatch"), std::string::npos) << err;
  // Every prefix of a valid file is rejected without crashing.
  for (size_t n = 0; n < f.size(); ++n) {
    Array a;
    EXPECT_NE(parse(f.data(), n, a), "") << n;
  }
}

TEST(NpyMalformed, HugeShapes) {
  // Element count overflows int64.
  std::string err =
      errorOf(handMade("{'descr': '<f8', 'fortran_order': False, 'shape': "
                       "(4294967296, 4294967296), }",
                       8));
  EXPECT_NE(err, "");
  // Element count fits, byte count (x8) overflows.
  EXPECT_NE(errorOf(handMade("{'descr': '<f8', 'fortran_order': False, "
                             "'shape': (2305843009213693952,), }",
                             8)),
            "");
  // A dimension that overflows while parsing.
  EXPECT_NE(errorOf(handMade("{'descr': '<f8', 'fortran_order': False, "
                             "'shape': (99999999999999999999999,), }",
                             8)),
            "");
  // Plausible but far larger than the file: rejected before allocating.
  err = errorOf(handMade("{'descr': '<f4', 'fortran_order': False, 'shape': "
                         "(1000000000, 1000), }",
                         16));
  EXPECT_NE(err.find("truncated data"), std::string::npos) << err;
  // Header length field far beyond the file.
  std::vector<char> f = bytesOf(kF4_2x3);
  f[8] = '\xff';
  f[9] = '\xff';
  EXPECT_NE(errorOf(f).find("truncated header"), std::string::npos);
  std::vector<char> v2 = bytesOf(kF4V2);
  v2[8] = v2[9] = v2[10] = v2[11] = '\xff';
  EXPECT_NE(errorOf(v2), "");
}

TEST(NpyMalformed, BadHeaders) {
  const char *bad[] = {
      "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }",
      "{'descr': '<U3', 'fortran_order': False, 'shape': (1,), }",
      "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }",
      "{'descr': '<f4', 'fortran_order': False, 'shape': [1], }",
      "{'descr': '<f4', 'fortran_order': false, 'shape': (1,), }",
      "{'descr': '<f4', 'shape': (1,), }",
      ("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, "
       "'shape': (1,), }"),
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), } junk",
      "{'descr': '<f4, 'fortran_order': False, 'shape': (1,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1,",
      "('<f4', False, (1,))",
      "",
  };
  for (const char *h : bad) {
    std::string err = errorOf(handMade(h, 4));
    EXPECT_NE(err, "") << h;
  }
  // Unsupported versions.
  std::vector<char> f = bytesOf(kF4_2x3);
  f[6] = 9;
  EXPECT_NE(errorOf(f).find("version"), std::string::npos);
}

TEST(NpyMalformed, LenientButValidHeaders) {
  // Double quotes, no trailing comma, other key order, Python 2 long
  // suffix, extra whitespace, and a 1-byte type spelled with '<'.
  Array a;
  std::vector<char> f = handMade(
      "{ \"shape\" : ( 2L , ) ,\"fortran_order\":False, \"descr\":'<u1' }", 2);
  ASSERT_EQ(parse(f.data(), f.size(), a), "");
  EXPECT_EQ(a.dtype, "|u1");
  EXPECT_EQ(a.shape, (std::vector<int64_t>{2}));
  std::vector<char> g = handMade(
      "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }", 8, 3);
  EXPECT_EQ(parse(g.data(), g.size(), a), "");
}

TEST(NpyMalformed, CorruptedHeaderBytesNeverCrash) {
  // Flip each header byte to a few values; the parser must answer every time
  // (success or a message), and never accept a size that disagrees.
  std::vector<char> orig = bytesOf(kI4_2x2);
  const char repl[] = {'\0', '(', ')', ',', '9', '\'', '}', '\xff', ' '};
  for (size_t pos = 0; pos < 128; ++pos)
    for (char c : repl) {
      std::vector<char> f = orig;
      f[pos] = c;
      Array a;
      std::string err = parse(f.data(), f.size(), a);
      if (err.empty()) {
        EXPECT_EQ(validate(a), "");
      }
    }
}

} // namespace
