//===- StridedArguments.cpp - Kernel arguments as strided views -----------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// One-Shot Bufferize with fully dynamic layouts at function boundaries, then
// the public functions' memref arguments of a dynamic size take any strides
// except the innermost: it becomes a static 1, which keeps the kernels' row
// reads plain vector loads. Fully static arguments take the identity layout.
// The runtime passes a tensor of a dynamic size in place when its innermost
// stride is 1 (ATTN_KERNEL_STRIDED_INPUTS) and gathers it otherwise.
//
//===----------------------------------------------------------------------===//

#include "attn/Transforms/Passes.h"

#include "attn/Transforms/Destinations.h"

#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNSTRIDEDARGUMENTS
#include "attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

/// The type an argument of fully dynamic layout `type` takes: with a
/// dynamic size, the same strides but a static innermost stride of 1;
/// fully static, the identity layout (its strides are then constants the
/// code folds, as they would be products of sizes at run time otherwise).
/// Null where `type` is no such memref.
static MemRefType argumentType(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  auto layout =
      memref ? dyn_cast<StridedLayoutAttr>(memref.getLayout()) : nullptr;
  if (!layout)
    return nullptr;
  if (memref.hasStaticShape())
    return MemRefType::get(memref.getShape(), memref.getElementType(),
                           MemRefLayoutAttrInterface(),
                           memref.getMemorySpace());
  if (!ShapedType::isDynamic(layout.getStrides().back()))
    return nullptr;
  SmallVector<int64_t> strides(layout.getStrides());
  strides.back() = 1;
  auto unit =
      StridedLayoutAttr::get(type.getContext(), layout.getOffset(), strides);
  return MemRefType::get(memref.getShape(), memref.getElementType(), unit,
                         memref.getMemorySpace());
}

/// Whether `v` is a view of an argument of a public function: an argument,
/// or a cast, slice or reshape of one.
static bool viewsPublicArgument(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (!isa<tensor::CastOp, tensor::ExtractSliceOp, tensor::ExpandShapeOp,
             tensor::CollapseShapeOp>(def))
      return false;
    v = def->getOperand(0);
  }
  auto arg = cast<BlockArgument>(v);
  auto fn = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
  return fn && fn.isPublic() && arg.getOwner()->isEntryBlock();
}

/// Whether some argument reaches an op whose bufferization copies a
/// strided source into a dense buffer (merging dimensions whose strides it
/// cannot prove mergeable): these modules keep identity layouts, so that
/// dense callers pay no copy.
static bool reshapesArguments(ModuleOp module) {
  WalkResult r = module.walk([](Operation *op) {
    if (isa<tensor::CollapseShapeOp, tensor::ReshapeOp>(op) &&
        viewsPublicArgument(op->getOperand(0)))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return r.wasInterrupted();
}

/// Whether a public function with a body is called inside the module (a
/// test's main, for example): its callers pass buffers of their own
/// layouts, so the module keeps identity layouts.
static bool callsPublicFunction(ModuleOp module) {
  WalkResult r = module.walk([&](func::CallOp call) {
    auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee());
    if (callee && callee.isPublic() && !callee.isExternal())
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return r.wasInterrupted();
}

/// Whether `v` may be (a view of) one of `fn`'s inputs: its entry block's
/// arguments other than destinations (attn.destination, the caller's
/// outputs). Views and scf.for's loop-carried buffers are followed to their
/// source; a buffer from any other region's block argument counts.
static bool mayViewInput(func::FuncOp fn, Value v) {
  while (true) {
    if (Operation *def = v.getDefiningOp()) {
      auto view = dyn_cast<ViewLikeOpInterface>(def);
      if (!view)
        return false;
      v = view.getViewSource();
      continue;
    }
    auto carried = cast<BlockArgument>(v);
    auto loop = dyn_cast<scf::ForOp>(carried.getOwner()->getParentOp());
    OpOperand *init = loop ? loop.getTiedLoopInit(carried) : nullptr;
    if (!init)
      break;
    v = init->get();
  }
  auto arg = cast<BlockArgument>(v);
  if (!isa<BaseMemRefType>(arg.getType()))
    return false;
  if (arg.getOwner() != &fn.getBody().front())
    return true;
  return !fn.getArgAttr(arg.getArgNumber(), attn::kDestinationAttr);
}

/// Whether `fn` may write one of its inputs (attn.kv_cache_append updates
/// its cache in place): such an input must not be the caller's strided
/// view, which another batch entry's row may share (a stride of 0), so the
/// function gets no attn.strided_arguments and the runtime gathers its
/// strided inputs. Ops of unknown effects that take an input count as
/// writes.
static bool mayWriteInput(func::FuncOp fn) {
  WalkResult r = fn.walk([&](Operation *op) {
    // A prefetch declares a write (so that nothing moves across it) but
    // stores nothing.
    if (isa<memref::PrefetchOp>(op))
      return WalkResult::advance();
    auto iface = dyn_cast<MemoryEffectOpInterface>(op);
    if (!iface) {
      if (op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
        return WalkResult::advance();
      for (Value v : op->getOperands())
        if (isa<BaseMemRefType>(v.getType()) && mayViewInput(fn, v))
          return WalkResult::interrupt();
      return WalkResult::advance();
    }
    SmallVector<MemoryEffects::EffectInstance> effects;
    iface.getEffects(effects);
    for (const MemoryEffects::EffectInstance &e : effects) {
      if (!isa<MemoryEffects::Write>(e.getEffect()))
        continue;
      Value target = e.getValue();
      if (target ? mayViewInput(fn, target)
                 : llvm::any_of(op->getOperands(), [&](Value v) {
                     return isa<BaseMemRefType>(v.getType()) &&
                            mayViewInput(fn, v);
                   }))
        return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return r.wasInterrupted();
}

namespace {
struct AttnStridedArgumentsPass
    : public attn::impl::AttnStridedArgumentsBase<AttnStridedArgumentsPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool strided = this->strided && !reshapesArguments(module) &&
                   !callsPublicFunction(module);
    bufferization::OneShotBufferizePassOptions bufOpts;
    bufOpts.bufferizeFunctionBoundaries = true;
    bufOpts.functionBoundaryTypeConversion =
        strided ? bufferization::LayoutMapOption::InferLayoutMap
                : bufferization::LayoutMapOption::IdentityLayoutMap;
    // The arguments bufferization gives a layout: the public functions'
    // tensors (a memref argument keeps the type it was given).
    llvm::DenseMap<Operation *, SmallVector<bool>> wasTensor;
    for (auto fn : module.getOps<func::FuncOp>())
      if (!fn.isExternal() && fn.isPublic())
        for (Type t : fn.getArgumentTypes())
          wasTensor[fn].push_back(isa<RankedTensorType>(t));
    OpPassManager pm(ModuleOp::getOperationName());
    pm.addPass(bufferization::createOneShotBufferizePass(bufOpts));
    if (failed(runPipeline(pm, module)))
      return signalPassFailure();
    if (!strided)
      return;
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (fn.isExternal() || !fn.isPublic())
        continue;
      bool writesInput = mayWriteInput(fn);
      Block &entry = fn.getBody().front();
      OpBuilder b = OpBuilder::atBlockBegin(&entry);
      SmallVector<Type> inputs(fn.getArgumentTypes());
      for (BlockArgument arg : entry.getArguments()) {
        MemRefType unit = wasTensor[fn][arg.getArgNumber()]
                              ? argumentType(arg.getType())
                              : MemRefType();
        if (!unit)
          continue;
        // The old type stays for the uses (a cast the canonicalizer folds
        // into them), the argument takes the new one.
        Type old = arg.getType();
        arg.setType(unit);
        auto cast = memref::CastOp::create(b, arg.getLoc(), old, arg);
        arg.replaceAllUsesExcept(cast.getResult(), cast);
        inputs[arg.getArgNumber()] = unit;
        if (!unit.getLayout().isIdentity() && !writesInput)
          fn->setAttr(attn::kStridedArgumentsAttr,
                      UnitAttr::get(&getContext()));
      }
      fn.setFunctionType(
          FunctionType::get(&getContext(), inputs, fn.getResultTypes()));
    }
  }
};
} // namespace
