"""The static-graph compiler over the symbolic engine, in Paddle Fluid's terms.

Paddle names this half of its library ``paddle.static``: a network described once as a
:class:`Program` of :class:`Block` s, run many times by an executor against a :class:`Scope`.
Here it is everything that *transforms or packages* a symbolic graph, as opposed to building,
differentiating and evaluating one (the engine, ``tinygrad_edu.symbolic``):

- ``program``, ``scope``, ``initializer``: Fluid's Program/Block, ``program_guard``, the
  startup program's initialisers and the scope that holds parameters between runs;
- ``control_flow``: :func:`cond` and :func:`while_loop` as differentiable sub-blocks;
- ``training``: the training step (forward, gradients, updates) as one graph;
- ``fluid``: Fluid's own names for all of the above;
- ``passes``: graph rewrites and :func:`optimize`;
- ``codegen``: :func:`compile` a graph to Python source;
- ``onnx_export`` / ``onnx_ops``: :func:`to_onnx`; ``serialize``: ``Program.to_json``.

Layering (``tests/test_import_circles.py`` checks it): these modules import the engine
(``tensor_node``, ``graph``, ``gradients``, ``executor``, ``memory``, ``api``); no engine module
imports them. ``tinygrad_edu.symbolic`` re-exports their public names, so
``from tinygrad_edu.symbolic import Program`` keeps working.
"""

from . import serialize  # noqa: F401  (serialize hands Program its to_json/from_json)
from .codegen import compile
from .control_flow import cond, while_loop
from .initializer import create_global_var, create_parameter, data
from .onnx_export import to_onnx
from .passes import optimize
from .program import (
    Block,
    Program,
    Update,
    default_main_program,
    default_startup_program,
    program_guard,
)
from .scope import Scope

__all__ = [
    "Program", "Block", "Update", "Scope", "program_guard", "default_main_program",
    "default_startup_program", "create_parameter", "create_global_var", "data", "cond",
    "while_loop", "compile", "optimize", "to_onnx",
]  # fmt: skip
