//===- Runner.cpp - run a spec on a device: the CPU runner ----------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// The device-independent part of the runners and the CPU runner (a
// JitFunction); GpuRunner.cpp and EmulatorRunner.cpp hold the others.
//
//===----------------------------------------------------------------------===//

#include "RunnerImpl.h"

#include "attn/Execution/RunReport.h"
#include "attn/Execution/SpecBinding.h"
#include "attn/IR/AttnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/JSON.h"

using namespace mlir;
using namespace mlir::attn;

llvm::Error mlir::attn::runnerError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg.str());
}

llvm::StringRef mlir::attn::runDeviceName(RunDevice device) {
  switch (device) {
  case RunDevice::Cpu:
    return "cpu";
  case RunDevice::Gpu:
    return "gpu";
  case RunDevice::GpuEmulator:
    return "gpu-emulate";
  }
  llvm_unreachable("unknown device");
}

llvm::Expected<RunDevice> mlir::attn::parseRunDevice(llvm::StringRef name) {
  for (RunDevice d : {RunDevice::Cpu, RunDevice::Gpu, RunDevice::GpuEmulator})
    if (name == runDeviceName(d))
      return d;
  return runnerError("unknown device '" + name + "': cpu, gpu or gpu-emulate");
}

Runner::~Runner() = default;

std::optional<ElementKind> Runner::computeKind(ElementKind inputKind) const {
  if (dev == RunDevice::Cpu)
    return std::nullopt;
  return gpuComputeKind(inputKind);
}

llvm::Expected<DenseResultRule> DenseResultRule::of(Operation *op) {
  DenseResultRule rule;
  BlockArgument q, v;
  if (auto attention = dyn_cast_or_null<AttentionOp>(op)) {
    q = dyn_cast<BlockArgument>(attention.getQuery());
    v = dyn_cast<BlockArgument>(attention.getValue());
    rule.lse = attention->getNumResults() > 1;
    rule.bnhd = attention.getLayout() == Layout::bnhd;
  } else if (auto projected = dyn_cast_or_null<ProjectedAttentionOp>(op)) {
    q = dyn_cast<BlockArgument>(projected.getXq());
    v = dyn_cast<BlockArgument>(projected.getWo());
    rule.projected = true;
  } else {
    return runnerError("result shapes: not an attn.attention");
  }
  if (!q || !v)
    return runnerError("result shapes: q and v (x and wo) must be arguments "
                       "of the entry function");
  rule.qArg = q.getArgNumber();
  rule.vArg = v.getArgNumber();
  for (Value r : op->getResults()) {
    auto type = cast<RankedTensorType>(r.getType());
    ElementKind kind;
    if (!getElementKind(type.getElementType(), kind))
      return runnerError("result shapes: a result has an unsupported element "
                         "type");
    rule.kinds.push_back(kind);
    rule.staticShapes.emplace_back(type.getShape());
  }
  return rule;
}

llvm::Expected<std::vector<std::vector<int64_t>>>
DenseResultRule::shapes(llvm::ArrayRef<const HostTensor *> inputs) const {
  size_t qRank = projected ? 3 : 4, vRank = projected ? 2 : 4;
  if (qArg >= inputs.size() || vArg >= inputs.size() ||
      inputs[qArg]->shape.size() != qRank ||
      inputs[vArg]->shape.size() != vRank)
    return runnerError(projected
                           ? "result shapes: x and wo must be rank-3 and "
                             "rank-2 inputs"
                           : "result shapes: q and v must be rank-4 inputs");
  const std::vector<int64_t> &q = inputs[qArg]->shape;
  std::vector<std::vector<int64_t>> result = {
      projected
          ? std::vector<int64_t>{q[0], q[1], inputs[vArg]->shape[1]}
          : std::vector<int64_t>{q[0], q[1], q[2], inputs[vArg]->shape[3]}};
  if (lse)
    result.push_back(bnhd ? std::vector<int64_t>{q[0], q[2], q[1]}
                          : std::vector<int64_t>{q[0], q[1], q[2]});
  for (size_t i = 0; i < result.size() && i < staticShapes.size(); ++i)
    for (size_t d = 0; d < result[i].size(); ++d)
      if (d >= staticShapes[i].size() ||
          (staticShapes[i][d] != ShapedType::kDynamic &&
           staticShapes[i][d] != result[i][d]))
        return runnerError("result " + llvm::Twine(i) + " has shape " +
                           shapeStr(result[i]) +
                           " for these inputs, which its type does not allow");
  return result;
}

llvm::Expected<std::vector<std::vector<int64_t>>>
mlir::attn::denseAttentionResultShapes(
    Operation *op, llvm::ArrayRef<const HostTensor *> inputs) {
  auto rule = DenseResultRule::of(op);
  if (!rule)
    return rule.takeError();
  return rule->shapes(inputs);
}

llvm::Expected<Operation *> mlir::attn::directAttentionEntry(func::FuncOp fn) {
  Operation *attention = nullptr;
  fn.walk([&](Operation *op) {
    if (!isa<AttentionOp, ProjectedAttentionOp>(op))
      return WalkResult::advance();
    attention = op;
    return WalkResult::interrupt();
  });
  if (!attention)
    return runnerError("the GPU needs a function with an attn.attention or "
                       "attn.projected_attention op");
  auto fnResults = fn.front().getTerminator()->getOperands();
  bool direct = fnResults.size() == attention->getNumResults();
  for (size_t i = 0; direct && i < fnResults.size(); ++i)
    direct = fnResults[i] == attention->getResult(i);
  if (!direct)
    return runnerError("the entry function must return the attn op's "
                       "results, in order");
  return attention;
}

namespace {
/// The host CPU: a JitFunction.
class CpuRunner final : public Runner {
public:
  CpuRunner() : Runner(RunDevice::Cpu) {}

  llvm::Error compile(ModuleOp module, llvm::StringRef entry,
                      const JitOptions &options) {
    auto jit = JitFunction::compile(module, entry, options);
    if (!jit)
      return jit.takeError();
    fn = std::move(*jit);
    choices.assign(fn->loweringChoices().begin(), fn->loweringChoices().end());
    compileTime = fn->compileSeconds();
    return llvm::Error::success();
  }

  llvm::Error bind(llvm::ArrayRef<const HostTensor *> in) override {
    inputs.assign(in.begin(), in.end());
    return llvm::Error::success();
  }

  llvm::Error run() override {
    llvm::Error err = fn->invoke(inputs, results);
    status = fn->lastCheckStatus();
    runTime = fn->lastCallSeconds();
    return err;
  }

  llvm::Expected<std::vector<double>> time(unsigned reps) override {
    std::vector<double> times;
    for (unsigned r = 0; r < reps; ++r) {
      if (llvm::Error err = run())
        return std::move(err);
      times.push_back(runTime);
    }
    return times;
  }

  llvm::Error fetch(std::vector<HostTensor> &out) override {
    out = results;
    return llvm::Error::success();
  }

  llvm::StringRef clockName() const override { return "host clock"; }

  void writeJSON(llvm::json::OStream &j) const override {
    const CpuTarget &target = fn->target();
    j.attributeObject("target", [&] {
      j.attribute("cpu", target.cpu);
      j.attribute("isa", target.isaName());
      j.attribute("features", target.features);
    });
  }

  JitFunction *cpuFunction() override { return fn.get(); }

private:
  std::unique_ptr<JitFunction> fn;
  std::vector<const HostTensor *> inputs;
  std::vector<HostTensor> results;
};
} // namespace

llvm::Expected<std::unique_ptr<Runner>>
Runner::create(ModuleOp module, llvm::StringRef entry,
               const RunnerOptions &options) {
  auto fn = module.lookupSymbol<func::FuncOp>(entry);
  if (!fn || fn.isExternal())
    return runnerError("no function '" + entry + "' with a body");
  llvm::Expected<std::unique_ptr<Runner>> runner = nullptr;
  switch (options.device) {
  case RunDevice::Cpu: {
    auto cpu = std::make_unique<CpuRunner>();
    if (llvm::Error err = cpu->compile(module, entry, options.cpu))
      return std::move(err);
    runner = std::unique_ptr<Runner>(std::move(cpu));
    break;
  }
  case RunDevice::Gpu:
  case RunDevice::GpuEmulator: {
    auto attention = directAttentionEntry(fn);
    if (!attention)
      return attention.takeError();
    auto rule = DenseResultRule::of(*attention);
    if (!rule)
      return rule.takeError();
    runner = options.device == RunDevice::Gpu
                 ? createGpuRunner(module, fn, std::move(*rule), options)
                 : createEmulatorRunner(module, fn, std::move(*rule), options);
    break;
  }
  }
  if (!runner)
    return runner.takeError();
  for (auto [i, role] : llvm::enumerate(argRoles(fn, findAttnOp(fn))))
    (*runner)->argNames.push_back(role.name.empty() ? std::to_string(i)
                                                    : role.name);
  return runner;
}

llvm::Error
Runner::bindByName(const llvm::StringMap<const HostTensor *> &named) {
  std::vector<const HostTensor *> inputs(argNames.size(), nullptr);
  for (const auto &entry : named) {
    llvm::StringRef key = entry.getKey();
    auto it = llvm::find(argNames, key);
    size_t index = it - argNames.begin();
    if (it == argNames.end() && key.getAsInteger(10, index))
      index = argNames.size();
    if (index >= argNames.size())
      return runnerError("no argument named '" + key + "' (the arguments: " +
                         llvm::join(argNames, ", ") + ")");
    if (inputs[index])
      return runnerError("argument '" + argNames[index] + "' bound twice");
    inputs[index] = entry.getValue();
  }
  for (auto [i, t] : llvm::enumerate(inputs))
    if (!t)
      return runnerError("argument '" + argNames[i] + "' is not bound");
  return bind(llvm::ArrayRef<const HostTensor *>(inputs));
}
