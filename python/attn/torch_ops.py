"""Registers attn kernels as PyTorch custom ops (optional; needs torch).

    op = attn.torch_ops.register(lib["gqa_causal"], "attn_kernels::gqa")
    out, lse = op(q, k, v)            # eager, and traceable by torch.compile

The op allocates its outputs and calls the kernel through DLPack; its fake
implementation returns empty tensors of the output shapes so that
torch.compile and FakeTensor tracing work. Outputs of dynamic sizes are
sized by their dimension names (an attention's out is [B, Hq, Nq, Dv] in
its layout, lse [B, Hq, Nq]; the kernel info names them), taken from the
inputs' sizes: under torch.compile(dynamic=True) those are symbolic, so one
trace serves every size. Nothing here is tied to one PyTorch version beyond
torch.library.custom_op (2.4+).
"""

import torch

_TORCH_DTYPES = {"f32": torch.float32, "f64": torch.float64,
                 "f16": torch.float16, "bf16": torch.bfloat16,
                 "i8": torch.int8, "i32": torch.int32, "i64": torch.int64,
                 "bool": torch.bool}


def output_shapes(kernel, inputs):
    """The output shapes of `kernel` for `inputs` (Kernel.output_shapes)."""
    return kernel.output_shapes(inputs)


def register(kernel, qualname):
    """A torch.library.custom_op calling `kernel`, named `qualname`
    ("namespace::name")."""
    for t in kernel.outputs:
        for size, name in zip(t["shape"], t["dims"]):
            if size < 0 and not any(name and name in i["dims"]
                                    for i in kernel.inputs):
                raise ValueError(f"{kernel.name}: output {t['name']} has a "
                                 f"dynamic size no input names; it cannot "
                                 f"be a custom op")
    args = ", ".join(f"Tensor {t['name']}" for t in kernel.inputs)
    results = ", ".join("Tensor" for _ in kernel.outputs)
    if len(kernel.outputs) > 1:
        results = f"({results})"
    schema = f"({args}) -> {results}"

    def outputs(inputs):
        return [torch.empty(shape, dtype=_TORCH_DTYPES[t["dtype"]],
                            device=inputs[0].device)
                for t, shape in zip(kernel.outputs,
                                    output_shapes(kernel, inputs))]

    def impl(*inputs):
        outs = outputs(inputs)
        # CPU kernels take strided views (read in place, or gathered by the
        # runtime where their innermost stride is not 1); GPU kernels take
        # contiguous tensors.
        kernel(*[x if x.device.type == "cpu" else x.contiguous()
                 for x in inputs], out=outs)
        return outs[0] if len(outs) == 1 else tuple(outs)

    def fake(*inputs):
        outs = outputs(inputs)
        return outs[0] if len(outs) == 1 else tuple(outs)

    op = torch.library.custom_op(qualname, impl, mutates_args=(),
                                 device_types="cuda" if kernel.gpu else "cpu",
                                 schema=schema)
    op.register_fake(fake)
    return op
