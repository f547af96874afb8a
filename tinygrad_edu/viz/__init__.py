"""Drawings of both graph forms, side by side, and the backward stepper.

Layer 10 (``docs/concepts/layers.md``; ``tests/test_import_circles.py`` checks it): it may
import the package (``tinygrad_edu``), ``eager``, ``symbolic``, ``ops`` and ``backend``;
nothing in the library imports it but ``cli`` (by name); the course does. Its modules are
layered too (``VIZ_LAYERS`` in the test, listed below).

* :func:`draw` (dispatching to :func:`draw_symbolic` / :func:`draw_eager`) returns a
  ``graphviz.Digraph``; :func:`render` writes it to PNG/SVG/PDF after checking for ``dot``.
* :func:`draw_both` runs one function in both engines and draws the two forms side by side.
* :func:`frames`, :func:`slider` and :func:`stepper_frames` show pictures one at a time under
  a slider and a play button that need no kernel (they work on static pages too).
* ``draw(loss, modules=model)`` boxes each layer's ops (:mod:`~tinygrad_edu.viz.modules`);
  :func:`draw_im2col` pictures how a convolution becomes one matrix product.
* PyTorch tensors draw too: ``draw(torch_tensor)`` walks its ``grad_fn`` graph
  (:mod:`~tinygrad_edu.viz.torch_graph`) and draws it in the same style.
* :func:`draw_backward_order` numbers each node by the order our engine runs it (for our
  graphs and PyTorch's); :func:`torch_run_order` observes the order PyTorch runs.
* :class:`BackwardStepper` records a backward pass step by step (eager engine observer, or the
  symbolic Executor's order) and draws each step, as a Jupyter slider, a GIF or PNG frames.

The engines never import this package; it only reads their graphs.

Where things live, bottom layer first: a module imports only from the lines before its own
(and from the engines); ``tests/test_import_circles.py`` checks it.

* ``records`` (boxes and arrows as plain records), ``torch_graph`` (views of PyTorch's
  graphs), ``style`` (colours, fonts, labels, legends, rendering with ``dot``), ``examples``;
* ``blocks`` (control-flow clusters), ``modules`` (a network's layers grouped), ``anatomy``
  (one tensor's storage, strides and autograd fields: :func:`draw_anatomy`);
* ``traverse`` (a whole graph walked into records);
* ``symbolic_form``, ``eager_form`` (each form drawn), ``run_engines`` (a function run in
  three engines, for ``draw_both``), ``im2col``;
* ``draw`` (``draw``, ``draw_both``; re-exports the drawing names), ``order``,
  ``memory_plan``, ``stepper.record`` (a backward pass recorded as frames), ``kernels`` (a
  compiled program's fusion groups boxed, for ``draw_compiled(step, "kernels")``);
* ``stepper.captions``, ``stepper.layout``, ``stepper.export``, ``stepper.animate``;
* ``stepper`` (``BackwardStepper``), ``player``;
* ``render`` (the ``tinygrad-edu render`` subcommand) and this package.
"""

from . import examples
from .anatomy import anatomy_record, draw_anatomy
from .compiled import draw_compiled
from .draw import (
    DotNotFoundError,
    check_dot,
    draw,
    draw_both,
    draw_eager,
    draw_symbolic,
    format_array,
    render,
)
from .im2col import draw_im2col, im2col_matrix
from .memory_plan import draw_memory_plan
from .modules import collapse_modules, module_groups
from .order import backward_order, draw_backward_order, torch_run_order
from .player import Frames, frames, slider, stepper_frames
from .stepper import BackwardStepper, Frame
from .traverse import (
    EdgeRecord,
    GraphData,
    NodeRecord,
    collapse,
    eager_graph,
    node_names,
    symbolic_graph,
)

__all__ = [
    "draw",
    "draw_compiled",
    "draw_anatomy",
    "anatomy_record",
    "draw_symbolic",
    "draw_eager",
    "draw_both",
    "draw_memory_plan",
    "draw_backward_order",
    "backward_order",
    "torch_run_order",
    "render",
    "check_dot",
    "format_array",
    "DotNotFoundError",
    "BackwardStepper",
    "Frame",
    "Frames",
    "frames",
    "slider",
    "stepper_frames",
    "examples",
    "symbolic_graph",
    "eager_graph",
    "collapse",
    "node_names",
    "GraphData",
    "NodeRecord",
    "EdgeRecord",
    "draw_im2col",
    "im2col_matrix",
    "module_groups",
    "collapse_modules",
]
