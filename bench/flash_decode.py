#!/usr/bin/env python3
"""attn.flash.flash_attn_with_kvcache on a decode step (one new query, MQA
8/1 heads, head dim 128, 16384 cached keys, f32 torch CPU tensors): median
microseconds per call over 5 rounds of 200 calls. Threads from
OMP_NUM_THREADS (default 2). Run it with two package versions alternately to
compare them (docs/Benchmarks.md).
"""
import os
import statistics
import sys
import time

import torch
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import attn, attn.flash as flash
torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "2")))
B, N, HQ, HKV, D = 1, 16384, 8, 1, 128
q = torch.randn(B, 1, HQ, D); kc = torch.randn(B, N, HKV, D); vc = torch.randn(B, N, HKV, D)
sl = torch.full((B,), N, dtype=torch.int32)
f = lambda: flash.flash_attn_with_kvcache(q, kc, vc, cache_seqlens=sl, causal=True)
f(); ts=[]
for r in range(5):
    t=time.perf_counter()
    for _ in range(200): f()
    ts.append((time.perf_counter()-t)/200*1e6)
print("median us", round(statistics.median(ts),1), [round(x) for x in ts])
