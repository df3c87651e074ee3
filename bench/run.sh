#!/usr/bin/env bash
# The attention benchmark in one command (see docs/Benchmarks.md):
#   bench/run.sh [--quick] [--threads 1,2] [--shapes prefill,decode,...]
#                [--no-torch] [--keep]
# Sets up what it needs, then runs bench/bench.py:
#   - Debian packages (apt-get, only those missing): libopenblas-dev, g++,
#     python3-venv;
#   - build/bin/attn-run: `ninja -C build attn-run` when build/ is configured,
#     scripts/build.sh otherwise (ATTN_BUILD_DIR overrides the folder);
#   - bench/.venv with numpy, matplotlib and torch from PyPI (PyPI's Linux torch
#     wheel brings CUDA libraries: about 3 GB to download, 5.5 GB installed);
#   - the C++ helpers (OpenBLAS baseline, SGEMM / bandwidth probe), built with
#     g++ -O3 -march=native into a scratch folder.
# Inputs, outputs and the helpers live in a scratch folder under $TMPDIR that
# is removed at the end (--keep keeps it). Results: bench/results/results.csv
# and bench/results/chart.png.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
build="${ATTN_BUILD_DIR:-$root/build}"

keep=0
args=()
for a in "$@"; do
  case "$a" in
    --keep) keep=1 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) args+=("$a") ;;
  esac
done

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"

# 1. Debian packages, only when missing.
missing=()
for pkg in libopenblas-dev g++ python3-venv; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "run.sh: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
fi

# 2. attn-run, up to date.
if [ -f "$build/build.ninja" ]; then
  ninja -C "$build" attn-run
else
  "$root/scripts/build.sh" "$build"
fi

# 3. The virtual environment.
venv="$here/.venv"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c "import numpy, matplotlib, torch" 2>/dev/null; then
  echo "run.sh: installing numpy, matplotlib and torch into bench/.venv (torch from PyPI is large)"
  start=$(date +%s)
  "$venv/bin/pip" install --quiet --upgrade pip
  "$venv/bin/pip" install --quiet numpy matplotlib torch
  echo "run.sh: pip install took $(( $(date +%s) - start )) s"
fi

# 4. Scratch folder: a private copy of attn-run (the build folder may be
#    rebuilt while the benchmark runs) and the C++ helpers.
work="$(mktemp -d "${TMPDIR:-/tmp}/attn-bench.XXXXXX")"
if [ "$keep" -eq 0 ]; then
  trap 'rm -rf "$work"' EXIT
else
  echo "run.sh: keeping $work"
fi
mkdir -p "$work/bin"
cp "$build/bin/attn-run" "$work/bin/attn-run"
cxx=(g++ -std=c++17 -O3 -march=native -ffast-math -fopenmp)
"${cxx[@]}" -o "$work/bin/openblas_attention" "$here/openblas_attention.cpp" -lopenblas
"${cxx[@]}" -o "$work/bin/machine_rates" "$here/machine_rates.cpp" -lopenblas

# 5. Run.
export OPENBLAS_CORETYPE=SkylakeX
"$venv/bin/python" "$here/bench.py" --attn-run "$work/bin/attn-run" \
  --bin "$work/bin" --work "$work" "${args[@]+"${args[@]}"}"
