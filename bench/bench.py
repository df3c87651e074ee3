#!/usr/bin/env python3
"""Attention benchmark: this project's naive, fused and decode forms against
PyTorch SDPA and a plain OpenBLAS baseline, on the same inputs, checked against
the project's f64 reference before any time is reported. Run through
bench/run.sh, which sets up the environment; see docs/Benchmarks.md.
"""
import argparse
import csv
import json
import os
import platform
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import harness  # noqa: E402
import hostcpu  # noqa: E402
from harness import (attention_func, failure, loadavg, machine_line,  # noqa: E402
                     results_dir, run, tensor)

# Tolerance vs the f64 reference per element type: attn-run's own --verify
# defaults (defaultTolerance in lib/Execution/ReferenceBridge.cpp), so that
# every implementation is held to what attn-run checks its own output with.
TOL = {"f32": (1e-4, 1e-3), "f16": (2e-3, 1e-2), "bf16": (2e-2, 4e-2)}
ITEM_BYTES = {"f32": 4, "f16": 2, "bf16": 2}
NAIVE_LIMIT = 4 << 30    # naive form skipped when its score tensor is this big
GiB, MiB = float(1 << 30), float(1 << 20)


class Shape:
    def __init__(self, name, B, Hq, Hkv, Nq, Nk, D, causal="none", wl=-1,
                 wr=-1, kv_len=None, reps=5, naive_reps=1, note="",
                 dtype="f32"):
        self.name, self.B, self.Hq, self.Hkv = name, B, Hq, Hkv
        self.Nq, self.Nk, self.D, self.Dv = Nq, Nk, D, D
        self.causal, self.wl, self.wr, self.kv_len = causal, wl, wr, kv_len
        self.reps, self.naive_reps, self.note = reps, naive_reps, note
        self.dtype = dtype  # of q, k, v and the output

    def variant(self, dtype):
        """The same shape with q, k, v and the output in another type."""
        return Shape(f"{self.name}_{dtype}", self.B, self.Hq, self.Hkv, self.Nq,
                     self.Nk, self.D, self.causal, self.wl, self.wr, self.kv_len,
                     self.reps, self.naive_reps,
                     f"{self.name} in {dtype}; SDPA in {dtype}", dtype)

    def windowed(self):
        return self.wl >= 0 or self.wr >= 0

    def describe(self):
        s = (f"B={self.B} Hq={self.Hq} Hkv={self.Hkv} Nq={self.Nq} "
             f"Nk={self.Nk} D={self.D}")
        if self.dtype != "f32":
            s += f" {self.dtype}"
        if self.causal != "none":
            s += f" causal({self.causal})"
        if self.wl >= 0:
            s += f" window_left({self.wl})"
        if self.wr >= 0:
            s += f" window_right({self.wr})"
        if self.kv_len is not None:
            lens = sorted(set(self.kv_len))
            s += (f" kv_len={lens[0]}" if len(lens) == 1
                  else f" kv_len={min(lens)}..{max(lens)}")
        return s

    def score_bytes(self):
        return self.B * self.Hq * self.Nq * self.Nk * 4

    def kv_bytes_read(self):
        lens = self.kv_len or [self.Nk] * self.B
        return (sum(min(l, self.Nk) for l in lens) * self.Hkv
                * (self.D + self.Dv) * ITEM_BYTES[self.dtype])

    def spec(self):
        ty = self.dtype
        qt = tensor(self.B, self.Hq, self.Nq, self.D, ty=ty)
        kt = tensor(self.B, self.Hkv, self.Nk, self.D, ty=ty)
        vt = tensor(self.B, self.Hkv, self.Nk, self.Dv, ty=ty)
        ot = tensor(self.B, self.Hq, self.Nq, self.Dv, ty=ty)
        args = ""
        mods = []
        if self.kv_len is not None:
            lt = tensor(self.B, ty="i32")
            args = f", %kv_len: {lt}"
            mods.append(f"kv_len(%kv_len : {lt})")
        if self.causal != "none":
            mods.append(f"causal({self.causal})")
        if self.wl >= 0:
            mods.append(f"window_left({self.wl})")
        if self.wr >= 0:
            mods.append(f"window_right({self.wr})")
        return (f"// bench shape {self.name}: {self.describe()}\n"
                + attention_func(self.name, qt, kt, vt, ot,
                                 "".join(" " + m for m in mods), args))


def with_dtype_variants(shapes):
    """Appends bf16 and f16 versions of prefill and encoder (issue targets:
    >= 1.25x SDPA in the same type)."""
    base = {s.name: s for s in shapes}
    return shapes + [base[n].variant(ty) for ty in ("bf16", "f16")
                     for n in ("prefill", "encoder")]


def all_shapes(quick):
    return with_dtype_variants(f32_shapes(quick))


def f32_shapes(quick):
    if quick:  # small versions of the same cases, for debugging the harness
        return [
            Shape("prefill", 1, 8, 2, 256, 256, 128, "top_left", reps=2),
            Shape("encoder", 1, 4, 4, 128, 128, 64, reps=2),
            Shape("cross", 1, 4, 4, 64, 256, 64, reps=2),
            Shape("window", 1, 2, 2, 512, 512, 64, "top_left", wl=64, reps=2),
            Shape("decode", 2, 8, 2, 1, 512, 128, "bottom_right",
                  kv_len=[512, 512], reps=3),
            Shape("decode_ragged", 2, 8, 2, 1, 512, 128, "bottom_right",
                  kv_len=[512, 100], reps=3),
            Shape("long", 1, 1, 1, 1024, 1024, 64, "top_left", reps=2),
        ]
    return [
        Shape("prefill", 1, 32, 8, 2048, 2048, 128, "top_left", reps=5,
              note="GQA 4:1"),
        Shape("encoder", 4, 16, 16, 1024, 1024, 64, reps=5),
        Shape("cross", 4, 16, 16, 256, 1024, 64, reps=10,
              note="Nq != Nk, non-causal"),
        Shape("window", 1, 8, 8, 4096, 4096, 64, "top_left", wl=512, reps=5,
              note="causal sliding window: 513 keys per query"),
        Shape("decode", 8, 32, 8, 1, 4096, 128, "bottom_right",
              kv_len=[4096] * 8, reps=20, note="KV cache full (kv_len = Nmax)"),
        Shape("decode_ragged", 8, 32, 8, 1, 4096, 128, "bottom_right",
              kv_len=[4096, 3584, 3072, 2560, 2048, 1536, 1024, 512], reps=20,
              note="kv_len < Nmax for 7 of 8 sequences"),
        Shape("long", 1, 4, 4, 16384, 16384, 64, "top_left", reps=3,
              note="long rows; naive form skipped"),
    ]


def human(nbytes):
    for unit, size in (("GiB", GiB), ("MiB", MiB), ("KiB", 1024.0)):
        if nbytes >= size:
            return f"{nbytes / size:.3g} {unit}"
    return f"{nbytes:.0f} B"


def check(out_path, ref, dtype="f32"):
    """Compares an output with the f64 reference: (ok, max abs error, why),
    with attn-run's tolerance for the element type."""
    atol, rtol = TOL[dtype]
    out = np.load(out_path).astype(np.float64)
    if out.shape != ref.shape:
        return False, float("inf"), f"shape {out.shape} != {ref.shape}"
    err = np.abs(out - ref)
    bad = ~(err <= atol + rtol * np.abs(ref))  # NaN counts as bad
    max_err = float(np.nanmax(err)) if np.isfinite(err).any() else float("inf")
    if bad.any():
        return False, max_err, f"{int(bad.sum())} elements beyond atol {atol} rtol {rtol}"
    return True, max_err, ""


def round_to_bf16(x):
    """f32 values rounded to the nearest bf16 (ties to even), still as f32:
    attn-run reads a bf16 argument from an f32 .npy and rounds the same way,
    and torch converts these values to bfloat16 exactly, so both see the same
    inputs."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    u = (u + np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1))) \
        & np.uint32(0xFFFF0000)
    return u.view(np.float32)


class Bench:
    def __init__(self, args, machine):
        self.a = args
        self.m = machine  # cpu_model, host_isa, openblas_core, target_* ...
        self.rows = []
        self.rates = {}

    # ---- machine limits -------------------------------------------------
    def machine_rates(self, label):
        quick = ["--n", "1024", "--bw-mib", "256", "--reps", "3"] if self.a.quick else []
        for t in self.a.threads:
            p = run([os.path.join(self.a.bin, "machine_rates"), "--threads",
                     str(t)] + quick, env=self.omp_env(t))
            if p.returncode:
                sys.exit(failure(p, "machine_rates (OpenBLAS SGEMM and read "
                                    "bandwidth probe) failed:")
                         + f" [OPENBLAS_CORETYPE "
                         f"{self.m['openblas_coretype'] or 'unset'}]")
            r = json.loads(p.stdout)
            if r["core"] != self.m["openblas_core"]:
                print(f"  warning: OpenBLAS ran core {r['core']}, expected "
                      f"{self.m['openblas_core']}", flush=True)
            print(f"  [{label}] {t} thread(s): OpenBLAS SGEMM {r['sgemm_n']}^3 "
                  f"{r['sgemm_gflops_median']:.1f} GFLOP/s (core {r['core']}), "
                  f"read bandwidth {r['read_gbs_median']:.1f} GB/s "
                  f"({r['read_bytes'] / GiB:.2f} GiB buffer)", flush=True)
            old = self.rates.get(t)
            if old is None:
                self.rates[t] = r
            else:  # keep the best of the two measurements (start and end)
                for key in ("sgemm_gflops_median", "read_gbs_median"):
                    old[key] = max(old[key], r[key])

    def omp_env(self, t):
        # OPENBLAS_CORETYPE: the core chosen at the start (None = unset, so
        # that OpenBLAS's own detection runs; a preset that was dropped is
        # removed here).
        env = {"OMP_NUM_THREADS": str(t), "OPENBLAS_NUM_THREADS": str(t),
               "OPENBLAS_CORETYPE": self.m["openblas_coretype"],
               "MKL_NUM_THREADS": str(t)}
        if self.a.omp_wait_policy != "default":
            env["OMP_WAIT_POLICY"] = self.a.omp_wait_policy
        if self.a.peers_isa == "avx2":
            env.update({"ATEN_CPU_CAPABILITY": "avx2",
                        "ONEDNN_MAX_CPU_ISA": "AVX2", "DNNL_MAX_CPU_ISA": "AVX2",
                        "MKL_ENABLE_INSTRUCTIONS": "AVX2"})
        return env

    # ---- one shape ------------------------------------------------------
    def add(self, s, impl, t, **kw):
        row = {"shape": s.name, "impl": impl, "threads": t,
               "status": kw.pop("status", "ok"), "note": kw.pop("note", ""),
               "loadavg": kw.pop("load", loadavg()), "dtype": s.dtype}
        row.update({k: self.m[k] for k in MACHINE_COLS})
        row.update(kw)
        row["_shape"] = s
        self.derive(row)
        self.rows.append(row)
        return row

    def derive(self, row):
        """GFLOP/s and the ratios to the machine limits (measured so far)."""
        if not row.get("median_s"):
            return
        s, rate = row["_shape"], self.rates[row["threads"]]
        row["gflops"] = row["flops"] / row["median_s"] * 1e-9
        row["pct_sgemm"] = 100 * row["gflops"] / rate["sgemm_gflops_median"]
        if s.Nq == 1:
            row["kv_gbs"] = s.kv_bytes_read() / row["median_s"] * 1e-9
            row["pct_read_bw"] = 100 * row["kv_gbs"] / rate["read_gbs_median"]

    def bench_shape(self, s):
        d = os.path.join(self.a.work, s.name)
        os.makedirs(d, exist_ok=True)
        spec = os.path.join(d, f"{s.name}.mlir")
        with open(spec, "w") as f:
            f.write(s.spec())
        rng = np.random.default_rng(self.a.seed)
        files = {}
        for name, shp in (("q", (s.B, s.Hq, s.Nq, s.D)),
                          ("k", (s.B, s.Hkv, s.Nk, s.D)),
                          ("v", (s.B, s.Hkv, s.Nk, s.Dv))):
            files[name] = os.path.join(d, f"{name}.npy")
            x = rng.uniform(-1, 1, shp).astype(np.float32)
            if s.dtype == "bf16":  # f32 file of bf16 values (attn-run's format)
                x = round_to_bf16(x)
            elif s.dtype == "f16":
                x = x.astype(np.float16)
            np.save(files[name], x)
        if s.kv_len is not None:
            files["kv_len"] = os.path.join(d, "kv_len.npy")
            np.save(files["kv_len"], np.array(s.kv_len, dtype=np.int32))
        ref_path = os.path.join(d, "ref.npy")
        ref = None
        flops = None
        print(f"\n== {s.name}: {s.describe()}" + (f"  ({s.note})" if s.note else ""),
              flush=True)

        forms = ["fused"] + (["decode"] if s.Nq == 1 else []) + ["naive"]
        for t in self.a.threads:
            for form in forms:
                if form == "naive" and s.dtype != "f32":
                    self.add(s, "attn naive", t, status="skipped",
                             note="not run for the bf16/f16 variants (their "
                                  "targets compare the fused form with SDPA)")
                    continue
                if form == "naive" and s.score_bytes() >= NAIVE_LIMIT:
                    self.add(s, "attn naive", t, status="skipped",
                             note=f"skipped: needs {s.score_bytes() / GiB:.1f} GiB "
                                  f"for the [B,Hq,Nq,Nk] score tensor")
                    continue
                reps = s.naive_reps if form == "naive" else s.reps
                out = os.path.join(d, f"attn_{form}_{t}.npy")
                rep = os.path.join(d, f"attn_{form}_{t}.json")
                cmd = [self.a.attn_run, spec, f"--form={form}", f"--reps={reps}",
                       f"--report={rep}", f"--output=out={out}"]
                cmd += self.a.target_args
                cmd += [f"--input={n}={p}" for n, p in files.items()]
                if ref is None:
                    # The first run of a shape also writes the f64 reference
                    # (attn-run computes it after timing); every output,
                    # this one included, is then checked against that file.
                    cmd += ["--verify", f"--reference-output=out={ref_path}"]
                load = loadavg()
                t0 = time.time()
                p = run(cmd, env=self.omp_env(t))
                wall = time.time() - t0
                if not os.path.exists(rep):
                    self.add(s, f"attn {form}", t, status="failed", load=load,
                             note=failure(p, "attn-run"))
                    self.print_row(self.rows[-1])
                    continue
                r = json.load(open(rep))
                self.note_target(r)
                if ref is None and os.path.exists(ref_path):
                    ref = np.load(ref_path)
                flops = r["flops"]
                if ref is None:
                    self.add(s, f"attn {form}", t, status="unchecked", load=load,
                             note="no reference")
                    continue
                ok, err, why = check(out, ref, s.dtype)
                self.add(s, f"attn {form}", t, load=load,
                         status="ok" if ok else "MISMATCH", note=why,
                         median_s=r["median_s"], min_s=r["min_s"],
                         max_s=r["max_s"], reps=len(r["times_s"]), flops=flops,
                         extra_bytes=r["extra_bytes"], compile_s=r["compile_s"],
                         max_abs_err=err, mem_method="attn-run heap peak - outputs",
                         wall_s=wall, lowering=lowering_text(r))
                self.print_row(self.rows[-1])
            if ref is None or flops is None:
                print(f"  no reference for {s.name}: peers not run", flush=True)
                continue
            self.bench_sdpa(s, t, d, ref, flops)
            self.bench_openblas(s, t, d, files, ref, flops)

    def bench_sdpa(self, s, t, d, ref, flops):
        if self.a.no_torch:
            return
        out = os.path.join(d, f"sdpa_{t}.npy")
        rep = os.path.join(d, f"sdpa_{t}.json")
        cmd = [sys.executable, os.path.join(HERE, "sdpa_worker.py"), "--dir", d,
               "--causal", s.causal, "--window-left", str(s.wl),
               "--window-right", str(s.wr), "--threads", str(t),
               "--reps", str(s.reps), "--out", out, "--report", rep,
               "--dtype", s.dtype]
        load = loadavg()
        p = run(cmd, env=self.omp_env(t))
        if p.returncode or not os.path.exists(rep):
            self.add(s, "torch sdpa", t, status="failed", load=load,
                     note=failure(p, "sdpa_worker"))
            self.print_row(self.rows[-1])
            return
        r = json.load(open(rep))
        ok, err, why = check(out, ref, s.dtype)
        note = (f"torch {r['torch']} {r.get('dtype', 'float32')}, native "
                f"(CPU capability {r.get('cpu_capability', '?')}), {r['mask']}, "
                f"backend {r['backend']}")
        self.add(s, "torch sdpa", t, load=load, status="ok" if ok else "MISMATCH",
                 note=note + ("; " + why if why else ""), median_s=r["median_s"],
                 min_s=r["min_s"], max_s=r["max_s"], reps=len(r["times_s"]),
                 flops=flops, extra_bytes=r["extra_bytes"], max_abs_err=err,
                 mem_method="VmHWM - VmRSS before - output")
        self.print_row(self.rows[-1])

    def bench_openblas(self, s, t, d, files, ref, flops):
        if s.dtype != "f32":
            self.add(s, "openblas", t, status="skipped",
                     note="the OpenBLAS baseline is f32 only")
            return
        out = os.path.join(d, f"openblas_{t}.npy")
        rep = os.path.join(d, f"openblas_{t}.json")
        cmd = [os.path.join(self.a.bin, "openblas_attention"), "--q", files["q"],
               "--k", files["k"], "--v", files["v"], "--causal", s.causal,
               "--window-left", str(s.wl), "--window-right", str(s.wr),
               "--threads", str(t), "--reps", str(s.reps), "--out", out,
               "--report", rep]
        if "kv_len" in files:
            cmd += ["--kv-len", files["kv_len"]]
        load = loadavg()
        p = run(cmd, env=self.omp_env(t))
        if p.returncode or not os.path.exists(rep):
            self.add(s, "openblas", t, status="failed", load=load,
                     note=failure(p, "openblas_attention")
                          + f" [OPENBLAS_CORETYPE {self.m['openblas_coretype'] or 'unset'}]")
            self.print_row(self.rows[-1])
            return
        r = json.load(open(rep))
        ok, err, why = check(out, ref, s.dtype)
        self.add(s, "openblas", t, load=load, status="ok" if ok else "MISMATCH",
                 note=f"core {r['core']}, native"
                      + ("; " + why if why else ""),
                 median_s=r["median_s"], min_s=r["min_s"], max_s=r["max_s"],
                 reps=len(r["times_s"]), flops=flops,
                 extra_bytes=r["peak_rss_delta_bytes"], max_abs_err=err,
                 mem_method="VmHWM - VmRSS before (output preallocated)")
        self.print_row(self.rows[-1])

    def note_target(self, r):
        """Checks an attn-run report's "target" against the run's."""
        tg = r.get("target")
        # "host" is whatever LLVM names this CPU (znver4, rocketlake, ...).
        if self.m["target_cpu"] == "host":
            return
        if isinstance(tg, dict) and tg.get("cpu") and tg.get("cpu") != self.m["target_cpu"]:
            print(f"  warning: attn-run reports target {tg.get('cpu')}, the "
                  f"run's is {self.m['target_cpu']}", flush=True)

    # ---- output ---------------------------------------------------------
    HEADER = (f"{'shape':<14}{'impl':<13}{'thr':>3} {'median ms':>10} "
              f"{'[min, max] ms':>21} {'GFLOP/s':>8} {'%SGEMM':>7} "
              f"{'SDPA/x':>7} {'extra MiB':>10} {'compile s':>9} {'load':>5}  check")

    def print_row(self, r):
        if r["status"] in ("skipped", "failed", "unchecked") or not r.get("median_s"):
            print(f"{r['shape']:<14}{r['impl']:<13}{r['threads']:>3} "
                  f"{r['status']}: {r['note']}", flush=True)
            return
        sd = r.get("sdpa_over")
        print(f"{r['shape']:<14}{r['impl']:<13}{r['threads']:>3} "
              f"{r['median_s'] * 1e3:>10.2f} "
              f"{'[' + format(r['min_s'] * 1e3, '.2f') + ', ' + format(r['max_s'] * 1e3, '.2f') + ']':>21} "
              f"{r['gflops']:>8.2f} {r['pct_sgemm']:>6.1f}% "
              f"{(format(sd, '.2f') + 'x') if sd else '':>7} "
              f"{r['extra_bytes'] / MiB:>10.2f} "
              f"{format(r['compile_s'], '.3f') if r.get('compile_s') is not None else '':>9} "
              f"{r['loadavg']:>5.1f}  "
              f"{r['status']} (err {r['max_abs_err']:.1e})"
              + (f" kv {r['kv_gbs']:.1f} GB/s = {r['pct_read_bw']:.0f}% of read bw"
                 if r.get("kv_gbs") else ""), flush=True)

    def finish(self):
        # SDPA time / this time, only against a checked SDPA result.
        for r in self.rows:
            self.derive(r)
            sd = [x for x in self.rows if x["shape"] == r["shape"]
                  and x["threads"] == r["threads"] and x["impl"] == "torch sdpa"
                  and x["status"] == "ok"]
            if sd and r.get("median_s") and r["status"] == "ok":
                r["sdpa_over"] = sd[0]["median_s"] / r["median_s"]
        print("\n== Results (times over repetitions after one warm-up; "
              "SDPA/x = SDPA median time / this median time; load = 1-minute "
              "load average when the row started)")
        print(machine_line(self.m))
        print(self.HEADER)
        for r in self.rows:
            self.print_row(r)

    def write_csv(self, path):
        cols = ["shape", "impl", "threads", "status", "median_s", "min_s",
                "max_s", "reps", "flops", "gflops", "pct_sgemm", "sdpa_over",
                "kv_gbs", "pct_read_bw", "extra_bytes", "mem_method",
                "compile_s", "max_abs_err", "loadavg", "note", "dtype",
                "lowering"] + MACHINE_COLS
        rows = []
        mach = {k: self.m[k] for k in MACHINE_COLS}
        forced = (f"OPENBLAS_CORETYPE={self.m['openblas_coretype']}"
                  if self.m["openblas_coretype"] else "OPENBLAS_CORETYPE unset")
        for t, r in sorted(self.rates.items()):
            rows.append({"shape": "machine", "impl": "sgemm", "threads": t,
                         "status": "ok", "gflops": r["sgemm_gflops_median"],
                         "note": f"OpenBLAS cblas_sgemm {r['sgemm_n']}^3, "
                                 f"{forced} (core {r['core']})", **mach})
            rows.append({"shape": "machine", "impl": "read_bw", "threads": t,
                         "status": "ok", "kv_gbs": r["read_gbs_median"],
                         "note": f"streaming sum over {r['read_bytes'] / GiB:.2f} GiB, GB/s",
                         **mach})
        rows += self.rows

        def fmt(v):
            if isinstance(v, float):
                return f"{v:.6g}"
            return v
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
            w.writeheader()
            for r in rows:
                w.writerow({c: fmt(r.get(c, "")) for c in cols})

    def chart(self, path, shapes):
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        impls = ["attn fused", "attn decode", "attn naive", "torch sdpa", "openblas"]
        colors = {"attn fused": "#1f77b4", "attn decode": "#17becf",
                  "attn naive": "#aec7e8", "torch sdpa": "#d62728",
                  "openblas": "#2ca02c"}
        names = [s.name for s in shapes]
        threads = self.a.threads
        fig, axes = plt.subplots(len(threads), 1, figsize=(13, 4.6 * len(threads)),
                                 squeeze=False)
        width = 0.8 / len(impls)
        for ax, t in zip(axes[:, 0], threads):
            ymax = 1.0
            for k, impl in enumerate(impls):
                xs, ys, labels = [], [], []
                for i, n in enumerate(names):
                    r = [x for x in self.rows if x["shape"] == n and x["impl"] == impl
                         and x["threads"] == t]
                    if not r:
                        continue
                    r = r[0]
                    x = i - 0.4 + width * (k + 0.5)
                    if r["status"] == "ok" and r.get("gflops"):
                        xs.append(x)
                        ys.append(r["gflops"])
                        labels.append(f"{r['gflops']:.3g}")
                        ymax = max(ymax, r["gflops"])
                    else:
                        tag = "skip" if r["status"] == "skipped" else r["status"].lower()
                        ax.text(x, 0.12, tag, rotation=90, ha="center", va="bottom",
                                fontsize=7, color="gray")
                ax.bar(xs, ys, width, label=impl, color=colors[impl])
                for x, y, lab in zip(xs, ys, labels):
                    ax.text(x, y * 1.05, lab, ha="center", va="bottom", fontsize=6.5,
                            rotation=90)
            sg = self.rates[t]["sgemm_gflops_median"]
            ax.axhline(sg, color="black", linestyle="--", linewidth=1,
                       label=f"OpenBLAS SGEMM {sg:.0f} (measured)")
            ax.set_yscale("log")
            ax.set_ylim(0.1, max(ymax, sg) * 8)
            ax.set_xticks(range(len(names)))
            ax.set_xticklabels(names, fontsize=8)
            ax.set_xlim(-0.5, len(names) - 0.5)
            ax.set_ylabel("GFLOP/s (allowed pairs, log)")
            ax.set_title(f"{t} thread{'s' if t > 1 else ''}: attention (f32 unless "
                         f"the name says), GFLOP/s per shape and implementation")
            ax.grid(axis="y", which="major", alpha=0.3)
            ax.legend(loc="upper left", fontsize=8, ncol=len(impls) + 1)
        fig.suptitle(machine_line(self.m, short=True), fontsize=9)
        fig.tight_layout(rect=(0, 0, 1, 0.97))
        fig.savefig(path, dpi=110)
        plt.close(fig)

    def targets(self, shapes):
        """Prints, for each target of the issue, whether it is met in this run
        and, when missed, by how much. The targets (all ratios measured in the
        same run, one and two threads):
          - fused form >= 1.25x PyTorch SDPA on prefill, encoder and cross;
          - fused form >= 80% of the SGEMM rate where N >= 1024 and D >= 64
            (f32 shapes without a window: prefill, encoder, long);
          - sliding window: fused form >= 75% of the SGEMM rate;
          - bf16 and f16 inputs: fused form >= 1.25x SDPA in the same type on
            prefill and encoder;
          - decode: within 1.5x of the KV-read bandwidth limit (the decode
            form's KV GB/s >= 1/1.5 = 66.7% of the measured read bandwidth).
        Then the memory and compile-time checks."""
        print("\n== Targets"
              + (" -- quick mode: small shapes, the verdicts mean nothing" if self.a.quick else ""))
        print("  " + machine_line(self.m))
        if self.m["target_cpu"] != "host" and self.m.get("peers") == "AVX2 only":
            print(f"  note: our code is compiled for {self.m['target_cpu']} "
                  f"({self.m['target_isa']}) and SDPA, OpenBLAS and the SGEMM "
                  f"rate use AVX2 kernels only: an AVX2 machine emulated on "
                  f"this {self.m['host_isa']} host (its clock and caches)")
        elif self.m["target_cpu"] != "host":
            print(f"  note: our code is compiled for {self.m['target_cpu']} "
                  f"({self.m['target_isa']}) while SDPA and OpenBLAS (SGEMM rate "
                  f"included) run natively ({self.m['host_isa']}): the ratios "
                  f"compare code for different instruction sets")
        by = {(r["shape"], r["impl"], r["threads"]): r for r in self.rows}
        names = {s.name: s for s in shapes}
        tally = {"met": 0, "MISSED": 0, "n/a": 0}

        def line(ok, text):
            tag = "met" if ok else "MISSED" if ok is False else "n/a"
            tally[tag] += 1
            print(f"  [{tag}] {text}")

        def vs_sdpa(n, t, goal=1.25):
            r = by.get((n, "attn fused", t))
            sd = by.get((n, "torch sdpa", t))
            what = f"{n} {t}T fused vs SDPA" + (
                f" (both {names[n].dtype})" if names[n].dtype != "f32" else "")
            if r and r.get("sdpa_over"):
                x = r["sdpa_over"]
                line(x >= goal, f"{what}: {x:.2f}x (target >= {goal}x"
                     + ("" if x >= goal else
                        f"; missed by {goal - x:.2f}x: ours would need "
                        f"{100 * (1 - x / goal):.0f}% less time") + ")")
            else:
                line(None, f"{what}: no checked pair "
                     f"(fused {r and r['status']}, sdpa {sd and sd['status']})")

        def vs_sgemm(n, t, goal):
            r = by.get((n, "attn fused", t))
            if not (r and r["status"] == "ok" and r.get("pct_sgemm") is not None):
                line(None, f"{n} {t}T fused vs SGEMM: fused {r and r['status']}")
                return
            p = r["pct_sgemm"]
            line(p >= goal, f"{n} {t}T fused at {p:.1f}% of SGEMM "
                 f"({r['gflops']:.1f} of {self.rates[t]['sgemm_gflops_median']:.1f} "
                 f"GFLOP/s; target >= {goal}%"
                 + ("" if p >= goal else f"; missed by {goal - p:.1f} points, "
                    f"needs {goal / p:.2f}x the rate") + ")")

        for t in self.a.threads:
            for n in ("prefill", "encoder", "cross", "prefill_bf16",
                      "encoder_bf16", "prefill_f16", "encoder_f16"):
                if n in names:
                    vs_sdpa(n, t)
            for n, s in names.items():
                if s.dtype != "f32":
                    continue
                if s.windowed():
                    vs_sgemm(n, t, 75)
                elif min(s.Nq, s.Nk) >= 1024 and s.D >= 64:
                    vs_sgemm(n, t, 80)
            for n in ("decode", "decode_ragged"):
                if n not in names:
                    continue
                r = by.get((n, "attn decode", t))
                if not (r and r["status"] == "ok"):
                    line(None, f"{n} {t}T decode form: {r and r['status']}")
                    continue
                bw = self.rates[t]["read_gbs_median"]
                slow = 100.0 / r["pct_read_bw"]  # time / bandwidth-limited time
                line(slow <= 1.5,
                     f"{n} {t}T decode form reads the KV cache at {r['kv_gbs']:.2f} GB/s = "
                     f"{r['pct_read_bw']:.1f}% of the measured {bw:.1f} GB/s, "
                     f"{slow:.2f}x the bandwidth-limited time (target <= 1.5x, "
                     f"i.e. >= 66.7%"
                     + ("" if slow <= 1.5 else
                        f"; missed by {slow - 1.5:.2f}x: needs {100 * (1 - 1.5 / slow):.0f}% "
                        f"less time") + ")")
                x = r.get("sdpa_over")
                if x:
                    print(f"  [info] {n} {t}T decode form vs SDPA: {x:.2f}x")
        # Memory: does the fused / decode forms' extra memory grow with the
        # Nq x Nk score tensor an unfused form needs? The extra memory is the
        # tiles' working set, which depends on the tile sizes the compiler
        # chooses from the shape (group size R, head dim D, masked or not) and
        # on Nq when Nq is smaller than a tile (decode rows). So shapes are
        # compared within classes of equal (R, D, banded, Nq >= 256), from the
        # smallest to the largest score tensor ("independent": at most 2x +
        # 64 KiB more), and every shape's extra memory is listed.
        def tile_class(sh):
            banded = sh.causal != "none" or sh.wl >= 0 or sh.wr >= 0
            return (sh.Hq // sh.Hkv, sh.D, banded, sh.Nq >= 256, sh.dtype)

        for form in ("attn fused", "attn decode"):
            for t in self.a.threads:
                rs = [r for r in self.rows if r["impl"] == form and r["threads"] == t
                      and r["status"] == "ok"]
                if not rs:
                    continue
                rs.sort(key=lambda r: names[r["shape"]].score_bytes())
                listing = ", ".join(
                    f"{r['shape']} {human(r['extra_bytes'])}"
                    f" (scores {human(names[r['shape']].score_bytes())})" for r in rs)
                classes = {}
                for r in rs:
                    classes.setdefault(tile_class(names[r["shape"]]), []).append(r)
                pairs = [(c[0], c[-1]) for c in classes.values()
                         if names[c[0]["shape"]].score_bytes()
                         < names[c[-1]["shape"]].score_bytes()]
                if not pairs:
                    line(None, f"{form} {t}T peak extra memory: no two shapes with "
                         f"the same tiles and different score tensors: {listing}")
                    continue
                grow = all(hi["extra_bytes"] <= 2 * lo["extra_bytes"] + 65536
                           for lo, hi in pairs)
                compared = "; ".join(
                    f"{lo['shape']} -> {hi['shape']}: scores "
                    f"{human(names[lo['shape']].score_bytes())} -> "
                    f"{human(names[hi['shape']].score_bytes())}, extra "
                    f"{human(lo['extra_bytes'])} -> {human(hi['extra_bytes'])}"
                    for lo, hi in pairs)
                line(grow, f"{form} {t}T peak extra memory independent of Nq x Nk "
                     f"(same tiles: {compared}); all: {listing}"
                     + (" [quick sizes]" if self.a.quick else ""))
        comp = [r for r in self.rows if r.get("compile_s") is not None]
        if comp:
            m = max(comp, key=lambda r: r["compile_s"])
            line(m["compile_s"] < 1.0, f"compile time: max {m['compile_s']:.3f} s "
                 f"({m['shape']} {m['impl']}; target < 1 s)")
        print(f"  {tally['met']} met, {tally['MISSED']} missed, {tally['n/a']} n/a")


def lowering_text(report):
    """What the lowering chose, from an attn-run report: per attention op
    (or version) the line attn-run prints after "lowering:" (its form,
    tiles, key splits, register tile, bf16 products), joined by "; "."""
    return "; ".join(c.get("text", c.get("form", "?"))
                     for c in report.get("lowering", []))


MACHINE_COLS = ["cpu_model", "host_isa", "openblas_core", "target_cpu",
                "target_isa", "target_features", "peers"]


def probe_openblas(a, flags):
    """What OpenBLAS picks by itself (OPENBLAS_CORETYPE unset), and the core
    to run (bench/hostcpu.py). Returns the decision dict of
    hostcpu.choose_openblas_core plus "detected"."""
    probe = os.path.join(a.bin, "machine_rates")
    p = run([probe, "--probe"], env={"OPENBLAS_CORETYPE": None})
    detected = None
    if p.returncode == 0:
        detected = json.loads(p.stdout)["core"]
    else:
        print("  " + failure(p, "OpenBLAS probe (OPENBLAS_CORETYPE unset)"))
    preset = os.environ.get("OPENBLAS_CORETYPE")
    d = hostcpu.choose_openblas_core(flags, detected, preset)
    d["detected"] = detected
    print(f"OpenBLAS: detects core {detected or '?'} by itself; "
          f"runs {d['expect']} "
          f"({'OPENBLAS_CORETYPE=' + d['set'] if d['set'] else 'OPENBLAS_CORETYPE unset'}): "
          f"{d['reason']}")
    for n in d["notes"]:
        print(f"  warning: {n}")
    if os.environ.get("OPENBLAS_L2_SIZE"):
        print(f"  OPENBLAS_L2_SIZE={os.environ['OPENBLAS_L2_SIZE']} from the "
              f"environment is kept (it only tunes OpenBLAS's blocking)")
    if d["set"]:  # confirm OpenBLAS accepts the name and runs that core
        p = run([probe, "--probe"], env={"OPENBLAS_CORETYPE": d["set"]})
        if p.returncode:
            sys.exit(failure(p, f"OpenBLAS probe with OPENBLAS_CORETYPE={d['set']}"))
        got = json.loads(p.stdout)["core"]
        if got != d["expect"]:
            print(f"  warning: with OPENBLAS_CORETYPE={d['set']} OpenBLAS runs "
                  f"core {got}")
            d["expect"] = got
    return d


# Probes of bench/isa_rates.cpp and the /proc/cpuinfo flags each needs.
ISA_PROBES = [("fma256", {"avx2", "fma"}, "f32 FMA, AVX2 (ymm)"),
              ("fma512", {"avx512f"}, "f32 FMA, AVX-512 (zmm)"),
              ("dpbf16", {"avx512f", "avx512_bf16"},
               "bf16 dot product, AVX-512 BF16 (vdpbf16ps zmm)"),
              ("amx-bf16", {"amx_tile", "amx_bf16"},
               "bf16 tile product, AMX (tdpbf16ps)")]


def isa_peaks(a, flags):
    """Prints (and writes to isa_rates.json in the results folder) the peak
    multiply-add rate of each instruction set the CPU has, on one core: what
    each kernel path could reach at best (docs/Targets.md reads these)."""
    names = [n for n, need, _ in ISA_PROBES if need <= set(flags)]
    exe = os.path.join(a.bin, "isa_rates")
    if not names or not os.path.exists(exe):
        return
    p = run([exe, "--probes", ",".join(names)])
    if p.returncode:
        print(f"  isa_rates failed: {p.stderr.strip()}", flush=True)
        return
    r = json.loads(p.stdout)
    label = {n: l for n, _, l in ISA_PROBES}
    print("  peak rate per instruction set, one core (independent chains of "
          "one instruction; 2 flops per multiply-add):")
    for probe in r["probes"]:
        if "error" in probe:
            print(f"    {label[probe['name']]}: {probe['error']}")
        else:
            print(f"    {label[probe['name']]}: {probe['gflops']:.1f} GFLOP/s "
                  f"({probe['ns_per_instruction']:.3f} ns per instruction)")
    os.makedirs(a.results, exist_ok=True)
    with open(os.path.join(a.results, "isa_rates.json"), "w") as f:
        json.dump(r, f, indent=1)
    sys.stdout.flush()


def attn_target(a, host_isa):
    """Compiles and runs a tiny spec once with the target options: checks that
    attn-run takes them and reads the target it reports. Returns (cpu, isa,
    features)."""
    requested = bool(a.target_cpu or a.target_features)
    if requested:
        help_text = run([a.attn_run, "--help-hidden"]).stdout
        for opt, val in (("--target-cpu", a.target_cpu),
                         ("--target-features", a.target_features)):
            if val and opt not in help_text:
                sys.exit(f"attn-run ({a.attn_run}) has no {opt} option: it was "
                         f"built before the option existed; rebuild it")
    d = os.path.join(a.work, "target-probe")
    os.makedirs(d, exist_ok=True)
    spec = os.path.join(d, "probe.mlir")
    with open(spec, "w") as f:
        f.write(Shape("probe", 1, 1, 1, 16, 16, 16).spec())
    rep = os.path.join(d, "probe.json")
    p = run([a.attn_run, spec, "--reps=1", f"--report={rep}"] + a.target_args,
            env={"OMP_NUM_THREADS": "1"})
    if p.returncode or not os.path.exists(rep):
        sys.exit(failure(p, "attn-run on a 16x16 probe spec"
                         + (" with " + " ".join(a.target_args) if a.target_args else "")))
    tg = json.load(open(rep)).get("target")
    if isinstance(tg, dict) and tg.get("cpu") and not requested:
        # The host: its (long) feature list says nothing a reader needs.
        return ("host", str(tg.get("isa") or host_isa), "",
                f"attn-run compiles for the host, {tg['cpu']}")
    if isinstance(tg, dict) and tg.get("cpu"):
        feats = tg.get("features") or ""
        if isinstance(feats, list):
            feats = ",".join(feats)
        return (str(tg["cpu"]), str(tg.get("isa") or "?"), feats,
                "reported by attn-run")
    # attn-run without "target" in its report (built before it existed).
    if not requested:
        return "host", host_isa, "", "attn-run compiles for the host; ISA assumed"
    cpu = a.target_cpu or "host"
    isa = hostcpu.TARGET_ISA_GUESS.get(cpu, "?") if a.target_cpu else host_isa
    return (cpu, isa + (" (assumed from the name)" if isa != "?" else ""),
            a.target_features or "", "attn-run did not report its target")


def show(path):
    """A path relative to the repository when inside it."""
    rel = os.path.relpath(os.path.abspath(path), ROOT)
    return path if rel.startswith("..") else rel


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true",
                    help="small versions of the shapes, few repetitions")
    ap.add_argument("--threads", default="1,2", help="thread counts, e.g. 1,2")
    ap.add_argument("--shapes", default="",
                    help="comma-separated subset of: prefill, encoder, cross, "
                         "window, decode, decode_ragged, long, prefill_bf16, "
                         "encoder_bf16, prefill_f16, encoder_f16")
    ap.add_argument("--attn-run", required=True)
    ap.add_argument("--bin", required=True, help="folder of the built C++ helpers")
    ap.add_argument("--work", required=True, help="scratch folder for inputs/outputs")
    ap.add_argument("--results", default=None,
                    help="output folder (default bench/results, or "
                         "bench/results/<target> with --target-cpu/--target-features)")
    ap.add_argument("--target-cpu", default="",
                    help="compile our code for this LLVM CPU (e.g. znver3, haswell) "
                         "instead of the host: forwarded to attn-run as "
                         "--target-cpu=NAME; SDPA and OpenBLAS still run natively")
    ap.add_argument("--target-features", default="",
                    help="LLVM target features for our code, e.g. +avx2,-avx512f: "
                         "forwarded to attn-run as --target-features=...")
    ap.add_argument("--peers-isa", default="native", choices=["native", "avx2"],
                    help="avx2: run PyTorch SDPA, OpenBLAS and the SGEMM probe "
                         "with AVX2 kernels only (with --target-cpu=haswell, an "
                         "AVX-512 host then measures an AVX2 machine's ratios)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--omp-wait-policy", default="passive",
                    choices=["passive", "active", "default"],
                    help="OMP_WAIT_POLICY for every implementation (default "
                         "passive: idle OpenMP threads sleep instead of spinning; "
                         "'default' leaves it unset)")
    a = ap.parse_args()
    a.threads = harness.threads(a.threads)
    a.target_args = ([f"--target-cpu={a.target_cpu}"] if a.target_cpu else []) + \
        ([f"--target-features={a.target_features}"] if a.target_features else [])
    a.results = results_dir(a.results, a.target_cpu, a.target_features)
    shapes = all_shapes(a.quick)
    if a.shapes:
        want = a.shapes.split(",")
        unknown = set(want) - {s.name for s in shapes}
        if unknown:
            sys.exit(f"unknown shapes: {', '.join(sorted(unknown))}")
        shapes = [s for s in shapes if s.name in want]
    start = time.time()

    flags = hostcpu.read_flags()
    model = hostcpu.cpu_model()
    print(f"machine: {model}, {os.cpu_count()} logical CPUs, host ISA "
          f"{hostcpu.isa_details(flags)}, Python {platform.python_version()}, "
          f"load average {loadavg():.2f}")
    blas = probe_openblas(a, flags)
    if a.peers_isa == "avx2":
        # Emulate an AVX2-only host for the peers too, so that the ratios of
        # an AVX2 table compare code of one instruction set: OpenBLAS's
        # Haswell kernels, PyTorch's AVX2 kernels (ATen dispatch, oneDNN,
        # MKL limited to AVX2).
        if not ({"avx2", "fma"} <= flags):
            sys.exit("--peers-isa avx2 needs a CPU with AVX2 and FMA")
        blas["set"] = blas["expect"] = "Haswell"
        print("peers: limited to AVX2 (OPENBLAS_CORETYPE=Haswell, "
              "ATEN_CPU_CAPABILITY=avx2, ONEDNN_MAX_CPU_ISA=AVX2, "
              "MKL_ENABLE_INSTRUCTIONS=AVX2)")
    tcpu, tisa, tfeat, how = attn_target(a, hostcpu.isa_label(flags))
    print(f"attn code: compiled for target {tcpu}"
          + (f" with features {tfeat}" if tfeat else "")
          + f", ISA {tisa} ({how})"
          + ("" if tcpu == "host" and not tfeat else
             f"; attn-run gets {' '.join(a.target_args)}"))
    machine = {"cpu_model": model, "host_isa": hostcpu.isa_label(flags),
               "openblas_core": blas["expect"], "openblas_coretype": blas["set"],
               "target_cpu": tcpu, "target_isa": tisa, "target_features": tfeat,
               "peers": "native" if a.peers_isa == "native" else "AVX2 only"}
    if a.no_torch:
        print("PyTorch SDPA: not run (--no-torch)")
    else:
        try:
            import torch
            print(f"torch {torch.__version__} (CPU capability "
                  f"{torch.backends.cpu.get_cpu_capability()}), native")
        except ImportError:
            a.no_torch = True
            print("torch not importable: SDPA skipped")
    print("PyTorch SDPA and the OpenBLAS baseline (and the SGEMM rate) run "
          + ("natively, whatever the target of our code"
             if a.peers_isa == "native" else "with AVX2 kernels only")
          + "; OPENBLAS_NUM_THREADS = "
          "OMP_NUM_THREADS = the thread count; torch.set_num_threads(thread count)")
    print(f"OMP_WAIT_POLICY={a.omp_wait_policy} for every implementation "
          f"('default' = unset)")
    try:  # read-only: which commit the attn-run build started from
        head = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True).stdout.strip()
    except OSError:
        head = ""
    print(f"attn-run: {a.attn_run} (private copy made at the start; this "
          f"checkout's HEAD {head or 'unknown'})")
    print("tolerance vs the f64 reference (attn-run's --verify defaults), "
          "|x - ref| <= atol + rtol |ref|: "
          + ", ".join(f"{ty} atol {at} rtol {rt}" for ty, (at, rt) in TOL.items()))
    print(f"results: {show(a.results)}")

    b = Bench(a, machine)
    print("\n== Machine limits")
    isa_peaks(a, flags)
    b.machine_rates("start")
    for s in shapes:
        b.bench_shape(s)
    print("\n== Machine limits again (the best of start and end is used)")
    b.machine_rates("end")
    b.finish()
    b.targets(shapes)
    os.makedirs(a.results, exist_ok=True)
    b.write_csv(os.path.join(a.results, "results.csv"))
    b.chart(os.path.join(a.results, "chart.png"), shapes)
    print(f"\nwrote {show(os.path.join(a.results, 'results.csv'))} and "
          f"{show(os.path.join(a.results, 'chart.png'))}")
    print(f"total benchmark time {time.time() - start:.0f} s, load average at the end "
          f"{loadavg():.2f}")


if __name__ == "__main__":
    main()
