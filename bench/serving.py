#!/usr/bin/env python3
"""Benchmark of serving shapes (paged KV caches, ragged batches), in one run:

  1. Decode over a paged KV cache (pages of 16 tokens in shuffled order,
     vLLM's block table) against the same decode over a contiguous
     [B, Hkv, Nmax, D] cache (our decode form both times; target: paged
     within 10% of contiguous), and against PyTorch SDPA given the
     equivalent padded dense tensors and a key-padding mask (target: faster
     than SDPA).
  2. A ragged prefill batch of 8 sequences of 128 to 4096 tokens (packed,
     with per-sequence offsets, causal on each sequence's own diagonal)
     against the same batch padded to the longest sequence with our own
     dense fused form (kv_len per sequence; target: ragged >= 1.5x faster).
  3. Issue 24's rows: shared-prefix (cascade) decode of 64 sequences over an
     8192-token shared prefix and 256-token suffixes (the pattern of
     examples/serving/shared_prefix_decode.mlir) against plain paged decode
     whose page tables share the prefix's pages (target: >= 3x faster);
     chunked prefill of 4 sequences' 512 new tokens over 4096 cached ones
     (ragged + page table + kv_len) against the dense fused form on the
     same problem (target: >= 0.9x its GFLOP/s); ragged decode of 64
     sequences (one query each, 512 to 4096 keys, packed) against the dense
     decode batch with kv_len (target: >= 0.9x its speed); decode over an
     8192-key paged cache quantized to int8 and to fp8 e4m3 (per-token
     scales) against the f32 cache (target: <= 0.6x its time), each checked
     against an f64 reference on the values it reads, with the error of the
     quantized caches against the unquantized one reported.

Every pair computes the same attention: outputs are compared before any time
is reported (the paged and contiguous decodes on the same keys, the ragged
rows with the padded batch's rows), and each spec is checked against the f64
reference at a small size with attn-run --verify. Times are the median of
attn-run's --reps calls (kernel only) in interleaved rounds; the table shows
the median over rounds and the spread. Run through bench/run.sh --serving;
results in bench/results/serving.md.
"""
import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import harness  # noqa: E402
from harness import attention_func, tensor as t  # noqa: E402


def dense_decode_spec(B, Hq, Hkv, N, D):
    q, kv, ln = t(B, Hq, 1, D), t(B, Hkv, N, D), t(B, ty="i32")
    return attention_func("dense", q, kv, kv, q,
                          f" kv_len(%len : {ln}) causal(bottom_right)", f", %len: {ln}")


def paged_decode_spec(B, Hq, Hkv, P, S, M, D):
    q, pool = t(B, Hq, 1, D), t(P, Hkv, S, D)
    pt, ln = t(B, M, ty="i32"), t(B, ty="i32")
    return attention_func("paged", q, pool, pool, q,
                          f" page_table(%pt : {pt}) kv_len(%len : {ln}) causal(bottom_right)",
                          f", %pt: {pt}, %len: {ln}")


def padded_prefill_spec(B, Hq, Hkv, N, D):
    q, kv, ln = t(B, Hq, N, D), t(B, Hkv, N, D), t(B, ty="i32")
    return attention_func("padded", q, kv, kv, q,
                          f" kv_len(%len : {ln}) causal(top_left)", f", %len: {ln}")


def ragged_prefill_spec(B, Hq, Hkv, T, D):
    q, kv, cu = t(1, Hq, T, D), t(1, Hkv, T, D), t(B + 1, ty="i32")
    return attention_func("ragged", q, kv, kv, q,
                          f" ragged(%cq, %ck : {cu}, {cu}) causal(top_left)",
                          f", %cq: {cu}, %ck: {cu}")


def cascade_spec(B, Hq, Hkv, NP, P, S, M, D):
    """Shared-prefix decode as a pattern of ops (bnhd): the batch's queries
    against the prefix at once, each suffix through its page table,
    attn.combine. Arguments: q, prefix k, prefix v, suffix pools, table,
    lengths."""
    q, qp = t(B, 1, Hq, D), t(1, B, Hq, D)
    kp, pool = t(1, NP, Hkv, D), t(P, S, Hkv, D)
    pt, ln = t(B, M, ty="i32"), t(B, ty="i32")
    q3, o3 = t(B, Hq, D), t(B, Hq, D)
    lp, lp2, lpt, l3 = t(1, Hq, B), t(Hq, B), t(B, Hq), t(B, Hq, 1)
    return f"""func.func @cascade(%q: {q}, %kp: {kp}, %vp: {kp}, %ks: {pool},
    %vs: {pool}, %pt: {pt}, %len: {ln}) -> {q} {{
  %q2 = tensor.collapse_shape %q [[0, 1], [2], [3]] : {q} into {q3}
  %qp = tensor.expand_shape %q2 [[0, 1], [2], [3]] output_shape [1, {B}, {Hq}, {D}] : {q3} into {qp}
  %op, %lp = attn.attention q(%qp : {qp}) k(%kp : {kp}) v(%vp : {kp}) layout(bnhd) -> {qp}, {lp}
  %op2 = tensor.collapse_shape %op [[0, 1], [2], [3]] : {qp} into {o3}
  %op3 = tensor.expand_shape %op2 [[0, 1], [2], [3]] output_shape [{B}, 1, {Hq}, {D}] : {o3} into {q}
  %lp2 = tensor.collapse_shape %lp [[0, 1], [2]] : {lp} into {lp2}
  %init = tensor.empty() : {lpt}
  %lpt = linalg.transpose ins(%lp2 : {lp2}) outs(%init : {lpt}) permutation = [1, 0]
  %lp3 = tensor.expand_shape %lpt [[0], [1, 2]] output_shape [{B}, {Hq}, 1] : {lpt} into {l3}
  %os, %ls = attn.attention q(%q : {q}) k(%ks : {pool}) v(%vs : {pool}) layout(bnhd)
      page_table(%pt : {pt}) kv_len(%len : {ln}) -> {q}, {l3}
  %o, %l = attn.combine a(%op3, %lp3 : {q}, {l3}) b(%os, %ls : {q}, {l3}) layout(bnhd) -> {q}, {l3}
  return %o : {q}
}}
"""


def paged_decode_bnhd_spec(B, Hq, Hkv, P, S, M, D):
    q, pool = t(B, 1, Hq, D), t(P, S, Hkv, D)
    pt, ln = t(B, M, ty="i32"), t(B, ty="i32")
    return attention_func("paged", q, pool, pool, q,
                          f" layout(bnhd) page_table(%pt : {pt}) kv_len(%len : {ln})",
                          f", %pt: {pt}, %len: {ln}")


def chunked_prefill_spec(B, Hq, Hkv, T, P, S, M, D):
    q, pool = t(1, Hq, T, D), t(P, Hkv, S, D)
    cu, pt, ln = t(B + 1, ty="i32"), t(B, M, ty="i32"), t(B, ty="i32")
    return attention_func("chunked", q, pool, pool, q,
                          f" ragged(%cq : {cu}) page_table(%pt : {pt}) "
                          f"kv_len(%len : {ln}) causal(bottom_right)",
                          f", %cq: {cu}, %pt: {pt}, %len: {ln}")


def dense_prefill_spec(B, Hq, Hkv, NQ, NK, D):
    q, kv = t(B, Hq, NQ, D), t(B, Hkv, NK, D)
    return attention_func("dense", q, kv, kv, q, " causal(bottom_right)")


def ragged_decode_spec(B, Hq, Hkv, T, D):
    q, kv, cq = t(1, Hq, B, D), t(1, Hkv, T, D), t(B + 1, ty="i32")
    return attention_func("ragged_decode", q, kv, kv, q,
                          f" ragged(%cq, %ck : {cq}, {cq}) causal(bottom_right)",
                          f", %cq: {cq}, %ck: {cq}")


def quantized_decode_spec(B, Hq, Hkv, P, S, M, D, ty):
    """Paged decode over a [P, Hkv, S, D] cache of element type `ty`; a
    quantized one (i8, f8E4M3FN) has per-token scales [P, Hkv, S]."""
    q, pool = t(B, Hq, 1, D), t(P, Hkv, S, D, ty=ty)
    pt, ln, sc = t(B, M, ty="i32"), t(B, ty="i32"), t(P, Hkv, S)
    mods = f" page_table(%pt : {pt}) kv_len(%len : {ln}) causal(bottom_right)"
    args = f", %pt: {pt}, %len: {ln}"
    if ty != "f32":
        mods = f" k_scale(%ks : {sc}) v_scale(%vs : {sc})" + mods
        args += f", %ks: {sc}, %vs: {sc}"
    return attention_func("qdecode", q, pool, pool, q, mods, args)


def to_e4m3(x):
    """f32 values (|x| <= 448) rounded to nearest-even e4m3fn: (the values,
    their bits as uint8). Written from the format (1 sign, 4 exponent bits
    with bias 7, 3 mantissa bits, subnormals below 2^-6)."""
    a = np.abs(x.astype(np.float64))
    e = np.floor(np.log2(np.maximum(a, 2.0 ** -6)))
    step = 2.0 ** (e - 3)
    y = np.round(a / step) * step  # half to even
    e = np.floor(np.log2(np.maximum(y, 2.0 ** -6)))  # a carry may raise it
    sub = y < 2.0 ** -6
    mant = np.where(sub, y / 2.0 ** -9, y / 2.0 ** e * 8 - 8).astype(np.int64)
    expo = np.where(sub, 0, e + 7).astype(np.int64)
    bits = ((x < 0).astype(np.int64) << 7) | (expo << 3) | mant
    return np.where(x < 0, -y, y), bits.astype(np.uint8)


def quantize(x, kind):
    """Per-token (last axis) symmetric quantization: (raw values as attn-run
    reads them, scales, the dequantized values in f64)."""
    amax = np.abs(x).max(axis=-1)
    qmax = 127.0 if kind == "i8" else 448.0
    scale = np.where(amax > 0, amax / qmax, 1.0).astype(np.float32)
    y = x / scale[..., None]
    if kind == "i8":
        raw = np.clip(np.round(y), -127, 127).astype(np.int8)
        vals = raw.astype(np.float64)
    else:
        vals, raw = to_e4m3(np.clip(y, -448, 448))
    return raw, scale, vals * scale[..., None].astype(np.float64)


def quantized_cases(a, work, rng):
    """Decode over an 8192-key paged cache in f32, int8 and fp8 e4m3 (with
    per-token scales): the three cases, the checks (each against an f64
    reference on the values it reads), and the error of the quantized caches
    against the unquantized one (reported, not checked)."""
    path, write = work.path, work.write
    B, Hq, Hkv, D, S = 4, 32, 8, 128, 16
    N = 8192 if not a.quick else 512
    M = N // S
    P = B * M
    q = rng.uniform(-1, 1, (B, Hq, 1, D)).astype(np.float32)
    k = rng.normal(0, 1, (P, Hkv, S, D)).astype(np.float32)
    v = rng.normal(0, 1, (P, Hkv, S, D)).astype(np.float32)
    table = rng.permutation(P).reshape(B, M).astype(np.int32)
    lens = np.full(B, N, np.int32)
    np.save(path("qd_q.npy"), q)
    np.save(path("qd_pt.npy"), table)
    np.save(path("qd_len.npy"), lens)

    def reference(kd, vd):
        # f64 attention of the one query per head over each sequence's pages.
        out = np.zeros((B, Hq, 1, D))
        g = Hq // Hkv
        for b in range(B):
            kb = kd[table[b]].transpose(1, 0, 2, 3).reshape(Hkv, N, D)
            vb = vd[table[b]].transpose(1, 0, 2, 3).reshape(Hkv, N, D)
            qb = q[b, :, 0].astype(np.float64).reshape(Hkv, g, D)
            sc = np.einsum("hgd,hnd->hgn", qb, kb) / np.sqrt(D)
            p = np.exp(sc - sc.max(-1, keepdims=True))
            o = np.einsum("hgn,hnd->hgd", p / p.sum(-1, keepdims=True), vb)
            out[b, :, 0] = o.reshape(Hq, D)
        return out

    cases, checks, errors = {}, [], []
    exact = reference(k.astype(np.float64), v.astype(np.float64))
    for kind, ty, label in (("f32", "f32", "f32 cache"), ("i8", "i8", "int8 cache"),
                            ("e4m3", "f8E4M3FN", "fp8 e4m3 cache")):
        name = f"quantized decode, {label}"
        files = dict(q="qd_q.npy", page_table="qd_pt.npy", kv_len="qd_len.npy")
        if kind == "f32":
            np.save(path("qd_k_f32.npy"), k)
            np.save(path("qd_v_f32.npy"), v)
            files.update(k="qd_k_f32.npy", v="qd_v_f32.npy")
            want = exact
        else:
            kr, ks, kd = quantize(k, kind)
            vr, vs, vd = quantize(v, kind)
            for n, arr in ((f"k_{kind}", kr), (f"v_{kind}", vr), (f"ks_{kind}", ks),
                           (f"vs_{kind}", vs)):
                np.save(path(f"qd_{n}.npy"), arr)
            files.update(k=f"qd_k_{kind}.npy", v=f"qd_v_{kind}.npy",
                         k_scale=f"qd_ks_{kind}.npy", v_scale=f"qd_vs_{kind}.npy")
            want = reference(kd, vd)
            errors.append((label, float(np.abs(want - exact).max())))
        cases[name] = (
            write(f"qd_{kind}.mlir", quantized_decode_spec(B, Hq, Hkv, P, S, M, D, ty)),
            ["--form=decode", "--output", "0=" + work.out(name)] + work.inputs(**files))
        checks.append((f"{name} vs f64 reference on the values it reads", name, want))
    shape = (f"- quantized decode: B={B} Hq={Hq} Hkv={Hkv} D={D}, {N} keys per sequence "
             f"in pages of {S} (bhnd pools, shuffled tables), decode form; K/V drawn "
             f"from N(0, 1); int8 and fp8 e4m3 with one f32 scale per token and head "
             f"(amax / 127, amax / 448), rounded to nearest even")
    return cases, checks, errors, shape


def issue24_cases(a, work, rng):
    """The shared-prefix, chunked-prefill and ragged-decode pairs: specs,
    inputs, and the checks that each pair computes the same attention."""
    path, write = work.path, work.write
    cases, checks = {}, []
    quick = a.quick

    # Shared-prefix decode: 64 sequences, 8192 shared tokens, suffixes of
    # 256 tokens (the new one included), Hq 32, Hkv 8, D 128, pages of 16.
    B, Hq, Hkv, D, S = 64, 32, 8, 128, 16
    NP, NS = (8192, 256) if not quick else (512, 32)
    MS = NS // S
    q = rng.uniform(-1, 1, (B, 1, Hq, D)).astype(np.float32)
    kp = rng.uniform(-1, 1, (1, NP, Hkv, D)).astype(np.float32)
    vp = rng.uniform(-1, 1, (1, NP, Hkv, D)).astype(np.float32)
    slen = rng.integers(NS // 2, NS + 1, B).astype(np.int32)
    ks = rng.uniform(-1, 1, (B * MS, S, Hkv, D)).astype(np.float32)
    vs = rng.uniform(-1, 1, (B * MS, S, Hkv, D)).astype(np.float32)
    stable = rng.permutation(B * MS).reshape(B, MS).astype(np.int32)
    # Plain paged decode: the prefix's pages first in the pool, shared by
    # every sequence's table, then its own pages.
    PP = NP // S
    pool_k = np.concatenate([kp[0].reshape(PP, S, Hkv, D), ks])
    pool_v = np.concatenate([vp[0].reshape(PP, S, Hkv, D), vs])
    table = np.concatenate([np.tile(np.arange(PP, dtype=np.int32), (B, 1)),
                            stable + PP], axis=1)
    for name, arr in (("q", q), ("kp", kp), ("vp", vp), ("ks", ks), ("vs", vs),
                      ("pt", stable), ("len", slen), ("pool_k", pool_k),
                      ("pool_v", pool_v), ("table", table), ("tlen", slen + NP)):
        np.save(path(f"sp_{name}.npy"), arr)
    num = lambda **kw: [x for n, f in kw.items()
                        for x in ("--input", f"{n[1:]}={path(f)}")]
    cases["shared prefix, plain paged decode"] = (
        write("sp_plain.mlir", paged_decode_bnhd_spec(B, Hq, Hkv, PP + B * MS, S,
                                                     PP + MS, D)),
        ["--form=decode", "--output", "0=" + work.out("shared prefix, plain paged decode")]
        + work.inputs(q="sp_q.npy", k="sp_pool_k.npy", v="sp_pool_v.npy",
                      page_table="sp_table.npy", kv_len="sp_tlen.npy"))
    cases["shared prefix, cascade"] = (
        write("sp_cascade.mlir", cascade_spec(B, Hq, Hkv, NP, B * MS, S, MS, D)),
        ["--form=fused", "--output", "0=" + work.out("shared prefix, cascade")]
        + num(a0="sp_q.npy", a1="sp_kp.npy", a2="sp_vp.npy", a3="sp_ks.npy",
              a4="sp_vs.npy", a5="sp_pt.npy", a6="sp_len.npy"))
    checks.append(("shared prefix, cascade vs plain", "shared prefix, cascade",
                   "shared prefix, plain paged decode", None))

    # Chunked prefill: 4 sequences of 512 new tokens over 4096 cached.
    CB, CHq, CHkv, CD = 4, 32, 8, 128
    new, cached = (512, 4096) if not quick else (64, 256)
    NK = new + cached
    cq = rng.uniform(-1, 1, (CB, CHq, new, CD)).astype(np.float32)
    ck = rng.uniform(-1, 1, (CB, CHkv, NK, CD)).astype(np.float32)
    cv = rng.uniform(-1, 1, (CB, CHkv, NK, CD)).astype(np.float32)
    CM = NK // S
    order = rng.permutation(CB * CM).astype(np.int32)
    ctable = order.reshape(CB, CM)
    cpk = np.zeros((CB * CM, CHkv, S, CD), np.float32)
    cpv = np.zeros_like(cpk)
    for b in range(CB):
        for p in range(CM):
            cpk[ctable[b, p]] = ck[b, :, p * S:(p + 1) * S]
            cpv[ctable[b, p]] = cv[b, :, p * S:(p + 1) * S]
    packed_q = np.concatenate([cq[b] for b in range(CB)], axis=1)[None]
    ccu = np.arange(0, (CB + 1) * new, new, dtype=np.int32)
    for name, arr in (("q", cq), ("k", ck), ("v", cv), ("pq", packed_q), ("pk", cpk),
                      ("pv", cpv), ("pt", ctable), ("cu", ccu),
                      ("len", np.full(CB, NK, np.int32))):
        np.save(path(f"cp_{name}.npy"), arr)
    cases["chunked prefill, dense fused"] = (
        write("cp_dense.mlir", dense_prefill_spec(CB, CHq, CHkv, new, NK, CD)),
        ["--form=fused", "--output", "0=" + work.out("chunked prefill, dense fused")]
        + work.inputs(q="cp_q.npy", k="cp_k.npy", v="cp_v.npy"))
    cases["chunked prefill, ragged paged"] = (
        write("cp_chunked.mlir", chunked_prefill_spec(CB, CHq, CHkv, CB * new, CB * CM,
                                                      S, CM, CD)),
        ["--form=fused", "--output", "0=" + work.out("chunked prefill, ragged paged")]
        + work.inputs(q="cp_pq.npy", k="cp_pk.npy", v="cp_pv.npy",
                      cu_seqlens_q="cp_cu.npy", page_table="cp_pt.npy",
                      kv_len="cp_len.npy"))
    checks.append(("chunked prefill, ragged paged vs dense rows",
                   "chunked prefill, ragged paged", "chunked prefill, dense fused",
                   lambda x: np.concatenate([x[b] for b in range(CB)], axis=1)[None]))

    # Ragged decode: 64 sequences of one query over 512 to 4096 keys.
    RB, RHq, RHkv, RD = 64, 8, 2, 64
    lo, hi = (512, 4096) if not quick else (64, 512)
    rlen = rng.integers(lo, hi + 1, RB).astype(np.int32)
    T = int(rlen.sum())
    rcu_k = np.concatenate([[0], np.cumsum(rlen)]).astype(np.int32)
    rcu_q = np.arange(RB + 1, dtype=np.int32)
    rq = rng.uniform(-1, 1, (1, RHq, RB, RD)).astype(np.float32)
    rk = rng.uniform(-1, 1, (1, RHkv, T, RD)).astype(np.float32)
    rv = rng.uniform(-1, 1, (1, RHkv, T, RD)).astype(np.float32)
    dq = rq[0].transpose(1, 0, 2)[:, :, None, :].copy()
    dk = np.zeros((RB, RHkv, hi, RD), np.float32)
    dv = np.zeros_like(dk)
    for b in range(RB):
        dk[b, :, :rlen[b]] = rk[0, :, rcu_k[b]:rcu_k[b + 1]]
        dv[b, :, :rlen[b]] = rv[0, :, rcu_k[b]:rcu_k[b + 1]]
    for name, arr in (("q", rq), ("k", rk), ("v", rv), ("cq", rcu_q), ("ck", rcu_k),
                      ("dq", dq), ("dk", dk), ("dv", dv), ("len", rlen)):
        np.save(path(f"rd_{name}.npy"), arr)
    cases["ragged decode, dense batch"] = (
        write("rd_dense.mlir", dense_decode_spec(RB, RHq, RHkv, hi, RD)),
        ["--form=decode", "--output", "0=" + work.out("ragged decode, dense batch")]
        + work.inputs(q="rd_dq.npy", k="rd_dk.npy", v="rd_dv.npy", kv_len="rd_len.npy"))
    cases["ragged decode, packed"] = (
        write("rd_ragged.mlir", ragged_decode_spec(RB, RHq, RHkv, T, RD)),
        ["--form=decode", "--output", "0=" + work.out("ragged decode, packed")]
        + work.inputs(q="rd_q.npy", k="rd_k.npy", v="rd_v.npy", cu_seqlens_q="rd_cq.npy",
                      cu_seqlens_k="rd_ck.npy"))
    checks.append(("ragged decode, packed vs dense rows", "ragged decode, packed",
                   "ragged decode, dense batch",
                   lambda x: x[:, :, 0, :].transpose(1, 0, 2)[None]))
    shapes = [
        f"- shared-prefix decode: B={B} Hq={Hq} Hkv={Hkv} D={D}, prefix {NP} tokens, "
        f"suffixes of {slen.min()}-{slen.max()} tokens in pages of {S}, bnhd; plain: one "
        f"page table per sequence listing the prefix's {PP} pages then its own (decode "
        f"form); cascade: examples/serving/shared_prefix_decode.mlir's pattern (fused "
        f"form for the prefix)",
        f"- chunked prefill: {CB} sequences of {new} new tokens over {cached} cached, "
        f"Hq={CHq} Hkv={CHkv} D={CD}, causal(bottom_right); ragged + page table "
        f"({CB * CM} pages of {S}) + kv_len against dense [{CB}, {CHq}, {new}, {CD}] "
        f"queries over [{CB}, {CHkv}, {NK}, {CD}] keys, both fused form",
        f"- ragged decode: {RB} sequences, one query each, {rlen.min()}-{rlen.max()} keys "
        f"({T} packed), Hq={RHq} Hkv={RHkv} D={RD}, decode form; dense: [{RB}, {RHkv}, "
        f"{hi}, {RD}] with kv_len",
    ]
    return cases, checks, shapes


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    harness.round_args(ap, reps=10)
    ap.add_argument("--quick", action="store_true",
                    help="small shapes, for debugging the harness")
    a = ap.parse_args()
    work, say = harness.setup(
        a, "# Serving shapes: paged KV caches and ragged batches")
    path, write = work.path, work.write
    rng = np.random.default_rng(11)

    # Correctness of each kind of spec against the f64 reference at a small
    # size (random page tables and offsets from attn-run).
    small = {
        "paged decode": paged_decode_spec(4, 8, 2, 40, 16, 8, 64),
        "ragged prefill": ragged_prefill_spec(5, 4, 2, 300, 64),
    }
    for name, text in small.items():
        p = write(harness.slug(name) + "_small.mlir", text)
        for form, err in harness.verify_forms(a.attn_run, p, ("decode", "fused", "naive")):
            say(f"- {name}, {form} form: verified against the f64 reference ({err})")
    say()

    # 1. Decode: B = 8, Hq = 32, Hkv = 8, D = 128, Nmax = 4096, mixed lengths.
    B, Hq, Hkv, D, N, S = 8, 32, 8, 128, 4096, 16
    lens = np.array([4096, 3584, 3072, 2560, 2048, 1536, 1024, 512], np.int32)
    if a.quick:
        N, lens = 512, lens // 8
    M = N // S
    q = rng.uniform(-1, 1, (B, Hq, 1, D)).astype(np.float32)
    k = rng.uniform(-1, 1, (B, Hkv, N, D)).astype(np.float32)
    v = rng.uniform(-1, 1, (B, Hkv, N, D)).astype(np.float32)
    for b in range(B):  # unused cache rows: never read
        k[b, :, lens[b]:] = 0
        v[b, :, lens[b]:] = 0
    # The pool holds exactly the pages the sequences use, in shuffled order.
    used = [(b, p) for b in range(B) for p in range((lens[b] + S - 1) // S)]
    order = rng.permutation(len(used))
    pool_k = np.zeros((len(used), Hkv, S, D), np.float32)
    pool_v = np.zeros_like(pool_k)
    table = np.full((B, M), -1, np.int32)
    for slot, (b, p) in zip(order, used):
        table[b, p] = slot
        pool_k[slot] = k[b, :, p * S:(p + 1) * S]
        pool_v[slot] = v[b, :, p * S:(p + 1) * S]
    for name, arr in (("q", q), ("k", k), ("v", v), ("len", lens), ("pk", pool_k),
                      ("pv", pool_v), ("pt", table)):
        np.save(path(f"dec_{name}.npy"), arr)
    P = len(used)
    decode_cases = {
        "decode, contiguous cache": (
            write("dense_decode.mlir", dense_decode_spec(B, Hq, Hkv, N, D)),
            ["--form=decode"] + work.inputs(q="dec_q.npy", k="dec_k.npy", v="dec_v.npy",
                                            kv_len="dec_len.npy")),
        "decode, paged cache": (
            write("paged_decode.mlir", paged_decode_spec(B, Hq, Hkv, P, S, M, D)),
            ["--form=decode"] + work.inputs(q="dec_q.npy", k="dec_pk.npy", v="dec_pv.npy",
                                            page_table="dec_pt.npy", kv_len="dec_len.npy")),
    }

    # 2. Ragged prefill: 8 sequences of 128 to 4096 tokens, Hq = 8, Hkv = 2,
    #    D = 64, causal per sequence, against the batch padded to 4096.
    PB, PHq, PHkv, PD = 8, 8, 2, 64
    plens = np.array([128, 256, 512, 1024, 1536, 2048, 3072, 4096], np.int32)
    if a.quick:
        plens = plens // 8
    rng.shuffle(plens)
    PN = int(plens.max())
    T = int(plens.sum())
    cu = np.concatenate([[0], np.cumsum(plens)]).astype(np.int32)
    pq = np.zeros((PB, PHq, PN, PD), np.float32)
    pk = np.zeros((PB, PHkv, PN, PD), np.float32)
    pv = np.zeros((PB, PHkv, PN, PD), np.float32)
    rq = rng.uniform(-1, 1, (1, PHq, T, PD)).astype(np.float32)
    rk = rng.uniform(-1, 1, (1, PHkv, T, PD)).astype(np.float32)
    rv = rng.uniform(-1, 1, (1, PHkv, T, PD)).astype(np.float32)
    for b in range(PB):
        n = plens[b]
        pq[b, :, :n] = rq[0, :, cu[b]:cu[b + 1]]
        pk[b, :, :n] = rk[0, :, cu[b]:cu[b + 1]]
        pv[b, :, :n] = rv[0, :, cu[b]:cu[b + 1]]
    for name, arr in (("pq", pq), ("pk", pk), ("pv", pv), ("plen", plens), ("rq", rq),
                      ("rk", rk), ("rv", rv), ("cu", cu)):
        np.save(path(f"pre_{name}.npy"), arr)
    prefill_cases = {
        "prefill, padded dense": (
            write("padded_prefill.mlir", padded_prefill_spec(PB, PHq, PHkv, PN, PD)),
            ["--form=fused"] + work.inputs(q="pre_pq.npy", k="pre_pk.npy", v="pre_pv.npy",
                                           kv_len="pre_plen.npy")),
        "prefill, ragged": (
            write("ragged_prefill.mlir", ragged_prefill_spec(PB, PHq, PHkv, T, PD)),
            ["--form=fused"] + work.inputs(q="pre_rq.npy", k="pre_rk.npy", v="pre_rv.npy",
                                           cu_seqlens_q="pre_cu.npy",
                                           cu_seqlens_k="pre_cu.npy")),
    }
    cases = dict(decode_cases, **prefill_cases)
    extra, extra_checks, extra_shapes = issue24_cases(a, work, rng)
    quant, quant_checks, quant_errors, quant_shape = quantized_cases(a, work, rng)
    extra.update(quant)

    threads = harness.threads(a.threads)
    times = {(c, th): [] for c in cases for th in threads}
    sdpa = {th: [] for th in threads}
    torch = harness.import_torch(a.no_torch)
    for th, env, first in harness.rounds(threads, a.rounds):
        for name, (spec, args) in cases.items():
            save = ["--output", "out=" + work.out(name)] if first else []
            reps = a.reps if name.startswith("decode") else max(2, a.reps // 4)
            out = harness.run_ok([a.attn_run, spec, f"--reps={reps}"] + args + save, env)
            times[(name, th)].append(harness.attn_time(out))
        for name, (spec, args) in extra.items():
            # (Each writes its output every round: the file is the last.)
            # Decode cases take milliseconds: as many calls as the decode
            # rows above; the prefill-sized ones a quarter.
            short = "decode" in name and not name.startswith("shared prefix")
            reps = a.reps if short else max(2, a.reps // 4)
            out = harness.run_ok([a.attn_run, spec, f"--reps={reps}"] + args, env)
            times.setdefault((name, th), []).append(harness.attn_time(out))
        if torch is not None:
            tq, tk, tv = (torch.from_numpy(x) for x in (q, k, v))
            mask = torch.from_numpy(np.arange(N)[None, None, None, :] <
                                    lens[:, None, None, None])
            res, s = harness.time_sdpa(torch, th, a.reps, tq, tk, tv, attn_mask=mask,
                                       enable_gqa=True)
            sdpa[th].append(s)
            if first:
                np.save(work.out("decode sdpa"), res)

    load = work.load
    checks = [("decode, paged cache", load("decode, paged cache"),
               load("decode, contiguous cache"))]
    if torch is not None:
        checks.append(("decode, SDPA", load("decode sdpa"), load("decode, contiguous cache")))
    padded = load("prefill, padded dense")
    rows = np.concatenate([padded[b, :, :plens[b]] for b in range(PB)], axis=1)[None]
    checks.append(("prefill, ragged vs padded rows", load("prefill, ragged"), rows))
    for label, ours, theirs, arrange in extra_checks:
        want = load(theirs)
        checks.append((label, load(ours), arrange(want) if arrange else want))
    for label, ours, want in quant_checks:
        checks.append((label, load(ours), want))
    say.compare(checks)
    say("Quantization error, reported (not a check): max abs difference of the "
        "f64 attention over the dequantized cache from the f64 attention over "
        "the unquantized f32 cache:")
    for label, err in quant_errors:
        say(f"- {label}: {err:.2e}")
    say()
    say(f"Times: median over {a.rounds} interleaved rounds of attn-run's median "
        f"of its calls (kernel only: {a.reps} for decode, quantized and ragged "
        f"decode, {max(2, a.reps // 4)} for prefill, chunked prefill and the "
        f"shared-prefix pair); spread = min-max of the rounds.")
    say()
    say.table_head()
    ms, stats = harness.ms, harness.stats
    for th in threads:
        med = {c: stats(times[(c, th)]) for c in cases}
        say(f"| decode, contiguous cache | {th} | {ms(med['decode, contiguous cache'], '.2f')} | | |")
        if torch is not None:
            say(f"| decode, PyTorch SDPA (padded dense, key mask) | {th} | "
                f"{ms(stats(sdpa[th]), '.2f')} | | |")
        pm = med["decode, paged cache"][0]
        ratio = pm / med["decode, contiguous cache"][0]
        text = f"{ratio:.3f}x the contiguous cache's time"
        target = "met" if ratio <= 1.10 else "missed (> 1.10)"
        if torch is not None:
            text, target = harness.vs_sdpa(text, target, stats(sdpa[th])[0], pm)
        say(f"| decode, paged cache | {th} | {ms(med['decode, paged cache'], '.2f')} | "
            f"{text} | {target} |")
        say(f"| prefill, padded dense | {th} | {ms(med['prefill, padded dense'], '.1f')} | | |")
        sp = med["prefill, padded dense"][0] / med["prefill, ragged"][0]
        say(f"| prefill, ragged | {th} | {ms(med['prefill, ragged'], '.1f')} | "
            f"{sp:.2f}x faster than padded | {'met' if sp >= 1.5 else 'missed (< 1.5x)'} |")
    for th in threads:
        med = {c: stats(times[(c, th)]) for c in extra}
        plain, casc = med["shared prefix, plain paged decode"], med["shared prefix, cascade"]
        sp = plain[0] / casc[0]
        say(f"| shared-prefix decode, plain paged | {th} | {ms(plain, '.1f')} | | |")
        say(f"| shared-prefix decode, cascade | {th} | {ms(casc, '.1f')} | "
            f"{sp:.2f}x faster than plain | {'met' if sp >= 3 else 'missed (< 3x)'} |")
        dense, chunk = med["chunked prefill, dense fused"], med["chunked prefill, ragged paged"]
        r = dense[0] / chunk[0]
        say(f"| chunked prefill, dense fused | {th} | {ms(dense, '.1f')} | | |")
        say(f"| chunked prefill, ragged + paged | {th} | {ms(chunk, '.1f')} | "
            f"{r:.2f}x the dense form's GFLOP/s | {'met' if r >= 0.9 else 'missed (< 0.9x)'} |")
        dd, rd = med["ragged decode, dense batch"], med["ragged decode, packed"]
        r = dd[0] / rd[0]
        say(f"| ragged decode, dense batch with kv_len | {th} | {ms(dd, '.2f')} | | |")
        say(f"| ragged decode, packed | {th} | {ms(rd, '.2f')} | "
            f"{r:.2f}x the dense batch's speed | {'met' if r >= 0.9 else 'missed (< 0.9x)'} |")
    for th in threads:
        med = {c: stats(times[(c, th)]) for c in extra}
        base = med["quantized decode, f32 cache"]
        say(f"| quantized decode, f32 cache | {th} | {ms(base, '.2f')} | | |")
        for label in ("int8 cache", "fp8 e4m3 cache"):
            m = med[f"quantized decode, {label}"]
            r = m[0] / base[0]
            say(f"| quantized decode, {label} | {th} | {ms(m, '.2f')} | "
                f"{r:.2f}x the f32 cache's time | "
                f"{'met' if r <= 0.6 else 'missed (> 0.6x)'} |")
    say()
    for line in extra_shapes + [quant_shape]:
        say(line)
    say(f"- decode: B={B} Hq={Hq} Hkv={Hkv} D={D} Nmax={N}, kv_len "
        f"{', '.join(map(str, lens))}, causal(bottom_right), decode form; paged: "
        f"{P} pages of {S} tokens in shuffled order, page table [{B}, {M}]")
    say(f"- prefill: {PB} sequences of {', '.join(map(str, plens))} tokens "
        f"({T} packed), Hq={PHq} Hkv={PHkv} D={PD}, causal(top_left) per sequence, "
        f"fused form; padded: [{PB}, {PHq}, {PN}, {PD}] with kv_len")
    say.save(os.path.join(a.results, "serving.md"))


if __name__ == "__main__":
    main()
