#!/usr/bin/env python3
"""The attn Python package on a GPU kernel library, over the fake driver.

    ATTN_CUDA_DRIVER=<libattn_fake_cuda.so> ATTN_LIBRARY_DIR=<build/lib> \\
        python-gpu-kernel.py <kernel library> <its spec>

Device tensors are DLPack kDLCUDA capsules made here over memory from
attn_gpu_malloc (the fake driver's "device" memory), as PyTorch's CUDA
tensors would be. Prints the kernel, the driver calls of a call on a given
stream and of one on the default stream, a failing launch's error, and the
same spec JIT-compiled with device="gpu" called on a stream, for FileCheck
(python-gpu-kernel.test).
"""

import ctypes
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "python"))
import attn  # noqa: E402
from attn import _abi  # noqa: E402

lib_dir = os.environ["ATTN_LIBRARY_DIR"]
rt = ctypes.CDLL(os.path.join(lib_dir, "libattn_gpu_runtime.so"))
rt.attn_gpu_malloc.restype = ctypes.c_void_p
rt.attn_gpu_malloc.argtypes = [ctypes.c_size_t]
rt.attn_gpu_stream_create.restype = ctypes.c_void_p
fake = ctypes.CDLL(os.environ["ATTN_CUDA_DRIVER"])
fake.fake_cuda_log.restype = ctypes.c_char_p
fake.fake_cuda_fail_next.argtypes = [ctypes.c_char_p, ctypes.c_int]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _abi.DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


_new_capsule = ctypes.pythonapi.PyCapsule_New
_new_capsule.restype = ctypes.py_object
_new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class DeviceTensor:
    """A contiguous tensor in device memory that exports DLPack (kDLCUDA)."""

    def __init__(self, info):
        self.shape = (ctypes.c_int64 * len(info["shape"]))(*info["shape"])
        bits = {"f16": 16, "bf16": 16, "f32": 32}[info["dtype"]]
        code = {"f16": 2, "bf16": 4, "f32": 2}[info["dtype"]]
        count = 1
        for s in info["shape"]:
            count *= s
        self.managed = DLManagedTensor()
        t = self.managed.dl_tensor
        t.data = rt.attn_gpu_malloc(count * bits // 8)
        t.device = _abi.DLDevice(2, 0)  # kDLCUDA, device 0
        t.ndim = len(info["shape"])
        t.dtype = _abi.DLDataType(code, bits, 1)
        t.shape = self.shape

    def __dlpack__(self):
        return _new_capsule(ctypes.addressof(self.managed), b"dltensor", None)


lib = attn.load_library(sys.argv[1])
kernel = next(iter(lib.kernels.values()))
print(kernel)
print("gpu:", kernel.gpu)
tensors = [DeviceTensor(t) for t in kernel.tensors]
inputs, outputs = tensors[:kernel.num_inputs], tensors[kernel.num_inputs:]

stream = rt.attn_gpu_stream_create()
fake.fake_cuda_clear_log()
kernel(*inputs, out=outputs, stream=stream)
print("on a stream:")
print(fake.fake_cuda_log().decode(), end="")

fake.fake_cuda_clear_log()
kernel(*inputs, out=outputs)
print("on the default stream:")
print(fake.fake_cuda_log().decode(), end="")

fake.fake_cuda_fail_next(b"cuLaunchKernel", 700)
try:
    kernel(*inputs, out=outputs, stream=stream)
    print("a failed launch was not reported")
except attn.KernelError as e:
    print(e.status, e.message)

# The same spec JIT-compiled for the GPU through the C API (device="gpu":
# the chip is the fake device's, sm_90 -> sm_90a).
jitted = attn.jit(open(sys.argv[2]).read(), device="gpu")["gqa_small"]
print("jit:", jitted, "gpu:", jitted.gpu)
tensors = [DeviceTensor(t) for t in jitted.tensors]
fake.fake_cuda_clear_log()
jitted(*tensors[:jitted.num_inputs], out=tensors[jitted.num_inputs:],
       stream=stream)
print("jit on a stream:")
print(fake.fake_cuda_log().decode(), end="")
