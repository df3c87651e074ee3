"""Unit test of the GPU benchmark's f64 reference and helpers, on the CPU.

    bench/.venv/bin/python bench/gpu_reference_test.py

Checks bench/gpu_reference.py against a loop written from docs/Semantics.md
with numpy (GQA, both causal alignments, kv_len, a row with no readable key),
and that bench/gpu_bench.py imports and formats its table without a GPU.
Exits 77 (skipped) without numpy or torch.
"""

import math
import os
import sys

try:
    import numpy as np
    import torch
except ImportError as e:
    print(f"skipped: {e}")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_bench
import gpu_serving  # noqa: E402
import gpu_reference as ref  # noqa: E402

failures = 0


def check(cond, what):
    global failures
    if not cond:
        print("FAIL:", what)
        failures += 1


def naive(q, k, v, causal, kv_len):
    """One (b, h, i) at a time, straight from the contract."""
    B, Hq, Nq, D = q.shape
    Hkv, Nk = k.shape[1], k.shape[2]
    out = np.zeros((B, Hq, Nq, v.shape[3]))
    for b in range(B):
        kv = Nk if kv_len is None else kv_len[b]
        for h in range(Hq):
            g = h // (Hq // Hkv)
            for i in range(Nq):
                p = i if causal != "bottom_right" else i + kv - Nq
                keys = [j for j in range(Nk)
                        if j < kv and (causal is None or j <= p)]
                if not keys:
                    continue
                s = np.array([q[b, h, i] @ k[b, g, j] / math.sqrt(D)
                              for j in keys])
                w = np.exp(s - s.max())
                out[b, h, i] = w @ v[b, g, keys] / w.sum()
    return out


rng = np.random.default_rng(3)
q = rng.standard_normal((2, 4, 5, 8))
k = rng.standard_normal((2, 2, 7, 8))
v = rng.standard_normal((2, 2, 7, 8))
tq, tk, tv = (torch.from_numpy(x) for x in (q, k, v))
for causal in (None, "top_left", "bottom_right"):
    for kv_len in (None, [7, 3], [0, 6]):
        want = naive(q, k, v, causal, kv_len)
        got = ref.reference_rows(tq, tk, tv, [0, 2, 4], [0, 1], causal,
                                 kv_len=kv_len).numpy()
        err = np.abs(got - want[:, :, [0, 2, 4]]).max()
        check(err < 1e-12, f"causal={causal} kv_len={kv_len}: error {err}")
        check(not np.isnan(got).any(), f"NaN for causal={causal} "
              f"kv_len={kv_len}")
# kv_len = 0: every row of batch 0 reads nothing and is exactly 0.
zero = ref.reference_rows(tq, tk, tv, [0, 1], [0], "top_left", kv_len=[0, 6])
check(bool((zero == 0).all()), "a row with no readable key is 0")
# A scale other than 1/sqrt(D): the same as pre-scaled queries.
a = ref.reference_rows(tq, tk, tv, [1], [1], None, scale=0.5)
b = ref.reference_rows(tq * (0.5 * math.sqrt(8)), tk, tv, [1], [1], None)
check(torch.allclose(a, b), "scale")
# A mask_mod's values (`allowed`): documents 0, 0, 1, 1, 1, 2, 2 over the 7
# keys and the 5 queries' ids, causal, against the loop with the same keys.
doc_k = [0, 0, 1, 1, 1, 2, 2]
doc_q = [0, 1, 1, 1, 2]
allowed = torch.tensor([[doc_q[i] == doc_k[j] for j in range(7)]
                        for i in range(5)])
got = ref.reference_rows(tq, tk, tv, [0, 1, 2, 3, 4], [0], "top_left",
                         allowed=allowed).numpy()
for i in range(5):
    keys = [j for j in range(7) if j <= i and doc_q[i] == doc_k[j]]
    for h in range(4):
        g = h // 2
        if not keys:
            check(np.abs(got[0, h, i]).max() == 0, f"empty row {i}")
            continue
        s = np.array([q[0, h, i] @ k[0, g, j] / math.sqrt(8) for j in keys])
        w = np.exp(s - s.max())
        want = w @ v[0, g, keys] / w.sum()
        check(np.abs(got[0, h, i] - want).max() < 1e-12,
              f"allowed: row {i} head {h}")
# The serving rows' specs and table (gpu_serving.py), without a GPU.
docs = gpu_serving.document_ids(100, 8)
check(docs == sorted(docs) and len(set(docs)) == 8 and len(docs) == 100,
      f"document ids {docs}")
names = [s["name"] for s in gpu_serving.specs()]
check("docmask_n32k_bf16" in names and "ragged_padded_b8_n4k_bf16" in names,
      f"serving specs {names}")
for s in gpu_serving.specs():
    if s["kind"] in gpu_serving.KINDS:
        check(f"func.func @{s['name']}(" in gpu_serving.spec_text(s),
              f"spec text {s['name']}")
paged = [s for s in gpu_serving.specs() if s["kind"] == "paged"][0]
prow = {"spec": paged, "status": "ok", "ours": [0.10, 0.11, 0.10],
        "err": 1e-3, "tol": 2e-2,
        "peers": {"ours contiguous": [0.1, 0.1], "SDPA contiguous": [0.2]},
        "peer_err": {"ours contiguous": 1e-3}}
ptable = gpu_serving.markdown([prow], {"peak_gbs": 4800.0})
check("| paged_decode_b16_kv16k_bf16 |" in ptable and "1.00x contiguous" in
      ptable and "% HBM" in ptable, ptable)

# Low-precision inputs are widened, not computed in their own precision.
half = ref.reference_rows(tq.half(), tk.half(), tv.half(), [0], [0], None)
check(half.dtype == torch.float64, "f64 result for f16 inputs")

for nq, nk, causal in ((5, 5, "top_left"), (3, 9, "bottom_right"),
                       (4, 6, None), (6, 4, "bottom_right"),
                       (7, 3, "top_left")):
    want = int(ref.allowed_keys(nq, nk, causal).sum())
    check(gpu_bench.pairs({"Nq": nq, "Nk": nk, "causal": causal}) == want,
          f"pairs {nq}x{nk} {causal}")

# The benchmark's own arithmetic and table, without a GPU.
spec = {"name": "prefill_x", "kind": "prefill", "B": 2, "Hq": 4, "Hkv": 2,
        "Nq": 8, "Nk": 8, "D": 16, "dtype": "bf16", "causal": "top_left"}
check(gpu_bench.flops(spec) == 4 * 2 * 4 * 16 * 36, "flops")
dec = dict(spec, kind="decode", Nq=1, causal=None)
check(gpu_bench.bytes_moved(dec) == 2 * (2 * 4 * 1 * 16 * 2 + 2 * 2 * 2 * 8 *
                                         16), "bytes")
row = {"spec": spec, "status": "ok", "ours": [1.0, 1.2, 0.9], "err": 1e-3,
       "tol": 2e-2, "sdpa": {"flash": [0.5, 0.5], "cudnn": None,
                             "efficient": "error: no kernel"}}
table = gpu_bench.markdown([row], {"name": "Test GPU", "peak_tflops": 100.0,
                                   "peak_gbs": 1000.0})
check("| prefill_x |" in table and "| 2.00x |" not in table and
      "0.50x" in table, table)
fail = {"spec": dec, "status": "FAIL", "message": "not compiled"}
check("FAIL: not compiled" in gpu_bench.markdown([fail], {}), "FAIL row")

if failures:
    print(f"gpu_reference_test: {failures} failures")
    sys.exit(1)
print("gpu_reference_test: ok")
