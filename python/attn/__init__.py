"""Calls attn kernels from Python through their C ABI (attn-c/Kernel.h).

Plain ctypes, no MLIR bindings. Tensors go in through DLPack
(``__dlpack__``): numpy arrays, PyTorch tensors and anything else that
exports DLPack are passed without copies; strided views are fine.

    import numpy as np, attn
    lib = attn.load_library("libkernels.so")          # attn-compile --emit=shared
    out = lib["gqa_causal"](q, k, v)                  # numpy in, numpy out
    lib.dispatch(q, k, v, out=[o, lse])               # pick the specialization

    lib = attn.jit(open("spec.mlir").read())          # JIT through the C API

GPU kernels (``kernel.gpu``) take CUDA tensors (PyTorch's, or any DLPack
kCUDA tensor) and run on ``stream=`` (a CUstream as an int), by default
PyTorch's current stream of the tensors' device; calls are asynchronous on
that stream, as PyTorch's own operations are.

Errors raise ``attn.KernelError`` (the status and the runtime's message):
bad arguments and bad data the kernel finds (a page table entry outside
the pool, ragged offsets, a region reading out of bounds) as
``attn.KernelValueError``, also a ``ValueError``; a failed allocation as
``attn.KernelMemoryError``, also a ``MemoryError``.
``attn.torch_ops.register(kernel, "ns::name")`` makes a kernel a
``torch.library.custom_op`` with a fake implementation for torch.compile.
``attn.flash`` has flash-attn's functions on the kernels and ``attn.ring``
ring attention over ``torch.distributed`` (context parallelism).
"""

import ctypes
import importlib.machinery
import importlib.util
import os
import struct
import sys
import sysconfig

from . import _abi

__all__ = ["KernelError", "KernelValueError", "KernelMemoryError",
           "CompileError", "Kernel", "KernelLibrary",
           "load_library", "jit", "library_dir", "uses_fastcall"]


class KernelError(RuntimeError):
    """A kernel call failed: ``status`` is the attn_status_t name."""

    def __init__(self, status, message):
        super().__init__(f"{status}: {message}")
        self.status = status
        self.message = message


class KernelValueError(KernelError, ValueError):
    """A call with bad arguments or bad data (invalid argument, dtype or
    shape mismatch, no specialization, a failed run-time check)."""


class KernelMemoryError(KernelError, MemoryError):
    """A call that could not allocate what it needs
    (ATTN_STATUS_OUT_OF_MEMORY)."""


# The statuses that are a ValueError / a MemoryError.
_VALUE_STATUSES = {"ATTN_STATUS_INVALID_ARGUMENT",
                   "ATTN_STATUS_DTYPE_MISMATCH",
                   "ATTN_STATUS_SHAPE_MISMATCH",
                   "ATTN_STATUS_WORKSPACE_TOO_SMALL",
                   "ATTN_STATUS_NO_SPECIALIZATION"}


def _kernel_error(status, message):
    name = _status_name(status)
    if name in _VALUE_STATUSES:
        return KernelValueError(name, message)
    if name == "ATTN_STATUS_OUT_OF_MEMORY":
        return KernelMemoryError(name, message)
    return KernelError(name, message)


class CompileError(RuntimeError):
    """The C API could not parse or compile a spec."""


def library_dir():
    """Where libattn_runtime and libattn_compiler are: $ATTN_LIBRARY_DIR;
    else attn/lib beside this file in a wheel (``pip install .``: the
    package's own lib/ holds them); else <prefix>/lib for the CMake install
    (<prefix>/lib/python/attn)."""
    env = os.environ.get("ATTN_LIBRARY_DIR")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    wheel = os.path.join(here, "lib")
    if os.path.exists(os.path.join(wheel, "libattn_runtime.so.1")):
        return wheel
    return os.path.normpath(os.path.join(here, "..", ".."))


def _status_name(status):
    try:
        return _abi.STATUS_NAMES[status]
    except IndexError:
        return f"status {status}"


# torch dtypes by name -> DLPack (code, bits): the direct path of
# _torch_tensor (others go through __dlpack__).
_TORCH_DL = {"float32": (2, 32), "float16": (2, 16), "bfloat16": (4, 16),
             "float64": (2, 64), "int32": (0, 32), "int64": (0, 64),
             "int8": (0, 8), "uint8": (1, 8), "bool": (6, 8)}
_TORCH_DL_BY_DTYPE = {}
# The tensor types _torch_tensors has accepted (torch.Tensor, subclasses).
_TORCH_TYPES = set()


def _dl_type(dtype):
    dl = _TORCH_DL_BY_DTYPE.get(dtype)
    if dl is None:
        dl = _TORCH_DL.get(str(dtype)[6:])
        if dl is not None:
            _TORCH_DL_BY_DTYPE[dtype] = dl
    return dl


_PACKERS = {}


def _packer(ndims):
    """One struct for the DLTensors of tensors of ranks `ndims`, their
    pointer array, then each one's shape and strides."""
    packer = _PACKERS.get(ndims)
    if packer is None:
        packer = struct.Struct("<" + "QiiiBBHQQQ" * len(ndims) +
                               f"{len(ndims)}Q" +
                               "".join(f"{2 * d}q" for d in ndims))
        _PACKERS[ndims] = packer
    return packer


def _torch_tensors(tensors):
    """The DLTensor pointer array of torch CPU or CUDA tensors, filled from
    their attributes (what their __dlpack__ would export, without a capsule
    per tensor) in one buffer by one cached struct: (the array's address,
    buffer), the buffer keeping it alive; None when one of them is anything
    else. The tensors must outlive the call."""
    heads = []
    ndims = []
    tail = []
    dl_types = _TORCH_DL_BY_DTYPE
    for t in tensors:
        kind = type(t)
        if kind not in _TORCH_TYPES:
            if kind.__module__[:5] != "torch":
                return None
            _TORCH_TYPES.add(kind)
        dtype = t.dtype
        dl = dl_types.get(dtype) or _dl_type(dtype)
        if dl is None:
            return None
        if t.is_cpu:
            device = 1, 0
        elif t.is_cuda:
            device = 2, t.get_device()
        else:
            return None
        shape = t.shape
        ndim = len(shape)
        heads.append((t.data_ptr(), device, ndim, dl))
        ndims.append(ndim)
        tail += shape
        tail += t.stride()
    n = len(heads)
    packer = _PACKERS.get(tuple(ndims)) or _packer(tuple(ndims))
    buf = ctypes.create_string_buffer(packer.size)
    base = ctypes.addressof(buf)
    flat = []
    at = base + 56 * n
    for data, device, ndim, dl in heads:
        flat += (data, *device, ndim, *dl, 1, at, at + 8 * ndim, 0)
        at += 16 * ndim
    flat += range(base, base + 48 * n, 48)
    flat += tail
    packer.pack_into(buf, 0, *flat)
    return base + 48 * n, buf


def _dlpack_tensor(x):
    """The DLTensor of a DLPack-exporting tensor, and the capsule that keeps
    it alive (unconsumed: its deleter runs when the capsule dies)."""
    if hasattr(x, "detach"):  # torch: __dlpack__ refuses tensors with grad
        x = x.detach()
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"{type(x).__name__} does not export DLPack")
    capsule = x.__dlpack__()
    ptr = _abi.capsule_pointer(capsule)
    # DLManagedTensor starts with its DLTensor.
    return ctypes.cast(ptr, ctypes.POINTER(_abi.DLTensor)), capsule


class Kernel:
    """One compiled kernel: ``kernel(*inputs, out=None, num_threads=0)``.

    Outputs are allocated like the first input (numpy or torch) when ``out``
    is not given, dynamic sizes taken from the inputs by dimension name
    (``dims``; an output dimension no input names needs ``out``). The kernel
    writes them in place.
    """

    def __init__(self, info_ptr, owner):
        self._info = info_ptr
        self._info_address = ctypes.cast(info_ptr, ctypes.c_void_p).value
        self._owner = owner  # keeps the library (and its code) alive
        self._fast = None  # _invoke's prepared arguments, () for none
        info = info_ptr.contents
        self.name = info.name.decode()
        self.symbol = info.symbol.decode()
        self.form = info.form.decode()
        self.target_cpu = info.target_cpu.decode()
        # ATTN_KERNEL_GPU: target_cpu is the GPU chip ("sm_90a").
        self.gpu = bool(info.flags & _abi.KERNEL_GPU)
        self.num_inputs = info.num_inputs
        self.num_outputs = info.num_outputs
        self.tensors = []
        for i in range(info.num_inputs + info.num_outputs):
            t = info.tensors[i]
            self.tensors.append({
                "name": t.name.decode(),
                "dtype": _abi.dtype_name(t.dtype),
                "shape": [t.shape[d] for d in range(t.ndim)],
                "dims": [t.dim_names[d].decode() for d in range(t.ndim)],
                "output": bool(t.is_output),
            })
        self.inputs = self.tensors[:self.num_inputs]
        self.outputs = self.tensors[self.num_inputs:]

    def __repr__(self):
        args = ", ".join(f"{t['name']}: {t['dtype']}{t['shape']}"
                         for t in self.tensors)
        where = f" on {self.target_cpu}" if self.gpu else ""
        return f"<attn kernel {self.name}({args}){where}>"

    def output_shapes(self, inputs):
        """The output shapes for `inputs` (tensors or anything with .shape):
        static sizes as they are, dynamic ones by their dimension names
        (``dims``) from the inputs' sizes (ints, or torch SymInts under
        tracing)."""
        sizes = {}
        for t, x in zip(self.inputs, inputs):
            for name, size in zip(t["dims"], x.shape):
                if name and name not in sizes:
                    sizes[name] = size
        shapes = []
        for t in self.outputs:
            shape = []
            for d, (size, name) in enumerate(zip(t["shape"], t["dims"])):
                if size >= 0:
                    shape.append(size)
                elif name in sizes:
                    shape.append(sizes[name])
                else:
                    raise ValueError(f"{self.name}: dimension {d} of output "
                                     f"{t['name']} is dynamic and no input "
                                     f"names its size: pass out=")
            shapes.append(shape)
        return shapes

    def allocate_outputs(self, like, inputs=None):
        """Empty outputs, numpy or torch like `like`: of this kernel's static
        shapes, or sized from `inputs` where they are dynamic."""
        if inputs is None:
            inputs = []
        return [_abi.empty_like(like, shape, t["dtype"])
                for t, shape in zip(self.outputs, self.output_shapes(inputs))]

    def __call__(self, *inputs, out=None, num_threads=0, workspace=None,
                 stream=None):
        if len(inputs) != self.num_inputs:
            raise TypeError(f"{self.name} takes {self.num_inputs} inputs "
                            f"({', '.join(t['name'] for t in self.inputs)}),"
                            f" got {len(inputs)}")
        if out is None:
            outs = self.allocate_outputs(inputs[0], inputs)
        elif hasattr(out, "__dlpack__"):
            outs = [out]
        else:
            outs = list(out)
        tensors = list(inputs) + outs
        if num_threads or workspace is not None or stream is not None:
            call(self._owner._runtime, self._info, tensors, num_threads,
                 workspace, stream=stream, gpu=self.gpu,
                 info_address=self._info_address)
        else:
            self._invoke(tensors)
        return outs[0] if len(outs) == 1 else tuple(outs)

    def _invoke(self, tensors):
        """The call with default options on `tensors` (the inputs, then the
        outputs; their count checked by the runtime): on the CPU through the
        compiled fast path with its arguments prepared once, else call()."""
        fast = self._fast
        if fast is None:
            fast = self._fast = self._prepare_fast()
        if fast:
            fn, address, info, options = fast
            status = fn(address, info, tensors, options, _TORCH_TYPES,
                        _TORCH_DL_BY_DTYPE)
            if status == 0:
                return
            if status is not None:
                raise _kernel_error(
                    status, self._owner._runtime.attn_last_error().decode())
        call(self._owner._runtime, self._info, tensors, gpu=self.gpu,
             info_address=self._info_address)

    def _prepare_fast(self):
        """(the fast path's call, attn_kernel_call's address, the info's
        address, the default options' address) for a CPU kernel where the
        fast path is built; () otherwise."""
        fastcall = _fastcall()
        if fastcall is None or self.gpu:
            return ()
        runtime = self._owner._runtime
        return (fastcall.call, _call_address(runtime), self._info_address,
                _shared_options(runtime, 0)[1])


def current_stream(tensors):
    """PyTorch's current CUDA stream (a CUstream as an int) for the first
    CUDA tensor among `tensors`; None when there is none."""
    for t in tensors:
        device = getattr(t, "device", None)
        if getattr(device, "type", None) == "cuda":
            import torch
            return torch.cuda.current_stream(device).cuda_stream
    return None


_OPTIONS = {}
# The compiled fast path (lib/PythonFastCall/FastCall.c): [module or None,
# whether it was looked for].
_FASTCALL = [None, False]
# attn_kernel_call's address per runtime handle.
_CALL_ADDRESS = {}


def _fastcall():
    """The module _attn_fastcall from library_dir() (built where CPython's
    headers are), or None: then calls pack their DLTensors in Python.
    ATTN_PYTHON_FASTCALL=0 turns it off."""
    if not _FASTCALL[1]:
        path = os.path.join(library_dir(), "_attn_fastcall.abi3.so")
        # CPython's stable ABI: not PyPy, not a free-threaded CPython.
        stable_abi = (sys.implementation.name == "cpython"
                      and not sysconfig.get_config_var("Py_GIL_DISABLED")
                      and ".abi3.so" in importlib.machinery.EXTENSION_SUFFIXES)
        if (stable_abi and os.environ.get("ATTN_PYTHON_FASTCALL", "1") != "0"
                and os.path.exists(path)):
            try:
                spec = importlib.util.spec_from_file_location(
                    "_attn_fastcall", path)
                if spec is not None and spec.loader is not None:
                    module = importlib.util.module_from_spec(spec)
                    spec.loader.exec_module(module)
                    _FASTCALL[0] = module
            except Exception:  # noqa: BLE001 - the Python path does it all
                _FASTCALL[0] = None
        _FASTCALL[1] = True
    return _FASTCALL[0]


def _shared_options(runtime, num_threads):
    """(byref, address) of the default options with `num_threads`, made
    once per thread count (read-only to the runtime)."""
    cached = _OPTIONS.get(num_threads)
    if cached is None:
        opts = _abi.ExecOptions()
        runtime.attn_exec_options_init(ctypes.byref(opts))
        opts.num_threads = num_threads
        cached = _OPTIONS[num_threads] = (ctypes.byref(opts),
                                          ctypes.addressof(opts))
    return cached


def _call_address(runtime):
    """attn_kernel_call's address in `runtime`, looked up once."""
    address = _CALL_ADDRESS.get(runtime)
    if address is None:
        address = _CALL_ADDRESS[runtime] = ctypes.cast(
            runtime.attn_kernel_call, ctypes.c_void_p).value
    return address


def uses_fastcall():
    """Whether torch tensors' calls take the compiled fast path."""
    return _fastcall() is not None


def call(runtime, info, tensors, num_threads=0, workspace=None,
         dispatch=None, stream=None, gpu=None, info_address=None):
    """attn_kernel_call (or attn_kernel_dispatch over `dispatch`, a list of
    info pointers) on DLPack tensors; raises KernelError. `stream`: the
    CUstream of a GPU kernel (default: PyTorch's current stream for CUDA
    tensors, else CUDA's default stream). `gpu`: whether a kernel runs on
    the GPU, when the caller knows (else read from the kernels' flags).
    `info_address`: info's address, when the caller has it. Torch tensors
    of types and dtypes seen before go through the compiled fast path
    where it is built (_fastcall)."""
    if gpu is None:
        kernels = dispatch if dispatch is not None else [info]
        gpu = any(k.contents.flags & _abi.KERNEL_GPU for k in kernels)
    if stream is None and gpu:
        stream = current_stream(tensors)
    if workspace is None and not stream:
        # Read-only to the runtime: one per thread count.
        opts_ref, opts_address = (_OPTIONS.get(num_threads)
                                  or _shared_options(runtime, num_threads))
    else:
        opts = _abi.ExecOptions()
        runtime.attn_exec_options_init(ctypes.byref(opts))
        opts.num_threads = num_threads
        if workspace is not None:
            opts.workspace = workspace.ctypes.data
            opts.workspace_size = workspace.nbytes
        if stream:
            opts.stream = stream
        opts_ref, opts_address = ctypes.byref(opts), ctypes.addressof(opts)
    fastcall = _FASTCALL[0] if _FASTCALL[1] else _fastcall()
    if fastcall is not None and dispatch is None:
        address = _CALL_ADDRESS.get(runtime) or _call_address(runtime)
        if info_address is None:
            info_address = ctypes.cast(info, ctypes.c_void_p).value
        status = fastcall.call(address, info_address, tensors, opts_address,
                               _TORCH_TYPES, _TORCH_DL_BY_DTYPE)
        if status is not None:
            if status != 0:
                raise _kernel_error(status,
                                    runtime.attn_last_error().decode())
            return
    fast = _torch_tensors(tensors)
    if fast is not None:
        array, views = fast
        count = len(tensors)
    else:
        views = [_dlpack_tensor(t) for t in tensors]
        array = (ctypes.POINTER(_abi.DLTensor) * len(views))(
            *[v[0] for v in views])
        count = len(views)
    if dispatch is None:
        status = runtime.attn_kernel_call(info, array, count, opts_ref)
    else:
        table = (ctypes.POINTER(_abi.KernelInfo) * len(dispatch))(*dispatch)
        status = runtime.attn_kernel_dispatch(table, len(dispatch), array,
                                              count, opts_ref)
    del views  # the capsules (or the buffer) live until here
    if status != 0:
        raise _kernel_error(status, runtime.attn_last_error().decode())


class KernelLibrary:
    """The kernels of one library: ``lib["name"]``, ``lib.kernels``,
    ``lib.dispatch(*tensors)`` (inputs and outputs)."""

    def __init__(self, kernels, runtime, handle=None):
        self._runtime = runtime
        self._handle = handle
        self.kernels = {}
        for info in kernels:
            k = Kernel(info, self)
            self.kernels[k.name] = k

    def __getitem__(self, name):
        return self.kernels[name]

    def dispatch(self, *tensors, num_threads=0, stream=None):
        infos = [k._info for k in self.kernels.values()]
        call(self._runtime, None, list(tensors), num_threads,
             dispatch=infos, stream=stream)


def _preload_runtime():
    """Loads this package's libattn_runtime (RTLD_GLOBAL) if it is there, so
    that kernel libraries built with ``--rpath=none`` (or whose RUNPATH no
    longer exists) find it; the loader reuses it by its SONAME."""
    path = os.path.join(library_dir(), "libattn_runtime.so.1")
    if os.path.exists(path):
        try:
            ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        except OSError:
            pass  # the kernel library's own RUNPATH may still find one


def load_library(path, prefix="attn_"):
    """Loads a kernel library built with ``attn-compile --emit=shared`` (its
    symbols prefixed with `prefix`)."""
    _preload_runtime()
    lib = ctypes.CDLL(os.path.abspath(path))
    _abi.declare_runtime(lib)  # the runtime is a dependency of the library
    kernels_fn = getattr(lib, prefix + "kernels")
    kernels_fn.restype = ctypes.POINTER(ctypes.POINTER(_abi.KernelInfo))
    kernels_fn.argtypes = [ctypes.POINTER(ctypes.c_int32)]
    count = ctypes.c_int32()
    table = kernels_fn(ctypes.byref(count))
    return KernelLibrary([table[i] for i in range(count.value)], lib, lib)


def jit(spec, prefix="attn_", form="fused", parallel=True, target_cpu="",
        name="<python>", device="cpu", gpu_chip="", gpu_warps=0,
        gpu_tile_k=64, max_decode_queries=16, splits=-1):
    """JIT-compiles the spec text through the C API (libattn_compiler).

    ``form`` is ``"fused"``, ``"decode"`` (split-KV), ``"naive"`` or
    ``"auto"``: one kernel that runs the split-KV form for calls with at
    most ``max_decode_queries`` query rows and the fused form beyond (the
    query length of a dynamically shaped kernel is read per call).
    ``splits`` is the split-KV form's number of KV chunks: -1 (the default)
    chooses it per call from the threads the call runs on, a positive count
    fixes it.

    ``device`` says where the kernels run: ``"cpu"`` (this host), ``"gpu"``
    (an NVIDIA GPU: CUDA tensors, ``kernel.gpu``; ``gpu_chip`` defaults to
    the chip of CUDA device 0) or ``"gpu-emulate"`` (the GPU kernels on the
    warp-level emulator, on host arrays: slow, for checking GPU code without
    a GPU). ``gpu_warps`` (0: the lowering's choice) and ``gpu_tile_k`` are
    the GPU kernel's options, for both GPU devices.
    """
    from . import _capi
    return _capi.jit(spec, prefix=prefix, form=form, parallel=parallel,
                     target_cpu=target_cpu, name=name, device=device,
                     gpu_chip=gpu_chip, gpu_warps=gpu_warps,
                     gpu_tile_k=gpu_tile_k,
                     max_decode_queries=max_decode_queries, splits=splits)
