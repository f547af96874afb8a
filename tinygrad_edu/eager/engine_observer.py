"""An observer of the engine: told every step of every backward run inside ``observe()``.

The renderer's stepper (``tinygrad_edu.viz.stepper``) is one: it records each step and draws
the graph with its dependency counts, input buffers and ready queue as they change.
"""

from __future__ import annotations

import contextlib

from .engine import ATTACHED

__all__ = ["Observer", "observe"]


class Observer:
    """Receives the engine's steps. Override what you need; ``task`` is the live GraphTask.

    Methods are called on the thread that runs the node (``threading.current_thread()``;
    ``engine_threads.current_queue_device`` names its queue), so an observer must be
    thread-safe.
    """

    def begin(self, task): ...
    def node_ready(self, task, node): ...
    def node_started(self, task, node, grads): ...
    def gradient_arrived(self, task, node, input_nr, grad, summed): ...
    def node_finished(self, task, node, grads): ...
    def end(self, task): ...


@contextlib.contextmanager
def observe(observer: Observer):
    """Report every backward run inside the block to ``observer``."""
    previous, ATTACHED.observer = ATTACHED.observer, observer
    try:
        yield observer
    finally:
        ATTACHED.observer = previous
