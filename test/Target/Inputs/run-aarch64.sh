#!/usr/bin/env bash
# Compiles a spec for AArch64 with attn-compile, links it with an AArch64
# build of libattn_runtime and npy-kernel-driver.c (Debian's cross
# compiler), runs it under qemu-aarch64 on random inputs and compares its
# outputs with the f64 reference, which attn-run computes on this machine
# for the same inputs (--save-input, --reference-output).
#
#   run-aarch64.sh SRC_ROOT WORK SPEC [TOL] [attn-compile flags] \
#                  [-- attn-run flags (shapes, sizes, seed)]
#
# TOL is atol=rtol for the comparison (default 2e-5). The runtime objects
# (and libattn_runtime.so) are built once per WORK/../runtime. With
# ATTN_AARCH64_LINK=shared the kernels become a shared library that
# attn-compile links itself (--emit=shared --cc --runtime-dir), which the
# driver then loads; otherwise an object linked into the driver. The kernel library's header names the
# tensors (inputs first), so the script saves those inputs and references.
set -euo pipefail
src="$1"
work="$2"
spec="$3"
shift 3
tol=2e-5
if [[ $# -gt 0 && "$1" =~ ^[0-9][0-9.e-]*$ ]]; then
  tol="$1"
  shift
fi
compileFlags=()
while [[ $# -gt 0 && "$1" != "--" ]]; do
  compileFlags+=("$1")
  shift
done
[[ $# -gt 0 ]] && shift
runFlags=("$@")

cxx="${ATTN_AARCH64_CXX:-aarch64-linux-gnu-g++}"
cc="${ATTN_AARCH64_CC:-aarch64-linux-gnu-gcc}"
sysroot="${ATTN_AARCH64_SYSROOT:-/usr/aarch64-linux-gnu}"
rt="$(dirname "$work")/runtime"
mkdir -p "$rt" "$work"

# libattn_runtime (and the GPU runtime it calls through, which loads the
# CUDA driver with dlopen and so builds anywhere) for AArch64, once.
if [[ ! -f "$rt/done" ]]; then
  for f in Runtime/Runtime.cpp Runtime/StridedCopy.cpp \
           Runtime/FloatConversions.cpp GPURuntime/Driver.cpp \
           GPURuntime/GpuApi.cpp GPURuntime/MgpuWrappers.cpp; do
    "$cxx" -O1 -fPIC -std=c++17 -I"$src/include" -c "$src/lib/$f" \
      -o "$rt/$(basename "$f" .cpp).o"
  done
  mkdir -p "$rt/lib"
  "$cxx" -shared "$rt"/*.o -ldl -o "$rt/lib/libattn_runtime.so"
  touch "$rt/done"
fi

link="${ATTN_AARCH64_LINK:-object}"
if [[ "$link" == shared ]]; then
  attn-compile --target-triple=aarch64-linux-gnu --parallel=false --emit=shared \
    --cc="$cc" --runtime-dir="$rt/lib" "${compileFlags[@]}" "$spec" \
    -o "$work/libkernels.so" --header "$work/kernels.h"
  # An AArch64 shared object (ELF machine 183), not one for this machine.
  machine=$(od -An -t u2 -j 18 -N 2 "$work/libkernels.so" | tr -d ' ')
  if [[ "$machine" != 183 ]]; then
    echo "libkernels.so: ELF machine $machine, expected 183 (AArch64)" >&2
    exit 1
  fi
  kernels=("$work/libkernels.so" "-Wl,-rpath,$work" "-L$rt/lib" "-lattn_runtime"
           "-Wl,-rpath,$rt/lib")
else
  attn-compile --target-triple=aarch64-linux-gnu --parallel=false --emit=obj \
    "${compileFlags[@]}" "$spec" -o "$work/kernels.o" --header "$work/kernels.h"
  kernels=("$work/kernels.o" "$rt"/*.o)
fi
# The header lists each tensor as ' *   NAME: TYPE[...] ... input|output'.
inputs=($(sed -n 's/^ \*   \([a-z0-9_]*\): .*, input$/\1/p' "$work/kernels.h"))
outputs=($(sed -n 's/^ \*   \([a-z0-9_]*\): .*, output$/\1/p' "$work/kernels.h"))
saveFlags=()
for n in "${inputs[@]}"; do
  saveFlags+=("--save-input=$n=$work/in_$n.npy")
done
# References by result number: attn-run names results by role only where
# they are attention results.
for i in "${!outputs[@]}"; do
  saveFlags+=("--reference-output=$i=$work/ref_${outputs[$i]}.npy")
done
attn-run "$spec" "${runFlags[@]}" "${saveFlags[@]}" > "$work/host-run.log"

"$cc" -O1 -I"$src/include" -I"$work" -c "$src/test/Target/Inputs/npy-kernel-driver.c" \
  -o "$work/driver.o"
"$cxx" "$work/driver.o" "${kernels[@]}" -ldl -lm -o "$work/driver"
args=()
for n in "${inputs[@]}"; do args+=("$work/in_$n.npy"); done
args+=(--)
for n in "${outputs[@]}"; do args+=("$work/ref_$n.npy"); done
qemu-aarch64 -L "$sysroot" "$work/driver" "${args[@]}" --atol "$tol" --rtol "$tol"
