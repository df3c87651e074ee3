#!/usr/bin/env python3
"""Summarizes the innermost loops of x86 or AArch64 assembly printed by llc.

For every innermost loop with at least --min-fma vector FMAs, prints one
line:

    loop: fma=N spills=S width=ymm dot=D

(D counts AVX-512 BF16 dot products, vdpbf16ps, which count as FMAs for
--min-fma; S counts llc's "Spill" and "Reload" annotations inside the loop;
width is the widest vector register the loop's FMAs and dot products use:
xmm, ymm or zmm on x86; q for NEON's 128-bit v registers, sve for SVE's z
registers on AArch64, whose FMAs are fmla), then one last line
`zmm: yes|no` for the whole file. The lit tests FileCheck
these lines, so "the microkernel loop keeps its accumulators in registers" is
checked on the real instruction stream, whatever the label numbering.

A loop is the blocks llc's comments assign to it: its header (".LBBf_n:"
followed by "This Inner Loop Header") and every block marked "in Loop:
Header=BBf_n", wherever the block placement put them (a rotated loop's latch
may sit before the header and fall through into it).
"""
import argparse
import re
import sys

BLOCK_RE = re.compile(r"^(?:\.L(BB\d+_\d+)|(?:#|//) %bb\.\d+):")
IN_LOOP_RE = re.compile(r"in Loop: Header=(BB\d+_\d+)")


def blocks(lines):
    """Yields (label or None, lines) for every basic block."""
    name, body = None, []
    for line in lines:
        m = BLOCK_RE.match(line)
        if m:
            if body:
                yield name, body
            name, body = m.group(1), []
        body.append(line)
    if body:
        yield name, body


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--min-fma", type=int, default=4)
    args = parser.parse_args()
    lines = sys.stdin.read().split("\n")
    headers = []  # innermost loop headers, in order
    loops = {}  # header -> lines of its blocks
    for name, body in blocks(lines):
        text = "\n".join(body[:8])
        if name and "This Inner Loop Header" in text:
            headers.append(name)
            loops.setdefault(name, []).extend(body)
            continue
        m = IN_LOOP_RE.search(text)
        if m:
            loops.setdefault(m.group(1), []).extend(body)
    for h in headers:
        body = loops[h]
        fmas = [x for x in body
                if re.search(r"\bvfmadd\w*ps\b|^\s+fmla\s", x)]
        dots = [x for x in body if re.search(r"\bvdpbf16ps\b", x)]
        if len(fmas) + len(dots) < args.min_fma:
            continue
        spills = sum(1 for x in body if "Spill" in x or "Reload" in x)
        width = "xmm"
        if any(re.search(r"\bz\d+\.", x) for x in fmas):
            width = "sve"
        elif any(re.search(r"\bv\d+\.", x) for x in fmas):
            width = "q"
        elif any("%zmm" in x for x in fmas + dots):
            width = "zmm"
        elif any("%ymm" in x for x in fmas + dots):
            width = "ymm"
        print(f"loop: fma={len(fmas)} spills={spills} width={width} "
              f"dot={len(dots)}")
    print("zmm: " + ("yes" if any("%zmm" in x for x in lines) else "no"))


if __name__ == "__main__":
    main()
