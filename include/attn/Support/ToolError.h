//===- ToolError.h - how the attn tools report an error ---------*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// Header-only, for the tools (which link LLVM): an error is one line
// "<tool>: error: <message>" on stderr (LLVM's WithColor) and exit code 1.
//
//   static const ToolError fail("attn-run");
//   if (!spec) return fail(spec.takeError());
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_SUPPORT_TOOLERROR_H
#define ATTN_SUPPORT_TOOLERROR_H

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir {
namespace attn {

class ToolError {
public:
  explicit ToolError(const char *tool) : tool(tool) {}

  /// Prints the message; returns the tool's exit code, 1.
  int operator()(const llvm::Twine &msg) const {
    llvm::WithColor::error(llvm::errs(), tool) << msg << "\n";
    return 1;
  }
  int operator()(llvm::Error err) const {
    return (*this)(llvm::toString(std::move(err)));
  }

private:
  const char *tool;
};

} // namespace attn
} // namespace mlir

#endif // ATTN_SUPPORT_TOOLERROR_H
