#!/usr/bin/env python3
"""Writes inputs of attn.projected_attention whose projections are exact in
bf16 and f16 (only `struct`, like test/Execution/Inputs/write_npy.py), so
that the GPU form's GEMMs are checked to the last bit and its result to the
attention kernel's own tolerance:

    projection_inputs.py DIR DTYPE B NQ NK DM HQ HKV DQK DV   (DTYPE f4 or f2)

x and kv_source: values in {-1, -0.5, 0, 0.5, 1}; wq, wk, wv: values in
{-0.25, 0, 0.25} (every sum of DM <= 64 products is a multiple of 1/8 of
magnitude at most 16: exact in bf16's 8 bits); wo: the identity (DM =
HQ * DV), so the result is the attention's output with the heads merged.
Files: DIR/x.npy, DIR/kv.npy, DIR/wq.npy, DIR/wk.npy, DIR/wv.npy, DIR/wo.npy
(float32 or float16).
"""
import os
import struct
import sys


DTYPE = "f4"


def write(path, shape, values):
    header = "{'descr': '<%s', 'fortran_order': False, 'shape': (%s), }" % (
        DTYPE,
        "".join(f"{s}, " for s in shape) if len(shape) != 1
        else f"{shape[0]},")
    pad = 64 - (10 + len(header) + 1) % 64
    header += " " * pad + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
        f.write(header.encode("latin1"))
        code = "f" if DTYPE == "f4" else "e"
        f.write(struct.pack(f"<{len(values)}{code}", *values))


def lcg(seed):
    state = seed
    while True:
        state = (state * 6364136223846793005 + 1442695040888963407) % 2**64
        yield state >> 33


def main(argv):
    global DTYPE
    if len(argv) != 11 or argv[2] not in ("f4", "f2"):
        sys.exit(__doc__)
    out, DTYPE = argv[1], argv[2]
    b, nq, nk, dm, hq, hkv, dqk, dv = (int(x) for x in argv[3:])
    if dm != hq * dv:
        sys.exit("DM must be HQ * DV (wo is the identity)")
    os.makedirs(out, exist_ok=True)
    r = lcg(7)

    def pick(choices, count):
        return [choices[next(r) % len(choices)] for _ in range(count)]
    x_vals = [-1.0, -0.5, 0.0, 0.5, 1.0]
    w_vals = [-0.25, 0.0, 0.25]
    write(os.path.join(out, "x.npy"), [b, nq, dm], pick(x_vals, b * nq * dm))
    write(os.path.join(out, "kv.npy"), [b, nk, dm], pick(x_vals, b * nk * dm))
    write(os.path.join(out, "wq.npy"), [dm, hq * dqk],
          pick(w_vals, dm * hq * dqk))
    write(os.path.join(out, "wk.npy"), [dm, hkv * dqk],
          pick(w_vals, dm * hkv * dqk))
    write(os.path.join(out, "wv.npy"), [dm, hkv * dv],
          pick(w_vals, dm * hkv * dv))
    write(os.path.join(out, "wo.npy"), [hq * dv, dm],
          [1.0 if i == j else 0.0 for i in range(hq * dv) for j in range(dm)])


if __name__ == "__main__":
    main(sys.argv)
