//===- NpyFuzzer.cpp - the .npy reader on arbitrary bytes
//------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// attn-fuzz-npy: the input is the content of a .npy file, as attn-run
// --input reads it (lib/Support/Npy.cpp). The properties:
//  - parsing never crashes, over-allocates or trips a sanitizer;
//  - an array that parses converts to doubles, serializes, and re-parses to
//    the same dtype, shape and bytes.
//
//===----------------------------------------------------------------------===//

#include "attn/Support/Npy.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

static void fail(const char *what) {
  std::fprintf(stderr, "\n==== attn fuzzer: property violated ====\n%s\n",
               what);
  std::abort();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  attn::npy::Array a;
  if (!attn::npy::parse(reinterpret_cast<const char *>(data), size, a).empty())
    return 0;
  if (!attn::npy::validate(a).empty())
    fail("parse() accepted an array that validate() rejects");
  std::vector<double> values;
  if (!attn::npy::toDoubles(a, values).empty())
    fail("toDoubles() rejects a parsed array");
  std::vector<char> bytes;
  if (!attn::npy::serialize(a, bytes).empty())
    fail("serialize() rejects a parsed array");
  attn::npy::Array b;
  if (!attn::npy::parse(bytes.data(), bytes.size(), b).empty())
    fail("a serialized array does not parse");
  if (b.dtype != a.dtype || b.shape != a.shape || b.bytes != a.bytes)
    fail("serialize/parse does not round-trip");
  return 0;
}
