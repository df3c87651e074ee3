#!/usr/bin/env bash
# The main job on a bundled example: compile a spec for this CPU, run it on
# seeded random inputs and check it against the f64 reference.
#   scripts/demo.sh [SPEC] [attn-run options...]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$root/build"
"$root/scripts/build.sh" "$build" >/dev/null
spec="${1:-$root/examples/gqa_causal.mlir}"
shift || true
echo "== $spec"
"$build/bin/attn-run" "$spec" --verify "$@"
