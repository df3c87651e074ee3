#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) with clang++-14, AddressSanitizer and
# UndefinedBehaviorSanitizer into build-fuzz/, replays the committed seeds and
# regression inputs, then fuzzes each target in turn for a bounded time.
#   scripts/fuzz.sh [SECONDS] [TARGET...]
#     SECONDS  per target (default 600: the 10 minutes of issue 6)
#     TARGET   parse, builder, diff, npy, abi (default: all five, in this
#              order)
# Environment:
#   ATTN_FUZZ_BUILD   build directory (default build-fuzz)
#   ATTN_FUZZ_JOBS    parallel fuzzing jobs per target (default 1)
# Each target's working corpus is build-fuzz/fuzz-corpus/<target> (seeded
# from fuzz/corpus/<target>, never written back); crashes, leaks, timeouts
# and sanitizer reports are kept as build-fuzz/fuzz-artifacts/<target>/*, the
# log as build-fuzz/fuzz-logs/<target>.log. Exit status 1 if any target found
# something. A finding becomes a regression input under
# fuzz/regressions/<target>/ (replayed by `ctest -R fuzz-replay` in the fuzz
# build and by this script) and, where it can be, a lit test in
# test/Robustness/.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${ATTN_FUZZ_BUILD:-$root/build-fuzz}"
seconds="${1:-600}"
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(parse builder diff npy abi)

"$root/scripts/install-deps.sh"
if ! command -v clang++-14 >/dev/null ||
   ! ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends \
    clang-14 libclang-rt-14-dev
fi

if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
    -DMLIR_DIR="$(llvm-config-22 --prefix)/lib/cmake/mlir" \
    -DATTN_BUILD_FUZZERS=ON -DATTN_SANITIZE=address,undefined \
    -DATTN_WERROR=OFF
fi
ninja -C "$build" attn-fuzzers

symbolizer="$(llvm-config-22 --bindir)/llvm-symbolizer"
[ -x "$symbolizer" ] && export ASAN_SYMBOLIZER_PATH="$symbolizer"
# intercept_tls_get_addr=0: see scripts/sanitize.sh (LeakSanitizer and the
# OpenMP worker threads of the compiled kernels).
export ASAN_OPTIONS="detect_leaks=1:strict_string_checks=1:intercept_tls_get_addr=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export LSAN_OPTIONS="suppressions=$root/scripts/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-2}"

echo "== replaying the seed corpora and regression inputs"
ctest --test-dir "$build" -R fuzz-replay --output-on-failure

status=0
summary=""
for t in "${targets[@]}"; do
  bin="$build/bin/attn-fuzz-$t"
  opts=(-rss_limit_mb=4096 -print_final_stats=1)
  case "$t" in
    parse)   opts+=(-max_len=8192 -timeout=30 -dict="$root/fuzz/attn.dict") ;;
    builder) opts+=(-max_len=512 -timeout=60) ;;
    diff)    opts+=(-max_len=4096 -timeout=300) ;;
    npy)     opts+=(-max_len=4096 -timeout=10) ;;
    abi)     opts+=(-max_len=2048 -timeout=60) ;;
    *) echo "fuzz.sh: unknown target '$t'" >&2; exit 2 ;;
  esac
  if [ "${ATTN_FUZZ_JOBS:-1}" -gt 1 ]; then
    opts+=(-jobs="$ATTN_FUZZ_JOBS" -workers="$ATTN_FUZZ_JOBS")
  fi
  work="$build/fuzz-corpus/$t"
  artifacts="$build/fuzz-artifacts/$t"
  log="$build/fuzz-logs/$t.log"
  mkdir -p "$work" "$artifacts" "$(dirname "$log")"
  dirs=("$work" "$root/fuzz/corpus/$t")
  [ -d "$root/fuzz/regressions/$t" ] && dirs+=("$root/fuzz/regressions/$t")
  echo "== attn-fuzz-$t for ${seconds} s (log: $log)"
  start=$(date +%s)
  rc=0
  "$bin" "${opts[@]}" -max_total_time="$seconds" \
    -artifact_prefix="$artifacts/" "${dirs[@]}" >"$log" 2>&1 || rc=$?
  took=$(( $(date +%s) - start ))
  runs=$(grep -oE 'Done [0-9]+ runs in [0-9]+ second' "$log" | tail -1 || true)
  cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1 || true)
  if [ "$rc" -eq 0 ]; then
    line="attn-fuzz-$t: ${took} s, clean (${runs:-no stats}; ${cov:-})"
  else
    status=1
    line="attn-fuzz-$t: ${took} s, FOUND SOMETHING (exit $rc): see $log and $artifacts/"
    grep -E "ERROR: |SUMMARY: |property violated|Test unit written" "$log" | head -5 || true
  fi
  echo "$line"
  summary+="$line"$'\n'
done
echo
echo "== summary"
printf '%s' "$summary"
exit $status
