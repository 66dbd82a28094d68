"""ONNX models to linalg-on-tensors MLIR for compile-module, without PyTorch.

    import_onnx("model.onnx", "model.mlir")

The model is loaded (with its external data, from the model's folder unless
data_dir says otherwise), checked, and its shapes inferred with the onnx
package; torch-mlir's ONNX importer turns it into the torch dialect (one
torch.operator per ONNX node), and the pass pipelines
torch-onnx-to-torch-backend-pipeline and
torch-backend-to-linalg-on-tensors-backend-pipeline lower it. Nothing here
imports torch: torch-mlir's importer and pass manager are its own native
bindings. The function is named `main` unless func_name says otherwise.
"""
import os
import re
import tempfile

import onnx

from torch_mlir import ir
from torch_mlir.dialects import torch as torch_d
from torch_mlir.extras import onnx_importer

from . import ImportFailure
from .lowering import first_line, run_pipeline

TO_TORCH_BACKEND = "builtin.module(torch-onnx-to-torch-backend-pipeline)"
TO_LINALG = "builtin.module(torch-backend-to-linalg-on-tensors-backend-pipeline)"


def _failure(what, error):
    return ImportFailure("%s: %s" % (what, first_line(error)))


def load_model(path, data_dir=None):
    """The model in path, checked, with its shapes inferred; ImportFailure if it is not one."""
    if not os.path.exists(path):
        raise ImportFailure("%s: no such file" % path)
    if os.path.isdir(path):
        raise ImportFailure("%s is a directory, not an ONNX model" % path)
    data_dir = data_dir or os.path.dirname(os.path.abspath(path))
    try:
        model = onnx.load(path, load_external_data=False)
    except Exception as error:  # protobuf's DecodeError, and what onnx makes of it
        raise _failure("%s is not an ONNX model" % path, error) from None
    if not model.HasField("graph") or model.ir_version == 0:
        # Protobuf parses an empty file, and some other bytes, as an empty message.
        raise ImportFailure("%s is not an ONNX model: it has no graph or IR version" % path)
    try:
        onnx.load_external_data_for_model(model, data_dir)
    except Exception as error:
        raise _failure("%s: cannot load its external data" % path, error) from None
    try:
        onnx.checker.check_model(model)
    except ValueError:
        pass  # over protobuf's 2 GB: too big for the in-memory checker
    except Exception as error:
        raise _failure("%s is not a valid ONNX model" % path, error) from None
    try:
        return onnx.shape_inference.infer_shapes(model, data_prop=True)
    except ValueError:
        pass  # over 2 GB in memory: infer from the file instead
    except Exception as error:
        raise _failure("%s: ONNX shape inference failed" % path, error) from None
    with tempfile.TemporaryDirectory() as temp:
        inferred = os.path.join(temp, "inferred.onnx")
        try:
            onnx.shape_inference.infer_shapes_path(path, inferred, data_prop=True)
        except Exception as error:
            raise _failure("%s: ONNX shape inference failed" % path, error) from None
        model = onnx.load(inferred, load_external_data=False)
    onnx.load_external_data_for_model(model, data_dir)
    return model


def import_onnx(path, out_path=None, func_name="main", data_dir=None):
    """The ONNX model in path as linalg-on-tensors MLIR text, also written to out_path if given."""
    model = load_model(path, data_dir)
    model.graph.name = func_name
    context = ir.Context()
    torch_d.register_dialect(context)
    try:
        info = onnx_importer.ModelInfo(model)
        module = info.create_module(context=context)
        onnx_importer.NodeImporter.define_function(info.main_graph, module.operation).import_all()
        module.operation.verify()
    except Exception as error:  # OnnxImportError, and MLIRError from the verifier
        raise _failure("torch-mlir's ONNX importer failed on %s" % path, error) from None

    run_pipeline(module, TO_TORCH_BACKEND, "from ONNX to torch-mlir's backend form")
    run_pipeline(module, TO_LINALG, "to linalg-on-tensors")
    text = str(module)
    body = text.split("\n{-#", 1)[0]  # the ops, without the weights' resource section
    left = sorted(set(re.findall(r'\btorch\.operator "([\w.]+)"', body) +
                      re.findall(r"\b(torch\.(?:aten|prims|prim)\.[\w.]+)", body)))
    if left:
        raise ImportFailure("torch-mlir left ops unconverted in %s: %s" % (path, ", ".join(left)))
    if out_path:
        with open(out_path, "w") as f:
            f.write(text)
    return text
