#!/usr/bin/env python3
"""The attn Python package (python/attn) on compiled and JIT kernels.

    python-test.py numpy <libpy_kernels.so> <small.mlir>
    python-test.py torch <libpy_kernels.so> <small.mlir>

numpy: kernels on numpy arrays (contiguous and strided), the dispatcher,
thread counts, errors, and a kernel JIT-compiled through the C API, against
this file's own f64 reference. torch: the same kernel on PyTorch tensors,
as a torch.library.custom_op (opcheck, torch.compile). Exits 77 (skipped)
when numpy, or for `torch` PyTorch, cannot be imported.
"""

import ctypes
import math
import os
import sys

SKIP = 77
mode, kernels_path, small_spec = sys.argv[1:4]
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "python"))
try:
    import numpy as np
except ImportError:
    print("numpy is not available: skipped")
    sys.exit(SKIP)
if mode == "torch":
    try:
        import torch
    except ImportError:
        print("torch is not available: skipped")
        sys.exit(SKIP)

import attn  # noqa: E402
from attn import _abi  # noqa: E402
if mode == "torch":
    import attn.torch_ops  # noqa: E402

failures = 0


def check(cond, what):
    global failures
    if not cond:
        print("FAIL:", what)
        failures += 1


def reference(q, k, v, top_left=True):
    """f64 causal GQA attention: out [B,Hq,Nq,D] and lse [B,Hq,Nq]."""
    q, k, v = (np.asarray(x, dtype=np.float64) for x in (q, k, v))
    B, Hq, Nq, D = q.shape
    Hkv, Nk = k.shape[1], k.shape[2]
    out = np.zeros((B, Hq, Nq, v.shape[3]))
    lse = np.zeros((B, Hq, Nq))
    for b in range(B):
        for h in range(Hq):
            g = h // (Hq // Hkv)
            for i in range(Nq):
                last = i if top_left else Nk - Nq + i
                s = np.array([q[b, h, i] @ k[b, g, j] / math.sqrt(D)
                              for j in range(last + 1)])
                m = s.max()
                p = np.exp(s - m)
                out[b, h, i] = p @ v[b, g, :last + 1] / p.sum()
                lse[b, h, i] = m + math.log(p.sum())
    return out, lse


def gpu_kernel(lib):
    """An attn.Kernel over a GPU kernel descriptor (x: f32[N] -> out: f32[N],
    target sm_90a) whose entry point must never run."""
    import ctypes
    from attn import _abi
    keep = []

    def tensor(name, is_output):
        shape = (ctypes.c_int64 * 1)(-1)
        dims = (ctypes.c_char_p * 1)(b"N")
        keep.extend([shape, dims])
        return _abi.TensorInfo(name, _abi.DLDataType(2, 32, 1), 1, is_output,
                               shape, dims)

    tensors = (_abi.TensorInfo * 2)(tensor(b"x", 0), tensor(b"out", 1))
    info = _abi.KernelInfo(_abi.ABI_VERSION, _abi.KERNEL_GPU, b"add_one",
                           b"attn_add_one", 1, 1, tensors, b"sm_90a",
                           b"fused", None, None)
    kernel = attn.Kernel(ctypes.pointer(info), lib)
    kernel._keep = (keep, tensors, info)
    return kernel


rng = np.random.default_rng(7)
lib = attn.load_library(kernels_path, prefix="py_")
prefill = lib["prefill"]
check(prefill.inputs[0]["dims"] == ["B", "Hq", "Nq", "Dqk"], prefill.inputs)
q = rng.uniform(-1, 1, (1, 4, 6, 8)).astype(np.float32)
k = rng.uniform(-1, 1, (1, 2, 6, 8)).astype(np.float32)
v = rng.uniform(-1, 1, (1, 2, 6, 8)).astype(np.float32)
ref_out, ref_lse = reference(q, k, v)

if mode == "numpy":
    out, lse = prefill(q, k, v)
    check(np.abs(out - ref_out).max() < 2e-4, "numpy out")
    check(np.abs(lse - ref_lse).max() < 2e-4, "numpy lse")
    # A strided view of q (stored [B, N, H, D]) and a one-thread call.
    qt = np.ascontiguousarray(q.transpose(0, 2, 1, 3)).transpose(0, 2, 1, 3)
    check(not qt.flags.c_contiguous, "strided view")
    out1, _ = prefill(qt, k, v, num_threads=1)
    check(np.array_equal(out1, out), "strided, 1 thread")
    # The dispatcher, into caller-provided outputs.
    o, l = np.zeros_like(out), np.zeros_like(lse)
    lib.dispatch(q, k, v, o, l)
    check(np.array_equal(o, out), "dispatch")
    # Dynamic sizes: the output is the caller's, sized from the inputs' dim
    # names (Nq of q) and written in place (no kernel allocation).
    dyn = lib["dynamic"]
    check(not (dyn._info.contents.flags & _abi.KERNEL_RETURNS_OUTPUTS),
          "dynamic attention results are destinations")
    dq = rng.uniform(-1, 1, (1, 2, 5, 8)).astype(np.float32)
    dk = rng.uniform(-1, 1, (1, 2, 9, 8)).astype(np.float32)
    dv = rng.uniform(-1, 1, (1, 2, 9, 8)).astype(np.float32)
    dref, _ = reference(dq, dk, dv, top_left=False)
    dout = dyn(dq, dk, dv)
    check(dout.shape == (1, 2, 5, 8) and np.abs(dout - dref).max() < 2e-4,
          "dynamic, outputs sized from the inputs")
    short = np.zeros((1, 2, 4, 8), np.float32)
    try:
        dyn(dq, dk, dv, out=short)
        check(False, "a short dynamic output accepted")
    except attn.KernelError as e:
        check(e.status == "ATTN_STATUS_SHAPE_MISMATCH", f"error {e}")
    # Errors name the argument.
    try:
        prefill(q.astype(np.float64), k, v)
        check(False, "f64 q accepted")
    except attn.KernelError as e:
        check(e.status == "ATTN_STATUS_DTYPE_MISMATCH" and "q" in e.message,
              f"error {e}")
    try:
        lib.dispatch(q[:, :2], k, v, o, l)
        check(False, "dispatch of a wrong shape")
    except attn.KernelError as e:
        check(e.status == "ATTN_STATUS_NO_SPECIALIZATION" and
              "prefill(q: f32[1,4,6,8]" in e.message, f"error {e}")
    # A GPU kernel (a hand-made descriptor: none is compiled here) refuses
    # host arrays before anything runs; the status names match the header.
    gpu = gpu_kernel(lib)
    check(gpu.gpu and "on sm_90a" in repr(gpu), repr(gpu))
    try:
        gpu(np.zeros(4, np.float32), out=np.zeros(4, np.float32))
        check(False, "host arrays to a GPU kernel")
    except attn.KernelError as e:
        check(e.status == "ATTN_STATUS_UNSUPPORTED_DEVICE" and
              e.message == "input x: device type 1, expected kDLCUDA (2): "
              "kernel add_one runs on the GPU (sm_90a)", f"error {e}")
    check(attn._abi.STATUS_NAMES[9] == "ATTN_STATUS_DEVICE_ERROR",
          "status names")
    check(not prefill.gpu and attn.current_stream([q, k, v]) is None,
          "no stream for host arrays")
    try:
        prefill(q, k, v, stream=1234)
        check(False, "a stream for a CPU kernel")
    except attn.KernelError as e:
        check(e.message == "options->stream is set, but this is a CPU kernel",
              f"error {e}")
    # JIT through the C API, the same ABI.
    jit = attn.jit(open(small_spec).read(), name="small.mlir")
    qs, ks, vs = (rng.uniform(-1, 1, (1, 2, 4, 8)).astype(np.float32)
                  for _ in range(3))
    check(np.abs(jit["small"](qs, ks, vs) - reference(qs, ks, vs)[0]).max()
          < 2e-4, "JIT kernel")
    # One kernel for prefill and decode (form "auto"): the split-KV form for
    # calls of up to max_decode_queries query rows, the fused form beyond,
    # chosen per call from the dynamic query length.
    auto_spec = """
func.func @step(%q: tensor<1x4x?x16xf32>, %k: tensor<1x2x?x16xf32>,
                %v: tensor<1x2x?x16xf32>)
    -> (tensor<1x4x?x16xf32>, tensor<1x4x?xf32>) {
  %o, %l = attn.attention q(%q : tensor<1x4x?x16xf32>)
      k(%k : tensor<1x2x?x16xf32>) v(%v : tensor<1x2x?x16xf32>)
      causal(bottom_right) -> tensor<1x4x?x16xf32>, tensor<1x4x?xf32>
  return %o, %l : tensor<1x4x?x16xf32>, tensor<1x4x?xf32>
}"""
    step = attn.jit(auto_spec, name="auto.mlir", form="auto",
                    max_decode_queries=4)["step"]
    check(step.form == "auto", f"form {step.form}")
    for nq in (1, 4, 5, 33):
        aq = rng.uniform(-1, 1, (1, 4, nq, 16)).astype(np.float32)
        ak, av = (rng.uniform(-1, 1, (1, 2, 40, 16)).astype(np.float32)
                  for _ in range(2))
        got_o, got_l = step(aq, ak, av)
        want_o, want_l = reference(aq, ak, av, top_left=False)
        check(np.abs(got_o - want_o).max() < 2e-4 and
              np.abs(got_l - want_l).max() < 2e-4,
              f"form auto with {nq} query rows")
    try:
        attn.jit(auto_spec, name="auto.mlir", form="auto",
                 max_decode_queries=-1)
        check(False, "a negative max_decode_queries accepted")
    except attn.CompileError as e:
        check("max_decode_queries must be >= 0" in str(e), f"error {e}")
    # Data only the kernel sees: a bad page table is a ValueError naming the
    # entry, and the same kernel then runs a good call.
    paged = attn.jit("""
func.func @paged(%q: tensor<1x2x2x8xf32>, %kp: tensor<3x2x4x8xf32>,
                 %vp: tensor<3x2x4x8xf32>, %pt: tensor<1x2xi32>,
                 %len: tensor<1xi32>) -> tensor<1x2x2x8xf32> {
  %o = attn.attention q(%q : tensor<1x2x2x8xf32>)
      k(%kp : tensor<3x2x4x8xf32>) v(%vp : tensor<3x2x4x8xf32>)
      kv_len(%len : tensor<1xi32>) page_table(%pt : tensor<1x2xi32>)
      causal(bottom_right) -> tensor<1x2x2x8xf32>
  return %o : tensor<1x2x2x8xf32>
}""", name="paged.mlir")["paged"]
    pq = rng.uniform(-1, 1, (1, 2, 2, 8)).astype(np.float32)
    pool = rng.uniform(-1, 1, (3, 2, 4, 8)).astype(np.float32)
    length = np.array([6], np.int32)
    try:
        paged(pq, pool, pool, np.array([[2, 7]], np.int32), length)
        check(False, "a page table entry outside the pool accepted")
    except ValueError as e:
        check(isinstance(e, attn.KernelError) and
              e.status == "ATTN_STATUS_INVALID_ARGUMENT" and
              e.message.endswith("page_table[0, 1] = 7, the pool has 3 "
                                 "pages"), f"error {e}")
    good = paged(pq, pool, pool, np.array([[2, 0]], np.int32), length)
    dense = np.concatenate([pool[2], pool[0]], axis=1)[None, :, :6]
    check(np.abs(good - reference(pq, dense, dense, top_left=False)[0]).max()
          < 2e-4,
          "paged kernel after a bad call")
    check(issubclass(attn.KernelMemoryError, MemoryError), "MemoryError")
    # An allocation the kernel cannot make is a MemoryError: the naive
    # form's scores of 2^21 x 2^21 keys need 2^44 bytes (q, k, v: 8 MiB
    # each); the same kernel then runs a good call.
    scores = attn.jit("""
func.func @scores(%q: tensor<1x1x?x1xf32>, %k: tensor<1x1x?x1xf32>,
                  %v: tensor<1x1x?x1xf32>) -> tensor<1x1x?x1xf32> {
  %o = attn.attention q(%q : tensor<1x1x?x1xf32>) k(%k : tensor<1x1x?x1xf32>)
      v(%v : tensor<1x1x?x1xf32>) causal(top_left) -> tensor<1x1x?x1xf32>
  return %o : tensor<1x1x?x1xf32>
}""", name="scores.mlir", form="naive")["scores"]
    big = np.zeros((1, 1, 1 << 21, 1), np.float32)
    try:
        scores(big, big, big, out=np.empty_like(big))
        check(False, "a 2^44-byte allocation succeeded")
    except MemoryError as e:
        check(isinstance(e, attn.KernelMemoryError) and
              e.status == "ATTN_STATUS_OUT_OF_MEMORY" and
              e.message == "attn: out of memory: the kernel could not "
              "allocate 17592186044416 bytes for a scratch or output buffer",
              f"error {e}")
    sq, sk, sv = (rng.uniform(-1, 1, (1, 1, n, 1)).astype(np.float32)
                  for n in (3, 5, 5))
    check(np.abs(scores(sq, sk, sv, out=np.empty_like(sq)) -
                 reference(sq, sk, sv)[0]).max() < 2e-4,
          "kernel after an allocation failure")
    # The GPU kernel of a spec on the warp-level GPU emulator: host arrays,
    # f32 staged as bf16 (bf16's tolerance), f16 as f16.
    gqa_spec = """
func.func @gqa(%q: tensor<1x4x32x32xDT>, %k: tensor<1x2x32x32xDT>,
               %v: tensor<1x2x32x32xDT>)
    -> (tensor<1x4x32x32xDT>, tensor<1x4x32xf32>) {
  %o, %l = attn.attention q(%q : tensor<1x4x32x32xDT>)
      k(%k : tensor<1x2x32x32xDT>) v(%v : tensor<1x2x32x32xDT>)
      causal(top_left) -> tensor<1x4x32x32xDT>, tensor<1x4x32xf32>
  return %o, %l : tensor<1x4x32x32xDT>, tensor<1x4x32xf32>
}"""
    for dt, np_dt, tol in (("f32", np.float32, 2e-2), ("f16", np.float16,
                                                        4e-3)):
        emu = attn.jit(gqa_spec.replace("DT", dt), name="gqa.mlir",
                       device="gpu-emulate", gpu_tile_k=32)["gqa"]
        check(not emu.gpu, f"{dt}: an emulated kernel takes host arrays")
        eq = rng.uniform(-1, 1, (1, 4, 32, 32)).astype(np_dt)
        ek, ev = (rng.uniform(-1, 1, (1, 2, 32, 32)).astype(np_dt)
                  for _ in range(2))
        eo, el = emu(eq, ek, ev)
        ro, rl = reference(eq, ek, ev)
        check(eo.dtype == np_dt and
              np.abs(eo.astype(np.float64) - ro).max() < tol and
              np.abs(el - rl).max() < tol,
              f"{dt} kernel on the GPU emulator: "
              f"{np.abs(eo.astype(np.float64) - ro).max()}")
    # A mask region reading document ids (three documents of 16 tokens,
    # causal), on the CPU and on the GPU emulator: a read out of bounds is a
    # ValueError with the runtime's message (the kernel's error word on the
    # GPU), then a good call of the same kernel matches the reference of
    # each document alone. (The C API once refused every region spec.) The
    # region computes its indices (i + 0): an ids tensor read directly at i
    # names its dimension Nq, and the runtime refuses one of another size
    # before the kernel runs.
    doc_spec = """
func.func @docs(%q: tensor<1x2x48x32xf16>, %ids: tensor<?xi32>)
    -> tensor<1x2x48x32xf16> {
  %o = attn.attention q(%q : tensor<1x2x48x32xf16>)
      k(%q : tensor<1x2x48x32xf16>) v(%q : tensor<1x2x48x32xf16>)
      causal(top_left) mod_inputs(%ids : tensor<?xi32>)
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %d: tensor<?xi32>):
        %c0 = arith.constant 0 : index
        %ii = arith.addi %i, %c0 : index
        %jj = arith.addi %j, %c0 : index
        %di = tensor.extract %d[%ii] : tensor<?xi32>
        %dj = tensor.extract %d[%jj] : tensor<?xi32>
        %same = arith.cmpi eq, %di, %dj : i32
        attn.yield %same : i1
      } -> tensor<1x2x48x32xf16>
  return %o : tensor<1x2x48x32xf16>
}"""
    dq = rng.uniform(-1, 1, (1, 2, 48, 32)).astype(np.float16)
    want = np.concatenate([reference(dq[:, :, 16 * d:16 * d + 16],
                                     dq[:, :, 16 * d:16 * d + 16],
                                     dq[:, :, 16 * d:16 * d + 16])[0]
                           for d in range(3)], axis=2)
    for device in ("cpu", "gpu-emulate"):
        docs = attn.jit(doc_spec, name="docs.mlir", device=device)["docs"]
        try:
            docs(dq, np.zeros(40, dtype=np.int32))
            check(False, f"{device}: a read out of bounds succeeded")
        except ValueError as e:
            check("mask_mod reads a mod_inputs tensor out of bounds: "
                  "mod_inputs #0, index 4" in str(e) and
                  e.status == "ATTN_STATUS_INVALID_ARGUMENT",
                  f"{device}: error {e}")
        got = docs(dq, np.repeat(np.arange(3, dtype=np.int32), 16))
        check(np.abs(got.astype(np.float64) - want).max() < 4e-3,
              f"{device}: documents {np.abs(got - want).max()}")
    try:
        attn.jit(open(small_spec).read(), device="tpu")
        check(False, "an unknown device accepted")
    except attn.CompileError as e:
        check("unknown device 'tpu'" in str(e), f"compile error {e}")
    try:
        attn.jit("func.func @f() {", name="broken.mlir")
        check(False, "a broken spec compiled")
    except attn.CompileError as e:
        check("broken.mlir:1:" in str(e), f"compile error {e}")
else:
    tq, tk, tv = (torch.from_numpy(x) for x in (q, k, v))
    out, lse = prefill(tq, tk, tv)
    check(isinstance(out, torch.Tensor), "torch output type")
    check((out.double() - torch.from_numpy(ref_out)).abs().max() < 2e-4,
          "torch out")
    # lse is the natural-log log-sum-exp: PyTorch's own torch.logsumexp of
    # the causal (top-left) scaled scores.
    kk = tk.double().repeat_interleave(tq.shape[1] // tk.shape[1], dim=1)
    scores = tq.double() @ kk.transpose(-1, -2) / math.sqrt(tq.shape[-1])
    causal = torch.ones(tq.shape[2], tk.shape[2], dtype=torch.bool).tril()
    torch_lse = torch.logsumexp(scores.masked_fill(~causal, float("-inf")),
                                dim=-1)
    check((lse.double() - torch_lse).abs().max() < 2e-4,
          "lse is torch.logsumexp (natural log)")
    # The packed DLTensors of torch tensors (attn._torch_tensors, the fast
    # path of every call) say what each tensor's own __dlpack__ says: a
    # view with strides and an offset, a 0-d tensor, bool, bf16, int64.
    base = torch.arange(60, dtype=torch.float32).reshape(3, 4, 5)
    samples = [base, base[1:, :, 2:].transpose(0, 2), torch.tensor(2.5),
               torch.ones(2, 3, dtype=torch.bool),
               torch.zeros(4, 1, dtype=torch.bfloat16),
               torch.arange(7, dtype=torch.int64)[::3]]
    address, keep = attn._torch_tensors(samples)
    table = ctypes.cast(address, ctypes.POINTER(ctypes.POINTER(
        attn._abi.DLTensor)))
    for i, t in enumerate(samples):
        got = table[i].contents
        view, capsule = attn._dlpack_tensor(t)
        want = view.contents
        same = (got.data + got.byte_offset == want.data + want.byte_offset
                and got.ndim == want.ndim
                and (got.device.device_type, got.device.device_id) ==
                (want.device.device_type, want.device.device_id)
                and (got.dtype.code, got.dtype.bits, got.dtype.lanes) ==
                (want.dtype.code, want.dtype.bits, want.dtype.lanes)
                and [got.shape[d] for d in range(got.ndim)] == list(t.shape)
                and [got.strides[d] for d in range(got.ndim)] ==
                list(t.stride()))
        check(same, f"packed DLTensor {i} ({t.dtype}, {tuple(t.shape)})")
    check(attn._torch_tensors([base, np.zeros(2)]) is None,
          "a numpy array among torch tensors takes the DLPack path")
    del keep
    # The compiled fast path (lib/PythonFastCall) serves every call of this
    # section where it is built, unless ATTN_PYTHON_FASTCALL=0 (ctest runs
    # this mode both ways: attn-python-torch and attn-python-torch-ctypes).
    built = os.path.exists(os.path.join(attn.library_dir(),
                                        "_attn_fastcall.abi3.so"))
    wanted = built and os.environ.get("ATTN_PYTHON_FASTCALL", "1") != "0"
    check(attn.uses_fastcall() == wanted,
          f"fast path in use: {attn.uses_fastcall()}, expected {wanted}")
    print(f"torch calls through {'_attn_fastcall' if wanted else 'ctypes'}")
    if wanted:
        fast = attn._fastcall()
        runtime = prefill._owner._runtime
        kernel_call = ctypes.cast(runtime.attn_kernel_call,
                                  ctypes.c_void_p).value
        options = attn._abi.ExecOptions()
        runtime.attn_exec_options_init(ctypes.byref(options))
        o0, l0 = torch.empty_like(out), torch.empty_like(lse)

        def direct(*tensors):
            return fast.call(kernel_call, prefill._info_address, list(tensors),
                             ctypes.addressof(options), attn._TORCH_TYPES,
                             attn._TORCH_DL_BY_DTYPE)
        check(direct(tq, tk, tv, o0, l0) == 0 and torch.equal(o0, out),
              "_attn_fastcall.call: status 0 and the same output")
        # What it does not take goes back to the Python path: a numpy
        # array, a dtype never seen, more tensors than it holds.
        check(direct(tq, tk, tv.numpy(), o0, l0) is None,
              "_attn_fastcall: a numpy array is not for it")
        check(direct(tq, tk, tv.to(torch.complex64), o0, l0) is None,
              "_attn_fastcall: an unseen dtype is not for it")
        check(direct(*([tq] * 33)) is None,
              "_attn_fastcall: 33 tensors are not for it")
        # A status comes back as the status: the wrong head dimension.
        check(direct(tq[..., :4], tk, tv, o0, l0) != 0,
              "_attn_fastcall: a shape error is a non-zero status")
    try:
        prefill(tq[..., :4].contiguous(), tk, tv)
        check(False, "a wrong head dimension accepted")
    except attn.KernelValueError as e:
        check("q" in str(e), f"shape error through the call path: {e}")
    # A non-contiguous torch view.
    qt = tq.transpose(1, 2).contiguous().transpose(1, 2)
    check(torch.equal(prefill(qt, tk, tv)[0], out), "torch strided")
    # Views with a storage offset, a tensor that requires grad and an output
    # view into a larger buffer: the direct DLTensor path (no __dlpack__)
    # reads and writes where the tensors' own strides say.
    big = torch.zeros(3, *tq.shape[1:])
    big[1:2] = tq
    qg = tq.clone().requires_grad_(True)
    dest = torch.full((2, *out.shape[1:]), 7.0)
    lse_dest = torch.empty_like(lse)
    prefill(big[1:2], tk, tv, out=(dest[1:2], lse_dest))
    check(torch.equal(dest[1:2], out) and torch.equal(dest[0],
                                                      torch.full_like(dest[0], 7.0)),
          "torch views with offsets")
    check(torch.equal(prefill(qg, tk, tv)[0], out), "a tensor with grad")
    op = attn.torch_ops.register(prefill, "attn_test::prefill")
    o2, l2 = op(tq, tk, tv)
    check(torch.equal(o2, out), "custom op")
    torch.library.opcheck(op, (tq, tk, tv))
    compiled = torch.compile(lambda a, b, c: op(a, b, c)[0] * 2,
                             backend="eager", fullgraph=True)
    check(torch.equal(compiled(tq, tk, tv), out * 2), "torch.compile")
    # A kernel of dynamic batch and sequence sizes as a custom op: its fake
    # implementation sizes out and lse from the inputs, so one dynamic trace
    # serves every size (fullgraph, no graph break).
    dyn_spec = """
func.func @dyn(%q: tensor<?x4x?x16xf32>, %k: tensor<?x2x?x16xf32>,
               %v: tensor<?x2x?x16xf32>)
    -> (tensor<?x4x?x16xf32>, tensor<?x4x?xf32>) {
  %o, %l = attn.attention q(%q : tensor<?x4x?x16xf32>)
      k(%k : tensor<?x2x?x16xf32>) v(%v : tensor<?x2x?x16xf32>)
      causal(bottom_right) -> tensor<?x4x?x16xf32>, tensor<?x4x?xf32>
  return %o, %l : tensor<?x4x?x16xf32>, tensor<?x4x?xf32>
}"""
    dyn = attn.torch_ops.register(attn.jit(dyn_spec, name="dyn.mlir")["dyn"],
                                  "attn_test::dyn")
    fn = torch.compile(lambda a, b, c: dyn(a, b, c)[0] + 1, backend="eager",
                       fullgraph=True, dynamic=True)
    ok = True
    for bsz, nq, nk in ((1, 3, 7), (2, 5, 9), (3, 1, 20)):
        a = torch.rand(bsz, 4, nq, 16) * 2 - 1
        b, c = (torch.rand(bsz, 2, nk, 16) * 2 - 1 for _ in range(2))
        got = fn(a, b, c)
        want = torch.stack([torch.nn.functional.scaled_dot_product_attention(
            a[i:i + 1].double(), b[i:i + 1].double().repeat_interleave(2, 1),
            c[i:i + 1].double().repeat_interleave(2, 1),
            attn_mask=torch.ones(nq, nk, dtype=torch.bool).tril(nk - nq))[0]
            for i in range(bsz)])
        ok = ok and got.shape == (bsz, 4, nq, 16) and \
            (got.double() - 1 - want).abs().max() < 2e-5
    check(ok, "dynamic custom op under torch.compile(dynamic=True)")
    torch.library.opcheck(dyn, (torch.rand(2, 4, 5, 16),
                                torch.rand(2, 2, 7, 16),
                                torch.rand(2, 2, 7, 16)))

if failures:
    print(f"python-test {mode}: {failures} failures")
    sys.exit(1)
print(f"python-test {mode}: ok")
