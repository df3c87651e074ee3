#!/usr/bin/env bash
# The attention benchmark in one command (see docs/Benchmarks.md):
#   bench/run.sh [--quick] [--threads 1,2] [--shapes prefill,decode,...]
#                [--no-torch] [--keep] [--attn-run PATH]
#                [--target-cpu NAME] [--target-features +a,-b] [--results DIR]
#   bench/run.sh --variants [--threads 1,2] [--no-torch]
#     user variants instead (bench/variants.py: mask regions against built-in
#     and dense masks and SDPA; results in bench/results/variants.md)
#   bench/run.sh --serving [--threads 1,2] [--no-torch]
#     serving shapes instead (bench/serving.py: paged decode against a
#     contiguous cache and SDPA, ragged prefill against a padded batch;
#     results in bench/results/serving.md)
# Sets up what it needs, then runs bench/bench.py:
#   - Debian packages (apt-get, only those missing): libopenblas-dev, g++,
#     python3-venv;
#   - build/bin/attn-run: `ninja -C build attn-run` when build/ is configured,
#     scripts/build.sh otherwise (ATTN_BUILD_DIR overrides the folder);
#     --attn-run PATH uses that binary instead and builds nothing;
#   - bench/.venv with numpy, matplotlib and torch from PyPI (PyPI's Linux torch
#     wheel brings CUDA libraries: about 3 GB to download, 5.5 GB installed;
#     not installed with --no-torch);
#   - the C++ helpers (OpenBLAS baseline, SGEMM / bandwidth probe), built with
#     g++ -O3 -march=native into a scratch folder, and the per-ISA peak probe
#     (bench/isa_rates.cpp: f32 FMA, vdpbf16ps, AMX tdpbf16ps on one core).
# --target-cpu / --target-features compile our code for another CPU (e.g.
# --target-cpu znver3 on an AVX-512 host measures the AVX2 code); SDPA and
# OpenBLAS still run natively. OpenBLAS's core type is chosen by bench.py from
# what OpenBLAS detects and the CPU's flags (bench/hostcpu.py).
# Inputs, outputs and the helpers live in a scratch folder under $TMPDIR that
# is removed at the end (--keep keeps it). Results: bench/results/ (host
# target) or bench/results/<target-cpu>/: results.csv and chart.png.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
build="${ATTN_BUILD_DIR:-$root/build}"

keep=0
variants=0
serving=0
attn_run=""
no_torch=0
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --keep) keep=1 ;;
    --variants) variants=1 ;;
    --serving) serving=1 ;;
    --attn-run) [ $# -ge 2 ] || { echo "run.sh: --attn-run needs a path" >&2; exit 2; }
                attn_run="$2"; shift ;;
    --attn-run=*) attn_run="${1#--attn-run=}" ;;
    --no-torch) no_torch=1; args+=("$1") ;;
    -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
    *) args+=("$1") ;;
  esac
  shift
done
if [ -n "$attn_run" ] && [ ! -x "$attn_run" ]; then
  echo "run.sh: --attn-run $attn_run is not an executable file" >&2
  exit 2
fi

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

# 2. attn-run, up to date (unless --attn-run names a binary).
if [ -n "$attn_run" ]; then
  echo "run.sh: using $attn_run (not rebuilt)"
elif [ -f "$build/build.ninja" ]; then
  ninja -C "$build" attn-run
  attn_run="$build/bin/attn-run"
else
  "$root/scripts/build.sh" "$build"
  attn_run="$build/bin/attn-run"
fi

# 3. The virtual environment.
venv="$here/.venv"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
mods=(numpy matplotlib)
[ "$no_torch" -eq 1 ] || mods+=(torch)
if ! "$venv/bin/python" -c "import $(IFS=,; echo "${mods[*]}")" 2>/dev/null; then
  echo "run.sh: installing ${mods[*]} into bench/.venv (torch from PyPI is large)"
  start=$(date +%s)
  "$venv/bin/pip" install --quiet --upgrade pip
  "$venv/bin/pip" install --quiet "${mods[@]}"
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
cp "$attn_run" "$work/bin/attn-run"
if [ "$serving" -eq 1 ]; then
  "$venv/bin/python" "$here/serving.py" --attn-run "$work/bin/attn-run" \
    --work "$work" "${args[@]+"${args[@]}"}"
  exit 0
fi
if [ "$variants" -eq 1 ]; then
  "$venv/bin/python" "$here/variants.py" --attn-run "$work/bin/attn-run" \
    --work "$work" "${args[@]+"${args[@]}"}"
  exit 0
fi
cxx=(g++ -std=c++17 -O3 -march=native -ffast-math -fopenmp)
# The project's .npy reader (lib/Support/Npy.cpp: plain C++, no LLVM).
"${cxx[@]}" -I "$here/../include" -o "$work/bin/openblas_attention" \
  "$here/openblas_attention.cpp" "$here/../lib/Support/Npy.cpp" -lopenblas
"${cxx[@]}" -o "$work/bin/machine_rates" "$here/machine_rates.cpp" -lopenblas
# The per-ISA peak probe: each probe carries its own target attribute, and
# bench.py runs only those the CPU's flags allow (no -march=native: the
# compiler must not use AVX-512 or AMX outside them).
g++ -std=c++17 -O2 -o "$work/bin/isa_rates" "$here/isa_rates.cpp"

# 5. Run. OPENBLAS_CORETYPE is not set here: bench.py probes what OpenBLAS
#    detects and sets it only where that is weaker than the CPU allows.
"$venv/bin/python" "$here/bench.py" --attn-run "$work/bin/attn-run" \
  --bin "$work/bin" --work "$work" "${args[@]+"${args[@]}"}"
