#!/usr/bin/env python3
"""attn.integrations.transformers: a randomly initialized Llama-style model
(GQA: 8 query heads over 2 K/V heads, 2 layers; nothing downloaded) with
attn_implementation="attn" against the same model with "sdpa": logits
without padding, with left and right padding (attention_mask), and greedy
generation with a KV cache (prefill, then decode steps).

    transformers-test.py

Exits 77 (skipped) when torch or transformers cannot be imported.
"""
import os
import sys

SKIP = 77
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "python"))
try:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM
except ImportError as e:
    print(f"torch or transformers is not available ({e}): skipped")
    sys.exit(SKIP)

import attn.integrations.transformers as attn_hf  # noqa: E402

failures = 0


def check(ok, what):
    global failures
    print(("ok    " if ok else "FAIL  ") + what)
    failures += 0 if ok else 1


torch.manual_seed(0)
config = LlamaConfig(vocab_size=96, hidden_size=128, intermediate_size=256,
                     num_hidden_layers=2, num_attention_heads=8,
                     num_key_value_heads=2, max_position_embeddings=256,
                     attn_implementation="sdpa")
sdpa = LlamaForCausalLM(config).eval()
attn_hf.register()
config_attn = LlamaConfig(**{**config.to_dict(),
                             "attn_implementation": "attn"})
ours = LlamaForCausalLM(config_attn).eval()
ours.load_state_dict(sdpa.state_dict())
check(ours.config._attn_implementation == "attn", "attn_implementation")

ids = torch.randint(0, 96, (2, 37))
with torch.no_grad():
    want = sdpa(ids).logits
    got = ours(ids).logits
check((got - want).abs().max() < 1e-4,
      f"logits, no padding: {(got - want).abs().max():.2e}")

# Left padding (the first row's first 9 tokens) and right padding.
for side in ("left", "right"):
    mask = torch.ones(2, 37, dtype=torch.long)
    if side == "left":
        mask[0, :9] = 0
    else:
        mask[0, 28:] = 0
    with torch.no_grad():
        want = sdpa(ids, attention_mask=mask).logits
        got = ours(ids, attention_mask=mask).logits
    keep = mask.bool()
    err = (got - want).abs()[keep].max()
    check(err < 1e-4, f"logits, {side} padding: {err:.2e}")

# Greedy generation with a KV cache: prefill, then one token per step.
prompt = ids[:1, :11]
with torch.no_grad():
    want = sdpa.generate(prompt, max_new_tokens=16, do_sample=False,
                         pad_token_id=0)
    got = ours.generate(prompt, max_new_tokens=16, do_sample=False,
                        pad_token_id=0)
check(torch.equal(got, want), f"greedy generation ({got.shape[1] - 11} "
      f"new tokens)")

# The model ran our kernels: a causal one (prefill without padding), a
# masked one (padding) and one for decode steps (one query, no mask); the
# prefill ones of static sizes, the decode one of dynamic sizes.
kinds = {(k[5], k[6], k[11] is not None) for k in attn_hf._KERNELS}
check({(None, True, True), ("i1", False, True), (None, False, False)}
      <= kinds, f"kernels compiled: {sorted(map(str, kinds))}")
# Dynamic sizes throughout (no kernel per prompt length).
attn_hf.register(static_shapes="never")
attn_hf._KERNELS.clear()
with torch.no_grad():
    want = sdpa(ids, attention_mask=mask).logits
    got = ours(ids, attention_mask=mask).logits
err = (got - want).abs()[mask.bool()].max()
check(err < 1e-4 and all(k[11] is None for k in attn_hf._KERNELS),
      f"dynamic sizes only: {err:.2e}")

print("transformers-test: " + ("all passed" if not failures
                               else f"{failures} FAILED"))
sys.exit(1 if failures else 0)
