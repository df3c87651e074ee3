#!/usr/bin/env bash
# The GPU benchmark in two steps (docs/GPU.md, "Runtime"):
#   bench/gpu.sh prepare   on a machine that builds the project (MLIR 22): builds
#                          it, compiles the specs of bench/gpu_specs.py with
#                          `attn-compile SPEC --gpu-chip=$ATTN_GPU_CHIP
#                          --emit=shared` and packs them with the runtime
#                          libraries, attn-gpu-info, the Python package and the
#                          benchmark scripts into bench/gpu-pack/ (git-ignored,
#                          at most 60 MiB; every library finds the others
#                          through RPATH $ORIGIN). A spec that does not compile
#                          is reported and left out (its error in
#                          bench/gpu-pack/compile/NAME.err).
#   bench/gpu.sh run       on the machine with the GPU (Python 3 with PyTorch and
#                          numpy; no MLIR, no network), from the pack: checks
#                          each kernel against an f64 reference and times it
#                          against PyTorch SDPA (bench/gpu_bench.py). Prints a
#                          markdown table, also written to $OUT/gpu.md (and
#                          gpu.json) when OUT is set. Without a GPU it says so
#                          and exits 0. Extra arguments go to gpu_bench.py
#                          (--only NAME,..., --reps N, --budget SECONDS).
#                          First it runs the emulator-against-silicon check
#                          (scripts/gpu-emulator-check, packed by prepare).
#                          The pack is git-ignored: a tool that copies the
#                          working tree to the GPU machine must carry
#                          bench/gpu-pack explicitly.
# Environment: ATTN_BUILD_DIR (default build), ATTN_GPU_CHIP (sm_90a),
# ATTN_GPU_PACK (bench/gpu-pack), ATTN_GPU_COMPILE_FLAGS (more attn-compile
# flags), PYTHON (python3).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
build="${ATTN_BUILD_DIR:-$root/build}"
pack="${ATTN_GPU_PACK:-$here/gpu-pack}"
chip="${ATTN_GPU_CHIP:-sm_90a}"
python="${PYTHON:-python3}"
export PYTHONUNBUFFERED=1

usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0"; }

prepare() {
  if [ ! -f "$build/build.ninja" ]; then
    "$root/scripts/build.sh" "$build"
  fi
  ninja -C "$build" -j"${ATTN_JOBS:-1}" attn-compile AttnRuntime \
    AttnGPURuntime attn-gpu-info
  rm -rf "$pack"
  mkdir -p "$pack/compile"
  # The Runtime component: lib/libattn_runtime.so*, lib/libattn_gpu_runtime.so*,
  # lib/python/attn, bin/attn-gpu-info (installed RPATH $ORIGIN/../lib).
  cmake --install "$build" --component Runtime --prefix "$pack/install" >/dev/null
  mv "$pack/install/lib" "$pack/lib"
  mv "$pack/install/bin" "$pack/bin"
  rm -rf "$pack/install" "$pack/lib/cmake"
  cp "$here/gpu_bench.py" "$here/gpu_reference.py" "$here/gpu_specs.py" \
    "$here/gpu_serving.py" "$pack/"
  "$python" "$here/gpu_specs.py" "$pack/specs" >/dev/null
  cp "$pack/specs/specs.json" "$pack/specs.json"

  # Kernels next to the runtime, linked with RPATH $ORIGIN: attn-compile passes
  # --runtime-dir to the linker as -L and -rpath, so a folder literally named
  # '$ORIGIN' (a link to the pack's lib) serves the link.
  local work ok=0 failed=0
  work="$(mktemp -d)"
  ln -s "$pack/lib" "$work/\$ORIGIN"
  local compile="$build/bin/attn-compile"
  read -r -a extra <<< "${ATTN_GPU_COMPILE_FLAGS:-}"
  for spec in "$pack"/specs/*.mlir; do
    local name
    name="$(basename "$spec" .mlir)"
    # A spec's own kernel options (bench/gpu_specs.py's option rows).
    local own=()
    if head -n 1 "$spec" | grep -q '^// attn-compile flags:'; then
      read -r -a own <<< "$(head -n 1 "$spec" | cut -d: -f2-)"
    fi
    # wgmma rows only where the chip has wgmma (sm_90a).
    if [ "$chip" != sm_90a ] && [[ " ${own[*]} " == *" --gpu-wgmma "* ]]; then
      echo "gpu.sh prepare: $name: skipped (--gpu-wgmma needs sm_90a, chip $chip)"
      continue
    fi
    if (cd "$work" && "$compile" "$spec" --gpu-chip="$chip" --emit=shared \
          -o "$pack/lib/lib$name.so" --runtime-dir='$ORIGIN' "${extra[@]}" \
          "${own[@]}") \
          > "$work/err" 2>&1; then
      ok=$((ok + 1))
      echo "gpu.sh prepare: $name: compiled"
    else
      failed=$((failed + 1))
      rm -f "$pack/lib/lib$name.so"
      # The first error, then the start of the log (it can be megabytes).
      sed -i "s|$pack/specs/||g" "$work/err"
      { grep -m 1 "error" "$work/err" || head -n 1 "$work/err"; } \
        > "$pack/compile/$name.err"
      head -n 40 "$work/err" >> "$pack/compile/$name.err"
      echo "gpu.sh prepare: $name: FAILED: $(head -n 1 "$pack/compile/$name.err")"
    fi
  done
  rm -rf "$work"
  # Libraries the kernels need from the build machine's LLVM (libomp).
  local llvm_lib
  llvm_lib="$(llvm-config-22 --libdir 2>/dev/null || true)"
  if [ -n "$llvm_lib" ]; then
    for so in "$pack"/lib/lib*.so; do
      ldd "$so" 2>/dev/null | awk '{print $3}' | grep "^$llvm_lib/" || true
    done | sort -u | while read -r dep; do
      cp -L "$dep" "$pack/lib/"
      echo "gpu.sh prepare: packed $(basename "$dep") (from LLVM)"
    done
  fi
  # The emulator against silicon (scripts/gpu-emulator-check: the wgmma
  # kernels among them), run first by `run`.
  if ATTN_BUILD_DIR="$build" ATTN_GPU_CHIP="$chip" \
      bash "$root/scripts/gpu-emulator-check/prepare.sh" "$pack/emucheck" \
      > "$pack/compile/emucheck.log" 2>&1; then
    echo "gpu.sh prepare: emulator check packed ($pack/emucheck)"
  else
    rm -rf "$pack/emucheck"
    echo "gpu.sh prepare: emulator check FAILED to prepare (see" \
         "$pack/compile/emucheck.log)"
  fi
  local size
  size="$(du -sm "$pack" | cut -f1)"
  echo "gpu.sh prepare: $ok specs compiled, $failed failed; $pack is $size MiB"
  if [ "$size" -gt 60 ]; then
    echo "gpu.sh prepare: the pack is over 60 MiB" >&2
    exit 1
  fi
  if [ "$ok" -eq 0 ]; then
    echo "gpu.sh prepare: no spec compiled (see $pack/compile/); the run" \
         "step will time PyTorch SDPA alone" >&2
  fi
}

run() {
  if [ ! -f "$pack/specs.json" ] || [ ! -f "$pack/gpu_bench.py" ]; then
    echo "gpu.sh run: no pack at $pack (run bench/gpu.sh prepare first)" >&2
    exit 2
  fi
  local out=()
  [ -n "${OUT:-}" ] && out=(--out "$OUT")
  # The emulator against silicon first (seconds; its table in
  # $OUT/emucheck.txt).
  if [ -f "$pack/emucheck/check.py" ] && "$python" -c \
      "import torch, numpy; assert torch.cuda.is_available()" 2>/dev/null; then
    "$python" "$pack/emucheck/check.py" || echo "gpu.sh run: emulator check failed"
  fi
  exec "$python" "$pack/gpu_bench.py" --pack "$pack" "${out[@]}" "$@"
}

case "${1:-}" in
  prepare) shift; prepare "$@" ;;
  run) shift; run "$@" ;;
  -h|--help) usage ;;
  *) usage >&2; exit 2 ;;
esac
