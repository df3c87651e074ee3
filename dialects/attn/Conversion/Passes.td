//===- Passes.td - attn conversion passes ------------------*- tablegen -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_PASSES_TD
#define ATTN_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertAttnToLinalgNaive : Pass<"convert-attn-to-linalg-naive"> {
  let summary = "Lower attn.attention to the naive form: materialized scores";
  let description = [{
    Lowers each `attn.attention` to `linalg.generic` ops on tensors, as the
    seed draws it:

    1. `S = q k^T` with f32 accumulation into a `[B, Hkv, R, Nq, Nk]` score
       tensor (the naive form materializes it);
    2. one elementwise op applies scale, soft cap, bias, ALiBi and writes
       `-inf` where a key may not be read;
    3. row max `m`, `P = exp(S - m)` (with `m` taken as 0 for rows whose max
       is `-inf`), row sum `l`;
    4. `O = P V` in f32, then `out = l == 0 ? 0 : O / l`, `lse = m + log(l)`
       (`-inf` for empty rows).

    Head grouping is a read pattern: `q`, `out` and head-indexed masks are
    reshaped (no copy) from `Hq` to `[Hkv, R]`, and `k`/`v` are indexed by
    `g` only, so no K/V copy per query head is ever built.

    Example:

    ```mlir
    %o = attn.attention q(%q : tensor<1x4x8x16xf32>)
        k(%k : tensor<1x2x8x16xf32>) v(%v : tensor<1x2x8x16xf32>)
        causal(top_left) -> tensor<1x4x8x16xf32>
    ```

    becomes a `tensor.expand_shape` of `q` to `1x2x2x8x16`, six
    `linalg.generic`s over a `tensor<1x2x2x8x8xf32>` score tensor, and a
    `tensor.collapse_shape` of the result.
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::func::FuncDialect",
    "::mlir::scf::SCFDialect"
  ];
}


def ConvertAttnToFusedLoops : Pass<"convert-attn-to-fused-loops"> {
  let summary = "Lower attn.attention to the fused online-softmax form";
  let description = [{
    FlashAttention-style lowering. One `scf.forall` iteration per
    (batch, K/V head, query tile) keeps a running row max, row sum and f32
    accumulator for the `R = Hq / Hkv` query heads that share the K/V head,
    and an `scf.for` walks the key tiles. No `[Nq, Nk]` buffer exists; the
    largest temporary is one `[R, tile-q, tile-k]` score tile.

    Masks with structure are used, not just applied: the key-tile loop
    bounds come from the readable key range of the query tile (kv_len,
    causal, sliding window, computed from run-time sizes), so fully masked
    key tiles are never visited; an `scf.if` sends tiles that no structural
    mask cuts into down a path without mask arithmetic, and only boundary
    tiles evaluate it. The boolean mask tensor, being data, is applied on
    every tile.

    On a target with AMX BF16 (Sapphire Rapids and later;
    `target-features=-amx-bf16` turns it off), bf16 Q K^T and P V become
    `linalg.generic` tile products over bf16 pairs marked
    `attn.amx_tile_matmul` (the query tile read in place as pairs, K packed
    transposed in pairs; the weights rounded to bf16, V packed as pairs of
    rows), which `attn-lower-amx-tile-matmuls` turns into AMX tile loops
    after bufferization. Q K^T takes tiles whose rows and keys are multiples
    of 16 with `Dqk` a multiple of 32; P V full key tiles with rows a
    multiple of 16 and `Dv` a multiple of 16; other tiles keep the f32
    kernels.

    With `bf16-dot-products`, on a target with AVX-512 BF16 (Cooper Lake,
    Sapphire Rapids, Zen 4 and later), bf16 queries and
    keys with a head dimension that is a multiple of 32 compute Q K^T as
    `x86vector.avx512.dot` (`vdpbf16ps`) on pairs of bf16: the query tile
    and the K tile are packed as i32 words of pairs, the products are exact
    in f32 and summed in f32 (denormals flushed to zero). A bf16 V takes
    the same dot products for P V on whole tiles (or pages) of 32 keys,
    with the weights P rounded to bf16 as FlashAttention does
    (docs/Semantics.md, Precision, states the bound); the last partial
    tile and tiles whose masked keys hold non-finite V rows keep the f32
    kernel. By default (`auto`) the target description decides
    (`CpuTarget::bf16DotAtFmaRate`): on AMD Zen 4 one `vdpbf16ps` issues
    as often as one f32 FMA, and the bf16 fused form ran 1.7x faster with
    it; on the Intel AVX-512 BF16 + AMX host measured it issues every two
    cycles against two FMAs per cycle, and the form ran 1.37x slower.
    `true` and `false` override the target.

    ```mlir
    // Q K^T of bf16 pairs: 16 f32 lanes += 16 dot products of two bf16.
    %acc1 = x86vector.avx512.dot %acc, %q2, %k2
        : vector<32xbf16> -> vector<16xf32>
    ```

    With `instrument-tiles`, every visited key tile calls the external
    `attn_tile_visit(batch, kv_head, query_tile, key_tile, is_boundary)`, so
    tests can count the work.

    Example:

    ```mlir
    %o = attn.attention q(%q : tensor<1x8x?x64xf32>)
        k(%k : tensor<1x2x?x64xf32>) v(%v : tensor<1x2x?x64xf32>)
        causal(top_left) -> tensor<1x8x?x64xf32>
    ```

    becomes `scf.forall (%b, %g, %qt) in (1, 2, ceildiv(Nq, 64))` around an
    `scf.for %kt = 0 to ceildiv(min(Nk, q0 + qs), 64)` (the causal bound).
  }];
  let options = [
    Option<"tileQ", "tile-q", "int64_t", "0",
           "Query rows per tile (0: chosen from the shape, see "
           "attn::chooseTileSizes)">,
    Option<"tileK", "tile-k", "int64_t", "0",
           "Keys per tile (0: chosen from the shape)">,
    Option<"instrumentTiles", "instrument-tiles", "bool", "false",
           "Call attn_tile_visit for every visited key tile">,
    Option<"targetCpu", "target-cpu", "std::string", "\"\"",
           "LLVM CPU name the code is generated for (register tile, vector "
           "width; empty: the host), see attn::resolveCpuTarget">,
    Option<"targetFeatures", "target-features", "std::string", "\"\"",
           "LLVM features over the CPU's own, e.g. +avx2,-avx512f">,
    Option<"targetTriple", "target-triple", "std::string", "\"\"",
           "LLVM target triple (empty: this machine's), e.g. "
           "aarch64-linux-gnu">,
    Option<"bf16DotProducts", "bf16-dot-products",
           "::mlir::attn::Bf16DotProducts",
           "::mlir::attn::Bf16DotProducts::Auto",
           "bf16 Q K^T and P V as AVX-512 BF16 dot products (vdpbf16ps) "
           "where the target has them: auto (where they are faster than the "
           "f32 FMA kernels, the target description says: AMD Zen 4), true "
           "or false (docs/Targets.md)",
           [{::llvm::cl::values(ATTN_BF16_DOT_PRODUCTS_VALUES)}]>
  ];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect",
    "::mlir::func::FuncDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::x86vector::X86VectorDialect"
  ];
}

def ConvertAttnToSplitKv : Pass<"convert-attn-to-split-kv"> {
  let summary = "Lower attn.attention to the split-KV (flash-decoding) form";
  let description = [{
    The decode form. Each query tile's readable key tiles (from `kv_len`,
    causal and window, at run time) are split into `splits` chunks that run
    as separate parallel iterations, each leaving a partial state
    `(acc, m, l)` in `[B, Hkv, splits, R, Nq(, Dv)]` buffers. A merge then
    combines them exactly:

    ```
    M = max_s m_s,   L = sum_s exp(m_s - M) l_s,
    out = (sum_s exp(m_s - M) acc_s) / L,   lse = M + log L
    ```

    Meant for `Nq` small (1 is the main case) against a KV cache whose valid
    length is `kv_len` with `causal(bottom_right)`, but correct for any spec.

    `splits=-1` (the default) chooses the count at run time: an
    `attn.grid_threads` of the grid's work gives the threads the grid gets
    (see `attn-forall-to-parallel-or-sequential`); 1 thread gets 1 chunk,
    T threads `ceil(2 T / items)` for items = B x Hkv x query tiles, at
    most one per key tile of the cache.

    Example: `--convert-attn-to-split-kv="splits=4"` on a decode step
    `q : tensor<8x32x1x128xf32>`, `k : tensor<8x8x4096x128xf32>` gives an
    `scf.forall` over `(8, 8, 1, 4)` and three merge `linalg.generic`s.
  }];
  let options = [
    Option<"tileQ", "tile-q", "int64_t", "0",
           "Query rows per tile (0: the default, 16)">,
    Option<"tileK", "tile-k", "int64_t", "0",
           "Keys per tile (0: the default, 128)">,
    Option<"splits", "splits", "int64_t", "-1",
           "Number of KV chunks (-1: chosen at run time, from the threads "
           "the grid gets)">,
    Option<"instrumentTiles", "instrument-tiles", "bool", "false",
           "Call attn_tile_visit for every computed key tile of every split">,
    Option<"targetCpu", "target-cpu", "std::string", "\"\"",
           "LLVM CPU name the code is generated for (register tile, vector "
           "width; empty: the host), see attn::resolveCpuTarget">,
    Option<"targetFeatures", "target-features", "std::string", "\"\"",
           "LLVM features over the CPU's own, e.g. +avx2,-avx512f">,
    Option<"targetTriple", "target-triple", "std::string", "\"\"",
           "LLVM target triple (empty: this machine's), e.g. "
           "aarch64-linux-gnu">,
    Option<"bf16DotProducts", "bf16-dot-products",
           "::mlir::attn::Bf16DotProducts",
           "::mlir::attn::Bf16DotProducts::Auto",
           "bf16 Q K^T and P V as AVX-512 BF16 dot products (vdpbf16ps) "
           "where the target has them: auto (where they are faster than the "
           "f32 FMA kernels, the target description says: AMD Zen 4), true "
           "or false (docs/Targets.md)",
           [{::llvm::cl::values(ATTN_BF16_DOT_PRODUCTS_VALUES)}]>
  ];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect",
    "::mlir::func::FuncDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::x86vector::X86VectorDialect"
  ];
}

def ConvertAttnStateOps : Pass<"convert-attn-state-ops"> {
  let summary = "Lower attn.kv_cache_append and attn.combine";
  let description = [{
    `attn.kv_cache_append` becomes an `scf.forall` over the batch that
    inserts each batch entry's new rows at its run-time position
    (`tensor.parallel_insert_slice`), after run-time checks that every
    batch entry's rows fit in the cache (and, paged, that the entries they
    are written to lie in the pool); after a failed check nothing is
    written (`attn_rt_check_failed`, docs/Robustness.md). `attn.combine` becomes one elementwise `linalg.generic`
    for `out` and one for `lse`, with the `-inf` cases of its definition.

    Example: `attn.kv_cache_append cache(%c : tensor<2x4x64x16xf32>)
    update(%u : tensor<2x4x1x16xf32>) at(%p : tensor<2xi32>)` becomes
    `scf.forall (%b) in (2)` writing `%u[%b]` into `%c[%b, :, %p[%b], :]`.
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::func::FuncDialect"
  ];
}

def ConvertAttnToGpu : Pass<"convert-attn-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Lower attn.attention to a tensor-core GPU kernel (gpu.launch "
                "with nvgpu warp-level ops)";
  let description = [{
    Rewrites every function whose body is one `attn.attention` on its
    arguments into a host function on memrefs (device buffers; the results
    become trailing out-parameters) that launches one FlashAttention-2 style
    kernel:

    - one thread block per (query row tile, K/V head, batch entry); the rows
      of a tile are (query, head of the K/V head's group) pairs, query-major,
      so the query heads of a group share every staged K/V tile (GQA, MQA,
      decode with `Nq = 1` all fill the tensor cores);
    - `warps` warps of `warp-rows` rows each (16 or 32: one or two 16-row
      fragments; with two, as in FlashAttention-2, every K and V fragment
      read from shared memory feeds two `mma.sync`; 16 by default and
      always for the split-KV kernels); K and V tiles of `tile-k`
      keys staged in shared memory by `nvgpu.device_async_copy` (cp.async)
      with double buffering, rows padded by 16 bytes against bank
      conflicts;
    - `nvgpu.ldmatrix` fragments and `nvgpu.mma.sync` m16n8k16 (f16/bf16,
      f32 accumulation) for S = Q K^T and O += P V; the online softmax on the
      accumulator fragments in registers (row max by `gpu.shuffle xor`,
      `exp2` with log2(e) folded in); P becomes the A operand of P V in
      registers;
    - when every row fits one row tile of 16 rows per warp (decode:
      `Nq * G <= 64` with 4 warps), the key
      tiles are split into chunks (split-KV, about two blocks per SM of the
      device, whose SM count the host code asks of the GPU runtime at run
      time, unless `splits` says otherwise), whose partial states (unnormalized output,
      row max, row sum) a second kernel merges exactly, as the CPU's decode
      form does; the workspace comes from `gpu.alloc`;
    - the key tiles each row tile reads come from the shared schedule
      (`TileRules`: kv_len, causal in either alignment, window), full tiles
      skip the mask arithmetic, and the logits are formed by the same
      LogitBuilder as every other form.

    Example: `attn-opt --convert-attn-to-gpu="warps=4 tile-k=64" spec.mlir`.
    Unsupported specs (f32 inputs, head dims that are not multiples of 16,
    score_mod/mask_mod regions, sigmoid normalization, bodies that are not a
    single attn.attention) are reported with an error at the op.
  }];
  let options = [
    Option<"warps", "warps", "int64_t", "0",
           "Warps per block, 16 rows each (1, 2 or 4; 0: from the rows)">,
    Option<"tileK", "tile-k", "int64_t", "64", "Keys per tile (16..128)">,
    Option<"warpRows", "warp-rows", "int64_t", "0",
           "Query rows per warp of the row-tiled kernel: 16 or 32 (0: 16)">,
    Option<"wgmma", "wgmma", "bool", "false",
           "S = Q K^T on Hopper's warpgroup MMA (sm_90a): Q and K staged "
           "in 128-byte swizzled shared memory, one nvvm.wgmma.mma_async "
           "m64nNk16 per 16 dims (4 warps, 16 rows per warp, head dims a "
           "multiple of 64; other kernels keep mma.sync)">,
    Option<"splits", "splits", "int64_t", "-1",
           "Split-KV chunks when all rows fit one row tile (decode): -1 "
           "chooses at run time (about two blocks per SM), 0 turns split-KV "
           "off">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::func::FuncDialect",
    "::mlir::vector::VectorDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::nvgpu::NVGPUDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::LLVM::LLVMDialect"
  ];
}

def AttnLowerBf16MmaSync : Pass<"attn-lower-bf16-mma-sync"> {
  let summary = "Rewrite bf16 nvgpu.mma.sync to nvvm.mma.sync";
  let description = [{
    MLIR 22's `convert-nvgpu-to-nvvm` rejects bf16 `nvgpu.mma.sync` ("failed
    to deduce operand PTX types"). This pass rewrites each bf16 m16n8k16
    `nvgpu.mma.sync` with f32 accumulators into `nvvm.mma.sync` with the
    fragments' rows bit-cast to i32 registers and the bf16 PTX type stated;
    the fragment layout is unchanged. Runs in the GPU pipeline before the
    NVGPU-to-NVVM conversion.
  }];
  let dependentDialects = [
    "::mlir::vector::VectorDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::NVVM::NVVMDialect"
  ];
}

def AttnLowerAmxTileMatmuls
    : Pass<"attn-lower-amx-tile-matmuls", "::mlir::ModuleOp"> {
  let summary = "Lower the fused form's bf16 tile products to AMX tiles";
  let description = [{
    After bufferization, every `linalg.generic` the fused and split-KV
    lowerings marked `attn.amx_tile_matmul` (bf16 Q K^T and P V on a target
    with AMX BF16: `C[r, i, j] += A[r, i, p, e] B[p, j, e]` over bf16 pairs)
    becomes loops over 16 x 16 output tiles, each accumulated over the
    static reduction in steps of 32 with `amx.tile_load`, `amx.tile_mulf`
    (`tdpbf16ps`) and one `amx.tile_store` (starting from `amx.tile_zero`
    when a zero `linalg.fill` of the output comes just before; the fill then
    runs only on the fallback path), under a run-time check: the
    rows and columns are whole tiles and the process holds the AMX state
    (asked for once per process with `arch_prctl(ARCH_REQ_XCOMP_PERM)`,
    from the generated code, answer kept in a private global). Otherwise
    the generic's own loops run (same result, no AMX instruction).

    ```mlir
    scf.for %i0 = %c0 to %rows step %c16 {
      scf.for %j0 = %c0 to %cols step %c16 {
        %c = amx.tile_load %acc[%r, %i0, %j0], %cs
            : memref<?x?x?xf32> into !amx.tile<16x16xf32>
        %a = amx.tile_load %q[%r, %i0, %c0, %c0], %qs
            : memref<?x?x32x2xbf16, strided<...>> into !amx.tile<16x32xbf16>
        %b = amx.tile_load %k[%c0, %j0, %c0], %ks
            : memref<32x?x2xbf16> into !amx.tile<16x32xbf16>
        %c1 = amx.tile_mulf %a, %b, %c : !amx.tile<16x32xbf16>,
            !amx.tile<16x32xbf16>, !amx.tile<16x16xf32>
        ...
        amx.tile_store %acc[%r, %i0, %j0], %c2, %cs
            : memref<?x?x?xf32>, !amx.tile<16x16xf32>
      }
    }
    ```
  }];
  let dependentDialects = [
    "::mlir::amx::AMXDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::LLVM::LLVMDialect"
  ];
}

#endif // ATTN_CONVERSION_PASSES_TD
