"""The attn-compile flags of a spec file: its own first line
"// attn-compile flags: ..." (the GPU sweep's dumps, bench/gpu_specs.py's
option rows), then `extra` (a string of more flags). Compiling for `chip`,
flags only that chip takes are dropped for the others: --gpu-wgmma (sm_90a's
warpgroup MMA) from a spec's own line."""


def spec_flags(spec, extra="", chip=None):
    with open(spec) as f:
        first = f.readline()
    flags = []
    if first.startswith("// attn-compile flags:"):
        flags = first.split(":", 1)[1].split()
        if chip is not None and chip != "sm_90a":
            flags = [f for f in flags if f != "--gpu-wgmma"]
    return flags + extra.split()
