"""Ring attention (context parallelism) over torch.distributed.

``ring_attention(q, k, v)`` is the attention of one sequence split into equal
contiguous chunks over the ranks of a process group: rank ``r`` of ``W``
holds positions ``[r * N, (r + 1) * N)`` of ``q``, ``k`` and ``v``, in
flash-attn's layout (``q`` ``[B, N, Hq, D]``, ``k`` and ``v``
``[B, N, Hkv, D]``, ``Hq`` a multiple of ``Hkv``: MHA, GQA, MQA), and gets
the output of its queries against the keys of all ``W * N`` positions, in
q's layout and dtype. With ``return_lse`` it also gets the ``softmax_lse``
of its rows (``[B, Hq, N]``, float32, natural log), the same as
``attn.flash.flash_attn_func`` on the whole sequence would give for them.

The K/V blocks travel around the ring: at each of the ``W`` steps a rank
computes its queries against the block it holds while, in the background
(``torch.distributed.batch_isend_irecv``), it sends that block to rank
``r + 1`` and receives the next one from rank ``r - 1``. Each block is
computed by ``attn.flash.flash_attn_func`` with its ``softmax_lse``, and
the partial results are merged exactly through their lse by
``attn.flash.merge_state`` in float32 (one rounding to q's dtype at the
end). ``causal`` masks in the whole sequence's positions (top-left, the
same as bottom-right since all chunks have the same length): the block of
rank ``j < r`` is attended in full, the rank's own block causally, and the
blocks of ranks ``j > r`` are passed on without being computed (so rank
``r`` computes ``r + 1`` blocks; no load balancing across ranks).
``softmax_scale`` defaults to ``1 / sqrt(D)``.

Tensors are PyTorch CPU tensors (backend gloo) or CUDA tensors (NCCL, where
the GPU kernels support the configuration), float32, float16 or bfloat16.
Every rank of the group must call with the same shapes and dtype: a first
small all-reduce checks that (and any rank's bad input) so that every rank
raises ``ValueError`` instead of waiting on a transfer that never comes.
Inference only: no autograd.
"""

import torch

from .flash import _check_common, flash_attn_func, merge_state

__all__ = ["ring_attention"]

_DTYPE_CODES = {torch.float32: 0, torch.float16: 1, torch.bfloat16: 2}


def _dist():
    import torch.distributed as dist
    if not (dist.is_available() and dist.is_initialized()):
        raise ValueError("attn.ring: torch.distributed is not initialized "
                         "(call torch.distributed.init_process_group "
                         "first)")
    return dist


def _peers(dist, group):
    """This rank's index in the group, the group's size and the global
    ranks of the next and the previous rank of the ring."""
    rank = dist.get_rank(group)
    world = dist.get_world_size(group)
    if rank < 0:
        raise ValueError("attn.ring: this process is not in the group")
    if group is None or group is dist.group.WORLD:
        return rank, world, (rank + 1) % world, (rank - 1) % world
    return (rank, world, dist.get_global_rank(group, (rank + 1) % world),
            dist.get_global_rank(group, (rank - 1) % world))


def _check_local(q, k, v):
    """Raises for this rank's input on its own; returns its sizes
    (B, N, Hq, D, Hkv, Dv) and dtype code."""
    for name, x in (("q", q), ("k", k), ("v", v)):
        if x.dim() != 4:
            raise ValueError(f"attn.ring: {name} must be [B, N, H, D], got "
                             f"shape {tuple(x.shape)}")
    if q.shape[:2] != k.shape[:2] or k.shape[:3] != v.shape[:3]:
        raise ValueError(f"attn.ring: q {tuple(q.shape)}, k "
                         f"{tuple(k.shape)} and v {tuple(v.shape)} must "
                         f"share B and N (each rank holds the same positions "
                         f"of the three), k and v also H")
    if not (q.device == k.device == v.device):
        raise ValueError(f"attn.ring: q, k and v are on different devices "
                         f"({q.device}, {k.device}, {v.device})")
    _check_common(0.0, q, k, v)
    return ([*q.shape, k.shape[2], v.shape[3]], _DTYPE_CODES[q.dtype])


def _check_group(dist, group, q, k, v):
    """This rank's checks, then one all-reduce (max of the values and of
    their negations) that tells every rank whether some rank failed its
    own checks or the ranks' shapes or dtypes differ."""
    error, sizes, code = None, [0] * 6, -1
    try:
        sizes, code = _check_local(q, k, v)
    except (TypeError, ValueError) as e:
        error = e
    mine = [1 if error else 0] + list(sizes) + [code]
    both = torch.tensor(mine + [-x for x in mine], dtype=torch.int64,
                        device=q.device)
    dist.all_reduce(both, op=dist.ReduceOp.MAX, group=group)
    both = both.tolist()
    hi, lo = both[:len(mine)], [-x for x in both[len(mine):]]
    if error is not None:
        raise error
    if hi[0]:
        raise ValueError("attn.ring: another rank's input is bad (its own "
                         "error says how)")
    if hi != lo:
        names = ["B", "N", "Hq", "D", "Hkv", "Dv", "dtype"]
        differ = [f"{n} {lo[i + 1]}..{hi[i + 1]}" for i, n in
                  enumerate(names) if hi[i + 1] != lo[i + 1]]
        raise ValueError(f"attn.ring: the ranks' inputs differ ("
                         f"{', '.join(differ)}); this rank has q "
                         f"{tuple(q.shape)}, k {tuple(k.shape)}, v "
                         f"{tuple(v.shape)} {q.dtype}")


def ring_attention(q, k, v, causal=False, softmax_scale=None, group=None,
                   return_lse=False):
    """This rank's out ``[B, N, Hq, Dv]`` (q's dtype) of the attention over
    the whole ring's sequence; with ``return_lse``, ``(out, softmax_lse)``
    (``[B, Hq, N]``, float32). ``group`` is the process group (default: the
    world); every rank of it must call."""
    dist = _dist()
    for name, x in (("q", q), ("k", k), ("v", v)):
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"attn.ring: {name} must be a torch.Tensor, got "
                            f"{type(x).__name__}")
    _check_group(dist, group, q, k, v)
    rank, world, nxt, prv = _peers(dist, group)
    # Two receive buffers in turn: the block sent at a step is received
    # into a buffer not in use (the caller's k and v are never written).
    kv = (k.contiguous(), v.contiguous())
    buffers = [None, None]
    out = lse = None
    for step in range(world):
        src = (rank - step) % world
        last = step + 1 == world
        if not last:
            into = buffers[step % 2]
            if into is None:
                into = buffers[step % 2] = (torch.empty_like(kv[0]),
                                            torch.empty_like(kv[1]))
            ops = [dist.P2POp(dist.isend, kv[0], nxt, group),
                   dist.P2POp(dist.isend, kv[1], nxt, group),
                   dist.P2POp(dist.irecv, into[0], prv, group),
                   dist.P2POp(dist.irecv, into[1], prv, group)]
            requests = dist.batch_isend_irecv(ops)
        if not causal or src <= rank:
            o, l, _ = flash_attn_func(q, kv[0], kv[1],
                                      softmax_scale=softmax_scale,
                                      causal=causal and src == rank,
                                      return_attn_probs=True)
            o = o.float()
            out, lse = (o, l) if out is None else merge_state(out, lse, o, l)
        if not last:
            for request in requests:
                request.wait()
            kv = into
    out = out.to(q.dtype)
    return (out, lse) if return_lse else out
