"""Registers attn kernels as PyTorch custom ops (optional; needs torch).

    op = attn.torch_ops.register(lib["gqa_causal"], "attn_kernels::gqa")
    out, lse = op(q, k, v)            # eager, and traceable by torch.compile

The op allocates its outputs (static shapes only) and calls the kernel
through DLPack; its fake implementation returns empty tensors of the
output shapes so that torch.compile and FakeTensor tracing work. Nothing
here is tied to one PyTorch version beyond torch.library.custom_op (2.4+).
"""

import torch

_TORCH_DTYPES = {"f32": torch.float32, "f64": torch.float64,
                 "f16": torch.float16, "bf16": torch.bfloat16,
                 "i8": torch.int8, "i32": torch.int32, "i64": torch.int64,
                 "bool": torch.bool}


def register(kernel, qualname):
    """A torch.library.custom_op calling `kernel`, named `qualname`
    ("namespace::name")."""
    for t in kernel.outputs:
        if any(s < 0 for s in t["shape"]):
            raise ValueError(f"{kernel.name}: output {t['name']} has dynamic "
                             "sizes; only static outputs can be a custom op")
    args = ", ".join(f"Tensor {t['name']}" for t in kernel.inputs)
    results = ", ".join("Tensor" for _ in kernel.outputs)
    if len(kernel.outputs) > 1:
        results = f"({results})"
    schema = f"({args}) -> {results}"

    def outputs(device):
        return [torch.empty(t["shape"], dtype=_TORCH_DTYPES[t["dtype"]],
                            device=device) for t in kernel.outputs]

    def impl(*inputs):
        outs = outputs(inputs[0].device)
        kernel(*[x.contiguous() for x in inputs], out=outs)
        return outs[0] if len(outs) == 1 else tuple(outs)

    def fake(*inputs):
        outs = outputs(inputs[0].device)
        return outs[0] if len(outs) == 1 else tuple(outs)

    op = torch.library.custom_op(qualname, impl, mutates_args=(),
                                 device_types="cuda" if kernel.gpu else "cpu",
                                 schema=schema)
    op.register_fake(fake)
    return op
