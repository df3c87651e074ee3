#!/usr/bin/env python3
"""Compiles attn specs to PTX for NVIDIA chips and checks them with ptxas.

For every spec and chip: attn-compile --emit=ptx, then `ptxas -v`; prints
one line with the kernel's registers, spills, stack frame and shared memory
(static from ptxas plus the dynamic amount the launch requests), and fails
(exit 1) on a ptxas error or warning (the warnings that say wgmma was
serialized or setmaxnreg ignored among them), any spill or stack frame,
unresolved externals, a missing tensor-core instruction, or shared memory
over the chip's budget.
Specs the GPU form does not take print NOT-GPU with the compiler's reason.
With --allow-spills, spills and stack frames are listed as SPILLS, not
failures (the sweep's heaviest configurations).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from spec_flags import spec_flags  # noqa: E402

# Opt-in shared memory per block (bytes).
SMEM_BUDGET = {"sm_80": 163 * 1024, "sm_86": 99 * 1024, "sm_89": 99 * 1024,
               "sm_90": 227 * 1024, "sm_90a": 227 * 1024}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--attn-compile", required=True)
    ap.add_argument("--ptxas", required=True)
    ap.add_argument("--chips", default="sm_80,sm_90a")
    ap.add_argument("--short-names", action="store_true")
    ap.add_argument("--allow-spills", action="store_true",
                    help="report spills and stack as SPILLS instead of FAIL")
    ap.add_argument("--flags", default="",
                    help="attn-compile flags for every spec (after the "
                         "spec's own)")
    ap.add_argument("specs", nargs="+")
    args = ap.parse_args()
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for spec in args.specs:
            name = os.path.relpath(spec, os.path.dirname(os.path.dirname(spec)))
            if args.short_names:
                name = os.path.basename(spec)
            for chip in args.chips.split(","):
                ptx = os.path.join(tmp, "k.ptx")
                flags = spec_flags(spec, args.flags, chip)
                r = subprocess.run([args.attn_compile, spec, "--gpu-chip=" + chip,
                                    "--emit=ptx", "-o", ptx] + flags,
                                   capture_output=True, text=True)
                if r.returncode != 0:
                    m = re.search(r"cannot be lowered to the GPU: (.*)", r.stderr)
                    if m:
                        print(f"NOT-GPU {name}: {m.group(1)}")
                        break
                    print(f"FAIL {name} {chip}: attn-compile: {r.stderr.strip()}")
                    failures += 1
                    continue
                mlir = subprocess.run([args.attn_compile, spec, "--gpu-chip=" + chip,
                                       "--gpu-format=isa", "--emit=mlir", "-o", "-"]
                                      + flags,
                                      capture_output=True, text=True).stdout
                dyn = [int(x) for x in re.findall(
                    r"attn.gpu_shared_memory = (\d+)", mlir)]
                text = open(ptx).read()
                problems = []
                if ".extern .func" in text:
                    problems.append("unresolved external function")
                # Tensor cores: mma.sync fed by ldmatrix, or (sm_90a,
                # --gpu-wgmma, both GEMMs) wgmma alone.
                mma = (("wgmma.mma_async",) if "wgmma.mma_async" in text else
                       ("mma.sync.aligned.m16n8k16", "ldmatrix.sync"))
                for needed in mma + ("ex2.approx",):
                    if needed not in text:
                        problems.append("no " + needed)
                r = subprocess.run([args.ptxas, "-v", "-arch=" + chip, ptx, "-o",
                                    os.path.join(tmp, "k.cubin")],
                                   capture_output=True, text=True)
                info = r.stderr + r.stdout
                if r.returncode != 0:
                    print(f"FAIL {name} {chip}: ptxas: {info.strip()}")
                    failures += 1
                    continue
                # Any ptxas warning fails: among them the ones that mean
                # wgmma was serialized (C7515, C7510) or setmaxnreg ignored
                # (C7508), which cost speed without an error.
                for w in re.findall(r"ptxas (?:warning|W)[^\n]*", info):
                    problems.append("ptxas " + w.split(":", 1)[-1].strip())
                static = 0
                kernels = re.split(r"ptxas info\s*: Compiling entry function ", info)[1:]
                if not kernels:
                    problems.append("no kernel in the ptxas report")
                for block in kernels:
                    kname = block.split("'")[1]
                    regs = int(re.search(r"Used (\d+) registers", block).group(1))
                    m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, "
                                  r"(\d+) bytes spill loads", block)
                    stack, spill_st, spill_ld = (int(x) for x in m.groups())
                    st = re.search(r"(\d+) bytes smem", block)
                    smem = (int(st.group(1)) if st else 0) + max(dyn or [0])
                    mine = list(problems)
                    if stack or spill_st or spill_ld:
                        mine.append("spills or stack")
                    if smem > SMEM_BUDGET.get(chip, 48 * 1024):
                        mine.append("shared memory over budget")
                    hard = [p for p in mine if p != "spills or stack"]
                    if mine and not hard and args.allow_spills:
                        status = "SPILLS"
                    else:
                        status = "FAIL" if mine else "OK"
                        failures += bool(mine)
                    print(f"{status} {name} {chip} {kname}: registers={regs} "
                          f"spill_stores={spill_st} spill_loads={spill_ld} stack={stack} "
                          f"smem={smem}" + "".join(" [" + p + "]" for p in mine))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
