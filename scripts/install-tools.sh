#!/usr/bin/env bash
# Installs the tools from the package registry (PyPI) that tests use beside
# the Debian packages: nvdisasm (PyPI's nvidia-cuda-nvdisasm) for the SASS
# checks of the GPU kernels (test/GPU/sass.test), into .venv-tools/ at the
# repository root (git-ignored). Only where the CUDA toolkit (ptxas) is
# present; idempotent. Without network the install is reported and the SASS
# test is UNSUPPORTED (lit says why), not failed.
#   scripts/install-tools.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="$root/.venv-tools"
cuda="${CUDA_HOME:-/usr/local/cuda}"
if ! command -v ptxas >/dev/null 2>&1 && [ ! -x "$cuda/bin/ptxas" ]; then
  echo "install-tools: no CUDA toolkit (ptxas): nvdisasm not needed"
  exit 0
fi
if compgen -G "$venv/lib/python3*/site-packages/nvidia/cu*/bin/nvdisasm" \
     >/dev/null; then
  echo "install-tools: nvdisasm present"
  exit 0
fi
if ! { [ -x "$venv/bin/pip" ] || python3 -m venv "$venv"; } ||
   ! "$venv/bin/pip" install -q --disable-pip-version-check \
       "nvidia-cuda-nvdisasm>=13,<14"; then
  echo "install-tools: could not install nvidia-cuda-nvdisasm from PyPI;" \
       "the SASS checks will be UNSUPPORTED" >&2
  exit 0
fi
echo "install-tools: installed nvdisasm into $venv"
