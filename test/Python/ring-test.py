#!/usr/bin/env python3
"""attn.ring (python/attn/ring.py): ring attention over torch.distributed
with 2 and 3 processes on this machine (gloo on 127.0.0.1, a free port), each
holding one contiguous chunk of the sequence. The gathered outputs and lse
are compared with attn.flash.flash_attn_func on the whole sequence in one
process and with this file's own f64 reference (softmax over the whole
sequence, causal top-left), causal and not, MHA, GQA and MQA, f32, f16 and
bf16; and the errors: no process group, bad input on one rank, ranks whose
shapes differ (every rank raises, none hangs).

    ring-test.py [SEED]     random inputs from SEED (printed; default 26)

Exits 77 (skipped) when numpy, torch, torch.distributed or its gloo backend
is unavailable.
"""

import datetime
import math
import os
import pickle
import socket
import sys
import tempfile
import time

SKIP = 77
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "python"))
# One thread per process (the kernels' OpenMP and torch's own): set before
# either is loaded, and inherited by the spawned processes.
os.environ["OMP_NUM_THREADS"] = "1"
try:
    import numpy as np
except ImportError:
    print("numpy is not available: skipped")
    sys.exit(SKIP)
try:
    import torch
except ImportError:
    print("torch is not available: skipped")
    sys.exit(SKIP)
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

import attn.flash as flash  # noqa: E402
import attn.ring as ring  # noqa: E402

B, N, D = 2, 5, 16  # batch, positions per rank, head dim
# (label, dtype, Hq, Hkv, Dv, causal, softmax_scale, tolerance)
CONFIGS = [
    ("MHA", "float32", 4, 4, D, False, None, 2e-5),
    ("MHA causal", "float32", 4, 4, D, True, None, 2e-5),
    ("GQA", "float32", 4, 2, D, False, None, 2e-5),
    ("GQA causal", "float32", 4, 2, D, True, None, 2e-5),
    ("MQA causal Dv 8 scale 0.3", "float32", 4, 1, 8, True, 0.3, 2e-5),
    ("GQA causal", "float16", 4, 2, D, True, None, 4e-3),
    ("GQA", "bfloat16", 4, 2, D, False, None, 3e-2),
]
# The 3-rank run: GQA f32, causal and not.
CONFIGS_3 = [CONFIGS[2], CONFIGS[3]]


def inputs(seed, index, world, config):
    """The whole sequence's q, k, v [B, world * N, H, D] of a config, the
    same in every process (torch tensors of the config's dtype)."""
    _, dtype, hq, hkv, dv, _, _, _ = config
    rng = np.random.default_rng([seed, world, index])
    n = world * N
    arrays = (rng.uniform(-1, 1, shape).astype(np.float32) for shape in
              ((B, n, hq, D), (B, n, hkv, D), (B, n, hkv, dv)))
    return [torch.from_numpy(a).to(getattr(torch, dtype)) for a in arrays]


def F(x):
    """A tensor as an f64 numpy array."""
    return x.float().numpy().astype(np.float64)


def reference(q, k, v, causal, scale=None):
    """out [B, N, Hq, Dv] and lse [B, Hq, N] of the whole sequence in f64
    (q [B, N, Hq, D], k and v [B, N, Hkv, D]; query head h reads K/V head
    h // (Hq / Hkv))."""
    q, k, v = F(q), F(k), F(v)
    n, hq, d = q.shape[1], q.shape[2], q.shape[3]
    group = hq // k.shape[2]
    k, v = np.repeat(k, group, axis=2), np.repeat(v, group, axis=2)
    scale = 1 / math.sqrt(d) if scale is None else scale
    s = np.einsum("bihd,bjhd->bhij", q, k) * scale
    if causal:
        s = np.where(np.tril(np.ones((n, n), bool)), s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    w = np.exp(s - m)
    total = w.sum(axis=-1, keepdims=True)
    out = np.einsum("bhij,bjhd->bihd", w / total, v)
    return out, (m + np.log(total))[..., 0]


def worker(rank, world, seed, configs, result_dir):
    """One rank: its chunk of every config through ring_attention, then the
    error cases; the results pickled to result_dir/rank<r>.pkl."""
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=60))
    results = {"outputs": [], "errors": {}}
    lo, hi = rank * N, (rank + 1) * N
    for index, config in enumerate(configs):
        q, k, v = inputs(seed, index, world, config)
        q, k, v = q[:, lo:hi], k[:, lo:hi], v[:, lo:hi]
        before = [x.clone() for x in (q, k, v)]
        start = time.perf_counter()
        out, lse = ring.ring_attention(q, k, v, causal=config[5],
                                       softmax_scale=config[6],
                                       return_lse=True)
        results["outputs"].append((
            F(out), lse.numpy().astype(np.float64), str(out.dtype),
            time.perf_counter() - start,
            all(torch.equal(x, y) for x, y in zip(before, (q, k, v)))))
    q, k, v = inputs(seed, 0, world, CONFIGS[3])
    q, k, v = q[:, lo:hi], k[:, lo:hi], v[:, lo:hi]

    def error(label, *args):
        try:
            ring.ring_attention(*args)
            results["errors"][label] = None
        except (TypeError, ValueError) as e:
            results["errors"][label] = f"{type(e).__name__}: {e}"
    # One rank's chunk one position longer: every rank raises.
    error("shapes differ", *((q[:, :-1], k[:, :-1], v[:, :-1]) if rank == 1
                             else (q, k, v)))
    # Bad input on rank 0 only (3 query heads over 2 K/V heads).
    error("bad input on rank 0", *((q[:, :, :3], k, v) if rank == 0
                                   else (q, k, v)))
    # The group still works after the errors.
    out = ring.ring_attention(q, k, v, causal=True)
    results["after errors"] = F(out)
    dist.destroy_process_group()
    with open(os.path.join(result_dir, f"rank{rank}.pkl"), "wb") as f:
        pickle.dump(results, f)


failures = 0


def check(ok, what):
    global failures
    print(("ok    " if ok else "FAIL  ") + what)
    failures += 0 if ok else 1


def close(got, want, tol):
    return bool(got.shape == want.shape and np.all(np.isfinite(got))
                and np.abs(got - want).max() <= tol)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(world, seed, configs):
    """Spawns `world` ranks on `configs` and checks what they computed."""
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(free_port())
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as result_dir:
        try:
            mp.spawn(worker, args=(world, seed, configs, result_dir),
                     nprocs=world, join=True)
        except Exception as e:  # a rank raised or died
            check(False, f"{world} ranks ran: {e}")
            return
        results = []
        for r in range(world):
            with open(os.path.join(result_dir, f"rank{r}.pkl"), "rb") as f:
                results.append(pickle.load(f))
    print(f"{world} ranks: {time.perf_counter() - start:.1f} s (spawn, "
          f"JIT compiles and runs)")
    for index, config in enumerate(configs):
        label, dtype, hq, hkv, dv, causal, scale, tol = config
        q, k, v = inputs(seed, index, world, config)
        outs = [res["outputs"][index] for res in results]
        out = np.concatenate([o[0] for o in outs], axis=1)
        lse = np.concatenate([o[1] for o in outs], axis=2)
        want_o, want_l = reference(q, k, v, causal, scale)
        one_o, one_l, _ = flash.flash_attn_func(
            q, k, v, causal=causal, softmax_scale=scale,
            return_attn_probs=True)
        one_o, one_l = F(one_o), F(one_l)
        lse_tol = 1e-4 if dtype != "bfloat16" else tol
        what = (f"{world} ranks {label} {dtype} (slowest rank "
                f"{max(o[3] for o in outs) * 1e3:.0f} ms, JIT included)")
        check(all(o[2] == f"torch.{dtype}" and o[4] for o in outs)
              and close(out, want_o, tol) and close(lse, want_l, lse_tol),
              f"{what}: against the f64 reference, inputs unchanged")
        check(close(out, one_o, tol) and close(lse, one_l, lse_tol),
              f"{what}: against one process's flash_attn_func")
    if world == 2:
        errors = [res["errors"] for res in results]
        for label in errors[0]:
            print(f"      {label}: " + " | ".join(
                f"rank {r}: {e[label]}" for r, e in enumerate(errors)))
        check(all(str(e["shapes differ"]).startswith("ValueError: attn.ring:"
                                                     " the ranks' inputs "
                                                     "differ (N 4..5)")
                  for e in errors), "ranks with different N all raise")
        bad = [e["bad input on rank 0"] for e in errors]
        check(str(bad[0]).startswith("ValueError: attn.flash: 3 query "
                                     "heads") and
              str(bad[1]).startswith("ValueError: attn.ring: another "
                                     "rank's input is bad"),
              "bad input on one rank: it raises its error, the others too")
        q, k, v = inputs(seed, 0, world, CONFIGS[3])
        got = np.concatenate([res["after errors"] for res in results], 1)
        check(close(got, reference(q, k, v, True)[0], 2e-5),
              "the group works after the errors")


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 26
    print(f"seed {seed} (ring-test.py {seed} reruns these inputs)")
    if not dist.is_available():
        print("torch.distributed is not available: skipped")
        sys.exit(SKIP)
    if not dist.is_gloo_available():
        print("torch.distributed's gloo backend is not available: skipped")
        sys.exit(SKIP)
    torch.set_num_threads(1)
    try:
        q = torch.zeros(1, 2, 1, 8)
        ring.ring_attention(q, q, q)
        check(False, "no process group refused")
    except ValueError as e:
        check("not initialized" in str(e), "no process group refused")
    run(2, seed, CONFIGS)
    run(3, seed, CONFIGS_3)
    print("attn.ring: " + ("all passed" if not failures
                           else f"{failures} FAILED"))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
