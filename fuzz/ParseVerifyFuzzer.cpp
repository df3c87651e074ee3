//===- ParseVerifyFuzzer.cpp - parser and verifier on arbitrary text
//-------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// attn-fuzz-parse: the input is MLIR text. It is parsed with the attn dialect
// and the upstream dialects specs use (func, tensor, arith) and verified. The
// properties:
//  - nothing crashes, leaks or trips a sanitizer, whatever the text;
//  - a module that verifies round-trips: its custom form and its generic form
//    parse and verify again, and printing the re-parsed custom form gives
//    the same text (the printer and the parser of attn ops agree).
//
// Seeds: fuzz/corpus/parse/ (the examples and the lit tests' inputs, split
// at `// -----`); dictionary: fuzz/attn.dict.
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"

#include "attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

using namespace mlir;

static const DialectRegistry &registry() {
  static DialectRegistry *r = [] {
    auto *reg = new DialectRegistry();
    reg->insert<mlir::attn::AttnDialect, func::FuncDialect,
                tensor::TensorDialect, arith::ArithDialect>();
    return reg;
  }();
  return *r;
}

static std::string print(Operation *op, bool generic) {
  std::string s;
  llvm::raw_string_ostream os(s);
  OpPrintingFlags flags;
  if (generic)
    flags.printGenericOpForm();
  op->print(os, flags);
  return s;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  MLIRContext ctx(registry(), MLIRContext::Threading::DISABLED);
  ::attn::fuzz::CollectDiagnostics diags(ctx);
  // The parser reads its buffer up to a terminating NUL, as a file read by
  // attn-opt or attn-run has; libFuzzer's buffer has none.
  std::string text(reinterpret_cast<const char *>(data), size);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &ctx);
  if (!module || failed(verify(*module)))
    return 0;

  std::string custom = print(*module, /*generic=*/false);
  OwningOpRef<ModuleOp> again = parseSourceString<ModuleOp>(custom, &ctx);
  if (!again || failed(verify(*again)))
    ::attn::fuzz::fail("a verified module does not re-parse from its custom "
                       "form:\n" +
                       custom + "\ndiagnostics:\n" + diags.str());
  std::string custom2 = print(*again, /*generic=*/false);
  if (custom2 != custom)
    ::attn::fuzz::fail("printing is not stable:\nfirst:\n" + custom +
                       "\nsecond:\n" + custom2);

  std::string generic = print(*module, /*generic=*/true);
  OwningOpRef<ModuleOp> fromGeneric =
      parseSourceString<ModuleOp>(generic, &ctx);
  if (!fromGeneric || failed(verify(*fromGeneric)))
    ::attn::fuzz::fail("a verified module does not re-parse from its generic "
                       "form:\n" +
                       generic + "\ndiagnostics:\n" + diags.str());
  return 0;
}
