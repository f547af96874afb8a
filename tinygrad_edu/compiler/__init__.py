"""``tg.compile``: eager code traced into the symbolic engine, differentiated ahead of time,
optimised and generated as code (PyTorch's ``torch.compile``: Dynamo, AOTAutograd and a code
generator, here in three small modules).

Layer 8 (``docs/concepts/layers.md``; ``tests/test_import_circles.py`` checks it): it may
import ``eager``, ``symbolic``, ``nn``, ``optim`` and ``backend``; it hooks into the eager
engine through ``grad_mode``'s trace slot, so the engine never imports it. Nothing below
imports it; the package's ``__init__`` re-exports ``tg.compile``.

* :mod:`~tinygrad_edu.compiler.trace`: the tracer that records eager ops into a symbolic
  graph, the guards and the graph breaks;
* :mod:`~tinygrad_edu.compiler.training_capture`: ``loss.backward()``, ``opt.step()`` and
  ``zero_grad()`` captured into the same program;
* :mod:`~tinygrad_edu.compiler.compiled_program`: the forward and backward programs (the
  symbolic engine's ``gradients``, ``optimize`` and ``compile``) and the
  ``CompiledFunctionBackward`` node that joins them to the eager graph;
* :mod:`~tinygrad_edu.compiler.segments`: a function with graph breaks at value reads cut
  into compiled segments, one tree of them for every path a value read sent it down;
* :mod:`~tinygrad_edu.compiler.replay`: a later call of such a function, replayed with
  stand-in tensors (training calls deferred to the segments' programs);
* :mod:`~tinygrad_edu.compiler.compiled_callable`: ``compile()``, the cache of
  specialisations, ``explain``; :mod:`~tinygrad_edu.compiler.optimized_module`: a compiled
  ``nn.Module``.

Imports point down: ``compiled_callable`` -> ``replay`` -> ``segments`` ->
``compiled_program``/``training_capture`` -> ``trace`` -> the engines. (The module names say
what each holds: ``symbolic/static/program.py`` is a Fluid Program, ``nn/module.py`` is
``nn.Module``.)
"""

from .compiled_callable import CompiledCallable, ExplainOutput, GraphBreak, compile
from .optimized_module import OptimizedModule

__all__ = ["compile", "CompiledCallable", "ExplainOutput", "GraphBreak", "OptimizedModule"]
