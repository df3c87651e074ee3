#!/usr/bin/env python3
"""Per-call overhead of a decode step from Python (issue 26's target: a
decode step's overhead <= 1.5x SDPA's call): one new token against a short
KV cache (B=1, 8/2 heads, head dim 32, 64 cached keys by default), so the
kernel's own work is small and the time is mostly the call. Measured in one
process, interleaved rounds, on torch CPU tensors:

- ``flash_attn_with_kvcache`` (attn.flash, dynamic sizes, kv_len),
- the same kernel called directly (``attn.Kernel.__call__``, outputs given),
- the bare ``attn_kernel_call`` (prepared arguments: the runtime and kernel),
- ``torch.nn.functional.scaled_dot_product_attention`` on the same shapes
  (K/V already expanded to the query heads, as a model would call it).

    OMP_NUM_THREADS=1 python3 bench/call_overhead.py [--cache 64] [--rounds 7]

Prints the CPU, medians (microseconds per call) with spreads, and the ratios
to SDPA.
"""
import argparse
import ctypes
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402

import attn  # noqa: E402
import hostcpu  # noqa: E402
import attn.flash as flash  # noqa: E402
from attn import _abi  # noqa: E402


def per_call_us(fn, calls):
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls * 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", type=int, default=64)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--kv-heads", type=int, default=2)
    ap.add_argument("--dim", type=int, default=32)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    torch.manual_seed(0)
    hq, hkv, d, n = args.heads, args.kv_heads, args.dim, args.cache
    q = torch.randn(1, 1, hq, d)
    k_cache = torch.randn(1, n, hkv, d)
    v_cache = torch.randn(1, n, hkv, d)
    seqlens = torch.full((1,), n, dtype=torch.int32)

    def ours():
        return flash.flash_attn_with_kvcache(q, k_cache, v_cache,
                                             cache_seqlens=seqlens,
                                             causal=True)

    # The kernel with lse (six tensors, as measured since the sixteenth
    # session) for the direct and bare calls; ours() as a decode step
    # calls it, without lse (a kernel of its own since the 29th session).
    flash.flash_attn_with_kvcache(q, k_cache, v_cache, cache_seqlens=seqlens,
                                  causal=True, return_softmax_lse=True)
    kernel = [k for k in flash._KERNELS.values()
              if isinstance(k, attn.Kernel)][-1]
    out = ours()
    o = torch.empty_like(out)
    lse = torch.empty(1, hq, 1)

    def direct():
        kernel(q, k_cache, v_cache, seqlens, out=(o, lse))

    tensors = [q, k_cache, v_cache, seqlens, o, lse]
    views = [attn._dlpack_tensor(t) for t in tensors]
    array = (ctypes.POINTER(_abi.DLTensor) * len(views))(
        *[view[0] for view in views])
    runtime = kernel._owner._runtime
    opts = _abi.ExecOptions()
    runtime.attn_exec_options_init(ctypes.byref(opts))

    def bare():
        runtime.attn_kernel_call(kernel._info, array, len(tensors),
                                 ctypes.byref(opts))

    qt = q.transpose(1, 2)
    kt = k_cache.transpose(1, 2).repeat_interleave(hq // hkv, 1)
    vt = v_cache.transpose(1, 2).repeat_interleave(hq // hkv, 1)

    def sdpa():
        return torch.nn.functional.scaled_dot_product_attention(qt, kt, vt)

    err = (out.transpose(1, 2) - sdpa()).abs().max().item()
    cpu = f"{hostcpu.cpu_model()} ({hostcpu.isa_label(hostcpu.read_flags())})"
    print(f"CPU: {cpu}; torch {torch.__version__}; threads "
          f"{torch.get_num_threads()}; decode B=1 Hq={hq} Hkv={hkv} D={d} "
          f"cache {n}; max |attn - sdpa| {err:.2g}")
    cases = {"attn.flash.flash_attn_with_kvcache": ours,
             "attn.Kernel.__call__": direct, "attn_kernel_call (bare)": bare,
             "sdpa": sdpa}
    times = {name: [] for name in cases}
    for _ in range(args.rounds):
        for name, fn in cases.items():
            fn()
            times[name].append(per_call_us(fn, args.calls))
    base = statistics.median(times["sdpa"])
    print(f"{'call':38s} {'median us':>10s} {'min-max':>15s} {'/ sdpa':>7s}")
    for name, ts in times.items():
        med = statistics.median(ts)
        print(f"{name:38s} {med:10.1f} {min(ts):7.1f}-{max(ts):<7.1f} "
              f"{med / base:7.2f}")


if __name__ == "__main__":
    main()
