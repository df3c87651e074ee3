#!/usr/bin/env bash
# Runs every ```sh block of a docs page, in order, as one bash script in a
# fresh directory, against a fresh install of a build: the page's commands
# are tested as written.
#   test/Docs/run-doc.sh PAGE.md BUILD_DIR WORK_DIR PYTHON [TORCH_PYTHON]
# ATTN is the install prefix, PATH starts with its bin/, and python3 is
# PYTHON (one that has numpy). With TORCH_PYTHON (a Python with PyTorch),
# the torchrun beside it is on PATH too, for the pages' torch.distributed
# examples (which run where torchrun is found).
set -euo pipefail
page="$1"
build="$2"
work="$3"
python="$4"
torch_python="${5:-}"
rm -rf "$work"
mkdir -p "$work/run" "$work/python-bin"
cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
ln -s "$python" "$work/python-bin/python3"
if [ -n "$torch_python" ] && [ -x "$(dirname "$torch_python")/torchrun" ]; then
  ln -s "$(dirname "$torch_python")/torchrun" "$work/python-bin/torchrun"
fi
awk '/^```sh$/ { on = 1; next } /^```/ { on = 0 } on' "$page" > "$work/page.sh"
if [ ! -s "$work/page.sh" ]; then
  echo "run-doc: no sh blocks in $page" >&2
  exit 1
fi
cd "$work/run"
export ATTN="$work/prefix"
export PATH="$ATTN/bin:$work/python-bin:$PATH"
bash -euxo pipefail "$work/page.sh"
echo "run-doc: every command of $(basename "$page") ran"
