#!/usr/bin/env python3
"""Forward time of a randomly initialized Llama-style model (GQA 8/2 heads,
2 layers, hidden 256 (head dim 32) and MLP 688 by default: the shape of the
model issue 26 measured, where attention is about half the forward) with attn_implementation "attn" against "sdpa", in
one process, interleaved rounds (issue 26's target: >= 1.25x faster than
sdpa at sequence 1024, one thread, with and without a padding mask).

    OMP_NUM_THREADS=1 python3 bench/transformers_bench.py [--seq 1024]
        [--threads 1] [--rounds 5]

Prints the CPU, the medians and spreads, and the ratio; the logits of the
two implementations are compared first. --bound also times the forward with
an attention that computes nothing (it returns zeros: "none"), interleaved
with the others: sdpa's time over that one is the most any attention kernel
could gain on this model.
"""
import argparse
import os
import platform
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))

import torch  # noqa: E402
from transformers import LlamaConfig, LlamaForCausalLM  # noqa: E402

import attn.integrations.transformers as attn_hf  # noqa: E402


def cpu_name():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seq", type=int, default=1024)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--intermediate", type=int, default=688)
    ap.add_argument("--bound", action="store_true",
                    help="also time an attention that computes nothing")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    base = dict(vocab_size=1024, hidden_size=args.hidden,
                intermediate_size=args.intermediate,
                num_hidden_layers=2, num_attention_heads=8,
                num_key_value_heads=2, max_position_embeddings=4096)
    attn_hf.register()
    impls = ["sdpa", "attn"]
    if args.bound:
        from transformers import AttentionInterface
        from transformers.masking_utils import AttentionMaskInterface

        def nothing(module, query, key, value, attention_mask, **kwargs):
            b, h, n, _ = query.shape
            return query.new_zeros(b, n, h, value.shape[3]), None

        AttentionInterface.register("none", nothing)
        AttentionMaskInterface.register("none", attn_hf.attn_mask)
        impls.append("none")
    models = {}
    for impl in impls:
        models[impl] = LlamaForCausalLM(
            LlamaConfig(**base, attn_implementation=impl)).eval()
    for impl in impls[1:]:
        models[impl].load_state_dict(models["sdpa"].state_dict())
    ids = torch.randint(0, 1024, (args.batch, args.seq))
    pad = torch.ones_like(ids)
    pad[0, :args.seq // 8] = 0  # left padding of the first row
    print(f"model: hidden {args.hidden}, MLP {args.intermediate}, 8/2 heads, "
          f"2 layers")
    print(f"CPU: {cpu_name()}; torch {torch.__version__}, "
          f"{args.threads} thread(s), OMP_NUM_THREADS="
          f"{os.environ.get('OMP_NUM_THREADS', 'unset')}")
    for label, mask in (("no mask", None), ("left-padding mask", pad)):
        with torch.no_grad():
            outs = {k: m(ids, attention_mask=mask).logits
                    for k, m in models.items() if k != "none"}
        keep = (mask if mask is not None else torch.ones_like(ids)).bool()
        err = (outs["attn"] - outs["sdpa"]).abs()[keep].max().item()
        times = {k: [] for k in models}
        for _ in range(args.rounds):
            for k, m in models.items():
                start = time.perf_counter()
                with torch.no_grad():
                    m(ids, attention_mask=mask)
                times[k].append((time.perf_counter() - start) * 1e3)
        med = {k: statistics.median(v) for k, v in times.items()}
        print(f"seq {args.seq}, batch {args.batch}, {label}: "
              f"sdpa {med['sdpa']:.1f} ms ({min(times['sdpa']):.1f}-"
              f"{max(times['sdpa']):.1f}), attn {med['attn']:.1f} ms "
              f"({min(times['attn']):.1f}-{max(times['attn']):.1f}): "
              f"{med['sdpa'] / med['attn']:.2f}x; logits max diff {err:.1e}")
        if "none" in med:
            print(f"  attention that computes nothing: {med['none']:.1f} ms "
                  f"({min(times['none']):.1f}-{max(times['none']):.1f}): "
                  f"sdpa's attention is {med['sdpa'] - med['none']:.1f} ms "
                  f"of its forward, ours {med['attn'] - med['none']:.1f}; "
                  f"no attention kernel could make the forward more than "
                  f"{med['sdpa'] / med['none']:.2f}x faster than sdpa's")


if __name__ == "__main__":
    main()
