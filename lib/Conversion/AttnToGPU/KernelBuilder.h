//===- KernelBuilder.h - the tensor-core attention kernel -------*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// Builds the GPU form of one attn.attention: a host function on memrefs
// whose body launches one FlashAttention-2 style kernel (gpu.launch with
// nvgpu warp-level ops). See the pass description (Passes.td) and
// docs/GPU.md for the design.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_ATTNTOGPU_KERNELBUILDER_H
#define ATTN_CONVERSION_ATTNTOGPU_KERNELBUILDER_H

#include "attn/IR/AttnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir {
namespace attn {
namespace gpu_codegen {

struct GpuKernelOptions {
  /// Warps per block (16 rows each): 1, 2 or 4; 0 picks from the rows.
  int64_t warps = 0;
  /// Keys per staged tile, a multiple of 16.
  int64_t tileK = 64;
  /// Query rows per warp of the row-tiled kernel: 16 or 32; 0 picks
  /// (chooseWarpRows: 16 until 32 is measured on a device).
  int64_t warpRows = 0;
  /// Split-KV chunks when every row fits one row tile (decode): -1 picks
  /// them at run time from the grid, 0 turns split-KV off.
  int64_t splits = -1;
  /// S = Q K^T on wgmma (sm_90a) where the kernel's shape allows it
  /// (KernelEmitter::usesWgmma).
  bool wgmma = false;
};

/// The checks every GPU form makes, with an error at `op`: `op` alone in
/// `fn`, returning its results, its operands `fn`'s arguments; the kernel
/// options in range.
LogicalResult checkGpuFunctionShape(func::FuncOp fn, Operation *op);
LogicalResult checkGpuKernelOptions(Operation *op,
                                    const GpuKernelOptions &opts);

/// Whether the GPU lowering supports `op` inside `fn`; emits an error at the
/// op naming what is not supported otherwise.
LogicalResult checkGpuSupported(func::FuncOp fn, AttentionOp op,
                                const GpuKernelOptions &opts);
/// What checkGpuSupported checks of the op itself (element types, head
/// dimensions, options), wherever it stands in its function.
LogicalResult checkGpuOpSupported(AttentionOp op, const GpuKernelOptions &opts);

/// Replaces `fn` (checked by checkGpuSupported) by its GPU form: same name,
/// memref arguments (inputs, then the results as out-parameters), no
/// results, a gpu.launch of the kernel.
LogicalResult buildGpuFunction(func::FuncOp fn, AttentionOp op,
                               const GpuKernelOptions &opts);

/// The same for attn.projected_attention: the projections as tensor-core
/// GEMMs feeding the attention kernel (ProjectedHost.cpp).
LogicalResult checkGpuProjectedSupported(func::FuncOp fn,
                                         ProjectedAttentionOp op,
                                         const GpuKernelOptions &opts);
LogicalResult buildGpuProjectedFunction(func::FuncOp fn,
                                        ProjectedAttentionOp op,
                                        const GpuKernelOptions &opts);

/// Functions of several ops (StepHost.cpp): a function holding
/// attn.kv_cache_append, or an attn.attention among other ops (but no
/// attn.projected_attention), such as a serving step.
bool isGpuStepFunction(func::FuncOp fn);
LogicalResult checkGpuStepSupported(func::FuncOp fn,
                                    const GpuKernelOptions &opts);
LogicalResult buildGpuStepFunction(func::FuncOp fn,
                                   const GpuKernelOptions &opts);

} // namespace gpu_codegen
} // namespace attn
} // namespace mlir

#endif // ATTN_CONVERSION_ATTNTOGPU_KERNELBUILDER_H
