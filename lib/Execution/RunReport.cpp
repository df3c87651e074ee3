//===- RunReport.cpp - what a run of a spec produced ----------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Execution/RunReport.h"

#include "attn/Execution/ReferenceBridge.h"
#include "attn/IR/AttnOps.h"
#include "attn/Support/Npy.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;

static llvm::Error makeError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

/// The values of `t` as doubles.
/// The elements as a .npy file holds them: values, or for fp8 (stored as
/// uint8, numpy having no fp8) the bit patterns.
static std::vector<double> values(const HostTensor &t) {
  std::vector<double> v(t.numElements());
  bool bits = t.kind == ElementKind::F8E4M3 || t.kind == ElementKind::F8E5M2;
  for (size_t e = 0; e < v.size(); ++e)
    v[e] = bits ? t.bytes[e] : t.get(static_cast<int64_t>(e));
  return v;
}

static llvm::Error writeNpy(llvm::StringRef path,
                            const std::vector<double> &data,
                            const std::vector<int64_t> &shape,
                            const std::string &dtype) {
  ::attn::npy::Array arr;
  std::string err = ::attn::npy::fromDoubles(data, shape, dtype, arr);
  if (err.empty())
    err = ::attn::npy::write(path.str(), arr);
  return err.empty() ? llvm::Error::success() : makeError(err);
}

RunReport::RunReport(const ReportOptions &options, const SpecInfo &spec)
    : options(options), spec(spec) {}

std::string RunReport::resultName(size_t i) const {
  Operation *op = spec.attnOp;
  if (op && isa<ProjectedAttentionOp>(op))
    return "result";
  func::FuncOp fn = spec.entry;
  if (op && fn.getNumResults() == op->getNumResults())
    return i == 0 ? "out" : "lse";
  return "result" + std::to_string(i);
}

int RunReport::findResult(llvm::StringRef key, size_t numResults) const {
  unsigned n;
  if (!key.getAsInteger(10, n))
    return n < numResults ? static_cast<int>(n) : -1;
  for (size_t i = 0; i < numResults; ++i)
    if (resultName(i) == key)
      return static_cast<int>(i);
  return -1;
}

llvm::Error RunReport::checkVerifiable(bool &canVerify) const {
  // The reference knows the attn op's results; the function must return
  // them directly and in order.
  Operation *op = spec.attnOp;
  func::FuncOp fn = spec.entry;
  auto ret = cast<func::ReturnOp>(fn.getBody().back().getTerminator());
  canVerify = op && ret.getNumOperands() == op->getNumResults();
  for (size_t i = 0; canVerify && i < ret.getNumOperands(); ++i)
    canVerify = ret.getOperand(i) == op->getResult(i);
  if (options.verify && !canVerify)
    return makeError("cannot verify: the entry function must return the attn "
                     "op's results, in order");
  return llvm::Error::success();
}

void RunReport::printResults(llvm::raw_ostream &os,
                             llvm::ArrayRef<HostTensor> results,
                             const std::vector<::attn::ref::Tensor> *expected,
                             std::optional<ElementKind> computeKind) {
  for (size_t i = 0; i < results.size(); ++i) {
    const HostTensor &t = results[i];
    double sum = 0, absSum = 0;
    for (int64_t e = 0, n = t.numElements(); e < n; ++e) {
      double v = t.get(e);
      if (std::isfinite(v)) {
        sum += v;
        absSum += std::fabs(v);
      }
    }
    os << resultName(i) << ": " << elementName(t.kind) << " "
       << shapeStr(t.shape)
       << llvm::format(" sum %.6g abs-sum %.6g", sum, absSum);
    if (expected && i < expected->size()) {
      const ::attn::ref::Tensor &want = (*expected)[i];
      double atol, rtol;
      defaultTolerance(computeKind ? *computeKind : t.kind, atol, rtol);
      if (options.atol >= 0)
        atol = options.atol;
      if (options.rtol >= 0)
        rtol = options.rtol;
      Comparison c = compare(t, want, atol, rtol);
      maxAbsErrors.push_back(c.maxAbsError);
      os << llvm::format(" | vs reference: max abs err %.3g, max rel err %.3g",
                         c.maxAbsError, c.maxRelError);
      if (options.verify) {
        bool ok = c.mismatches == 0;
        allOk &= ok;
        os << (ok ? " [ok" : " [FAIL")
           << llvm::format(" atol %g rtol %g", atol, rtol);
        if (!ok)
          os << ", " << c.mismatches << " mismatches, first at "
             << c.firstMismatch << ": got " << t.get(c.firstMismatch)
             << ", expected " << want.data[c.firstMismatch];
        os << "]";
      }
    }
    os << "\n";
    if (options.print)
      for (int64_t e = 0, n = t.numElements(); e < n; ++e)
        os << llvm::format("%.6g", t.get(e))
           << ((e + 1) % 8 == 0 || e + 1 == n ? "\n" : " ");
  }
}

llvm::Error
RunReport::writeFiles(llvm::ArrayRef<HostTensor> results,
                      const std::vector<::attn::ref::Tensor> *expected,
                      llvm::ArrayRef<HostTensor> args) const {
  for (const std::string &s : options.outputs) {
    auto [key, path] = llvm::StringRef(s).split('=');
    int idx = findResult(key, results.size());
    if (idx < 0 || path.empty())
      return makeError("bad --output '" + s + "': no result named '" + key +
                       "'");
    const HostTensor &t = results[idx];
    if (llvm::Error err = writeNpy(path, values(t), t.shape, npyDtype(t.kind)))
      return makeError("output " + key + ": " + llvm::toString(std::move(err)));
  }
  for (const std::string &s : options.referenceOutputs) {
    auto [key, path] = llvm::StringRef(s).split('=');
    int idx = findResult(key, results.size());
    if (idx < 0 || path.empty())
      return makeError("bad --reference-output '" + s + "': no result named '" +
                       key + "'");
    if (!expected || idx >= static_cast<int>(expected->size()))
      return makeError("--reference-output: the reference cannot compute "
                       "this function's results");
    const ::attn::ref::Tensor &t = (*expected)[idx];
    if (llvm::Error err = writeNpy(path, t.data, t.shape, "<f8"))
      return makeError("reference output " + key + ": " +
                       llvm::toString(std::move(err)));
  }
  for (const std::string &s : options.saveInputs) {
    auto [key, path] = llvm::StringRef(s).split('=');
    int a = spec.findArg(key);
    if (a < 0 || a >= static_cast<int>(args.size()) || path.empty())
      return makeError("bad --save-input '" + s + "': no argument named '" +
                       key + "'");
    const HostTensor &t = args[a];
    if (llvm::Error err = writeNpy(path, values(t), t.shape, npyDtype(t.kind)))
      return makeError("input " + key + ": " + llvm::toString(std::move(err)));
  }
  return llvm::Error::success();
}

void RunReport::writeJSON(llvm::json::OStream &j) const {
  j.attribute("verified", options.verify ? llvm::json::Value(allOk)
                                         : llvm::json::Value(nullptr));
  j.attributeArray("max_abs_error", [&] {
    for (double e : maxAbsErrors)
      j.value(std::isfinite(e) ? llvm::json::Value(e)
                               : llvm::json::Value(nullptr));
  });
}

llvm::Error RunReport::verificationError() const {
  if (allOk)
    return llvm::Error::success();
  return makeError("outputs differ from the reference beyond tolerance");
}

std::optional<ElementKind> mlir::attn::gpuComputeKind(ElementKind kind,
                                                      bool quantizedKv) {
  if (kind == ElementKind::F32)
    return ElementKind::BF16;
  if (quantizedKv)
    return kind;
  return std::nullopt;
}

void mlir::attn::writeTimesJSON(llvm::json::OStream &j,
                                llvm::ArrayRef<double> sortedTimes) {
  j.attribute("median_s", sortedTimes[sortedTimes.size() / 2]);
  j.attribute("min_s", sortedTimes.front());
  j.attribute("max_s", sortedTimes.back());
  j.attributeArray("times_s", [&] {
    for (double t : sortedTimes)
      j.value(t);
  });
}

llvm::Error mlir::attn::writeJSONReport(
    llvm::StringRef path,
    llvm::function_ref<void(llvm::json::OStream &)> body) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return makeError("cannot write " + path + ": " + ec.message());
  {
    llvm::json::OStream j(os, 2);
    j.object([&] { body(j); });
  }
  os << "\n";
  return llvm::Error::success();
}
