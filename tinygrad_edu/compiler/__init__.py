"""``tg.compile``: eager code traced into the symbolic engine, differentiated ahead of time,
optimised and generated as code (PyTorch's ``torch.compile``: Dynamo, AOTAutograd and a code
generator, here in three small modules).

* :mod:`~tinygrad_edu.compiler.trace`: the tracer that records eager ops into a symbolic
  graph, the guards and the graph breaks;
* :mod:`~tinygrad_edu.compiler.training`: ``loss.backward()``, ``opt.step()`` and
  ``zero_grad()`` captured into the same program;
* :mod:`~tinygrad_edu.compiler.program`: the forward and backward programs (the symbolic
  engine's ``gradients``, ``optimize`` and ``compile``) and the ``CompiledFunctionBackward``
  node that joins them to the eager graph;
* :mod:`~tinygrad_edu.compiler.api`: ``compile()``, the cache of specialisations, ``explain``.

Imports point down: ``api`` -> ``program``/``training`` -> ``trace`` -> the engines.
"""

from .api import CompiledCallable, ExplainOutput, GraphBreak, compile
from .module import OptimizedModule

__all__ = ["compile", "CompiledCallable", "ExplainOutput", "GraphBreak", "OptimizedModule"]
