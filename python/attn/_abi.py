"""ctypes mirror of attn-c/Kernel.h and DLPack's DLTensor."""

import ctypes

ABI_VERSION = 1
STATUS_NAMES = [
    "ATTN_STATUS_OK", "ATTN_STATUS_INVALID_ARGUMENT",
    "ATTN_STATUS_DTYPE_MISMATCH", "ATTN_STATUS_SHAPE_MISMATCH",
    "ATTN_STATUS_UNSUPPORTED_DEVICE", "ATTN_STATUS_WORKSPACE_TOO_SMALL",
    "ATTN_STATUS_ABI_MISMATCH", "ATTN_STATUS_NO_SPECIALIZATION",
    "ATTN_STATUS_OUT_OF_MEMORY", "ATTN_STATUS_DEVICE_ERROR",
]
KERNEL_RETURNS_OUTPUTS = 1
KERNEL_GPU = 2


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice),
                ("ndim", ctypes.c_int), ("dtype", DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class ExecOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32),
                ("abi_version", ctypes.c_uint32),
                ("num_threads", ctypes.c_int32), ("reserved0", ctypes.c_int32),
                ("workspace", ctypes.c_void_p),
                ("workspace_size", ctypes.c_size_t),
                ("stream", ctypes.c_void_p)]


class TensorInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", DLDataType),
                ("ndim", ctypes.c_int32), ("is_output", ctypes.c_int32),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("dim_names", ctypes.POINTER(ctypes.c_char_p))]


class KernelInfo(ctypes.Structure):
    _fields_ = [("abi_version", ctypes.c_uint32), ("flags", ctypes.c_uint32),
                ("name", ctypes.c_char_p), ("symbol", ctypes.c_char_p),
                ("num_inputs", ctypes.c_int32),
                ("num_outputs", ctypes.c_int32),
                ("tensors", ctypes.POINTER(TensorInfo)),
                ("target_cpu", ctypes.c_char_p), ("form", ctypes.c_char_p),
                ("invoke_packed", ctypes.c_void_p),
                ("set_num_threads", ctypes.c_void_p)]


def declare_runtime(lib):
    """Argument and result types of libattn_runtime's functions on `lib`."""
    # The DLTensor pointer array: a ctypes array, or an address (the packed
    # buffer of attn._torch_tensors, passed without a cast).
    tensors = ctypes.c_void_p
    info = ctypes.POINTER(KernelInfo)
    lib.attn_last_error.restype = ctypes.c_char_p
    lib.attn_last_error.argtypes = []
    lib.attn_exec_options_init.restype = None
    lib.attn_exec_options_init.argtypes = [ctypes.POINTER(ExecOptions)]
    lib.attn_kernel_call.restype = ctypes.c_int
    lib.attn_kernel_call.argtypes = [info, tensors, ctypes.c_int32,
                                     ctypes.POINTER(ExecOptions)]
    lib.attn_kernel_dispatch.restype = ctypes.c_int
    lib.attn_kernel_dispatch.argtypes = [ctypes.POINTER(info), ctypes.c_int32,
                                         tensors, ctypes.c_int32,
                                         ctypes.POINTER(ExecOptions)]


_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def capsule_pointer(capsule):
    """The DLManagedTensor* of an unconsumed "dltensor" capsule."""
    return _get_pointer(capsule, b"dltensor")


_CODES = {0: "i", 1: "u", 2: "f", 4: "bf", 6: "bool"}


def dtype_name(dtype):
    code = _CODES.get(dtype.code, f"code{dtype.code}-")
    return "bool" if dtype.code == 6 else f"{code}{dtype.bits}"


# torch (module, dtypes by element type), once a torch tensor was seen.
_TORCH_STATE = []


def empty_like(like, shape, dtype):
    """An empty numpy array or torch tensor (like `like`) of `shape`."""
    if type(like).__module__.startswith("torch"):
        if not _TORCH_STATE:
            import torch
            _TORCH_STATE[:] = [torch, {}]
        torch, dtypes = _TORCH_STATE
        torch_dtype = dtypes.get(dtype)
        if torch_dtype is None:
            torch_dtype = dtypes[dtype] = getattr(torch, _TORCH[dtype])
        # new_empty: like's device (and dtype where it is the one asked
        # for) without torch.empty's keyword parsing, about half its cost;
        # only on a plain tensor (a subclass or a sparse layout would pass
        # on to the output).
        if type(like) is torch.Tensor and like.layout is torch.strided:
            if like.dtype is torch_dtype:
                return like.new_empty(shape)
            return like.new_empty(shape, dtype=torch_dtype)
        return torch.empty(shape, dtype=torch_dtype, device=like.device)
    import numpy as np
    return np.empty(shape, dtype=_NUMPY[dtype])


_NUMPY = {"f32": "float32", "f64": "float64", "f16": "float16",
          "i8": "int8", "i32": "int32", "i64": "int64", "bool": "bool"}
_TORCH = {"f32": "float32", "f64": "float64", "f16": "float16",
          "bf16": "bfloat16", "i8": "int8", "i32": "int32", "i64": "int64",
          "bool": "bool"}
