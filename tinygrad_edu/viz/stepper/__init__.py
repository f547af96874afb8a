"""The backward stepper: a backward pass, one frame per node the engine runs.

Part of ``viz`` (layer 10 (``docs/concepts/layers.md``; ``tests/test_import_circles.py`` checks
it)): ``record``, then ``captions``, ``layout``, ``export``, ``animate``; it may import the
lower ``viz`` modules, ``eager``, ``symbolic`` and ``backend``.

**Eager** (:meth:`BackwardStepper.record`): ``loss.backward()`` runs under an engine
:class:`~tinygrad_edu.eager.Observer`. Frame 0 shows the state before anything runs (the
dependency counts the engine computed, the root on the ready queue); then one frame per node
the engine ran, in order (``GraphRoot`` first: it hands out the seed gradient); the last frame
shows the finished pass. So ``len(frames) == nodes run + 2``. Each frame stores, *after* its
node ran and its gradients were delivered: the dependency counts, the ready queue (next first),
the input buffers (gradients waiting, already summed) and a copy of every leaf's ``.grad``.

**Lanes.** The engine has one ready queue per device (``docs/concepts/engine.md``): the CPU
queue, worked by the thread that called ``backward()``, and one per other device, each worked
by its own thread. Each frame records which queue (``frame.queue``) and which thread
(``frame.thread``) ran its node, and ``frame.lanes`` holds every queue's ready nodes. When a
graph spans several devices the drawing shows one lane per queue: a table with a column per
queue and a row per step, so CPU and device work are seen to interleave (frames are in the
order the nodes *finished*; how two lanes interleave can differ from run to run).

**Symbolic** (:meth:`BackwardStepper.record_symbolic`): an ``Executor`` runs the forward and
gradient nodes; frame 0 is the empty graph, then one frame per node the Executor computes (in
its topological order), then a final frame: ``len(frames) == len(executor.order) + 2``.

``stepper.draw(i)`` draws frame ``i`` (the running node orange, done nodes grey-green, ready
nodes blue with their queue position, dependency counts and buffers in the boxes, a side panel
with the queue), ``stepper.caption(i)`` explains it in words, ``save_gif``/``save_frames`` write
files and ``widget()`` gives a Jupyter slider.

Where each part lives: recording in :mod:`.record`, captions in :mod:`.captions`, drawing one
frame in :mod:`.layout`, writing frames in :mod:`.export`, the GIF and the slider in
:mod:`.animate`. :class:`BackwardStepper` puts them together.

>>> import tinygrad_edu as tg
>>> x = tg.tensor([1.0, 2.0], requires_grad=True)
>>> st = BackwardStepper.record((x * x).sum(), names={"x": x})
>>> [f.title for f in st.frames]
['start', 'GraphRoot', 'SumBackward0', 'MulBackward0', 'AccumulateGrad (x)', 'done']
>>> st.frames[3].summed  # x*x: MulBackward0's 2nd gradient for x is added to the 1st
1
>>> st.frames[4].received_count
2
"""
from __future__ import annotations

from ..traverse import collapse, eager_graph, symbolic_graph
from .animate import Animate
from .captions import Captions
from .export import Export
from .layout import Layout
from .record import Frame, Recorder, array_copy, eager_tags

__all__ = ["BackwardStepper", "Frame"]


class BackwardStepper(Captions, Layout, Export, Animate):
    """Frames of one backward pass, and ways to show them. Make one with :meth:`record` or
    :meth:`record_symbolic`."""

    def __init__(self, form, frames, data, names=None):
        self.form, self.frames, self.data = form, frames, data
        self._tags = names or {}

    # -- recording ----------------------------------------------------------------------
    @classmethod
    def record(
        cls,
        loss,
        gradient=None,
        retain_graph: bool = True,
        names=None,
        params=None,
        max_nodes: int | None = None,
    ):
        """Run ``loss.backward(gradient, retain_graph=retain_graph)`` and record each step.

        Args:
            loss: the eager output tensor (a scalar unless ``gradient`` is given).
            gradient: the seed gradient for a non-scalar ``loss``.
            retain_graph: keep saved values (default True, so the graph can be drawn and run
                again).
            names, params: mappings name -> tensor naming leaves (else ``tensor.name``).
            max_nodes: as in :func:`~tinygrad_edu.viz.draw_eager` (None: draw everything).
        """
        from ...eager import Tensor, observe  # noqa: PLC0415

        if not isinstance(loss, Tensor):
            raise TypeError(
                f"BackwardStepper.record expects an eager Tensor, got "
                f"{type(loss).__name__}; use record_symbolic for symbolic nodes"
            )
        mapping = {**(params or {}), **(names or {})}
        data = eager_graph(loss, mapping or None)
        leaves = [r.ref for r in data.nodes if r.kind == "leaf"]
        rec = Recorder(leaves)
        with observe(rec):
            loss.backward(gradient, retain_graph=retain_graph)
        stepper = cls("eager", rec.frames, collapse(data, max_nodes))
        stepper._tags = eager_tags(data)
        stepper._root = rec.task.root
        stepper._finish_eager()
        return stepper

    @classmethod
    def record_symbolic(cls, grad_nodes, feed, device: str = "cpu"):
        """Run an Executor over ``grad_nodes`` (and what they need) and record each node.

        Args:
            grad_nodes: the nodes to compute, typically ``[y] + gradients(y, xs)``.
            feed: the feed_dict (Variable -> array).
        """
        from ...symbolic import Executor, Node  # noqa: PLC0415

        nodes = [grad_nodes] if isinstance(grad_nodes, Node) else list(grad_nodes)
        data = symbolic_graph(nodes)
        ex = Executor(nodes, device=device)
        values, frames = {}, [Frame("start", title="start")]

        def observer(node, value):
            values[node] = array_copy(value)
            frames.append(Frame("run", node=node, done=tuple(values), values=dict(values)))

        ex.run(feed, observer=observer)
        frames.append(Frame("done", title="done", done=tuple(values), values=dict(values)))
        stepper = cls("symbolic", frames, data)
        stepper._order = ex.order
        stepper._finish_symbolic()
        return stepper

    def __len__(self) -> int:
        return len(self.frames)
