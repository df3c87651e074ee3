# Runs the kernels of scripts/gpu-emulator-check/*.mlir on the GPU on the
# inputs prepare.sh saved and compares their outputs with the warp-level
# emulator's (same kernels, same inputs) and with the f64 reference. Prints a
# table; writes it to $OUT/emucheck.txt when OUT is set.
import os, sys, time
import numpy as np
import torch
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "python"))
import attn

specs = {
    "tail_nomask": ("f16", ["q", "k", "v"]),
    "gqa_causal": ("f16", ["q", "k", "v"]),
    "window_alibi_bf16": ("bf16", ["q", "k", "v", "alibi"]),
    "decode_kvlen": ("f16", ["q", "k", "v", "kv_len"]),
    "softcap_bias": ("f16", ["q", "k", "v", "bias"]),
    # S = Q K^T on wgmma (sm_90a only; prepare.sh skips them elsewhere).
    "prefill_wgmma": ("bf16", ["q", "k", "v"]),
    "decode_wgmma": ("f16", ["q", "k", "v", "kv_len"]),
}
tdt = {"f16": torch.float16, "bf16": torch.bfloat16}
lines = [f"torch {torch.__version__}, {torch.cuda.get_device_name(0)}",
         "spec result | max|gpu-emu| | max|gpu-ref| | max|emu-ref| | "
         "elements differing gpu vs emu (> 1e-3 rel)"]
for name, (dt, args) in specs.items():
    data = os.path.join(here, "data")
    if not os.path.exists(os.path.join(here, "lib", f"lib{name}.so")):
        lines.append(f"{name}: not prepared (see prepare.sh's output)")
        continue
    ins = []
    for a in args:
        x = np.load(os.path.join(data, f"{name}_{a}.npy"))
        t = torch.from_numpy(x)
        if a in ("q", "k", "v"):
            t = t.to(tdt[dt])
        ins.append(t.cuda())
    refs = [np.load(os.path.join(data, f"ref_{name}_{r}.npy")) for r in ("out", "lse")]
    emus = [np.load(os.path.join(data, f"emu_{name}_{r}.npy")) for r in ("out", "lse")]
    outs = [torch.empty(refs[0].shape, dtype=tdt[dt], device="cuda"),
            torch.empty(refs[1].shape, dtype=torch.float32, device="cuda")]
    try:
        lib = attn.load_library(os.path.join(here, "lib", f"lib{name}.so"))
        lib[name](*ins, out=outs)
        torch.cuda.synchronize()
    except Exception as e:
        lines.append(f"{name}: FAILED {e}")
        continue
    for r, o, ref, emu in zip(("out", "lse"), outs, refs, emus):
        g = o.float().cpu().numpy().astype(np.float64)
        ge = np.abs(g - emu).max()
        gr = np.abs(g - ref).max()
        er = np.abs(emu - ref).max()
        ndiff = int((np.abs(g - emu) > 1e-3 * (1 + np.abs(emu))).sum())
        lines.append(f"{name} {r} | {ge:.3g} | {gr:.3g} | {er:.3g} | {ndiff} of {g.size}")
text = "\n".join(lines)
print(text)
out = os.environ.get("OUT")
if out:
    open(os.path.join(out, "emucheck.txt"), "w").write(text + "\n")
