//===- RunReport.h - what a run of a spec produced --------------*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// The one report of a run, whatever the device (CPU JIT, GPU, the GPU
// emulator): a line per result (name, type, shape, sums, and the comparison
// with the f64 reference), the tolerance rule (one per element type, applied
// to the type the device computes in), `--print`, the .npy files of
// `--output`, `--reference-output` and `--save-input`, and the fields of the
// JSON report that describe the results.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_EXECUTION_RUNREPORT_H
#define ATTN_EXECUTION_RUNREPORT_H

#include "attn/Execution/HostTensor.h"
#include "attn/Execution/SpecBinding.h"
#include "attn/Reference/Reference.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir {
namespace attn {

/// How a run is reported and checked.
struct ReportOptions {
  /// Check every result against the reference: a result outside the
  /// tolerance fails the run.
  bool verify = false;
  /// Tolerance overrides (negative: defaultTolerance of the element type).
  double atol = -1, rtol = -1;
  /// Print every output value.
  bool print = false;
  /// RES=path (--output), RES=path (--reference-output), ARG=path
  /// (--save-input); RES is a result's name or number, ARG an argument's.
  std::vector<std::string> outputs, referenceOutputs, saveInputs;
};

class RunReport {
public:
  /// Reports the results of `spec`'s entry function.
  RunReport(const ReportOptions &options, const SpecInfo &spec);

  /// The name of result `i`: out and lse when the function returns its
  /// attn op's results in order ("result" for a projected op), else
  /// result<i>.
  std::string resultName(size_t i) const;
  /// The result named `key` (a name or a number below `numResults`), or -1.
  int findResult(llvm::StringRef key, size_t numResults) const;

  /// Whether the reference computes exactly the function's results (the
  /// function returns its attn op's results, in order): false otherwise,
  /// and with `verify` an error saying why.
  llvm::Error checkVerifiable(bool &canVerify) const;

  /// Prints a line per result, compared with `expected` when given at the
  /// tolerance of `computeKind` (for a device that computes in a narrower
  /// type than the results': gpuComputeKind) or else of the result's own
  /// element type, and the values with `print`. With `verify`, marks each
  /// [ok] or [FAIL] and records the outcome (verified()).
  void printResults(llvm::raw_ostream &os, llvm::ArrayRef<HostTensor> results,
                    const std::vector<::attn::ref::Tensor> *expected,
                    std::optional<ElementKind> computeKind = std::nullopt);

  /// Writes the .npy files of --output, --reference-output (needs
  /// `expected`) and --save-input (of `args`).
  llvm::Error writeFiles(llvm::ArrayRef<HostTensor> results,
                         const std::vector<::attn::ref::Tensor> *expected,
                         llvm::ArrayRef<HostTensor> args) const;

  /// "verified" (null without verify) and "max_abs_error" (one per compared
  /// result; null where not finite) as attributes of a JSON object.
  void writeJSON(llvm::json::OStream &j) const;

  /// False when verify found a result outside the tolerance.
  bool verified() const { return allOk; }
  /// The error attn-run reports then.
  llvm::Error verificationError() const;

private:
  ReportOptions options;
  const SpecInfo &spec;
  bool allOk = true;
  std::vector<double> maxAbsErrors;
};

/// The element type whose tolerance the results of a GPU kernel (on the GPU
/// or the emulator alike) are checked at, for a spec whose inputs have
/// element type `kind`: bf16 for f32 specs (the kernels stage f32 inputs as
/// bf16, docs/GPU.md); with quantized K/V (`quantizedKv`), which the kernels
/// stage as K * scale rounded to the 16-bit type, that type for every result
/// (lse too); none otherwise (each result at its own type's).
std::optional<ElementKind> gpuComputeKind(ElementKind kind,
                                          bool quantizedKv = false);

/// "median_s", "min_s", "max_s" and "times_s" of the timed calls
/// (`sortedTimes`, ascending, not empty) as attributes of a JSON object.
void writeTimesJSON(llvm::json::OStream &j, llvm::ArrayRef<double> sortedTimes);

/// Writes a JSON report to `path` through `body`, which writes the
/// attributes of its one object.
llvm::Error
writeJSONReport(llvm::StringRef path,
                llvm::function_ref<void(llvm::json::OStream &)> body);

} // namespace attn
} // namespace mlir

#endif // ATTN_EXECUTION_RUNREPORT_H
