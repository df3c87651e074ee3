"""Loads a kernel library and prints where libattn_runtime came from.

    load_and_show.py LIB            ctypes alone
    load_and_show.py --attn LIB     through the attn package (load_library),
                                    then calls its kernel `small` once
"""
import ctypes
import sys


def runtime_path():
    with open("/proc/self/maps") as f:
        for line in f:
            if "libattn_runtime" in line:
                return line.split()[-1]
    return "not loaded"


def main(argv):
    if argv[1] == "--attn":
        import attn
        import numpy as np
        lib = attn.load_library(argv[2])
        print("libattn_runtime:", runtime_path())
        q = np.ones((1, 2, 4, 8), dtype=np.float32)
        out = lib["small"](q, q, q)
        ok = out.shape == (1, 2, 4, 8) and abs(float(out[0, 0, 0, 0]) - 1) < 1e-6
        print("small:", "ok" if ok else f"wrong ({out.shape})")
        return 0
    ctypes.CDLL(argv[1])
    print("libattn_runtime:", runtime_path())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
