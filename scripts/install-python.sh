#!/usr/bin/env bash
# Installs the Python packages the Python tests use from the package
# registry (PyPI) into .venv-python/ at the repository root (git-ignored):
# numpy, PyTorch and transformers, for attn-python-torch(-ctypes),
# attn-python-flash-torch, attn-python-ring, attn-python-transformers, the
# torchrun examples of attn-doc-embedding and the compiled fast path's tests
# (test/Python/CMakeLists.txt uses this venv's python when it exists).
# Idempotent: nothing is downloaded when the three import. PyPI's torch
# wheel brings CUDA libraries: about 3 GB to download, 5.6 GB installed,
# about 1.5 minutes on the CI machine. Without network (or with
# ATTN_NO_PYTHON_DEPS=1) the install is reported and those tests are
# skipped with the reason (they say which module is missing), not failed.
#   scripts/install-python.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="$root/.venv-python"
if [ "${ATTN_NO_PYTHON_DEPS:-0}" = 1 ]; then
  echo "install-python: ATTN_NO_PYTHON_DEPS=1: the PyTorch tests will be skipped"
  exit 0
fi
if [ -x "$venv/bin/python" ] &&
   "$venv/bin/python" -c "import numpy, torch, transformers" 2>/dev/null; then
  echo "install-python: numpy, torch and transformers present in $venv"
  exit 0
fi
# A venv whose python no longer runs (the system's Python changed) is made
# again. No pip cache: the wheels would stay as 3 GB more on disk.
if ! "$venv/bin/python" -m pip --version >/dev/null 2>&1 &&
   ! python3 -m venv --clear "$venv"; then
  echo "install-python: could not create $venv (python3-venv);" \
       "the PyTorch tests will be skipped" >&2
  exit 0
fi
if ! "$venv/bin/python" -m pip install -q --disable-pip-version-check \
       --no-cache-dir --timeout 30 numpy torch transformers; then
  echo "install-python: could not install numpy, torch and transformers" \
       "from PyPI into $venv; the PyTorch tests will be skipped" >&2
  exit 0
fi
echo "install-python: installed numpy, torch and transformers into $venv"
