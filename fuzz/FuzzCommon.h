//===- FuzzCommon.h - helpers shared by the libFuzzer targets ---*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// The structured fuzzers (builder, differential) read their input front to
// back, one decision per byte, so that a seed can be written by hand (see
// fuzz/make_corpus.py) and a mutation of one byte changes one decision.
// Past the end of the input every read returns 0: any prefix is a valid
// input, and the empty input is the simplest problem.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_FUZZ_FUZZCOMMON_H
#define ATTN_FUZZ_FUZZCOMMON_H

#include "attn/IR/AttnOps.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

namespace attn::fuzz {

class ByteReader {
public:
  ByteReader(const uint8_t *data, size_t size) : data(data), size(size) {}

  uint8_t byte() { return pos < size ? data[pos++] : 0; }
  /// A value in [0, n).
  unsigned pick(unsigned n) { return n ? byte() % n : 0; }
  bool flag() { return byte() & 1; }
  /// Element `byte() % N` of a table.
  template <typename T, size_t N> T from(const T (&table)[N]) {
    return table[byte() % N];
  }
  bool exhausted() const { return pos >= size; }
  size_t remaining() const { return pos < size ? size - pos : 0; }

private:
  const uint8_t *data;
  size_t size;
  size_t pos = 0;
};

/// Collects the diagnostics of a context instead of printing them: the
/// fuzzers expect errors, and print them only when they report a failure.
class CollectDiagnostics {
public:
  explicit CollectDiagnostics(mlir::MLIRContext &ctx)
      : os(text), handler(&ctx, [this](mlir::Diagnostic &d) {
          os << d.getLocation() << ": " << d << "\n";
          return mlir::success();
        }) {}
  const std::string &str() { return text; }

private:
  std::string text;
  llvm::raw_string_ostream os;
  mlir::ScopedDiagnosticHandler handler;
};

/// Reports a failed property of the fuzzed code and aborts, so that libFuzzer
/// keeps the input as a crash.
[[noreturn]] inline void fail(const std::string &what) {
  llvm::errs() << "\n==== attn fuzzer: property violated ====\n"
               << what << "\n";
  llvm::errs().flush();
  std::abort();
}

/// Every upstream dialect and extension plus attn, built once: what the
/// builder and differential fuzzers lower through.
inline const mlir::DialectRegistry &fullRegistry() {
  static mlir::DialectRegistry *r = [] {
    auto *reg = new mlir::DialectRegistry();
    mlir::registerAllDialects(*reg);
    mlir::registerAllExtensions(*reg);
    reg->insert<mlir::attn::AttnDialect>();
    return reg;
  }();
  return *r;
}

} // namespace attn::fuzz

#endif // ATTN_FUZZ_FUZZCOMMON_H
