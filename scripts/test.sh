#!/usr/bin/env bash
# The project's test command: builds (installing what is missing) and runs
# every test (lit + FileCheck regression tests and the GoogleTest binaries)
# through ctest.
#   scripts/test.sh [BUILD_DIR]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
# PyTorch and transformers for the Python tests (before the build configures:
# test/Python picks .venv-python's python when it exists), after the Debian
# packages (python3-venv) they need; build.sh's own run of install-deps.sh
# is then a no-op.
"$root/scripts/install-deps.sh"
"$root/scripts/install-python.sh"
"$root/scripts/build.sh" "$build"
# ctest keeps the sweep's list of cases from its last listing; list them again
# so that this run's environment (ATTN_SWEEP_CASES, ATTN_SWEEP_FORMS) decides.
rm -f "$build/test/unittests/AttnSweepTests[1]_tests.cmake"
ctest --test-dir "$build" --output-on-failure -j2
