#!/usr/bin/env python3
"""Strided inputs (issue 26): what a transposed view costs a kernel call.
A PyTorch model holds q, k, v as [B, N, H, D] and passes
``x.transpose(1, 2)`` views to a kernel compiled for [B, H, N, D]. A kernel
of static sizes gets each strided input gathered into the runtime's dense
workspace before the call; a kernel of dynamic sizes reads the views in
place (ATTN_KERNEL_STRIDED_INPUTS). Measured in one process on torch CPU
tensors, one thread, for both kernels:

- the call on dense tensors,
- the call on the transposed views (the runtime's gather, if any, included),
- torch's own ``.contiguous()`` of the same three views (what a caller
  would otherwise do).

Then a decode step of a kernel of dynamic key length on the first ``n``
rows of a longer K/V cache (``k[:, :, :n]`` views), compiled by
attn-compile with ``--strided-inputs=false`` (the runtime gathers the
views: the valid part of the cache, per call) and with the default (read in
place), each on the views and on dense copies.

    python3 bench/strided_inputs.py [--n 512] [--heads 8] [--dim 64]
        [--attn-compile build/bin/attn-compile]

Prints the CPU, medians and minimums (ms) and the gather's cost per input
against torch's copy.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402

import attn  # noqa: E402
import hostcpu  # noqa: E402


def timed(fn, reps):
    xs = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        xs.append((time.perf_counter() - start) * 1e3)
    return statistics.median(xs), min(xs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=512)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--attn-compile", default=os.path.join(
        os.path.dirname(__file__), "..", "build", "bin", "attn-compile"))
    args = ap.parse_args()
    torch.set_num_threads(1)
    n, h, d = args.n, args.heads, args.dim
    torch.manual_seed(0)
    stored = [torch.randn(1, n, h, d) for _ in range(3)]
    views = [x.transpose(1, 2) for x in stored]
    dense = [x.contiguous() for x in views]
    out = torch.empty(1, h, n, d)
    cpu = f"{hostcpu.cpu_model()} ({hostcpu.isa_label(hostcpu.read_flags())})"
    print(f"CPU: {cpu}; torch {torch.__version__}; one thread;"
          f" q, k, v [1, {h}, {n}, {d}] f32 as transposed views of "
          f"[1, {n}, {h}, {d}]")
    print("kernel   round  dense call ms (min)  strided call ms (min)  "
          "extra per input ms  torch .contiguous() per input ms")
    for sizes, seq in (("static", str(n)), ("dynamic", "?")):
        t = f"tensor<1x{h}x{seq}x{d}xf32>"
        spec = (f"func.func @f(%q: {t}, %k: {t}, %v: {t}) -> {t} {{\n"
                f"  %o = attn.attention q(%q : {t}) k(%k : {t}) v(%v : {t}) "
                f"causal(top_left) -> {t}\n  return %o : {t}\n}}\n")
        kernel = attn.jit(spec, name=f"strided_{sizes}.mlir",
                          parallel=False)["f"]
        check = kernel(*views)
        assert torch.equal(check, kernel(*dense)), "strided and dense differ"
        for r in range(args.rounds):
            a = timed(lambda: kernel(*dense, out=out), args.reps)
            b = timed(lambda: kernel(*views, out=out), args.reps)
            c = timed(lambda: [x.contiguous() for x in views], args.reps)
            print(f"{sizes:8s} {r:5d}  {a[0]:8.3f} ({a[1]:.3f})"
                  f"  {b[0]:14.3f} ({b[1]:.3f})"
                  f"  {(b[1] - a[1]) / 3:18.3f}  {c[1] / 3:18.3f}")
    cache_slices(args)


def cache_slices(args):
    """A decode step on k[:, :, :n] and v[:, :, :n] of a cache of 2n rows."""
    b, hq, hkv, d, n = 4, 32, 8, 128, 2048
    qt = f"tensor<{b}x{hq}x1x{d}xf32>"
    kt = f"tensor<{b}x{hkv}x?x{d}xf32>"
    spec = (f"func.func @f(%q: {qt}, %k: {kt}, %v: {kt}) -> {qt} {{\n"
            f"  %o = attn.attention q(%q : {qt}) k(%k : {kt}) v(%v : {kt}) "
            f"causal(bottom_right) -> {qt}\n  return %o : {qt}\n}}\n")
    kernels = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "decode.mlir")
        with open(path, "w") as f:
            f.write(spec)
        for strided in ("false", "true"):
            lib = os.path.join(tmp, f"decode_{strided}.so")
            subprocess.run([args.attn_compile, path, "--emit=shared",
                            "--form=decode", "--parallel=false",
                            f"--strided-inputs={strided}", "-o", lib],
                           check=True)
            kernels[strided] = attn.load_library(lib)["f"]
        q = torch.randn(b, hq, 1, d)
        kc, vc = torch.randn(b, hkv, 2 * n, d), torch.randn(b, hkv, 2 * n, d)
        views = (kc[:, :, :n], vc[:, :, :n])
        dense = tuple(x.contiguous() for x in views)
        out = torch.empty(b, hq, 1, d)
        ref = kernels["true"](q, *dense)
        for kernel in kernels.values():
            assert torch.allclose(kernel(q, *views), ref, atol=1e-6)
        print(f"\ndecode step, q [{b}, {hq}, 1, {d}], k and v the first {n} "
              f"of {2 * n} rows of a [{b}, {hkv}, {2 * n}, {d}] f32 cache; "
              "ms, median (min)")
        print("round  --strided-inputs=false: dense, views  "
              "default: dense, views")
        for r in range(args.rounds):
            row = []
            for strided in ("false", "true"):
                for kv in (dense, views):
                    m, lo = timed(lambda: kernels[strided](q, *kv, out=out),
                                  args.reps)
                    row.append(f"{m:7.2f} ({lo:.2f})")
            print(f"{r:5d}  {row[0]}  {row[1]}    {row[2]}  {row[3]}")

if __name__ == "__main__":
    main()
