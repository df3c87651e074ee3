#!/usr/bin/env bash
# `pip install` of the repository (pyproject.toml, scikit-build-core) into a
# fresh virtual environment, then the installed package checked from outside
# the source tree by that environment's Python (wheel-check.py): the wheel's
# layout, the RUNPATHs of its libraries and tools, JIT and ahead-of-time
# kernels on numpy inputs against a numpy reference.
#   test/Packaging/pip-install-test.sh SOURCE_DIR BUILD_DIR WORK_DIR PYTHON
# BUILD_DIR is reused, not rebuilt: ATTN_WHEEL_FROM_BUILD=BUILD_DIR makes
# the wheel that build's own install (cmake/wheel-from-build), so the test
# takes seconds where a plain `pip install .` compiles the project.
# PYTHON (Debian's python3, which has numpy) makes the environment, with
# --system-site-packages for numpy. Exits 77 (skipped) where venv or pip is
# missing or PyPI, which scikit-build-core comes from, cannot be reached.
set -euo pipefail
src="$1"
build="$2"
work="$3"
python="$4"
SKIP=77
t0=$(date +%s)
step() { echo "== $1 ($(($(date +%s) - t0)) s)"; }
skip() { echo "pip-install-test: $1: skipped"; exit $SKIP; }
fail() { echo "pip-install-test: FAIL: $1" >&2; exit 1; }
unset PYTHONPATH ATTN_LIBRARY_DIR ATTN_WHEEL_FROM_BUILD

rm -rf "$work"
mkdir -p "$work/run" "$work/wheels"

step "venv"
if ! "$python" -m venv --system-site-packages "$work/venv" \
    > "$work/venv.log" 2>&1; then
  cat "$work/venv.log"
  skip "'$python -m venv' fails (Debian package python3-venv)"
fi
venv_python="$work/venv/bin/python"
"$venv_python" -m pip --version > /dev/null 2>&1 ||
  skip "the virtual environment has no pip"
export PIP_DISABLE_PIP_VERSION_CHECK=1

# The build backend (pyproject.toml's build-system.requires) and its
# dependencies, fetched once: the install below then runs without an index.
step "fetch the build backend from PyPI"
mapfile -t requires < <("$venv_python" - "$src/pyproject.toml" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
block = re.search(r"^requires\s*=\s*\[(.*?)\]", text, re.M | re.S).group(1)
print("\n".join(re.findall(r'"([^"]+)"', block)))
EOF
)
if ! "$venv_python" -m pip download --timeout 15 --retries 1 \
    -d "$work/wheels" "${requires[@]}" > "$work/download.log" 2>&1; then
  tail -5 "$work/download.log"
  skip "pip cannot fetch ${requires[*]} (PyPI unreachable?)"
fi

step "pip install $src (the wheel from $build)"
cd "$work/run"
if ! ATTN_WHEEL_FROM_BUILD="$build" PIP_NO_INDEX=1 \
    PIP_FIND_LINKS="$work/wheels" \
    "$venv_python" -m pip install -v "$src" > "$work/install.log" 2>&1; then
  tail -40 "$work/install.log"
  fail "pip install"
fi
grep -E "Successfully installed|attn: the wheel is" "$work/install.log"

step "the installed layout and RUNPATHs"
site="$("$venv_python" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')"
pkg="$site/attn"
pkg_lib="$(realpath "$pkg/lib")"
for f in __init__.py _capi.py _tools.py lib/libattn_runtime.so.1 \
    lib/libattn_gpu_runtime.so.1 lib/libattn_compiler.so.1 \
    bin/attn-compile bin/attn-opt bin/attn-run bin/attn-gpu-info \
    include/attn-c/Kernel.h include/attn-c/Compiler.h \
    lib/cmake/Attn/AttnConfig.cmake; do
  test -e "$pkg/$f" || fail "the wheel has no attn/$f"
done
test ! -e "$pkg/lib/python" || fail "the wheel holds a second copy of the package (attn/lib/python)"
# The compiled fast path of calls on torch tensors, where the build has it
# (CPython's headers were found), and the installed package loads it.
if [ -e "$build/lib/_attn_fastcall.abi3.so" ]; then
  test -e "$pkg/lib/_attn_fastcall.abi3.so" || fail "the wheel has no attn/lib/_attn_fastcall.abi3.so"
  (cd "$work/run" && "$venv_python" -c 'import attn, sys; sys.exit(0 if attn.uses_fastcall() else 1)') ||
    fail "the installed package does not load its _attn_fastcall"
  echo "_attn_fastcall: loaded by the installed package"
fi
for f in "$pkg"/lib/libattn_*.so.1 "$pkg"/bin/attn-*; do
  runpath="$(readelf -d "$f" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')"
  echo "$(basename "$f"): RUNPATH ${runpath:-(none)}"
  case ":$runpath:" in
    *"$build"* | *"$src"*) fail "$f reaches into the build or source tree" ;;
  esac
  # What needs a library of this project finds it beside itself.
  if readelf -d "$f" | grep -q 'NEEDED.*libattn_'; then
    case ":$runpath:" in
      *':$ORIGIN/../lib:'*) ;;
      *) fail "$f needs libattn_* but its RUNPATH lacks \$ORIGIN/../lib" ;;
    esac
  fi
  if ldd "$f" | grep -q 'not found'; then
    ldd "$f"
    fail "$f has libraries the loader cannot find"
  fi
  for dep in $(ldd "$f" | sed -n 's/.*libattn_.* => \(.*\) (0x.*/\1/p'); do
    [ "$(dirname "$(realpath "$dep")")" = "$pkg_lib" ] ||
      fail "$f loads $dep, outside the wheel's attn/lib"
  done
done

step "the console scripts"
"$work/venv/bin/attn-opt" "$src/test/Consumers/capi-jit/small.mlir" \
  | grep -q "attn.attention" || fail "attn-opt (console script) on small.mlir"
echo "attn-opt: ok"

step "the package from outside the source tree"
"$venv_python" "$src/test/Packaging/wheel-check.py" "$site" \
  "$work/venv/bin" "$src/test/Consumers/capi-jit/small.mlir"

step "done"
echo "pip-install-test: ok in $(($(date +%s) - t0)) s"
