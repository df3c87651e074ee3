#!/usr/bin/env python3
"""Summarizes the innermost loops of x86 assembly printed by llc.

For every innermost loop (llc's "This Inner Loop Header" comment up to the
branch back to its label) with at least --min-fma vector FMAs, prints one
line:

    loop: fma=N spills=S width=ymm

(S counts llc's "Spill" and "Reload" annotations inside the loop; width is
the widest vector register the loop's FMAs use), then one last line
`zmm: yes|no` for the whole file. The lit tests FileCheck these lines, so
"the microkernel loop keeps its accumulators in registers" is checked on the
real instruction stream, whatever the label numbering.
"""
import argparse
import re
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--min-fma", type=int, default=4)
    args = parser.parse_args()
    lines = sys.stdin.read().split("\n")
    label_re = re.compile(r"^(\.LBB\d+_\d+):")
    for idx, line in enumerate(lines):
        if "Inner Loop Header" not in line:
            continue
        k = idx
        while k > 0 and not label_re.match(lines[k]):
            k -= 1
        label = label_re.match(lines[k]).group(1)
        back = re.compile(r"\bj\w+\s+" + re.escape(label) + r"\b")
        j = idx + 1
        while j < len(lines) and not back.search(lines[j]):
            j += 1
        body = lines[k : j + 1]
        fmas = [x for x in body if re.search(r"\bvfmadd\w*ps\b", x)]
        if len(fmas) < args.min_fma:
            continue
        spills = sum(1 for x in body if "Spill" in x or "Reload" in x)
        width = "xmm"
        if any("%zmm" in x for x in fmas):
            width = "zmm"
        elif any("%ymm" in x for x in fmas):
            width = "ymm"
        print(f"loop: fma={len(fmas)} spills={spills} width={width}")
    print("zmm: " + ("yes" if any("%zmm" in x for x in lines) else "no"))


if __name__ == "__main__":
    main()
