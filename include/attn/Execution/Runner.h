//===- Runner.h - run a spec on a device: CPU, GPU or emulator --*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// The one execution layer of the tools: a Runner compiles the entry function
// of a spec for a device (the host CPU through the JIT, an NVIDIA GPU
// through libattn_gpu_runtime, or the warp-level GPU emulator), binds host
// tensors as its inputs, runs and times it, and fetches its results as host
// tensors. attn-run is a front end over it; what each device chose (the
// lowering's choices, the CPU target, the GPU and chip) is read back from the
// runner, never recomputed.
//
//   auto runner = Runner::create(module, "gqa", options);
//   (*runner)->bind(inputs);            // by position or by name ("q", ...);
//                                       // copies to the device if needed
//   (*runner)->run();                   // one call, checked
//   auto times = (*runner)->time(10);   // timed calls, the device's clock
//   (*runner)->fetch(results);          // host tensors
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_EXECUTION_RUNNER_H
#define ATTN_EXECUTION_RUNNER_H

#include "attn/Execution/HostTensor.h"
#include "attn/Execution/Jit.h"
#include "attn/GPUEmulator/Emulator.h"
#include "attn/Pipelines/GpuPipeline.h"
#include "attn/Schedule/LoweringChoice.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
namespace json {
class OStream;
} // namespace json
} // namespace llvm

namespace mlir {
class ExecutionEngine;
namespace attn {

/// Where a spec runs.
enum class RunDevice {
  /// The host CPU (JitFunction).
  Cpu,
  /// An NVIDIA GPU through libattn_gpu_runtime.
  Gpu,
  /// The GPU kernels on the warp-level emulator (lib/GPUEmulator), on the
  /// host: no GPU needed.
  GpuEmulator,
};

/// "cpu", "gpu", "gpu-emulate".
llvm::StringRef runDeviceName(RunDevice device);
/// The device a name means; an error naming the choices otherwise.
llvm::Expected<RunDevice> parseRunDevice(llvm::StringRef name);

struct RunnerOptions {
  RunDevice device = RunDevice::Cpu;
  /// The CPU's code generation options (form, tiles, target, ...).
  JitOptions cpu;
  /// The GPU kernel's options, for the GPU and the emulator. An empty chip
  /// means the device's own (sm_90 devices get sm_90a); the emulator runs
  /// the gpu.launch form, so chip and format do not matter to it.
  GpuCodegenOptions gpu = [] {
    GpuCodegenOptions g;
    g.chip = "";
    return g;
  }();
  /// The CUDA device to run on.
  int gpuDevice = 0;
  /// Emulator: report shared-memory accesses that race between threads.
  bool detectSharedRaces = true;
  /// Emulator: when non-null, receives the emulated GPU form as text.
  std::string *loweredIR = nullptr;
};

/// The CUDA device a GPU runner runs on.
struct GpuDeviceDescription {
  int index = 0;
  std::string name;
  /// "sm_90": the device's compute capability.
  std::string arch;
  /// The chip the code was generated for ("sm_90a").
  std::string chip;
  int smCount = 0;
  double memoryGiB = 0;
  /// Peak memory bandwidth (0: unknown).
  double bandwidthGBs = 0;
};

class Runner {
public:
  virtual ~Runner();

  /// Compiles the function `entry` of a clone of `module` for
  /// `options.device`. A GPU runner checks the chip, finds the device (an
  /// error says why when no GPU can be used) and JITs the host code; the
  /// emulator lowers to the gpu.launch form. The GPU and the emulator need
  /// an entry that returns the results of one attn.attention, in order.
  static llvm::Expected<std::unique_ptr<Runner>>
  create(ModuleOp module, llvm::StringRef entry, const RunnerOptions &options);

  RunDevice device() const { return dev; }

  /// The inputs of the following calls, one per argument of the entry
  /// (their shapes fix the results'). The CPU and the emulator keep the
  /// pointers (the tensors must outlive the calls); the GPU copies them to
  /// device buffers.
  virtual llvm::Error bind(llvm::ArrayRef<const HostTensor *> inputs) = 0;
  /// The same, by name: each argument's role (`q`, `k`, `v`, `kv_len`,
  /// `mask`, `mod_input0`, ...; SpecBinding.h's argRoles) or its number
  /// ("0", "1", ...); every argument must be named once.
  llvm::Error bindByName(const llvm::StringMap<const HostTensor *> &named);
  /// The name bindByName() takes for each argument, in order.
  llvm::ArrayRef<std::string> argumentNames() const { return argNames; }
  /// One call on the bound inputs, checked: a failed run-time check of the
  /// generated code is an error with its message, and lastStatus() says its
  /// attn_status_t. The first call also pays what happens once (the GPU's
  /// module load and PTX compilation).
  virtual llvm::Error run() = 0;
  /// `reps` more calls on the bound inputs, each timed by the device's
  /// clock (CPU: the host clock around the compiled function; GPU: CUDA
  /// events on the runner's stream); seconds per call in call order. The
  /// emulator has no clock of the GPU: an error.
  virtual llvm::Expected<std::vector<double>> time(unsigned reps) = 0;
  /// The results of the last call, as host tensors.
  virtual llvm::Error fetch(std::vector<HostTensor> &results) = 0;

  /// What the lowering chose for each attention op (form, tiles, splits,
  /// register tile, GPU warps), read from the generated code.
  llvm::ArrayRef<LoweringChoice> loweringChoices() const { return choices; }
  /// Seconds spent lowering and compiling.
  double compileSeconds() const { return compileTime; }
  /// Host seconds of the last run() (for the GPU: with its synchronization).
  double lastRunSeconds() const { return runTime; }
  /// The attn_status_t of the last run's failed check (0: none).
  int lastStatus() const { return status; }
  /// The element type whose tolerance results are checked at, for inputs
  /// of element type `inputKind` (gpuComputeKind on the GPU and the
  /// emulator: bf16 for f32 specs); none: each result at its own type's.
  std::optional<ElementKind> computeKind(ElementKind inputKind,
                                         bool quantizedKv = false) const;
  /// What the time() clock is, for reports ("host clock", "CUDA events").
  virtual llvm::StringRef clockName() const = 0;
  /// Device-specific attributes of a JSON report ("target", "gpu",
  /// "emulator").
  virtual void writeJSON(llvm::json::OStream &j) const = 0;

  /// The compiled CPU function (CPU runners), for what only the CPU has:
  /// the heap and tile counters, the target.
  virtual JitFunction *cpuFunction() { return nullptr; }
  /// The device (GPU runners).
  virtual const GpuDeviceDescription *gpuDevice() const { return nullptr; }
  /// The emulator's counters of the last call (emulator runners).
  virtual const EmulatorStats *emulatorStats() const { return nullptr; }

protected:
  explicit Runner(RunDevice dev) : dev(dev) {}
  RunDevice dev;
  std::vector<std::string> argNames;
  llvm::SmallVector<LoweringChoice> choices;
  double compileTime = 0, runTime = 0;
  int status = 0;
};

/// The shapes of the results of `fn` on the GPU for inputs of the given
/// shapes (one per argument of `fn`): an attention's out is q's with v's
/// head dimension, its lse [B, Hq, Nq] in either layout; an
/// attn.kv_cache_append's result is its cache's shape; an elementwise op's
/// its operand's. Dense and paged batches (ragged ones: the packed tokens').
llvm::Expected<std::vector<std::vector<int64_t>>>
gpuResultShapes(func::FuncOp fn, llvm::ArrayRef<const HostTensor *> inputs);

/// Makes the mgpu* wrappers of libattn_gpu_runtime, which GPU host code
/// calls, known to a JIT `engine` (the run-time checks' attn_rt_* functions
/// are the caller's to add).
void registerGpuHostSymbols(ExecutionEngine &engine);

/// The chip to generate code for on the CUDA device `index` ("sm_90a" on an
/// sm_90 device, "sm_XY" otherwise); an error when no GPU can be used.
llvm::Expected<std::string> chipOfGpuDevice(int index);

} // namespace attn
} // namespace mlir

#endif // ATTN_EXECUTION_RUNNER_H
