#!/usr/bin/env bash
# Warp-level ops on silicon against the emulator (docs/GPU.md, "Warp-level
# emulator"): the kernels of warp_ops.py (ldmatrix x1/x2/x4 +/- .trans,
# mma.sync m16n8k16/m16n8k8 f16 and m16n8k8 tf32, shuffles in every mode) on
# lane-derived integers, whose results are exact.
#   warp_ops_prepare.sh PACK   here: the emulator's printout (emu.txt), the
#                              kernels lowered with mlir-opt and assembled
#                              with ptxas (one cubin per launch), and
#                              warp_ops_run.py, into PACK.
#   python3 PACK/warp_ops_run.py   on the GPU machine (cupy): prints the
#                              buffers in attn-run's format and compares them
#                              with emu.txt.
# Environment: ATTN_BUILD_DIR (default build), CUDA_HOME (/usr/local/cuda).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="${ATTN_BUILD_DIR:-$root/build}"
cuda="${CUDA_HOME:-/usr/local/cuda}"
pack="${1:?usage: warp_ops_prepare.sh PACK}"
mkdir -p "$pack"
pack="$(cd "$pack" && pwd)"
python3 "$here/warp_ops.py" > "$pack/warp_ops.mlir"
"$build/bin/attn-run" "$pack/warp_ops.mlir" --device=gpu-emulate --print \
  > "$pack/emu.txt"
"$(llvm-config-22 --bindir)/mlir-opt" "$pack/warp_ops.mlir" \
  --pass-pipeline="builtin.module(gpu-launch-sink-index-computations,gpu-kernel-outlining,convert-nvgpu-to-nvvm,convert-vector-to-scf,convert-scf-to-cf,convert-nvvm-to-llvm,convert-func-to-llvm,expand-strided-metadata,nvvm-attach-target{O=3 chip=sm_90 features=+ptx80},lower-affine,convert-arith-to-llvm,convert-index-to-llvm,gpu.module(convert-gpu-to-nvvm{use-bare-ptr-memref-call-conv=true},canonicalize,cse,reconcile-unrealized-casts),gpu-to-llvm{use-bare-pointers-for-kernels=true},gpu-module-to-binary{format=isa toolkit=$cuda})" \
  -o "$pack/lowered.mlir"
"$(llvm-config-22 --bindir)/mlir-opt" "$pack/warp_ops.mlir" \
  --gpu-launch-sink-index-computations --gpu-kernel-outlining \
  -o "$pack/outlined.mlir"
# One PTX per gpu.binary (MLIR escapes bytes as \XX), then a cubin each; the
# launch order and arguments from the outlined launches.
python3 - "$pack" <<'PY'
import json, re, sys
pack = sys.argv[1]
text = open(f"{pack}/lowered.mlir").read()
kernels = []
for m in re.finditer(r'gpu\.binary @(\w+) .*?assembly = "((?:[^"\\]|\\.)*)"', text):
    name, body = m.group(1), m.group(2)
    ptx = re.sub(r"\\([0-9A-Fa-f]{2})", lambda x: chr(int(x.group(1), 16)),
                 body).replace('\\"', '"').replace("\\\\", "\\")
    open(f"{pack}/{name}.ptx", "w").write(ptx)
    kernels.append(name)
launches = re.findall(r"gpu\.launch_func\s+@(\w+)::@(\w+).*?args\(([^)]*)\)",
                      open(f"{pack}/outlined.mlir").read())
order = []
for module, fn, args in launches:
    order.append({"module": module, "function": fn,
                  "args": [int(a) for a in re.findall(r"%arg(\d+)", args)]})
json.dump(order, open(f"{pack}/launches.json", "w"), indent=1)
print(f"{len(kernels)} kernels, {len(order)} launches")
PY
for ptx in "$pack"/*.ptx; do
  "$cuda/bin/ptxas" -arch=sm_90 "$ptx" -o "${ptx%.ptx}.cubin"
done
rm -f "$pack"/*.ptx "$pack/lowered.mlir" "$pack/outlined.mlir"
cp "$here/warp_ops_run.py" "$pack/"
echo "warp_ops_prepare.sh: $(du -sh "$pack" | cut -f1) in $pack"
