"""ctypes binding of the parts of attn-c/Compiler.h the package uses."""

import ctypes
import os

from . import _abi


class _Handle(ctypes.Structure):
    _fields_ = [("ptr", ctypes.c_void_p)]


class _StringRef(ctypes.Structure):
    _fields_ = [("data", ctypes.c_char_p), ("length", ctypes.c_size_t)]


class _CompileOptions(ctypes.Structure):
    _fields_ = [("form", ctypes.c_char_p), ("tile_q", ctypes.c_int64),
                ("tile_k", ctypes.c_int64), ("splits", ctypes.c_int64),
                ("parallel", ctypes.c_bool), ("target_cpu", ctypes.c_char_p),
                ("target_features", ctypes.c_char_p),
                ("prefix", ctypes.c_char_p), ("entries", ctypes.c_char_p),
                ("opt_level", ctypes.c_int32), ("device", ctypes.c_char_p),
                ("gpu_chip", ctypes.c_char_p), ("gpu_format", ctypes.c_char_p),
                ("gpu_warps", ctypes.c_int64), ("gpu_tile_k", ctypes.c_int64),
                ("gpu_splits", ctypes.c_int64),
                ("max_decode_queries", ctypes.c_int64),
                ("target_triple", ctypes.c_char_p)]


_lib = None


def _library():
    global _lib
    if _lib is None:
        from . import library_dir
        lib = ctypes.CDLL(os.path.join(library_dir(), "libattn_compiler.so"))
        lib.attnContextCreate.restype = _Handle
        lib.attnContextDestroy.argtypes = [_Handle]
        lib.attnContextGetLastError.restype = _StringRef
        lib.attnContextGetLastError.argtypes = [_Handle]
        lib.attnModuleCreateParse.restype = _Handle
        lib.attnModuleCreateParse.argtypes = [_Handle, _StringRef, _StringRef]
        lib.attnModuleDestroy.argtypes = [_Handle]
        lib.attnCompileOptionsInit.argtypes = [ctypes.POINTER(_CompileOptions)]
        # The struct above must be the library's, field for field: a
        # shorter one would be written past its end.
        lib.attnCompileOptionsSize.restype = ctypes.c_size_t
        size = lib.attnCompileOptionsSize()
        if size != ctypes.sizeof(_CompileOptions):
            raise ImportError(
                f"libattn_compiler's AttnCompileOptions has {size} bytes, "
                f"attn._capi's {ctypes.sizeof(_CompileOptions)}: the Python "
                "package and the library are from different versions")
        lib.attnJitLibraryCreate.restype = _Handle
        lib.attnJitLibraryCreate.argtypes = [_Handle,
                                             ctypes.POINTER(_CompileOptions)]
        lib.attnJitLibraryDestroy.argtypes = [_Handle]
        lib.attnJitLibraryLookupSymbol.restype = ctypes.c_void_p
        lib.attnJitLibraryLookupSymbol.argtypes = [_Handle, _StringRef]
        _abi.declare_runtime(lib)  # libattn_runtime is its dependency
        _lib = lib
    return _lib


def _ref(b):
    return _StringRef(b, len(b))


class _JitOwner:
    """Destroys the JIT library (its code) and context with the last
    kernel."""

    def __init__(self, lib, ctx, jit):
        self.lib, self.ctx, self.jit = lib, ctx, jit

    def __del__(self):
        self.lib.attnJitLibraryDestroy(self.jit)
        self.lib.attnContextDestroy(self.ctx)


def jit(spec, prefix, form, parallel, target_cpu, name, device="cpu",
        gpu_chip="", gpu_warps=0, gpu_tile_k=64, max_decode_queries=16,
        splits=-1):
    from . import CompileError, KernelLibrary
    lib = _library()
    ctx = lib.attnContextCreate()

    def fail():
        msg = lib.attnContextGetLastError(ctx)
        text = ctypes.string_at(msg.data, msg.length).decode()
        lib.attnContextDestroy(ctx)
        raise CompileError(text)

    module = lib.attnModuleCreateParse(ctx, _ref(spec.encode()),
                                       _ref(name.encode()))
    if not module.ptr:
        fail()
    opts = _CompileOptions()
    lib.attnCompileOptionsInit(ctypes.byref(opts))
    opts.form = form.encode()
    opts.parallel = parallel
    opts.prefix = prefix.encode()
    opts.target_cpu = target_cpu.encode()
    opts.device = device.encode()
    opts.gpu_chip = gpu_chip.encode()
    opts.gpu_warps = gpu_warps
    opts.gpu_tile_k = gpu_tile_k
    opts.max_decode_queries = max_decode_queries
    opts.splits = splits
    handle = lib.attnJitLibraryCreate(module, ctypes.byref(opts))
    lib.attnModuleDestroy(module)
    if not handle.ptr:
        fail()
    owner = _JitOwner(lib, ctx, handle)
    kernels_fn = ctypes.CFUNCTYPE(
        ctypes.POINTER(ctypes.POINTER(_abi.KernelInfo)),
        ctypes.POINTER(ctypes.c_int32))(
            lib.attnJitLibraryLookupSymbol(
                handle, _ref((prefix + "kernels").encode())))
    count = ctypes.c_int32()
    table = kernels_fn(ctypes.byref(count))
    library = KernelLibrary([table[i] for i in range(count.value)], lib,
                            owner)
    return library
