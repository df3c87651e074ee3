"""The GPU benchmark's variant and serving rows (bench/gpu.sh, issue 23).

- docmask: document masking (8 packed documents, causal) at 8k and 32k
  tokens, against FlexAttention (torch.compile(flex_attention) with its block
  mask) and SDPA with the dense boolean mask. Targets: >= 1.0x FlexAttention,
  >= 5x SDPA with the dense mask.
- prefixlm: prefix-LM (prefix 2048 of 8k) against the same two peers.
- paged: paged decode (pages of 16 tokens, shuffled) against our own kernel
  on the contiguous cache (the decode spec of the same shape) and SDPA on the
  contiguous cache. PyTorch core has no paged attention kernel (FlexAttention's
  paged attention is an experimental recipe, not used). Targets: within 10% of
  the contiguous cache, >= 85% of HBM bandwidth at batch >= 16.
- ragged: a ragged prefill batch of 8 sequences (128 to 4096 tokens, causal)
  against our kernel on the padded batch (the prefill spec
  ragged_padded_b8_n4k_bf16) and SDPA on the padded batch. Target: >= 1.5x
  faster than our padded batch.

Each row checks ours and every peer against the f64 reference of
bench/gpu_reference.py on sampled rows. Plain Python at import (torch only
inside the functions that run on the GPU machine).
"""

KINDS = ("docmask", "prefixlm", "paged", "ragged")
D = 128
RAGGED_LENGTHS = (128, 256, 512, 768, 1024, 2048, 3072, 4096)


def specs():
    out = []
    for n in (8192, 32768):
        out.append({"name": f"docmask_n{n // 1024}k_bf16", "kind": "docmask",
                    "B": 1, "Hq": 16, "Hkv": 16, "Nq": n, "Nk": n, "D": D,
                    "dtype": "bf16", "causal": "top_left", "docs": 8})
    out.append({"name": "prefixlm_n8k_bf16", "kind": "prefixlm", "B": 1,
                "Hq": 16, "Hkv": 16, "Nq": 8192, "Nk": 8192, "D": D,
                "dtype": "bf16", "causal": None, "prefix": 2048})
    for b, kv in ((16, 16384), (64, 8192)):
        out.append({"name": f"paged_decode_b{b}_kv{kv // 1024}k_bf16",
                    "kind": "paged", "B": b, "Hq": 32, "Hkv": 8, "Nq": 1,
                    "Nk": kv, "D": D, "dtype": "bf16", "causal": None,
                    "page": 16,
                    "contiguous": f"decode_b{b}_kv{kv // 1024}k_bf16"})
    total = sum(RAGGED_LENGTHS)
    out.append({"name": "ragged_prefill_8seq_bf16", "kind": "ragged", "B": 1,
                "Hq": 32, "Hkv": 8, "Nq": total, "Nk": total, "D": D,
                "dtype": "bf16", "causal": "bottom_right",
                "lengths": list(RAGGED_LENGTHS),
                "padded": "ragged_padded_b8_n4k_bf16"})
    # The padded batch the ragged row compares with: a prefill row of its own.
    out.append({"name": "ragged_padded_b8_n4k_bf16", "kind": "prefill",
                "B": len(RAGGED_LENGTHS), "Hq": 32, "Hkv": 8,
                "Nq": max(RAGGED_LENGTHS), "Nk": max(RAGGED_LENGTHS), "D": D,
                "dtype": "bf16", "causal": "top_left"})
    return out


def spec_text(s):
    """The spec's MLIR for the kinds of this module."""
    el, B, Hq, Hkv, Nq, Nk, d = (s[x] for x in
                                 ("dtype", "B", "Hq", "Hkv", "Nq", "Nk", "D"))
    q = f"tensor<{B}x{Hq}x{Nq}x{d}x{el}>"
    head = f"// bench/gpu_serving.py: {s['kind']} {s['name']}\n"
    kind = s["kind"]
    if kind in ("docmask", "prefixlm"):
        kv = f"tensor<{B}x{Hkv}x{Nk}x{d}x{el}>"
        if kind == "docmask":
            ids = f"tensor<{Nk}xi32>"
            args = f"%q: {q}, %k: {kv}, %v: {kv}, %doc: {ids}"
            mods = (f" causal(top_left) mod_inputs(%doc : {ids})\n"
                    f"      mask_mod {{\n"
                    f"      ^bb0(%b: index, %h: index, %i: index, %j: index, "
                    f"%d: {ids}):\n"
                    f"        %di = tensor.extract %d[%i] : {ids}\n"
                    f"        %dj = tensor.extract %d[%j] : {ids}\n"
                    f"        %same = arith.cmpi eq, %di, %dj : i32\n"
                    f"        attn.yield %same : i1\n"
                    f"      }}")
        else:
            args = f"%q: {q}, %k: {kv}, %v: {kv}"
            mods = (f"\n      mask_mod {{\n"
                    f"      ^bb0(%b: index, %h: index, %i: index, %j: index):\n"
                    f"        %p = arith.constant {s['prefix']} : index\n"
                    f"        %in = arith.cmpi slt, %j, %p : index\n"
                    f"        %past = arith.cmpi sle, %j, %i : index\n"
                    f"        %ok = arith.ori %in, %past : i1\n"
                    f"        attn.yield %ok : i1\n"
                    f"      }}")
        body = f"q(%q : {q}) k(%k : {kv}) v(%v : {kv}){mods}"
    elif kind == "paged":
        m = Nk // s["page"]
        pool = f"tensor<{B * m}x{Hkv}x{s['page']}x{d}x{el}>"
        pt, ln = f"tensor<{B}x{m}xi32>", f"tensor<{B}xi32>"
        args = f"%q: {q}, %k: {pool}, %v: {pool}, %pt: {pt}, %len: {ln}"
        body = (f"q(%q : {q}) k(%k : {pool}) v(%v : {pool})\n"
                f"      page_table(%pt : {pt}) kv_len(%len : {ln})")
    elif kind == "ragged":
        kv = f"tensor<{B}x{Hkv}x{Nk}x{d}x{el}>"
        cu = f"tensor<{len(s['lengths']) + 1}xi32>"
        args = f"%q: {q}, %k: {kv}, %v: {kv}, %cq: {cu}, %ck: {cu}"
        body = (f"q(%q : {q}) k(%k : {kv}) v(%v : {kv})\n"
                f"      ragged(%cq, %ck : {cu}, {cu}) causal(bottom_right)")
    else:
        raise ValueError(f"unknown kind {kind!r}")
    return (head + f"func.func @{s['name']}({args}) -> {q} {{\n"
            f"  %out = attn.attention {body} -> {q}\n"
            f"  return %out : {q}\n}}\n")


# -- The inputs and the reference (torch on the GPU machine) ---------------

def document_ids(n, docs):
    """Sorted ids of `docs` documents of unequal lengths covering n tokens."""
    cuts = sorted({int(n * (k / docs) ** 1.3) for k in range(1, docs)})
    ids, doc = [], 0
    for t in range(n):
        while doc < len(cuts) and t >= cuts[doc]:
            doc += 1
        ids.append(doc)
    return ids


def make_inputs(torch, device, spec, gen):
    """The kernel's arguments in order, and what the reference and the
    peers need."""
    dt = {"bf16": torch.bfloat16, "f16": torch.float16}[spec["dtype"]]
    B, Hq, Hkv, Nq, Nk, d = (spec[x] for x in
                             ("B", "Hq", "Hkv", "Nq", "Nk", "D"))

    def randn(*shape):
        return torch.randn(*shape, device=device, dtype=dt, generator=gen)

    q = randn(B, Hq, Nq, d)
    inp = {"q": q}
    kind = spec["kind"]
    if kind in ("docmask", "prefixlm"):
        k, v = randn(B, Hkv, Nk, d), randn(B, Hkv, Nk, d)
        inp.update(k=k, v=v, args=[q, k, v])
        i = torch.arange(Nq, device=device).unsqueeze(1)
        j = torch.arange(Nk, device=device).unsqueeze(0)
        if kind == "docmask":
            doc = torch.tensor(document_ids(Nk, spec["docs"]),
                               dtype=torch.int32, device=device)
            inp["doc"] = doc
            inp["args"].append(doc)
            inp["allowed"] = lambda rows: (
                (doc[rows].unsqueeze(1) == doc.unsqueeze(0))
                & (j <= torch.as_tensor(rows, device=device).unsqueeze(1)))
        else:
            p = spec["prefix"]
            inp["allowed"] = lambda rows: (
                (j < p) | (j <= torch.as_tensor(rows, device=device)
                           .unsqueeze(1)))
        del i
    elif kind == "paged":
        s = spec["page"]
        m = Nk // s
        pool_k, pool_v = randn(B * m, Hkv, s, d), randn(B * m, Hkv, s, d)
        perm = torch.randperm(B * m, generator=torch.Generator().manual_seed(1))
        pt = perm.reshape(B, m).to(torch.int32).to(device)
        lens = torch.full((B,), Nk, dtype=torch.int32, device=device)
        # The contiguous cache the pages hold: [B, Hkv, Nk, D].
        dense = [pool[pt.long()].permute(0, 2, 1, 3, 4).reshape(B, Hkv, Nk, d)
                 for pool in (pool_k, pool_v)]
        inp.update(k=dense[0], v=dense[1], args=[q, pool_k, pool_v, pt, lens])
    elif kind == "ragged":
        k, v = randn(1, Hkv, Nk, d), randn(1, Hkv, Nk, d)
        offsets = [0]
        for n in spec["lengths"]:
            offsets.append(offsets[-1] + n)
        cu = torch.tensor(offsets, dtype=torch.int32, device=device)
        inp.update(k=k, v=v, offsets=offsets, args=[q, k, v, cu, cu])
    else:
        raise ValueError(f"unknown kind {kind!r}")
    return inp


def checker(torch, ref, spec, inp, rows_of):
    """error_of(out): the largest error of `out` (in the spec's own layout,
    or mapped by the caller) against the f64 reference on sampled rows."""
    kind = spec["kind"]
    q, k, v = inp["q"], inp["k"], inp["v"]
    if kind == "ragged":
        picks = []
        offsets = inp["offsets"]
        for s in (0, len(offsets) // 2 - 1, len(offsets) - 2):
            a, b = offsets[s], offsets[s + 1]
            rows = rows_of(b - a)
            want = ref.reference_rows(q[:, :, a:b], k[:, :, a:b],
                                      v[:, :, a:b], rows, [0],
                                      "bottom_right")
            picks.append(([a + r for r in rows], want))

        def error_of(out):
            err = 0.0
            for rows, want in picks:
                got = out[0:1][:, :, rows].double()
                if not torch.isfinite(got).all():
                    return float("inf")
                err = max(err, float((got - want).abs().max()))
            return err
        return error_of
    rows = rows_of(spec["Nq"])
    batches = sorted({0, spec["B"] // 2, spec["B"] - 1})
    extra = inp.get("allowed")
    want = ref.reference_rows(q, k, v, rows, batches, spec["causal"],
                              allowed=extra(rows) if extra else None)

    def error_of(out):
        got = out[batches][:, :, rows].double()
        if not torch.isfinite(got).all():
            return float("inf")
        return float((got - want).abs().max())
    return error_of


# -- The peers --------------------------------------------------------------

def peers(torch, device, spec, inp, load_kernel):
    """name -> (call, map from its output to ours for the error check)."""
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    kind = spec["kind"]
    q, k, v = inp["q"], inp["k"], inp["v"]
    out = {}
    same = (lambda o: o)
    if kind in ("docmask", "prefixlm"):
        n = spec["Nq"]
        try:
            from torch.nn.attention.flex_attention import (create_block_mask,
                                                           flex_attention)
            if kind == "docmask":
                doc = inp["doc"]

                def mask_mod(b, h, qi, ki):
                    return (doc[qi] == doc[ki]) & (ki <= qi)
            else:
                p = spec["prefix"]

                def mask_mod(b, h, qi, ki):
                    return (ki < p) | (ki <= qi)
            block = create_block_mask(mask_mod, None, None, n, n,
                                      device=device)
            # Compiled on the GPU (FlexAttention's fast path); eager in the
            # CPU dry run (bench/gpu_dryrun_test.sh).
            flex = (torch.compile(flex_attention) if device == "cuda"
                    else flex_attention)
            out["FlexAttention"] = (lambda: flex(q, k, v, block_mask=block),
                                    same)
        except Exception as e:  # no flex_attention in this PyTorch
            out["FlexAttention"] = ("error: " + str(e)[:100], None)
        allowed = inp["allowed"](list(range(n)))  # [N, N] bool
        mask = allowed.view(1, 1, n, n)

        def dense():
            with sdpa_kernel([SDPBackend.EFFICIENT_ATTENTION,
                              SDPBackend.CUDNN_ATTENTION,
                              SDPBackend.MATH]):
                return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        out["SDPA dense mask"] = (dense, same)
    elif kind == "paged":
        contiguous = load_kernel(spec["contiguous"])
        o2 = torch.empty_like(q)
        if contiguous is not None:
            out["ours contiguous"] = (
                lambda: (contiguous(q, k, v, out=o2), o2)[1], same)

        def sdpa():
            with sdpa_kernel([SDPBackend.FLASH_ATTENTION,
                              SDPBackend.EFFICIENT_ATTENTION]):
                return F.scaled_dot_product_attention(q, k, v,
                                                      enable_gqa=True)
        out["SDPA contiguous"] = (sdpa, same)
    elif kind == "ragged":
        offsets, lengths = inp["offsets"], spec["lengths"]
        nb, width = len(lengths), max(lengths)

        def pad(t):
            p = t.new_zeros(nb, t.shape[1], width, t.shape[3])
            for s in range(nb):
                p[s, :, :lengths[s]] = t[0, :, offsets[s]:offsets[s + 1]]
            return p
        qp, kp, vp = pad(q), pad(k), pad(v)

        def unpad(o):
            u = o.new_zeros(1, o.shape[1], offsets[-1], o.shape[3])
            for s in range(nb):
                u[0, :, offsets[s]:offsets[s + 1]] = o[s, :, :lengths[s]]
            return u
        padded = load_kernel(spec["padded"])
        op = torch.empty_like(qp)
        if padded is not None:
            out["ours padded"] = (
                lambda: (padded(qp, kp, vp, out=op), op)[1], unpad)

        def sdpa():
            with sdpa_kernel([SDPBackend.FLASH_ATTENTION,
                              SDPBackend.EFFICIENT_ATTENTION]):
                return F.scaled_dot_product_attention(qp, kp, vp,
                                                      is_causal=True,
                                                      enable_gqa=True)
        out["SDPA padded"] = (sdpa, unpad)
    return out


def run_spec(torch, dev, attn, ref, spec, pack, reps, skip_ours, helpers):
    """One row: ours and the peers, each checked and timed (CUDA events)."""
    import os
    result = {"spec": spec, "status": "ok", "peers": {}, "peer_err": {}}
    gen = torch.Generator(device=dev.name).manual_seed(0)
    inp = make_inputs(torch, dev.name, spec, gen)
    error_of = checker(torch, ref, spec, inp, helpers["sample_rows"])
    tol = helpers["tolerance"][spec["dtype"]]
    result["tol"] = tol

    def load_kernel(name):
        path = os.path.join(pack, "lib", f"lib{name}.so")
        if not os.path.exists(path):
            return None
        return attn.load_library(path)[name]

    helpers["say"]("PHASE", "ours")
    q = inp["q"]
    kernel = None if skip_ours else load_kernel(spec["name"])
    if skip_ours:
        result.update(status="SKIP", message="ours skipped: our kernels hung "
                      "or broke the GPU context twice")
    elif kernel is None:
        result.update(status="FAIL", message=helpers["not_compiled"](spec))
    else:
        def make_call():
            out = torch.empty_like(q)
            return (lambda: kernel(*inp["args"], out=out)), out
        if not helpers["run_ours"](dev, make_call, error_of, tol, reps,
                                   result):
            return result
    helpers["say"]("PHASE", "peers")
    for name, (fn, to_ours) in peers(torch, dev.name, spec, inp,
                                     load_kernel).items():
        if isinstance(fn, str):
            result["peers"][name] = fn
            continue
        helpers["say"]("PHASE", "peer " + name)
        try:
            o = fn()
            dev.sync()
            result["peer_err"][name] = error_of(to_ours(o))
            result["peers"][name] = dev.time(fn, dev.reps(fn, reps))
        except Exception as e:
            result["peers"][name] = "error: " + helpers["short"](e)
            try:
                dev.sync()
            except Exception:
                result["fatal"] = True
                return result
    return result


# -- The table ----------------------------------------------------------------

def _median(t):
    if not isinstance(t, list) or not t:
        return None
    t = sorted(t)
    n = len(t)
    return t[n // 2] if n % 2 else 0.5 * (t[n // 2 - 1] + t[n // 2])


def bytes_read(spec):
    """Decode: q, the K/V rows read and out (2-byte elements)."""
    q = spec["B"] * spec["Hq"] * spec["Nq"] * spec["D"]
    kv = spec["B"] * spec["Hkv"] * spec["Nk"] * spec["D"]
    return 2 * (2 * q + 2 * kv)


def verdicts(spec, ours, peer_ms, peak_gbs):
    """(target text, verdict text) of a row, from medians in ms."""
    kind = spec["kind"]

    def ratio(name):
        t = peer_ms.get(name)
        return t / ours if t and ours else None
    if kind == "docmask":
        flex, dense = ratio("FlexAttention"), ratio("SDPA dense mask")
        ok = (flex is not None and flex >= 1.0 and dense is not None and
              dense >= 5.0)
        return (">= 1.0x Flex, >= 5x SDPA mask",
                ("met" if ok else "missed") +
                f" ({_x(flex)} Flex, {_x(dense)} SDPA mask)")
    if kind == "prefixlm":
        return ("(no target)", f"{_x(ratio('FlexAttention'))} Flex, "
                f"{_x(ratio('SDPA dense mask'))} SDPA mask")
    if kind == "paged":
        cont = ratio("ours contiguous")
        gbs = bytes_read(spec) / (ours * 1e-3) / 1e9 if ours else None
        pct = 100 * gbs / peak_gbs if gbs and peak_gbs else None
        ok = cont is not None and cont >= 1 / 1.1 and (
            pct is not None and pct >= 85)
        return ("<= 1.1x contiguous, >= 85% HBM",
                ("met" if ok else "missed") +
                f" ({_x(cont)} contiguous, " +
                (f"{gbs:.0f} GB/s = {pct:.0f}% HBM)" if pct is not None
                 else "HBM n/a)"))
    if kind == "ragged":
        pad = ratio("ours padded")
        ok = pad is not None and pad >= 1.5
        return (">= 1.5x ours padded", ("met" if ok else "missed") +
                f" ({_x(pad)} ours padded, "
                f"{_x(ratio('SDPA padded'))} SDPA padded)")
    return ("", "")


def _x(r):
    return f"{r:.2f}x" if r is not None else "n/a"


def markdown(rows, device):
    """The variant and serving rows as one markdown table (ratios are the
    peer's median over ours: > 1 means ours is faster)."""
    sel = [r for r in rows if r["spec"]["kind"] in KINDS]
    if not sel:
        return ""
    out = ["| variant / serving | shape | ours ms (min-max) | max err (tol) | "
           "peers ms (max err) | target | verdict |",
           "|---|---|---|---|---|---|---|"]
    for r in sel:
        s = r["spec"]
        shape = (f"B{s['B']} H{s['Hq']}/{s['Hkv']} {s['Nq']}x{s['Nk']} "
                 f"d{s['D']} {s['dtype']}")
        if s["kind"] == "paged":
            shape += f" pages of {s['page']}"
        if s["kind"] == "ragged":
            shape += " seqs " + ",".join(str(n) for n in s["lengths"])
        ours = _median(r.get("ours"))
        cells = [s["name"], shape]
        if r["status"] in ("ok", "WRONG") and ours is not None:
            cells.append(f"{ours:.3f} ({min(r['ours']):.3f}-"
                         f"{max(r['ours']):.3f})")
            mark = "" if r["status"] == "ok" else " WRONG"
            cells.append(f"{r['err']:.2e} ({r['tol']:.0e}){mark}")
        else:
            cells += [f"{r['status']}: {r.get('message', '')}"[:120], ""]
        peer_ms, parts = {}, []
        for name, t in r.get("peers", {}).items():
            m = _median(t)
            if m is None:
                parts.append(f"{name}: {t if isinstance(t, str) else 'n/a'}"
                             [:80])
                continue
            peer_ms[name] = m
            err = r.get("peer_err", {}).get(name)
            parts.append(f"{name} {m:.3f}" +
                         (f" ({err:.1e})" if err is not None else ""))
        cells.append("; ".join(parts))
        if r["status"] == "ok" and ours is not None:
            cells += list(verdicts(s, ours, peer_ms, device.get("peak_gbs")))
        else:
            cells += [verdicts(s, None, {}, None)[0], "n/a"]
        out.append("| " + " | ".join(c.replace("|", "/") for c in cells) +
                   " |")
    out.append("")
    return "\n".join(out)
