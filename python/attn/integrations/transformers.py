"""attn kernels as a Hugging Face transformers attention implementation.

    import attn.integrations.transformers as attn_hf
    attn_hf.register()                      # adds "attn" to transformers
    model = AutoModelForCausalLM.from_config(config, attn_implementation="attn")

``register()`` adds the implementation through transformers' public
interfaces: ``AttentionInterface`` (the attention function) and
``AttentionMaskInterface`` (the mask function). Masks are built as for
"sdpa" (none for a causal batch without padding, else a boolean
``[B, 1, Nq, Nk]`` mask, True = may attend) except for the common causal
mask with a padding mask (left or right padding, prefill or decode), which
is never materialized: the mask function returns a ``CausalPaddingMask``
(the ``[B, Nk]`` key-padding mask and the causal diagonal) and the kernel
runs ``causal`` (skipping the tiles above the diagonal) with, for left or
right padding, the range of real keys of each batch entry (a ``mask_mod``
region over a ``[B, 2]`` tensor: the padding's tiles are skipped, the
others computed without mask arithmetic), else the padding as a
``key_mask`` (``[B, Nk]``; key tiles wholly padding are skipped). A query row that sees no key gives 0 (as sdpa).
The attention function compiles one kernel per configuration (head counts
and dims, dtype, mask kind, causal, sliding window, soft cap, scale)
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


# Key j of batch entry b is readable when range[b, 0] <= j < range[b, 1]:
# left or right padding (or both) without a mask tensor; the fused form
# classifies each tile from the bounds, skipping the padding's tiles and
# computing the others without mask arithmetic.
_KEY_RANGE = """mask_mod {{
    ^bb0(%b: index, %h: index, %i: index, %j: index, %r: {r_t}):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %lo32 = tensor.extract %r[%b, %c0] : {r_t}
      %hi32 = tensor.extract %r[%b, %c1] : {r_t}
      %lo = arith.index_cast %lo32 : i32 to index
      %hi = arith.index_cast %hi32 : i32 to index
      %after = arith.cmpi sge, %j, %lo : index
      %before = arith.cmpi slt, %j, %hi : index
      %ok = arith.andi %after, %before : i1
      attn.yield %ok : i1
    }}"""


def _kernel(hq, hkv, d, dv, elt, mask_elt, causal, window, softcap, scale,
            device, sizes=None, mask_rows=True, kv_len=False,
            key_range=False, key_mask=False):
    """causal: False, "top_left" or "bottom_right"; mask_rows: the mask is
    [B, 1, Nq, Nk] (else [B, 1, 1, Nk], broadcast over the queries);
    key_mask: the i1 mask is a [B, Nk] key_mask (tiles of padding skipped);
    kv_len: a [B] i32 kv_len operand after the mask; key_range: a [B, 2]
    i32 operand, the range of real keys of each batch entry (_KEY_RANGE)."""
    key = (hq, hkv, d, dv, elt, mask_elt, causal, window, softcap, scale,
           device, sizes, mask_rows, kv_len, key_range, key_mask)
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
    if mask_elt is not None and key_mask:
        m_t = _tensor([bsz, nk], mask_elt)
        params.append(f"%m: {m_t}")
        mods.append(f"key_mask(%m : {m_t})")
    elif mask_elt is not None:
        m_t = _tensor([bsz, 1, nq if mask_rows else 1, nk], mask_elt)
        params.append(f"%m: {m_t}")
        mods.append(f"mask(%m : {m_t})" if mask_elt == "i1"
                    else f"bias(%m : {m_t})")
    if kv_len:
        l_t = _tensor([bsz], "i32")
        params.append(f"%len: {l_t}")
        mods.append(f"kv_len(%len : {l_t})")
    if causal:
        mods.append(f"causal({causal})")
    region = None
    if key_range:
        r_t = _tensor([bsz, 2], "i32")
        params.append(f"%range: {r_t}")
        mods.append(f"mod_inputs(%range : {r_t})")
        region = _KEY_RANGE.format(r_t=r_t)
    if window is not None:
        mods.append(f"window_left({int(window) - 1})")
    if softcap:
        mods.append(f"softcap({float(softcap)!r})")
    if scale is not None:
        mods.append(f"scale({float(scale)!r})")
    if region:
        mods.append(region)
    text = (f"func.func @hf_attention({', '.join(params)}) -> {o_t} {{\n"
            f"  %o = attn.attention q(%q : {q_t}) k(%k : {k_t}) "
            f"v(%v : {v_t}) {' '.join(mods)} -> {o_t}\n"
            f"  return %o : {o_t}\n}}\n")
    from .. import jit
    kernel = jit(text, name="attn.integrations.transformers",
                 device="gpu" if device == "cuda" else "cpu")["hf_attention"]
    _KERNELS[key] = kernel
    return kernel


class CausalPaddingMask:
    """The causal mask with a key-padding mask, not materialized: query i
    of batch entry b may read key j when ``j <= i + shift`` and
    ``padding[b, j]``. ``padding``: ``[B, Nk]`` booleans (True = a real
    token); ``shift``: the query's offset from the keys' start (0 for a
    prefill, the cached length for a step of a dynamic cache). What the
    mask function returns for "attn" in place of sdpa's ``[B, 1, Nq, Nk]``
    mask; ``shape``, ``dtype``, ``device`` and indexing behave as that
    tensor's would (indexing materializes it)."""

    def __init__(self, padding, q_length, shift):
        self.padding = padding
        self.q_length = int(q_length)
        self.shift = int(shift)
        self._range = None

    def key_range(self):
        """None when every key is real; else an int32 [B, 2] tensor, each
        row the range [lo, hi) of real keys when they are contiguous (left
        or right padding), or False when they are not. Computed once, for
        every layer that reads the mask."""
        if self._range is None:
            pad = self.padding
            nk = pad.shape[1]
            counts = pad.sum(dim=1)
            if bool((counts == nk).all()):
                self._range = (None,)
            else:
                lo = pad.to(torch.int8).argmax(dim=1)
                hi = nk - pad.flip(1).to(torch.int8).argmax(dim=1)
                lo = torch.where(counts > 0, lo, 0)
                hi = torch.where(counts > 0, hi, 0)
                if bool((hi - lo == counts).all()):
                    self._range = (torch.stack([lo, hi], 1).to(torch.int32)
                                   .contiguous(),)
                else:
                    self._range = (False,)
        return self._range[0]

    @property
    def shape(self):
        return torch.Size((self.padding.shape[0], 1, self.q_length,
                           self.padding.shape[1]))

    @property
    def ndim(self):
        return 4

    def dim(self):
        return 4

    @property
    def dtype(self):
        return torch.bool

    @property
    def device(self):
        return self.padding.device

    def dense(self):
        """The boolean [B, 1, Nq, Nk] mask sdpa would get."""
        dev = self.padding.device
        i = torch.arange(self.q_length, device=dev)[:, None]
        j = torch.arange(self.padding.shape[1], device=dev)[None, :]
        return (j <= i + self.shift)[None, None] & \
            self.padding[:, None, None, :]

    def __getitem__(self, index):
        return self.dense()[index]

    def __repr__(self):
        return (f"CausalPaddingMask(shape={tuple(self.shape)}, "
                f"shift={self.shift})")


def _is_tracing(t):
    try:
        from transformers.utils.import_utils import is_tracing
        return is_tracing(t)
    except ImportError:  # pragma: no cover
        return torch.compiler.is_compiling()


def attn_mask(batch_size, q_length, kv_length, q_offset=0, kv_offset=0,
              mask_function=None, attention_mask=None, local_size=None,
              allow_is_causal_skip=True, **kwargs):
    """transformers' mask function signature (AttentionMaskInterface):
    sdpa's masks, except a ``CausalPaddingMask`` for the plain causal mask
    with a padding mask (see the module's docstring)."""
    from transformers import masking_utils as mu
    if isinstance(attention_mask, CausalPaddingMask):
        return attention_mask
    plain = (mask_function is None
             or mask_function is mu.causal_mask_function)
    if (not plain or local_size is not None or attention_mask is None
            or kwargs.get("use_vmap", False)
            or not isinstance(attention_mask, torch.Tensor)
            or attention_mask.ndim != 2 or _is_tracing(attention_mask)):
        return mu.sdpa_mask(batch_size, q_length, kv_length,
                            q_offset=q_offset, kv_offset=kv_offset,
                            mask_function=mask_function
                            or mu.causal_mask_function,
                            attention_mask=attention_mask,
                            local_size=local_size,
                            allow_is_causal_skip=allow_is_causal_skip,
                            **kwargs)
    if isinstance(q_offset, torch.Tensor):
        if _is_tracing(q_offset):
            return mu.sdpa_mask(batch_size, q_length, kv_length,
                                q_offset=q_offset, kv_offset=kv_offset,
                                mask_function=mu.causal_mask_function,
                                attention_mask=attention_mask,
                                allow_is_causal_skip=allow_is_causal_skip,
                                **kwargs)
        q_offset = int(q_offset)
    padding = mu.prepare_padding_mask(attention_mask, kv_length, kv_offset)
    if allow_is_causal_skip and mu._ignore_causal_mask_sdpa(
            padding, q_length, kv_length, q_offset, kv_offset, None):
        return None
    padding = padding[:, kv_offset:kv_offset + kv_length].to(torch.bool)
    if padding.shape[0] != batch_size:
        padding = padding.expand(batch_size, -1)
    return CausalPaddingMask(padding, q_length, q_offset - kv_offset)


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
    if isinstance(attention_mask, CausalPaddingMask):
        if attention_mask.padding.shape[1] == nk and \
                attention_mask.q_length == nq and sliding_window is None:
            return _causal_padding(query, key, value, attention_mask, scaling,
                                   softcap)
        attention_mask = attention_mask.dense()
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
    sizes = None
    if _OPTIONS["static_shapes"] == "prefill" and nq > 1:
        sizes = (bsz, nq, key.shape[2])
    kernel = _kernel(hq, hkv, d, dv, elt, mask_elt,
                     "top_left" if causal else False, sliding_window,
                     softcap, _scale(scaling, d), query.device.type, sizes)
    out = torch.empty(bsz, nq, hq, dv, dtype=query.dtype,
                      device=query.device)
    kernel(*inputs, out=out)
    return out, None


def _scale(scaling, d):
    default = d ** -0.5
    return None if scaling is None or abs(scaling - default) < 1e-12 * \
        default else scaling


def _causal_padding(query, key, value, mask, scaling, softcap):
    """A CausalPaddingMask as kernel modifiers: query i reads key j when
    j <= i + shift and padding[b, j]. The diagonal: causal(top_left) for
    shift 0, causal(bottom_right) for shift = Nk - Nq, else kv_len = shift
    + Nq with causal(bottom_right) (a static cache's unfilled tail); none
    when every key is at or before the first query's position (a decode
    step). The padding: nothing when all keys are real, the range of real
    keys per batch entry (mask_mod over a [B, 2] tensor) when they are
    contiguous (left or right padding), else the [B, Nk] padding as a
    key_mask (key tiles wholly padding are skipped)."""
    elt = _ELT[query.dtype]
    bsz, hq, nq, d = query.shape
    hkv, nk, dv = key.shape[1], key.shape[2], value.shape[3]
    shift = mask.shift
    padding = mask.padding
    inputs = [query.transpose(1, 2), key.transpose(1, 2),
              value.transpose(1, 2)]
    lengths = None
    if shift >= nk - 1:
        causal = False          # every query sees every key
    elif shift == 0:
        causal = "top_left"
    elif shift == nk - nq:
        causal = "bottom_right"
    else:
        causal = "bottom_right"
        lengths = torch.full((bsz,), max(shift + nq, 0), dtype=torch.int32,
                             device=padding.device)
    mask_elt = None
    key_range = mask.key_range()
    if key_range is False:
        mask_elt = "i1"
        inputs.append(padding)
    if lengths is not None:
        inputs.append(lengths)
    if key_range is not None and key_range is not False:
        inputs.append(key_range)
    sizes = None
    if _OPTIONS["static_shapes"] == "prefill" and nq > 1:
        sizes = (bsz, nq, nk)
    kernel = _kernel(hq, hkv, d, dv, elt, mask_elt, causal, None, softcap,
                     _scale(scaling, d), query.device.type, sizes,
                     mask_rows=False, kv_len=lengths is not None,
                     key_range=key_range is not None
                     and key_range is not False,
                     key_mask=mask_elt is not None)
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
    from transformers.masking_utils import AttentionMaskInterface
    AttentionInterface.register(name, attention_forward)
    AttentionMaskInterface.register(name, attn_mask)
    return name
