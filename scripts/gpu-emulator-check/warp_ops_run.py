"""Runs the warp_ops kernels (warp_ops_prepare.sh) on the GPU with cupy,
prints every buffer as attn-run --device=gpu-emulate --print does, and
compares the printout with the emulator's (emu.txt). Exit status 1 on any
difference; the table goes to $OUT/warp_ops.txt too."""
import json, os, sys
import numpy as np
import cupy as cp

here = os.path.dirname(os.path.abspath(__file__))
shapes = [((6, 32, 8), np.float16), ((32, 2, 2), np.float32),
          ((32, 2, 2), np.float32), ((32, 2, 2), np.float32),
          ((4, 5, 32), np.int32), ((4, 5, 32), np.int32)]
bufs = [cp.zeros(s, dtype=t) for s, t in shapes]
for launch in json.load(open(os.path.join(here, "launches.json"))):
    mod = cp.RawModule(path=os.path.join(here, launch["module"] + ".cubin"))
    kernel = mod.get_function(launch["function"])
    kernel((1,), (32,), tuple(bufs[a] for a in launch["args"]))
cp.cuda.Device().synchronize()
names = {np.float16: "f16", np.float32: "f32", np.int32: "i32"}
lines = []
for i, ((shape, t), b) in enumerate(zip(shapes, bufs)):
    v = cp.asnumpy(b).astype(np.float64).ravel()
    lines.append(f"arg{i}: {names[t]} [{', '.join(map(str, shape))}] "
                 f"sum {v.sum():.6g}")
    for j in range(0, len(v), 8):
        lines.append(" ".join(f"{x:.6g}" for x in v[j:j + 8]))
emu = [l for l in open(os.path.join(here, "emu.txt")).read().splitlines()
       if not l.startswith("emulate:")]
diff = [(k, g, e) for k, (g, e) in enumerate(zip(lines, emu)) if g != e]
report = [f"{len(lines)} lines from the GPU, {len(emu)} from the emulator, "
          f"{len(diff)} differ" + ("" if len(lines) == len(emu) else
                                   " (line counts differ)")]
section = ""
for k, g, e in diff[:40]:
    report.append(f"line {k}: gpu '{g}' | emulator '{e}'")
text = "\n".join(report)
print(text)
if os.environ.get("OUT"):
    open(os.path.join(os.environ["OUT"], "warp_ops.txt"), "w").write(
        text + "\n\n" + "\n".join(lines) + "\n")
sys.exit(1 if diff or len(lines) != len(emu) else 0)
