"""attn kernels as a Hugging Face transformers attention implementation.

    import attn.integrations.transformers as attn_hf
    attn_hf.register()                      # adds "attn" to transformers
    model = AutoModelForCausalLM.from_config(config, attn_implementation="attn")

``register()`` adds the implementation through transformers' public
interfaces: ``AttentionInterface`` (the attention function) and
``AttentionMaskInterface`` (masks built as for "sdpa": none for a causal
batch without padding, else a boolean ``[B, 1, Nq, Nk]`` mask, True = may
attend). The attention function compiles one kernel per configuration (head
counts and dims, dtype, mask kind, causal, sliding window, soft cap, scale)
through ``attn.jit`` with dynamic batch and sequence sizes, so prefill and
every decode step of a generation reuse it, and caches it.

The model's query arrives as ``[B, Hq, Nq, D]`` views of ``[B, Nq, Hq, D]``
memory (the projections' layout): the kernels use ``layout(bnhd)``, read the
query in place and write the output in the ``[B, Nq, Hq, D]`` layout the
model's output projection wants; keys and values of another memory order
(a KV cache concatenates along Nk) are read through their strides.
Semantics are sdpa's: the same masks, causal top-left on equal lengths (as
transformers asks of sdpa), the model's scaling. Inference only (dropout
must be 0); ``output_attentions`` is not supported.
"""

import torch

from ..flash import _tensor

_KERNELS = {}

_ELT = {torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16"}


# Static shapes for multi-query calls (prefill): "prefill" (the default)
# compiles a kernel per (batch, Nq, Nk) for calls with more than one query
# and uses kernels of dynamic sizes for decode steps; "never" uses dynamic
# sizes throughout (no compile per prompt length, slower code: about 1.3x
# the static kernel's time at Nq = Nk = 1024 on the Zen 4 host of issue 26).
_OPTIONS = {"static_shapes": "prefill"}


def _kernel(hq, hkv, d, dv, elt, mask_elt, causal, window, softcap, scale,
            device, sizes=None):
    key = (hq, hkv, d, dv, elt, mask_elt, causal, window, softcap, scale,
           device, sizes)
    kernel = _KERNELS.get(key)
    if kernel is not None:
        return kernel
    bsz, nq, nk = sizes if sizes is not None else (None, None, None)
    q_t = _tensor([bsz, nq, hq, d], elt)
    k_t = _tensor([bsz, nk, hkv, d], elt)
    v_t = _tensor([bsz, nk, hkv, dv], elt)
    o_t = _tensor([bsz, nq, hq, dv], elt)
    params = [f"%q: {q_t}", f"%k: {k_t}", f"%v: {v_t}"]
    mods = ["layout(bnhd)"]
    if mask_elt is not None:
        m_t = _tensor([bsz, 1, nq, nk], mask_elt)
        params.append(f"%m: {m_t}")
        mods.append(f"mask(%m : {m_t})" if mask_elt == "i1"
                    else f"bias(%m : {m_t})")
    if causal:
        mods.append("causal(top_left)")
    if window is not None:
        mods.append(f"window_left({int(window) - 1})")
    if softcap:
        mods.append(f"softcap({float(softcap)!r})")
    if scale is not None:
        mods.append(f"scale({float(scale)!r})")
    text = (f"func.func @hf_attention({', '.join(params)}) -> {o_t} {{\n"
            f"  %o = attn.attention q(%q : {q_t}) k(%k : {k_t}) "
            f"v(%v : {v_t}) {' '.join(mods)} -> {o_t}\n"
            f"  return %o : {o_t}\n}}\n")
    from .. import jit
    kernel = jit(text, name="attn.integrations.transformers",
                 device="gpu" if device == "cuda" else "cpu")["hf_attention"]
    _KERNELS[key] = kernel
    return kernel


def attention_forward(module, query, key, value, attention_mask,
                      dropout=0.0, scaling=None, is_causal=None,
                      sliding_window=None, softcap=None, **kwargs):
    """transformers' attention function signature: query ``[B, Hq, Nq, D]``,
    key and value ``[B, Hkv, Nk, D]``, attention_mask None or
    ``[B, 1, Nq, Nk]`` (boolean, True = may attend, or additive float);
    returns ``(out [B, Nq, Hq, Dv], None)``."""
    if dropout:
        raise ValueError("attn: dropout is not supported (inference only)")
    if kwargs.get("output_attentions", False):
        raise ValueError("attn: output_attentions is not supported")
    if kwargs.get("position_bias") is not None:
        raise ValueError("attn: position_bias is not supported")
    elt = _ELT.get(query.dtype)
    if elt is None:
        raise TypeError(f"attn: unsupported dtype {query.dtype}")
    bsz, hq, nq, d = query.shape
    hkv, nk, dv = key.shape[1], key.shape[2], value.shape[3]
    # sdpa's rules (transformers' sdpa_attention_forward): causal only for
    # a prefill without a mask; keys past Nq (an empty static cache) are
    # dropped then.
    is_causal = (is_causal if is_causal is not None
                 else getattr(module, "is_causal", True))
    causal = bool(nq > 1 and attention_mask is None and is_causal)
    if causal and nk > nq:
        key, value = key[:, :, :nq], value[:, :, :nq]
    mask_elt = None
    inputs = [query.transpose(1, 2), key.transpose(1, 2),
              value.transpose(1, 2)]
    if attention_mask is not None:
        mask = attention_mask
        if mask.dtype == torch.bool:
            mask_elt = "i1"
        else:
            mask_elt = _ELT[mask.dtype]
        if mask.shape[1] != 1:
            mask = mask[:, :1]
        inputs.append(mask[:, :, :, :key.shape[2]])
    default = d ** -0.5
    scale = None if scaling is None or abs(scaling - default) < 1e-12 * \
        default else scaling
    sizes = None
    if _OPTIONS["static_shapes"] == "prefill" and nq > 1:
        sizes = (bsz, nq, key.shape[2])
    kernel = _kernel(hq, hkv, d, dv, elt, mask_elt, causal, sliding_window,
                     softcap, scale, query.device.type, sizes)
    out = torch.empty(bsz, nq, hq, dv, dtype=query.dtype,
                      device=query.device)
    kernel(*inputs, out=out)
    return out, None


def register(name="attn", static_shapes="prefill"):
    """Registers the attention and mask functions as `name` with
    transformers (idempotent); returns `name`. `static_shapes`: "prefill"
    (kernels of static sizes for calls with several queries, compiled once
    per batch and sequence lengths; dynamic ones for decode steps) or
    "never" (dynamic sizes only)."""
    if static_shapes not in ("prefill", "never"):
        raise ValueError("static_shapes must be 'prefill' or 'never'")
    _OPTIONS["static_shapes"] = static_shapes
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, sdpa_mask
    AttentionInterface.register(name, attention_forward)
    AttentionMaskInterface.register(name, sdpa_mask)
    return name
