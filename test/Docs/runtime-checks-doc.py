#!/usr/bin/env python3
"""Every run-time check of include/attn/Runtime/RuntimeChecks.def is listed,
with its status and message, in docs/Robustness.md's table.
  runtime-checks-doc.py SOURCE_ROOT"""
import re
import sys

root = sys.argv[1]
defs = open(f"{root}/include/attn/Runtime/RuntimeChecks.def").read()
doc = open(f"{root}/docs/Robustness.md").read()
checks = re.findall(
    r'ATTN_RUNTIME_CHECK\((\w+), (ATTN_STATUS_\w+),\s*((?:"(?:[^"\\]|\\.)*"\s*)+)\)',
    defs)
missing = 0
for name, status, fmt in checks:
    message = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', fmt)).replace("%lld", "N")
    row = f"| `{name}` | `{message}` | `{status}` |"
    if row not in doc:
        print(f"missing from docs/Robustness.md: {row}")
        missing += 1
print(f"{len(checks)} checks, {missing} missing")
sys.exit(1 if missing or not checks else 0)
