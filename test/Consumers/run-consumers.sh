#!/usr/bin/env bash
# Installs a build of attn into a fresh prefix, then configures, builds and
# tests each consumer project (c-kernel, cxx-kernel, capi-jit) against that
# prefix only;
# checks that the install holds no internal static library; also installs
# the Runtime component alone and checks that it needs no MLIR or LLVM
# library.
#   test/Consumers/run-consumers.sh BUILD_DIR WORK_DIR
set -euo pipefail
build="$1"
work="$2"
src="$(cd "$(dirname "$0")" && pwd)"
rm -rf "$work"
mkdir -p "$work"

cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
# The install holds what consumers use: the runtime, libattn_compiler, their
# headers, the tools, the CMake package and the Python package; none of the
# internal static libraries the tools and libattn_compiler are built from.
if find "$work/prefix" -name '*.a' | grep .; then
  echo "run-consumers: the install holds internal static libraries" >&2
  exit 1
fi
for consumer in c-kernel cxx-kernel capi-jit; do
  echo "== consumer $consumer"
  cmake -G Ninja -S "$src/$consumer" -B "$work/$consumer" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$work/prefix" \
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF > "$work/$consumer.configure.log"
  cmake --build "$work/$consumer" -j 1 > "$work/$consumer.build.log" ||
    { cat "$work/$consumer.build.log"; exit 1; }
  ctest --test-dir "$work/$consumer" --output-on-failure
done

echo "== Runtime component alone"
cmake --install "$build" --prefix "$work/runtime" --component Runtime \
  > "$work/runtime.log"
find "$work/runtime" -type f | sed "s|$work/runtime/||" | sort
if ldd "$work/runtime/lib/libattn_runtime.so" | grep -E 'MLIR|LLVM'; then
  echo "run-consumers: libattn_runtime needs MLIR or LLVM" >&2
  exit 1
fi
test -f "$work/runtime/include/attn-c/Kernel.h"
test ! -e "$work/runtime/bin/attn-compile"
echo "run-consumers: ok"
