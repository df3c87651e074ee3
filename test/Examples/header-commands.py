#!/usr/bin/env python3
"""Runs every command an example's header comment shows the reader
(`//   attn-run ...`, `//   attn-compile ...`, with `\\` continuations), as
written, from a scratch directory where `examples/` is the source tree's,
with the build's tools first on PATH.
  header-commands.py SOURCE_ROOT SCRATCH_DIR TOOLS_DIR"""
import glob
import os
import shlex
import subprocess
import sys

root, scratch, tools = sys.argv[1], sys.argv[2], sys.argv[3]
env = dict(os.environ, PATH=tools + os.pathsep + os.environ.get("PATH", ""))
os.makedirs(scratch, exist_ok=True)
link = os.path.join(scratch, "examples")
if not os.path.islink(link):
    os.symlink(os.path.join(root, "examples"), link)

commands = []
for path in sorted(glob.glob(os.path.join(root, "examples", "**", "*.mlir"),
                             recursive=True)):
    lines = open(path).read().splitlines()
    i = 0
    while i < len(lines) and lines[i].startswith("//"):
        text = lines[i][2:].strip()
        if text.startswith(("attn-run ", "attn-compile ", "attn-opt ")):
            while text.endswith("\\") and i + 1 < len(lines):
                i += 1
                text = text[:-1].rstrip() + " " + lines[i][2:].strip()
            commands.append((os.path.relpath(path, root), text))
        i += 1

failed = 0
for where, command in commands:
    run = subprocess.run(shlex.split(command), cwd=scratch, env=env,
                         capture_output=True, text=True)
    ok = run.returncode == 0
    print(f"{'ok  ' if ok else 'FAIL'} {where}: {command}")
    if not ok:
        failed += 1
        print(run.stdout[-2000:] + run.stderr[-2000:])
print(f"{len(commands) - failed} passed, {failed} failed")
sys.exit(1 if failed or not commands else 0)
