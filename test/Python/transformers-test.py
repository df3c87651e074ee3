#!/usr/bin/env python3
"""attn.integrations.transformers: a randomly initialized Llama-style model
(GQA: 8 query heads over 2 K/V heads, 2 layers; nothing downloaded) with
attn_implementation="attn" against the same model with "sdpa": logits
without padding, with left and right padding and a padding mask with holes
(attention_mask; the mask function's compact CausalPaddingMask), with a
4-D mask of the caller's, and greedy generation with a KV cache (prefill,
then decode steps; with left padding on a dynamic and a static cache).

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

# Left padding (the first row's first 9 tokens), right padding and a mask
# with holes (not a range of keys: a [B, 1, 1, Nk] mask tensor).
for side in ("left", "holes", "right"):
    mask = torch.ones(2, 37, dtype=torch.long)
    if side == "left":
        mask[0, :9] = 0
    elif side == "holes":
        mask[0, :3] = 0
        mask[1, 20:23] = 0
    else:
        mask[0, 28:] = 0
    with torch.no_grad():
        want = sdpa(ids, attention_mask=mask).logits
        got = ours(ids, attention_mask=mask).logits
    keep = mask.bool()
    err = (got - want).abs()[keep].max()
    check(err < 1e-4, f"logits, {side} padding: {err:.2e}")
    if side == "left" and tuple(map(int, torch.__version__.split(".")[:2])) \
            >= (2, 5):
        # The padded rows too: under the causal mask the first 9 queries of
        # the first row see no key; they give 0 (docs/Semantics.md), as
        # sdpa's do since torch 2.5.
        err = (got - want).abs().max()
        check(err < 1e-4, f"logits, left padding, padded rows too: "
              f"{err:.2e}")

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
# causal one with the range of real keys (left and right padding: the mask
# function's CausalPaddingMask, no [B, 1, Nq, Nk] mask), a causal one with
# a [B, 1, 1, Nk] mask (holes) and one for decode steps (one query, no
# mask); the prefill ones of static sizes, the decode one of dynamic sizes.
# Key: (mask element, causal, static sizes, mask per query row, kv_len,
# key range).
kinds = {(k[5], k[6], k[11] is not None, k[12], k[13], k[14])
         for k in attn_hf._KERNELS}
check({(None, "top_left", True, True, False, False),
       (None, "top_left", True, False, False, True),
       ("i1", "top_left", True, False, False, False),
       (None, False, False, True, False, False)} <= kinds
      and not any(k[0] == "i1" and k[3] for k in kinds),
      f"kernels compiled: {sorted(map(str, kinds))}")

# The mask function's compact mask is sdpa's mask where materialized.
from transformers.masking_utils import sdpa_mask  # noqa: E402
pad = torch.ones(3, 12, dtype=torch.bool)
pad[0, :5] = False
pad[1, 9:] = False
pad[2, :] = False
for q_len, kv_len, q_off in ((12, 12, 0), (1, 12, 11), (3, 12, 9),
                             (3, 16, 9)):
    got = attn_hf.attn_mask(3, q_len, kv_len, q_offset=q_off,
                            attention_mask=pad[:, :q_off + q_len])
    want = sdpa_mask(3, q_len, kv_len, q_offset=q_off,
                     attention_mask=pad[:, :q_off + q_len])
    check(isinstance(got, attn_hf.CausalPaddingMask)
          and torch.equal(got.dense(), want) and got.shape == want.shape,
          f"compact mask = sdpa_mask (Nq {q_len}, Nk {kv_len}, "
          f"offset {q_off})")

# A 4-D mask the user builds (prefix-LM: the first 6 keys visible to every
# query) goes through as it is.
full = torch.ones(37, 37, dtype=torch.bool).tril()
full[:, :6] = True
full = full[None, None].expand(2, 1, 37, 37)
with torch.no_grad():
    want = sdpa(ids, attention_mask=full).logits
    got = ours(ids, attention_mask=full).logits
err = (got - want).abs().max()
check(err < 1e-4, f"logits, user's 4-D mask: {err:.2e}")

# Batched greedy generation with left padding: prefill with the key mask,
# decode steps (one query against the cache) with it too; a dynamic and a
# static cache (whose unfilled tail is cut by kv_len).
prompts = ids[:, :13].clone()
pmask = torch.ones_like(prompts)
pmask[0, :4] = 0
prompts[0, :4] = 0
for cache in (None, "static"):
    extra = {} if cache is None else {"cache_implementation": cache}
    with torch.no_grad():
        want = sdpa.generate(prompts, attention_mask=pmask,
                             max_new_tokens=12, do_sample=False,
                             pad_token_id=0, **extra)
        got = ours.generate(prompts, attention_mask=pmask,
                            max_new_tokens=12, do_sample=False,
                            pad_token_id=0, **extra)
    check(torch.equal(got, want), f"greedy generation, left padding, "
          f"{cache or 'dynamic'} cache")

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
