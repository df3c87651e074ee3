#!/usr/bin/env python3
"""Strided inputs (issue 26): what a transposed view costs a kernel call.
A PyTorch model holds q, k, v as [B, N, H, D] and passes
``x.transpose(1, 2)`` views to a kernel compiled for [B, H, N, D]; the
runtime gathers each strided input into its dense workspace before the
call. Measured in one process on torch CPU tensors, one thread:

- the call on dense tensors,
- the call on the transposed views (the runtime's gather included),
- torch's own ``.contiguous()`` of the same three views (what a caller
  would otherwise do).

    python3 bench/strided_inputs.py [--n 512] [--heads 8] [--dim 64]

Prints the CPU, medians and minimums (ms) and the gather's cost per input
against torch's copy.
"""
import argparse
import os
import statistics
import sys
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
    args = ap.parse_args()
    torch.set_num_threads(1)
    n, h, d = args.n, args.heads, args.dim
    t = f"tensor<1x{h}x{n}x{d}xf32>"
    spec = (f"func.func @f(%q: {t}, %k: {t}, %v: {t}) -> {t} {{\n"
            f"  %o = attn.attention q(%q : {t}) k(%k : {t}) v(%v : {t}) "
            f"causal(top_left) -> {t}\n  return %o : {t}\n}}\n")
    kernel = attn.jit(spec, name="strided.mlir", parallel=False)["f"]
    torch.manual_seed(0)
    stored = [torch.randn(1, n, h, d) for _ in range(3)]
    views = [x.transpose(1, 2) for x in stored]
    dense = [x.contiguous() for x in views]
    out = torch.empty(1, h, n, d)
    check = kernel(*views)
    assert torch.equal(check, kernel(*dense)), "strided and dense differ"
    cpu = f"{hostcpu.cpu_model()} ({hostcpu.isa_label(hostcpu.read_flags())})"
    print(f"CPU: {cpu}; torch {torch.__version__}; one thread;"
          f" q, k, v [1, {h}, {n}, {d}] f32 as transposed views of "
          f"[1, {n}, {h}, {d}]")
    print("round  dense call ms (min)  strided call ms (min)  "
          "gather per input ms  torch .contiguous() per input ms")
    for r in range(args.rounds):
        a = timed(lambda: kernel(*dense, out=out), args.reps)
        b = timed(lambda: kernel(*views, out=out), args.reps)
        c = timed(lambda: [x.contiguous() for x in views], args.reps)
        print(f"{r:5d}  {a[0]:8.3f} ({a[1]:.3f})  {b[0]:14.3f} ({b[1]:.3f})"
              f"  {(b[1] - a[1]) / 3:19.3f}  {c[1] / 3:18.3f}")


if __name__ == "__main__":
    main()
