//===- Passes.td - attn transformation passes --------------*- tablegen -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TRANSFORMS_PASSES_TD
#define ATTN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttnExpandProjections : Pass<"attn-expand-projections"> {
  let summary = "Rewrite attn.projected_attention into linalg projections "
                "and attn.attention";
  let description = [{
    Expands the projection-level op into the seed's pipeline:

    1. projections `Q = xq Wq`, `K = xkv Wk`, `V = xkv Wv` as
       `linalg.generic` contractions `[B, N, D] x [D, H*Dh] -> [B, N, H*Dh]`
       (f32 accumulation; B and N stay separate, so no reshape ever splits a
       product of two run-time sizes);
    2. head split as a pure reshape `[B, N, H*Dh] -> [B, N, H, Dh]`, which is
       the `bnhd` layout, so the core op reads heads with no transpose copy;
    3. `attn.attention` with `layout(bnhd)` and every modifier carried over;
    4. head merge as the inverse reshape and the output projection `Z Wo`.

    Example:

    ```mlir
    %y = attn.projected_attention x(%x : tensor<2x16x64xf32>)
        wq(%wq : tensor<64x64xf32>) wk(%wk : tensor<64x32xf32>)
        wv(%wv : tensor<64x32xf32>) wo(%wo : tensor<64x64xf32>)
        heads(4, 2) -> tensor<2x16x64xf32>
    ```

    becomes three projection `linalg.generic`s, `tensor.expand_shape`s to
    `tensor<2x16x4x16xf32>` / `tensor<2x16x2x16xf32>`, one
    `attn.attention ... layout(bnhd)`, a `tensor.collapse_shape` and a last
    projection.
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::arith::ArithDialect"
  ];
}

def AttnExpandKeyPadding : Pass<"attn-expand-key-padding"> {
  let summary = "State key padding (kv_start, key_mask) in the mask region";
  let description = [{
    `kv_start(%first : tensor<Bxi32>)` on `attn.attention` or
    `attn.projected_attention` gives each batch entry's (each sequence's)
    first valid key, `key_mask(%m : tensor<BxNkxi1>)` which keys are real
    tokens. This pass rewrites both into the op's `mask_mod`: the tensors
    join `mod_inputs` (both regions get one more block argument each) and
    the mask yields `j >= first[b]` and `m[b, j]`, and-ed with what the
    region yielded before. The forms classify mask regions per tile from
    the values a tile reads (the one start of its batch entry, the range of
    its keys' mask bits), so key tiles before the start or wholly padding
    are skipped and wholly real ones run without mask arithmetic. Every
    lowering (naive, fused, decode, GPU) applies the same rewrite to the
    ops it lowers; the pass shows it on its own.

    Example:

    ```mlir
    %o = attn.attention q(%q : tensor<2x4x16x32xf32>)
        k(%k : tensor<2x4x16x32xf32>) v(%v : tensor<2x4x16x32xf32>)
        kv_start(%first : tensor<2xi32>) causal(top_left)
        -> tensor<2x4x16x32xf32>
    ```

    becomes

    ```mlir
    %o = attn.attention q(%q : tensor<2x4x16x32xf32>)
        k(%k : tensor<2x4x16x32xf32>) v(%v : tensor<2x4x16x32xf32>)
        mod_inputs(%first : tensor<2xi32>) causal(top_left) mask_mod {
        ^bb0(%b: index, %h: index, %i: index, %j: index, %f: tensor<2xi32>):
          %s = tensor.extract %f[%b] : tensor<2xi32>
          %si = arith.index_cast %s : i32 to index
          %ok = arith.cmpi sge, %j, %si : index
          attn.yield %ok : i1
        } -> tensor<2x4x16x32xf32>
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

def AttnSelectForm : Pass<"attn-select-form"> {
  let summary = "Lower each attention op in the form its sizes call for";
  let description = [{
    The form `auto` of the CPU pipeline: one entry function serves prefill
    and decode. An `attn.attention` op whose query length `Nq` is at most
    `max-decode-queries` takes the split-KV form (its keys split into
    chunks that run in parallel, the right choice when a few query rows
    give too little parallel work), a longer one the fused form. When `Nq`
    is static the op is marked with its form; when it is dynamic the op is
    versioned: an `scf.if` on `tensor.dim` of the query picks between two
    copies of the op, each marked with its form and the query lengths it
    runs for (the attribute `attn.form`). `convert-attn-to-fused-loops` and
    `convert-attn-to-split-kv` lower only the ops meant for them; each
    records its choice on the function with the same range, so attn-run's
    tile map and the report name the version a call ran. Ragged batches
    (query lengths per sequence) take the fused form.

    Example: with `max-decode-queries=16`,

    ```mlir
    %o = attn.attention q(%q : tensor<1x8x?x64xf32>)
        k(%k : tensor<1x8x?x64xf32>) v(%v : tensor<1x8x?x64xf32>)
        causal(bottom_right) -> tensor<1x8x?x64xf32>
    ```

    becomes

    ```mlir
    %c2 = arith.constant 2 : index
    %nq = tensor.dim %q, %c2 : tensor<1x8x?x64xf32>
    %c16 = arith.constant 16 : index
    %short = arith.cmpi ule, %nq, %c16 : index
    %o = scf.if %short -> (tensor<1x8x?x64xf32>) {
      %d = attn.attention ... {attn.form = {form = "decode",
                                            max_queries = 16 : i64}}
      scf.yield %d : tensor<1x8x?x64xf32>
    } else {
      %f = attn.attention ... {attn.form = {form = "fused",
                                            min_queries = 17 : i64}}
      scf.yield %f : tensor<1x8x?x64xf32>
    }
    ```
  }];
  let options = [
    Option<"maxDecodeQueries", "max-decode-queries", "int64_t", "16",
           "Longest query length that takes the split-KV form (16: the "
           "split-KV form's default query tile, so such a call is one "
           "query tile per head group)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def AttnExpandLatent : Pass<"attn-expand-latent"> {
  let summary = "Read the V of latent attention as a slice of K";
  let description = [{
    Latent attention (`v_from_k(Dv)` on `attn.attention`, DeepSeek's
    multi-head latent attention in its absorbed form) reads V as the first
    `Dv` columns of the one latent cache K. This pass gives the op an
    explicit `v` operand, a `tensor.extract_slice` of k's first `Dv`
    columns (a strided view once bufferized: the cache is not copied), and
    drops the attribute, so that every CPU form lowers it as any op with
    `Dv < Dqk`. The GPU kernels read V from K's buffer directly instead.

    Example:

    ```mlir
    %o = attn.attention q(%q : tensor<1x16x4x64xf32>)
        k(%c : tensor<1x1x32x64xf32>) v(%c : tensor<1x1x32x64xf32>)
        v_from_k(48) -> tensor<1x16x4x48xf32>
    ```

    becomes

    ```mlir
    %v = tensor.extract_slice %c[0, 0, 0, 0] [1, 1, 32, 48] [1, 1, 1, 1]
        : tensor<1x1x32x64xf32> to tensor<1x1x32x48xf32>
    %o = attn.attention q(%q : tensor<1x16x4x64xf32>)
        k(%c : tensor<1x1x32x64xf32>) v(%v : tensor<1x1x32x48xf32>)
        -> tensor<1x16x4x48xf32>
    ```
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def AttnExpandSinks : Pass<"attn-expand-sinks"> {
  let summary = "Apply attention sinks to out and lse after the attention";
  let description = [{
    An attention sink (`sink(%s : tensor<Hq x f32>)`) is a logit per query
    head that joins the softmax's denominator and contributes no value.
    Since the attention over the keys alone gives `out` and `lse`, the sink
    is one more log-sum-exp merge (the split-KV merge with a state of no
    value):

    ```
    lse' = log(e^lse + e^sink) = max(lse, sink) + log1p(e^-|lse - sink|)
    out' = out * e^(lse - lse')        (0 where lse = -inf)
    ```

    This pass rewrites `attn.attention` with a sink into the op without it
    (with an `lse` result) and two `linalg.generic`s computing `lse'` and
    `out'` in f32 (out' rounded to out's type), for the CPU forms; the GPU
    kernels apply the sink in their epilogue and merge instead. Rows of a
    ragged batch outside every sequence keep `lse = -inf`.

    Example:

    ```mlir
    %o = attn.attention q(%q : tensor<1x8x128x64xf32>)
        k(%k : tensor<1x8x128x64xf32>) v(%v : tensor<1x8x128x64xf32>)
        sink(%s : tensor<8xf32>) causal(top_left) -> tensor<1x8x128x64xf32>
    ```

    becomes an `attn.attention ... -> tensor<1x8x128x64xf32>,
    tensor<1x8x128xf32>` followed by the two generics.
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect"
  ];
}

def AttnApproximateMath : Pass<"attn-approximate-math"> {
  let summary = "Replace f32 exp, log and tanh with polynomial approximations";
  let description = [{
    `math.exp` otherwise stays a scalar libm call that blocks vectorization of
    the softmax loops. This pass applies MLIR's polynomial approximations
    (`populateMathPolynomialApproximationPatterns`) to `math.exp`,
    `math.log` and `math.tanh` on f32 scalars and vectors, which lower to
    plain arithmetic that LLVM vectorizes. Their error (a few 1e-7 relative
    for exp in f32) is far inside the tolerance every form is checked
    against.

    Example: `%e = math.exp %x : f32` becomes a range reduction, a degree-5
    polynomial and an exponent insertion (`arith` and `math.fma` only).

    A `math.exp` marked `attn.exp_nonpositive` (the fused form's
    `exp(x - max)`, whose argument is <= 0 or NaN) takes a shorter expansion:
    `k = roundeven(t log2 e)`, a two-constant range reduction, a degree-6
    Taylor polynomial (error below 1e-7 relative on |r| <= ln2/2) and 2^k in
    the exponent field, with `t < -87` giving 0 (so -inf gives exactly 0)
    and NaN staying NaN; no upper clamp or large-argument cases. It cut the
    softmax sweep enough for 2-6% on the fused benchmark shapes.

    With `avx512` (set by the CPU pipeline where the target has AVX-512F),
    a marked exp on `vector<16xf32>` builds `p 2^k` with one `vscalefps`
    (a call of `llvm.x86.avx512.mask.scalef.ps.512`: MLIR 22's
    `x86vector.avx512.mask.scalef` hands the intrinsic its operands in
    another order), its write mask zeroing the lanes with
    `t < -87`, instead of the clamp, conversion, shift, add and multiply of
    the exponent-field construction: the same values (2^k p is exact in
    both), four vector instructions fewer per 16 exponentials.
  }];
  let options = [
    Option<"avx512", "avx512", "bool", "false",
           "2^k of the marked exp on 16-lane f32 vectors as vscalefps "
           "(AVX-512F targets)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::vector::VectorDialect",
    "::mlir::LLVM::LLVMDialect"
  ];
}

def AttnForallToParallelOrSequential
    : Pass<"attn-forall-to-parallel-or-sequential", "::mlir::ModuleOp"> {
  let summary = "Turn each scf.forall into a parallel loop for calls with "
                "several threads and a loop nest for calls with one";
  let description = [{
    The kernels' grid (batch, head group, query tile, or split) is an
    `scf.forall`. For several threads it becomes an `scf.parallel`, which
    `convert-scf-to-openmp` turns into an OpenMP parallel region. A call
    with one thread still pays for that region: LLVM 22's libomp, as Debian
    builds it, enters a serialized parallel region and a dynamic worksharing
    loop (with a debug string formatted per request for work) for about
    2.7 us per call, a third of a small decode step's call. This pass keeps
    a sequential twin of the loop beside the parallel one and picks between
    them at run time by `omp_get_max_threads()` (the thread count the
    region would get; the runtime's `num_threads` option sets it for the
    call): the twin runs where it is 1. The body is compiled once: it moves
    into a private function (`__attn_grid_<function>`, internal linkage)
    that takes the induction variables and the values it uses from above
    (constants are cloned into it), and both loops call it.

    Starting and joining threads costs too (about 6 us for two threads on
    a Zen 4 host, against 5.7 us for a whole 64-key decode step on one): a
    grid whose body holds `attn.grid_work %w` runs in parallel only where
    `%w` (its multiply-adds) is at least `min-parallel-work` as well (0 or
    less: no such condition).
    The default, 2^19, is about where two threads began to win for a
    decode step there (between 512 and 2048 cached keys; about 13 us of
    one thread's f32 work in the fused form). The marker is erased.

    A call made inside an OpenMP parallel region that may not nest another
    active one (`omp_get_active_level() >= omp_get_max_active_levels()`:
    a caller's own parallel loop under OpenMP's default of one active
    level) takes the twin as well: the runtime would run the region
    serialized on the calling thread anyway, after entering and leaving it.

    Nested `scf.forall`s go with their outermost one (loop nests inside the
    function). A forall with results, or (with `parallel`) one outside a
    `func.func`, is an error.

    Each `attn.grid_threads %w` (placed before a grid whose shape depends
    on its threads, the decode form's split count) becomes the same choice
    as a value: `omp_get_max_threads()` where a grid of `%w` multiply-adds
    would run in parallel, 1 where not; 1 inside another grid. With
    `parallel=false` (a serial build) every grid becomes a loop nest and
    every `attn.grid_threads` 1, and no OpenMP function is called.

    Example:

    ```mlir
    scf.forall (%i) in (%n) { ... }
    ```

    becomes

    ```mlir
    %t = func.call @omp_get_max_threads() : () -> i32
    %several0 = arith.cmpi sgt, %t, %c1_i32 : i32
    %level = func.call @omp_get_active_level() : () -> i32
    %max = func.call @omp_get_max_active_levels() : () -> i32
    %nestable = arith.cmpi slt, %level, %max : i32
    %several = arith.andi %several0, %nestable : i1
    // (and, with attn.grid_work %w: %several && %w >= min-parallel-work)
    scf.if %several {
      scf.parallel (%i) = (%c0) to (%n) step (%c1) {
        func.call @__attn_grid_f(%i, ...) : (index, ...) -> ()
      }
    } else {
      scf.for %i = %c0 to %n step %c1 {
        func.call @__attn_grid_f(%i, ...) : (index, ...) -> ()
      }
    }
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::scf::SCFDialect"];
  let options = [
    Option<"minParallelWork", "min-parallel-work", "int64_t",
           /*default=*/"int64_t(1) << 19",
           "Multiply-adds (attn.grid_work) below which a grid runs on one "
           "thread (0 or less: none)">,
    Option<"parallel", "parallel", "bool", /*default=*/"true",
           "false: every grid becomes a loop nest and attn.grid_threads 1, "
           "with no OpenMP calls (a serial build)">
  ];
}

def AttnInlineAllocaScopes : Pass<"attn-inline-alloca-scopes"> {
  let summary = "Inline memref.alloca_scope ops that hold no stack allocation";
  let description = [{
    `convert-scf-to-openmp` may wrap a parallel loop body in
    `memref.alloca_scope`; lowering the `scf.for` loops inside it to
    `cf` later gives the scope several blocks, which its verifier rejects.
    A scope with no `memref.alloca` inside (the attn lowerings use heap
    buffers only) has nothing to release, so this pass inlines its body
    into the parent block.

    Example:

    ```mlir
    memref.alloca_scope {
      scf.for %i = %c0 to %n step %c1 { ... }
    }
    ```

    becomes the bare `scf.for`.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def AttnOmpDynamicSchedule : Pass<"attn-omp-dynamic-schedule"> {
  let summary = "Give OpenMP worksharing loops without a schedule a dynamic "
                "one";
  let description = [{
    `convert-scf-to-openmp` leaves the schedule of its `omp.wsloop`s unset,
    which the OpenMP runtime treats as `static`: each thread gets one
    contiguous block of iterations. The fused form's iterations are
    (batch, K/V head, query tile), and with a causal mask the work of a
    query tile grows with its index, so with few heads a static split gives
    one thread most of the work. This pass sets `schedule(dynamic)` (chunk
    1: threads take the next iteration when they finish one) on every
    `omp.wsloop` that has no schedule; one iteration is a whole tile of
    attention, so the cost of taking one is negligible.

    Example:

    ```mlir
    omp.wsloop { omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) { ... } }
    ```

    becomes `omp.wsloop schedule(dynamic) { ... }`.
  }];
  let dependentDialects = ["::mlir::omp::OpenMPDialect"];
}

def AttnHoistLoopBuffers : Pass<"attn-hoist-loop-buffers"> {
  let summary = "Move scratch buffers out of sequential loops";
  let description = [{
    The fused form computes each key tile into scratch tensors (the score
    tile S and the packed K^T tile) created inside the loop over key tiles;
    after bufferization each is a `memref.alloc` per iteration, that is a
    `malloc`/`free` pair per tile (and, above glibc's mmap threshold, fresh
    pages to fault in). The lowering sizes them by loop-invariant values
    (the query tile's rows and the static tile width, not the last tile's
    width), so that this pass can allocate them once before the loop.

    An `memref.alloc` inside the body of an `scf.for` moves in front of the
    loop when all its size operands are defined outside the loop and no alias
    of the buffer is carried from one iteration to the next (an iter_arg,
    a loop result or a yielded value) and none is freed already (a
    `memref.dealloc` in the loop): each iteration then overwrites the
    buffer before reading it, as the fresh buffer it had before. It moves
    outward as long as that holds, and never out of an `scf.forall` or
    `scf.parallel` (each parallel iteration keeps its own buffers). Run it
    after bufferization and before the deallocation pipeline, which then
    frees the buffer after the loop.

    Example:

    ```mlir
    scf.for %k = %c0 to %n step %c1 {
      %s = memref.alloc(%rows) : memref<?x128xf32>
      ...
    }
    ```

    becomes

    ```mlir
    %s = memref.alloc(%rows) : memref<?x128xf32>
    scf.for %k = %c0 to %n step %c1 {
      ...
    }
    ```
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def AttnCheckAllocations
    : Pass<"attn-check-allocations", "::mlir::ModuleOp"> {
  let summary = "Turn failed allocations of generated code into run-time "
                "errors";
  let description = [{
    Every `memref.alloc` (an output or scratch buffer sized by the call's
    sizes: a `malloc` once lowered) is followed by a check: its size in bytes
    must fit in 64 bits (computed without overflow from the dynamic sizes)
    and its pointer must not be null. A failure is recorded through the run-time
    check channel (`attn_rt_check_failed`, `AllocFailed` or
    `AllocSizeOverflow`: `ATTN_STATUS_OUT_OF_MEMORY`), and nothing that
    could touch memory runs after it: the rest of the allocation's block is
    moved into an `scf.if` on the checks, and the rest of each enclosing
    block into an `scf.if` on `attn_rt_has_failed` (which sees the failures
    of every thread of the call). A skipped block yields zeros, and for a
    memref a view of an empty allocation with the type's static sizes (0 for
    the dynamic ones), which nothing reads and the caller frees. The
    outputs of a call that failed this way are unspecified.

    Run it after bufferization and before the deallocation pipeline, so
    that buffers are freed on both paths, and again with
    `after-deallocation` after that pipeline: it then lowers each
    `bufferization.clone` (the copies deallocation adds to return a buffer
    it does not own) to a checked allocation and a copy skipped when the
    allocation failed (the clone's uses are frees and the function's
    results, which the caller does not read after a failed call).

    Example:

    ```mlir
    %s = memref.alloc(%n) : memref<?x64xf32>
    linalg.fill ins(%cst : f32) outs(%s : memref<?x64xf32>)
    ```

    becomes

    ```mlir
    %s = memref.alloc(%n) : memref<?x64xf32>
    %p = memref.extract_aligned_pointer_as_index %s : memref<?x64xf32> -> index
    // ... %ok: %p != 0 or 256 * %n == 0, and 256 * %n fits in 64 bits;
    // attn_rt_check_failed(ctx, AllocFailed, bytes) unless %ok ...
    scf.if %ok {
      linalg.fill ins(%cst : f32) outs(%s : memref<?x64xf32>)
    }
    ```
  }];
  let options = [
    Option<"afterDeallocation", "after-deallocation", "bool",
           /*default=*/"false",
           "Lower the deallocation pipeline's clones to checked "
           "allocations and copies">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def AttnResultsToDestinations
    : Pass<"attn-results-to-destinations", "::mlir::ModuleOp"> {
  let summary = "Take dynamically shaped attention results from the caller";
  let description = [{
    Destination-passing style for entry functions whose results have dynamic
    sizes: each result becomes a trailing tensor argument (marked
    `attn.destination`) that the returned value is materialized in, so that
    `eliminate-empty-tensors` lets the lowering write the caller's buffer
    directly and `attn-results-to-out-params` drops the results after
    bufferization: the kernel allocates and copies nothing. Before each
    attention op the caller's sizes are checked against the ones its inputs
    give (`OutputBufferDim`); the op's lowering skips the work after a failed
    check and fills the destinations with zeros.

    Applies to public functions whose results are all results of
    `attn.attention` ops whose q and v are arguments, or of
    `attn.combine` ops whose out_a and lse_a are (out has out_a's sizes, lse
    lse_a's), so that a caller sizes every destination from the arguments
    (`attn::destinationShapes`); other functions keep returning their
    dynamically shaped results.

    Example:

    ```mlir
    func.func @f(%q: tensor<?x8x?x32xf32>, %k: tensor<?x2x?x32xf32>,
                 %v: tensor<?x2x?x32xf32>) -> tensor<?x8x?x32xf32>
    ```

    becomes

    ```mlir
    func.func @f(%q: tensor<?x8x?x32xf32>, %k: tensor<?x2x?x32xf32>,
                 %v: tensor<?x2x?x32xf32>,
                 %out: tensor<?x8x?x32xf32> {attn.destination})
        -> tensor<?x8x?x32xf32>
      // ... checks that %out is [B, 8, Nq, 32] of q ...
      %r = bufferization.materialize_in_destination %0 in %out
      return %r
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

def AttnWriteDestinations
    : Pass<"attn-write-destinations", "::mlir::ModuleOp"> {
  let summary = "Let the lowering write the caller's destinations in place";
  let description = [{
    Upstream's `eliminate-empty-tensors` with the analysis the pipeline's
    bufferization makes: across function boundaries, where arguments are
    writable. The `tensor.empty` a lowering fills and returns is replaced by
    the destination argument its value is materialized in
    (`attn-results-to-destinations`), so bufferization writes the caller's
    buffer in place. (Upstream's pass analyses each function alone, with
    read-only arguments, and replaces nothing there.)
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect",
                           "::mlir::tensor::TensorDialect"];
}

def AttnResultsToOutParams
    : Pass<"attn-results-to-out-params", "::mlir::ModuleOp"> {
  let summary = "Return statically shaped results through out-params";
  let description = [{
    Upstream `buffer-results-to-out-params` with the choices of the CPU
    pipeline's `out-params` option: public functions (every attn spec's entry
    function is one) are converted too, a returned buffer the function
    allocates itself becomes the caller's buffer (no copy), and a function
    whose results are all statically shaped memrefs takes them as trailing
    arguments and returns nothing. A function with a dynamically shaped
    result keeps returning its results (the caller could not size the
    buffer from the signature; upstream rejects the whole module instead).
    A result that returns a destination argument (`attn.destination`, from
    `attn-results-to-destinations`) is dropped: the caller already holds it.

    Example:

    ```mlir
    func.func @f(%q: memref<1x2x4x8xf32>) -> memref<1x2x4x8xf32>
    ```

    becomes

    ```mlir
    func.func @f(%q: memref<1x2x4x8xf32>, %out: memref<1x2x4x8xf32>)
    ```
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def AttnStridedArguments
    : Pass<"attn-bufferize-strided-arguments", "::mlir::ModuleOp"> {
  let summary = "Bufferize with kernel arguments as strided views";
  let description = [{
    One-Shot Bufferize of the whole module (function boundaries included),
    choosing the layout of the public functions' arguments so that a kernel
    reads its inputs where the caller holds them: a transposed view of
    `[B, N, H, D]` as `[B, H, N, D]`, or the first `n` rows of a longer
    cache. Arguments of a dynamic size get fully dynamic strides except the
    innermost, which becomes a static 1: the kernels' row reads and writes
    then stay plain vector loads and stores (a dynamic innermost stride
    would make them gathers). Fully static arguments take the identity
    layout: their strides stay constants the code folds (run-time strides
    cost registers in the inner loops: the AVX2 row-wise loops of a static
    kernel spilled once per iteration with them), where a dynamic size makes
    them run-time values anyway. The uses see the fully dynamic type through
    a `memref.cast`, which the canonicalizer folds into them. Results keep
    the layouts bufferization infers (identity for buffers the function
    allocates). Such functions are marked `attn.strided_arguments`, and the
    kernel ABI says so to the runtime (`ATTN_KERNEL_STRIDED_INPUTS`), which
    then passes an input of a dynamic size in place when its innermost
    stride is 1, and gathers other strided tensors into a dense copy. A
    function that may write one of its inputs (`attn.kv_cache_append`
    updates its cache in place; a call that passes an input counts) keeps
    the types but gets no attribute: a write through the caller's view
    could hit memory that two batch entries share (a stride of 0).

    A module that collapses or reshapes an argument (`tensor.collapse_shape`
    or `tensor.reshape` of an argument or a slice of one) keeps identity
    layouts at every boundary instead: bufferization would copy a strided
    source whose strides it cannot prove mergeable, on every call. So does
    a module that calls one of its public functions (a test's `main`): the
    callers' buffers have layouts of their own.

    Example:

    ```mlir
    func.func @f(%q: tensor<?x8xf32>) -> tensor<?x8xf32>
    ```

    bufferizes to

    ```mlir
    func.func @f(%q: memref<?x8xf32, strided<[?, 1], offset: ?>>)
        -> memref<?x8xf32> attributes {attn.strided_arguments} {
      %0 = memref.cast %q : memref<?x8xf32, strided<[?, 1], offset: ?>>
          to memref<?x8xf32, strided<[?, ?], offset: ?>>
      ...
    ```
  }];
  let options = [
    Option<"strided", "strided", "bool", /*default=*/"true",
           "Strided arguments where the module allows them (false: identity "
           "layouts at every boundary, strided tensors gathered by the "
           "runtime)">
  ];
  let dependentDialects = [
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::memref::MemRefDialect"
  ];
}

def AttnSetCpuTarget : Pass<"attn-set-cpu-target", "::mlir::ModuleOp"> {
  let summary = "Stamp the target CPU and features on the generated functions";
  let description = [{
    Sets `target_cpu` and `target_features` on every `llvm.func` with a body
    and `llvm.target_triple` on the module, from the pass options or, when
    they are empty, from the host (`llvm::sys::getHostCPUName` and
    `getHostCPUFeatures`). LLVM's optimizer and back end read these
    attributes per function, so the JIT, `mlir-translate | llc` and an
    object compiled ahead of time all generate code for the same CPU that
    the attn lowerings chose their register tile and vector width for,
    whatever the machine that compiles them. An unknown CPU or feature is
    an error.

    Example: `--attn-set-cpu-target="target-cpu=znver3"` gives

    ```mlir
    module attributes {llvm.target_triple = "x86_64-unknown-linux-gnu"} {
      llvm.func @f(...) attributes {target_cpu = "znver3",
          target_features = #llvm.target_features<[]>} { ... }
    }
    ```
  }];
  let options = [
    Option<"targetCpu", "target-cpu", "std::string", "\"\"",
           "LLVM CPU name (empty: the host)">,
    Option<"targetFeatures", "target-features", "std::string", "\"\"",
           "LLVM features over the CPU's own, e.g. +avx2,-avx512f">,
    Option<"targetTriple", "target-triple", "std::string", "\"\"",
           "LLVM target triple (empty: this machine's), e.g. "
           "aarch64-linux-gnu">
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // ATTN_TRANSFORMS_PASSES_TD
