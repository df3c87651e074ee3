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

std::optional<ElementKind> Runner::computeKind(ElementKind inputKind,
                                               bool quantizedKv) const {
  if (dev == RunDevice::Cpu)
    return std::nullopt;
  return gpuComputeKind(inputKind, quantizedKv);
}

/// The argument `v` has the shape of: itself, the cache of the
/// attn.kv_cache_append it is the result of, or the first non-constant
/// operand of the elementwise op it is the result of.
static std::optional<unsigned> shapeArgument(Value v) {
  while (v) {
    if (auto arg = dyn_cast<BlockArgument>(v))
      return arg.getArgNumber();
    Operation *def = v.getDefiningOp();
    if (auto append = dyn_cast<KvCacheAppendOp>(def)) {
      v = v == append.getNewScales() ? append.getScales() : append.getCache();
      continue;
    }
    if (!def || !def->hasTrait<OpTrait::Elementwise>())
      return std::nullopt;
    Value next;
    for (Value operand : def->getOperands())
      if (!next && !operand.getDefiningOp<arith::ConstantOp>())
        next = operand;
    v = next;
  }
  return std::nullopt;
}

llvm::Expected<DenseResultRule> DenseResultRule::of(func::FuncOp fn) {
  DenseResultRule rule;
  Operation *attention = nullptr;
  fn.walk([&](Operation *op) {
    if (isa<AttentionOp, ProjectedAttentionOp>(op) && !attention)
      attention = op;
  });
  std::optional<unsigned> q, v;
  if (auto att = dyn_cast_or_null<AttentionOp>(attention)) {
    q = shapeArgument(att.getQuery());
    v = shapeArgument(att.getValue());
    rule.bnhd = att.getLayout() == Layout::bnhd;
    rule.vFromK = att.getVFromK();
  } else if (auto projected =
                 dyn_cast_or_null<ProjectedAttentionOp>(attention)) {
    q = shapeArgument(projected.getXq());
    v = shapeArgument(projected.getWo());
    rule.projected = true;
  }
  if (attention && (!q || !v))
    return runnerError("result shapes: q and v (x and wo) must come from "
                       "arguments of the entry function");
  rule.qArg = q.value_or(0);
  rule.vArg = v.value_or(0);
  for (Value r : fn.front().getTerminator()->getOperands()) {
    auto type = cast<RankedTensorType>(r.getType());
    ElementKind kind;
    if (!getElementKind(type.getElementType(), kind))
      return runnerError("result shapes: a result has an unsupported element "
                         "type");
    rule.kinds.push_back(kind);
    rule.staticShapes.emplace_back(type.getShape());
    if (attention && r.getDefiningOp() == attention) {
      rule.sources.push_back(cast<OpResult>(r).getResultNumber() == 0 ? kOut
                                                                      : kLse);
    } else if (auto arg = shapeArgument(r); arg && !isa<BlockArgument>(r)) {
      rule.sources.push_back(*arg);
    } else {
      return runnerError("result shapes: each result of the entry function "
                         "must be a result of its attn ops (or of an "
                         "elementwise op on an argument)");
    }
  }
  return rule;
}

llvm::Expected<std::vector<std::vector<int64_t>>>
DenseResultRule::shapes(llvm::ArrayRef<const HostTensor *> inputs) const {
  size_t qRank = projected ? 3 : 4, vRank = projected ? 2 : 4;
  bool attention = llvm::any_of(sources, [](int64_t s) { return s < 0; });
  if (attention && (qArg >= inputs.size() || vArg >= inputs.size() ||
                    inputs[qArg]->shape.size() != qRank ||
                    inputs[vArg]->shape.size() != vRank))
    return runnerError(projected
                           ? "result shapes: x and wo must be rank-3 and "
                             "rank-2 inputs"
                           : "result shapes: q and v must be rank-4 inputs");
  std::vector<std::vector<int64_t>> result;
  for (int64_t source : sources) {
    if (source >= 0) {
      if (static_cast<size_t>(source) >= inputs.size())
        return runnerError("result shapes: too few inputs");
      result.push_back(inputs[source]->shape);
      continue;
    }
    const std::vector<int64_t> &q = inputs[qArg]->shape;
    if (source == kOut)
      result.push_back(
          projected
              ? std::vector<int64_t>{q[0], q[1], inputs[vArg]->shape[1]}
              : std::vector<int64_t>{q[0], q[1], q[2],
                                     vFromK.value_or(inputs[vArg]->shape[3])});
    else
      result.push_back(bnhd ? std::vector<int64_t>{q[0], q[2], q[1]}
                            : std::vector<int64_t>{q[0], q[1], q[2]});
  }
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
mlir::attn::gpuResultShapes(func::FuncOp fn,
                            llvm::ArrayRef<const HostTensor *> inputs) {
  auto rule = DenseResultRule::of(fn);
  if (!rule)
    return rule.takeError();
  return rule->shapes(inputs);
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
    auto rule = DenseResultRule::of(fn);
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
