// Minimal .npy reader/writer for the benchmark's C++ programs: C-order
// little-endian arrays of float32 ('<f4') or int32 ('<i4'), format 1.0-3.0.
#pragma once

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace npy {

struct Array {
  std::string dtype; // "<f4" or "<i4"
  std::vector<int64_t> shape;
  std::vector<char> data; // raw bytes, C order
  int64_t size() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
  template <typename T> T *as() { return reinterpret_cast<T *>(data.data()); }
  template <typename T> const T *as() const {
    return reinterpret_cast<const T *>(data.data());
  }
};

inline std::string field(const std::string &h, const std::string &key) {
  size_t p = h.find("'" + key + "'");
  if (p == std::string::npos)
    throw std::runtime_error("npy header lacks " + key);
  p = h.find(':', p);
  return h.substr(p + 1);
}

inline Array read(const std::string &path) {
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f)
    throw std::runtime_error("cannot open " + path);
  unsigned char magic[8];
  if (std::fread(magic, 1, 8, f) != 8 || magic[0] != 0x93 ||
      std::string(reinterpret_cast<char *>(magic + 1), 5) != "NUMPY")
    throw std::runtime_error(path + ": not a .npy file");
  uint32_t hlen = 0;
  if (magic[6] == 1) {
    unsigned char b[2];
    if (std::fread(b, 1, 2, f) != 2)
      throw std::runtime_error(path + ": short header");
    hlen = b[0] | (b[1] << 8);
  } else {
    unsigned char b[4];
    if (std::fread(b, 1, 4, f) != 4)
      throw std::runtime_error(path + ": short header");
    hlen = b[0] | (b[1] << 8) | (b[2] << 16) | (uint32_t(b[3]) << 24);
  }
  std::string h(hlen, ' ');
  if (std::fread(&h[0], 1, hlen, f) != hlen)
    throw std::runtime_error(path + ": short header");
  Array a;
  std::string d = field(h, "descr");
  size_t q1 = d.find('\''), q2 = d.find('\'', q1 + 1);
  a.dtype = d.substr(q1 + 1, q2 - q1 - 1);
  if (a.dtype != "<f4" && a.dtype != "<i4")
    throw std::runtime_error(path + ": dtype " + a.dtype + " unsupported");
  if (field(h, "fortran_order").find("False") > 2)
    throw std::runtime_error(path + ": Fortran order unsupported");
  std::string s = field(h, "shape");
  s = s.substr(s.find('(') + 1, s.find(')') - s.find('(') - 1);
  size_t pos = 0;
  while (pos < s.size()) {
    size_t c = s.find(',', pos);
    std::string tok =
        s.substr(pos, c == std::string::npos ? std::string::npos : c - pos);
    if (tok.find_first_of("0123456789") != std::string::npos)
      a.shape.push_back(std::stoll(tok));
    if (c == std::string::npos)
      break;
    pos = c + 1;
  }
  a.data.resize(size_t(a.size()) * 4);
  if (std::fread(a.data.data(), 1, a.data.size(), f) != a.data.size())
    throw std::runtime_error(path + ": short data");
  std::fclose(f);
  return a;
}

inline void write(const std::string &path, const std::string &dtype,
                  const std::vector<int64_t> &shape, const void *data,
                  size_t bytes) {
  std::string h =
      "{'descr': '" + dtype + "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i)
    h += std::to_string(shape[i]) +
         (shape.size() == 1 || i + 1 < shape.size() ? ", " : "");
  h += "), }";
  while ((10 + h.size() + 1) % 64)
    h += ' ';
  h += '\n';
  FILE *f = std::fopen(path.c_str(), "wb");
  if (!f)
    throw std::runtime_error("cannot write " + path);
  unsigned char head[10] = {0x93,
                            'N',
                            'U',
                            'M',
                            'P',
                            'Y',
                            1,
                            0,
                            static_cast<unsigned char>(h.size() & 0xff),
                            static_cast<unsigned char>(h.size() >> 8)};
  std::fwrite(head, 1, 10, f);
  std::fwrite(h.data(), 1, h.size(), f);
  std::fwrite(data, 1, bytes, f);
  std::fclose(f);
}

} // namespace npy
