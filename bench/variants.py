#!/usr/bin/env python3
"""Benchmark of user variants (score_mod / mask_mod regions), in one run:

  1. A causal mask and a causal sliding window written as mask regions
     against the built-in causal(top_left) [window_left(W)] (target: the
     region within 5% of the built-in's time).
  2. Document masking over 8 packed documents at N = 8192: the mask region
     reading document ids, against the same attention with a dense boolean
     [N, N] mask tensor (our fused form) and against PyTorch SDPA given that
     boolean mask (targets: >= 3x faster than the dense mask, faster than
     SDPA).

Every configuration computes the same attention: the outputs are compared
with each other (and SDPA's with ours) before any time is reported, and the
region specs are checked against the f64 reference at a small size with
attn-run --verify. Times are the median of attn-run's --reps calls (kernel
only), taken in interleaved rounds; the table shows the median over rounds
and the spread (min-max of the rounds' medians). Run through
bench/run.sh --variants; results in bench/results/variants.md.
"""
import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import harness  # noqa: E402
from harness import tensor  # noqa: E402


def spec(name, B, H, N, D, mods="", region="", extra_args=""):
    t = tensor(B, H, N, D)
    return harness.attention_func(name, t, t, t, t, f" {mods}{region}", extra_args)


CAUSAL_REGION = """ mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %t = arith.cmpi sle, %j, %i : index
    attn.yield %t : i1
  }"""

WINDOW_REGION = """ mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %w = arith.constant WINDOW : index
    %d = arith.subi %i, %j : index
    %past = arith.cmpi sle, %j, %i : index
    %near = arith.cmpi sle, %d, %w : index
    %t = arith.andi %past, %near : i1
    attn.yield %t : i1
  }"""

DOC_REGION = """ mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %d: tensor<NxI32>):
    %di = tensor.extract %d[%i] : tensor<NxI32>
    %dj = tensor.extract %d[%j] : tensor<NxI32>
    %t = arith.cmpi eq, %di, %dj : i32
    attn.yield %t : i1
  }"""


class Case:
    def __init__(self, name, spec_text, args, note):
        self.name, self.spec_text, self.args, self.note = name, spec_text, args, note
        self.times = []


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    harness.round_args(ap, reps=5)
    ap.add_argument("--docs-n", type=int, default=8192)
    ap.add_argument("--causal-n", type=int, default=4096)
    a = ap.parse_args()
    work, say = harness.setup(
        a, "# User variants: regions against built-in masks and dense masks")

    # Correctness at a small size against the f64 reference.
    n_small = 384
    doc_small = np.repeat(np.arange(4, dtype=np.int32), [50, 150, 34, 150])
    np.save(work.path("doc_small.npy"), doc_small)
    small = {
        "causal region": (spec("c", 1, 2, n_small, 64, region=CAUSAL_REGION), []),
        "window region": (spec("w", 1, 2, n_small, 64,
                               region=WINDOW_REGION.replace("WINDOW", "48")), []),
        "document region": (spec("d", 1, 2, n_small, 64,
                                 mods=f"mod_inputs(%doc : {tensor(n_small, ty='i32')})",
                                 region=DOC_REGION.replace("NxI32", f"{n_small}xi32"),
                                 extra_args=f", %doc: {tensor(n_small, ty='i32')}"),
                            ["--input", "3=" + work.path("doc_small.npy")]),
    }
    for name, (text, extra) in small.items():
        path = work.write(harness.slug(name) + ".mlir", text)
        for form, err in harness.verify_forms(a.attn_run, path,
                                              ("fused", "decode", "naive"), extra):
            say(f"- {name}, {form} form, N = {n_small}: verified against the f64 "
                f"reference ({err})")
    say()

    # 1. Regions against built-in masks.
    n = a.causal_n
    W = 512
    cases = [
        Case("causal built-in", spec("cb", 1, 8, n, 64, mods="causal(top_left)"),
             [], f"B=1 H=8 N={n} D=64 causal(top_left)"),
        Case("causal region", spec("cr", 1, 8, n, 64, region=CAUSAL_REGION), [],
             "mask_mod j <= i"),
        Case("window built-in",
             spec("wb", 1, 8, n, 64, mods=f"causal(top_left) window_left({W})"),
             [], f"causal(top_left) window_left({W})"),
        Case("window region",
             spec("wr", 1, 8, n, 64, region=WINDOW_REGION.replace("WINDOW", str(W))),
             [], f"mask_mod j <= i and i - j <= {W}"),
    ]
    # 2. Documents: 8 packed documents, lengths N/8 +- 25% (seeded), the
    #    last one taking the rest.
    N = a.docs_n
    rng = np.random.default_rng(7)
    lengths = [int(N / 8 * rng.uniform(0.75, 1.25)) for _ in range(7)]
    lengths.append(N - sum(lengths))
    doc = np.repeat(np.arange(8, dtype=np.int32), lengths)
    np.save(work.path("doc.npy"), doc)
    dense = doc[:, None] == doc[None, :]
    np.save(work.path("mask.npy"), dense)
    ti = tensor(N, ty="i32")
    tm = tensor(N, N, ty="i1")
    doc_cases = [
        Case("documents region",
             spec("dr", 1, 8, N, 64, mods=f"mod_inputs(%doc : {ti})",
                  region=DOC_REGION.replace("NxI32", f"{N}xi32"),
                  extra_args=f", %doc: {ti}"),
             ["--input", "3=" + work.path("doc.npy")],
             f"B=1 H=8 N={N} D=64, 8 documents ({', '.join(map(str, lengths))} tokens)"),
        Case("documents dense mask",
             spec("dm", 1, 8, N, 64, mods=f"mask(%m : {tm})", extra_args=f", %m: {tm}"),
             ["--input", "3=" + work.path("mask.npy")],
             "the same mask as a [N, N] i1 tensor"),
    ]
    cases += doc_cases
    for c in cases:
        c.path = work.write(harness.slug(c.name) + ".mlir", c.spec_text)

    threads = harness.threads(a.threads)
    sdpa_times = {t: [] for t in threads}
    torch = harness.import_torch(a.no_torch)
    for t, env, first in harness.rounds(threads, a.rounds):
        for c in cases:
            save = []
            if first:
                save = ["--output", "out=" + work.out(c.name)]
                if c is doc_cases[0]:
                    for x in "qkv":
                        save += ["--save-input", f"{x}=" + work.path(f"doc_{x}.npy")]
            out = harness.run_ok([a.attn_run, c.path, f"--reps={a.reps}"] + c.args + save,
                                 env)
            c.times.append((t, harness.attn_time(out)))
        if torch is not None:
            q, k, v = (torch.from_numpy(np.load(work.path(f"doc_{x}.npy"))) for x in "qkv")
            res, s = harness.time_sdpa(torch, t, a.reps, q, k, v,
                                       attn_mask=torch.from_numpy(dense))
            sdpa_times[t].append(s)
            if first:
                np.save(work.out("documents sdpa"), res)

    # Same results everywhere.
    pairs = [("causal region", "causal built-in"), ("window region", "window built-in"),
             ("documents region", "documents dense mask")]
    if torch is not None:
        pairs.append(("documents region", "documents sdpa"))
    say.compare([(f"{x} vs {y}", work.load(x), work.load(y)) for x, y in pairs])

    ms, stats = harness.ms, harness.stats
    say(f"Times: median over {a.rounds} interleaved rounds of attn-run's median of "
        f"{a.reps} calls (kernel only); spread = min-max of the rounds.")
    say()
    say.table_head()
    for t in threads:
        med = {c.name: stats([x for tt, x in c.times if tt == t]) for c in cases}
        for region, builtin in (("causal region", "causal built-in"),
                                ("window region", "window built-in")):
            for name in (builtin, region):
                ratio = ""
                target = ""
                if name == region:
                    rr = med[name][0] / med[builtin][0]
                    ratio = f"{rr:.3f}x the built-in's time"
                    target = "met" if rr <= 1.05 else "missed (> 1.05)"
                say(f"| {name} | {t} | {ms(med[name], '.1f')} | {ratio} | {target} |")
        say(f"| documents dense mask | {t} | "
            f"{ms(med['documents dense mask'], '.1f')} | | |")
        if torch is not None:
            say(f"| documents, PyTorch SDPA with the dense mask | {t} | "
                f"{ms(stats(sdpa_times[t]), '.1f')} | | |")
        m = med["documents region"][0]
        dense_ratio = med["documents dense mask"][0] / m
        text = f"{dense_ratio:.2f}x faster than the dense mask"
        target = "met" if dense_ratio >= 3 else "missed (< 3x)"
        if torch is not None:
            text, target = harness.vs_sdpa(text, target, stats(sdpa_times[t])[0], m)
        say(f"| documents region | {t} | {ms(med['documents region'], '.1f')} | "
            f"{text} | {target} |")
    say()
    for c in cases:
        say(f"- {c.name}: {c.note}")
    say.save(os.path.join(a.results, "variants.md"))


if __name__ == "__main__":
    main()
