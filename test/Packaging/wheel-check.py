#!/usr/bin/env python3
"""The attn package as `pip install` put it into a virtual environment:
run by that environment's Python, from outside the source tree, with no
PYTHONPATH or ATTN_LIBRARY_DIR (test/Packaging/pip-install-test.sh).

    wheel-check.py SITE_PACKAGES SCRIPTS_DIR SPEC

Checks that `attn` is the installed copy and finds its libraries inside
it (attn/lib); compiles SPEC (small.mlir: causal self-attention
[1, 2, 4, 8]) ahead of time with the wheel's attn-compile console script
(--rpath=none, which only the package's preload of its own libattn_runtime
can load, then the default RUNPATH) and JIT-compiles it through
libattn_compiler; runs each on numpy inputs against a numpy reference;
loads libattn_gpu_runtime.
"""

import ctypes
import math
import os
import subprocess
import sys

site, scripts, spec = sys.argv[1:4]
failures = 0


def check(cond, what):
    global failures
    print(("ok:   " if cond else "FAIL: ") + what)
    if not cond:
        failures += 1


import numpy as np  # noqa: E402  (the venv sees Debian's numpy)
import attn  # noqa: E402

package = os.path.join(os.path.realpath(site), "attn")
here = os.path.dirname(os.path.realpath(attn.__file__))
check(here == package, f"attn imported from the venv: {here}")
lib_dir = os.path.realpath(attn.library_dir())
check(lib_dir == os.path.join(package, "lib"),
      f"attn.library_dir() is the wheel's attn/lib: {lib_dir}")


def reference(q, k, v):
    """f64 causal (top-left) attention, [B, H, N, D]."""
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    s = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    n, m = s.shape[-2:]
    s = np.where(np.tril(np.ones((n, m), dtype=bool)), s, -np.inf)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    return (p / p.sum(axis=-1, keepdims=True)) @ v


rng = np.random.default_rng(26)
q, k, v = (rng.standard_normal((1, 2, 4, 8), dtype=np.float32)
           for _ in range(3))
want = reference(q, k, v)


def close(got, what):
    err = float(np.abs(np.asarray(got, dtype=np.float64) - want).max())
    check(got.shape == want.shape and err < 1e-5,
          f"{what}: shape {tuple(got.shape)}, max error {err:.2e}")


# Ahead of time first, so that nothing has loaded libattn_runtime yet when
# the --rpath=none library loads: only the package's preload can find it.
for rpath in ("none", "default"):
    so = os.path.abspath(f"libsmall_{rpath}.so")
    cmd = [os.path.join(scripts, "attn-compile"), spec, "--emit=shared",
           "-o", so, "--prefix=small_"]
    if rpath == "none":
        cmd.append("--rpath=none")
    run = subprocess.run(cmd, capture_output=True, text=True)
    check(run.returncode == 0, f"attn-compile {' '.join(cmd[2:])}: exit "
          f"{run.returncode} {run.stderr.strip()}")
    if run.returncode != 0:
        continue
    dyn = subprocess.run(["readelf", "-d", so], capture_output=True,
                         text=True).stdout
    runpath = [ln.split("[", 1)[1].rstrip("]")
               for ln in dyn.splitlines() if "RUNPATH" in ln]
    if rpath == "default":
        check(len(runpath) == 1 and os.path.realpath(runpath[0]) == lib_dir,
              f"attn-compile's default RUNPATH is the wheel's lib: {runpath}")
    else:
        check(not runpath, f"--rpath=none gives no RUNPATH: {runpath}")
    lib = attn.load_library(so, prefix="small_")
    close(lib["small"](q, k, v), f"attn-compile'd kernel (rpath {rpath})")

jit = attn.jit(open(spec).read(), name="small.mlir")
close(jit["small"](q, k, v), "JIT through libattn_compiler")

gpu = ctypes.CDLL(os.path.join(lib_dir, "libattn_gpu_runtime.so.1"))
gpu.attn_gpu_unavailable_reason.restype = ctypes.c_char_p
reason = gpu.attn_gpu_unavailable_reason()
check(True, "libattn_gpu_runtime loads; GPU: "
      + (reason.decode() if reason else "available"))

print(f"wheel-check: {failures} failure(s)")
sys.exit(1 if failures else 0)
