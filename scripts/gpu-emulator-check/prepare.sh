#!/usr/bin/env bash
# The emulator against silicon (docs/GPU.md, "Warp-level emulator"): the same
# kernels on the same inputs, once on the warp-level emulator and once on an
# NVIDIA GPU, compared element by element (and each with the f64 reference).
#   scripts/gpu-emulator-check/prepare.sh PACK   here (MLIR 22, CUDA toolkit):
#       builds attn-run, attn-compile and the runtimes, writes each spec's
#       seeded inputs, the emulator's and the reference's outputs, compiles
#       the kernels for sm_90a and packs all with check.py into PACK (a few
#       MiB; put it in an ignored folder of the checkout the device tool
#       sends, e.g. build-gpuemu-check, and carry it).
#   python3 PACK/check.py                         on the GPU machine (PyTorch,
#       numpy): runs the kernels and prints max |gpu - emulator|,
#       max |gpu - reference|, max |emulator - reference| per output.
# Environment: ATTN_BUILD_DIR (default build), ATTN_GPU_CHIP (sm_90a).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="${ATTN_BUILD_DIR:-$root/build}"
chip="${ATTN_GPU_CHIP:-sm_90a}"
pack="${1:?usage: prepare.sh PACK}"
ninja -C "$build" -j"${ATTN_JOBS:-1}" attn-run attn-compile AttnRuntime attn-gpu-info \
  AttnGPURuntime
rm -rf "$pack"
mkdir -p "$pack/data" "$pack/python"
pack="$(cd "$pack" && pwd)"
cmake --install "$build" --component Runtime --prefix "$pack/install" >/dev/null
mv "$pack/install/lib" "$pack/lib"
rm -rf "$pack/install" "$pack/lib/cmake" "$pack/lib/python"
cp -r "$root/python/attn" "$pack/python/"
cp "$here/check.py" "$pack/"
work="$(mktemp -d)"
ln -s "$pack/lib" "$work/\$ORIGIN"
run="$build/bin/attn-run"
for spec in "$here"/*.mlir; do
  name="$(basename "$spec" .mlir)"
  args="q k v"
  case "$name" in
    window_alibi_bf16) args="q k v alibi" ;;
    decode_kvlen | decode_wgmma) args="q k v kv_len" ;;
    softcap_bias) args="q k v bias" ;;
  esac
  # A spec's own kernel options (first line "// attn-compile flags: ..."),
  # for the emulator and the compiler alike; wgmma specs need sm_90a.
  own=()
  if head -n 1 "$spec" | grep -q '^// attn-compile flags:'; then
    read -r -a own <<< "$(head -n 1 "$spec" | cut -d: -f2-)"
  fi
  if [ "$chip" != sm_90a ] && [[ " ${own[*]} " == *" --gpu-wgmma "* ]]; then
    echo "$name: skipped (--gpu-wgmma needs sm_90a, chip $chip)"
    continue
  fi
  save=() load=()
  for a in $args; do
    save+=(--save-input "$a=$pack/data/${name}_$a.npy")
    load+=(--input "$a=$pack/data/${name}_$a.npy")
  done
  "$run" "$spec" --seed=7 --reps=0 "${save[@]}" \
    --reference-output "out=$pack/data/ref_${name}_out.npy" \
    --reference-output "lse=$pack/data/ref_${name}_lse.npy" >/dev/null
  # The emulator's outputs (a known kernel bug makes some differ from the
  # reference: the GPU must then differ the same way).
  "$run" "$spec" --device=gpu-emulate "${load[@]}" "${own[@]}" \
    --output "out=$pack/data/emu_${name}_out.npy" \
    --output "lse=$pack/data/emu_${name}_lse.npy" | sed "s/^/$name: /"
  (cd "$work" && "$build/bin/attn-compile" "$spec" --gpu-chip="$chip" \
    --emit=shared -o "$pack/lib/lib$name.so" --runtime-dir='$ORIGIN' \
    "${own[@]}")
done
rm -rf "$work"
echo "prepare.sh: $(du -sh "$pack" | cut -f1) in $pack"
