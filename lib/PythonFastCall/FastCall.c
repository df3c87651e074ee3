/*===- FastCall.c - attn_kernel_call on torch tensors, from Python --------===*
 *
 * Part of the attn project.
 *
 *===----------------------------------------------------------------------===*
 *
 * The Python package's fast path for one kernel call on torch tensors
 * (python/attn/__init__.py, `call`): the DLTensors are filled from the
 * tensors' attributes here, on the stack, and attn_kernel_call is called
 * through the function pointer the package's ctypes handle gives, without
 * the GIL. The package works without this module (the same DLTensors
 * packed in Python, about 8 us more per call of six tensors on Zen 4); it
 * accepts exactly what that path accepts: tensor types and dtypes the
 * package has already seen (the set and the dict it passes), on the CPU or
 * on a CUDA device. Anything else returns None and the caller takes the
 * Python path, which also learns new types and dtypes.
 *
 * CPython's limited API (3.9), so one build serves every CPython >= 3.9.
 * Nothing of this project is linked: the runtime comes as an address.
 *
 *===----------------------------------------------------------------------===*/

#define Py_LIMITED_API 0x03090000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "attn-c/Kernel.h"

#include <stdint.h>

/* attn_kernel_call's type (only the header: nothing of the runtime is
   linked; its address comes from the package). */
typedef __typeof__(attn_kernel_call) *KernelCallFn;

enum { kMaxTensors = 32, kMaxRank = 16 };

static PyObject *sDtype, *sIsCpu, *sIsCuda, *sShape, *sStride, *sDataPtr,
    *sGetDevice;

/* Reads up to kMaxRank Python ints of `tuple` into `out` and releases it
   (a new reference, or NULL when the call that made it failed): the count,
   or -1 with an exception set, or -2 when it is not a tuple or too long. */
static Py_ssize_t takeInts(PyObject *tuple, int64_t *out) {
  if (!tuple)
    return -1;
  Py_ssize_t n = PyTuple_Check(tuple) ? PyTuple_Size(tuple) : -2;
  if (n > kMaxRank)
    n = -2;
  for (Py_ssize_t i = 0; i < n; ++i) {
    long long v = PyLong_AsLongLong(PyTuple_GetItem(tuple, i));
    if (v == -1 && PyErr_Occurred()) {
      n = -1;
      break;
    }
    out[i] = v;
  }
  Py_DECREF(tuple);
  return n;
}

/* 1: filled; 0: not for this path; -1: a Python exception is set. */
static int fill(PyObject *t, PyObject *types, PyObject *dtypes, DLTensor *dl,
                int64_t *shape, int64_t *strides) {
  int known = PySet_Contains(types, (PyObject *)Py_TYPE(t));
  if (known <= 0)
    return known;
  PyObject *dtype = PyObject_GetAttr(t, sDtype);
  if (!dtype)
    return -1;
  PyObject *code = PyDict_GetItemWithError(dtypes, dtype); /* borrowed */
  Py_DECREF(dtype);
  if (!code)
    return PyErr_Occurred() ? -1 : 0;
  if (!PyTuple_Check(code) || PyTuple_Size(code) != 2)
    return 0;
  long typeCode = PyLong_AsLong(PyTuple_GetItem(code, 0));
  if (typeCode == -1 && PyErr_Occurred())
    return -1;
  long bits = PyLong_AsLong(PyTuple_GetItem(code, 1));
  if (bits == -1 && PyErr_Occurred())
    return -1;

  PyObject *flag = PyObject_GetAttr(t, sIsCpu);
  if (!flag)
    return -1;
  int cpu = PyObject_IsTrue(flag);
  Py_DECREF(flag);
  if (cpu < 0)
    return -1;
  if (cpu) {
    dl->device.device_type = kDLCPU;
    dl->device.device_id = 0;
  } else {
    flag = PyObject_GetAttr(t, sIsCuda);
    if (!flag)
      return -1;
    int cuda = PyObject_IsTrue(flag);
    Py_DECREF(flag);
    if (cuda <= 0)
      return cuda;
    PyObject *id = PyObject_CallMethodObjArgs(t, sGetDevice, NULL);
    if (!id)
      return -1;
    long device = PyLong_AsLong(id);
    Py_DECREF(id);
    if (device == -1 && PyErr_Occurred())
      return -1;
    dl->device.device_type = kDLCUDA;
    dl->device.device_id = (int32_t)device;
  }

  Py_ssize_t ndim = takeInts(PyObject_GetAttr(t, sShape), shape);
  if (ndim < 0)
    return ndim == -1 ? -1 : 0;
  Py_ssize_t nstrides =
      takeInts(PyObject_CallMethodObjArgs(t, sStride, NULL), strides);
  if (nstrides < 0)
    return nstrides == -1 ? -1 : 0;
  if (nstrides != ndim)
    return 0;
  PyObject *ptr = PyObject_CallMethodObjArgs(t, sDataPtr, NULL);
  if (!ptr)
    return -1;
  void *data = PyLong_AsVoidPtr(ptr);
  Py_DECREF(ptr);
  if (!data && PyErr_Occurred())
    return -1;

  dl->data = data;
  dl->ndim = (int32_t)ndim;
  dl->dtype.code = (uint8_t)typeCode;
  dl->dtype.bits = (uint8_t)bits;
  dl->dtype.lanes = 1;
  dl->shape = shape;
  dl->strides = strides;
  dl->byte_offset = 0;
  return 1;
}

PyDoc_STRVAR(callDoc,
             "call(kernel_call, kernel, tensors, options, types, dtypes)\n"
             "\n"
             "attn_kernel_call (its address) on `kernel` (an\n"
             "attn_kernel_info_t address) with the torch tensors of the\n"
             "list or tuple `tensors` and the attn_exec_options_t at\n"
             "`options`: the status, or None when a tensor's type is not\n"
             "in the set `types`, its dtype not in the dict `dtypes`\n"
             "(dtype -> (DLPack code, bits)) or it is on neither the CPU\n"
             "nor a CUDA device. The GIL is released during the call.");

static PyObject *call(PyObject *self, PyObject *args) {
  (void)self;
  unsigned long long fn, kernel, options;
  PyObject *tensors, *types, *dtypes;
  if (!PyArg_ParseTuple(args, "KKOKO!O!", &fn, &kernel, &tensors, &options,
                        &PySet_Type, &types, &PyDict_Type, &dtypes))
    return NULL;
  PyObject *seq = PySequence_Fast(tensors, "tensors must be a sequence");
  if (!seq)
    return NULL;
  Py_ssize_t n = PySequence_Size(seq);
  if (n < 0 || n > kMaxTensors || !fn) {
    Py_DECREF(seq);
    if (n < 0)
      return NULL;
    Py_RETURN_NONE;
  }
  DLTensor dl[kMaxTensors];
  DLTensor *ptrs[kMaxTensors];
  int64_t shapes[kMaxTensors][kMaxRank], strides[kMaxTensors][kMaxRank];
  /* The tensors are held until the call returns: another thread may change
     the caller's list while the GIL is released. */
  PyObject *held[kMaxTensors];
  Py_ssize_t numHeld = 0;
  int ok = 1;
  for (Py_ssize_t i = 0; i < n && ok > 0; ++i) {
    PyObject *t = PySequence_GetItem(seq, i);
    if (!t) {
      ok = -1;
      break;
    }
    held[numHeld++] = t;
    ok = fill(t, types, dtypes, &dl[i], shapes[i], strides[i]);
    ptrs[i] = &dl[i];
  }
  Py_DECREF(seq);
  attn_status_t status = ATTN_STATUS_OK;
  if (ok > 0) {
    Py_BEGIN_ALLOW_THREADS;
    status = ((KernelCallFn)(uintptr_t)fn)(
        (const attn_kernel_info_t *)(uintptr_t)kernel, ptrs, (int32_t)n,
        (const attn_exec_options_t *)(uintptr_t)options);
    Py_END_ALLOW_THREADS;
  }
  for (Py_ssize_t i = 0; i < numHeld; ++i)
    Py_DECREF(held[i]);
  if (ok < 0)
    return NULL;
  if (ok == 0)
    Py_RETURN_NONE;
  return PyLong_FromLong((long)status);
}

static PyMethodDef methods[] = {
    {"call", call, METH_VARARGS, callDoc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    "_attn_fastcall",
    "attn_kernel_call on torch tensors without ctypes (the attn package's "
    "fast path).",
    -1,
    methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC PyInit__attn_fastcall(void) {
  struct {
    PyObject **slot;
    const char *name;
  } names[] = {{&sDtype, "dtype"},         {&sIsCpu, "is_cpu"},
               {&sIsCuda, "is_cuda"},      {&sShape, "shape"},
               {&sStride, "stride"},       {&sDataPtr, "data_ptr"},
               {&sGetDevice, "get_device"}};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); ++i)
    if (!*names[i].slot &&
        !(*names[i].slot = PyUnicode_InternFromString(names[i].name)))
      return NULL;
  return PyModule_Create(&module);
}
