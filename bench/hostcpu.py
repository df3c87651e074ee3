"""The host CPU as the benchmark sees it: model name, instruction-set flags,
a short ISA label, and the choice of OpenBLAS's core type.

Standard library only (bench.py imports it; it can be tested without the
benchmark's virtual environment).

OpenBLAS core choice (choose_openblas_core): OpenBLAS picks its kernels from
the CPU's family and model. Debian's 0.3.21 detects AMD Zen 3 correctly
("Zen") but not some newer Intel server CPUs (Sapphire / Emerald Rapids),
for which it falls back to an older, slower core. So:
  - what OpenBLAS detects by itself (probed with OPENBLAS_CORETYPE unset) is
    kept when it uses the best instruction-set level the CPU's flags allow;
  - when it detected a weaker core (SSE-era or AVX-only on an AVX2 CPU, or an
    AVX2 core on an AVX-512 CPU), the best core the flags allow is forced:
    SkylakeX with avx512f, avx512bw, avx512dq and avx512vl; Haswell with avx2
    and fma;
  - a core is never forced unless the CPU has every instruction set its
    kernels use (CORE_NEEDS); a preset OPENBLAS_CORETYPE in the environment
    is honoured under the same condition and dropped otherwise.
"""
import os
import subprocess

# Every core name of OpenBLAS's x86-64 dynamic-arch build (driver/others/
# dynamic.c, corename[]) with the /proc/cpuinfo flags its kernels need, as far
# as this script knows them (conservative: a core is forced only when all are
# present). Bulldozer-family kernels use AMD's FMA4, which Intel CPUs and
# later AMD CPUs lack.
CORE_NEEDS = {
    "Unknown": set(),
    "Katmai": {"sse"},
    "Coppermine": {"sse"},
    "Northwood": {"sse2"},
    "Prescott": {"sse2", "pni"},
    "Banias": {"sse2"},
    "Atom": {"sse2", "pni", "ssse3"},
    "Core2": {"sse2", "pni", "ssse3"},
    "Penryn": {"sse2", "pni", "ssse3", "sse4_1"},
    "Dunnington": {"sse2", "pni", "ssse3", "sse4_1"},
    "Nehalem": {"sse2", "pni", "ssse3", "sse4_1", "sse4_2"},
    "Athlon": {"sse", "3dnow"},
    "Opteron": {"sse2"},
    "Opteron_SSE3": {"sse2", "pni"},
    "Barcelona": {"sse2", "pni", "sse4a"},
    "Nano": {"sse2", "pni", "ssse3"},
    "Sandybridge": {"sse4_2", "avx"},
    "Bobcat": {"sse2", "pni", "ssse3", "sse4a"},
    "Bulldozer": {"avx", "fma4"},
    "Piledriver": {"avx", "fma4"},
    "Steamroller": {"avx", "fma4"},
    "Excavator": {"avx", "fma4"},
    "Haswell": {"avx", "avx2", "fma"},
    "Zen": {"avx", "avx2", "fma"},
    "SkylakeX": {"avx", "avx2", "fma", "avx512f", "avx512bw", "avx512dq",
                 "avx512vl"},
    "Cooperlake": {"avx", "avx2", "fma", "avx512f", "avx512bw", "avx512dq",
                   "avx512vl", "avx512_bf16"},
    "SapphireRapids": {"avx", "avx2", "fma", "avx512f", "avx512bw", "avx512dq",
                       "avx512vl", "avx512_bf16", "avx512_fp16", "amx_tile",
                       "amx_bf16"},
}

AVX512_CORE = {"avx512f", "avx512bw", "avx512dq", "avx512vl"}
LEVEL_NAMES = {0: "SSE", 1: "AVX", 2: "AVX2+FMA", 3: "AVX-512"}


def isa_level(flags):
    """0 = SSE only, 1 = AVX, 2 = AVX2 + FMA, 3 = AVX-512 (F, BW, DQ, VL)."""
    flags = set(flags)
    if AVX512_CORE <= flags and {"avx2", "fma"} <= flags:
        return 3
    if {"avx", "avx2", "fma"} <= flags:
        return 2
    if "avx" in flags:
        return 1
    return 0


def isa_label(flags):
    """A short name of the best vector instruction set: AVX-512, AVX2+FMA,
    AVX, SSE4.2, SSE2 (or SSE)."""
    lvl = isa_level(flags)
    if lvl:
        return LEVEL_NAMES[lvl]
    flags = set(flags)
    for f, name in (("sse4_2", "SSE4.2"), ("sse2", "SSE2")):
        if f in flags:
            return name
    return "SSE" if "sse" in flags else "unknown"


def isa_details(flags):
    """The label plus the AVX-512 / AMX extensions present, for the log."""
    flags = set(flags)
    label = isa_label(flags)
    if isa_level(flags) < 3:
        return label
    extra = [name for f, name in (
        ("avx512_vnni", "VNNI"), ("avx512_bf16", "BF16"),
        ("avx512_fp16", "FP16"), ("amx_tile", "AMX")) if f in flags]
    return f"{label} (F, BW, DQ, VL{''.join(', ' + e for e in extra)})"


def core_level(core):
    """The ISA level of an OpenBLAS core name, or None for a name not known."""
    name = canonical_core(core)
    return None if name is None else isa_level(CORE_NEEDS[name])


def canonical_core(core):
    """OpenBLAS compares core names case-insensitively."""
    if not core:
        return None
    for name in CORE_NEEDS:
        if name.lower() == core.strip().lower():
            return name
    return None


def choose_openblas_core(flags, detected, preset=None):
    """Decides OPENBLAS_CORETYPE.

    flags: the CPU's /proc/cpuinfo flags; detected: openblas_get_corename()
    with OPENBLAS_CORETYPE unset (None when the probe failed); preset: the
    OPENBLAS_CORETYPE found in the environment, if any.

    Returns a dict: set (the value to export, or None to leave it unset),
    expect (the core OpenBLAS should then run), reason (one line), and notes
    (a list of warnings, e.g. a preset that was dropped)."""
    flags = set(flags)
    cpu = isa_level(flags)
    notes = []
    if preset:
        p = canonical_core(preset)
        if p is None:
            notes.append(f"OPENBLAS_CORETYPE={preset} from the environment is "
                         f"not an OpenBLAS core name; ignored")
        else:
            missing = sorted(CORE_NEEDS[p] - flags)
            if missing:
                notes.append(f"OPENBLAS_CORETYPE={preset} from the environment "
                             f"needs {', '.join(missing)}, which this CPU lacks; "
                             f"ignored (it would die with an illegal instruction)")
            else:
                return {"set": p, "expect": p, "notes": notes,
                        "reason": f"OPENBLAS_CORETYPE={preset} preset in the "
                                  f"environment; the CPU has every instruction "
                                  f"set its kernels use"}
    det = canonical_core(detected)
    if detected is None:
        what = "OpenBLAS's own choice could not be probed"
    elif det is None:
        return {"set": None, "expect": detected, "notes": notes,
                "reason": f"OpenBLAS detected core {detected}, a name this "
                          f"script does not know; left to OpenBLAS"}
    else:
        lvl = isa_level(CORE_NEEDS[det])
        if lvl >= cpu:
            return {"set": None, "expect": det, "notes": notes,
                    "reason": f"OpenBLAS detected core {det} ({LEVEL_NAMES[lvl]}), "
                              f"the best the CPU's flags allow "
                              f"({isa_label(flags)}); left to OpenBLAS"}
        what = (f"OpenBLAS detected core {det} ({LEVEL_NAMES[lvl]} kernels), "
                f"weaker than the CPU's {isa_label(flags)}")
    if cpu == 3:
        best = "SkylakeX"
    elif cpu == 2:
        best = "Haswell"
    else:
        return {"set": None, "expect": det or detected, "notes": notes,
                "reason": f"{what}; the CPU has no AVX2+FMA, so no better core "
                          f"is forced; left to OpenBLAS"}
    return {"set": best, "expect": best, "notes": notes,
            "reason": f"{what}: forcing {best} (the CPU has "
                      f"{', '.join(sorted(CORE_NEEDS[best]))})"}


def read_flags(path="/proc/cpuinfo"):
    """The flags of the first processor in /proc/cpuinfo (empty if unreadable)."""
    try:
        with open(path) as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def cpu_model():
    """lscpu's "Model name" (falls back to /proc/cpuinfo's "model name")."""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True,
                             env=dict(os.environ, LC_ALL="C")).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


# ISA of common LLVM CPU names, used only when attn-run's report does not say
# which instruction set it compiled for (attn-run built before "target").
TARGET_ISA_GUESS = {
    "x86-64": "SSE2", "x86-64-v2": "SSE4.2", "x86-64-v3": "AVX2+FMA",
    "x86-64-v4": "AVX-512", "haswell": "AVX2+FMA", "broadwell": "AVX2+FMA",
    "skylake": "AVX2+FMA", "alderlake": "AVX2+FMA", "znver1": "AVX2+FMA",
    "znver2": "AVX2+FMA", "znver3": "AVX2+FMA", "skylake-avx512": "AVX-512",
    "cascadelake": "AVX-512", "cooperlake": "AVX-512",
    "icelake-server": "AVX-512", "sapphirerapids": "AVX-512",
    "emeraldrapids": "AVX-512", "znver4": "AVX-512", "znver5": "AVX-512",
    "sandybridge": "AVX", "ivybridge": "AVX", "nehalem": "SSE4.2",
}


def describe_exit(returncode):
    """An exit status in words; a negative one is a signal (subprocess)."""
    if returncode is None:
        return "did not finish"
    if returncode >= 0:
        return f"exit status {returncode}"
    import signal
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        name = f"signal {-returncode}"
    if name == "SIGILL":
        return ("killed by SIGILL (illegal instruction: the program ran an "
                "instruction this CPU does not have)")
    return f"killed by {name}"
