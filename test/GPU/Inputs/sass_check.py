#!/usr/bin/env python3
"""Compiles attn specs to cubins and checks their machine code (SASS).

For every spec and chip: attn-compile --emit=cubin (with the spec's own
"// attn-compile flags:" line and --flags), then nvdisasm; prints one line
per kernel with its count of tensor-core instructions (HMMA: mma.sync;
HGMMA: wgmma) and of local-memory accesses (STL/LDL: spills or stack
arrays). Fails (exit 1) when a kernel that computes attention or a GEMM
(names ending in _attention, _attention_split[_per_call], _proj_*) has no
tensor-core instruction of the kind --expect names for its chip, or when
any kernel touches local memory.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from spec_flags import spec_flags  # noqa: E402

TENSOR_KERNEL = re.compile(r"_(attention(_split)?(_per_call)?|proj_\w+)$")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--attn-compile", required=True)
    ap.add_argument("--nvdisasm", required=True)
    ap.add_argument("--chips", default="sm_80,sm_90a")
    ap.add_argument("--expect", default="sm_80=HMMA,sm_90a=HMMA",
                    help="chip=INSTRUCTION the tensor kernels must contain")
    ap.add_argument("--flags", default="")
    ap.add_argument("specs", nargs="+")
    args = ap.parse_args()
    expect = dict(kv.split("=") for kv in args.expect.split(","))
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for spec in args.specs:
            name = os.path.relpath(spec, os.path.dirname(os.path.dirname(spec)))
            for chip in args.chips.split(","):
                flags = spec_flags(spec, args.flags, chip)
                cubin = os.path.join(tmp, "k.cubin")
                r = subprocess.run([args.attn_compile, spec, "--gpu-chip=" + chip,
                                    "--emit=cubin", "-o", cubin] + flags,
                                   capture_output=True, text=True)
                if r.returncode != 0:
                    m = re.search(r"cannot be lowered to the GPU: (.*)", r.stderr)
                    if m:
                        print(f"NOT-GPU {name}: {m.group(1)}")
                        break
                    print(f"FAIL {name} {chip}: attn-compile: {r.stderr.strip()}")
                    failures += 1
                    continue
                r = subprocess.run([args.nvdisasm, cubin], capture_output=True,
                                   text=True)
                if r.returncode != 0:
                    print(f"FAIL {name} {chip}: nvdisasm: {r.stderr.strip()}")
                    failures += 1
                    continue
                sections = re.split(r"^//-+ \.text\.(\S+) -+$", r.stdout,
                                    flags=re.M)
                kernels = list(zip(sections[1::2], sections[2::2]))
                if not kernels:
                    print(f"FAIL {name} {chip}: no kernel in the cubin")
                    failures += 1
                for kname, text in kernels:
                    count = {op: len(re.findall(r"\b%s\b" % op, text))
                             for op in ("HMMA", "HGMMA", "STL", "LDL")}
                    problems = []
                    want = expect.get(chip)
                    if TENSOR_KERNEL.search(kname) and want and not count[want]:
                        problems.append("no " + want)
                    if count["STL"] or count["LDL"]:
                        problems.append("local memory")
                    failures += bool(problems)
                    print(f"{'FAIL' if problems else 'OK'} {name} {chip} {kname}: "
                          + " ".join(f"{k}={v}" for k, v in count.items())
                          + "".join(" [" + p + "]" for p in problems))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
