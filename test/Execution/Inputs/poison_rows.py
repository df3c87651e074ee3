#!/usr/bin/env python3
"""Overwrites rows of a 4-D f32 or f16 .npy file with a value that is not
finite, or checks that files hold finite values only; without NumPy (only
`struct`).

Usage: poison_rows.py IN OUT VALUE RANGES
       poison_rows.py --check-finite FILE...

  IN, OUT  .npy files of dtype '<f4' or '<f2' and shape [A, H, N, D] (IN as
           attn-run's --save-input writes it; OUT may be IN)
  VALUE    nan, inf or -inf
  RANGES   comma-separated A:LO-HI: rows LO to HI-1 (axis 2) of every head
           (axis 1; the [B, H, N, D] layout is assumed) at index A of axis 0
           (a batch, or a page of a paged cache); A may be a range A0-A1
           (indices A0 to A1-1)
  --check-finite  exits 1, naming the file, if a value of any FILE (any rank,
           '<f4' or '<f2', as attn-run's --output writes them) is not finite

Used to check that keys no query row reads (past kv_len, before a window,
unreferenced pages) contribute nothing, even when their K or V rows hold NaN
or infinities; and, by the outputs being finite, that the rows overwritten
were indeed never read.
"""
import ast
import math
import struct
import sys


def read_npy(path):
    """(bytes before the data, header dict, struct code, values)."""
    with open(path, "rb") as f:
        blob = f.read()
    if blob[:6] != b"\x93NUMPY":
        sys.exit("%s: not a .npy file" % path)
    if blob[6] == 1:
        (hlen,) = struct.unpack("<H", blob[8:10])
        start = 10
    else:
        (hlen,) = struct.unpack("<I", blob[8:12])
        start = 12
    header = ast.literal_eval(blob[start:start + hlen].decode("latin1"))
    code = {"<f4": "f", "<f2": "e"}.get(header["descr"])
    if code is None or header["fortran_order"]:
        sys.exit("%s: expected a C-ordered '<f4' or '<f2' array, got %r" % (path, header))
    data = blob[start + hlen:]
    count = len(data) // struct.calcsize("<" + code)
    values = list(struct.unpack("<%d%s" % (count, code), data))
    return blob[:start + hlen], header, code, values


def check_finite(paths):
    for path in paths:
        _, _, _, values = read_npy(path)
        bad = sum(1 for v in values if not math.isfinite(v))
        if bad:
            sys.exit("%s: %d values are not finite" % (path, bad))


def poison(src, dst, value_text, ranges_text):
    values_of = {"nan": float("nan"), "inf": float("inf"), "-inf": float("-inf")}
    if value_text not in values_of:
        sys.exit(__doc__)
    value = values_of[value_text]
    prefix, header, code, values = read_npy(src)
    shape = header["shape"]
    if len(shape) != 4:
        sys.exit("%s: expected an array of rank 4, got shape %r" % (src, shape))
    _, heads, rows, width = shape
    for item in ranges_text.split(","):
        try:
            index, span = item.split(":")
            lo, hi = (int(s) for s in span.split("-"))
            first, _, last = index.partition("-")
            a0 = int(first)
            a1 = int(last) if last else a0 + 1
        except ValueError:
            sys.exit("bad range %r\n%s" % (item, __doc__))
        if not (0 <= a0 < a1 <= shape[0] and 0 <= lo <= hi <= rows):
            sys.exit("range %s outside shape %r" % (item, shape))
        for a in range(a0, a1):
            for h in range(heads):
                base = ((a * heads + h) * rows) * width
                for r in range(lo, hi):
                    for c in range(width):
                        values[base + r * width + c] = value
    with open(dst, "wb") as f:
        f.write(prefix)
        f.write(struct.pack("<%d%s" % (len(values), code), *values))


def main(argv):
    if len(argv) >= 3 and argv[1] == "--check-finite":
        check_finite(argv[2:])
    elif len(argv) == 5:
        poison(*argv[1:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
