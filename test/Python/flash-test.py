#!/usr/bin/env python3
"""attn.flash (python/attn/flash.py): the flash-attn-compatible functions on
numpy arrays against this file's own f64 reference, written from
flash-attn's documented semantics (bottom-right causal and windows, softcap
on the scaled scores, ALiBi as -slope * |j - p(i)|, natural-log lse).

    flash-test.py numpy     on numpy arrays (f32, f16)
    flash-test.py torch     on PyTorch CPU tensors (f32, f16, bf16)

Exits 77 (skipped) when numpy, or for `torch` PyTorch, cannot be imported.
"""

import math
import os
import sys

SKIP = 77
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "python"))
try:
    import numpy as np
except ImportError:
    print("numpy is not available: skipped")
    sys.exit(SKIP)

mode = sys.argv[1] if len(sys.argv) > 1 else "numpy"
if mode == "torch":
    try:
        import torch
    except ImportError:
        print("torch is not available: skipped")
        sys.exit(SKIP)

import attn.flash as flash  # noqa: E402


def T(x, dtype=None):
    """x (numpy) as the mode's input: the array, or a torch tensor (of
    `dtype`, a torch dtype name, when given)."""
    if mode != "torch":
        return x
    t = torch.from_numpy(np.ascontiguousarray(x))
    return t.to(getattr(torch, dtype)) if dtype else t


def N(x):
    """A result as a numpy array (f64 for floats)."""
    if mode == "torch":
        x = x.float() if x.dtype == torch.bfloat16 else x
        x = x.numpy()
    return x.astype(np.float64) if x.dtype.kind == "f" else x

failures = 0


def check(ok, what):
    global failures
    print(("ok    " if ok else "FAIL  ") + what)
    failures += 0 if ok else 1


def reference(q, k, v, causal=False, window=(-1, -1), softcap=0.0,
              alibi=None, scale=None, kv_len=None, first=0):
    """out [Nq, Hq, Dv] and lse [Hq, Nq] of one sequence (q [Nq, Hq, D],
    k and v [Nk, Hkv, D]) in f64, keys from `first` (left padding) to
    kv_len; rows without keys: out 0, lse -inf."""
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    nq, hq, d = q.shape
    nk, hkv = k.shape[0], k.shape[1]
    n = nk if kv_len is None else kv_len
    scale = 1 / math.sqrt(d) if scale is None else scale
    out = np.zeros((nq, hq, v.shape[2]))
    lse = np.full((hq, nq), -np.inf)
    for h in range(hq):
        g = h // (hq // hkv)
        for i in range(nq):
            p = i + n - nq
            logits = []
            for j in range(max(first, 0), n):
                if causal and j > p:
                    continue
                if window[0] >= 0 and p - j > window[0]:
                    continue
                if window[1] >= 0 and not causal and j - p > window[1]:
                    continue
                s = scale * float(q[i, h] @ k[j, g])
                if softcap:
                    s = softcap * math.tanh(s / softcap)
                if alibi is not None:
                    s -= alibi[h] * abs(j - p)
                logits.append((j, s))
            if not logits:
                continue
            m = max(s for _, s in logits)
            w = [(j, math.exp(s - m)) for j, s in logits]
            total = sum(x for _, x in w)
            out[i, h] = sum(x * v[j, g] for j, x in w) / total
            lse[h, i] = m + math.log(total)
    return out, lse


rng = np.random.default_rng(7)


def rand(*shape, dtype=np.float32):
    return rng.uniform(-1, 1, shape).astype(dtype)


def close(got, want, tol):
    got = np.asarray(got, dtype=np.float64)
    both_inf = np.isneginf(got) & np.isneginf(want)
    diff = np.where(both_inf, 0.0, np.abs(got - np.where(both_inf, 0, want)))
    return bool(np.all(np.isfinite(diff)) and diff.max() <= tol)


# flash_attn_func: GQA (4 query heads over 2), Nq != Nk, every modifier.
# bf16 (torch only) is compared with the reference on the bf16-rounded
# inputs; its tolerance is bf16's.
B, NQ, NK, HQ, HKV, D = 2, 5, 9, 4, 2, 16
slopes = np.array([0.5, 0.25, 0.125, 0.0625], np.float32)
configs = [
    ("plain", {}),
    ("causal", {"causal": True}),
    ("window (3, 1)", {"window_size": (3, 1)}),
    ("causal window 2", {"causal": True, "window_size": (2, -1)}),
    ("softcap 2", {"softcap": 2.0}),
    ("alibi causal", {"alibi_slopes": slopes, "causal": True}),
    ("alibi", {"alibi_slopes": slopes}),
    ("scale 0.3", {"softmax_scale": 0.3}),
]
dtypes = [("float32", 2e-5), ("float16", 4e-3)]
if mode == "torch":
    dtypes.append(("bfloat16", 3e-2))
for dtype, tol in dtypes:
    q, k, v = (T(rand(*shape), dtype) for shape in
               ((B, NQ, HQ, D), (B, NK, HKV, D), (B, NK, HKV, D)))
    qn, kn, vn = N(q), N(k), N(v)  # the values the kernel reads
    for label, kw in configs:
        args = dict(kw)
        if "alibi_slopes" in args:
            args["alibi_slopes"] = T(args["alibi_slopes"])
        out, lse, _ = flash.flash_attn_func(q, k, v, return_attn_probs=True,
                                            **args)
        out, lse = N(out), N(lse)
        ok = out.shape == (B, NQ, HQ, D) and lse.shape == (B, HQ, NQ)
        for b in range(B):
            want_o, want_l = reference(
                qn[b], kn[b], vn[b], causal=kw.get("causal", False),
                window=kw.get("window_size", (-1, -1)),
                softcap=kw.get("softcap", 0.0), alibi=kw.get("alibi_slopes"),
                scale=kw.get("softmax_scale"))
            ok = ok and close(out[b], want_o, tol) and close(
                lse[b], want_l, 1e-4 if dtype != "bfloat16" else tol)
        check(ok, f"{mode} flash_attn_func {dtype} {label}")
# Other lengths reuse the compiled kernel (dynamic batch and sequence sizes).
kernels = len(flash._KERNELS)
q2, k2, v2 = rand(1, 3, HQ, D), rand(1, 20, HKV, D), rand(1, 20, HKV, D)
o2 = N(flash.flash_attn_func(T(q2), T(k2), T(v2), causal=True))
check(close(o2[0], reference(q2[0], k2[0], v2[0], causal=True)[0], 2e-5)
      and len(flash._KERNELS) == kernels, "new lengths, same kernel")
# A softmax_scale is the kernel's run-time operand: new scales (negative
# too) reuse the kernel compiled for the first.
o3 = N(flash.flash_attn_func(T(q2), T(k2), T(v2), causal=True,
                             softmax_scale=0.3))
kernels = len(flash._KERNELS)
ok = close(o3[0], reference(q2[0], k2[0], v2[0], causal=True, scale=0.3)[0],
           2e-5)
for s in (0.7, -0.4):
    o3 = N(flash.flash_attn_func(T(q2), T(k2), T(v2), causal=True,
                                 softmax_scale=s))
    ok = ok and close(o3[0], reference(q2[0], k2[0], v2[0], causal=True,
                                       scale=s)[0], 2e-5)
check(ok and len(flash._KERNELS) == kernels, "new scales, same kernel")
try:
    flash.flash_attn_func(T(q2), T(k2), T(v2), dropout_p=0.1)
    check(False, "dropout refused")
except ValueError as e:
    check("dropout_p" in str(e), "dropout refused")

# flash_attn_varlen_func: three sequences packed, causal per sequence.
lq, lk = [3, 1, 4], [5, 2, 4]
cq = np.concatenate([[0], np.cumsum(lq)]).astype(np.int32)
ck = np.concatenate([[0], np.cumsum(lk)]).astype(np.int32)
q, k, v = rand(cq[-1], HQ, D), rand(ck[-1], HKV, D), rand(ck[-1], HKV, D)
out, lse, _ = flash.flash_attn_varlen_func(
    T(q), T(k), T(v), T(cq), T(ck), max(lq), max(lk), causal=True,
    return_attn_probs=True)
out, lse = N(out), N(lse)
ok = out.shape == (cq[-1], HQ, D) and lse.shape == (HQ, cq[-1])
for s in range(3):
    wo, wl = reference(q[cq[s]:cq[s + 1]], k[ck[s]:ck[s + 1]],
                       v[ck[s]:ck[s + 1]], causal=True)
    ok = ok and close(out[cq[s]:cq[s + 1]], wo, 2e-5) and \
        close(lse[:, cq[s]:cq[s + 1]], wl, 1e-4)
check(ok, f"{mode} flash_attn_varlen_func causal")

# Paged varlen (chunked prefill): each sequence's keys through its block
# table row, cu_seqlens_k giving the key counts.
BS, PAGES = 4, 10
pool_k, pool_v = rand(PAGES, BS, HKV, D), rand(PAGES, BS, HKV, D)
table = rng.permutation(PAGES)[:6].reshape(3, 2).astype(np.int32)
kc = [6, 3, 8]  # keys per sequence (cached + new)
ckp = np.concatenate([[0], np.cumsum(kc)]).astype(np.int32)
out = N(flash.flash_attn_varlen_func(T(q), T(pool_k), T(pool_v), T(cq),
                                     T(ckp), max(lq), max(kc), causal=True,
                                     block_table=T(table)))
ok = True
for s in range(3):
    dk = pool_k[table[s]].reshape(-1, HKV, D)[:kc[s]]
    dv = pool_v[table[s]].reshape(-1, HKV, D)[:kc[s]]
    ok = ok and close(out[cq[s]:cq[s + 1]],
                      reference(q[cq[s]:cq[s + 1]], dk, dv, causal=True)[0],
                      2e-5)
check(ok, f"{mode} flash_attn_varlen_func paged")

# flash_attn_with_kvcache: append two new tokens in place, then attend.
NMAX = 12
kcache, vcache = T(rand(B, NMAX, HKV, D)), T(rand(B, NMAX, HKV, D))
seqlens = np.array([4, 7], np.int32)
kn, vn = rand(B, 2, HKV, D), rand(B, 2, HKV, D)
qn = rand(B, 2, HQ, D)
before = N(kcache).copy()
out, lse = flash.flash_attn_with_kvcache(
    T(qn), kcache, vcache, k=T(kn), v=T(vn), cache_seqlens=T(seqlens),
    causal=True, return_softmax_lse=True)
out, lse = N(out), N(lse)
ok = True
kc_now, vc_now = N(kcache), N(vcache)
for b in range(B):
    n = seqlens[b]
    ok = ok and np.array_equal(kc_now[b, n:n + 2], kn[b]) and \
        np.array_equal(kc_now[b, :n], before[b, :n]) and \
        np.array_equal(kc_now[b, n + 2:], before[b, n + 2:])
    wo, wl = reference(qn[b], kc_now[b], vc_now[b], causal=True,
                       kv_len=n + 2)
    ok = ok and close(out[b], wo, 2e-5) and close(lse[b], wl, 1e-4)
check(ok, f"{mode} flash_attn_with_kvcache append + attend")
# Paged cache, decode (one query), no append.
pt = np.array([[3, 1, 7], [0, 5, 2]], np.int32)
lens = np.array([9, 5], np.int32)
q1 = rand(B, 1, HQ, D)
out = N(flash.flash_attn_with_kvcache(T(q1), T(pool_k), T(pool_v),
                                      cache_seqlens=T(lens),
                                      block_table=T(pt)))
ok = True
for b in range(B):
    dk = pool_k[pt[b]].reshape(-1, HKV, D)
    dv = pool_v[pt[b]].reshape(-1, HKV, D)
    ok = ok and close(out[b], reference(q1[b], dk, dv, kv_len=lens[b])[0],
                      2e-5)
check(ok, f"{mode} flash_attn_with_kvcache paged decode")
# The same with a fixed number of KV chunks (num_splits; 0 above: chosen per
# call from the threads), and against the per-call choice's output.
for ns in (1, 3):
    out_ns = N(flash.flash_attn_with_kvcache(T(q1), T(pool_k), T(pool_v),
                                             cache_seqlens=T(lens),
                                             block_table=T(pt),
                                             num_splits=ns))
    ok = True
    for b in range(B):
        dk = pool_k[pt[b]].reshape(-1, HKV, D)
        dv = pool_v[pt[b]].reshape(-1, HKV, D)
        ok = ok and close(out_ns[b], reference(q1[b], dk, dv,
                                               kv_len=lens[b])[0], 2e-5)
    check(ok and close(out_ns, out, 2e-5),
          f"{mode} flash_attn_with_kvcache paged decode, num_splits={ns}")
# The same decode with a softmax_scale (the split-KV kernel's run-time
# operand), twice with different scales.
ok = True
for s in (0.6, 0.05):
    out = N(flash.flash_attn_with_kvcache(T(q1), T(pool_k), T(pool_v),
                                          cache_seqlens=T(lens),
                                          block_table=T(pt), softmax_scale=s))
    for b in range(B):
        dk = pool_k[pt[b]].reshape(-1, HKV, D)
        dv = pool_v[pt[b]].reshape(-1, HKV, D)
        ok = ok and close(out[b], reference(q1[b], dk, dv, kv_len=lens[b],
                                            scale=s)[0], 2e-5)
check(ok, f"{mode} flash_attn_with_kvcache paged decode, softmax_scale")
# Left-padded caches (cache_leftpad: each sequence's first valid key), two
# new queries, causal with a window and ALiBi: positions stay the cache's.
leftpad = np.array([3, 0], np.int32)
lens = np.array([10, 6], np.int32)
slopes = np.array([0.5, 0.25, 0.125, 0.0625], np.float32)[:HQ]
kp, vp = rand(B, NMAX, HKV, D), rand(B, NMAX, HKV, D)
out, lse = flash.flash_attn_with_kvcache(
    T(qn), T(kp), T(vp), cache_seqlens=T(lens), cache_leftpad=T(leftpad),
    causal=True, window_size=(7, 0), alibi_slopes=T(slopes),
    return_softmax_lse=True)
out, lse = N(out), N(lse)
ok = True
for b in range(B):
    wo, wl = reference(qn[b], kp[b], vp[b], causal=True, window=(7, 0),
                       alibi=slopes, kv_len=lens[b], first=leftpad[b])
    ok = ok and close(out[b], wo, 2e-5) and close(lse[b], wl, 1e-4)
check(ok, f"{mode} flash_attn_with_kvcache with cache_leftpad")
try:
    flash.flash_attn_with_kvcache(T(qn), kcache, vcache, k=T(kn), v=T(vn),
                                  cache_seqlens=T(np.array([11, 0],
                                                           np.int32)))
    check(False, "append past the cache refused")
except ValueError as e:
    check("do not fit" in str(e), "append past the cache refused")

# merge_state: the two halves of the keys merge into the whole.
q, k, v = T(rand(B, NQ, HQ, D)), T(rand(B, NK, HKV, D)), \
    T(rand(B, NK, HKV, D))
oa, la, _ = flash.flash_attn_func(q, k[:, :4], v[:, :4],
                                  return_attn_probs=True)
ob, lb, _ = flash.flash_attn_func(q, k[:, 4:], v[:, 4:],
                                  return_attn_probs=True)
om, lm = flash.merge_state(oa, la, ob, lb)
ow, lw, _ = flash.flash_attn_func(q, k, v, return_attn_probs=True)
check(close(N(om), N(ow), 2e-5) and close(N(lm), N(lw), 1e-5),
      f"{mode} merge_state of two key halves equals the whole")
# A side without keys (lse -inf) contributes nothing.
empty_l = T(np.full(N(lb).shape, -np.inf, np.float32))
om, lm = flash.merge_state(oa, la, T(np.zeros(N(ob).shape, np.float32)),
                           empty_l)
check(close(N(om), N(oa), 1e-7) and close(N(lm), N(la), 1e-7),
      f"{mode} merge_state with an empty side")

print(f"attn.flash {mode}: " + ("all passed" if not failures
                                else f"{failures} FAILED"))
sys.exit(1 if failures else 0)
