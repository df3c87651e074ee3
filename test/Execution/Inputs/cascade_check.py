#!/usr/bin/env python3
"""Checks a shared-prefix (cascade) decode against an f64 reference written
from docs/Semantics.md: sequence b's query attends to the whole prefix and
to the first kv_len[b] tokens of its pages, in one softmax.

usage: cascade_check.py DIR ATOL  (DIR holds q, kp, vp, ks, vs, pt, len,
out and lse .npy files; bnhd layouts as in the spec)
"""
import math
import os
import sys

import numpy as np

d, atol = sys.argv[1], float(sys.argv[2])
ld = lambda n: np.load(os.path.join(d, n + ".npy")).astype(np.float64)
q, kp, vp, ks, vs = ld("q"), ld("kp"), ld("vp"), ld("ks"), ld("vs")
pt = np.load(os.path.join(d, "pt.npy"))
lens = np.load(os.path.join(d, "len.npy"))
out, lse = ld("out"), ld("lse")
B, _, Hq, D = q.shape
Hkv, S = kp.shape[2], ks.shape[1]
R = Hq // Hkv
worst = worst_lse = 0.0
for b in range(B):
    n = int(lens[b])
    rows = [ks[pt[b, j // S], j % S] for j in range(n)]
    vrows = [vs[pt[b, j // S], j % S] for j in range(n)]
    k = np.concatenate([kp[0]] + ([np.stack(rows)] if n else []))  # [N, Hkv, D]
    v = np.concatenate([vp[0]] + ([np.stack(vrows)] if n else []))
    for h in range(Hq):
        g = h // R
        s = k[:, g, :] @ q[b, 0, h, :] / math.sqrt(D)
        m = s.max()
        w = np.exp(s - m)
        want = (w @ v[:, g, :]) / w.sum()
        worst = max(worst, float(np.abs(out[b, 0, h] - want).max()))
        worst_lse = max(worst_lse, abs(float(lse[b, h, 0]) - (m + math.log(w.sum()))))
ok = worst <= atol and worst_lse <= 1e-3
print(f"cascade vs f64 reference: max abs err out {worst:.3g}, lse {worst_lse:.3g} "
      f"[{'ok' if ok else 'FAIL'} atol {atol}]")
sys.exit(0 if ok else 1)
