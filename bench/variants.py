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
import re
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import hostcpu  # noqa: E402


def tensor(*dims, ty="f32"):
    return "tensor<" + "x".join(str(d) for d in dims) + f"x{ty}>"


def spec(name, B, H, N, D, mods="", region="", extra_args=""):
    t = tensor(B, H, N, D)
    return (f"func.func @{name}(%q: {t}, %k: {t}, %v: {t}{extra_args}) -> {t} {{\n"
            f"  %o = attn.attention q(%q : {t}) k(%k : {t}) v(%v : {t}) {mods}"
            f"{region} -> {t}\n  return %o : {t}\n}}\n")


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


def run(cmd, env):
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"variants.py: {' '.join(cmd)} failed:\n{p.stdout}{p.stderr}")
    return p.stdout


def attn_time(out):
    m = re.search(r"^run: ([0-9.e-]+) s median", out, re.M)
    return float(m.group(1))


class Case:
    def __init__(self, name, spec_text, args, note):
        self.name, self.spec_text, self.args, self.note = name, spec_text, args, note
        self.times = []


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--attn-run", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--docs-n", type=int, default=8192)
    ap.add_argument("--causal-n", type=int, default=4096)
    ap.add_argument("--no-torch", action="store_true")
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

    def write(name, text):
        path = os.path.join(a.work, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    # Correctness at a small size against the f64 reference.
    n_small = 384
    doc_small = np.repeat(np.arange(4, dtype=np.int32), [50, 150, 34, 150])
    np.save(os.path.join(a.work, "doc_small.npy"), doc_small)
    small = {
        "causal region": (spec("c", 1, 2, n_small, 64, region=CAUSAL_REGION), []),
        "window region": (spec("w", 1, 2, n_small, 64,
                               region=WINDOW_REGION.replace("WINDOW", "48")), []),
        "document region": (spec("d", 1, 2, n_small, 64,
                                 mods=f"mod_inputs(%doc : {tensor(n_small, ty='i32')})",
                                 region=DOC_REGION.replace("NxI32", f"{n_small}xi32"),
                                 extra_args=f", %doc: {tensor(n_small, ty='i32')}"),
                            ["--input", "3=" + os.path.join(a.work, "doc_small.npy")]),
    }
    say(f"# User variants: regions against built-in masks and dense masks")
    say()
    say(f"Machine: {cpu}")
    say()
    for name, (text, extra) in small.items():
        path = write(name.replace(" ", "_") + ".mlir", text)
        for form in ("fused", "decode", "naive"):
            out = run([a.attn_run, path, f"--form={form}", "--verify", "--reps=0"]
                      + extra, dict(os.environ))
            err = re.search(r"vs reference: (max abs err [^,]+)", out)
            say(f"- {name}, {form} form, N = {n_small}: verified against the f64 "
                f"reference ({err.group(1) if err else 'ok'})")
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
    np.save(os.path.join(a.work, "doc.npy"), doc)
    dense = doc[:, None] == doc[None, :]
    np.save(os.path.join(a.work, "mask.npy"), dense)
    ti = tensor(N, ty="i32")
    tm = tensor(N, N, ty="i1")
    doc_cases = [
        Case("documents region",
             spec("dr", 1, 8, N, 64, mods=f"mod_inputs(%doc : {ti})",
                  region=DOC_REGION.replace("NxI32", f"{N}xi32"),
                  extra_args=f", %doc: {ti}"),
             ["--input", "3=" + os.path.join(a.work, "doc.npy")],
             f"B=1 H=8 N={N} D=64, 8 documents ({', '.join(map(str, lengths))} tokens)"),
        Case("documents dense mask",
             spec("dm", 1, 8, N, 64, mods=f"mask(%m : {tm})", extra_args=f", %m: {tm}"),
             ["--input", "3=" + os.path.join(a.work, "mask.npy")],
             "the same mask as a [N, N] i1 tensor"),
    ]
    cases += doc_cases
    for c in cases:
        c.path = write(c.name.replace(" ", "_") + ".mlir", c.spec_text)

    threads = [int(t) for t in a.threads.split(",")]
    sdpa_times = {t: [] for t in threads}
    torch = None
    if not a.no_torch:
        import torch  # noqa: F811
    for t in threads:
        env = dict(os.environ, OMP_NUM_THREADS=str(t))
        for r in range(a.rounds):
            for c in cases:
                save = []
                if r == 0 and t == threads[0]:
                    save = ["--output", "out=" + os.path.join(a.work, c.name.replace(" ", "_") + ".npy")]
                    if c is doc_cases[0]:
                        for x in "qkv":
                            save += ["--save-input", f"{x}=" + os.path.join(a.work, f"doc_{x}.npy")]
                out = run([a.attn_run, c.path, f"--reps={a.reps}"] + c.args + save, env)
                c.times.append((t, attn_time(out)))
            if torch is not None:
                torch.set_num_threads(t)
                q, k, v = (torch.from_numpy(np.load(os.path.join(a.work, f"doc_{x}.npy")))
                           for x in "qkv")
                m = torch.from_numpy(dense)
                F = torch.nn.functional
                res = F.scaled_dot_product_attention(q, k, v, attn_mask=m)
                samples = []
                for _ in range(a.reps):
                    start = time.perf_counter()
                    res = F.scaled_dot_product_attention(q, k, v, attn_mask=m)
                    samples.append(time.perf_counter() - start)
                sdpa_times[t].append(float(np.median(samples)))
                if r == 0 and t == threads[0]:
                    np.save(os.path.join(a.work, "documents_sdpa.npy"), res.numpy())

    # Same results everywhere.
    def load(name):
        return np.load(os.path.join(a.work, name.replace(" ", "_") + ".npy")).astype(np.float64)

    pairs = [("causal region", "causal built-in"), ("window region", "window built-in"),
             ("documents region", "documents dense mask")]
    if torch is not None:
        pairs.append(("documents region", "documents sdpa"))
    say("Outputs compared before timing (max abs difference, f32):")
    for x, y in pairs:
        d = np.abs(load(x) - load(y)).max()
        say(f"- {x} vs {y}: {d:.2e}")
        if not d <= 1e-4:
            sys.exit(f"variants.py: {x} and {y} differ by {d}")
    say()

    def stats(values):
        v = sorted(values)
        return v[len(v) // 2], v[0], v[-1]

    say(f"Times: median over {a.rounds} interleaved rounds of attn-run's median of "
        f"{a.reps} calls (kernel only); spread = min-max of the rounds.")
    say()
    say("| case | threads | time (ms) | spread (ms) | ratio | target |")
    say("|---|---|---|---|---|---|")
    for t in threads:
        med = {c.name: stats([x for tt, x in c.times if tt == t]) for c in cases}
        for region, builtin in (("causal region", "causal built-in"),
                                ("window region", "window built-in")):
            for name in (builtin, region):
                m, lo, hi = med[name]
                ratio = ""
                target = ""
                if name == region:
                    rr = m / med[builtin][0]
                    ratio = f"{rr:.3f}x the built-in's time"
                    target = "met" if rr <= 1.05 else "missed (> 1.05)"
                say(f"| {name} | {t} | {m * 1e3:.1f} | {lo * 1e3:.1f}-{hi * 1e3:.1f} | {ratio} | {target} |")
        m, lo, hi = med["documents dense mask"]
        say(f"| documents dense mask | {t} | {m * 1e3:.1f} | {lo * 1e3:.1f}-{hi * 1e3:.1f} | | |")
        if torch is not None:
            s, slo, shi = stats(sdpa_times[t])
            say(f"| documents, PyTorch SDPA with the dense mask | {t} | {s * 1e3:.1f} | {slo * 1e3:.1f}-{shi * 1e3:.1f} | | |")
        m, lo, hi = med["documents region"]
        dense_ratio = med["documents dense mask"][0] / m
        text = f"{dense_ratio:.2f}x faster than the dense mask"
        target = "met" if dense_ratio >= 3 else "missed (< 3x)"
        if torch is not None:
            sr = stats(sdpa_times[t])[0] / m
            text += f", {sr:.2f}x faster than SDPA"
            target += "; " + ("met" if sr > 1 else "missed (SDPA faster)")
        say(f"| documents region | {t} | {m * 1e3:.1f} | {lo * 1e3:.1f}-{hi * 1e3:.1f} | {text} | {target} |")
    say()
    for c in cases:
        say(f"- {c.name}: {c.note}")
    with open(os.path.join(a.results, "variants.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
