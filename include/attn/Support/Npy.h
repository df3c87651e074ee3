//===- Npy.h - NumPy .npy reading and writing -------------------*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// Reads and writes NumPy .npy files: format versions 1.0, 2.0 and 3.0
// headers, little-endian, C order only. Plain C++17 and the STL only.
//
// Supported dtypes (as written in the header's 'descr'): '<f4', '<f8', '<f2',
// '<i4', '<i8', '|b1', '|u1', and also '|i1'. For the one-byte types '<', '>'
// and '=' are accepted on reading and normalized to '|'. bfloat16 is not a
// NumPy dtype and is not supported.
//
// No function here aborts or throws on malformed input: each returns an
// empty string on success or a one-line error message.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_SUPPORT_NPY_H
#define ATTN_SUPPORT_NPY_H

#include <cstdint>
#include <string>
#include <vector>

namespace attn::npy {

/// An array as stored in a .npy file: `bytes` holds the elements in C order,
/// little-endian, exactly as in the file.
struct Array {
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<char> bytes;
};

/// Size in bytes of one element of a supported dtype, 0 if unsupported.
int64_t itemSize(const std::string &dtype);

/// Number of elements of `shape` (1 for rank 0) into `n`; false on a negative
/// dimension or int64 overflow.
bool numElements(const std::vector<int64_t> &shape, int64_t &n);

/// Checks that `a` has a supported dtype and bytes.size() matching its shape.
std::string validate(const Array &a);

/// Reads `path` into `out`.
std::string read(const std::string &path, Array &out);
/// Parses the contents of a .npy file held in memory.
std::string parse(const char *data, size_t size, Array &out);

/// Writes `a` to `path` with the header NumPy itself writes (version 1.0
/// unless the header needs 2.0; header padded to a multiple of 64 bytes).
std::string write(const std::string &path, const Array &a);
/// Serializes `a` into `out` (the bytes `write` would put in the file).
std::string serialize(const Array &a, std::vector<char> &out);

/// Converts any supported dtype to doubles (bool -> 0/1; int64 values beyond
/// 2^53 are rounded).
std::string toDoubles(const Array &a, std::vector<double> &out);
/// Converts any supported dtype to floats (rounding to nearest even).
std::string toFloats(const Array &a, std::vector<float> &out);

/// Builds an array of `dtype` from values. Floating dtypes round to nearest
/// even (overflow to inf); integer dtypes ('<i4', '<i8', '|u1', '|i1') require
/// finite integral values in range; '|b1' stores nonzero (and NaN) as true.
std::string fromDoubles(const std::vector<double> &values,
                        const std::vector<int64_t> &shape,
                        const std::string &dtype, Array &out);
std::string fromFloats(const std::vector<float> &values,
                       const std::vector<int64_t> &shape,
                       const std::string &dtype, Array &out);

/// Convenience: read a file and convert to doubles.
std::string readDoubles(const std::string &path, std::vector<double> &values,
                        std::vector<int64_t> &shape);
/// Convenience: write doubles as `dtype` (default '<f8').
std::string writeDoubles(const std::string &path,
                         const std::vector<double> &values,
                         const std::vector<int64_t> &shape,
                         const std::string &dtype = "<f8");

/// IEEE binary16 conversions. doubleToHalf / floatToHalf round to nearest
/// even directly from the argument (no double rounding), keep subnormals,
/// overflow to inf and map NaN to a quiet NaN of the same sign.
uint16_t doubleToHalf(double x);
uint16_t floatToHalf(float x);
float halfToFloat(uint16_t h);

} // namespace attn::npy

#endif // ATTN_SUPPORT_NPY_H
