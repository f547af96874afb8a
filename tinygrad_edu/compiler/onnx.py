"""``tg.onnx.export``: PyTorch's ``torch.onnx.export(model, args, f)`` for eager models.

The model is called once on ``args`` under the compiler's tracer (as ``tg.compile`` traces
it, :mod:`~tinygrad_edu.compiler.trace`), which records its ops as a symbolic graph; the
symbolic engine's ONNX exporter (:func:`tinygrad_edu.symbolic.static.onnx_export.to_onnx`)
writes that graph. The tensor arguments become the model's inputs; the parameters and buffers
it read become initializers (the weights travel in the file, PyTorch's ``export_params=True``).

Reached as ``tinygrad_edu.onnx`` (``import tinygrad_edu.onnx``; the package's ``__init__``
registers that name), PyTorch's path. Needs the ``onnx`` package, imported only when
exporting. Shapes are fixed by the example ``args`` (``dynamic_axes``/``dynamic_shapes`` are
not supported); a model that branches on a tensor's value exports the branch it took.
"""

from __future__ import annotations

import os
import tempfile

from ..eager import grad_mode
from ..eager.tensor import Tensor
from ..nn.module import Module
from ..symbolic.static.onnx_export import to_onnx
from ..symbolic.tensor_node import CONSTANT
from . import tensor_reads as _reads
from . import trace as _trace
from .training_capture import patch_effects, patch_training

__all__ = ["export", "is_in_onnx_export"]

_exporting = [False]


def is_in_onnx_export() -> bool:
    """True while :func:`export` runs the model (PyTorch's ``torch.onnx.is_in_onnx_export``)."""
    return _exporting[0]


def export(model, args=(), f=None, *, kwargs=None, verbose=None, input_names=None,
           output_names=None, opset_version=None, dynamo=True, export_params=True,
           dynamic_axes=None, dynamic_shapes=None, training=None, do_constant_folding=True,
           **options):  # fmt: skip
    """Write ``model`` called on ``args`` as an ONNX file ``f`` (a path or a binary file).

    Args:
        model: a ``tg.nn.Module`` (run in eval mode while traced, as PyTorch's default
            ``training=TrainingMode.EVAL``) or a function of tensors.
        args: the example inputs: a tuple, or one tensor; a dict as the last element holds
            keyword arguments, as in PyTorch.
        f: where to write: a path, or a file object open for binary writing.
        input_names, output_names: the graph's input and output names (PyTorch's defaults
            otherwise: the exporter's ``arg0``... and ``output_0``...).
        opset_version: accepted; the exporter writes its own opset
            (:data:`tinygrad_edu.symbolic.static.onnx_ops.OPSET`).
        export_params: must be True (the weights are always in the file).
        dynamic_axes, dynamic_shapes: must be None (the shapes are the examples').

    PyTorch's other keywords (``verbose``, ``dynamo``, ``do_constant_folding`` ...) are
    accepted and ignored. Returns None, as PyTorch's legacy exporter does.

    Raises:
        ImportError: without the ``onnx`` package.
        NotImplementedError: dynamic shapes, ``export_params=False``, or an op ONNX cannot
            express here.
        RuntimeError: the model does something the tracer cannot record (a graph break).
    """
    if dynamic_axes or dynamic_shapes:
        raise NotImplementedError(
            "tg.onnx.export: dynamic_axes/dynamic_shapes are not supported; the graph has "
            "the example inputs' shapes"
        )
    if not export_params:
        raise NotImplementedError(
            "tg.onnx.export: export_params=False is not supported; the parameters are always "
            "written as initializers"
        )
    if f is None:
        raise TypeError("tg.onnx.export needs f, a path or a binary file to write")
    args = (args,) if isinstance(args, Tensor) else tuple(args)
    kwargs = dict(kwargs or {})
    if args and isinstance(args[-1], dict):
        args, kwargs = args[:-1], {**args[-1], **kwargs}
    outputs, inputs = _trace_call(model, args, kwargs)
    for node, name in zip(inputs, input_names or ()):
        node.name = name
    with tempfile.TemporaryDirectory() as tmp:
        path = to_onnx(outputs, os.path.join(tmp, "model.onnx"),
                       {node: value for node, value in inputs.items()})  # fmt: skip
        import onnx  # noqa: PLC0415  (to_onnx has just imported it: it is there)

        proto = onnx.load(path)
    _rename_outputs(proto, output_names)
    onnx.save(proto, f if hasattr(f, "write") else os.fspath(f))
    return None


def _trace_call(model, args, kwargs):
    """Run ``model(*args, **kwargs)`` under the tracer: (its output nodes, {input node: the
    example value}); the tensors it read besides its arguments become constants."""
    leaves = [a for a in args if isinstance(a, Tensor)]
    names = {}
    if isinstance(model, Module):
        names = {id(t): n for n, t in [*model.named_parameters(), *model.named_buffers()]}
    tracer = _trace.Tracer(leaves, True, names)
    was_training = model.training if isinstance(model, Module) else None
    if was_training:
        model.eval()
    _reads.ACTIVE.tracer = tracer
    grad_mode.set_trace(tracer)
    undo = [_reads.patch_tensor_reads(tracer), patch_training(tracer), patch_effects(tracer)]
    _exporting[0] = True
    try:
        result = model(*args, **kwargs)
        tracer.check_random()
    finally:
        _exporting[0] = False
        _reads.ACTIVE.tracer = None
        grad_mode.set_trace(None)
        for u in undo:
            u()
        if was_training:
            model.train()
    if tracer.trace.breaks:
        reason, line = tracer.trace.breaks[0]
        raise RuntimeError(f"tg.onnx.export: the model cannot be captured as one graph: "
                           f"{reason} ({line})")  # fmt: skip
    results = result if isinstance(result, tuple | list) else (result,)
    if not all(isinstance(r, Tensor) for r in results):
        raise TypeError("tg.onnx.export: the model must return a tensor or a tuple of tensors")
    outputs = [tracer.node_of(r) for r in results]
    inputs = {}
    for node, source in tracer.trace.placeholders:
        if source.kind == "arg":
            inputs[node] = leaves[source.index].numpy(force=True)
        elif source.kind == "tensor":  # a parameter or buffer: its value, as a constant
            node.op, node.attrs = CONSTANT, {"value": source.tensor.numpy(force=True)}
        else:
            raise RuntimeError(f"tg.onnx.export: the model reads a per-call value "
                               f"({source.kind}) that ONNX cannot hold")  # fmt: skip
    return outputs, inputs


def _rename_outputs(proto, output_names) -> None:
    """Name the graph's outputs ``output_names`` (the exporter's are ``output_k``)."""
    for out, name in zip(list(proto.graph.output), output_names or ()):
        for node in proto.graph.node:
            node.output[:] = [name if o == out.name else o for o in node.output]
        out.name = name
