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
import re
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import hostcpu  # noqa: E402


def t(*dims, ty="f32"):
    return "tensor<" + "x".join(str(d) for d in dims) + f"x{ty}>"


def dense_decode_spec(B, Hq, Hkv, N, D):
    q, kv, o = t(B, Hq, 1, D), t(B, Hkv, N, D), t(B, Hq, 1, D)
    return (f"func.func @dense(%q: {q}, %k: {kv}, %v: {kv}, %len: {t(B, ty='i32')}) -> {o} {{\n"
            f"  %o = attn.attention q(%q : {q}) k(%k : {kv}) v(%v : {kv}) "
            f"kv_len(%len : {t(B, ty='i32')}) causal(bottom_right) -> {o}\n"
            f"  return %o : {o}\n}}\n")


def paged_decode_spec(B, Hq, Hkv, P, S, M, D):
    q, pool, o = t(B, Hq, 1, D), t(P, Hkv, S, D), t(B, Hq, 1, D)
    pt, ln = t(B, M, ty="i32"), t(B, ty="i32")
    return (f"func.func @paged(%q: {q}, %k: {pool}, %v: {pool}, %pt: {pt}, %len: {ln}) -> {o} {{\n"
            f"  %o = attn.attention q(%q : {q}) k(%k : {pool}) v(%v : {pool}) "
            f"page_table(%pt : {pt}) kv_len(%len : {ln}) causal(bottom_right) -> {o}\n"
            f"  return %o : {o}\n}}\n")


def padded_prefill_spec(B, Hq, Hkv, N, D):
    q, kv = t(B, Hq, N, D), t(B, Hkv, N, D)
    return (f"func.func @padded(%q: {q}, %k: {kv}, %v: {kv}, %len: {t(B, ty='i32')}) -> {q} {{\n"
            f"  %o = attn.attention q(%q : {q}) k(%k : {kv}) v(%v : {kv}) "
            f"kv_len(%len : {t(B, ty='i32')}) causal(top_left) -> {q}\n"
            f"  return %o : {q}\n}}\n")


def ragged_prefill_spec(B, Hq, Hkv, T, D):
    q, kv, cu = t(1, Hq, T, D), t(1, Hkv, T, D), t(B + 1, ty="i32")
    return (f"func.func @ragged(%q: {q}, %k: {kv}, %v: {kv}, %cq: {cu}, %ck: {cu}) -> {q} {{\n"
            f"  %o = attn.attention q(%q : {q}) k(%k : {kv}) v(%v : {kv}) "
            f"ragged(%cq, %ck : {cu}, {cu}) causal(top_left) -> {q}\n"
            f"  return %o : {q}\n}}\n")


def run(cmd, env):
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"serving.py: {' '.join(cmd)} failed:\n{p.stdout}{p.stderr}")
    return p.stdout


def attn_time(out):
    return float(re.search(r"^run: ([0-9.e-]+) s median", out, re.M).group(1))


def stats(values):
    v = sorted(values)
    return v[len(v) // 2], v[0], v[-1]


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--attn-run", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--quick", action="store_true",
                    help="small shapes, for debugging the harness")
    ap.add_argument("--results", default=os.path.join(HERE, "results"))
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    os.makedirs(a.results, exist_ok=True)
    flags = hostcpu.read_flags()
    cpu = (f"{hostcpu.cpu_model()}, {hostcpu.isa_label(flags)}, "
           f"{os.cpu_count()} cores; our code for the host CPU")
    lines = []

    def say(s=""):
        print(s, flush=True)
        lines.append(s)

    def path(name):
        return os.path.join(a.work, name)

    def write(name, text):
        with open(path(name), "w") as f:
            f.write(text)
        return path(name)

    rng = np.random.default_rng(11)
    say("# Serving shapes: paged KV caches and ragged batches")
    say()
    say(f"Machine: {cpu}")
    say()

    # Correctness of each kind of spec against the f64 reference at a small
    # size (random page tables and offsets from attn-run).
    small = {
        "paged decode": paged_decode_spec(4, 8, 2, 40, 16, 8, 64),
        "ragged prefill": ragged_prefill_spec(5, 4, 2, 300, 64),
    }
    for name, text in small.items():
        p = write(name.replace(" ", "_") + "_small.mlir", text)
        for form in ("decode", "fused", "naive"):
            out = run([a.attn_run, p, f"--form={form}", "--verify", "--reps=0"],
                      dict(os.environ))
            err = re.search(r"vs reference: (max abs err [^,]+)", out)
            say(f"- {name}, {form} form: verified against the f64 reference "
                f"({err.group(1) if err else 'ok'})")
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
            ["--form=decode", "--input", "q=" + path("dec_q.npy"), "--input",
             "k=" + path("dec_k.npy"), "--input", "v=" + path("dec_v.npy"),
             "--input", "kv_len=" + path("dec_len.npy")]),
        "decode, paged cache": (
            write("paged_decode.mlir", paged_decode_spec(B, Hq, Hkv, P, S, M, D)),
            ["--form=decode", "--input", "q=" + path("dec_q.npy"), "--input",
             "k=" + path("dec_pk.npy"), "--input", "v=" + path("dec_pv.npy"),
             "--input", "page_table=" + path("dec_pt.npy"), "--input",
             "kv_len=" + path("dec_len.npy")]),
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
            ["--form=fused", "--input", "q=" + path("pre_pq.npy"), "--input",
             "k=" + path("pre_pk.npy"), "--input", "v=" + path("pre_pv.npy"),
             "--input", "kv_len=" + path("pre_plen.npy")]),
        "prefill, ragged": (
            write("ragged_prefill.mlir", ragged_prefill_spec(PB, PHq, PHkv, T, PD)),
            ["--form=fused", "--input", "q=" + path("pre_rq.npy"), "--input",
             "k=" + path("pre_rk.npy"), "--input", "v=" + path("pre_rv.npy"),
             "--input", "cu_seqlens_q=" + path("pre_cu.npy"), "--input",
             "cu_seqlens_k=" + path("pre_cu.npy")]),
    }
    cases = dict(decode_cases, **prefill_cases)

    threads = [int(x) for x in a.threads.split(",")]
    times = {(c, th): [] for c in cases for th in threads}
    sdpa = {th: [] for th in threads}
    torch = None
    if not a.no_torch:
        import torch  # noqa: F811
    for th in threads:
        env = dict(os.environ, OMP_NUM_THREADS=str(th))
        for r in range(a.rounds):
            for name, (spec, args) in cases.items():
                save = []
                if r == 0 and th == threads[0]:
                    save = ["--output", "out=" + path(name.replace(" ", "_").replace(",", "") + ".npy")]
                reps = a.reps if name.startswith("decode") else max(2, a.reps // 4)
                out = run([a.attn_run, spec, f"--reps={reps}"] + args + save, env)
                times[(name, th)].append(attn_time(out))
            if torch is not None:
                torch.set_num_threads(th)
                F = torch.nn.functional
                tq, tk, tv = (torch.from_numpy(x) for x in (q, k, v))
                mask = torch.from_numpy(np.arange(N)[None, None, None, :] <
                                        lens[:, None, None, None])
                res = F.scaled_dot_product_attention(tq, tk, tv, attn_mask=mask,
                                                     enable_gqa=True)
                samples = []
                for _ in range(a.reps):
                    start = time.perf_counter()
                    res = F.scaled_dot_product_attention(tq, tk, tv, attn_mask=mask,
                                                         enable_gqa=True)
                    samples.append(time.perf_counter() - start)
                sdpa[th].append(float(np.median(samples)))
                if r == 0 and th == threads[0]:
                    np.save(path("decode_sdpa.npy"), res.numpy())

    def load(name):
        return np.load(path(name.replace(" ", "_").replace(",", "") + ".npy")).astype(np.float64)

    say("Outputs compared before timing (max abs difference, f32):")
    checks = [("decode, paged cache", load("decode, paged cache"),
               load("decode, contiguous cache"))]
    if torch is not None:
        checks.append(("decode, SDPA", load("decode sdpa"), load("decode, contiguous cache")))
    ragged = load("prefill, ragged")
    padded = load("prefill, padded dense")
    rows = np.concatenate([padded[b, :, :plens[b]] for b in range(PB)], axis=1)[None]
    checks.append(("prefill, ragged vs padded rows", ragged, rows))
    for name, x, y in checks:
        d = float(np.abs(x - y).max())
        say(f"- {name}: {d:.2e}")
        if not d <= 1e-4:
            sys.exit(f"serving.py: {name} differs by {d}")
    say()
    say(f"Times: median over {a.rounds} interleaved rounds of attn-run's median "
        f"of its calls (kernel only: {a.reps} for decode, {max(2, a.reps // 4)} "
        f"for prefill); spread = min-max of the rounds.")
    say()
    say("| case | threads | time (ms) | spread (ms) | ratio | target |")
    say("|---|---|---|---|---|---|")
    for th in threads:
        med = {c: stats(times[(c, th)]) for c in cases}
        m, lo, hi = med["decode, contiguous cache"]
        say(f"| decode, contiguous cache | {th} | {m * 1e3:.2f} | {lo * 1e3:.2f}-{hi * 1e3:.2f} | | |")
        if torch is not None:
            s, slo, shi = stats(sdpa[th])
            say(f"| decode, PyTorch SDPA (padded dense, key mask) | {th} | {s * 1e3:.2f} | "
                f"{slo * 1e3:.2f}-{shi * 1e3:.2f} | | |")
        pm, plo, phi = med["decode, paged cache"]
        ratio = pm / m
        text = f"{ratio:.3f}x the contiguous cache's time"
        target = "met" if ratio <= 1.10 else "missed (> 1.10)"
        if torch is not None:
            sr = stats(sdpa[th])[0] / pm
            text += f", {sr:.2f}x faster than SDPA"
            target += "; " + ("met" if sr > 1 else "missed (SDPA faster)")
        say(f"| decode, paged cache | {th} | {pm * 1e3:.2f} | {plo * 1e3:.2f}-{phi * 1e3:.2f} | {text} | {target} |")
        m, lo, hi = med["prefill, padded dense"]
        say(f"| prefill, padded dense | {th} | {m * 1e3:.1f} | {lo * 1e3:.1f}-{hi * 1e3:.1f} | | |")
        rm, rlo, rhi = med["prefill, ragged"]
        sp = m / rm
        say(f"| prefill, ragged | {th} | {rm * 1e3:.1f} | {rlo * 1e3:.1f}-{rhi * 1e3:.1f} | "
            f"{sp:.2f}x faster than padded | {'met' if sp >= 1.5 else 'missed (< 1.5x)'} |")
    say()
    say(f"- decode: B={B} Hq={Hq} Hkv={Hkv} D={D} Nmax={N}, kv_len "
        f"{', '.join(map(str, lens))}, causal(bottom_right), decode form; paged: "
        f"{P} pages of {S} tokens in shuffled order, page table [{B}, {M}]")
    say(f"- prefill: {PB} sequences of {', '.join(map(str, plens))} tokens "
        f"({T} packed), Hq={PHq} Hkv={PHkv} D={PD}, causal(top_left) per sequence, "
        f"fused form; padded: [{PB}, {PHq}, {PN}, {PD}] with kv_len")
    with open(os.path.join(a.results, "serving.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
