"""torch-mlir pass pipelines run with their failures told as one line (no torch import).

run_pipeline(module, pipeline, what) runs a pipeline in place and raises
ImportFailure naming the ops a failed lowering left unconverted, read from the
error diagnostics MLIR attaches to the exception.
"""
import os
import re

from torch_mlir import ir
from torch_mlir.passmanager import PassManager

from . import ImportFailure


def first_line(error):
    """The first non-empty line of an exception's message, with its type when it says little."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    text = lines[0] if lines else ""
    if len(text) < 20:
        text = ("%s: %s" % (type(error).__name__, text)).rstrip(": ")
    return text[:400]


def _location(loc):
    """'file.py:12' from loc("dir/file.py":12:0), 'node' from loc("node"), else None."""
    text = str(loc)
    found = re.search(r'"([^"]+)":(\d+)', text)
    if found:
        return "%s:%s" % (os.path.basename(found.group(1)), found.group(2))
    found = re.search(r'loc\("([^"]+)"', text)
    return found.group(1) if found else None


def _op_name(text):
    """The op a diagnostic names: torch.operator's name attribute, else the op itself."""
    found = re.search(r'name = "((?:torch|onnx)\.[\w.]+)"', text)
    if found:
        return found.group(1)
    found = re.search(r"failed to legalize operation '([\w.]+)'", text)
    if found:
        return found.group(1)
    found = re.search(r"see current operation: (?:%[^=]*= )?\"?([a-z_]+\.[\w.]+)", text)
    return found.group(1) if found else None


def describe_diagnostics(diagnostics):
    """One line for the error diagnostics of a failed pass pipeline.

    'failed to legalize operation X' (for torch.operator, the ONNX or aten op it
    stands for) and a note's 'see current operation: ... = torch.aten.foo' become
    'ops left unconverted: X (where)'; any other error is quoted with where it is.
    """
    ops, others = [], []
    for diagnostic in diagnostics:
        message = diagnostic.message.strip().splitlines()[0] if diagnostic.message.strip() else ""
        where = _location(diagnostic.location)
        name = _op_name(message) if "failed to legalize operation" in message else None
        if name is None and "backend contract" in message:
            for note in diagnostic.notes:
                name = _op_name(note.message) or name
        if name:
            label = "%s (%s)" % (name, where) if where else name
            if label not in ops:
                ops.append(label)
        elif message:
            text = (message[:300] + " (at %s)" % where) if where else message[:300]
            if text not in others:
                others.append(text)
    parts = []
    if ops:
        parts.append("ops left unconverted: " + ", ".join(ops[:8]) +
                     (" and %d more" % (len(ops) - 8) if len(ops) > 8 else ""))
    parts += others[:3]
    return "; ".join(parts) or "the pass pipeline failed without a diagnostic"


def run_pipeline(module, pipeline, what):
    """Runs a pass pipeline on a module in place; ImportFailure naming what failed."""
    with module.context as context:
        context.emit_error_diagnostics = False  # collect them on the MLIRError
        try:
            PassManager.parse(pipeline).run(module.operation)
        except ir.MLIRError as error:
            raise ImportFailure("torch-mlir could not lower the model %s: %s" % (
                what, describe_diagnostics(error.error_diagnostics))) from None
