"""The attn-compile flags of a spec file: its own first line
"// attn-compile flags: ..." (the GPU sweep's dumps, bench/gpu_specs.py's
option rows), then `extra` (a string of more flags)."""


def spec_flags(spec, extra=""):
    with open(spec) as f:
        first = f.readline()
    flags = []
    if first.startswith("// attn-compile flags:"):
        flags = first.split(":", 1)[1].split()
    return flags + extra.split()
