//===- Compile.cpp - ahead-of-time compilation of attn specs --------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Compile/Compile.h"

#include "attn-c/Kernel.h"
#include "attn/Execution/SpecBinding.h"
#include "attn/Pipelines/GpuPipeline.h"
#include "attn/Pipelines/Pipelines.h"
#include "attn/Target/CpuTarget.h"
#include "attn/Transforms/Destinations.h"
#include "attn/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/OpenMP/OpenMPToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Object/ArchiveWriter.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/Transforms/IPO/Internalize.h"

using namespace mlir;
using namespace mlir::attn;

static llvm::Error makeError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

static bool isCIdentifier(llvm::StringRef s) {
  if (s.empty() || llvm::isDigit(s.front()))
    return false;
  return llvm::all_of(s, [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

/// DLPack code and bits of an element kind (bool: kDLBool = 6, one byte).
static std::pair<unsigned, unsigned> dlpackType(ElementKind kind) {
  switch (kind) {
  case ElementKind::F32:
    return {2, 32};
  case ElementKind::F64:
    return {2, 64};
  case ElementKind::F16:
    return {2, 16};
  case ElementKind::BF16:
    return {4, 16};
  case ElementKind::I1:
    return {6, 8};
  case ElementKind::I8:
    return {0, 8};
  case ElementKind::I32:
    return {0, 32};
  case ElementKind::I64:
    return {0, 64};
  // DLPack 1.0: kDLFloat8_e4m3fn, kDLFloat8_e5m2.
  case ElementKind::F8E4M3:
    return {10, 8};
  case ElementKind::F8E5M2:
    return {12, 8};
  }
  return {0, 0};
}

static llvm::Expected<KernelTensor> kernelTensor(Type type, Location loc,
                                                 const std::string &what) {
  auto rt = dyn_cast<RankedTensorType>(type);
  KernelTensor t;
  if (!rt || !getElementKind(rt.getElementType(), t.kind)) {
    emitError(loc) << what << " has type " << type
                   << "; a kernel takes ranked tensors of f32, f64, f16, "
                      "bf16, i1, i8, i32 or i64";
    return makeError(what + " has no C type");
  }
  for (int64_t d : rt.getShape())
    t.shape.push_back(ShapedType::isDynamic(d) ? -1 : d);
  t.dimNames.assign(rt.getRank(), "");
  return t;
}

llvm::Expected<std::vector<KernelSignature>>
mlir::attn::kernelSignatures(ModuleOp module,
                             const KernelCompileOptions &options) {
  std::vector<func::FuncOp> fns;
  if (options.entries.empty()) {
    for (auto fn : module.getOps<func::FuncOp>())
      if (fn.isPublic() && !fn.isExternal())
        fns.push_back(fn);
    if (fns.empty()) {
      emitError(module.getLoc()) << "no public function with a body to compile";
      return makeError("nothing to compile");
    }
  }
  for (const std::string &name : options.entries) {
    auto fn = module.lookupSymbol<func::FuncOp>(name);
    if (!fn || fn.isExternal()) {
      emitError(module.getLoc())
          << "no function @" << name << " with a body in the module";
      return makeError("unknown entry");
    }
    fns.push_back(fn);
  }
  static const llvm::StringSet<> reserved = {"kernels", "dispatch"};
  std::vector<KernelSignature> sigs;
  for (func::FuncOp fn : fns) {
    KernelSignature sig;
    sig.name = fn.getSymName().str();
    if (!isCIdentifier(sig.name) || reserved.contains(sig.name) ||
        llvm::StringRef(sig.name).ends_with("_info") ||
        llvm::StringRef(sig.name).ends_with("_workspace_size")) {
      emitError(fn.getLoc())
          << "function name '" << sig.name
          << "' cannot name a C kernel (it must be a C identifier, not "
             "'kernels' or 'dispatch', and not end in _info or "
             "_workspace_size)";
      return makeError("bad kernel name");
    }
    std::vector<ArgRole> roles = argRoles(fn, findAttnOp(fn));
    llvm::StringSet<> used;
    for (auto [i, type] : llvm::enumerate(fn.getArgumentTypes())) {
      auto t =
          kernelTensor(type, fn.getLoc(),
                       "argument " + std::to_string(i) + " of @" + sig.name);
      if (!t) {
        llvm::consumeError(t.takeError());
        return makeError("@" + sig.name + " has no C kernel signature");
      }
      const ArgRole &role = roles[i];
      t->name = role.name.empty() ? "arg" + std::to_string(i) : role.name;
      if (used.contains(t->name))
        t->name += std::to_string(i);
      used.insert(t->name);
      for (auto [d, dimName] : llvm::enumerate(role.dimNames))
        if (d < t->dimNames.size())
          t->dimNames[d] = dimName;
      // A mask or bias broadcasts along its static size-1 dimensions: those
      // do not bind B, Hq, Nq or Nk.
      if (role.name == "mask" || role.name == "bias")
        for (auto [d, size] : llvm::enumerate(t->shape))
          if (size == 1)
            t->dimNames[d] = "";
      sig.tensors.push_back(std::move(*t));
    }
    sig.numInputs = fn.getNumArguments();
    bool destinations = destinationShapes(fn).has_value();
    Operation *terminator = fn.getBody().back().getTerminator();
    for (auto [i, type] : llvm::enumerate(fn.getResultTypes())) {
      auto t = kernelTensor(type, fn.getLoc(),
                            "result " + std::to_string(i) + " of @" + sig.name);
      if (!t) {
        llvm::consumeError(t.takeError());
        return makeError("@" + sig.name + " has no C kernel signature");
      }
      t->isOutput = true;
      Value v = terminator->getOperand(i);
      // An attn op's results name their dimensions after the inputs they
      // come from (B, Hq, Nq, Dv): callers size dynamic outputs by them.
      std::vector<std::string> dims = resultDimNames(v);
      if (dims.size() == t->dimNames.size())
        t->dimNames = dims;
      Operation *def = v.getDefiningOp();
      std::string name = "result" + std::to_string(i);
      if (def && def->getName().getDialectNamespace() == "attn" &&
          def->getNumResults() <= 2)
        name = cast<OpResult>(v).getResultNumber() == 0 ? "out" : "lse";
      if (used.contains(name))
        name += std::to_string(i);
      used.insert(name);
      t->name = name;
      // GPU kernels write every result into the caller's tensor, CPU
      // kernels those they take as destinations
      // (attn-results-to-destinations) and static ones.
      sig.returnsOutputs |= !options.allOutParams() && !destinations &&
                            llvm::is_contained(t->shape, -1);
      sig.tensors.push_back(std::move(*t));
    }
    sig.numOutputs = fn.getNumResults();
    sigs.push_back(std::move(sig));
  }
  return sigs;
}

llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
mlir::attn::createKernelTargetMachine(const KernelCompileOptions &options) {
  static bool initialized = [] {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmPrinters();
    llvm::InitializeAllAsmParsers(); // inline assembly (AMX permission)
    return true;
  }();
  (void)initialized;
  auto target = resolveCpuTarget(options.targetCpu, options.targetFeatures,
                                 options.targetTriple);
  if (!target)
    return target.takeError();
  llvm::Triple triple(target->triple);
  std::string err;
  const llvm::Target *llvmTarget =
      llvm::TargetRegistry::lookupTarget(triple, err);
  if (!llvmTarget)
    return makeError("no LLVM target for " + target->triple + ": " + err);
  llvm::CodeGenOptLevel level =
      options.optLevel >= 3   ? llvm::CodeGenOptLevel::Aggressive
      : options.optLevel == 0 ? llvm::CodeGenOptLevel::None
                              : llvm::CodeGenOptLevel::Default;
  std::unique_ptr<llvm::TargetMachine> tm(llvmTarget->createTargetMachine(
      triple, target->cpu, target->features, llvm::TargetOptions(),
      llvm::Reloc::PIC_, std::nullopt, level));
  if (!tm)
    return makeError("cannot create a target machine for " + target->cpu);
  return tm;
}

llvm::Expected<OwningOpRef<ModuleOp>>
mlir::attn::lowerKernels(ModuleOp module, const KernelCompileOptions &options) {
  if (options.emulate)
    return makeError("kernels on the GPU emulator can only be JIT-compiled "
                     "(the C API's attnJitLibraryCreate)");
  auto sigs = kernelSignatures(module, options);
  if (!sigs)
    return sigs.takeError();
  OwningOpRef<ModuleOp> clone(module.clone());
  MLIRContext *ctx = module.getContext();
  for (const KernelSignature &sig : *sigs)
    clone->lookupSymbol<func::FuncOp>(sig.name)->setAttr(
        "llvm.emit_c_interface", UnitAttr::get(ctx));
  if (options.isGpu()) {
    // Only the selected functions become kernels (each one a GPU binary).
    llvm::StringSet<> selected;
    for (const KernelSignature &sig : *sigs)
      selected.insert(sig.name);
    for (auto fn : llvm::make_early_inc_range(clone->getOps<func::FuncOp>()))
      if (!selected.contains(fn.getSymName()))
        fn.erase();
    GpuPipelineOptions gpuOpts;
    setPipelineOptions(gpuOpts, options.gpu);
    if (failed(lowerToGpu(*clone, gpuOpts)))
      return makeError("lowering to GPU kernels failed");
    return clone;
  }
  CpuPipelineOptions opts;
  setPipelineOptions(opts, options);
  // The kernel ABI passes every result as a tensor of the caller.
  opts.outParams = true;
  if (failed(lowerToLLVM(*clone, opts)))
    return makeError("lowering to the LLVM dialect failed");
  return clone;
}

namespace {
/// Builds the ABI layer of one kernel module.
class AbiBuilder {
public:
  AbiBuilder(llvm::Module &m, const KernelCompileOptions &options,
             llvm::StringRef targetCpu)
      : m(m), ctx(m.getContext()), options(options), targetCpu(targetCpu) {
    ptr = llvm::PointerType::getUnqual(ctx);
    i8 = llvm::Type::getInt8Ty(ctx);
    i16 = llvm::Type::getInt16Ty(ctx);
    i32 = llvm::Type::getInt32Ty(ctx);
    i64 = llvm::Type::getInt64Ty(ctx);
    dtypeTy = llvm::StructType::get(ctx, {i8, i8, i16});
    tensorInfoTy =
        llvm::StructType::get(ctx, {ptr, dtypeTy, i32, i32, ptr, ptr});
    kernelInfoTy = llvm::StructType::get(
        ctx, {i32, i32, ptr, ptr, i32, i32, ptr, ptr, ptr, ptr, ptr});
  }

  llvm::Error build(llvm::ArrayRef<KernelSignature> kernels);
  const llvm::StringSet<> &publics() const { return publicNames; }
  /// The kernels whose inputs may be strided views (attn.strided_arguments).
  llvm::StringSet<> stridedKernels;

private:
  llvm::Constant *cstr(llvm::StringRef s);
  llvm::Constant *constArray(llvm::Type *elt,
                             llvm::ArrayRef<llvm::Constant *> elts,
                             llvm::StringRef name);
  llvm::Function *define(llvm::StringRef name, llvm::Type *ret,
                         llvm::ArrayRef<llvm::Type *> params, bool isPublic);
  llvm::FunctionCallee runtime(llvm::StringRef name, llvm::Type *ret,
                               llvm::ArrayRef<llvm::Type *> params);
  llvm::Expected<llvm::Constant *> kernelInfo(const KernelSignature &sig);
  llvm::Function *setThreadsFunction();

  llvm::Module &m;
  llvm::LLVMContext &ctx;
  const KernelCompileOptions &options;
  std::string targetCpu;
  llvm::Type *ptr, *i8, *i16, *i32, *i64;
  llvm::StructType *dtypeTy, *tensorInfoTy, *kernelInfoTy;
  llvm::StringSet<> publicNames;
};
} // namespace

llvm::Constant *AbiBuilder::cstr(llvm::StringRef s) {
  auto *init = llvm::ConstantDataArray::getString(ctx, s);
  return new llvm::GlobalVariable(m, init->getType(), /*isConstant=*/true,
                                  llvm::GlobalValue::PrivateLinkage, init,
                                  "__attn_str");
}

llvm::Constant *AbiBuilder::constArray(llvm::Type *elt,
                                       llvm::ArrayRef<llvm::Constant *> elts,
                                       llvm::StringRef name) {
  auto *type = llvm::ArrayType::get(elt, elts.size());
  return new llvm::GlobalVariable(m, type, /*isConstant=*/true,
                                  llvm::GlobalValue::PrivateLinkage,
                                  llvm::ConstantArray::get(type, elts), name);
}

llvm::Function *AbiBuilder::define(llvm::StringRef name, llvm::Type *ret,
                                   llvm::ArrayRef<llvm::Type *> params,
                                   bool isPublic) {
  auto *fnTy = llvm::FunctionType::get(ret, params, /*isVarArg=*/false);
  auto *fn =
      llvm::Function::Create(fnTy,
                             isPublic ? llvm::GlobalValue::ExternalLinkage
                                      : llvm::GlobalValue::InternalLinkage,
                             name, m);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  if (isPublic)
    publicNames.insert(fn->getName());
  return fn;
}

llvm::FunctionCallee AbiBuilder::runtime(llvm::StringRef name, llvm::Type *ret,
                                         llvm::ArrayRef<llvm::Type *> params) {
  return m.getOrInsertFunction(
      name, llvm::FunctionType::get(ret, params, /*isVarArg=*/false));
}

/// i32 __attn_set_threads(i32 n): the OpenMP thread count of the calling
/// thread becomes n; returns the previous one.
llvm::Function *AbiBuilder::setThreadsFunction() {
  if (llvm::Function *fn = m.getFunction("__attn_set_threads"))
    return fn;
  llvm::Function *fn = define("__attn_set_threads", i32, {i32}, false);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", fn));
  llvm::Value *old = b.CreateCall(runtime("omp_get_max_threads", i32, {}));
  b.CreateCall(
      runtime("omp_set_num_threads", llvm::Type::getVoidTy(ctx), {i32}),
      {fn->getArg(0)});
  b.CreateRet(old);
  return fn;
}

llvm::Expected<llvm::Constant *>
AbiBuilder::kernelInfo(const KernelSignature &sig) {
  llvm::Function *ciface = m.getFunction("_mlir_ciface_" + sig.name);
  if (!ciface)
    return makeError("the lowered module has no _mlir_ciface_" + sig.name);
  unsigned expected =
      sig.returnsOutputs ? sig.numInputs + 1 : sig.numInputs + sig.numOutputs;
  if (sig.returnsOutputs && sig.numOutputs == 0)
    expected = sig.numInputs;
  if (ciface->arg_size() != expected)
    return makeError("_mlir_ciface_" + sig.name + " takes " +
                     llvm::Twine(ciface->arg_size()) + " arguments, expected " +
                     llvm::Twine(expected));

  // void __attn_packed_<name>(void **args): ciface(args[0], args[1], ...).
  llvm::Function *packed = define("__attn_packed_" + sig.name,
                                  llvm::Type::getVoidTy(ctx), {ptr}, false);
  {
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", packed));
    llvm::SmallVector<llvm::Value *> args;
    for (unsigned i = 0; i < ciface->arg_size(); ++i)
      args.push_back(
          b.CreateLoad(ptr, b.CreateConstGEP1_64(ptr, packed->getArg(0), i)));
    b.CreateCall(ciface, args);
    b.CreateRetVoid();
  }

  std::vector<llvm::Constant *> tensors;
  for (const KernelTensor &t : sig.tensors) {
    std::vector<llvm::Constant *> shape, names;
    for (int64_t s : t.shape)
      shape.push_back(llvm::ConstantInt::get(i64, s));
    for (const std::string &n : t.dimNames)
      names.push_back(cstr(n));
    auto [code, bits] = dlpackType(t.kind);
    tensors.push_back(llvm::ConstantStruct::get(
        tensorInfoTy,
        {cstr(t.name),
         llvm::ConstantStruct::get(dtypeTy, {llvm::ConstantInt::get(i8, code),
                                             llvm::ConstantInt::get(i8, bits),
                                             llvm::ConstantInt::get(i16, 1)}),
         llvm::ConstantInt::get(i32, t.shape.size()),
         llvm::ConstantInt::get(i32, t.isOutput),
         constArray(i64, shape, "__attn_shape"),
         constArray(ptr, names, "__attn_dims")}));
  }
  llvm::Constant *setThreads =
      options.parallel && !options.allOutParams()
          ? static_cast<llvm::Constant *>(setThreadsFunction())
          : llvm::ConstantPointerNull::get(llvm::PointerType::getUnqual(ctx));
  auto *info = llvm::ConstantStruct::get(
      kernelInfoTy,
      {llvm::ConstantInt::get(i32, 1),
       llvm::ConstantInt::get(
           i32,
           (sig.returnsOutputs ? ATTN_KERNEL_RETURNS_OUTPUTS : 0u) |
               (options.isGpu() ? ATTN_KERNEL_GPU : 0u) |
               (stridedKernels.contains(sig.name) ? ATTN_KERNEL_STRIDED_INPUTS
                                                  : 0u)),
       cstr(sig.name), cstr(options.prefix + sig.name),
       llvm::ConstantInt::get(i32, sig.numInputs),
       llvm::ConstantInt::get(i32, sig.numOutputs),
       constArray(tensorInfoTy, tensors, "__attn_tensors"), cstr(targetCpu),
       cstr(attentionFormName(options.form)), packed, setThreads});
  return new llvm::GlobalVariable(m, kernelInfoTy, /*isConstant=*/true,
                                  llvm::GlobalValue::InternalLinkage, info,
                                  "__attn_info_" + sig.name);
}

llvm::Error AbiBuilder::build(llvm::ArrayRef<KernelSignature> kernels) {
  std::vector<llvm::Constant *> infos;
  for (const KernelSignature &sig : kernels) {
    auto info = kernelInfo(sig);
    if (!info)
      return info.takeError();
    infos.push_back(*info);
    unsigned n = sig.tensors.size();
    std::string sym = options.prefix + sig.name;
    if (m.getNamedValue(sym))
      return makeError("symbol " + sym +
                       " is already defined in the kernel module; choose "
                       "another --prefix");

    // The typed entry: (tensors..., options) -> status, and the workspace
    // query: (tensors..., size_t *bytes) -> status.
    for (bool query : {false, true}) {
      llvm::SmallVector<llvm::Type *> params(n + 1, ptr);
      llvm::Function *fn =
          define(query ? sym + "_workspace_size" : sym, i32, params, true);
      llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", fn));
      auto *arrTy = llvm::ArrayType::get(ptr, std::max(n, 1u));
      llvm::Value *arr = b.CreateAlloca(arrTy);
      for (unsigned i = 0; i < n; ++i)
        b.CreateStore(fn->getArg(i), b.CreateConstGEP2_32(arrTy, arr, 0, i));
      llvm::FunctionCallee callee =
          query
              ? runtime("attn_kernel_workspace_size", i32, {ptr, ptr, i32, ptr})
              : runtime("attn_kernel_call", i32, {ptr, ptr, i32, ptr});
      llvm::Value *status =
          query ? b.CreateCall(callee,
                               {*info, arr, llvm::ConstantInt::get(i32, n),
                                fn->getArg(n)})
                : b.CreateCall(callee,
                               {*info, arr, llvm::ConstantInt::get(i32, n),
                                fn->getArg(n)});
      b.CreateRet(status);
    }
    llvm::Function *infoFn = define(sym + "_info", ptr, {}, true);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", infoFn));
    b.CreateRet(*info);
  }

  // The library: <prefix>kernels(int32_t *count), <prefix>dispatch.
  llvm::Constant *table = constArray(ptr, infos, "__attn_kernel_table");
  llvm::Function *list = define(options.prefix + "kernels", ptr, {ptr}, true);
  {
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", list));
    llvm::BasicBlock *store = llvm::BasicBlock::Create(ctx, "store", list);
    llvm::BasicBlock *done = llvm::BasicBlock::Create(ctx, "done", list);
    b.CreateCondBr(b.CreateIsNull(list->getArg(0)), done, store);
    b.SetInsertPoint(store);
    b.CreateStore(llvm::ConstantInt::get(i32, infos.size()), list->getArg(0));
    b.CreateBr(done);
    b.SetInsertPoint(done);
    b.CreateRet(table);
  }
  llvm::Function *dispatch =
      define(options.prefix + "dispatch", i32, {ptr, i32, ptr}, true);
  {
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", dispatch));
    llvm::Value *status = b.CreateCall(
        runtime("attn_kernel_dispatch", i32, {ptr, i32, ptr, i32, ptr}),
        {table, llvm::ConstantInt::get(i32, infos.size()), dispatch->getArg(0),
         dispatch->getArg(1), dispatch->getArg(2)});
    b.CreateRet(status);
  }
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<llvm::Module>> mlir::attn::buildKernelModule(
    ModuleOp lowered, llvm::ArrayRef<KernelSignature> kernels,
    const KernelCompileOptions &options, llvm::TargetMachine &machine,
    llvm::LLVMContext &llvmCtx) {
  MLIRContext *ctx = lowered.getContext();
  registerBuiltinDialectTranslation(*ctx);
  registerLLVMDialectTranslation(*ctx);
  registerOpenMPDialectTranslation(*ctx);
  if (options.isGpu()) {
    DialectRegistry registry;
    registerGpuCodegen(registry);
    ctx->appendDialectRegistry(registry);
  }
  std::unique_ptr<llvm::Module> m =
      translateModuleToLLVMIR(lowered, llvmCtx, "attn-kernels");
  if (!m)
    return makeError("translation to LLVM IR failed");
  m->setTargetTriple(machine.getTargetTriple());
  m->setDataLayout(machine.createDataLayout());

  // MLIR's memrefCopy (c_runner_utils) is libattn_runtime's
  // attn_rt_memref_copy: the kernels need no MLIR runtime library.
  if (llvm::Function *copy = m->getFunction("memrefCopy"))
    copy->setName("attn_rt_memref_copy");

  AbiBuilder abi(*m, options,
                 options.emulate   ? llvm::StringRef("gpu-emulate")
                 : options.isGpu() ? llvm::StringRef(options.gpu.chip)
                                   : machine.getTargetCPU());
  for (auto fn : lowered.getOps<LLVM::LLVMFuncOp>())
    if (fn->hasAttr(kStridedArgumentsAttr))
      abi.stridedKernels.insert(fn.getName());
  if (llvm::Error err = abi.build(kernels))
    return std::move(err);
  // Only the ABI's symbols stay visible; everything else (the kernels'
  // MLIR-generated functions, descriptors, constants) becomes internal.
  const llvm::StringSet<> &publics = abi.publics();
  llvm::internalizeModule(*m, [&](const llvm::GlobalValue &gv) {
    return publics.contains(gv.getName());
  });
  std::string verifyMsg;
  llvm::raw_string_ostream verifyOs(verifyMsg);
  if (llvm::verifyModule(*m, &verifyOs))
    return makeError("invalid LLVM IR: " + verifyMsg);
  auto optimize = makeOptimizingTransformer(options.optLevel,
                                            /*sizeLevel=*/0, &machine);
  if (llvm::Error err = optimize(m.get()))
    return std::move(err);
  return m;
}

llvm::Error mlir::attn::emitMachineCode(llvm::Module &module,
                                        llvm::TargetMachine &machine,
                                        bool assembly,
                                        llvm::raw_pwrite_stream &os) {
  llvm::legacy::PassManager pm;
  if (machine.addPassesToEmitFile(pm, os, nullptr,
                                  assembly ? llvm::CodeGenFileType::AssemblyFile
                                           : llvm::CodeGenFileType::ObjectFile))
    return makeError("the target machine cannot emit this file type");
  pm.run(module);
  return llvm::Error::success();
}

llvm::Expected<std::string>
mlir::attn::compileToObject(ModuleOp module,
                            const KernelCompileOptions &options) {
  auto sigs = kernelSignatures(module, options);
  if (!sigs)
    return sigs.takeError();
  auto tm = createKernelTargetMachine(options);
  if (!tm)
    return tm.takeError();
  auto lowered = lowerKernels(module, options);
  if (!lowered)
    return lowered.takeError();
  llvm::LLVMContext llvmCtx;
  auto m = buildKernelModule(**lowered, *sigs, options, **tm, llvmCtx);
  if (!m)
    return m.takeError();
  llvm::SmallString<0> buf;
  llvm::raw_svector_ostream os(buf);
  if (llvm::Error err = emitMachineCode(**m, **tm, /*assembly=*/false, os))
    return std::move(err);
  return std::string(buf.str());
}

llvm::Expected<std::string>
mlir::attn::makeStaticArchive(llvm::StringRef object,
                              llvm::StringRef memberName) {
  std::vector<llvm::NewArchiveMember> members(1);
  llvm::NewArchiveMember &member = members.front();
  member.Buf =
      llvm::MemoryBuffer::getMemBuffer(object, memberName,
                                       /*RequiresNullTerminator=*/false);
  member.MemberName = memberName;
  auto archive = llvm::writeArchiveToBuffer(
      members, llvm::SymtabWritingMode::NormalSymtab,
      llvm::object::Archive::K_GNU, /*Deterministic=*/true, /*Thin=*/false);
  if (!archive)
    return archive.takeError();
  return (*archive)->getBuffer().str();
}

static const char *cType(bool isOutput) {
  return isOutput ? "DLTensor *" : "const DLTensor *";
}

static std::string describeTensor(const KernelTensor &t) {
  auto [code, bits] = dlpackType(t.kind);
  std::string s = t.name + ": " + elementName(t.kind) + "[";
  for (auto [d, size] : llvm::enumerate(t.shape)) {
    if (d)
      s += ",";
    s += size < 0 ? (t.dimNames[d].empty() ? "?" : t.dimNames[d])
                  : std::to_string(size);
  }
  s += "] (DLPack code " + std::to_string(code) + ", " + std::to_string(bits) +
       " bits)";
  bool named = llvm::any_of(t.dimNames, [](auto &n) { return !n.empty(); });
  if (named)
    s += " " + llvm::join(t.dimNames, ",");
  return s + (t.isOutput ? ", output" : ", input");
}

std::string mlir::attn::kernelHeader(llvm::ArrayRef<KernelSignature> kernels,
                                     const KernelCompileOptions &options,
                                     llvm::StringRef guard) {
  std::string s;
  llvm::raw_string_ostream os(s);
  const std::string &p = options.prefix;
  os << "/* Generated by attn-compile: the kernels of one library. Do not "
        "edit.\n * ABI: attn-c/Kernel.h (docs/Embedding.md). */\n"
     << "#ifndef " << guard << "\n#define " << guard << "\n\n"
     << "#include <attn-c/Kernel.h>\n\n"
     << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";
  for (const KernelSignature &k : kernels) {
    os << "/* " << k.name << " (form " << attentionFormName(options.form)
       << ")\n";
    for (const KernelTensor &t : k.tensors)
      os << " *   " << describeTensor(t) << "\n";
    os << " */\n";
    std::string params;
    for (const KernelTensor &t : k.tensors)
      params += std::string(cType(t.isOutput)) + t.name + ", ";
    os << "attn_status_t " << p << k.name << "(" << params
       << "const attn_exec_options_t *options);\n";
    os << "attn_status_t " << p << k.name << "_workspace_size(" << params
       << "size_t *bytes);\n";
    os << "const attn_kernel_info_t *" << p << k.name << "_info(void);\n\n";
  }
  os << "/* Every kernel above; *count (if not null) receives how many. */\n"
     << "const attn_kernel_info_t *const *" << p << "kernels(int32_t *count);\n"
     << "/* Calls the first kernel above that takes these tensors. */\n"
     << "attn_status_t " << p
     << "dispatch(DLTensor *const *tensors, int32_t num_tensors,\n"
     << "    const attn_exec_options_t *options);\n\n"
     << "#ifdef __cplusplus\n}\n#endif\n\n#endif /* " << guard << " */\n";
  return s;
}

std::vector<std::string>
mlir::attn::publicSymbols(llvm::ArrayRef<KernelSignature> kernels,
                          const KernelCompileOptions &options) {
  std::vector<std::string> names;
  for (const KernelSignature &k : kernels) {
    names.push_back(options.prefix + k.name);
    names.push_back(options.prefix + k.name + "_info");
    names.push_back(options.prefix + k.name + "_workspace_size");
  }
  names.push_back(options.prefix + "dispatch");
  names.push_back(options.prefix + "kernels");
  return names;
}
