#!/usr/bin/env python3
"""Inputs and check of examples/serving/quantized_decode_step.mlir, written
from docs/Semantics.md (no code shared with the compiler).

  quantized_step.py gen DIR     writes the step's inputs into DIR
  quantized_step.py check DIR [ATOL]
                                checks DIR/out*.npy (attn-run --output) and
                                exits 1 on a mismatch; out within ATOL of
                                the reference (1e-5; the GPU kernel, which
                                stages K/V in bf16, needs more)

The step appends one token's K and V per sequence to e4m3 page pools with
per-token scales (scale = max |x| / 448, values x / scale rounded to nearest
even), then attends with kv_len + 1. The check recomputes the appended rows
and their scales, checks that no other row changed, and compares out with
an f64 attention over the dequantized cache.
"""
import sys

import numpy as np

B, HQ, HKV, D, P, S, M = 4, 8, 2, 64, 64, 16, 16


def e4m3_value(bits):
    """Decodes e4m3fn bit patterns (uint8) to float64 (NaN for 0x7f/0xff)."""
    b = bits.astype(np.int64)
    sign = np.where(b & 0x80, -1.0, 1.0)
    e = (b >> 3) & 0xF
    m = b & 0x7
    v = np.where(e == 0, m / 8.0 * 2.0 ** -6, (1 + m / 8.0) * 2.0 ** (e - 7.0))
    return np.where((b & 0x7F) == 0x7F, np.nan, sign * v)


def e4m3_bits(y):
    """Nearest-even e4m3fn bits of float64 values |y| <= 448 (by search over
    every finite code: the closest value, ties to the even code)."""
    codes = np.arange(0, 0x7F, dtype=np.uint8)  # non-negative finite codes
    vals = e4m3_value(codes)
    a = np.abs(y)[..., None]
    dist = np.abs(vals - a)
    best = dist.min(-1, keepdims=True)
    # Among equally close codes, the even one (the mantissa's last bit 0).
    cand = np.where(dist == best, codes, 255)
    even = np.where((cand % 2 == 0) & (cand != 255), cand, 255).min(-1)
    pick = np.where(even != 255, even, cand.min(-1)).astype(np.uint8)
    return np.where(y < 0, pick | 0x80, pick).astype(np.uint8)


def gen(d):
    rng = np.random.default_rng(5)
    lens = np.array([0, 15, 16, 100], np.int32)
    table = np.full((B, M), -1, np.int32)
    order = rng.permutation(P)
    n = 0
    for b in range(B):
        for p in range((lens[b] + 1 + S - 1) // S):  # pages up to the new token
            table[b, p] = order[n]
            n += 1
    bits = rng.integers(0, 0x7F, (2, P, HKV, S, D)).astype(np.uint8)
    bits |= (rng.integers(0, 2, bits.shape) << 7).astype(np.uint8)
    scales = rng.uniform(0.5, 1.5, (2, P, HKV, S)).astype(np.float32) / 448
    arrays = dict(q=rng.uniform(-1, 1, (B, HQ, 1, D)),
                  kn=rng.uniform(-2, 2, (B, HKV, 1, D)),
                  vn=rng.uniform(-2, 2, (B, HKV, 1, D)))
    for name, a in arrays.items():
        np.save(f"{d}/{name}.npy", a.astype(np.float32))
    np.save(f"{d}/kp.npy", bits[0])
    np.save(f"{d}/vp.npy", bits[1])
    np.save(f"{d}/ks.npy", scales[0])
    np.save(f"{d}/vs.npy", scales[1])
    np.save(f"{d}/pt.npy", table)
    np.save(f"{d}/len.npy", lens)


def check(d, atol=1e-5):
    ld = lambda n: np.load(f"{d}/{n}.npy")
    q, kn, vn = ld("q").astype(np.float64), ld("kn"), ld("vn")
    table, lens = ld("pt"), ld("len")
    ok = True
    pools = {}
    for name, new in (("k", kn), ("v", vn)):
        raw, sc = ld(f"{name}p").copy(), ld(f"{name}s").copy()
        for b in range(B):
            pos = int(lens[b])
            page, row = table[b, pos // S], pos % S
            x = new[b, :, 0].astype(np.float32)
            amax = np.abs(x).max(-1)
            s = np.where(amax > 0, amax / np.float32(448), 1).astype(np.float32)
            sc[page, :, row] = s
            raw[page, :, row] = e4m3_bits(x.astype(np.float64) /
                                          s[:, None].astype(np.float64))
        got_raw, got_sc = ld(f"out_{name}p").view(np.uint8), ld(f"out_{name}s")
        if not np.array_equal(got_raw, raw):
            print(f"{name} cache differs in {np.count_nonzero(got_raw != raw)} values")
            ok = False
        if not np.array_equal(got_sc, sc):
            print(f"{name} scales differ: max {np.abs(got_sc - sc).max()}")
            ok = False
        pools[name] = e4m3_value(raw) * sc[..., None].astype(np.float64)
    out = ld("out").astype(np.float64)
    err = 0.0
    g = HQ // HKV
    for b in range(B):
        n = int(lens[b]) + 1
        pages = table[b, :(n + S - 1) // S]
        k = pools["k"][pages].transpose(1, 0, 2, 3).reshape(HKV, -1, D)[:, :n]
        v = pools["v"][pages].transpose(1, 0, 2, 3).reshape(HKV, -1, D)[:, :n]
        for h in range(HQ):
            s = k[h // g] @ q[b, h, 0] / np.sqrt(D)
            p = np.exp(s - s.max())
            want = p @ v[h // g] / p.sum()
            err = max(err, float(np.abs(out[b, h, 0] - want).max()))
    print(f"out vs f64 reference on the dequantized cache: max abs err {err:.2e}")
    if not err <= atol:
        ok = False
    print("appended rows and scales: " + ("match" if ok else "MISMATCH"))
    return ok


if __name__ == "__main__":
    if sys.argv[1] == "gen":
        gen(sys.argv[2])
    else:
        atol = float(sys.argv[3]) if len(sys.argv) > 3 else 1e-5
        sys.exit(0 if check(sys.argv[2], atol) else 1)
