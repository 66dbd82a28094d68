"""Importers that bring PyTorch and ONNX models into MLIR that compile-module takes.

    from strata_import import export_torch, import_onnx
    export_torch(model, (x,), "model.mlir")             # linalg-on-tensors (or output="tosa")
    import_onnx("model.onnx", "model.mlir")             # linalg-on-tensors, without PyTorch

Both go through torch-mlir. `export_torch` (torch_import.py) exports with
torch.export and torch-mlir's FX importer; `import_onnx` (onnx_import.py) uses
torch-mlir's ONNX importer and never imports torch, so ONNX users need no
PyTorch. Each raises ImportFailure with a one-line message naming the problem
(the command-line tools print it and exit 1).

The names are resolved lazily so that `import strata_import` alone loads
neither torch nor onnx.
"""


class ImportFailure(Exception):
    """A model that could not be imported; str() is one line naming the problem."""


__all__ = ["ImportFailure", "export_torch", "import_onnx"]


def __getattr__(name):
    if name == "export_torch":
        from .torch_import import export_torch
        return export_torch
    if name == "import_onnx":
        from .onnx_import import import_onnx
        return import_onnx
    raise AttributeError("module 'strata_import' has no attribute %r" % name)
