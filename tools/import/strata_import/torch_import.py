"""PyTorch models to MLIR for compile-module, through torch.export and torch-mlir.

    export_torch(model, (x,), "model.mlir")                        # linalg-on-tensors
    export_torch(model, (ids, mask), "m.mlir", dynamic_batch=True)  # tensor<?x16xi64> arguments
    export_torch(model, (x,), "model_tosa.mlir", output="tosa")

The model is exported in eval mode under torch.no_grad() with
torch_mlir.fx.export_and_import (torch.export, then torch-mlir's FX importer
into the torch dialect), then lowered with torch-mlir's pass pipelines to
linalg-on-tensors or TOSA. The lowering runs here rather than inside
export_and_import so that a failure is reported as the ops left unconverted
(ImportFailure), not as a repro dump written to the temporary directory.

Two things real models need before torch-mlir takes them:
- Non-persistent buffers (transformers' `position_ids`, `token_type_ids`) are
  made persistent for the export and restored afterwards: torch-mlir's importer
  looks every buffer up in the state dict.
- torch.cumsum (GPT-style position ids computed from the attention mask) is
  decomposed into linalg-friendly ops (log2(n) shifted adds along a static
  dimension, a masked sum along a dynamic one) instead of torch-mlir's
  tm_tensor.scan, which compile-module does not take.
"""
import re

import torch
import torch.export
from torch_mlir import fx
from torch_mlir.extras.fx_decomp_util import get_decomposition_table

from . import ImportFailure
from .lowering import first_line, run_pipeline

# output -> (its pass pipeline from the torch backend contract, its name)
OUTPUTS = {
    "linalg": ("builtin.module(torch-backend-to-linalg-on-tensors-backend-pipeline)",
               "linalg-on-tensors"),
    "tosa": ("builtin.module(torch-backend-to-tosa-backend-pipeline)", "TOSA"),
}
# What torch_mlir.fx.export_and_import runs from the imported FX graph to the
# torch backend contract (its _module_lowering, without extra options).
TO_TORCH_BACKEND = ("builtin.module(func.func(torch-match-quantized-custom-ops), "
                    "torchdynamo-export-to-torch-backend-pipeline{ extra-library=})")


def _cumsum(x, dim, dtype=None):
    """aten.cumsum without tm_tensor.scan: shifted adds, or a masked sum."""
    if dtype is not None:
        x = x.to(dtype)
    elif not (x.is_floating_point() or x.is_complex()):
        x = x.to(torch.int64)  # torch accumulates integers and bools in int64
    if x.dim() == 0:
        return x.clone()
    dim = dim % x.dim()
    n = x.shape[dim]
    if isinstance(n, int):
        # Inclusive prefix sum in ceil(log2(n)) steps (Hillis-Steele): after the
        # step with shift s, element i holds the sum of the 2s elements up to it.
        shift = 1
        while shift < n:
            head = torch.zeros_like(x.narrow(dim, 0, shift))
            x = x + torch.cat([head, x.narrow(dim, 0, n - shift)], dim)
            shift *= 2
        return x
    # A dynamic length: y[i] = sum over j <= i of x[j], as one masked reduction.
    moved = x.movedim(dim, -1)
    index = torch.arange(n, device=x.device)
    lower = (index.unsqueeze(1) >= index.unsqueeze(0)).to(moved.dtype)  # [i, j] = j <= i
    return (moved.unsqueeze(-2) * lower).sum(-1).movedim(-1, dim)


def _flash_attention_laid_out_like_query(decomposition):
    """The CPU flash-attention decomposition, its output laid out as the kernel's.

    PyTorch's decomposition of _scaled_dot_product_flash_attention_for_cpu
    always returns its output laid out (L, N, H, E), the layout
    nn.MultiheadAttention's later view expects; the kernel (and its meta
    function, which the export traced with) returns it laid out like the
    query. transformers' attention transposes the output and views it as
    (N * L, H * E), which with a dynamic batch fails on the decomposition's
    layout ("Cannot view a tensor with shape [s, 16, 256] and strides (256,
    256*s, 1)"). Copying the result into a tensor like the query gives it the
    kernel's layout, which both consumers traced with; torch-mlir lowers the
    copy to one elementwise op.
    """
    def flash_attention(query, key, value, dropout_p=0.0, is_causal=False, *,
                        attn_mask=None, scale=None):
        output, logsumexp = decomposition(query, key, value, dropout_p, is_causal,
                                          attn_mask=attn_mask, scale=scale)
        return torch.ops.aten.copy.default(torch.empty_like(query), output), logsumexp
    return flash_attention


def decomposition_table():
    """torch-mlir's decompositions, plus cumsum's and a fixed CPU flash attention's."""
    table = dict(get_decomposition_table())
    table[torch.ops.aten.cumsum.default] = _cumsum
    flash = getattr(torch.ops.aten, "_scaled_dot_product_flash_attention_for_cpu", None)
    if flash is not None and flash.default in table:
        table[flash.default] = _flash_attention_laid_out_like_query(table[flash.default])
    return table


def _tensor_args(args):
    return [a for a in args if isinstance(a, torch.Tensor)]


def _batch_of_two(args):
    """Example arguments with a batch of at least 2: torch.export specializes size-1 dims."""
    out = []
    for a in args:
        if isinstance(a, torch.Tensor) and a.dim() > 0 and a.shape[0] == 1:
            a = torch.cat([a, a], 0)
        out.append(a)
    return tuple(out)


def _export_error(error):
    """One line for an exception of torch.export or the FX importer."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    if lines and lines[0].startswith("Constraints violated"):
        # The reasons follow on lines of their own ("- You marked batch as dynamic
        # but your code specialized it to be a constant (2). If you're using ...").
        reasons = [line[2:].split(". ")[0] for line in lines[1:] if line.startswith("- ")]
        if reasons:
            return "%s: %s" % (lines[0].split("!")[0], "; ".join(reasons))[:600]
    return first_line(error)


def _signature(text, func_name):
    found = re.search(r"func\.func @%s\((.*?)\)\s*->" % re.escape(func_name), text)
    return found.group(1) if found else ""


def export_torch(model, example_args, path, dynamic_batch=False, output="linalg", func_name="main"):
    """Exports model(*example_args) to MLIR text in path; returns the text.

    output: "linalg" (linalg-on-tensors) or "tosa". dynamic_batch: dimension 0
    of every tensor argument becomes one dynamic dimension (torch.export.Dim
    "batch"); an example batch of 1 is doubled for the export, since
    torch.export would specialize it.
    """
    if output not in OUTPUTS:
        raise ImportFailure("unknown output %r (expected linalg or tosa)" % output)
    if isinstance(example_args, torch.Tensor):
        example_args = (example_args,)
    args = tuple(example_args)
    if not _tensor_args(args):
        raise ImportFailure("the example arguments hold no tensor")
    dynamic_shapes = None
    if dynamic_batch:
        args = _batch_of_two(args)
        batch = torch.export.Dim("batch")
        dynamic_shapes = tuple({0: batch} if isinstance(a, torch.Tensor) and a.dim() > 0 else None
                               for a in args)

    model.eval()
    # Buffers the state dict leaves out, made persistent for the export only.
    hidden = [(m, set(m._non_persistent_buffers_set)) for m in model.modules()
              if getattr(m, "_non_persistent_buffers_set", None)]
    for m, _ in hidden:
        m._non_persistent_buffers_set.clear()
    try:
        with torch.no_grad():
            module = fx.export_and_import(model, *args, output_type="raw",
                                          dynamic_shapes=dynamic_shapes,
                                          decomposition_table=decomposition_table(),
                                          func_name=func_name)
    except ImportFailure:
        raise
    except Exception as error:  # torch.export's and the FX importer's many kinds
        raise ImportFailure("exporting the model failed: %s" % _export_error(error)) from None
    finally:
        for m, names in hidden:
            m._non_persistent_buffers_set.update(names)

    pipeline, name = OUTPUTS[output]
    run_pipeline(module, TO_TORCH_BACKEND, "to torch-mlir's backend form")
    run_pipeline(module, pipeline, "to " + name)
    text = str(module)
    body = text.split("\n{-#", 1)[0]  # the ops, without the weights' resource section
    left = sorted(set(re.findall(r"\b(torch\.(?:aten|prims|operator|prim)[\w.]*)", body)))
    if left:
        raise ImportFailure("torch-mlir left torch ops in the %s output: %s" % (
            name, ", ".join(left)))
    if dynamic_batch:
        signature = _signature(body, func_name)
        ranked = [t for t in re.findall(r"tensor<([^>]*)>", signature) if "x" in t]
        if not ranked or not all(t.startswith("?x") for t in ranked):
            raise ImportFailure("the export did not keep the batch dynamic: @%s(%s)" % (
                func_name, signature))
    with open(path, "w") as f:
        f.write(text)
    return text
