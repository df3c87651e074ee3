"""The fixed specs of the GPU benchmark (bench/gpu.sh), one static spec each.

    python3 bench/gpu_specs.py DIR     writes DIR/<name>.mlir and DIR/specs.json

Prefill: GQA 64/8 and 32/8 query/K-V heads, head dim 128, causal, bf16 and
f16, N 2k-16k with the batch sized so that every shape does about the same
work per token (B * N = 16k tokens: a few ms each on an H200). Decode: one
query per sequence against a full KV cache, GQA 32/8, d128, bf16 and f16,
batch 1, 16, 64, kv_len 4k-32k. Kernel-option rows: a few prefill shapes
again with other kernel options (their "flags", written as the spec's
first line "// attn-compile flags: ...", which bench/gpu.sh passes on), so
one run compares the kernel shapes (32 query rows per warp against 16).
Then the variant and serving rows of
gpu_serving.py (document masking, prefix-LM, paged decode, a ragged
batch). Plain Python (no numpy): it runs where the project
builds.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_serving  # noqa: E402

D = 128
TOKENS = 16384


def prefill_specs():
    specs = []
    for hq, hkv in ((64, 8), (32, 8)):
        for dtype in ("bf16", "f16"):
            for n in (2048, 4096, 8192, 16384):
                specs.append({
                    "name": f"prefill_h{hq}_{hkv}_n{n // 1024}k_{dtype}",
                    "kind": "prefill", "B": TOKENS // n, "Hq": hq,
                    "Hkv": hkv, "Nq": n, "Nk": n, "D": D, "dtype": dtype,
                    "causal": "top_left"})
    return specs


def decode_specs():
    specs = []
    for dtype in ("bf16", "f16"):
        for b, kv in ((1, 4096), (1, 32768), (16, 4096), (16, 16384),
                      (64, 8192), (64, 32768)):
            specs.append({
                "name": f"decode_b{b}_kv{kv // 1024}k_{dtype}",
                "kind": "decode", "B": b, "Hq": 32, "Hkv": 8, "Nq": 1,
                "Nk": kv, "D": D, "dtype": dtype, "causal": None})
    return specs


# Kernel options measured beside the defaults (16 rows per warp, 64-key
# tiles): FlashAttention-2's 32 rows per warp, with 32-key tiles (no spills
# at head dim 128 on sm_80) and with 64-key tiles (ptxas spills some); and
# wgmma (sm_90a only: bench/gpu.sh skips these rows on other chips): both
# GEMMs at 64- and 128-key tiles, and S = Q K^T alone (32-key tiles keep
# P V on mma.sync).
OPTION_VARIANTS = (
    ("w32k32", ["--gpu-warp-rows=32", "--gpu-tile-k=32"]),
    ("w32k64", ["--gpu-warp-rows=32", "--gpu-tile-k=64"]),
    ("w16k32", ["--gpu-warp-rows=16", "--gpu-tile-k=32"]),
    ("wgmma", ["--gpu-wgmma"]),
    ("wgmma_k128", ["--gpu-wgmma", "--gpu-tile-k=128"]),
    ("wgmma_qk", ["--gpu-wgmma", "--gpu-tile-k=32"]),
)


def option_specs():
    """Prefill 64/8 at 4k and 16k (bf16 and f16), with each option variant."""
    specs = []
    for s in prefill_specs():
        if s["Hq"] != 64 or s["Nq"] not in (4096, 16384):
            continue
        for suffix, flags in OPTION_VARIANTS:
            v = dict(s)
            v["name"] = f"{s['name']}_{suffix}"
            v["flags"] = flags
            specs.append(v)
    return specs


def all_specs():
    """Prefill, decode, the option rows, then the variant and serving rows
    (gpu_serving.py)."""
    return (prefill_specs() + decode_specs() + option_specs() +
            gpu_serving.specs())


def spec_text(s):
    """The spec's MLIR: out = attention(q, k, v), causal as given."""
    if s["kind"] in gpu_serving.KINDS:
        return gpu_serving.spec_text(s)
    el = s["dtype"]
    q = f"tensor<{s['B']}x{s['Hq']}x{s['Nq']}x{s['D']}x{el}>"
    kv = f"tensor<{s['B']}x{s['Hkv']}x{s['Nk']}x{s['D']}x{el}>"
    causal = f" causal({s['causal']})" if s["causal"] else ""
    flags = ("// attn-compile flags: " + " ".join(s["flags"]) + "\n"
             if s.get("flags") else "")
    return (flags + f"// bench/gpu_specs.py: {s['kind']} B={s['B']} Hq={s['Hq']} "
            f"Hkv={s['Hkv']} Nq={s['Nq']} Nk={s['Nk']} D={s['D']} {el}\n"
            f"func.func @{s['name']}(%q: {q}, %k: {kv}, %v: {kv}) -> {q} {{\n"
            f"  %out = attn.attention q(%q : {q}) k(%k : {kv}) v(%v : {kv})"
            f"{causal} -> {q}\n"
            f"  return %out : {q}\n"
            f"}}\n")


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    specs = all_specs()
    for s in specs:
        with open(os.path.join(out, s["name"] + ".mlir"), "w") as f:
            f.write(spec_text(s))
    with open(os.path.join(out, "specs.json"), "w") as f:
        json.dump(specs, f, indent=1)
    for s in specs:
        print(s["name"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
