#!/usr/bin/env python3
"""Benchmark of serving shapes (paged KV caches, ragged batches), in one run:

  1. Decode over a paged KV cache (pages of 16 tokens in shuffled order,
     vLLM's block table) against the same decode over a contiguous
     [B, Hkv, Nmax, D] cache (our decode form both times; target: paged
     within 10% of contiguous), and against PyTorch SDPA given the
     equivalent padded dense tensors and a key-padding mask (target: faster
     than SDPA).
  2. A ragged prefill batch of 8 sequences of 128 to 4096 tokens (packed,
     with per-sequence offsets, causal on each sequence's own diagonal)
     against the same batch padded to the longest sequence with our own
     dense fused form (kv_len per sequence; target: ragged >= 1.5x faster).

Every pair computes the same attention: outputs are compared before any time
is reported (the paged and contiguous decodes on the same keys, the ragged
rows with the padded batch's rows), and each spec is checked against the f64
reference at a small size with attn-run --verify. Times are the median of
attn-run's --reps calls (kernel only) in interleaved rounds; the table shows
the median over rounds and the spread. Run through bench/run.sh --serving;
results in bench/results/serving.md.
"""
import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import harness  # noqa: E402
from harness import attention_func, tensor as t  # noqa: E402


def dense_decode_spec(B, Hq, Hkv, N, D):
    q, kv, ln = t(B, Hq, 1, D), t(B, Hkv, N, D), t(B, ty="i32")
    return attention_func("dense", q, kv, kv, q,
                          f" kv_len(%len : {ln}) causal(bottom_right)", f", %len: {ln}")


def paged_decode_spec(B, Hq, Hkv, P, S, M, D):
    q, pool = t(B, Hq, 1, D), t(P, Hkv, S, D)
    pt, ln = t(B, M, ty="i32"), t(B, ty="i32")
    return attention_func("paged", q, pool, pool, q,
                          f" page_table(%pt : {pt}) kv_len(%len : {ln}) causal(bottom_right)",
                          f", %pt: {pt}, %len: {ln}")


def padded_prefill_spec(B, Hq, Hkv, N, D):
    q, kv, ln = t(B, Hq, N, D), t(B, Hkv, N, D), t(B, ty="i32")
    return attention_func("padded", q, kv, kv, q,
                          f" kv_len(%len : {ln}) causal(top_left)", f", %len: {ln}")


def ragged_prefill_spec(B, Hq, Hkv, T, D):
    q, kv, cu = t(1, Hq, T, D), t(1, Hkv, T, D), t(B + 1, ty="i32")
    return attention_func("ragged", q, kv, kv, q,
                          f" ragged(%cq, %ck : {cu}, {cu}) causal(top_left)",
                          f", %cq: {cu}, %ck: {cu}")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    harness.round_args(ap, reps=10)
    ap.add_argument("--quick", action="store_true",
                    help="small shapes, for debugging the harness")
    a = ap.parse_args()
    work, say = harness.setup(
        a, "# Serving shapes: paged KV caches and ragged batches")
    path, write = work.path, work.write
    rng = np.random.default_rng(11)

    # Correctness of each kind of spec against the f64 reference at a small
    # size (random page tables and offsets from attn-run).
    small = {
        "paged decode": paged_decode_spec(4, 8, 2, 40, 16, 8, 64),
        "ragged prefill": ragged_prefill_spec(5, 4, 2, 300, 64),
    }
    for name, text in small.items():
        p = write(harness.slug(name) + "_small.mlir", text)
        for form, err in harness.verify_forms(a.attn_run, p, ("decode", "fused", "naive")):
            say(f"- {name}, {form} form: verified against the f64 reference ({err})")
    say()

    # 1. Decode: B = 8, Hq = 32, Hkv = 8, D = 128, Nmax = 4096, mixed lengths.
    B, Hq, Hkv, D, N, S = 8, 32, 8, 128, 4096, 16
    lens = np.array([4096, 3584, 3072, 2560, 2048, 1536, 1024, 512], np.int32)
    if a.quick:
        N, lens = 512, lens // 8
    M = N // S
    q = rng.uniform(-1, 1, (B, Hq, 1, D)).astype(np.float32)
    k = rng.uniform(-1, 1, (B, Hkv, N, D)).astype(np.float32)
    v = rng.uniform(-1, 1, (B, Hkv, N, D)).astype(np.float32)
    for b in range(B):  # unused cache rows: never read
        k[b, :, lens[b]:] = 0
        v[b, :, lens[b]:] = 0
    # The pool holds exactly the pages the sequences use, in shuffled order.
    used = [(b, p) for b in range(B) for p in range((lens[b] + S - 1) // S)]
    order = rng.permutation(len(used))
    pool_k = np.zeros((len(used), Hkv, S, D), np.float32)
    pool_v = np.zeros_like(pool_k)
    table = np.full((B, M), -1, np.int32)
    for slot, (b, p) in zip(order, used):
        table[b, p] = slot
        pool_k[slot] = k[b, :, p * S:(p + 1) * S]
        pool_v[slot] = v[b, :, p * S:(p + 1) * S]
    for name, arr in (("q", q), ("k", k), ("v", v), ("len", lens), ("pk", pool_k),
                      ("pv", pool_v), ("pt", table)):
        np.save(path(f"dec_{name}.npy"), arr)
    P = len(used)
    decode_cases = {
        "decode, contiguous cache": (
            write("dense_decode.mlir", dense_decode_spec(B, Hq, Hkv, N, D)),
            ["--form=decode"] + work.inputs(q="dec_q.npy", k="dec_k.npy", v="dec_v.npy",
                                            kv_len="dec_len.npy")),
        "decode, paged cache": (
            write("paged_decode.mlir", paged_decode_spec(B, Hq, Hkv, P, S, M, D)),
            ["--form=decode"] + work.inputs(q="dec_q.npy", k="dec_pk.npy", v="dec_pv.npy",
                                            page_table="dec_pt.npy", kv_len="dec_len.npy")),
    }

    # 2. Ragged prefill: 8 sequences of 128 to 4096 tokens, Hq = 8, Hkv = 2,
    #    D = 64, causal per sequence, against the batch padded to 4096.
    PB, PHq, PHkv, PD = 8, 8, 2, 64
    plens = np.array([128, 256, 512, 1024, 1536, 2048, 3072, 4096], np.int32)
    if a.quick:
        plens = plens // 8
    rng.shuffle(plens)
    PN = int(plens.max())
    T = int(plens.sum())
    cu = np.concatenate([[0], np.cumsum(plens)]).astype(np.int32)
    pq = np.zeros((PB, PHq, PN, PD), np.float32)
    pk = np.zeros((PB, PHkv, PN, PD), np.float32)
    pv = np.zeros((PB, PHkv, PN, PD), np.float32)
    rq = rng.uniform(-1, 1, (1, PHq, T, PD)).astype(np.float32)
    rk = rng.uniform(-1, 1, (1, PHkv, T, PD)).astype(np.float32)
    rv = rng.uniform(-1, 1, (1, PHkv, T, PD)).astype(np.float32)
    for b in range(PB):
        n = plens[b]
        pq[b, :, :n] = rq[0, :, cu[b]:cu[b + 1]]
        pk[b, :, :n] = rk[0, :, cu[b]:cu[b + 1]]
        pv[b, :, :n] = rv[0, :, cu[b]:cu[b + 1]]
    for name, arr in (("pq", pq), ("pk", pk), ("pv", pv), ("plen", plens), ("rq", rq),
                      ("rk", rk), ("rv", rv), ("cu", cu)):
        np.save(path(f"pre_{name}.npy"), arr)
    prefill_cases = {
        "prefill, padded dense": (
            write("padded_prefill.mlir", padded_prefill_spec(PB, PHq, PHkv, PN, PD)),
            ["--form=fused"] + work.inputs(q="pre_pq.npy", k="pre_pk.npy", v="pre_pv.npy",
                                           kv_len="pre_plen.npy")),
        "prefill, ragged": (
            write("ragged_prefill.mlir", ragged_prefill_spec(PB, PHq, PHkv, T, PD)),
            ["--form=fused"] + work.inputs(q="pre_rq.npy", k="pre_rk.npy", v="pre_rv.npy",
                                           cu_seqlens_q="pre_cu.npy",
                                           cu_seqlens_k="pre_cu.npy")),
    }
    cases = dict(decode_cases, **prefill_cases)

    threads = harness.threads(a.threads)
    times = {(c, th): [] for c in cases for th in threads}
    sdpa = {th: [] for th in threads}
    torch = harness.import_torch(a.no_torch)
    for th, env, first in harness.rounds(threads, a.rounds):
        for name, (spec, args) in cases.items():
            save = ["--output", "out=" + work.out(name)] if first else []
            reps = a.reps if name.startswith("decode") else max(2, a.reps // 4)
            out = harness.run_ok([a.attn_run, spec, f"--reps={reps}"] + args + save, env)
            times[(name, th)].append(harness.attn_time(out))
        if torch is not None:
            tq, tk, tv = (torch.from_numpy(x) for x in (q, k, v))
            mask = torch.from_numpy(np.arange(N)[None, None, None, :] <
                                    lens[:, None, None, None])
            res, s = harness.time_sdpa(torch, th, a.reps, tq, tk, tv, attn_mask=mask,
                                       enable_gqa=True)
            sdpa[th].append(s)
            if first:
                np.save(work.out("decode sdpa"), res)

    load = work.load
    checks = [("decode, paged cache", load("decode, paged cache"),
               load("decode, contiguous cache"))]
    if torch is not None:
        checks.append(("decode, SDPA", load("decode sdpa"), load("decode, contiguous cache")))
    padded = load("prefill, padded dense")
    rows = np.concatenate([padded[b, :, :plens[b]] for b in range(PB)], axis=1)[None]
    checks.append(("prefill, ragged vs padded rows", load("prefill, ragged"), rows))
    say.compare(checks)
    say(f"Times: median over {a.rounds} interleaved rounds of attn-run's median "
        f"of its calls (kernel only: {a.reps} for decode, {max(2, a.reps // 4)} "
        f"for prefill); spread = min-max of the rounds.")
    say()
    say.table_head()
    ms, stats = harness.ms, harness.stats
    for th in threads:
        med = {c: stats(times[(c, th)]) for c in cases}
        say(f"| decode, contiguous cache | {th} | {ms(med['decode, contiguous cache'], '.2f')} | | |")
        if torch is not None:
            say(f"| decode, PyTorch SDPA (padded dense, key mask) | {th} | "
                f"{ms(stats(sdpa[th]), '.2f')} | | |")
        pm = med["decode, paged cache"][0]
        ratio = pm / med["decode, contiguous cache"][0]
        text = f"{ratio:.3f}x the contiguous cache's time"
        target = "met" if ratio <= 1.10 else "missed (> 1.10)"
        if torch is not None:
            text, target = harness.vs_sdpa(text, target, stats(sdpa[th])[0], pm)
        say(f"| decode, paged cache | {th} | {ms(med['decode, paged cache'], '.2f')} | "
            f"{text} | {target} |")
        say(f"| prefill, padded dense | {th} | {ms(med['prefill, padded dense'], '.1f')} | | |")
        sp = med["prefill, padded dense"][0] / med["prefill, ragged"][0]
        say(f"| prefill, ragged | {th} | {ms(med['prefill, ragged'], '.1f')} | "
            f"{sp:.2f}x faster than padded | {'met' if sp >= 1.5 else 'missed (< 1.5x)'} |")
    say()
    say(f"- decode: B={B} Hq={Hq} Hkv={Hkv} D={D} Nmax={N}, kv_len "
        f"{', '.join(map(str, lens))}, causal(bottom_right), decode form; paged: "
        f"{P} pages of {S} tokens in shuffled order, page table [{B}, {M}]")
    say(f"- prefill: {PB} sequences of {', '.join(map(str, plens))} tokens "
        f"({T} packed), Hq={PHq} Hkv={PHkv} D={PD}, causal(top_left) per sequence, "
        f"fused form; padded: [{PB}, {PHq}, {PN}, {PD}] with kv_len")
    say.save(os.path.join(a.results, "serving.md"))


if __name__ == "__main__":
    main()
