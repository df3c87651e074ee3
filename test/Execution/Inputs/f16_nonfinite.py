#!/usr/bin/env python3
"""Writes q, k, v (f16, [1, 1, N, 64]) and kv_len .npy files for
amx-f16-split.mlir: seeded uniform values in [-1, 1] with one kind of value
that is not finite placed where a split of f16 into bf16 parts would turn
it into a NaN (inf * 0) if it were not sent to the f32 kernels.

Usage: f16_nonfinite.py PREFIX CASE, CASE one of
  base      no value that is not finite
  inf_k     k[3, 0] = +inf and q[:, 0] < 0: key 3's logits are -inf
  inf_q     q[7, 2] = -inf and k[:, 2] > 0: row 7's logits are all -inf
  inf_v     v[5, 1] = +inf: column 1 of the output is +inf
  nan_tail  kv_len = 200; k NaN and v inf at keys 200 and on
"""
import random
import struct
import sys

NQ, NK, D = 64, 256, 64


def write(path, fmt, descr, shape, values):
    data = b"".join(struct.pack(fmt, v) for v in values)
    shape_repr = "(" + ", ".join(str(s) for s in shape) + (",)" if len(shape) == 1 else ")")
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape_repr)
    pad = 64 - (10 + len(header) + 1) % 64
    header = header + " " * pad + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + data)


def main(prefix, case):
    rng = random.Random(20261207)
    uni = lambda: rng.uniform(-1.0, 1.0)
    q = [[uni() for _ in range(D)] for _ in range(NQ)]
    k = [[uni() for _ in range(D)] for _ in range(NK)]
    v = [[uni() for _ in range(D)] for _ in range(NK)]
    kv_len = NK
    inf, nan = float("inf"), float("nan")
    if case == "inf_k":
        k[3][0] = inf
        for row in q:
            row[0] = -rng.uniform(0.1, 1.0)
    elif case == "inf_q":
        q[7][2] = -inf
        for row in k:
            row[2] = rng.uniform(0.1, 1.0)
    elif case == "inf_v":
        v[5][1] = inf
    elif case == "nan_tail":
        kv_len = 200
        for j in range(kv_len, NK):
            k[j] = [nan] * D
            v[j] = [inf] * D
    elif case != "base":
        sys.exit(__doc__)
    flat = lambda m: [x for row in m for x in row]
    write(prefix + ".q.npy", "<e", "<f2", [1, 1, NQ, D], flat(q))
    write(prefix + ".k.npy", "<e", "<f2", [1, 1, NK, D], flat(k))
    write(prefix + ".v.npy", "<e", "<f2", [1, 1, NK, D], flat(v))
    write(prefix + ".len.npy", "<i", "<i4", [1], [kv_len])


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
