#!/usr/bin/env bash
# Builds the project's libraries, tools and tests with AddressSanitizer
# (LeakSanitizer included) and UndefinedBehaviorSanitizer, and runs the whole
# test suite (ctest: lit tests and GoogleTest) under them. Any sanitizer
# report aborts the process that makes it, so the test fails (also under
# lit's `not`, which counts a crash as a failure).
#   scripts/sanitize.sh [BUILD_DIR]          (default: build-asan)
# Environment:
#   ATTN_SANITIZE     sanitizers (default address,undefined)
#   ATTN_SWEEP_CASES  cases of the differential sweep (default: all 232, in
#                     each of its six forms)
#   LIT_FILTER_OUT    lit tests to leave out (a regex, read by lit itself)
#   ATTN_CTEST_ARGS   extra ctest arguments (e.g. "-R attn-lit")
# CI runs a subset (.ci/run sets the two above; docs/Robustness.md says why
# and what it costs); without them everything runs.
# The sanitized code is built with -O1 (what AddressSanitizer's documentation
# advises): about a quarter less compile time than -O3 and the same checks.
# libMLIR/libLLVM and JIT-compiled code are not instrumented; the only
# suppressions are in scripts/lsan.supp, each with its reason.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build-asan}"

"$root/scripts/install-deps.sh"

if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" \
    -DCMAKE_C_FLAGS_RELEASE="-O1 -DNDEBUG" \
    -DMLIR_DIR="$(llvm-config-22 --prefix)/lib/cmake/mlir" \
    -DATTN_SANITIZE="${ATTN_SANITIZE:-address,undefined}" \
    -DATTN_WERROR=OFF
fi
ninja -C "$build"

symbolizer="$(llvm-config-22 --bindir)/llvm-symbolizer"
[ -x "$symbolizer" ] && export ASAN_SYMBOLIZER_PATH="$symbolizer"
# intercept_tls_get_addr=0: with it on, the LeakSanitizer of GCC 12 crashes
# ("Tracer caught signal 11") walking the dynamic TLS of the OpenMP worker
# threads the compiled kernels start. Off, dynamic TLS blocks are plain heap
# blocks reachable from each thread's DTV, and TLS is still scanned as roots.
export ASAN_OPTIONS="abort_on_error=1:detect_leaks=1:strict_string_checks=1:check_initialization_order=1:detect_stack_use_after_return=0:intercept_tls_get_addr=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export LSAN_OPTIONS="suppressions=$root/scripts/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:abort_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"

# ctest keeps the sweep's list of cases from its last listing; list them again
# so that this run's ATTN_SWEEP_CASES / ATTN_SWEEP_FORMS decide (the sweep
# fails a case its environment does not instantiate instead of passing it).
rm -f "$build/test/unittests/AttnSweepTests[1]_tests.cmake"

start=$(date +%s)
rc=0
# shellcheck disable=SC2086
ctest --test-dir "$build" --output-on-failure -j2 ${ATTN_CTEST_ARGS:-} || rc=$?
echo "sanitize.sh: ctest under ${ATTN_SANITIZE:-address,undefined}:" \
  "$([ $rc -eq 0 ] && echo passed || echo FAILED) in $(( $(date +%s) - start )) s"
exit $rc
