#!/usr/bin/env python3
"""Prints bench/results/results.csv (or the CSV given) as the Markdown table of
docs/Benchmarks.md, after a line naming the machine and instruction sets of
the run (CSVs written before those columns existed have no such line), and
followed by the machine rates of the run.

    python3 bench/table.py [results.csv]

Standard library only, so it runs without the benchmark's virtual environment.
"""
import csv
import os
import sys


def fmt(value, spec, scale=1.0):
    if value in ("", None):
        return ""
    return format(float(value) * scale, spec)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        here, "results", "results.csv")
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    machine = [r for r in rows if r["shape"] == "machine"]
    rows = [r for r in rows if r["shape"] != "machine"]

    first = (machine or rows or [{}])[0]
    if first.get("cpu_model"):
        target = first["target_cpu"] + (
            f" `{first['target_features']}`" if first.get("target_features") else "")
        # CSVs written before the "peers" column say nothing of the peers.
        peers = {"native": "; PyTorch SDPA and OpenBLAS run natively",
                 "AVX2 only": "; PyTorch SDPA and OpenBLAS limited to AVX2"}
        print(f"Machine: {first['cpu_model']}; host ISA {first['host_isa']}; "
              f"OpenBLAS core {first['openblas_core']}; our code compiled for "
              f"{target} ({first['target_isa']})"
              f"{peers.get(first.get('peers') or '', '')}.")
        print()

    print("| shape | impl | thr | median ms | min–max ms | GFLOP/s | % SGEMM "
          "| SDPA / this | KV GB/s (% read bw) | extra MiB | compile s | load "
          "| check (max abs err) |")
    print("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|")
    for r in rows:
        if r["status"] == "skipped":
            print(f"| {r['shape']} | {r['impl']} | {r['threads']} "
                  f"| | | | | | | | | | skipped: {r['note']} |")
            continue
        kv = ""
        if r["kv_gbs"]:
            kv = f"{fmt(r['kv_gbs'], '.1f')} ({fmt(r['pct_read_bw'], '.0f')}%)"
        check = r["status"]
        if r["max_abs_err"]:
            check += f" ({float(r['max_abs_err']):.1e})"
        cells = [
            r["shape"], r["impl"], r["threads"],
            fmt(r["median_s"], ".1f", 1e3),
            f"{fmt(r['min_s'], '.1f', 1e3)}–{fmt(r['max_s'], '.1f', 1e3)}",
            fmt(r["gflops"], ".1f"),
            (fmt(r["pct_sgemm"], ".0f") + "%") if r["pct_sgemm"] else "",
            (fmt(r["sdpa_over"], ".2f") + "x") if r["sdpa_over"] else "",
            kv,
            fmt(r["extra_bytes"], ".2f", 1.0 / (1 << 20)),
            fmt(r["compile_s"], ".3f"),
            fmt(r["loadavg"], ".1f"),
            check,
        ]
        print("| " + " | ".join(cells) + " |")
    print()
    for r in machine:
        value = r["gflops"] or r["kv_gbs"]
        unit = "GFLOP/s" if r["gflops"] else "GB/s"
        print(f"- {r['impl']}, {r['threads']} thread(s): {value} {unit} "
              f"({r['note']})")


if __name__ == "__main__":
    main()
