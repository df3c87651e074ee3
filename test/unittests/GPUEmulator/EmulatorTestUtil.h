//===- EmulatorTestUtil.h - helpers of the GPU emulator tests ---*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TEST_GPUEMULATOR_EMULATORTESTUTIL_H
#define ATTN_TEST_GPUEMULATOR_EMULATORTESTUTIL_H

#include "attn/GPUEmulator/Emulator.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringExtras.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace emutest {

/// Parses `text` and emulates its function `fn` on `args`; returns the
/// error message ("" on success).
inline std::string run(const std::string &text, llvm::StringRef fn,
                       std::vector<mlir::attn::EmulatedBuffer> args,
                       mlir::attn::EmulatorOptions opts = {}) {
  mlir::DialectRegistry registry;
  mlir::attn::registerEmulatorDialects(registry);
  mlir::MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  auto module = mlir::parseSourceString<mlir::ModuleOp>(text, &ctx);
  if (!module)
    return "parse error";
  llvm::Error e = mlir::attn::emulate(*module, fn, args, opts);
  if (!e)
    return "";
  std::string msg = llvm::toString(std::move(e));
  return msg.empty() ? "unknown error" : msg;
}

template <typename T>
mlir::attn::EmulatedBuffer buf(std::vector<T> &v, std::vector<int64_t> shape) {
  return mlir::attn::EmulatedBuffer::memref(
      v.data(), static_cast<int64_t>(v.size() * sizeof(T)), std::move(shape));
}

/// Replaces every `$key` in `text`.
inline std::string subst(std::string text,
                         std::vector<std::pair<std::string, std::string>> kv) {
  for (auto &[k, v] : kv) {
    std::string key = "$" + k;
    for (size_t p = text.find(key); p != std::string::npos;
         p = text.find(key, p + v.size()))
      text.replace(p, key.size(), v);
  }
  return text;
}

inline uint16_t f16Bits(float x) {
  _Float16 h = static_cast<_Float16>(x);
  uint16_t b;
  std::memcpy(&b, &h, 2);
  return b;
}
/// bf16 bits of `x`, rounded to nearest even (x finite).
inline uint16_t bf16Bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  u += 0x7FFF + ((u >> 16) & 1);
  return static_cast<uint16_t>(u >> 16);
}
inline float f16Value(uint16_t b) {
  _Float16 h;
  std::memcpy(&h, &b, 2);
  return static_cast<float>(h);
}
inline float bf16Value(uint16_t b) {
  uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

/// A launch of one block of `threads` threads around `body`.
inline std::string launch(int threads, const std::string &body,
                          const std::string &attrib = "") {
  return "    %c1_l = arith.constant 1 : index\n"
         "    %cT_l = arith.constant " +
         std::to_string(threads) +
         " : index\n"
         "    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1_l, %gy = %c1_l, "
         "%gz = %c1_l) threads(%tx, %ty, %tz) in (%sx = %cT_l, %sy = %c1_l, "
         "%sz = %c1_l) " +
         attrib + " {\n" + body +
         "      gpu.terminator\n"
         "    }\n";
}

/// The LLVM struct of a warpgroup's m64nNk16 f32 accumulators: N / 2
/// registers per thread.
inline std::string accumulatorType(int n) {
  std::string s = "!llvm.struct<(";
  for (int i = 0; i < n / 2; ++i)
    s += i ? ", f32" : "f32";
  return s + ")>";
}

/// A wgmma matrix descriptor %`name` (i64) of a tile at shared byte
/// `tileOff` of a buffer whose address is %base64, with leading and stride
/// byte offsets `lbo` and `sbo` and layout type `swizzle` (0 none, 1 128 B,
/// 2 64 B, 3 32 B), following the PTX ISA's "Matrix Descriptor Format":
/// bits 0-13 address >> 4, 16-29 LBO >> 4, 32-45 SBO >> 4, 62-63 swizzle.
/// Needs %c4_64 (4 : i64) and %c3fff (16383 : i64).
inline std::string wgmmaDescriptor(const std::string &name, int64_t tileOff,
                                   int64_t lbo, int64_t sbo, int64_t swizzle) {
  int64_t hi = ((sbo >> 4) & 0x3FFF) | (swizzle << 30);
  int64_t lo = ((lbo >> 4) & 0x3FFF) << 16;
  std::string n = "%" + name;
  auto cst = [&](const std::string &suffix, int64_t v) {
    return "      " + n + suffix + " = arith.constant " + std::to_string(v) +
           " : i64\n";
  };
  return cst("_off", tileOff) + cst("_lo", lo) + cst("_hi", hi << 32) +
         "      " + n + "_a = arith.addi %base64, " + n + "_off : i64\n" +
         "      " + n + "_s = arith.shrui " + n + "_a, %c4_64 : i64\n" +
         "      " + n + "_m = arith.andi " + n + "_s, %c3fff : i64\n" +
         "      " + n + "_l = arith.ori " + n + "_m, " + n + "_lo : i64\n" +
         "      " + n + " = arith.ori " + n + "_l, " + n + "_hi : i64\n";
}

} // namespace emutest

#endif // ATTN_TEST_GPUEMULATOR_EMULATORTESTUTIL_H
