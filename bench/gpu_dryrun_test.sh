#!/usr/bin/env bash
# The GPU benchmark's harness without a GPU: a pack of small CPU kernels,
# bench/gpu_bench.py --dry-run-cpu, and the table it must print (a compiled
# prefill and decode spec, a spec that did not compile as a FAIL row).
#   bench/gpu_dryrun_test.sh BUILD_DIR PYTHON     (exit 77: no torch)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="$1"
python="$2"
"$python" -c "import torch, numpy" 2>/dev/null || { echo "no torch: skipped"; exit 77; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
pack="$work/pack"
mkdir -p "$pack/compile"
cmake --install "$build" --component Runtime --prefix "$pack" >/dev/null
cp "$here"/gpu_bench.py "$here"/gpu_reference.py "$here"/gpu_specs.py \
  "$here"/gpu_serving.py "$pack/"
(cd "$work" && "$python" - "$here" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[1])
import gpu_specs
specs = [
    {"name": "p_small", "kind": "prefill", "B": 2, "Hq": 4, "Hkv": 2,
     "Nq": 64, "Nk": 64, "D": 32, "dtype": "bf16", "causal": "top_left"},
    {"name": "d_small", "kind": "decode", "B": 2, "Hq": 4, "Hkv": 2, "Nq": 1,
     "Nk": 128, "D": 32, "dtype": "bf16", "causal": None},
    {"name": "missing", "kind": "prefill", "B": 1, "Hq": 2, "Hkv": 1,
     "Nq": 16, "Nk": 16, "D": 16, "dtype": "f16", "causal": "top_left"}]
# The variant and serving rows (bench/gpu_serving.py), small.
specs += [
    {"name": "dm_small", "kind": "docmask", "B": 1, "Hq": 4, "Hkv": 4,
     "Nq": 64, "Nk": 64, "D": 32, "dtype": "bf16", "causal": "top_left",
     "docs": 3},
    {"name": "pg_small", "kind": "paged", "B": 2, "Hq": 4, "Hkv": 2, "Nq": 1,
     "Nk": 64, "D": 32, "dtype": "bf16", "causal": None, "page": 16,
     "contiguous": "pc_small"},
    {"name": "pc_small", "kind": "decode", "B": 2, "Hq": 4, "Hkv": 2,
     "Nq": 1, "Nk": 64, "D": 32, "dtype": "bf16", "causal": None},
    {"name": "rg_small", "kind": "ragged", "B": 1, "Hq": 4, "Hkv": 2,
     "Nq": 41, "Nk": 41, "D": 32, "dtype": "bf16", "causal": "bottom_right",
     "lengths": [5, 20, 16], "padded": "rp_small"},
    {"name": "rp_small", "kind": "prefill", "B": 3, "Hq": 4, "Hkv": 2,
     "Nq": 20, "Nk": 20, "D": 32, "dtype": "bf16", "causal": "top_left"}]
json.dump(specs, open("pack/specs.json", "w"))
for s in specs:
    open(s["name"] + ".mlir", "w").write(gpu_specs.spec_text(s))
open("pack/compile/missing.err", "w").write("attn-compile: error: boom\n")
PY
)
for n in p_small d_small dm_small pg_small pc_small rg_small rp_small; do
  "$build/bin/attn-compile" "$work/$n.mlir" --emit=shared \
    -o "$pack/lib/lib$n.so" --runtime-dir="$pack/lib"
done
# The fake CUDA driver: the header shows what libattn_gpu_runtime sees.
rc=0
ATTN_CUDA_DRIVER="$build/lib/libattn_fake_cuda.so" \
  "$python" "$pack/gpu_bench.py" --pack "$pack" --dry-run-cpu --reps 3 \
  --out "$work/out" > "$work/stdout" || rc=$?
cat "$work/stdout"
fail() { echo "gpu_dryrun_test: $1"; exit 1; }
[ "$rc" -eq 1 ] || fail "exit $rc, expected 1 (one spec failed)"
cmp -s "$work/stdout" <(cat "$work/out/gpu.md") || fail "stdout differs from gpu.md"
grep -qE '^\| p_small \| B2 H4/2 64x64 d32 bf16 causal \| [0-9.]+ \([0-9.]+-[0-9.]+\) 3 reps \| [0-9.e+-]+ \| n/a \| [0-9.e+-]+ \(2e-02; SDPA [0-9.e+-]+\) \| [0-9.]+ \| err \| err \| [0-9.e+-]+ \| [0-9.]+x \|$' "$work/stdout" \
  || fail "no p_small row"
grep -qE '^\| d_small \| B2 H4/2 1x128 d32 bf16 \| [0-9.]+ \(' "$work/stdout" || fail "no d_small row"
grep -qF '| missing | B1 H2/1 16x16 d16 f16 causal | FAIL: not compiled: attn-compile: error: boom |' \
  "$work/stdout" || fail "no FAIL row"
grep -qF '"status": "ok"' "$work/out/gpu.json" || fail "gpu.json"
# The variant and serving rows: ours checked against the reference, the
# peers (our contiguous cache and padded batch, SDPA; Flex where it runs).
for n in dm_small pg_small rg_small; do
  grep -qE "^\| $n \| B[0-9]+ H[0-9]+/[0-9]+ [0-9]+x[0-9]+ d32 bf16[^|]* \| [0-9.]+ \([0-9.]+-[0-9.]+\) \| [0-9.e+-]+ \(2e-02\) \| " \
    "$work/stdout" || fail "no $n row"
done
grep -qE '^\| pg_small \| .* ours contiguous [0-9.]+ \([0-9.e+-]+\); SDPA contiguous [0-9.]+' "$work/stdout" \
  || fail "no contiguous peers in the paged row"
grep -qE '^\| rg_small \| .* ours padded [0-9.]+ \([0-9.e+-]+\); SDPA padded [0-9.]+' "$work/stdout" \
  || fail "no padded peers in the ragged row"
grep -qE '^\| dm_small \| .* SDPA dense mask [0-9.]+ \([0-9.e+-]+\) \| >= 1.0x Flex' "$work/stdout" \
  || fail "no dense-mask peer in the document-mask row"
grep -qxF 'libattn_gpu_runtime: Fake GPU 0, sm_90, 132 SMs, 227 KiB shared memory per block, 4023 GB/s (driver)' \
  "$work/stdout" || fail "no runtime view"

# A kernel that hangs and one that kills the worker: FAIL rows, the worker
# restarted each time, and after two such failures the remaining specs time
# SDPA alone.
cp "$pack/lib/libp_small.so" "$pack/lib/libhang.so"
cp "$pack/lib/libp_small.so" "$pack/lib/libcrash.so"
"$python" - "$pack/specs.json" <<'PY'
import json, sys
specs = json.load(open(sys.argv[1]))
for name, n in (("hang", 16), ("crash", 32)):
    specs.append(dict(specs[0], name=name, Nq=n, Nk=n))
json.dump(specs, open(sys.argv[1], "w"))
PY
rc=0
ATTN_GPU_BENCH_TEST_HANG=hang ATTN_GPU_BENCH_TEST_CRASH=crash \
  "$python" "$pack/gpu_bench.py" --pack "$pack" --dry-run-cpu --reps 3 \
  --spec-timeout 5 --only hang,crash,p_small > "$work/stdout2" || rc=$?
cat "$work/stdout2"
[ "$rc" -eq 1 ] || fail "exit $rc with a hang and a crash, expected 1"
grep -qF '| hang | B2 H4/2 16x16 d32 bf16 causal | FAIL: no answer in 5 s (hung?); worker killed |' \
  "$work/stdout2" || fail "no row for the hang"
grep -qF '| crash | B2 H4/2 32x32 d32 bf16 causal | FAIL: worker died (exit 9) |' \
  "$work/stdout2" || fail "no row for the crash"
grep -qE '^\| p_small \| .* \| SKIP: ours skipped: .* \| [0-9.]+ \| err \| err \|' \
  "$work/stdout2" || fail "p_small not skipped after two failures"
# The user-facing errors of the scripts.
rc=0
ATTN_GPU_PACK="$work/nothing" "$here/gpu.sh" run > "$work/out3" 2>&1 || rc=$?
[ "$rc" -eq 2 ] && grep -qF "gpu.sh run: no pack at $work/nothing (run bench/gpu.sh prepare first)" \
  "$work/out3" || fail "gpu.sh run without a pack: exit $rc, $(cat "$work/out3")"
rc=0
"$here/gpu.sh" > "$work/out3" 2>&1 || rc=$?
[ "$rc" -eq 2 ] && grep -qF "bench/gpu.sh prepare" "$work/out3" || fail "gpu.sh usage"
rc=0
"$python" "$pack/gpu_bench.py" --pack "$pack" --only nope > "$work/out3" 2>&1 || rc=$?
[ "$rc" -eq 2 ] && grep -qF "gpu_bench: unknown specs ['nope']" "$work/out3" \
  || fail "unknown spec: exit $rc, $(cat "$work/out3")"
# Without a GPU (the machines these tests run on) the run step says so.
if "$python" -c "import torch, sys; sys.exit(torch.cuda.is_available())"; then
  rc=0
  ATTN_GPU_PACK="$pack" PYTHON="$python" "$here/gpu.sh" run > "$work/out3" 2>&1 || rc=$?
  [ "$rc" -eq 0 ] && grep -qF "gpu.sh run: no GPU: PyTorch sees no CUDA device; attn's runtime: no NVIDIA driver" \
    "$work/out3" || fail "no GPU: exit $rc, $(cat "$work/out3")"
  echo "gpu_dryrun_test: the no-GPU message checked"
fi
echo "gpu_dryrun_test: ok"
