#!/usr/bin/env bash
# Installs the dependencies (Debian packages; nvdisasm from PyPI where the
# CUDA toolkit is), configures and builds.
#   scripts/build.sh [BUILD_DIR]        (default: build)
# Environment: ATTN_WERROR=ON makes warnings errors (CI sets it).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"

"$root/scripts/install-deps.sh"
"$root/scripts/install-tools.sh"

if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" \
    -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR="$(llvm-config-22 --prefix)/lib/cmake/mlir" \
    -DATTN_WERROR="${ATTN_WERROR:-OFF}"
fi
ninja -C "$build"
