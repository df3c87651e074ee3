"""The f64 reference of the GPU benchmark, from docs/Semantics.md alone.

Shares no code with attn. PyTorch float64 on whatever device the inputs are
on (the GPU in bench/gpu.sh run, the CPU in its unit test,
bench/gpu_reference_test.py).
"""

import math

import torch


def allowed_keys(nq, nk, causal, kv_len=None, rows=None):
    """[rows, nk] bool (every row by default): key j readable by query row i
    (docs/Semantics.md, "Which keys a query may read"): j < kv_len, and
    under causal j <= p(i), p(i) = i (top_left) or i + kv_len - nq
    (bottom_right)."""
    kv = nk if kv_len is None else kv_len
    i = torch.arange(nq) if rows is None else torch.as_tensor(rows)
    i = i.unsqueeze(1)
    j = torch.arange(nk).unsqueeze(0)
    ok = (j < kv).expand(i.shape[0], nk)
    if causal == "top_left":
        ok = ok & (j <= i)
    elif causal == "bottom_right":
        ok = ok & (j <= i + kv - nq)
    elif causal is not None:
        raise ValueError(f"causal={causal!r}")
    return ok


def reference_rows(q, k, v, rows, batches, causal=None, scale=None,
                   kv_len=None, allowed=None):
    """f64 attention output for query rows `rows` of batch entries `batches`:
    q [B, Hq, Nq, D], k and v [B, Hkv, Nk, D] (query head h reads K/V head
    h // (Hq / Hkv)); returns [len(batches), Hq, len(rows), Dv] float64.
    Softmax with the row maximum subtracted; a row with no readable key is
    0. `kv_len`: one int per batch entry, or None. `allowed`: a [len(rows),
    Nk] bool mask (a mask_mod's values) combined with the others, or None."""
    B, Hq, Nq, D = q.shape
    Hkv, Nk = k.shape[1], k.shape[2]
    if Hq % Hkv:
        raise ValueError(f"Hq = {Hq} is not a multiple of Hkv = {Hkv}")
    group = Hq // Hkv
    scale = 1.0 / math.sqrt(D) if scale is None else scale
    rows = torch.as_tensor(rows, dtype=torch.long)
    outs = []
    for b in batches:
        kvb = None if kv_len is None else int(kv_len[b])
        ok = allowed_keys(Nq, Nk, causal, kvb, rows).to(q.device)  # [r, Nk]
        if allowed is not None:
            ok = ok & allowed.to(q.device)
        qb = q[b][:, rows].double()  # [Hq, r, D]
        kb = k[b].double()  # [Hkv, Nk, D]
        vb = v[b].double()
        # Query heads grouped by the K/V head they read: [Hkv, group*r, D].
        qg = qb.reshape(Hkv, group * len(rows), D)
        s = scale * (qg @ kb.transpose(1, 2))  # [Hkv, group*r, Nk]
        s = s.reshape(Hkv, group, len(rows), Nk)
        s = s.masked_fill(~ok, float("-inf"))
        m = s.amax(dim=-1, keepdim=True)
        m = torch.where(torch.isinf(m), torch.zeros_like(m), m)
        p = torch.exp(s - m)  # exp(-inf) = 0 for masked keys
        denom = p.sum(dim=-1, keepdim=True)
        o = (p @ vb.unsqueeze(1)) / torch.where(denom > 0, denom,
                                                torch.ones_like(denom))
        outs.append(o.reshape(Hq, len(rows), vb.shape[-1]))
    return torch.stack(outs)

