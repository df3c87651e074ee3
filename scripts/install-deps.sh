#!/usr/bin/env bash
# Installs the Debian packages this project needs. Idempotent and
# non-interactive; safe to run on every CI run (a no-op when all is present).
set -euo pipefail

PKGS=(
  mlir-22-tools libmlir-22-dev llvm-22-dev llvm-22-tools
  libomp-22-dev
  cmake ninja-build g++ libgtest-dev python3
  libdlpack-dev python3-numpy
  python3-venv
  # CPython headers: the Python package's fast call path (lib/PythonFastCall).
  python3-dev
  # AArch64 kernels: cross-linked and run under qemu by test/Target.
  gcc-aarch64-linux-gnu g++-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user
)

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
