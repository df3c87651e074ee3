#!/usr/bin/env python3
"""Writes the seed corpora of the fuzzers under fuzz/corpus/<target>/.

  fuzz/make_corpus.py            (rewrites fuzz/corpus/{parse,builder,diff,npy})

parse:   the examples and every lit test input (test/**/*.mlir), split at
         `// -----` with comment lines dropped, one file per split.
builder: the problems of the examples and of the execution tests, encoded in
         fuzz/BuilderFuzzer.cpp's byte format (valid variants, plus a few
         that the verifier must reject).
diff:    the same problems at sizes small enough to run in milliseconds, in
         fuzz/DifferentialFuzzer.cpp's byte format, each in every form.
npy:     .npy files of every dtype and a few malformed ones.
abi:     every form and kernel of fuzz/abi-kernels.mlir with conforming
         tensors, and a few mutated ones, in fuzz/AbiFuzzer.cpp's byte format.

The byte formats are read front to back, one decision per byte; the index
tables below mirror the tables at the top of each fuzzer's source. Keep them
in sync when a table changes (a stale seed is still a valid input, only a
different problem).
"""
import hashlib
import os
import re
import shutil
import struct
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "fuzz", "corpus")

MAX = 2**63 - 1


def write_set(name, items):
    d = os.path.join(OUT, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    seen = set()
    for label, data in items:
        if isinstance(data, str):
            data = data.encode()
        h = hashlib.sha1(data).hexdigest()[:10]
        if h in seen:
            continue
        seen.add(h)
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", label)[:60]
        with open(os.path.join(d, "%s-%s" % (safe, h)), "wb") as f:
            f.write(data)
    print("%s: %d seeds" % (name, len(seen)))


# ---------------------------------------------------------------- parse
def parse_seeds():
    files = [os.path.join(ROOT, "examples", f)
             for f in sorted(os.listdir(os.path.join(ROOT, "examples")))]
    for dirpath, _, names in sorted(os.walk(os.path.join(ROOT, "test"))):
        for n in sorted(names):
            if n.endswith(".mlir"):
                files.append(os.path.join(dirpath, n))
    items = []
    for path in files:
        if not path.endswith(".mlir"):
            continue
        text = open(path, encoding="utf-8").read()
        rel = os.path.relpath(path, ROOT).replace(os.sep, "_")
        for i, chunk in enumerate(re.split(r"^// -----\s*$", text, flags=re.M)):
            lines = [l for l in chunk.splitlines()
                     if l.strip() and not l.lstrip().startswith("//")]
            body = "\n".join(lines) + "\n"
            if body.strip() and len(body) <= 8192:
                items.append(("%s_%d" % (rel, i), body))
    return items


# ---------------------------------------------------------------- builder
B_SIZES = [1, 2, 3, 4, 5, 8, 16, 0, 7, 64, 128, 2**31, 12, 32, 13, MAX, 2**62,
           2**32 + 1, 40, 256]
B_GROUPS = [1, 2, 3, 4, 8, 1, 1, 2]
B_HEADS = [1, 2, 4, 8, 0, -1, 3, MAX]
B_WINDOWS = [None, 0, 1, 5, 64, -1, -2**63, MAX, None, 32, 2, 2**40]
B_SCALES = [None, 1.0, 0.5, 1000.0, 1e30, -2.0, 0.0, "inf", "nan", 1e-30,
            "denorm", "-inf", 1e300, None, None, 0.125]
FLOAT = {"f32": 0, "f16": 1, "bf16": 2, "f64": 3, "i32": 4}


def builder_seed(kind="attention", elt="f32", bnhd=False, B=1, Hkv=1, R=1,
                 Nq=1, Nk=1, Dqk=1, Dv=1, D=4, dyn=(), kv_len=None, mask=None,
                 bias=None, alibi=False, causal=None, window=None, scale=None,
                 softcap=None, sigmoid=False, lse=False, heads=None,
                 cross=False, bad=None, tiles=((0, 0, 4),) * 3):
    """dyn: logical size names stated as '?'; bad: (operand index, dim) made
    dynamic-or-wrong: here a wrong size (perturbed to 9)."""
    out = bytearray()
    out.append(3 if kind == "projected" else 0)
    out.append(FLOAT[elt])
    out.append(1 if bnhd else 0)
    for v in (B, Hkv):
        out.append(B_SIZES.index(v))
    out.append(B_GROUPS.index(R))
    for v in (Nq, Nk, Dqk, Dv, D):
        out.append(B_SIZES.index(v))
    if kind == "projected":
        hq, hkv = heads
        out.append(B_HEADS.index(hkv))
        out.append(1)  # Hq = R * Hkv
        out.append(B_GROUPS.index(hq // hkv))

    def typ(names, operand):
        out.append(2)  # keep the rank
        for i, n in enumerate(names):
            if bad == (operand, i):
                out.append(2 | (4 << 4))  # perturbed to kPerturbed[4] = 5
            elif n in dyn:
                out.append(1)
            else:
                out.append(0)

    if kind == "attention":
        order = (lambda b, h, n, d: [b, n, h, d]) if bnhd else \
                (lambda b, h, n, d: [b, h, n, d])
        typ(order("B", "Hq", "Nq", "Dqk"), 0)
        out.append(0)  # k has q's element type
        typ(order("B", "Hkv", "Nk", "Dqk"), 1)
        typ(order("B", "Hkv", "Nk", "Dv"), 2)
    else:
        out.append(1 if cross else 0)
        typ(["B", "Nq", "D"], 0)
        if cross:
            typ(["B", "Nk", "D"], 1)
        for w in range(4):
            typ(["D", "W"], 2 + w)
    bits = 0
    bits |= 1 if kv_len else 0
    bits |= 2 if mask else 0
    bits |= 4 if bias else 0
    bits |= 8 if alibi else 0
    bits |= 16 if causal else 0
    bits |= 32 if window else 0
    bits |= 64 if (scale is not None or softcap is not None) else 0
    bits |= 128 if sigmoid else 0
    out.append(bits)
    if kv_len:
        out.append({32: 0, 64: 1}[kv_len])
        out.append(0)
        typ(["B"], 10)
    if mask:
        out.append(mask)  # rank
        out.extend([1] * mask)  # no broadcasting
        out.append(0)  # i1
        typ(["B", "Hq", "Nq", "Nk"][4 - mask:], 11)
    if bias:
        out.append(bias)
        out.extend([1] * bias)
        out.append(FLOAT[elt])
        typ(["B", "Hq", "Nq", "Nk"][4 - bias:], 12)
    if alibi:
        out.append(0)
        typ(["Hq"], 13)
    if causal:
        out.append(1 if causal == "bottom_right" else 0)
    if window:
        out.append(B_WINDOWS.index(window[0]))
        out.append(B_WINDOWS.index(window[1]))
    if scale is not None or softcap is not None:
        out.append(B_SCALES.index(scale))
        out.append(B_SCALES.index(softcap))
    out.append(1 if lse else 0)
    tile_table = [0, 1, 2, 3, 8, 16, 64, 0]
    split_table = [4, 1, 2, 3, 7, 64, -1, 4]
    for tq, tk, s in tiles:
        out += bytes([tile_table.index(tq), tile_table.index(tk),
                      split_table.index(s)])
    return bytes(out)


EXAMPLES = {
    # examples/*.mlir
    "gqa_causal": dict(B=2, Hkv=2, R=4, Nq=5, Nk=5, Dqk=64, Dv=64,
                       causal="top_left", lse=True),
    "cross_attention": dict(B=2, Hkv=4, R=1, Nq=12, Nk=40, Dqk=32, Dv=16,
                            kv_len=32),
    "decode_bottom_right": dict(B=2, Hkv=2, R=4, Nq=1, Nk=256, Dqk=64, Dv=64,
                                kv_len=32, causal="bottom_right", lse=True),
    "sliding_window_alibi": dict(B=1, Hkv=8, R=1, Nq=128, Nk=128, Dqk=32,
                                 Dv=32, alibi=True, causal="top_left",
                                 window=(32, None)),
}


def builder_seeds():
    items = []
    for name, kw in EXAMPLES.items():
        items.append((name, builder_seed(**kw)))
        items.append((name + "_bnhd", builder_seed(bnhd=True, **kw)))
        items.append((name + "_f16", builder_seed(elt="f16", **kw)))
        items.append((name + "_dynamic", builder_seed(
            dyn=("B", "Hq", "Hkv", "Nq", "Nk", "Dqk", "Dv"), **kw)))
        items.append((name + "_tiles", builder_seed(
            tiles=((0, 0, 4), (1, 3, 4), (2, 8, 3)), **kw)))
        items.append((name + "_bad_k", builder_seed(bad=(1, 2), **kw)))
    items.append(("projected_self_attention", builder_seed(
        kind="projected", B=2, Nq=16, Nk=16, Dqk=16, Dv=16, D=64,
        heads=(4, 2), Hkv=2, causal="top_left")))
    items.append(("projected_cross", builder_seed(
        kind="projected", B=2, Nq=5, Nk=12, Dqk=8, Dv=4, D=16, heads=(2, 1),
        Hkv=1, cross=True, kv_len=64, mask=2, bias=4)))
    # test/Execution/*.mlir problems.
    items.append(("kv_len", builder_seed(B=3, Nq=2, Nk=3, Dqk=1, Dv=1,
                                         kv_len=32, lse=True)))
    items.append(("mask_bias", builder_seed(B=2, Hkv=2, R=2, Nq=4, Nk=5,
                                            Dqk=8, Dv=8, mask=4, bias=2)))
    items.append(("softcap_sigmoid", builder_seed(Nq=3, Nk=7, Dqk=4, Dv=4,
                                                  softcap=0.5, scale=1.0,
                                                  sigmoid=True)))
    items.append(("window_both", builder_seed(Nq=16, Nk=16, Dqk=4, Dv=4,
                                              window=(2, 1))))
    # Zero-sized and extreme problems.
    items.append(("zero_nq", builder_seed(Nq=0, Nk=5, Dqk=4, Dv=4)))
    items.append(("zero_nk", builder_seed(Nq=3, Nk=0, Dqk=4, Dv=4, lse=True)))
    items.append(("zero_b", builder_seed(B=0, Nq=3, Nk=3, Dqk=4, Dv=4)))
    items.append(("int64_max", builder_seed(B=1, Nq=MAX, Nk=MAX, Dqk=4, Dv=4,
                                            causal="bottom_right")))
    items.append(("huge", builder_seed(B=2**62, Hkv=2**31, Nq=2**32 + 1,
                                       Nk=2**62, Dqk=MAX, Dv=MAX)))
    # Invalid attributes.
    items.append(("window_negative", builder_seed(Nq=3, Nk=3,
                                                  window=(-1, -2**63))))
    items.append(("scale_nan", builder_seed(Nq=3, Nk=3, scale="nan",
                                            softcap="-inf")))
    items.append(("f64", builder_seed(elt="f64", Nq=3, Nk=3)))
    return items


# ---------------------------------------------------------------- diff
D_BATCH = [1, 2, 1, 3, 0, 2, 1, 1]
D_KV_HEADS = [1, 2, 1, 3]
D_GROUPS = [1, 2, 4, 3, 1, 8, 2, 1]
D_SEQ = [1, 2, 3, 5, 8, 13, 16, 17, 0, 33, 64, 65, 7, 130, 4, 1]
D_HEAD = [1, 2, 3, 4, 8, 16, 5, 7, 32, 13]
D_MODEL = [4, 6, 8, 12, 16, 1, 2, 3]
D_WINDOWS = [None, 0, 1, 2, 3, 5, 8, 16, 2**61, MAX]
D_SCALES = [None, 0.5, 1.0, 2.0, 0.125, 0.25, None, 4.0]
D_SOFTCAPS = [None, 1.0, 2.5, 10.0, 30.0, None, 0.5, 100.0]
D_TILES = [0, 1, 2, 3, 4, 8, 16, 32, 0, 0, 5, 64]
D_SPLITS = [4, 1, 2, 3, 7, 16, -1, 4]
D_OPT = [3, 2, 0, 3, 1, 3, 3, 2]
D_AMP = [1.0, 2.0, 4.0, 0.5, 8.0, 1.0, 1.0, 16.0]
FORMS = ["naive", "fused", "decode"]


def diff_seed(form="naive", dtype="f32", bnhd=False, lse=False, sigmoid=False,
              kv_len=None, alibi=False, parallel=False, projected=False,
              B=1, Hkv=1, R=1, Nq=1, Nk=1, Dqk=1, Dv=1, D=4, causal=None,
              window=(None, None), scale=None, softcap=None, mask=0,
              mask_bcast=0, bias=0, bias_bcast=0, bias_type="f32", dyn=(),
              mixed=False, tile_q=0, tile_k=0, splits=4, opt=3, amp=1.0,
              poison=False, data=b""):
    out = bytearray()
    out.append(FORMS.index(form))
    out.append({"f32": 0, "f16": 5, "bf16": 7}[dtype])
    flags = (1 if bnhd else 0) | (2 if lse else 0) | (4 if sigmoid else 0)
    flags |= (8 if kv_len else 0) | (16 if kv_len == 64 else 0)
    flags |= (32 if alibi else 0) | (64 if parallel else 0)
    flags |= 128 if projected else 0
    out.append(flags)
    out.append(D_BATCH.index(B))
    out.append(D_KV_HEADS.index(Hkv))
    out.append(D_GROUPS.index(R))
    out.append(D_SEQ.index(Nq))
    out.append(D_SEQ.index(Nk))
    out.append(D_HEAD.index(Dqk))
    out.append(D_HEAD.index(Dv))
    out.append(D_MODEL.index(D))
    out.append({None: 0, "top_left": 1, "bottom_right": 2}[causal])
    out.append(D_WINDOWS.index(window[0]))
    out.append(D_WINDOWS.index(window[1]))
    out.append(D_SCALES.index(scale))
    out.append(D_SOFTCAPS.index(softcap))
    out.append(mask)
    out.append(mask_bcast)
    out.append(bias)
    out.append(bias_bcast)
    out.append({"f32": 0, "f16": 1, "bf16": 2}[bias_type])
    names = ["B", "Hq", "Hkv", "Nq", "Nk", "Dqk", "Dv"]
    bits = sum(1 << names.index(n) for n in dyn) | (128 if mixed else 0)
    out.append(bits)
    out.append(D_TILES.index(tile_q))
    out.append(D_TILES.index(tile_k))
    out.append(D_SPLITS.index(splits))
    out.append(D_OPT.index(opt))
    out.append(D_AMP.index(amp))
    out.append(1 if poison else 0)
    return bytes(out) + data


DIFF_PROBLEMS = {
    # The examples at small sizes.
    "gqa_causal": dict(B=2, Hkv=2, R=4, Nq=5, Nk=5, Dqk=16, Dv=16,
                       causal="top_left", lse=True),
    "cross_attention": dict(B=2, Hkv=2, R=1, Nq=13, Nk=33, Dqk=32, Dv=16,
                            kv_len=32),
    "decode_bottom_right": dict(B=2, Hkv=2, R=4, Nq=1, Nk=130, Dqk=32, Dv=32,
                                kv_len=32, causal="bottom_right", lse=True),
    "sliding_window_alibi": dict(B=1, Hkv=2, R=4, Nq=64, Nk=64, Dqk=8, Dv=8,
                                 alibi=True, causal="top_left",
                                 window=(16, None)),
    "projected_self_attention": dict(projected=True, B=2, Nq=16, Nk=16, D=16,
                                     Hkv=2, R=2, Dqk=8, Dv=8,
                                     causal="top_left"),
    # test/Execution problems.
    "kv_len_i64_br": dict(B=2, Nq=2, Nk=3, kv_len=64, causal="bottom_right",
                          lse=True),
    "mask_bias": dict(B=2, Hkv=2, R=2, Nq=5, Nk=7, Dqk=4, Dv=4, mask=4,
                      bias=2, mask_bcast=0b0010, lse=True),
    "softcap_sigmoid": dict(Nq=3, Nk=7, Dqk=4, Dv=4, softcap=2.5,
                            sigmoid=True),
    "gqa_bnhd": dict(bnhd=True, B=2, Hkv=2, R=2, Nq=8, Nk=13, Dqk=4, Dv=8),
    "window_both": dict(Nq=17, Nk=17, Dqk=4, Dv=4, window=(2, 1), lse=True),
    "f16": dict(dtype="f16", B=2, Hkv=1, R=2, Nq=7, Nk=13, Dqk=8, Dv=8,
                lse=True),
    "bf16": dict(dtype="bf16", Hkv=2, R=1, Nq=5, Nk=8, Dqk=16, Dv=4),
    "dynamic": dict(B=2, Hkv=2, R=2, Nq=5, Nk=8, Dqk=4, Dv=4,
                    dyn=("B", "Hq", "Hkv", "Nq", "Nk", "Dqk", "Dv")),
    "dynamic_mixed": dict(B=2, Nq=5, Nk=8, Dqk=4, Dv=4, dyn=("Nq", "Nk"),
                          mixed=True, kv_len=32),
    # Edge cases.
    "zero_nq": dict(Nq=0, Nk=5, Dqk=4, Dv=4, lse=True),
    "zero_nk": dict(Nq=3, Nk=0, Dqk=4, Dv=4, lse=True),
    "zero_b": dict(B=0, Nq=3, Nk=3, Dqk=4, Dv=4),
    "large_logits": dict(Nq=5, Nk=8, Dqk=8, Dv=4, amp=16.0, scale=4.0,
                         lse=True),
    "empty_rows": dict(B=2, Nq=8, Nk=8, Dqk=4, Dv=4, kv_len=32,
                       causal="bottom_right", window=(0, 0), lse=True),
    "wide_windows": dict(B=2, Nq=5, Nk=3, Dqk=4, Dv=4, causal="bottom_right",
                         window=(MAX, 2**61), kv_len=64, lse=True),
    "nan_padding": dict(B=3, Hkv=2, R=2, Nq=5, Nk=33, Dqk=8, Dv=4,
                        kv_len=32, poison=True, lse=True),
    "nan_padding_bnhd": dict(bnhd=True, B=2, Nq=1, Nk=130, Dqk=16, Dv=8,
                             kv_len=64, poison=True, causal="bottom_right"),
}


def diff_seeds():
    items = []
    for name, kw in DIFF_PROBLEMS.items():
        for form in FORMS:
            items.append(("%s_%s" % (name, form), diff_seed(form=form, **kw)))
        items.append(("%s_tiled" % name,
                      diff_seed(form="fused", tile_q=3, tile_k=5, **kw)))
        items.append(("%s_split" % name,
                      diff_seed(form="decode", tile_q=2, tile_k=4, splits=3,
                                parallel=True, **kw)))
    # kv_len out of range: data bytes for kv_len follow q and k values; the
    # generator fills them past the end, so spell out a short problem.
    # q: 1x1x1x1, k: 1x1x3x1 (4 bytes), then kv_len byte 0xE0 + 1 -> Nk + 1.
    for special, label in ((0xE0, "minus_one"), (0xE1, "nk_plus_one"),
                           (0xE4, "int_max"), (0xE5, "int_min")):
        for form in FORMS:
            items.append(("kv_len_%s_%s" % (label, form), diff_seed(
                form=form, Nq=1, Nk=3, kv_len=64, lse=True,
                data=bytes([64, 10, 20, 30, 40, 50, 60, special]))))
    return items


# ---------------------------------------------------------------- npy
def npy(descr, shape, data, version=1):
    shape_repr = "(" + "".join("%d, " % s for s in shape)
    shape_repr = (shape_repr[:-2] + ",)") if len(shape) == 1 else \
        (shape_repr.rstrip(", ") + ")")
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (
        descr, shape_repr)
    pre = 10 if version == 1 else 12
    total = pre + len(header) + 1
    header += " " * ((64 - total % 64) % 64) + "\n"
    out = b"\x93NUMPY" + bytes([version, 0])
    out += struct.pack("<H" if version == 1 else "<I", len(header))
    return out + header.encode("latin1") + data


def npy_seeds():
    return [
        ("f4", npy("<f4", [1, 1, 2, 2], struct.pack("<4f", 1, 0, 0, 1))),
        ("f8", npy("<f8", [3], struct.pack("<3d", 1.5, float("inf"),
                                           float("nan")))),
        ("f2", npy("<f2", [2], struct.pack("<2e", 65504.0, -0.0))),
        ("i4", npy("<i4", [2], struct.pack("<2i", -1, 2**31 - 1))),
        ("i8", npy("<i8", [2], struct.pack("<2q", -2**63, 2**63 - 1))),
        ("b1", npy("|b1", [2, 2], bytes([1, 0, 0, 1]))),
        ("u1", npy("|u1", [3], bytes([0, 1, 255]))),
        ("scalar", npy("<f4", [], struct.pack("<f", 3.0))),
        ("empty", npy("<f4", [0, 4], b"")),
        ("v2", npy("<f4", [1], struct.pack("<f", 1.0), version=2)),
        ("truncated", npy("<f4", [4], struct.pack("<2f", 1, 2))),
        ("huge_shape", npy("<f4", [2**62, 4], b"")),
        ("fortran", b"\x93NUMPY\x01\x00" + struct.pack("<H", 118) +
         b"{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }"
         .ljust(117) + b"\n" + struct.pack("<6f", 1, 2, 3, 4, 5, 6)),
    ]


def abi_seeds():
    """fuzz/AbiFuzzer.cpp: form, kernel, then the dynamic sizes by name and a
    mutation and a layout byte per tensor (0: conforming, contiguous); past
    the end every byte is 0 (sizes of 1)."""
    items = []
    for f in range(3):
        for k in range(4):
            items.append((f"f{f}k{k}", bytes([f, k])))
            items.append((f"f{f}k{k}-sizes", bytes([f, k, 3, 4, 5, 2, 1, 6])))
    # A null tensor, a CUDA tensor, padded and negative strides.
    items.append(("null-tensor", bytes([1, 0, 1, 2, 3, 4] + [0] * 4 + [232, 0])))
    items.append(("cuda", bytes([1, 1, 1, 2, 3, 4, 5] + [0] * 4 + [231, 0])))
    items.append(("strided", bytes([0, 0, 2, 3, 4, 5, 0, 1, 0, 2, 0, 3, 0, 4,
                                    0, 1])))
    items.append(("negative-stride", bytes([2, 2, 2, 3, 4, 5, 0, 4, 0, 4, 0, 4,
                                            0, 4, 0, 4])))
    return items


def main():
    write_set("parse", parse_seeds())
    write_set("builder", builder_seeds())
    write_set("diff", diff_seeds())
    write_set("npy", npy_seeds())
    write_set("abi", abi_seeds())


if __name__ == "__main__":
    main()
