//===- Npy.cpp - NumPy .npy reading and writing ---------------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// The format (numpy/lib/format.py): the magic "\x93NUMPY", a major and a
// minor version byte, a little-endian header length (2 bytes in 1.0, 4 bytes
// in 2.0 and 3.0), then the header: a Python dict literal with the keys
// 'descr', 'fortran_order' and 'shape', padded with spaces and a final '\n'.
// The raw element data follows. Every size read from a file is checked for
// overflow and against the number of bytes the file actually has before
// anything is allocated.
//
//===----------------------------------------------------------------------===//

#include "attn/Support/Npy.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>

using namespace attn::npy;

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
/// Headers larger than this are rejected (NumPy itself refuses 10000+).
constexpr uint64_t kMaxHeaderLen = 1u << 20;

//===----------------------------------------------------------------------===//
// Little-endian byte access, independent of the host's byte order.
//===----------------------------------------------------------------------===//

uint64_t loadLE(const char *p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i)
    v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

void storeLE(char *p, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) {
    p[i] = static_cast<char>(static_cast<unsigned char>(v & 0xff));
    v >>= 8;
  }
}

float bitsToFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

double bitsToDouble(uint64_t u) {
  double d;
  std::memcpy(&d, &u, sizeof d);
  return d;
}

uint32_t floatToBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

uint64_t doubleToBits(double d) {
  uint64_t u;
  std::memcpy(&u, &d, sizeof u);
  return u;
}

/// Rounds a non-negative finite double to an integer, ties to even.
double roundHalfEven(double v) {
  double fl = std::floor(v);
  double diff = v - fl;
  if (diff > 0.5)
    return fl + 1.0;
  if (diff < 0.5)
    return fl;
  return std::fmod(fl, 2.0) == 0.0 ? fl : fl + 1.0;
}

/// Normalizes a 'descr' string to the canonical spelling, or "" if it is not
/// supported. `why` says why not.
std::string canonicalDtype(const std::string &descr, std::string &why) {
  if (descr.size() == 3) {
    char order = descr[0];
    std::string kind = descr.substr(1);
    if (kind == "b1" || kind == "u1" || kind == "i1") {
      if (order == '|' || order == '<' || order == '>' || order == '=')
        return "|" + kind;
    } else if (kind == "f2" || kind == "f4" || kind == "f8" || kind == "i4" ||
               kind == "i8") {
      if (order == '<')
        return descr;
      if (order == '>') {
        why = "big-endian dtype '" + descr + "' is not supported";
        return "";
      }
    }
  }
  why = "unsupported dtype '" + descr + "'";
  return "";
}

std::string shapeStr(const std::vector<int64_t> &shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1)
    s += ",";
  return s + ")";
}

/// Byte count of an array of `shape` and `dtype`; false on overflow.
bool byteCount(const std::vector<int64_t> &shape, const std::string &dtype,
               uint64_t &nbytes) {
  int64_t n;
  if (!attn::npy::numElements(shape, n))
    return false;
  uint64_t item = static_cast<uint64_t>(itemSize(dtype));
  if (item != 0 &&
      static_cast<uint64_t>(n) > std::numeric_limits<uint64_t>::max() / item)
    return false;
  nbytes = static_cast<uint64_t>(n) * item;
  return nbytes <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
}

//===----------------------------------------------------------------------===//
// Header parsing
//===----------------------------------------------------------------------===//

/// A parser for the small subset of Python literals a .npy header uses.
class HeaderParser {
public:
  HeaderParser(const char *p, size_t n) : p(p), n(n) {}

  std::string parse(Array &out) {
    bool haveDescr = false, haveOrder = false, haveShape = false;
    std::string descr;
    bool fortran = false;
    std::vector<int64_t> shape;

    skipWs();
    if (!eat('{'))
      return "header is not a dict";
    while (true) {
      skipWs();
      if (eat('}'))
        break;
      std::string key;
      if (std::string err = parseString(key); !err.empty())
        return "header key: " + err;
      skipWs();
      if (!eat(':'))
        return "header: expected ':' after '" + key + "'";
      skipWs();
      if (key == "descr") {
        if (haveDescr)
          return "header: duplicate key 'descr'";
        haveDescr = true;
        if (at() != '\'' && at() != '"')
          return "header: 'descr' is not a string (structured dtypes are "
                 "not supported)";
        if (std::string err = parseString(descr); !err.empty())
          return "header descr: " + err;
      } else if (key == "fortran_order") {
        if (haveOrder)
          return "header: duplicate key 'fortran_order'";
        haveOrder = true;
        if (eatWord("True"))
          fortran = true;
        else if (eatWord("False"))
          fortran = false;
        else
          return "header: 'fortran_order' is not True or False";
      } else if (key == "shape") {
        if (haveShape)
          return "header: duplicate key 'shape'";
        haveShape = true;
        if (std::string err = parseShape(shape); !err.empty())
          return "header shape: " + err;
      } else {
        return "header: unexpected key '" + key + "'";
      }
      skipWs();
      if (eat(','))
        continue;
      if (eat('}'))
        break;
      return "header: expected ',' or '}'";
    }
    skipWs();
    if (pos != n)
      return "header: unexpected text after the dict";
    if (!haveDescr || !haveOrder || !haveShape)
      return "header: missing key (need 'descr', 'fortran_order', 'shape')";
    if (fortran)
      return "fortran_order=True is not supported (C order only)";
    std::string why;
    std::string dtype = canonicalDtype(descr, why);
    if (dtype.empty())
      return why;
    out.dtype = dtype;
    out.shape = std::move(shape);
    return "";
  }

private:
  const char *p;
  size_t n;
  size_t pos = 0;

  char at() const { return pos < n ? p[pos] : '\0'; }
  bool eat(char c) {
    if (pos < n && p[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  bool eatWord(const char *w) {
    size_t len = std::strlen(w);
    if (n - pos >= len && std::memcmp(p + pos, w, len) == 0) {
      pos += len;
      return true;
    }
    return false;
  }
  void skipWs() {
    while (pos < n && (p[pos] == ' ' || p[pos] == '\t' || p[pos] == '\n' ||
                       p[pos] == '\r'))
      ++pos;
  }

  std::string parseString(std::string &s) {
    char q = at();
    if (q != '\'' && q != '"')
      return "expected a quoted string";
    ++pos;
    size_t start = pos;
    while (pos < n && p[pos] != q) {
      if (p[pos] == '\\' || p[pos] == '\n')
        return "unsupported character in string";
      ++pos;
    }
    if (pos >= n)
      return "unterminated string";
    s.assign(p + start, pos - start);
    ++pos;
    return "";
  }

  std::string parseInt(int64_t &v) {
    if (at() == '-')
      return "negative dimension";
    if (at() < '0' || at() > '9')
      return "expected an integer";
    v = 0;
    while (at() >= '0' && at() <= '9') {
      int digit = at() - '0';
      if (v > (std::numeric_limits<int64_t>::max() - digit) / 10)
        return "dimension overflows int64";
      v = v * 10 + digit;
      ++pos;
    }
    if (!eat('L')) // Python 2 long suffix.
      eat('l');
    return "";
  }

  std::string parseShape(std::vector<int64_t> &shape) {
    if (!eat('('))
      return "expected a tuple";
    shape.clear();
    while (true) {
      skipWs();
      if (eat(')'))
        return "";
      int64_t v;
      if (std::string err = parseInt(v); !err.empty())
        return err;
      shape.push_back(v);
      if (shape.size() > 64)
        return "rank exceeds 64";
      skipWs();
      if (eat(','))
        continue;
      if (eat(')'))
        return "";
      return "expected ',' or ')'";
    }
  }
};

/// Checks magic and version in the first bytes of a file and computes where
/// the header text starts and ends.
std::string parsePreamble(const char *p, size_t n, uint64_t fileSize,
                          uint64_t &headerStart, uint64_t &headerEnd) {
  if (n == 0)
    return "truncated header: empty file";
  size_t cmp = n < kMagicLen ? n : kMagicLen;
  if (std::memcmp(p, kMagic, cmp) != 0)
    return "bad magic: not a .npy file";
  if (n < 8)
    return "truncated header: file has " + std::to_string(fileSize) + " bytes";
  unsigned major = static_cast<unsigned char>(p[6]);
  unsigned minor = static_cast<unsigned char>(p[7]);
  if (minor != 0 || major < 1 || major > 3)
    return "unsupported .npy format version " + std::to_string(major) + "." +
           std::to_string(minor);
  int lenBytes = major == 1 ? 2 : 4;
  headerStart = 8 + lenBytes;
  if (n < headerStart)
    return "truncated header: file has " + std::to_string(fileSize) + " bytes";
  uint64_t hlen = loadLE(p + 8, lenBytes);
  if (hlen > kMaxHeaderLen)
    return "header length " + std::to_string(hlen) + " is too large";
  headerEnd = headerStart + hlen;
  if (headerEnd > fileSize)
    return "truncated header: needs " + std::to_string(headerEnd) +
           " bytes, file has " + std::to_string(fileSize);
  return "";
}

/// Checks the element data size against the header's shape and dtype.
std::string checkDataSize(const Array &a, uint64_t available,
                          uint64_t &nbytes) {
  if (!byteCount(a.shape, a.dtype, nbytes))
    return "shape " + shapeStr(a.shape) + " is too large";
  if (nbytes > available)
    return "truncated data: shape " + shapeStr(a.shape) + " of " + a.dtype +
           " needs " + std::to_string(nbytes) + " bytes, file has " +
           std::to_string(available);
  if (nbytes < available)
    return "size mismatch: shape " + shapeStr(a.shape) + " of " + a.dtype +
           " needs " + std::to_string(nbytes) + " bytes, file has " +
           std::to_string(available);
  return "";
}

/// Closes a FILE on scope exit.
struct FileCloser {
  void operator()(std::FILE *f) const { std::fclose(f); }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

} // namespace

//===----------------------------------------------------------------------===//
// Public API
//===----------------------------------------------------------------------===//

int64_t attn::npy::itemSize(const std::string &dtype) {
  if (dtype == "<f8" || dtype == "<i8")
    return 8;
  if (dtype == "<f4" || dtype == "<i4")
    return 4;
  if (dtype == "<f2")
    return 2;
  if (dtype == "|b1" || dtype == "|u1" || dtype == "|i1")
    return 1;
  return 0;
}

bool attn::npy::numElements(const std::vector<int64_t> &shape, int64_t &n) {
  n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return false;
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d)
      return false;
    n *= d;
  }
  return true;
}

std::string attn::npy::validate(const Array &a) {
  if (itemSize(a.dtype) == 0)
    return "unsupported dtype '" + a.dtype + "'";
  uint64_t nbytes;
  if (!byteCount(a.shape, a.dtype, nbytes))
    return "invalid shape " + shapeStr(a.shape);
  if (nbytes != a.bytes.size())
    return "shape " + shapeStr(a.shape) + " of " + a.dtype + " needs " +
           std::to_string(nbytes) + " bytes, array has " +
           std::to_string(a.bytes.size());
  return "";
}

std::string attn::npy::parse(const char *data, size_t size, Array &out) {
  uint64_t headerStart, headerEnd;
  if (std::string err = parsePreamble(data, size, size, headerStart, headerEnd);
      !err.empty())
    return err;
  Array a;
  HeaderParser hp(data + headerStart, headerEnd - headerStart);
  if (std::string err = hp.parse(a); !err.empty())
    return err;
  uint64_t nbytes;
  if (std::string err = checkDataSize(a, size - headerEnd, nbytes);
      !err.empty())
    return err;
  a.bytes.assign(data + headerEnd, data + headerEnd + nbytes);
  out = std::move(a);
  return "";
}

std::string attn::npy::read(const std::string &path, Array &out) {
  FilePtr f(std::fopen(path.c_str(), "rb"));
  if (!f)
    return "cannot open '" + path + "': " + std::strerror(errno);
  if (std::fseek(f.get(), 0, SEEK_END) != 0)
    return "cannot seek in '" + path + "'";
  long endPos = std::ftell(f.get());
  if (endPos < 0 || std::fseek(f.get(), 0, SEEK_SET) != 0)
    return "cannot determine the size of '" + path + "'";
  const uint64_t fileSize = static_cast<uint64_t>(endPos);

  char pre[12];
  size_t preLen = fileSize < sizeof pre ? fileSize : sizeof pre;
  if (std::fread(pre, 1, preLen, f.get()) != preLen)
    return "read error on '" + path + "'";
  uint64_t headerStart, headerEnd;
  if (std::string err =
          parsePreamble(pre, preLen, fileSize, headerStart, headerEnd);
      !err.empty())
    return path + ": " + err;

  std::vector<char> header(headerEnd - headerStart);
  if (std::fseek(f.get(), static_cast<long>(headerStart), SEEK_SET) != 0 ||
      std::fread(header.data(), 1, header.size(), f.get()) != header.size())
    return path + ": read error in header";
  Array a;
  HeaderParser hp(header.data(), header.size());
  if (std::string err = hp.parse(a); !err.empty())
    return path + ": " + err;
  uint64_t nbytes;
  if (std::string err = checkDataSize(a, fileSize - headerEnd, nbytes);
      !err.empty())
    return path + ": " + err;
  a.bytes.resize(static_cast<size_t>(nbytes));
  if (nbytes &&
      std::fread(a.bytes.data(), 1, a.bytes.size(), f.get()) != a.bytes.size())
    return path + ": read error in data";
  out = std::move(a);
  return "";
}

std::string attn::npy::serialize(const Array &a, std::vector<char> &out) {
  if (std::string err = validate(a); !err.empty())
    return err;
  // Exactly what numpy.lib.format writes: sorted keys, repr() values, spare
  // spaces for growing the first axis, then padding so that magic, version,
  // length and header end on a multiple of 64 bytes.
  std::string header =
      "{'descr': '" + a.dtype +
      "', 'fortran_order': False, 'shape': " + shapeStr(a.shape) + ", }";
  if (!a.shape.empty()) {
    size_t digits = std::to_string(a.shape[0]).size();
    header.append(digits < 21 ? 21 - digits : 0, ' ');
  }
  const uint64_t hlen = header.size() + 1; // + '\n'
  int lenBytes = 2;
  uint64_t pad = 64 - (kMagicLen + 2 + lenBytes + hlen) % 64;
  if (hlen + pad > 0xffff) {
    lenBytes = 4;
    pad = 64 - (kMagicLen + 2 + lenBytes + hlen) % 64;
    if (hlen + pad > 0xffffffffu)
      return "header too large";
  }
  out.clear();
  out.reserve(kMagicLen + 2 + lenBytes + hlen + pad + a.bytes.size());
  out.insert(out.end(), kMagic, kMagic + kMagicLen);
  out.push_back(static_cast<char>(lenBytes == 2 ? 1 : 2));
  out.push_back(0);
  char len[4];
  storeLE(len, hlen + pad, lenBytes);
  out.insert(out.end(), len, len + lenBytes);
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), pad, ' ');
  out.push_back('\n');
  out.insert(out.end(), a.bytes.begin(), a.bytes.end());
  return "";
}

std::string attn::npy::write(const std::string &path, const Array &a) {
  std::vector<char> buf;
  if (std::string err = serialize(a, buf); !err.empty())
    return err;
  FilePtr f(std::fopen(path.c_str(), "wb"));
  if (!f)
    return "cannot create '" + path + "': " + std::strerror(errno);
  if (std::fwrite(buf.data(), 1, buf.size(), f.get()) != buf.size())
    return "write error on '" + path + "'";
  if (std::fflush(f.get()) != 0)
    return "write error on '" + path + "'";
  return "";
}

//===----------------------------------------------------------------------===//
// Conversions
//===----------------------------------------------------------------------===//

float attn::npy::halfToFloat(uint16_t h) {
  const bool neg = h & 0x8000;
  const unsigned exp = (h >> 10) & 0x1f;
  const unsigned mant = h & 0x3ff;
  float v;
  if (exp == 0)
    v = std::ldexp(static_cast<float>(mant), -24);
  else if (exp == 31)
    v = mant ? std::numeric_limits<float>::quiet_NaN()
             : std::numeric_limits<float>::infinity();
  else
    v = std::ldexp(static_cast<float>(mant + 1024), static_cast<int>(exp) - 25);
  return neg ? -v : v;
}

uint16_t attn::npy::doubleToHalf(double x) {
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  if (std::isnan(x))
    return sign | 0x7e00;
  const double a = std::fabs(x);
  // 65520 is halfway between 65504 (the largest half) and 65536; the tie
  // goes to the even neighbour, which is the overflow to inf.
  if (a >= 65520.0)
    return sign | 0x7c00;
  if (a < std::ldexp(1.0, -14)) {
    // Subnormal: a count of 2^-24 units; 1024 units is the smallest normal,
    // whose encoding 0x0400 is that count, so the carry needs no care.
    return sign | static_cast<uint16_t>(roundHalfEven(std::ldexp(a, 24)));
  }
  int e;
  std::frexp(a, &e); // a in [2^(e-1), 2^e): biased exponent e - 1 + 15.
  const unsigned m = static_cast<unsigned>(
      roundHalfEven(std::ldexp(a, 11 - e))); // [1024,2048]
  // A mantissa rounded up to 2048 carries into the exponent field.
  return sign | static_cast<uint16_t>((static_cast<unsigned>(e + 14) << 10) +
                                      (m - 1024));
}

uint16_t attn::npy::floatToHalf(float x) {
  return doubleToHalf(static_cast<double>(x));
}

std::string attn::npy::toDoubles(const Array &a, std::vector<double> &out) {
  if (std::string err = validate(a); !err.empty())
    return err;
  const int64_t item = itemSize(a.dtype);
  const size_t n = a.bytes.size() / static_cast<size_t>(item);
  out.resize(n);
  const char *p = a.bytes.data();
  for (size_t i = 0; i < n; ++i, p += item) {
    double v;
    if (a.dtype == "<f8")
      v = bitsToDouble(loadLE(p, 8));
    else if (a.dtype == "<f4")
      v = bitsToFloat(static_cast<uint32_t>(loadLE(p, 4)));
    else if (a.dtype == "<f2")
      v = halfToFloat(static_cast<uint16_t>(loadLE(p, 2)));
    else if (a.dtype == "<i8")
      v = static_cast<double>(static_cast<int64_t>(loadLE(p, 8)));
    else if (a.dtype == "<i4")
      v = static_cast<int32_t>(static_cast<uint32_t>(loadLE(p, 4)));
    else if (a.dtype == "|b1")
      v = *p != 0 ? 1.0 : 0.0;
    else if (a.dtype == "|i1")
      v = static_cast<signed char>(*p);
    else // |u1
      v = static_cast<unsigned char>(*p);
    out[i] = v;
  }
  return "";
}

std::string attn::npy::toFloats(const Array &a, std::vector<float> &out) {
  std::vector<double> d;
  if (std::string err = toDoubles(a, d); !err.empty())
    return err;
  out.resize(d.size());
  // Every dtype except f8 and i8 is exact in float; for those two the double
  // holds the exact value (f8) or a once-rounded one (i8 beyond 2^53).
  if (a.dtype == "<i8") {
    const char *p = a.bytes.data();
    for (size_t i = 0; i < d.size(); ++i, p += 8)
      out[i] = static_cast<float>(static_cast<int64_t>(loadLE(p, 8)));
    return "";
  }
  for (size_t i = 0; i < d.size(); ++i) {
    double v = d[i];
    // Beyond float's range (past the midpoint to 2^128) the value is inf;
    // the cast would be undefined behaviour.
    const double limit = std::ldexp(2.0 - std::ldexp(1.0, -24), 127);
    if (std::fabs(v) >= limit && !std::isinf(v))
      out[i] = std::signbit(v) ? -std::numeric_limits<float>::infinity()
                               : std::numeric_limits<float>::infinity();
    else
      out[i] = static_cast<float>(v);
  }
  return "";
}

std::string attn::npy::fromDoubles(const std::vector<double> &values,
                                   const std::vector<int64_t> &shape,
                                   const std::string &dtype, Array &out) {
  const int64_t item = itemSize(dtype);
  if (item == 0)
    return "unsupported dtype '" + dtype + "'";
  int64_t n;
  if (!numElements(shape, n))
    return "invalid shape " + shapeStr(shape);
  if (static_cast<uint64_t>(n) != values.size())
    return "shape " + shapeStr(shape) + " needs " + std::to_string(n) +
           " values, got " + std::to_string(values.size());
  Array a;
  a.dtype = dtype;
  a.shape = shape;
  a.bytes.resize(values.size() * static_cast<size_t>(item));
  char *p = a.bytes.data();
  const double floatLimit = std::ldexp(2.0 - std::ldexp(1.0, -24), 127);
  for (size_t i = 0; i < values.size(); ++i, p += item) {
    const double v = values[i];
    auto integral = [&](double lo, double hiExclusive) -> bool {
      return std::isfinite(v) && v == std::trunc(v) && v >= lo &&
             v < hiExclusive;
    };
    if (dtype == "<f8") {
      storeLE(p, doubleToBits(v), 8);
    } else if (dtype == "<f4") {
      float f = std::fabs(v) >= floatLimit && !std::isnan(v)
                    ? (std::signbit(v) ? -std::numeric_limits<float>::infinity()
                                       : std::numeric_limits<float>::infinity())
                    : static_cast<float>(v);
      storeLE(p, floatToBits(f), 4);
    } else if (dtype == "<f2") {
      storeLE(p, doubleToHalf(v), 2);
    } else if (dtype == "<i8") {
      if (!integral(-std::ldexp(1.0, 63), std::ldexp(1.0, 63)))
        return "value " + std::to_string(v) + " at " + std::to_string(i) +
               " is not representable as <i8";
      storeLE(p, static_cast<uint64_t>(static_cast<int64_t>(v)), 8);
    } else if (dtype == "<i4") {
      if (!integral(-std::ldexp(1.0, 31), std::ldexp(1.0, 31)))
        return "value " + std::to_string(v) + " at " + std::to_string(i) +
               " is not representable as <i4";
      storeLE(p, static_cast<uint32_t>(static_cast<int32_t>(v)), 4);
    } else if (dtype == "|i1") {
      if (!integral(-128.0, 128.0))
        return "value " + std::to_string(v) + " at " + std::to_string(i) +
               " is not representable as |i1";
      *p = static_cast<char>(static_cast<signed char>(v));
    } else if (dtype == "|u1") {
      if (!integral(0.0, 256.0))
        return "value " + std::to_string(v) + " at " + std::to_string(i) +
               " is not representable as |u1";
      *p = static_cast<char>(static_cast<unsigned char>(v));
    } else { // |b1
      *p = v != 0.0 ? 1 : 0;
    }
  }
  out = std::move(a);
  return "";
}

std::string attn::npy::fromFloats(const std::vector<float> &values,
                                  const std::vector<int64_t> &shape,
                                  const std::string &dtype, Array &out) {
  // float -> double is exact, so converting from the doubles rounds once.
  return fromDoubles(std::vector<double>(values.begin(), values.end()), shape,
                     dtype, out);
}

std::string attn::npy::readDoubles(const std::string &path,
                                   std::vector<double> &values,
                                   std::vector<int64_t> &shape) {
  Array a;
  if (std::string err = read(path, a); !err.empty())
    return err;
  if (std::string err = toDoubles(a, values); !err.empty())
    return path + ": " + err;
  shape = a.shape;
  return "";
}

std::string attn::npy::writeDoubles(const std::string &path,
                                    const std::vector<double> &values,
                                    const std::vector<int64_t> &shape,
                                    const std::string &dtype) {
  Array a;
  if (std::string err = fromDoubles(values, shape, dtype, a); !err.empty())
    return err;
  return write(path, a);
}
