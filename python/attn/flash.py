"""flash-attn-compatible functions on attn kernels.

``flash_attn_func``, ``flash_attn_varlen_func`` and ``flash_attn_with_kvcache``
take the arguments of the flash-attn package's functions of those names
(inference: ``dropout_p`` must be 0) and ``merge_state`` merges two partial
results through their log-sum-exp. Inputs are numpy arrays or PyTorch
tensors (CPU; CUDA tensors run the GPU kernels), ``float16``, ``bfloat16``
(torch) or ``float32``, in flash-attn's layouts:

- ``q`` ``[B, Nq, Hq, D]``, ``k`` and ``v`` ``[B, Nk, Hkv, D]`` (``Hq`` a
  multiple of ``Hkv``: MHA, GQA, MQA); varlen: ``[total, H, D]`` with
  ``cu_seqlens`` (int32, ``[batch + 1]``); paged caches
  ``[num_blocks, block_size, Hkv, D]`` with ``block_table``
  ``[B, max_blocks]`` (int32).
- ``out`` has q's layout; ``softmax_lse`` is ``[B, Hq, Nq]`` (varlen:
  ``[Hq, total_q]``), float32, natural log, ``-inf`` for a row without keys.

flash-attn's conventions, which are also the attn dialect's
(docs/Semantics.md): ``causal`` and ``window_size`` are aligned to the
bottom-right corner (query ``i`` sits at key position ``i + Nk - Nq``), the
window ``(left, right)`` with ``-1`` for unbounded, ``softcap`` applies
``cap * tanh(s / cap)`` to the scaled scores, ``alibi_slopes`` (``[Hq]``,
float32) subtract ``slope * |j - p(i)|``, ``softmax_scale`` defaults to
``1 / sqrt(D)``.

Each distinct configuration (element type, head counts and dims, flags) is
compiled once through ``attn.jit`` and cached; batch and sequence sizes are
dynamic, so new lengths reuse the kernel, and (on the CPU) a
``softmax_scale`` other than the default is the kernel's run-time operand,
so new scales reuse it too.
"""

import math
import struct

from . import _abi

__all__ = ["flash_attn_func", "flash_attn_varlen_func",
           "flash_attn_with_kvcache", "merge_state", "clear_cache"]

_KERNELS = {}


def clear_cache():
    """Forgets the compiled kernels."""
    _KERNELS.clear()


def _is_torch(x):
    return type(x).__module__.startswith("torch")


_ELTS = {"float16": "f16", "bfloat16": "bf16", "float32": "f32"}
_ELT_BY_DTYPE = {}  # dtype objects seen -> element type (a per-call lookup)


def _elt(x):
    dtype = x.dtype
    elt = _ELT_BY_DTYPE.get(dtype)
    if elt is None:
        name = str(dtype).replace("torch.", "")
        if name not in _ELTS:
            raise TypeError(f"attn.flash: q, k and v must be float16, "
                            f"bfloat16 or float32, got {name}")
        elt = _ELT_BY_DTYPE[dtype] = _ELTS[name]
    return elt


_INT32_BY_DTYPE = {}  # dtype objects seen -> whether torch.int32


def _is_int32(dtype):
    is_int32 = _INT32_BY_DTYPE.get(dtype)
    if is_int32 is None:
        is_int32 = _INT32_BY_DTYPE[dtype] = str(dtype) == "torch.int32"
    return is_int32


def _device(x):
    # is_cuda: torch's CUDA tensors (a cheaper read than device.type).
    return "gpu" if getattr(x, "is_cuda", False) is True else "cpu"


def _empty(like, shape, dtype):
    return _abi.empty_like(like, list(shape), dtype)


def _tensor(dims, elt):
    return "tensor<" + "".join(
        ("?" if d is None else str(d)) + "x" for d in dims) + elt + ">"


def _kernel(text, name, device, form="fused", splits=-1):
    """The JIT kernel of `text`; `form` is the CPU form ("auto": split-KV
    for calls of few query rows, fused beyond; GPU kernels choose so
    themselves), `splits` the split-KV form's KV chunks (-1: per call from
    the threads)."""
    key = (text, device, splits)
    if key not in _KERNELS:
        from . import jit
        _KERNELS[key] = jit(text, name=f"attn.flash.{name}", device=device,
                            form=form if device == "cpu" else "fused",
                            splits=splits)[name]
    return _KERNELS[key]


def _modifiers(causal, window_size, softcap, alibi):
    """The spec's masks and logit modifiers in flash-attn's conventions."""
    mods = []
    left, right = window_size if window_size is not None else (-1, -1)
    if causal:
        mods.append("causal(bottom_right)")
        right = -1  # causal already bounds the right side
    elif left >= 0 or right >= 0 or alibi is not None:
        mods.append("align(bottom_right)")
    if left >= 0:
        mods.append(f"window_left({int(left)})")
    if right >= 0:
        mods.append(f"window_right({int(right)})")
    if softcap:
        mods.append(f"softcap({float(softcap)!r})")
    return mods


_SCALES = {}  # (value, torch?) -> a 0-d f32 array or CPU tensor


def _f32(x):
    """x rounded to float32 (the kernels' scale type)."""
    return struct.unpack("f", struct.pack("f", float(x)))[0]


def _scale_input(like, scale, d, args, inputs, mods):
    """A softmax_scale other than 1/sqrt(d) (compared in float32, so that
    ``d ** -0.5`` is the default too). On the CPU it is the kernel's
    run-time operand (``scale(%scale : tensor<f32>)``): one kernel serves
    every scale, the 0-d f32 array or tensor made once per value. CUDA
    tensors get ``scale(c)`` in the spec instead (a kernel per scale, the
    scale folded into the exponential; no device scalar whose cached value
    another stream or a graph capture could see unset).
    Returns whether the kernel takes the operand."""
    if scale is None or _f32(scale) == _f32(1.0 / math.sqrt(d)):
        return False
    if _device(like) == "gpu":
        mods.append(f"scale({float(scale)!r})")
        return False
    key = (float(scale), _is_torch(like))
    t = _SCALES.get(key)
    if t is None:
        if len(_SCALES) > 256:
            _SCALES.clear()
        t = _empty(like, (), "f32")
        if _is_torch(like):
            t.fill_(float(scale))
        else:
            t[...] = float(scale)
        _SCALES[key] = t
    if args is not None:
        args.append(("scale", "tensor<f32>", "scale"))
    inputs.append(t)
    return True


def _check_common(dropout_p, q, k, v):
    if dropout_p:
        raise ValueError("attn.flash: dropout_p must be 0 (inference only)")
    dtype = q.dtype
    if not (k.dtype is dtype and v.dtype is dtype or
            _elt(q) == _elt(k) == _elt(v)):
        raise TypeError("attn.flash: q, k and v must share one dtype")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"attn.flash: q's head dim {q.shape[-1]} differs "
                         f"from k's {k.shape[-1]}")
    if q.shape[-2] % k.shape[-2] != 0:
        raise ValueError(f"attn.flash: {q.shape[-2]} query heads are not a "
                         f"multiple of {k.shape[-2]} K/V heads")


def _attention(name, args, mods, o_dims, lse_dims, elt):
    """The text of a function holding one attn.attention; without lse when
    `lse_dims` is None."""
    params = ", ".join(f"%{n}: {t}" for n, t, _ in args)
    operands = " ".join(f"{role}(%{n} : {t})" for n, t, role in args if role)
    out_t = _tensor(o_dims, elt)
    if lse_dims is None:
        return (f"func.func @{name}({params}) -> {out_t} {{\n"
                f"  %o = attn.attention {operands} layout(bnhd) "
                f"{' '.join(mods)} -> {out_t}\n"
                f"  return %o : {out_t}\n}}\n")
    lse_t = _tensor(lse_dims, "f32")
    return (f"func.func @{name}({params}) -> ({out_t}, {lse_t}) {{\n"
            f"  %o, %l = attn.attention {operands} layout(bnhd) "
            f"{' '.join(mods)} -> {out_t}, {lse_t}\n"
            f"  return %o, %l : {out_t}, {lse_t}\n}}\n")


def flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False,
                    window_size=(-1, -1), softcap=0.0, alibi_slopes=None,
                    deterministic=False, return_attn_probs=False):
    """flash_attn.flash_attn_func: out ``[B, Nq, Hq, D]``; with
    ``return_attn_probs``, ``(out, softmax_lse, None)`` (no probabilities
    are materialized)."""
    _check_common(dropout_p, q, k, v)
    elt = _elt(q)
    hq, d, hkv, dv = q.shape[2], q.shape[3], k.shape[2], v.shape[3]
    args = [("q", _tensor([None, None, hq, d], elt), "q"),
            ("k", _tensor([None, None, hkv, d], elt), "k"),
            ("v", _tensor([None, None, hkv, dv], elt), "v")]
    inputs = [q, k, v]
    mods = _modifiers(causal, window_size, softcap, alibi_slopes)
    if alibi_slopes is not None:
        args.append(("slopes", _tensor([hq], "f32"), "alibi"))
        inputs.append(alibi_slopes)
    _scale_input(q, softmax_scale, d, args, inputs, mods)
    text = _attention("flash_attn", args, mods, [None, None, hq, dv],
                      [None, hq, None], elt)
    kernel = _kernel(text, "flash_attn", _device(q))
    b, nq = q.shape[0], q.shape[1]
    out = _empty(q, (b, nq, hq, dv), elt)
    lse = _empty(q, (b, hq, nq), "f32")
    kernel(*inputs, out=(out, lse))
    return (out, lse, None) if return_attn_probs else out


def flash_attn_varlen_func(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                           max_seqlen_k, dropout_p=0.0, softmax_scale=None,
                           causal=False, window_size=(-1, -1), softcap=0.0,
                           alibi_slopes=None, deterministic=False,
                           return_attn_probs=False, block_table=None):
    """flash_attn.flash_attn_varlen_func: the sequences packed along the
    first dimension (``q`` ``[total_q, Hq, D]``), each its own problem
    (causal on its own bottom-right diagonal); out ``[total_q, Hq, D]``,
    softmax_lse ``[Hq, total_q]``. With ``block_table`` k and v are paged
    caches ``[num_blocks, block_size, Hkv, D]`` and ``cu_seqlens_k`` gives
    each sequence's key count by its differences."""
    _check_common(dropout_p, q, k, v)
    elt = _elt(q)
    hq, d, hkv, dv = q.shape[1], q.shape[2], k.shape[-2], v.shape[-1]
    cu_t = _tensor([None], "i32")
    mods = _modifiers(causal, window_size, softcap, alibi_slopes)
    # The packed tokens are one batch entry of the bnhd layout (a view).
    q4 = q.reshape(1, *q.shape)
    if block_table is None:
        args = [("q", _tensor([1, None, hq, d], elt), "q"),
                ("k", _tensor([1, None, hkv, d], elt), "k"),
                ("v", _tensor([1, None, hkv, dv], elt), "v"),
                ("cq", cu_t, None), ("ck", cu_t, None)]
        inputs = [q4, k.reshape(1, *k.shape), v.reshape(1, *v.shape),
                  cu_seqlens_q, cu_seqlens_k]
        mods.insert(0, f"ragged(%cq, %ck : {cu_t}, {cu_t})")
    else:
        # Paged: each sequence's keys through its row of the table, its key
        # count kv_len = cu_seqlens_k[s + 1] - cu_seqlens_k[s].
        bs = k.shape[1]
        pool_k = _tensor([None, bs, hkv, d], elt)
        pool_v = _tensor([None, bs, hkv, dv], elt)
        pt = _tensor([None, None], "i32")
        args = [("q", _tensor([1, None, hq, d], elt), "q"),
                ("k", pool_k, "k"), ("v", pool_v, "v"),
                ("cq", cu_t, None), ("pt", pt, "page_table"),
                ("len", cu_t, "kv_len")]
        lens = cu_seqlens_k[1:] - cu_seqlens_k[:-1]
        inputs = [q4, k, v, cu_seqlens_q, block_table, lens]
        mods.insert(0, f"ragged(%cq : {cu_t})")
    if alibi_slopes is not None:
        args.append(("slopes", _tensor([hq], "f32"), "alibi"))
        inputs.append(alibi_slopes)
    _scale_input(q, softmax_scale, d, args, inputs, mods)
    name = "flash_attn_varlen" + ("_paged" if block_table is not None else "")
    text = _attention(name, args, mods, [1, None, hq, dv], [1, hq, None],
                      elt)
    kernel = _kernel(text, name, _device(q))
    total = q.shape[0]
    out = _empty(q, (1, total, hq, dv), elt)
    lse = _empty(q, (1, hq, total), "f32")
    kernel(*inputs, out=(out, lse))
    out, lse = out.reshape(total, hq, dv), lse.reshape(hq, total)
    return (out, lse, None) if return_attn_probs else out


def _append_rows(cache, new, seqlens, block_table):
    """Writes new [B, Nnew, Hkv, D] at positions seqlens[b] .. of each
    sequence's cache, in place (through the block table when paged)."""
    b, n = new.shape[0], new.shape[1]
    for s in range(b):
        start = int(seqlens[s])
        if block_table is None:
            if start < 0 or start + n > cache.shape[1]:
                raise ValueError(f"attn.flash: sequence {s}'s new tokens "
                                 f"[{start}, {start + n}) do not fit its "
                                 f"cache of {cache.shape[1]}")
            cache[s, start:start + n] = new[s]
            continue
        bs = cache.shape[1]
        for t in range(n):
            pos = start + t
            slot = pos // bs
            if pos < 0 or slot >= block_table.shape[1]:
                raise ValueError(f"attn.flash: position {pos} of sequence "
                                 f"{s} is past its block table")
            page = int(block_table[s, slot])
            if page < 0 or page >= cache.shape[0]:
                raise ValueError(f"attn.flash: block_table[{s}, {slot}] = "
                                 f"{page} is not a block of the cache")
            cache[page, pos % bs] = new[s, t]


def _lengths(values, like, torch_in):
    """int32 lengths on like's device (torch) or a numpy array."""
    if torch_in:
        import torch
        return torch.as_tensor(values, dtype=torch.int32, device=like.device)
    import numpy as np
    return np.asarray(values, dtype=np.int32)


def _usable(x, like, torch_in):
    """Whether `x` can be passed as it is: an int32 torch vector,
    contiguous, on like's device (no host round trip)."""
    return (torch_in and _is_torch(x) and _is_int32(x.dtype)
            and x.dim() == 1 and x.is_contiguous()
            and (x.is_cpu and like.is_cpu or x.device == like.device))


def _ints(x):
    return [int(e) for e in (x.tolist() if hasattr(x, "tolist") else x)]


def flash_attn_with_kvcache(q, k_cache, v_cache, k=None, v=None,
                            rotary_cos=None, rotary_sin=None,
                            cache_seqlens=None, cache_batch_idx=None,
                            cache_leftpad=None, block_table=None,
                            softmax_scale=None, causal=False,
                            window_size=(-1, -1), softcap=0.0,
                            rotary_interleaved=True, alibi_slopes=None,
                            num_splits=0, return_softmax_lse=False):
    """flash_attn.flash_attn_with_kvcache: decode (or a chunk of new
    queries) against a KV cache ``[B, Nmax, Hkv, D]`` or a paged one
    ``[num_blocks, block_size, Hkv, D]`` with ``block_table``. With ``k`` and
    ``v`` (``[B, Nnew, Hkv, D]``) the new tokens are first written into the
    caches in place at ``cache_seqlens``; the attention then reads
    ``cache_seqlens + Nnew`` keys per sequence. ``cache_leftpad`` (``[B]``)
    gives each sequence's first valid key (left padding: ``kv_start``; the
    positions of causal masks, windows and ALiBi stay those of the cache).
    ``num_splits`` > 0 fixes the split-KV form's KV chunks (CPU kernels);
    0, flash-attn's heuristic, chooses them per call from the threads.
    Rotary embeddings and ``cache_batch_idx`` are not supported (raise)."""
    if rotary_cos is not None or rotary_sin is not None:
        raise NotImplementedError("attn.flash: rotary embeddings are not "
                                  "applied by flash_attn_with_kvcache")
    if cache_batch_idx is not None:
        raise NotImplementedError("attn.flash: cache_batch_idx is not "
                                  "supported")
    _check_common(0.0, q, k_cache, v_cache)
    elt = _elt(q)
    bsz, nq, hq, d = q.shape
    hkv, dv = k_cache.shape[2], v_cache.shape[3]
    torch_in = _is_torch(q)
    if cache_seqlens is None:
        full = k_cache.shape[1] * (block_table.shape[1]
                                   if block_table is not None else 1)
        cache_seqlens = [full] * bsz
    elif isinstance(cache_seqlens, int):
        cache_seqlens = [cache_seqlens] * bsz
    if k is None and v is None and _usable(cache_seqlens, q, torch_in):
        lens = cache_seqlens
    else:
        seqlens = _ints(cache_seqlens)
        if k is not None or v is not None:
            if k is None or v is None:
                raise ValueError("attn.flash: give both k and v, or neither")
            _append_rows(k_cache, k, seqlens, block_table)
            _append_rows(v_cache, v, seqlens, block_table)
            seqlens = [x + k.shape[1] for x in seqlens]
        lens = _lengths(seqlens, q, torch_in)
    starts = None
    if cache_leftpad is not None:
        starts = (cache_leftpad if _usable(cache_leftpad, q, torch_in)
                  else _lengths(_ints(cache_leftpad), q, torch_in))
    paged = block_table is not None
    inputs = [q, k_cache, v_cache] + ([block_table] if paged else []) + [lens]
    if starts is not None:
        inputs.append(starts)
    if alibi_slopes is not None:
        inputs.append(alibi_slopes)
    device = _device(q)
    mods = _modifiers(causal, window_size, softcap, alibi_slopes)
    scaled = _scale_input(q, softmax_scale, d, None, inputs, mods)
    # The kernel by what its text depends on, before building the text.
    # Without return_softmax_lse the kernel has no lse result (one
    # allocation less per call).
    with_lse = bool(return_softmax_lse)
    # num_splits as flash-attn reads it: 0 (or less) a heuristic, here the
    # count chosen per call from the threads; a positive count fixes the
    # split-KV form's chunks (CPU kernels; GPU kernels choose their own).
    splits = int(num_splits) if num_splits and int(num_splits) > 0 else -1
    key = ("kvcache", elt, hq, hkv, d, dv, tuple(mods),
           k_cache.shape[1] if paged else None, alibi_slopes is not None,
           starts is not None, scaled, device, with_lse, splits)
    kernel = _KERNELS.get(key)
    if kernel is None:
        args = [("q", _tensor([None, None, hq, d], elt), "q")]
        bs = k_cache.shape[1] if paged else None
        args += [("k", _tensor([None, bs, hkv, d], elt), "k"),
                 ("v", _tensor([None, bs, hkv, dv], elt), "v")]
        if paged:
            args.append(("pt", _tensor([None, None], "i32"), "page_table"))
        args.append(("len", _tensor([None], "i32"), "kv_len"))
        if starts is not None:
            args.append(("start", _tensor([None], "i32"), "kv_start"))
        if alibi_slopes is not None:
            args.append(("slopes", _tensor([hq], "f32"), "alibi"))
        if scaled:
            args.append(("scale", "tensor<f32>", "scale"))
        name = "flash_attn_kvcache" + ("_paged" if paged else "")
        text = _attention(name, args, mods, [None, None, hq, dv],
                          [None, hq, None] if with_lse else None, elt)
        # Decode steps (a few new queries against a long cache) run split-KV,
        # longer chunks fused: one kernel, chosen per call.
        kernel = _KERNELS[key] = _kernel(text, name, device, form="auto",
                                         splits=splits)
    # q's dtype and device (_abi.empty_like: new_empty on a plain tensor).
    out = _empty(q, (bsz, nq, hq, dv), elt)
    inputs.append(out)
    if not with_lse:
        kernel._invoke(inputs)
        return out
    lse = _empty(q, (bsz, hq, nq), "f32")
    inputs.append(lse)
    kernel._invoke(inputs)
    return out, lse


def merge_state(out_a, lse_a, out_b, lse_b):
    """The exact merge of two attention results over disjoint key sets
    (attn.combine): out ``[B, N, H, D]`` (flash-attn's layout) and lse
    ``[B, H, N]`` (natural log) each; returns ``(out, lse)``. A side whose
    lse is -inf (no keys) contributes nothing."""
    elt = _elt(out_a)
    b, n, h, d = out_a.shape
    o_t = _tensor([None, None, h, d], elt)
    l_t = _tensor([None, h, None], "f32")
    text = (f"func.func @merge_state(%oa: {o_t}, %la: {l_t}, %ob: {o_t}, "
            f"%lb: {l_t}) -> ({o_t}, {l_t}) {{\n"
            f"  %o, %l = attn.combine a(%oa, %la : {o_t}, {l_t}) "
            f"b(%ob, %lb : {o_t}, {l_t}) layout(bnhd) -> {o_t}, {l_t}\n"
            f"  return %o, %l : {o_t}, {l_t}\n}}\n")
    kernel = _kernel(text, "merge_state", _device(out_a))
    out = _empty(out_a, (b, n, h, d), elt)
    lse = _empty(out_a, (b, h, n), "f32")
    kernel(out_a, lse_a, out_b, lse_b, out=(out, lse))
    return out, lse
