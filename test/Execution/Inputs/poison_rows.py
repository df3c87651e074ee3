#!/usr/bin/env python3
"""Overwrites rows of a 4-D float32 .npy file with a value that is not finite,
without NumPy (only `struct`).

Usage: poison_rows.py IN OUT VALUE RANGES

  IN, OUT  .npy files of dtype '<f4' or '<f2' and shape [A, H, N, D] (IN as
           attn-run's --save-input writes it; OUT may be IN)
  VALUE    nan, inf or -inf
  RANGES   comma-separated A:LO-HI: rows LO to HI-1 (axis 2) of every head
           (axis 1) at index A of axis 0 (a batch, or a page of a paged
           cache); A may be a range A0-A1 (indices A0 to A1-1)

Used to check that keys no query row reads (past kv_len, before a window,
unreferenced pages) contribute nothing, even when their K or V rows hold NaN
or infinities.
"""
import ast
import struct
import sys


def main(argv):
    if len(argv) != 5:
        sys.exit(__doc__)
    src, dst, value_text, ranges_text = argv[1:]
    value = {"nan": float("nan"), "inf": float("inf"), "-inf": float("-inf")}[value_text]
    with open(src, "rb") as f:
        blob = f.read()
    if blob[:6] != b"\x93NUMPY":
        sys.exit("%s: not a .npy file" % src)
    major = blob[6]
    if major == 1:
        (hlen,) = struct.unpack("<H", blob[8:10])
        start = 10
    else:
        (hlen,) = struct.unpack("<I", blob[8:12])
        start = 12
    header = ast.literal_eval(blob[start:start + hlen].decode("latin1"))
    code = {"<f4": "f", "<f2": "e"}.get(header["descr"])
    if code is None or header["fortran_order"] or len(header["shape"]) != 4:
        sys.exit("%s: expected a C-ordered '<f4' or '<f2' array of rank 4, got %r" % (src, header))
    data_start = start + hlen
    shape = header["shape"]
    size = struct.calcsize("<" + code)
    values = list(struct.unpack("<%d%s" % (len(blob[data_start:]) // size, code), blob[data_start:]))
    _, heads, rows, width = shape
    for item in ranges_text.split(","):
        index, span = item.split(":")
        lo, hi = (int(s) for s in span.split("-"))
        first, _, last = index.partition("-")
        a0 = int(first)
        a1 = int(last) if last else a0 + 1
        if not (0 <= a0 < a1 <= shape[0] and 0 <= lo <= hi <= rows):
            sys.exit("range %s outside shape %r" % (item, shape))
        for a in range(a0, a1):
            for h in range(heads):
                base = ((a * heads + h) * rows) * width
                for r in range(lo, hi):
                    for c in range(width):
                        values[base + r * width + c] = value
    with open(dst, "wb") as f:
        f.write(blob[:data_start])
        f.write(struct.pack("<%d%s" % (len(values), code), *values))


if __name__ == "__main__":
    main(sys.argv)
