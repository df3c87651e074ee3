"""Times torch.nn.functional.scaled_dot_product_attention on the CPU for one
shape and thread count, in a process of its own (so that its peak-memory
figure is its own). Called by bench.py; prints nothing on success but writes
its output (.npy) and a JSON report.

Masks, matching the attn spec (docs/Semantics.md):
  - no kv_len, no window, causal top_left -> is_causal=True (SDPA's causal is
    top-left aligned);
  - no kv_len, no window, no causal -> no mask;
  - Nq = 1, causal bottom_right, every kv_len[b] = Nk -> no mask: the query
    sits at position Nk - 1 and may read every key, so the two are equal;
  - anything else -> an explicit boolean mask [B, 1, Nq, Nk] (True = may
    read), built before timing from the same interval rules.
Heads: enable_gqa=True when Hq != Hkv (K/V heads are shared, not copied by
the caller).

Type: --dtype f32|bf16|f16 converts q, k, v to that type before timing (the
bf16 inputs are f32 files of bf16 values and the f16 inputs f16 files, so the
conversion is exact and SDPA sees the values attn-run sees); the output is
saved as f32 (exact for both).

Peak extra memory: the process's resident-set high-water mark (VmHWM in
/proc/self/status) over the warm-up and timed calls, minus its resident set
just before them (inputs and mask loaded; the high-water mark is reset there
through /proc/self/clear_refs), minus the output's size.
"""
import argparse
import json
import os
import time

import numpy as np
import torch
import torch.nn.functional as F


def status_bytes(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(field + " not in /proc/self/status")


def reset_peak_rss():
    """Resets the resident-set high-water mark (VmHWM) to the current RSS
    (Linux >= 4.0: write 5 to /proc/self/clear_refs); returns the current RSS."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    return status_bytes("VmRSS")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--causal", default="none")
    ap.add_argument("--window-left", type=int, default=-1)
    ap.add_argument("--window-right", type=int, default=-1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--out", required=True)
    ap.add_argument("--report", required=True)
    ap.add_argument("--dtype", default="f32", choices=["f32", "bf16", "f16"])
    a = ap.parse_args()
    torch.set_num_threads(a.threads)

    q = torch.from_numpy(np.load(os.path.join(a.dir, "q.npy")))
    k = torch.from_numpy(np.load(os.path.join(a.dir, "k.npy")))
    v = torch.from_numpy(np.load(os.path.join(a.dir, "v.npy")))
    ty = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}[a.dtype]
    q, k, v = q.to(ty), k.to(ty), v.to(ty)
    B, Hq, Nq, _ = q.shape
    Hkv, Nk = k.shape[1], k.shape[2]
    len_path = os.path.join(a.dir, "kv_len.npy")
    kv_len = np.load(len_path).astype(np.int64) if os.path.exists(len_path) else None

    mask, is_causal, how = None, False, "no mask"
    windowed = a.window_left >= 0 or a.window_right >= 0
    full_len = kv_len is None or bool(np.all(kv_len >= Nk))
    if full_len and not windowed and a.causal == "top_left":
        is_causal, how = True, "is_causal=True (top-left)"
    elif full_len and not windowed and a.causal == "none":
        pass
    elif full_len and not windowed and a.causal == "bottom_right" and Nq == 1:
        how = "no mask (Nq=1, kv_len=Nk: bottom-right causal allows every key)"
    else:
        lens = np.full(B, Nk) if kv_len is None else np.clip(kv_len, 0, Nk)
        i = np.arange(Nq)[None, :, None]
        j = np.arange(Nk)[None, None, :]
        L = lens[:, None, None]
        p = i + L - Nq if a.causal == "bottom_right" else np.broadcast_to(i, (B, Nq, 1))
        allowed = j < L
        if a.causal != "none":
            allowed = allowed & (j <= p)
        if a.window_left >= 0:
            allowed = allowed & (p - j <= a.window_left)
        if a.window_right >= 0:
            allowed = allowed & (j - p <= a.window_right)
        mask = torch.from_numpy(np.ascontiguousarray(allowed[:, None, :, :]))
        how = "explicit boolean mask [B,1,Nq,Nk]"
    gqa = Hq != Hkv

    def call():
        return F.scaled_dot_product_attention(
            q, k, v, attn_mask=mask, is_causal=is_causal, enable_gqa=gqa)

    backend = None
    try:  # which fused kernel SDPA picks (private API, informational only)
        from torch.backends.cuda import SDPBackend  # noqa: F401
        choice = torch._fused_sdp_choice(q, k, v, mask, 0.0, is_causal,
                                         enable_gqa=gqa)
        backend = {0: "math", 1: "flash", 2: "efficient", 3: "cudnn",
                   4: "overrideable"}.get(int(choice), str(choice))
    except Exception:  # noqa: BLE001
        pass

    with torch.inference_mode():
        rss0 = reset_peak_rss()
        out = call()  # warm-up
        times = []
        for _ in range(a.reps):
            t0 = time.perf_counter()
            out = call()
            times.append(time.perf_counter() - t0)
        rss1 = status_bytes("VmHWM")
    out_np = out.float().contiguous().numpy()
    np.save(a.out, out_np)
    times.sort()
    rep = {
        "torch": torch.__version__,
        "dtype": str(ty).replace("torch.", ""),
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "threads": torch.get_num_threads(),
        "mask": how,
        "enable_gqa": gqa,
        "backend": backend,
        "median_s": times[len(times) // 2],
        "min_s": times[0],
        "max_s": times[-1],
        "times_s": times,
        "peak_rss_delta_bytes": rss1 - rss0,
        "output_bytes": int(out_np.nbytes),
        "extra_bytes": max(rss1 - rss0 - int(out_np.nbytes), 0),
    }
    with open(a.report, "w") as f:
        json.dump(rep, f)


if __name__ == "__main__":
    main()
