"""The pieces the CPU benchmark scripts (bench.py, serving.py, variants.py)
share: running a command, attn-run's timing and --verify output, statistics
over rounds, the line naming the machine every measurement is taken on, the
results and scratch folders, and the text of spec tensor types and functions.

Standard library only at import time; numpy is imported by the helpers that
load or time arrays.
"""
import os
import re
import subprocess
import sys
import time

import hostcpu

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")


def prog():
    """The running script's name, for failure messages."""
    return os.path.basename(sys.argv[0]) or "bench"


# ---- Commands ------------------------------------------------------------

def run(cmd, env=None, timeout=None):
    """Runs a command, capturing its output; env entries are added to the
    environment, and those set to None removed from it."""
    e = dict(os.environ)
    for k, v in (env or {}).items():
        if v is None:
            e.pop(k, None)
        else:
            e[k] = v
    return subprocess.run(cmd, env=e, capture_output=True, text=True,
                          timeout=timeout)


def failure(p, what):
    """A failed helper in words: exit status or signal, and its stderr."""
    err = (p.stderr or "").strip() or (p.stdout or "").strip()
    return (f"{what} {hostcpu.describe_exit(p.returncode)}"
            + (f": {err[-600:]}" if err else " (no output on stderr)"))


def run_ok(cmd, env=None, timeout=None):
    """run(), for a command that must succeed: returns its stdout, or exits
    the script naming the command, why it failed and its output."""
    try:
        p = run(cmd, env, timeout)
    except subprocess.TimeoutExpired:
        sys.exit(f"{prog()}: {' '.join(cmd)} did not finish in {timeout} s")
    if p.returncode != 0:
        sys.exit(f"{prog()}: {' '.join(cmd)} failed "
                 f"({hostcpu.describe_exit(p.returncode)}):\n{p.stdout}{p.stderr}")
    return p.stdout


def loadavg():
    """The 1-minute load average (NaN where /proc/loadavg is unreadable)."""
    try:
        with open("/proc/loadavg") as f:
            return float(f.read().split()[0])
    except OSError:
        return float("nan")


# ---- attn-run's output ---------------------------------------------------

def attn_time(out):
    """The median kernel time in seconds of an attn-run --reps=N run."""
    return float(re.search(r"^run: ([0-9.e-]+) s median", out, re.M).group(1))


def verify_forms(attn_run, spec, forms, extra=()):
    """Runs attn-run --verify on a spec once per form; yields (form, what the
    check says: "max abs err ..." or "ok")."""
    for form in forms:
        out = run_ok([attn_run, spec, f"--form={form}", "--verify", "--reps=0"]
                     + list(extra))
        err = re.search(r"vs reference: (max abs err [^,]+)", out)
        yield form, err.group(1) if err else "ok"


# ---- Statistics ----------------------------------------------------------

def stats(values):
    """(median, min, max); the upper median for an even count."""
    v = sorted(values)
    return v[len(v) // 2], v[0], v[-1]


def ms(st, spec):
    """A stats() triple in ms as two table cells: "median | min-max"."""
    m, lo, hi = (format(x * 1e3, spec) for x in st)
    return f"{m} | {lo}-{hi}"


# ---- Machine -------------------------------------------------------------

def host_line():
    """The host as a measurement names it: CPU model, ISA, cores."""
    return (f"{hostcpu.cpu_model()}, {hostcpu.isa_label(hostcpu.read_flags())}, "
            f"{os.cpu_count()} cores; our code for the host CPU")


def machine_line(m, short=False):
    """One line naming the machine and the instruction sets of a bench.py
    run (m: cpu_model, host_isa, openblas_core, target_*, peers)."""
    target = m["target_cpu"] + (f" {m['target_features']}" if m["target_features"] else "")
    if short:
        return (f"{m['cpu_model']} ({m['host_isa']}); attn code for {target} "
                f"({m['target_isa']}); SDPA and OpenBLAS {m.get('peers', 'native')}, OpenBLAS core "
                f"{m['openblas_core']}")
    return (f"machine: {m['cpu_model']}, host ISA {m['host_isa']}; OpenBLAS core "
            f"{m['openblas_core']}; attn code compiled for target {target} "
            f"({m['target_isa']}); PyTorch SDPA and OpenBLAS: {m.get('peers', 'native')}")


# ---- Folders and files ---------------------------------------------------

def results_dir(results=None, target_cpu="", target_features=""):
    """results if given; else bench/results for the host target and
    bench/results/<target> otherwise (so that a run for another target does
    not overwrite the host's)."""
    if results:
        return results
    if not (target_cpu or target_features):
        return RESULTS
    name = (target_cpu or "host") + (("_" + target_features) if target_features else "")
    return os.path.join(RESULTS, re.sub(r"[^A-Za-z0-9_.+-]", "_", name))


def slug(name):
    """A case name as a file name: "decode, paged cache" -> decode_paged_cache."""
    return name.replace(" ", "_").replace(",", "")


class Work:
    """The scratch folder: specs, inputs and outputs by name."""

    def __init__(self, root):
        self.root = root
        os.makedirs(root, exist_ok=True)

    def path(self, name):
        return os.path.join(self.root, name)

    def write(self, name, text):
        with open(self.path(name), "w") as f:
            f.write(text)
        return self.path(name)

    def inputs(self, **files):
        """attn-run's arguments reading each named input from a file here."""
        return [x for n, f in files.items() for x in ("--input", f"{n}={self.path(f)}")]

    def out(self, case):
        """Where a case's output goes (attn-run --output)."""
        return self.path(slug(case) + ".npy")

    def load(self, case):
        """A case's output, in f64."""
        import numpy as np
        return np.load(self.out(case)).astype(np.float64)


# ---- Scripts timing cases in interleaved rounds (serving.py, variants.py) --

class Report:
    """Markdown lines, printed as they come and kept for the results file."""

    def __init__(self, title):
        self.lines = []
        self(title)
        self()
        self(f"Machine: {host_line()}")
        self()

    def __call__(self, s=""):
        print(s, flush=True)
        self.lines.append(s)

    def compare(self, checks, tol=1e-4):
        """Lists the max abs difference of each (label, x, y); exits the
        script past tol (before any time is reported)."""
        import numpy as np
        self("Outputs compared before timing (max abs difference, f32):")
        for label, x, y in checks:
            d = float(np.abs(x - y).max())
            self(f"- {label}: {d:.2e}")
            if not d <= tol:
                sys.exit(f"{prog()}: {label} differs by {d}")
        self()

    def table_head(self):
        self("| case | threads | time (ms) | spread (ms) | ratio | target |")
        self("|---|---|---|---|---|---|")

    def save(self, path):
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with open(path, "w") as f:
            f.write("\n".join(self.lines) + "\n")


def round_args(ap, reps):
    """The options of a script timing cases in interleaved rounds."""
    ap.add_argument("--attn-run", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=reps)
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--results", default=RESULTS)


def setup(a, title):
    """The scratch folder and the report of a script parsed with round_args
    (its results folder made now, so that a bad one fails before the run)."""
    os.makedirs(a.results, exist_ok=True)
    return Work(a.work), Report(title)


def threads(text):
    """Thread counts from text such as "1,2"."""
    return [int(x) for x in text.split(",") if x]


def import_torch(no_torch):
    """torch, or None with --no-torch."""
    if no_torch:
        return None
    import torch
    return torch


def rounds(threads, n):
    """Interleaved rounds: (thread count, its environment, whether this is
    the run's first round) n times per thread count, in order."""
    for i, t in enumerate(threads):
        env = {"OMP_NUM_THREADS": str(t)}
        for r in range(n):
            yield t, env, i == 0 and r == 0


def time_sdpa(torch, threads, reps, *args, **kwargs):
    """PyTorch SDPA on threads threads, once to warm up, then reps timed
    calls: (the last output as an array, the median time in seconds)."""
    import numpy as np
    torch.set_num_threads(threads)
    sdpa = torch.nn.functional.scaled_dot_product_attention
    res = sdpa(*args, **kwargs)
    samples = []
    for _ in range(reps):
        start = time.perf_counter()
        res = sdpa(*args, **kwargs)
        samples.append(time.perf_counter() - start)
    return res.numpy(), float(np.median(samples))


def vs_sdpa(ratio, target, sdpa_s, ours_s):
    """The ratio and target cells with "faster than SDPA" added."""
    r = sdpa_s / ours_s
    return (f"{ratio}, {r:.2f}x faster than SDPA",
            f"{target}; " + ("met" if r > 1 else "missed (SDPA faster)"))


# ---- Spec text -----------------------------------------------------------

def tensor(*dims, ty="f32"):
    """tensor<AxBx...xty>."""
    return "tensor<" + "x".join(str(d) for d in dims) + f"x{ty}>"


def attention_func(name, q, k, v, o, mods="", extra_args=""):
    """A spec: func @name(%q, %k, %v[extra_args]) returning attn.attention
    with mods (each with a leading space) of those types."""
    return (f"func.func @{name}(%q: {q}, %k: {k}, %v: {v}{extra_args}) -> {o} {{\n"
            f"  %o = attn.attention q(%q : {q}) k(%k : {k}) v(%v : {v}){mods} -> {o}\n"
            f"  return %o : {o}\n}}\n")
