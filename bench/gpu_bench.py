"""The GPU benchmark's run step (bench/gpu.sh run), on a machine with an
NVIDIA GPU, from the pack bench/gpu.sh prepare made.

    python3 gpu_bench.py --pack DIR [--out DIR] [--only NAME,...]
                         [--reps N] [--budget SECONDS] [--spec-timeout S]

For every spec of DIR/specs.json: CUDA inputs from PyTorch, our kernel
(DIR/lib/lib<name>.so) through the attn Python package, a check against the
f64 reference of bench/gpu_reference.py on sampled rows, then CUDA-event
timings of ours and of PyTorch SDPA's flash, cuDNN and efficient backends
(each alone, torch.nn.attention.sdpa_kernel) in the same run: median of
`--reps` (>= 20) calls, their spread, TFLOP/s (causal: readable pairs only)
and % of peak, or GB/s and % of memory bandwidth for decode, and the ratio
to the best SDPA backend. Prints a markdown table (also $OUT/gpu.md and
gpu.json with --out).

The specs run in a worker process that the parent restarts when a spec
hangs (--spec-timeout) or leaves the GPU unusable, so one failing spec is a
FAIL row and the rest still run. Specs left when --budget runs out are
SKIP rows. Without a GPU: prints why and exits 0.
"""

import argparse
import json
import os
import queue
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gpu_serving  # noqa: E402

# Datasheet figures (dense f16/bf16 tensor-core TFLOP/s, HBM GB/s) by name.
# The first entry whose name is part of the device's name counts.
PEAKS = [("H200", 989.4, 4800.0), ("H100 PCIe", 756.0, 2000.0),
         ("H100 NVL", 835.0, 3900.0), ("H100", 989.4, 3350.0),
         ("H800", 989.4, 3350.0), ("A100", 312.0, 2039.0),
         ("L40S", 362.0, 864.0)]
TOLERANCE = {"bf16": 2e-2, "f16": 4e-3}
BACKENDS = ("flash", "cudnn", "efficient")


# -- Arithmetic and the table (no torch needed) ----------------------------

def pairs(spec):
    """Readable (query, key) pairs of one head."""
    nq, nk, causal = spec["Nq"], spec["Nk"], spec["causal"]
    if causal is None:
        return nq * nk
    shift = 0 if causal == "top_left" else nk - nq
    # Row i reads min(nk, i + shift + 1) keys, at least 0.
    return sum(max(0, min(nk, i + shift + 1)) for i in range(nq))


def flops(spec):
    """2 matmuls of 2 FLOPs per multiply-add over the readable pairs."""
    return 4 * spec["B"] * spec["Hq"] * spec["D"] * pairs(spec)


def bytes_moved(spec):
    """q, k, v read and out written once (2-byte elements)."""
    q = spec["B"] * spec["Hq"] * spec["Nq"] * spec["D"]
    kv = spec["B"] * spec["Hkv"] * spec["Nk"] * spec["D"]
    return 2 * (2 * q + 2 * kv)


def _median(times):
    return statistics.median(times) if isinstance(times, list) and times \
        else None


def _ms(times, unit):
    m = _median(times)
    if m is None:
        if isinstance(times, str):
            return "err"
        return "n/a"
    return f"{m * 1000:.1f}" if unit == "us" else f"{m:.3f}"


def _rate(spec, ms):
    """TFLOP/s (prefill) or GB/s (decode) at `ms` milliseconds."""
    if spec["kind"] == "decode":
        return bytes_moved(spec) / (ms * 1e-3) / 1e9
    return flops(spec) / (ms * 1e-3) / 1e12


def _num(v):
    return f"{v:.1f}" if v >= 10 else f"{v:.3g}"


def markdown(rows, device):
    """The results as markdown: one table for prefill, one for decode, one
    for the variant and serving rows (gpu_serving.py)."""
    peak = {"prefill": device.get("peak_tflops"),
            "decode": device.get("peak_gbs")}
    out = []
    for kind, unit, rate, pct in (("prefill", "ms", "TFLOP/s", "% peak"),
                                  ("decode", "us", "GB/s", "% HBM")):
        sel = [r for r in rows if r["spec"]["kind"] == kind]
        if not sel:
            continue
        out.append(f"| {kind} | shape | ours {unit} (min-max) | {rate} | "
                   f"{pct} | max err (tol; SDPA's) | " +
                   " | ".join(f"{b} {unit}" for b in BACKENDS) +
                   f" | best SDPA {rate} | ours vs best |")
        out.append("|" + "---|" * (8 + len(BACKENDS)))
        for r in sel:
            s = r["spec"]
            shape = (f"B{s['B']} H{s['Hq']}/{s['Hkv']} "
                     f"{s['Nq']}x{s['Nk']} d{s['D']} {s['dtype']}"
                     + (" causal" if s["causal"] else ""))
            sdpa = r.get("sdpa", {})
            best = min((_median(t) for t in sdpa.values()
                        if _median(t) is not None), default=None)
            ours = _median(r.get("ours"))
            cells = [s["name"], shape]
            if r["status"] in ("ok", "WRONG") and ours is not None:
                lo, hi = min(r["ours"]), max(r["ours"])
                scale = 1000 if unit == "us" else 1
                fmt = "{:.1f}" if unit == "us" else "{:.3f}"
                cells.append(fmt.format(ours * scale) + " (" +
                             fmt.format(lo * scale) + "-" +
                             fmt.format(hi * scale) + ")" +
                             (f" {len(r['ours'])} reps"
                              if len(r["ours"]) < 20 else ""))
                v = _rate(s, ours)
                cells.append(_num(v))
                cells.append(f"{100 * v / peak[kind]:.1f}%"
                             if peak[kind] else "n/a")
            else:
                cells += [f"{r['status']}: {r.get('message', '')}"[:120],
                          "", ""]
            sdpa_err = min(r.get("sdpa_err", {}).values(), default=None)
            theirs = (f"; SDPA {sdpa_err:.1e}" if sdpa_err is not None
                      else "")
            if r.get("err") is not None:
                mark = "" if r["status"] == "ok" else " WRONG"
                cells.append(f"{r['err']:.2e} ({r['tol']:.0e}{theirs}){mark}")
            else:
                cells.append(theirs[2:])
            cells += [_ms(sdpa.get(b), unit) +
                      ("*" if b in r.get("sdpa_expanded", []) else "")
                      for b in BACKENDS]
            cells.append(_num(_rate(s, best)) if best else "n/a")
            cells.append(f"{best / ours:.2f}x" if best and ours and
                         r["status"] == "ok" else "")
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
    errors = {}
    for r in rows:
        for b, t in r.get("sdpa", {}).items():
            if isinstance(t, str):
                errors.setdefault(f"{b}: {t}", []).append(r["spec"]["name"])
    for text, names in errors.items():
        out.append(f"err ({', '.join(names)}): {text}")
    if errors:
        out.append("")
    serving = gpu_serving.markdown(rows, device)
    if serving:
        out.append(serving)
    if any(r.get("sdpa_expanded") for r in rows):
        out.append("*: that backend has no GQA; it ran on K/V expanded to "
                   "the query heads (reading Hq/Hkv times more K/V).")
        out.append("")
    return "\n".join(out)


# -- The worker: runs specs on the GPU -------------------------------------

def _say(tag, payload=""):
    sys.stdout.write(f"{tag} {payload}\n")
    sys.stdout.flush()


def _sample_rows(n, count=32):
    """First, last and evenly spread query rows."""
    if n <= count:
        return list(range(n))
    rows = set(range(8)) | set(range(n - 8, n))
    step = n / (count - 16)
    rows |= {int(i * step) for i in range(count - 16)}
    return sorted(rows)


class Device:
    """Where the worker runs: "cuda", or "cpu" for --dry-run-cpu (the
    harness tested without a GPU, on CPU kernels)."""

    def __init__(self, torch, name):
        self.torch, self.name = torch, name

    def sync(self):
        if self.name == "cuda":
            self.torch.cuda.synchronize()

    def time(self, fn, reps, sleep_cycles=40_000_000):
        """Per-call times (ms): CUDA events, a sleeping kernel queued first
        so that the host runs ahead and its overhead between calls is not
        timed (about 20 ms at 2 GHz); on the CPU, the wall clock."""
        torch = self.torch
        if self.name != "cuda":
            times = []
            for _ in range(reps):
                t0 = time.perf_counter()
                fn()
                times.append((time.perf_counter() - t0) * 1000)
            return times
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
        torch.cuda.synchronize()
        if hasattr(torch.cuda, "_sleep"):
            torch.cuda._sleep(sleep_cycles)
        for i in range(reps):
            starts[i].record()
            fn()
            ends[i].record()
        torch.cuda.synchronize()
        return [a.elapsed_time(b) for a, b in zip(starts, ends)]

    def reps(self, fn, want, budget_ms=12000.0):
        """Warms up and picks the repetitions: `want`, fewer when a call
        takes so long that `want` would not fit in `budget_ms` (at least
        3)."""
        fn()
        self.sync()
        t0 = time.perf_counter()
        fn()
        self.sync()
        ms = (time.perf_counter() - t0) * 1000
        return max(3, min(want, int(budget_ms / max(ms, 1e-3))))


def _short(e):
    text = f"{type(e).__name__}: {e}".replace("\n", " ").replace("|", "/")
    return text[:200]


def _not_compiled(pack, spec):
    why = "not compiled"
    err_file = os.path.join(pack, "compile", spec["name"] + ".err")
    if os.path.exists(err_file):
        lines = [ln for ln in open(err_file).read().splitlines() if ln]
        if lines:
            why += ": " + lines[0][:150]
    return why


def _run_ours(dev, make_call, error_of, tol, reps, result):
    """Our kernel in `result`: `make_call()` gives the call and its output,
    checked once against the reference (WRONG beyond `tol`) and timed; an
    exception is a FAIL row. False when the CUDA context is gone."""
    try:
        call, out = make_call()
        call()
        dev.sync()
        result["err"] = error_of(out)
        if not result["err"] <= tol:
            result.update(status="WRONG",
                          message=f"max error {result['err']:.3g}")
        result["ours"] = dev.time(call, dev.reps(call, reps))
    except Exception as e:  # KernelError, CUDA errors, a missing symbol
        result.update(status="FAIL", message=_short(e))
        result.pop("ours", None)
        try:
            dev.sync()
        except Exception:
            result["fatal"] = True
            return False
    return True


def run_spec(torch, dev, attn, ref, spec, pack, reps, skip_ours=False):
    if spec["kind"] in gpu_serving.KINDS:
        helpers = {"sample_rows": _sample_rows, "tolerance": TOLERANCE,
                   "say": _say, "short": _short, "run_ours": _run_ours,
                   "not_compiled": lambda s: _not_compiled(pack, s)}
        return gpu_serving.run_spec(torch, dev, attn, ref, spec, pack, reps,
                                    skip_ours, helpers)
    import torch.nn.functional as F
    result = {"spec": spec, "status": "ok", "sdpa": {}, "sdpa_err": {}}
    dt = {"bf16": torch.bfloat16, "f16": torch.float16}[spec["dtype"]]
    B, Hq, Hkv, Nq, Nk, D = (spec[x] for x in
                             ("B", "Hq", "Hkv", "Nq", "Nk", "D"))
    gen = torch.Generator(device=dev.name).manual_seed(0)
    q = torch.randn(B, Hq, Nq, D, device=dev.name, dtype=dt, generator=gen)
    k = torch.randn(B, Hkv, Nk, D, device=dev.name, dtype=dt, generator=gen)
    v = torch.randn(B, Hkv, Nk, D, device=dev.name, dtype=dt, generator=gen)
    rows = _sample_rows(Nq)
    batches = sorted({0, B // 3, (2 * B) // 3, B - 1})
    want = ref.reference_rows(q, k, v, rows, batches, spec["causal"])
    tol = TOLERANCE[spec["dtype"]]
    result["tol"] = tol

    def error_of(out):
        got = out[batches][:, :, rows].double()
        if not torch.isfinite(got).all():
            return float("inf")
        return float((got - want).abs().max())

    # Ours.
    _say("PHASE", "ours")
    # Test hooks (bench/gpu_dryrun_test.sh): a kernel that hangs or crashes.
    if os.environ.get("ATTN_GPU_BENCH_TEST_HANG") == spec["name"]:
        time.sleep(3600)
    if os.environ.get("ATTN_GPU_BENCH_TEST_CRASH") == spec["name"]:
        os._exit(9)
    path = os.path.join(pack, "lib", f"lib{spec['name']}.so")
    if not os.path.exists(path):
        result.update(status="FAIL", message=_not_compiled(pack, spec))
    elif skip_ours:
        result.update(status="SKIP", message="ours skipped: our kernels hung "
                      "or broke the GPU context twice")
    else:
        def make_call():
            kernel = attn.load_library(path)[spec["name"]]
            out = torch.empty_like(q)
            return (lambda: kernel(q, k, v, out=out)), out
        if not _run_ours(dev, make_call, error_of, tol, reps, result):
            return result

    # PyTorch SDPA, each backend alone.
    _say("PHASE", "sdpa")
    from torch.nn.attention import SDPBackend, sdpa_kernel
    backends = {"flash": getattr(SDPBackend, "FLASH_ATTENTION", None),
                "cudnn": getattr(SDPBackend, "CUDNN_ATTENTION", None),
                "efficient": getattr(SDPBackend, "EFFICIENT_ATTENTION", None)}
    causal = spec["causal"] == "top_left"  # SDPA's is_causal is top-left
    if spec["causal"] not in (None, "top_left"):
        return dict(result, sdpa={b: None for b in backends})
    expanded = {}
    for name, backend in backends.items():
        if backend is None:
            result["sdpa"][name] = None
            continue
        try:
            with sdpa_kernel(backend):
                fn = _sdpa(torch, F, q, k, v, causal, expanded)
                o = fn()
                dev.sync()
                result["sdpa_err"][name] = error_of(o)
                n = dev.reps(fn, reps)
                result["sdpa"][name] = dev.time(fn, n)
                if expanded.get("used"):
                    result.setdefault("sdpa_expanded", []).append(name)
                    expanded["used"] = False
        except Exception as e:
            result["sdpa"][name] = "error: " + _short(e)
            try:
                dev.sync()
            except Exception:
                result["fatal"] = True
                return result
    return result


def _sdpa(torch, F, q, k, v, causal, expanded):
    """A call of SDPA under the current backend: with enable_gqa, or, where
    the backend refuses it, on K/V expanded to Hq heads (expanded outside
    the timing; that kernel reads Hq/Hkv times more K/V; marked '*')."""
    def gqa():
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal,
                                              enable_gqa=True)
    try:
        gqa()
        return gqa
    except (RuntimeError, TypeError):
        pass
    if "k" not in expanded:
        group = q.shape[1] // k.shape[1]
        expanded["k"] = k.repeat_interleave(group, dim=1)
        expanded["v"] = v.repeat_interleave(group, dim=1)
    expanded["used"] = True

    def mha():
        return F.scaled_dot_product_attention(q, expanded["k"],
                                              expanded["v"], is_causal=causal)
    return mha


def _gpu_runtime(pack):
    import ctypes
    rt = ctypes.CDLL(os.path.join(pack, "lib", "libattn_gpu_runtime.so"))
    rt.attn_gpu_unavailable_reason.restype = ctypes.c_char_p
    return rt


def gpu_unavailable_reason(pack):
    """What libattn_gpu_runtime says about this machine."""
    try:
        return _gpu_runtime(pack).attn_gpu_unavailable_reason().decode() \
            or "none"
    except OSError as e:
        return f"libattn_gpu_runtime not loadable: {e}"


def runtime_view(pack):
    """Device 0 as libattn_gpu_runtime sees it (attn-c/Gpu.h), or why not."""
    import ctypes

    class Info(ctypes.Structure):
        _fields_ = [("name", ctypes.c_char * 256)] + \
            [(f, ctypes.c_int32) for f in (
                "major", "minor", "sm_count", "clock_khz", "memory_clock_khz",
                "bus_bits", "smem_optin", "reserved0")] + \
            [("total_memory", ctypes.c_uint64), ("bandwidth_gbs",
                                                 ctypes.c_double)]
    try:
        rt = _gpu_runtime(pack)
    except OSError as e:
        return f"libattn_gpu_runtime not loadable: {e}"
    if not rt.attn_gpu_available():
        return "no GPU: " + rt.attn_gpu_unavailable_reason().decode()
    info = Info()
    if rt.attn_gpu_device_info(0, ctypes.byref(info)) != 0:
        rt.attn_gpu_take_error.restype = ctypes.c_char_p
        return "device 0: " + (rt.attn_gpu_take_error() or b"?").decode()
    return (f"{info.name.decode()}, sm_{info.major}{info.minor}, "
            f"{info.sm_count} SMs, {info.smem_optin // 1024} KiB shared "
            f"memory per block, {info.bandwidth_gbs:.0f} GB/s (driver)")


def device_info(torch, pack):
    p = torch.cuda.get_device_properties(0)
    info = {"name": p.name, "sms": p.multi_processor_count,
            "capability": f"{p.major}.{p.minor}",
            "memory_gib": round(p.total_memory / 2**30, 1),
            "torch": torch.__version__,
            "cuda": torch.version.cuda,
            "cudnn": torch.backends.cudnn.version(),
            "attn_runtime": runtime_view(pack)}
    for name, tflops, gbs in PEAKS:
        if name in p.name:
            info["peak_tflops"], info["peak_gbs"] = tflops, gbs
            info["peak_source"] = f"{name} datasheet"
            break
    return info


def worker(args):
    # SDPA's "kernel not used because ..." warnings would flood the log; the
    # table lists each backend's error.
    import warnings
    warnings.filterwarnings("ignore")
    sys.path.insert(0, os.path.join(args.pack, "lib", "python"))
    sys.path.insert(0, HERE)
    try:
        import torch
    except ImportError as e:
        _say("NOGPU", f"PyTorch is not importable ({e}); attn's runtime: "
             f"{gpu_unavailable_reason(args.pack)}")
        return 0
    if args.dry_run_cpu:
        dev = Device(torch, "cpu")
        _say("DEVICE", json.dumps({"name": "CPU (dry run)",
                                   "torch": torch.__version__,
                                   "attn_runtime": runtime_view(args.pack)}))
    elif not torch.cuda.is_available():
        _say("NOGPU", "PyTorch sees no CUDA device; attn's runtime: "
             f"{gpu_unavailable_reason(args.pack)}")
        return 0
    else:
        dev = Device(torch, "cuda")
        torch.cuda.init()
        _say("DEVICE", json.dumps(device_info(torch, args.pack)))
    import attn
    import gpu_reference as ref
    with open(os.path.join(args.pack, "specs.json")) as f:
        specs = {s["name"]: s for s in json.load(f)}
    for name in args.only.split(","):
        _say("START", name)
        try:
            result = run_spec(torch, dev, attn, ref, specs[name], args.pack,
                              args.reps, args.skip_ours)
        except Exception as e:
            result = {"spec": specs[name], "status": "FAIL",
                      "message": _short(e)}
            try:
                dev.sync()
            except Exception:
                result["fatal"] = True
        _say("RESULT", json.dumps(result))
        if result.get("fatal"):
            return 3  # the CUDA context is gone: the parent starts anew
    return 0


# -- The parent: runs workers, survives failures, prints the table ---------

def _reader(stream, lines):
    for line in stream:
        lines.put(line.rstrip("\n"))
    lines.put(None)


def order(specs):
    """Most telling first: prefill 64/8 bf16, decode, then the others."""
    def key(s):
        if s["kind"] == "decode":
            return (1, s["name"])
        if s["kind"] in gpu_serving.KINDS:
            return (3, gpu_serving.KINDS.index(s["kind"]), s["name"])
        first = s["Hq"] == 64 and s["dtype"] == "bf16"
        return (0 if first else 2, s["dtype"], -s["Hq"], s["Nq"], s["name"])
    return sorted(specs, key=key)


def parent(args):
    with open(os.path.join(args.pack, "specs.json")) as f:
        specs = order(json.load(f))
    if args.only:
        wanted = args.only.split(",")
        unknown = [w for w in wanted if w not in {s["name"] for s in specs}]
        if unknown:
            print(f"gpu_bench: unknown specs {unknown}", file=sys.stderr)
            return 2
        specs = [s for s in specs if s["name"] in wanted]
    start = time.monotonic()
    pending = [s["name"] for s in specs]
    by_name = {s["name"]: s for s in specs}
    results, device = {}, {}
    # Our kernel hung or broke the CUDA context this often: after two, the
    # rest of the specs time SDPA alone.
    ours_broken = 0
    while pending:
        if time.monotonic() - start > args.budget:
            for name in pending:
                results[name] = {"spec": by_name[name], "status": "SKIP",
                                 "message": "time budget"}
            break
        cmd = [sys.executable, os.path.abspath(__file__), "--worker",
               "--pack", args.pack, "--reps", str(args.reps),
               "--only", ",".join(pending)]
        if args.dry_run_cpu:
            cmd.append("--dry-run-cpu")
        if ours_broken >= 2:
            cmd.append("--skip-ours")
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True,
                                env=env)
        lines = queue.Queue()
        threading.Thread(target=_reader, args=(proc.stdout, lines),
                         daemon=True).start()
        current, timeout, phase = None, args.startup_timeout, None
        while True:
            try:
                line = lines.get(timeout=timeout)
            except queue.Empty:
                proc.kill()
                ours_broken += phase == "ours"
                what = current or pending[0]
                results[what] = {"spec": by_name[what], "status": "FAIL",
                                 "message": f"no answer in {timeout:.0f} s "
                                 "(hung?); worker killed"}
                pending.remove(what)
                break
            if line is None:
                proc.wait()
                if current and current in pending:
                    ours_broken += phase == "ours"
                    results[current] = {
                        "spec": by_name[current], "status": "FAIL",
                        "message": f"worker died (exit {proc.returncode})"}
                    pending.remove(current)
                elif pending and not results and not device:
                    print(f"gpu_bench: the worker exited "
                          f"({proc.returncode}) before starting",
                          file=sys.stderr)
                    return 1
                break
            tag, _, payload = line.partition(" ")
            if tag == "NOGPU":
                print(f"gpu.sh run: no GPU: {payload}")
                proc.wait()
                return 0
            if tag == "DEVICE":
                device = json.loads(payload)
                print(f"gpu_bench: {device.get('name')}", file=sys.stderr)
            elif tag == "PHASE":
                phase = payload
            elif tag == "START":
                # The variant and serving rows compile FlexAttention
                # (torch.compile) and time several peers: four times the
                # silence allowed.
                slow = by_name.get(payload, {}).get("kind") in gpu_serving.KINDS
                current, phase = payload, None
                timeout = args.spec_timeout * (4 if slow else 1)
            elif tag == "RESULT":
                r = json.loads(payload)
                ours_broken += bool(r.get("fatal")) and phase == "ours"
                name = r["spec"]["name"]
                results[name] = r
                pending.remove(name)
                current = None
                ours = _median(r.get("ours"))
                print(f"gpu_bench: {time.monotonic() - start:.0f} s {name}: "
                      f"{r['status']} {r.get('message', '')[:80]} "
                      f"{'%.3f ms' % ours if ours else ''}", file=sys.stderr)
                if time.monotonic() - start > args.budget:
                    proc.kill()
                    break
            else:
                print(f"gpu_bench: worker: {line}", file=sys.stderr)
        proc.wait()
    rows = [results[s["name"]] for s in specs if s["name"] in results]
    text = [f"GPU: {device.get('name', '?')}, {device.get('sms', '?')} SMs, "
            f"PyTorch {device.get('torch', '?')}, CUDA {device.get('cuda')}, "
            f"cuDNN {device.get('cudnn')}; peak "
            f"{device.get('peak_tflops', '?')} TFLOP/s and "
            f"{device.get('peak_gbs', '?')} GB/s "
            f"({device.get('peak_source', 'unknown')}); "
            f"{time.monotonic() - start:.0f} s", "",
            f"libattn_gpu_runtime: {device.get('attn_runtime', '?')}", "",
            markdown(rows, device)]
    table = "\n".join(text)
    print(table)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "gpu.md"), "w") as f:
            f.write(table + "\n")
        with open(os.path.join(args.out, "gpu.json"), "w") as f:
            json.dump({"device": device, "results": rows}, f, indent=1)
    bad = [r for r in rows if r["status"] != "ok"]
    return 1 if bad else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pack", required=True)
    p.add_argument("--out", default=os.environ.get("OUT", ""))
    p.add_argument("--only", default="")
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--budget", type=float, default=300.0)
    p.add_argument("--spec-timeout", type=float, default=45.0)
    p.add_argument("--startup-timeout", type=float, default=120.0)
    p.add_argument("--dry-run-cpu", action="store_true",
                   help="run on the CPU (a pack of CPU kernels): tests the "
                   "harness without a GPU")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--skip-ours", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    args.pack = os.path.abspath(args.pack)
    return worker(args) if args.worker else parent(args)


if __name__ == "__main__":
    sys.exit(main())
