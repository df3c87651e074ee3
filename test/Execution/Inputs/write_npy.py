#!/usr/bin/env python3
"""Writes a small NumPy .npy file without NumPy (only `struct`).

Usage: write_npy.py PATH DTYPE SHAPE VALUES

  DTYPE   f4, f8, f2, i4, i8, u1 or b1 (little-endian '<f4' etc., '|b1')
  SHAPE   sizes joined by 'x' (1x1x3x2), or 'scalar' for a rank-0 array
  VALUES  comma-separated numbers (true/false or 1/0 for b1), or 'zeros';
          a single value is repeated to fill the shape; VALUE*N stands for
          N copies of VALUE (document ids: 0*100,1*200,2*212)

The header is the one NumPy writes for format version 1.0: the magic string,
the version, a little-endian uint16 header length, and the header dict padded
with spaces and a newline so that the data starts at a multiple of 64 bytes.
"""
import struct
import sys

FORMATS = {
    "f4": ("<f4", "<f"),
    "f8": ("<f8", "<d"),
    "f2": ("<f2", "<e"),
    "i4": ("<i4", "<i"),
    "i8": ("<i8", "<q"),
    "u1": ("|u1", "<B"),
    "b1": ("|b1", "<?"),
}


def main(argv):
    if len(argv) != 5:
        sys.exit(__doc__)
    path, dtype, shape_text, values_text = argv[1:]
    descr, fmt = FORMATS[dtype]
    shape = [] if shape_text == "scalar" else [int(s) for s in shape_text.split("x")]
    count = 1
    for s in shape:
        count *= s
    if values_text == "zeros":
        values = [0] * count
    else:
        values = []
        for token in values_text.split(","):
            value, _, repeat = token.partition("*")
            values += [value] * (int(repeat) if repeat else 1)
        if len(values) == 1:
            values = values * count
    if len(values) != count:
        sys.exit("write_npy.py: %d values for shape %s" % (len(values), shape_text))

    def convert(v):
        if dtype == "b1":
            return v.strip().lower() in ("1", "true")
        if dtype[0] in "iu":
            return int(v)
        return float(v)

    data = b"".join(struct.pack(fmt, convert(v)) for v in values)
    shape_repr = "(" + "".join("%d, " % s for s in shape)
    shape_repr = (shape_repr[:-2] + ",)") if len(shape) == 1 else (shape_repr.rstrip(", ") + ")")
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape_repr)
    # magic (6) + version (2) + length (2) + header + '\n', padded to 64.
    total = 10 + len(header) + 1
    header += " " * ((64 - total % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00")
        f.write(struct.pack("<H", len(header)))
        f.write(header.encode("latin1"))
        f.write(data)


if __name__ == "__main__":
    main(sys.argv)
